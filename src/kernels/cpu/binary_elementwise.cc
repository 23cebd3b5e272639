// Add Sub Mul Div (opset 7+: numpy broadcasting) on the cpu backend for every numeric type ref has: float32 with
// hand-written AVX-512F and AVX2+FMA variants and a scalar one, registered best first (the registry takes the first
// the target supports); float64 and the integers (int8..int64, uint8..uint64) with plain loops of ref's semantics
// compiled for AVX-512F, AVX2+FMA and the baseline (binary_elementwise_map.h: wrapping arithmetic; Div truncates
// toward zero, x / 0 = 0, INT_MIN / -1 = INT_MIN, ref::IntDiv); float16 and bfloat16 through float32 in blocks,
// rounded once per element as ref does. Opsets 1-6 (the legacy broadcast/axis attributes) are left to ref.
//
// Paths, chosen by the shapes:
//   - both inputs have the output's element count (hence its layout): one contiguous loop;
//   - one input has a single element: a vector-scalar loop;
//   - anything else: the broadcast is coalesced (size-1 output dims dropped, adjacent dims merged where both inputs
//     walk them contiguously) into rows of the innermost dim, walked with an odometer; each row is a
//     vector-vector, vector-scalar or scalar-vector loop. This makes the common "inner broadcasts" cheap with no
//     per-element index math: a bias [C,1,1] into [N,C,H,W] is N*C rows of H*W against one value each, and [D]
//     into [B,S,D] is B*S rows of D against the same D values. Short rows (up to 64) of which one input repeats
//     one row down the next dim out run as tiles of those two dims, one call per tile: a per-channel scale
//     [N,C/16,1,1,16] times a blocked [N,C/16,H,W,16] (squeeze-excitation) is N*C/16 tiles, not N*C/16*H*W rows.
// Outputs over 64K elements are split over the threads. Prepare checks the types, resolves the broadcast (Y's shape)
// and chooses the path with its coalesced dims once per input signature; Compute only walks that plan.
#include <algorithm>
#include <cstdint>
#include <memory>
#include <string>
#include <type_traits>
#include <vector>

#include "core/parallel.h"
#include "kernels/cpu/binary_elementwise_map.h"
#include "kernels/cpu/simd_common.h"
#include "kernels/kernel_def.h"
#include "kernels/ref/elementwise_rules.h"
#include "kernels/registry.h"

