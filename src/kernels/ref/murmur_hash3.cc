// com.microsoft::MurmurHash3: Y[i] = MurmurHash3_x86_32(bytes of X[i], seed), element by element, as ONNX Runtime
// computes it. The key is an element's bytes in memory (little-endian: 4 for int32 / uint32 / float, 8 for int64 /
// uint64 / double) or a string's UTF-8 bytes (without a terminator); `seed` (default 0) is taken modulo 2^32.
// `positive` (default 1) selects the output type: uint32 for 1, int32 for 0 (the same 32 bits). Y has X's shape.
#include <cstdint>
#include <cstring>
#include <string>

#include "kernels/kernel_def.h"
#include "kernels/ref/common.h"
#include "kernels/registry.h"

namespace ferry::ref {

namespace {

uint32_t Rotl32(uint32_t x, int r) { return (x << r) | (x >> (32 - r)); }

uint32_t Murmur3X86_32(const uint8_t* data, size_t len, uint32_t seed) {
  constexpr uint32_t c1 = 0xcc9e2d51u, c2 = 0x1b873593u;
  uint32_t h = seed;
  const size_t blocks = len / 4;
  for (size_t i = 0; i < blocks; ++i) {
    uint32_t k;
    std::memcpy(&k, data + 4 * i, 4);
    k *= c1;
    k = Rotl32(k, 15);
    k *= c2;
    h ^= k;
    h = Rotl32(h, 13);
    h = h * 5 + 0xe6546b64u;
  }
  const uint8_t* tail = data + 4 * blocks;
  uint32_t k = 0;
  switch (len & 3) {
    case 3: k ^= static_cast<uint32_t>(tail[2]) << 16; [[fallthrough]];
    case 2: k ^= static_cast<uint32_t>(tail[1]) << 8; [[fallthrough]];
    case 1:
      k ^= tail[0];
      k *= c1;
      k = Rotl32(k, 15);
      k *= c2;
      h ^= k;
  }
  h ^= static_cast<uint32_t>(len);
  h ^= h >> 16;
  h *= 0x85ebca6bu;
  h ^= h >> 13;
  h *= 0xc2b2ae35u;
  h ^= h >> 16;
  return h;
}

using HashInputTypes = TypeList<int32_t, uint32_t, int64_t, uint64_t, float, double, std::string>;

class MurmurHash3 : public OpKernel {
 public:
  explicit MurmurHash3(const ir::Node& node)
      : seed_(static_cast<uint32_t>(node.GetInt("seed", 0))), positive_(node.GetInt("positive", 1) != 0) {}

  void Prepare(PrepareContext& ctx) const override {
    const InputSpec& x = ctx.tensor_input(0);
    Dispatch(HashInputTypes{}, x.dtype, ctx.Describe() + " input 'X'", [](auto) {});
    ctx.SetOutput(0, positive_ ? DataType::kUint32 : DataType::kInt32, x.shape);
  }

  void Compute(KernelContext& ctx) const override {
    const Tensor& x = ctx.required_input(0);
    Tensor& y = ctx.OutputUninitialized(0);
    // int32 and uint32 outputs hold the same bits.
    auto* out = static_cast<uint32_t*>(y.raw_data());
    Dispatch(HashInputTypes{}, x.dtype(), ctx, [&](auto tag) {
      using T = decltype(tag);
      const T* in = x.data<T>();
      for (int64_t i = 0; i < x.size(); ++i) {
        if constexpr (std::is_same_v<T, std::string>) {
          out[i] = Murmur3X86_32(reinterpret_cast<const uint8_t*>(in[i].data()), in[i].size(), seed_);
        } else {
          out[i] = Murmur3X86_32(reinterpret_cast<const uint8_t*>(&in[i]), sizeof(T), seed_);
        }
      }
    });
  }

 private:
  uint32_t seed_;
  bool positive_;
};

}  // namespace

void RegisterMurmurHash3Kernels(KernelRegistry& r) {
  r.Add({.op = "MurmurHash3",
         .domain = "com.microsoft",
         .since = 1,
         .types = {{"T1",
                    {DataType::kInt32, DataType::kUint32, DataType::kInt64, DataType::kUint64, DataType::kFloat,
                     DataType::kDouble, DataType::kString}}},
         .create = MakeKernel<MurmurHash3>});
}

}  // namespace ferry::ref
