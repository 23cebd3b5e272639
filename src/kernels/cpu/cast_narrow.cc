// Cast and CastLike pairs with a float8 (e4m3fn, e4m3fnuz, e5m2, e5m2fnuz, e8m0), float4e2m1, int4/uint4,
// int2/uint2 or string side. Every value comes from ref's conversion (ref::CastRange in
// kernels/ref/cast_convert.h: saturate, round_mode, wrapping, string parsing and printing), so the results are
// ref's bit for bit:
//  - a source with at most 256 codes (the 8-bit floats, int8, uint8, the packed types) and a non-string target:
//    PlanNarrowCast converts every code once into a table; the run looks each element up (a 1, 2, 4 or 8 byte
//    gather; a packed target is assembled a whole byte at a time from the table's codes);
//  - any other source (float32/64, float16, bfloat16, wider integers, bool, string) or a string target: ref's
//    routine on each chunk.
// Large tensors run on several threads in chunks of whole 4-element blocks, a byte boundary of every packed type.
#include <algorithm>
#include <cstring>

#include "core/parallel.h"
#include "kernels/cpu/cast_plan.h"
#include "kernels/cpu/strided_copy.h"
#include "kernels/ref/elementwise.h"

namespace ferry::cpu {
namespace {

// Elements per chunk unit: one byte of a 2-bit type, two of a 4-bit type.
constexpr int64_t kBlock = 4;

// How many codes a source type has when at most 256 (0 otherwise).
int SourceCodes(DataType t) {
  if (ref::PackedPerByte(t)) return 1 << DataTypeBits(t);
  if (IsSmallFloat(t) || t == DataType::kInt8 || t == DataType::kUint8) return 256;
  return 0;
}

// Source element i's code: its byte, or its bits of a packed byte.
inline uint32_t CodeAt(const uint8_t* in, int src_bits, int64_t i) {
  return src_bits == 8 ? in[i] : ReadSubByte(in, src_bits, i);
}

// out[i] = table[code(i)] for i in [begin, end), W bytes an element.
template <int W>
void Lookup(const uint8_t* table, const uint8_t* in, int src_bits, uint8_t* out, int64_t begin, int64_t end) {
  if (src_bits == 8) {
    for (int64_t i = begin; i < end; ++i) std::memcpy(out + i * W, table + size_t{in[i]} * W, W);
  } else {
    for (int64_t i = begin; i < end; ++i) std::memcpy(out + i * W, table + size_t{CodeAt(in, src_bits, i)} * W, W);
  }
}

// Packed target: output bytes holding elements [begin, end) (begin on a byte boundary), each assembled from
// the table's codes; the bits past element n - 1 in the last byte are 0.
void LookupPacked(const uint8_t* table, const uint8_t* in, int src_bits, int dst_bits, uint8_t* out, int64_t begin,
                  int64_t end) {
  const int per_byte = 8 / dst_bits;
  for (int64_t i = begin; i < end; i += per_byte) {
    const int64_t stop = std::min<int64_t>(i + per_byte, end);
    uint32_t byte = 0;
    for (int64_t k = i; k < stop; ++k) byte |= uint32_t{table[CodeAt(in, src_bits, k)]} << ((k - i) * dst_bits);
    out[i / per_byte] = static_cast<uint8_t>(byte);
  }
}

}  // namespace

NarrowCast PlanNarrowCast(DataType src, DataType dst, const ref::CastOptions& opt) {
  NarrowCast plan{.src = src, .dst = dst, .opt = opt, .table = {}};
  const int codes = SourceCodes(src);
  if (codes == 0 || dst == DataType::kString) return plan;
  // Every source code, laid out as a tensor of type src.
  std::vector<uint8_t> in(static_cast<size_t>(codes), 0);
  const int src_bits = DataTypeBits(src);
  for (int c = 0; c < codes; ++c) {
    if (src_bits == 8) {
      in[static_cast<size_t>(c)] = static_cast<uint8_t>(c);
    } else {
      WriteSubByte(in.data(), src_bits, c, static_cast<uint8_t>(c));
    }
  }
  if (const int per_byte = ref::PackedPerByte(dst)) {
    std::vector<uint8_t> packed(static_cast<size_t>((codes + per_byte - 1) / per_byte));
    ref::CastRange(src, in.data(), dst, packed.data(), 0, codes, opt);
    plan.table.resize(static_cast<size_t>(codes));
    for (int c = 0; c < codes; ++c) {
      plan.table[static_cast<size_t>(c)] = ReadSubByte(packed.data(), DataTypeBits(dst), c);
    }
  } else {
    plan.table.resize(static_cast<size_t>(codes) * static_cast<size_t>(ElementBytes(dst)));
    ref::CastRange(src, in.data(), dst, plan.table.data(), 0, codes, opt);
  }
  return plan;
}

void RunNarrowCast(const NarrowCast& plan, const void* in, void* out, int64_t n, int threads) {
  if (plan.table.empty()) {
    ref::CastElements(threads, plan.src, in, plan.dst, out, n, plan.opt);
    return;
  }
  const auto* src = static_cast<const uint8_t*>(in);
  auto* dst = static_cast<uint8_t*>(out);
  const uint8_t* table = plan.table.data();
  const int src_bits = DataTypeBits(plan.src);
  const bool packed = ref::PackedPerByte(plan.dst) != 0;
  const int64_t w = packed ? 1 : ElementBytes(plan.dst);
  ParallelFor(CopyThreads(threads, n * w), (n + kBlock - 1) / kBlock, ref::kElementwiseGrain / kBlock,
              [&](int64_t s, int64_t e) {
                const int64_t begin = s * kBlock, end = std::min(e * kBlock, n);
                if (packed) {
                  LookupPacked(table, src, src_bits, DataTypeBits(plan.dst), dst, begin, end);
                } else if (w == 1) {
                  Lookup<1>(table, src, src_bits, dst, begin, end);
                } else if (w == 2) {
                  Lookup<2>(table, src, src_bits, dst, begin, end);
                } else if (w == 4) {
                  Lookup<4>(table, src, src_bits, dst, begin, end);
                } else {
                  Lookup<8>(table, src, src_bits, dst, begin, end);
                }
              });
}

}  // namespace ferry::cpu