namespace ferry::cpu {
namespace {

// ---- per-ISA row loops ---------------------------------------------------------------------------------------

#pragma GCC push_options
#pragma GCC target("avx512f")
namespace avx512 {
using V = simd::F32x16;
#include "kernels/cpu/simd_kernels.inc"
}  // namespace avx512
#pragma GCC pop_options

#pragma GCC push_options
#pragma GCC target("avx2,fma")
namespace avx2 {
using V = simd::F32x8;
#include "kernels/cpu/simd_kernels.inc"
}  // namespace avx2
#pragma GCC pop_options

// Plain C++ with ref's semantics: float arithmetic as written; integers wrap through an unsigned type at least as
// wide as unsigned int (ref::WrapInt: no promotion to a signed int that could overflow).
namespace scalar {

template <class T>
auto U(T v) {
  return static_cast<ref::WrapInt<T>>(v);
}

struct AddOp {
  template <class T>
  static T Apply(T a, T b) {
    if constexpr (std::is_integral_v<T>) {
      return static_cast<T>(U(a) + U(b));
    } else {
      return a + b;
    }
  }
};
struct SubOp {
  template <class T>
  static T Apply(T a, T b) {
    if constexpr (std::is_integral_v<T>) {
      return static_cast<T>(U(a) - U(b));
    } else {
      return a - b;
    }
  }
};
struct MulOp {
  template <class T>
  static T Apply(T a, T b) {
    if constexpr (std::is_integral_v<T>) {
      return static_cast<T>(U(a) * U(b));
    } else {
      return a * b;
    }
  }
};
struct DivOp {
  template <class T>
  static T Apply(T a, T b) {
    if constexpr (std::is_integral_v<T>) {
      return ref::IntDiv(a, b);
    } else {
      return a / b;
    }
  }
};

template <class T, class Op>
void RowVV(const T* a, const T* b, T* o, int64_t n) {
  for (int64_t i = 0; i < n; ++i) o[i] = Op::Apply(a[i], b[i]);
}
template <class T, class Op>
void RowVS(const T* a, T s, T* o, int64_t n) {
  for (int64_t i = 0; i < n; ++i) o[i] = Op::Apply(a[i], s);
}
template <class T, class Op>
void RowSV(T s, const T* b, T* o, int64_t n) {
  for (int64_t i = 0; i < n; ++i) o[i] = Op::Apply(s, b[i]);
}
template <class T, class Op>
void TileVR(const T* a, const T* b, T* o, int64_t rows, int64_t n) {
  for (int64_t r = 0; r < rows; ++r) RowVV<T, Op>(a + r * n, b, o + r * n, n);
}
template <class T, class Op>
void TileRV(const T* a, const T* b, T* o, int64_t rows, int64_t n) {
  for (int64_t r = 0; r < rows; ++r) RowVV<T, Op>(a, b + r * n, o + r * n, n);
}

}  // namespace scalar

// The row loops of one op on one ISA; a kernel holds the set its KernelDef chose. vr / rv run `rows` rows of n
// with B's / A's one row repeated (the tile path below).
template <class T>
struct BinaryRows {
  void (*vv)(const T* a, const T* b, T* o, int64_t n);
  void (*vs)(const T* a, T s, T* o, int64_t n);
  void (*sv)(T s, const T* b, T* o, int64_t n);
  void (*vr)(const T* a, const T* b, T* o, int64_t rows, int64_t n);
  void (*rv)(const T* a, const T* b, T* o, int64_t rows, int64_t n);
};

template <class Op>
BinaryRows<float> Avx512Rows() {
  return {&avx512::RowVV<Op>, &avx512::RowVS<Op>, &avx512::RowSV<Op>, &avx512::TileVR<Op>, &avx512::TileRV<Op>};
}
template <class Op>
BinaryRows<float> Avx2Rows() {
  return {&avx2::RowVV<Op>, &avx2::RowVS<Op>, &avx2::RowSV<Op>, &avx2::TileVR<Op>, &avx2::TileRV<Op>};
}
template <class T, class Op>
BinaryRows<T> ScalarRows() {
  return {&scalar::RowVV<T, Op>, &scalar::RowVS<T, Op>, &scalar::RowSV<T, Op>, &scalar::TileVR<T, Op>,
          &scalar::TileRV<T, Op>};
}

// float64 and the integers: binary_elementwise_map.h's plain loops compiled for `isa`; the tiles run those rows.
template <class T, class Op, MapIsa kIsa>
void MapTileVR(const T* a, const T* b, T* o, int64_t rows, int64_t n) {
  const BinaryMapRows<T, T, T> r = MapRows<T, T, T, Op>(kIsa);
  for (int64_t k = 0; k < rows; ++k) r.vv(a + k * n, b, o + k * n, n);
}
template <class T, class Op, MapIsa kIsa>
void MapTileRV(const T* a, const T* b, T* o, int64_t rows, int64_t n) {
  const BinaryMapRows<T, T, T> r = MapRows<T, T, T, Op>(kIsa);
  for (int64_t k = 0; k < rows; ++k) r.vv(a, b + k * n, o + k * n, n);
}
template <class T, class Op, MapIsa kIsa>
BinaryRows<T> IsaRows() {
  const BinaryMapRows<T, T, T> r = MapRows<T, T, T, Op>(kIsa);
  return {r.vv, r.vs, r.sv, &MapTileVR<T, Op, kIsa>, &MapTileRV<T, Op, kIsa>};
}

// float16 and bfloat16: float32 rows in blocks (HalfMapRows); the tiles run those rows.
template <class H, class Op>
void HalfTileVR(const H* a, const H* b, H* o, int64_t rows, int64_t n) {
  for (int64_t k = 0; k < rows; ++k) HalfRowVV<H, Op>(a + k * n, b, o + k * n, n);
}
template <class H, class Op>
void HalfTileRV(const H* a, const H* b, H* o, int64_t rows, int64_t n) {
  for (int64_t k = 0; k < rows; ++k) HalfRowVV<H, Op>(a, b + k * n, o + k * n, n);
}
template <class H, class Op>
BinaryRows<H> HalfRows() {
  return {&HalfRowVV<H, Op>, &HalfRowVS<H, Op>, &HalfRowSV<H, Op>, &HalfTileVR<H, Op>, &HalfTileRV<H, Op>};
}

// ---- the kernel ----------------------------------------------------------------------------------------------

// Elements per thread chunk: below this, splitting costs more than it saves.
constexpr int64_t kGrain = 1 << 16;

// The numpy broadcast of inputs 0 and 1; throws InvalidArgumentError naming the node and both inputs when they do not
// broadcast.
Shape BroadcastShape(const PrepareContext& ctx) {
  const Shape& a = ctx.input(0).shape;
  const Shape& b = ctx.input(1).shape;
  const size_t rank = std::max(a.size(), b.size());
  Shape out(rank);
  for (size_t i = 0; i < rank; ++i) {
    const int64_t da = i < rank - a.size() ? 1 : a[i - (rank - a.size())];
    const int64_t db = i < rank - b.size() ? 1 : b[i - (rank - b.size())];
    if (da == db || db == 1) {
      out[i] = da;
    } else if (da == 1) {
      out[i] = db;
    } else {
      throw InvalidArgumentError(ctx.Describe() + ": " + ctx.InputString(0) + " and " + ctx.InputString(1) +
                                 " do not broadcast (output dim " + std::to_string(i) + ": " + std::to_string(da) +
                                 " vs " + std::to_string(db) + ")");
    }
  }
  return out;
}

// The broadcast of A and B to `out`, coalesced: dims from outer to inner with each input's stride per dim (0 where
// the input is broadcast along it). The innermost stride of each input is 0 or 1.
struct BroadcastPlan {
  std::vector<int64_t> dims, stride_a, stride_b;

  BroadcastPlan() = default;
  BroadcastPlan(const Shape& a, const Shape& b, const Shape& out) {
    const size_t rank = out.size();
    auto strides = [rank](const Shape& s) {
      std::vector<int64_t> st(rank, 0);
      int64_t stride = 1;
      for (size_t i = s.size(); i-- > 0;) {
        st[rank - s.size() + i] = s[i] == 1 ? 0 : stride;
        stride *= s[i];
      }
      return st;
    };
    const std::vector<int64_t> sa = strides(a), sb = strides(b);
    for (size_t d = 0; d < rank; ++d) {
      if (out[d] == 1) continue;
      if (!dims.empty() && stride_a.back() == sa[d] * out[d] && stride_b.back() == sb[d] * out[d]) {
        dims.back() *= out[d];
        stride_a.back() = sa[d];
        stride_b.back() = sb[d];
      } else {
        dims.push_back(out[d]);
        stride_a.push_back(sa[d]);
        stride_b.push_back(sb[d]);
      }
    }
  }

  // Position `flat` (row-major) over the first `outer` dims: its offsets in A and B, and its index per dim into
  // `idx` when given (an odometer's start).
  void Locate(size_t outer, int64_t flat, int64_t* oa, int64_t* ob, int64_t* idx = nullptr) const {
    *oa = *ob = 0;
    for (size_t d = outer, rest = static_cast<size_t>(flat); d-- > 0;) {
      const int64_t i = static_cast<int64_t>(rest % static_cast<size_t>(dims[d]));
      rest /= static_cast<size_t>(dims[d]);
      if (idx) idx[d] = i;
      *oa += i * stride_a[d];
      *ob += i * stride_b[d];
    }
  }
};

// How Compute walks one signature (chosen by the shapes, in this order):
enum class BinaryPath : uint8_t {
  kEmpty,   // the output has no element
  kVV,      // both inputs have the output's element count: one contiguous loop
  kVS,      // B has a single element
  kSV,      // A has a single element
  kTileVR,  // short rows, B's one row repeated down the next dim out: tiles of the two inner dims
  kTileRV,  // the same with A's row repeated
  kRows,    // rows of the innermost coalesced dim, walked with an odometer
};

// Rows up to this long take the tile path (longer ones pay the per-row call little).
constexpr int64_t kTileRowMax = 64;

// The prepared state of one signature: Y's shape and how the broadcast is walked.
struct BinaryPlan {
  Shape out_shape;
  int64_t n = 0;  // Y's element count
  BinaryPath path = BinaryPath::kEmpty;
  BroadcastPlan bcast;  // kTile* and kRows
};

// Short rows of which one input repeats the same one down the next dim out (a blocked [N, C/b, H, W, b] tensor
// times a per-channel [N, C/b, 1, 1, b] scale, as in squeeze-excitation: rows of b) run as tiles of the two inner
// dims, one call per tile instead of one per row: kTileVR or kTileRV, else kRows.
BinaryPath BroadcastPath(const BroadcastPlan& plan) {
  const size_t rank = plan.dims.size();
  if (rank < 2) return BinaryPath::kRows;
  const int64_t inner = plan.dims[rank - 1];
  const int64_t sa = plan.stride_a[rank - 2], sb = plan.stride_b[rank - 2];
  // Both inputs walk the innermost dim (coalescing left it because one of them does not walk the next one).
  if (inner > kTileRowMax || plan.stride_a.back() != 1 || plan.stride_b.back() != 1) return BinaryPath::kRows;
  if (sa == inner && sb == 0) return BinaryPath::kTileVR;
  if (sa == 0 && sb == inner) return BinaryPath::kTileRV;
  return BinaryPath::kRows;
}

template <class T>
class BinaryKernel final : public OpKernel {
 public:
  BinaryKernel(DataType dtype, BinaryRows<T> rows) : dtype_(dtype), rows_(rows) {}

  // Checks the types, resolves the broadcast and chooses the path, once per signature.
  void Prepare(PrepareContext& ctx) const override {
    const InputSpec& a = ctx.tensor_input(0);
    const InputSpec& b = ctx.tensor_input(1);
    if (a.dtype != dtype_ || b.dtype != dtype_) {
      throw InvalidArgumentError(ctx.Describe() + ": " + ctx.InputString(0) + " and " + ctx.InputString(1) +
                                 ": expected " + std::string(DataTypeName(dtype_)) + " for both");
    }
    BinaryPlan p;
    p.out_shape = BroadcastShape(ctx);
    p.n = ShapeElementCount(p.out_shape);
    const int64_t na = ShapeElementCount(a.shape), nb = ShapeElementCount(b.shape);
    if (p.n == 0) {
      p.path = BinaryPath::kEmpty;
    } else if (na == p.n && nb == p.n) {
      p.path = BinaryPath::kVV;
    } else if (na == p.n && nb == 1) {
      p.path = BinaryPath::kVS;
    } else if (na == 1 && nb == p.n) {
      p.path = BinaryPath::kSV;
    } else {
      p.bcast = BroadcastPlan(a.shape, b.shape, p.out_shape);
      p.path = BroadcastPath(p.bcast);
    }
    ctx.SetOutput(0, dtype_, p.out_shape);
    ctx.EmplaceState(std::move(p));
  }

  void Compute(KernelContext& ctx) const override {
    const BinaryPlan& p = ctx.state<BinaryPlan>();
    const Tensor& a = ctx.required_input(0);
    const Tensor& b = ctx.required_input(1);
    Tensor& out = ctx.OutputUninitialized(0);
    const int64_t n = p.n;
    const T* pa = a.data<T>();
    const T* pb = b.data<T>();
    T* po = out.data<T>();
    const int threads = ctx.threads();
    switch (p.path) {
      case BinaryPath::kEmpty:
        return;
      case BinaryPath::kVV:
        ParallelFor(threads, n, kGrain, [&](int64_t s, int64_t e) { rows_.vv(pa + s, pb + s, po + s, e - s); });
        return;
      case BinaryPath::kVS: {
        const T v = pb[0];
        ParallelFor(threads, n, kGrain, [&](int64_t s, int64_t e) { rows_.vs(pa + s, v, po + s, e - s); });
        return;
      }
      case BinaryPath::kSV: {
        const T v = pa[0];
        ParallelFor(threads, n, kGrain, [&](int64_t s, int64_t e) { rows_.sv(v, pb + s, po + s, e - s); });
        return;
      }
      case BinaryPath::kTileVR:
      case BinaryPath::kTileRV:
        Tiled(threads, p.bcast, p.path == BinaryPath::kTileVR, pa, pb, po, n);
        return;
      case BinaryPath::kRows:
        Broadcast(threads, p.bcast, pa, pb, po, n);
        return;
    }
  }

 private:
  void Broadcast(int threads, const BroadcastPlan& plan, const T* pa, const T* pb, T* po, int64_t n) const {
    const size_t outer = plan.dims.size() - 1;  // dims before the innermost (n > 1 here, so there is one)
    const int64_t inner = plan.dims.back();
    const bool a_row = plan.stride_a.back() != 0, b_row = plan.stride_b.back() != 0;
    ParallelFor(threads, n / inner, std::max<int64_t>(1, kGrain / inner), [&](int64_t r0, int64_t r1) {
      // Odometer over the outer dims, started at row r0.
      std::vector<int64_t> idx(outer);
      int64_t oa, ob;
      plan.Locate(outer, r0, &oa, &ob, idx.data());
      for (int64_t r = r0; r < r1; ++r) {
        T* o = po + r * inner;
        if (a_row && b_row) {
          rows_.vv(pa + oa, pb + ob, o, inner);
        } else if (a_row) {
          rows_.vs(pa + oa, pb[ob], o, inner);
        } else {
          rows_.sv(pa[oa], pb + ob, o, inner);
        }
        for (size_t d = outer; d-- > 0;) {
          oa += plan.stride_a[d];
          ob += plan.stride_b[d];
          if (++idx[d] < plan.dims[d]) break;
          oa -= plan.stride_a[d] * plan.dims[d];
          ob -= plan.stride_b[d] * plan.dims[d];
          idx[d] = 0;
        }
      }
    });
  }

  // The tile path (BroadcastPath): `b_repeats` when B's row repeats (kTileVR), else A's (kTileRV).
  void Tiled(int threads, const BroadcastPlan& plan, bool b_repeats, const T* pa, const T* pb, T* po,
             int64_t n) const {
    const size_t rank = plan.dims.size();
    const int64_t inner = plan.dims[rank - 1], rows = plan.dims[rank - 2];
    const size_t outer = rank - 2;
    // Split by rows (a tile may be all of the output), each thread's range walked tile by tile.
    ParallelFor(threads, n / inner, std::max<int64_t>(1, kGrain / inner), [&](int64_t r0, int64_t r1) {
      for (int64_t r = r0; r < r1;) {
        const int64_t t = r / rows, first = r % rows, count = std::min(rows - first, r1 - r);
        int64_t oa, ob;  // tile t's start in A and B
        plan.Locate(outer, t, &oa, &ob);
        if (b_repeats) {
          rows_.vr(pa + oa + first * inner, pb + ob, po + r * inner, count, inner);
        } else {
          rows_.rv(pa + oa, pb + ob + first * inner, po + r * inner, count, inner);
        }
        r += count;
      }
    });
  }

  DataType dtype_;
  BinaryRows<T> rows_;
};

// ---- registration --------------------------------------------------------------------------------------------

template <class T>
KernelFactory Factory(DataType dtype, BinaryRows<T> rows) {
  return [dtype, rows](const ir::Node&, const KernelOptions&) -> std::unique_ptr<OpKernel> {
    return std::make_unique<BinaryKernel<T>>(dtype, rows);
  };
}

template <class SimdAvx512, class SimdAvx2, class ScalarOp>
void AddBinary(KernelRegistry& r, const std::string& op, const std::string& lower) {
  auto def = [&](std::string dtype_tag, DataType dtype, std::string impl, IsaSet isa, KernelFactory create) {
    r.Add({.op = op,
           .since = 7,
           .types = {{"T", {dtype}}},
           .create = std::move(create),
           .isa = isa,
           .name = "cpu." + dtype_tag + "_" + lower + "__" + impl + ".7"});
  };
  def("f32", DataType::kFloat, "avx512", {Isa::kAvx512f}, Factory(DataType::kFloat, Avx512Rows<SimdAvx512>()));
  def("f32", DataType::kFloat, "avx2", {Isa::kAvx2, Isa::kFma}, Factory(DataType::kFloat, Avx2Rows<SimdAvx2>()));
  def("f32", DataType::kFloat, "scalar", {}, Factory(DataType::kFloat, ScalarRows<float, ScalarOp>()));
  // The plain loops, one variant per ISA, best first.
  auto typed = [&]<class T>(T, const std::string& tag, DataType dtype) {
    def(tag, dtype, "avx512", MapIsaSet(MapIsa::kAvx512), Factory(dtype, IsaRows<T, ScalarOp, MapIsa::kAvx512>()));
    def(tag, dtype, "avx2", MapIsaSet(MapIsa::kAvx2), Factory(dtype, IsaRows<T, ScalarOp, MapIsa::kAvx2>()));
    def(tag, dtype, "scalar", {}, Factory(dtype, IsaRows<T, ScalarOp, MapIsa::kScalar>()));
  };
  typed(double{}, "f64", DataType::kDouble);
  typed(int8_t{}, "i8", DataType::kInt8);
  typed(int16_t{}, "i16", DataType::kInt16);
  typed(int32_t{}, "i32", DataType::kInt32);
  typed(int64_t{}, "i64", DataType::kInt64);
  typed(uint8_t{}, "u8", DataType::kUint8);
  typed(uint16_t{}, "u16", DataType::kUint16);
  typed(uint32_t{}, "u32", DataType::kUint32);
  typed(uint64_t{}, "u64", DataType::kUint64);
  def("f16", DataType::kFloat16, "scalar", {}, Factory(DataType::kFloat16, HalfRows<Float16, ScalarOp>()));
  def("bf16", DataType::kBFloat16, "scalar", {}, Factory(DataType::kBFloat16, HalfRows<BFloat16, ScalarOp>()));
}

}  // namespace

void RegisterBinaryElementwiseKernels(KernelRegistry& r) {
  AddBinary<avx512::AddOp, avx2::AddOp, scalar::AddOp>(r, "Add", "add");
  AddBinary<avx512::SubOp, avx2::SubOp, scalar::SubOp>(r, "Sub", "sub");
  AddBinary<avx512::MulOp, avx2::MulOp, scalar::MulOp>(r, "Mul", "mul");
  AddBinary<avx512::DivOp, avx2::DivOp, scalar::DivOp>(r, "Div", "div");
}

}  // namespace ferry::cpu
