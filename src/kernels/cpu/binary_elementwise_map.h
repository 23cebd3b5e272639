// A numpy-broadcast binary map shared by the cpu backend's elementwise kernels (Pow, Mod, PRelu, the comparisons,
// And/Or/Xor, BitwiseAnd/Or/Xor, BitShift, variadic Min/Max/Sum/Mean; Add/Sub/Mul/Div take its row loops for the
// types without hand-written SIMD), and the unary rows of BitwiseNot, Shrink and integer Clip. Prepare resolves the
// broadcast once into a BinaryMapPlan (Y's shape and which path walks it); Compute hands the plan, the data and one
// op's row loops (BinaryMapRows) to RunBinaryMap, which splits the work over the threads. BinaryMapKernel and
// UnaryMapKernel are the whole kernel of the ops that are nothing but such a map (Mod, BitShift, Bitwise*, the
// comparisons; BitwiseNot, Shrink).
//
// Paths, chosen by the shapes:
//   - both inputs have the output's element count: one contiguous loop;
//   - one input has a single element (and the other the output's count): a vector-scalar loop;
//   - anything else: ref's coalesced BroadcastPlan, rows of its innermost dim, each a vector-vector,
//     vector-scalar, scalar-vector or (both inputs broadcast along the row) a one-value fill.
// The row loops are plain C++ loops over one op's Apply, written so the compiler vectorizes them (no calls, no
// branches the op does not have); float16 and bfloat16 rows convert to float32 in blocks (HalfMapRows).
#pragma once

#include <algorithm>
#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <utility>

#include "core/isa.h"
#include "core/parallel.h"
#include "kernels/kernel.h"
#include "kernels/ref/common.h"
#include "kernels/ref/elementwise.h"

namespace ferry::cpu {

// Elements per thread chunk: below this, splitting costs more than it saves.
inline constexpr int64_t kBinaryMapGrain = 1 << 16;

// o = Op::Apply(a, b) over one row: both walk, A walks against one B value, one A value against B walking.
template <class A, class B, class O>
struct BinaryMapRows {
  void (*vv)(const A* a, const B* b, O* o, int64_t n);
  void (*vs)(const A* a, B s, O* o, int64_t n);
  void (*sv)(A s, const B* b, O* o, int64_t n);
};

// The row loops, once per ISA: the same loop compiled for the baseline (SSE2), AVX2+FMA and AVX-512F, so that the
// compiler vectorizes it as wide as the target allows (a target attribute on a template holds for every
// instantiation; Op::Apply, plain inline C++, inlines into each). Kernels register one variant per ISA, best
// first, and the registry takes the first the target supports.
template <class A, class B, class O, class Op>
void MapRowVV(const A* a, const B* b, O* o, int64_t n) {
  for (int64_t i = 0; i < n; ++i) o[i] = Op::Apply(a[i], b[i]);
}
template <class A, class B, class O, class Op>
void MapRowVS(const A* a, B s, O* o, int64_t n) {
  for (int64_t i = 0; i < n; ++i) o[i] = Op::Apply(a[i], s);
}
template <class A, class B, class O, class Op>
void MapRowSV(A s, const B* b, O* o, int64_t n) {
  for (int64_t i = 0; i < n; ++i) o[i] = Op::Apply(s, b[i]);
}

template <class A, class B, class O, class Op>
__attribute__((target("avx2,fma"))) void MapRowVVAvx2(const A* a, const B* b, O* o, int64_t n) {
  for (int64_t i = 0; i < n; ++i) o[i] = Op::Apply(a[i], b[i]);
}
template <class A, class B, class O, class Op>
__attribute__((target("avx2,fma"))) void MapRowVSAvx2(const A* a, B s, O* o, int64_t n) {
  for (int64_t i = 0; i < n; ++i) o[i] = Op::Apply(a[i], s);
}
template <class A, class B, class O, class Op>
__attribute__((target("avx2,fma"))) void MapRowSVAvx2(A s, const B* b, O* o, int64_t n) {
  for (int64_t i = 0; i < n; ++i) o[i] = Op::Apply(s, b[i]);
}

template <class A, class B, class O, class Op>
__attribute__((target("avx512f"))) void MapRowVVAvx512(const A* a, const B* b, O* o, int64_t n) {
  for (int64_t i = 0; i < n; ++i) o[i] = Op::Apply(a[i], b[i]);
}
template <class A, class B, class O, class Op>
__attribute__((target("avx512f"))) void MapRowVSAvx512(const A* a, B s, O* o, int64_t n) {
  for (int64_t i = 0; i < n; ++i) o[i] = Op::Apply(a[i], s);
}
template <class A, class B, class O, class Op>
__attribute__((target("avx512f"))) void MapRowSVAvx512(A s, const B* b, O* o, int64_t n) {
  for (int64_t i = 0; i < n; ++i) o[i] = Op::Apply(s, b[i]);
}

// The ISA variants, named as in the kernels' names (cpu.f32_prelu__avx2.7).
enum class MapIsa : uint8_t { kAvx512, kAvx2, kScalar };
inline constexpr MapIsa kMapIsas[] = {MapIsa::kAvx512, MapIsa::kAvx2, MapIsa::kScalar};
inline const char* MapIsaName(MapIsa isa) {
  return isa == MapIsa::kAvx512 ? "avx512" : isa == MapIsa::kAvx2 ? "avx2" : "scalar";
}
inline IsaSet MapIsaSet(MapIsa isa) {
  if (isa == MapIsa::kAvx512) return {Isa::kAvx512f};
  if (isa == MapIsa::kAvx2) return {Isa::kAvx2, Isa::kFma};
  return {};
}

// The row loops of Op, a type with `static O Apply(A, B)`, for one ISA.
template <class A, class B, class O, class Op>
constexpr BinaryMapRows<A, B, O> MapRows(MapIsa isa = MapIsa::kScalar) {
  switch (isa) {
    case MapIsa::kAvx512:
      return {&MapRowVVAvx512<A, B, O, Op>, &MapRowVSAvx512<A, B, O, Op>, &MapRowSVAvx512<A, B, O, Op>};
    case MapIsa::kAvx2:
      return {&MapRowVVAvx2<A, B, O, Op>, &MapRowVSAvx2<A, B, O, Op>, &MapRowSVAvx2<A, B, O, Op>};
    case MapIsa::kScalar:
      break;
  }
  return {&MapRowVV<A, B, O, Op>, &MapRowVS<A, B, O, Op>, &MapRowSV<A, B, O, Op>};
}

// Half types (float16, bfloat16) compute in float32 as ref does (Acc<T>): each row goes in blocks of kHalfBlock
// elements, converted to float, mapped by Op's float Apply, and rounded back once per element.
inline constexpr int64_t kHalfBlock = 256;

template <class H, class Op>
void HalfRowVV(const H* a, const H* b, H* o, int64_t n) {
  float fa[kHalfBlock], fb[kHalfBlock];
  for (int64_t s = 0; s < n; s += kHalfBlock) {
    const int64_t m = std::min(kHalfBlock, n - s);
    for (int64_t i = 0; i < m; ++i) fa[i] = static_cast<float>(a[s + i]);
    for (int64_t i = 0; i < m; ++i) fb[i] = static_cast<float>(b[s + i]);
    for (int64_t i = 0; i < m; ++i) fa[i] = Op::Apply(fa[i], fb[i]);
    for (int64_t i = 0; i < m; ++i) o[s + i] = H(fa[i]);
  }
}
template <class H, class Op>
void HalfRowVS(const H* a, H s, H* o, int64_t n) {
  float fa[kHalfBlock];
  const float fs = static_cast<float>(s);
  for (int64_t k = 0; k < n; k += kHalfBlock) {
    const int64_t m = std::min(kHalfBlock, n - k);
    for (int64_t i = 0; i < m; ++i) fa[i] = static_cast<float>(a[k + i]);
    for (int64_t i = 0; i < m; ++i) fa[i] = Op::Apply(fa[i], fs);
    for (int64_t i = 0; i < m; ++i) o[k + i] = H(fa[i]);
  }
}
template <class H, class Op>
void HalfRowSV(H s, const H* b, H* o, int64_t n) {
  float fb[kHalfBlock];
  const float fs = static_cast<float>(s);
  for (int64_t k = 0; k < n; k += kHalfBlock) {
    const int64_t m = std::min(kHalfBlock, n - k);
    for (int64_t i = 0; i < m; ++i) fb[i] = static_cast<float>(b[k + i]);
    for (int64_t i = 0; i < m; ++i) fb[i] = Op::Apply(fs, fb[i]);
    for (int64_t i = 0; i < m; ++i) o[k + i] = H(fb[i]);
  }
}

// The row loops of Op (a type with `static float Apply(float, float)`) on half type H.
template <class H, class Op>
constexpr BinaryMapRows<H, H, H> HalfMapRows() {
  return {&HalfRowVV<H, Op>, &HalfRowVS<H, Op>, &HalfRowSV<H, Op>};
}

// A unary op's row, y = Op::Apply(x, p) with the op's attributes p, compiled once per ISA as the binary rows
// (BitwiseNot, Shrink).
template <class T, class P>
using UnaryMapRowFn = void (*)(const T* x, T* y, int64_t n, const P& p);

template <class T, class P, class Op>
void UnaryMapRow(const T* x, T* y, int64_t n, const P& p) {
  for (int64_t i = 0; i < n; ++i) y[i] = Op::Apply(x[i], p);
}
template <class T, class P, class Op>
__attribute__((target("avx2,fma"))) void UnaryMapRowAvx2(const T* x, T* y, int64_t n, const P& p) {
  for (int64_t i = 0; i < n; ++i) y[i] = Op::Apply(x[i], p);
}
template <class T, class P, class Op>
__attribute__((target("avx512f"))) void UnaryMapRowAvx512(const T* x, T* y, int64_t n, const P& p) {
  for (int64_t i = 0; i < n; ++i) y[i] = Op::Apply(x[i], p);
}

template <class T, class P, class Op>
constexpr UnaryMapRowFn<T, P> UnaryMapRows(MapIsa isa = MapIsa::kScalar) {
  return isa == MapIsa::kAvx512 ? &UnaryMapRowAvx512<T, P, Op>
         : isa == MapIsa::kAvx2 ? &UnaryMapRowAvx2<T, P, Op>
                                : &UnaryMapRow<T, P, Op>;
}

// How Compute walks one signature.
enum class BinaryMapPath : uint8_t {
  kEmpty,  // the output has no element
  kVV,     // both inputs have the output's element count
  kVS,     // B has a single element, A the output's count
  kSV,     // A has a single element, B the output's count
  kRows,   // rows of the coalesced broadcast
};

// The prepared walk of A (shape `a`) and B (shape `b`) broadcast to `out`.
struct BinaryMapPlan {
  Shape out_shape;
  int64_t n = 0;  // the output's element count
  BinaryMapPath path = BinaryMapPath::kEmpty;
  std::optional<ref::BroadcastPlan<2>> bcast;  // kRows

  BinaryMapPlan() = default;
  // `out` must be the broadcast of `a` and `b` (or a shape both broadcast to: the variadic ops' output).
  BinaryMapPlan(const Shape& a, const Shape& b, Shape out) : out_shape(std::move(out)) {
    n = ShapeElementCount(out_shape);
    const int64_t na = ShapeElementCount(a), nb = ShapeElementCount(b);
    if (n == 0) {
      path = BinaryMapPath::kEmpty;
    } else if (na == n && nb == n) {
      path = BinaryMapPath::kVV;
    } else if (na == n && nb == 1) {
      path = BinaryMapPath::kVS;
    } else if (na == 1 && nb == n) {
      path = BinaryMapPath::kSV;
    } else {
      path = BinaryMapPath::kRows;
      bcast.emplace(std::array<const Shape*, 2>{&a, &b}, out_shape);
    }
  }
};

// po[i] = op(A, B) over the plan's output, split over `threads`.
template <class A, class B, class O>
void RunBinaryMap(int threads, const BinaryMapPlan& p, const A* pa, const B* pb, O* po,
                  const BinaryMapRows<A, B, O>& rows) {
  const int64_t n = p.n;
  switch (p.path) {
    case BinaryMapPath::kEmpty:
      return;
    case BinaryMapPath::kVV:
      ParallelFor(threads, n, kBinaryMapGrain, [&](int64_t s, int64_t e) { rows.vv(pa + s, pb + s, po + s, e - s); });
      return;
    case BinaryMapPath::kVS: {
      const B v = pb[0];
      ParallelFor(threads, n, kBinaryMapGrain, [&](int64_t s, int64_t e) { rows.vs(pa + s, v, po + s, e - s); });
      return;
    }
    case BinaryMapPath::kSV: {
      const A v = pa[0];
      ParallelFor(threads, n, kBinaryMapGrain, [&](int64_t s, int64_t e) { rows.sv(v, pb + s, po + s, e - s); });
      return;
    }
    case BinaryMapPath::kRows: {
      const ref::BroadcastPlan<2>& plan = *p.bcast;
      // The innermost coalesced dim has an output extent over 1, so its stride in each input is 0 or 1.
      const bool a_row = plan.inner_stride(0) != 0, b_row = plan.inner_stride(1) != 0;
      plan.ForEachRow(threads, [&](int64_t o, const std::array<int64_t, 2>& off, int64_t count) {
        if (a_row && b_row) {
          rows.vv(pa + off[0], pb + off[1], po + o, count);
        } else if (a_row) {
          rows.vs(pa + off[0], pb[off[1]], po + o, count);
        } else if (b_row) {
          rows.sv(pa[off[0]], pb + off[1], po + o, count);
        } else {  // both broadcast along the row (a variadic op's inner step): one value
          rows.vs(pa + off[0], pb[off[1]], po + o, 1);
          std::fill(po + o + 1, po + o + count, po[o]);
        }
      });
      return;
    }
  }
}

// The kernel of an op that is one binary map: A and B both of the kernel's type T, shapes that broadcast
// (InvalidArgumentError naming the node otherwise); Y of the broadcast shape and `out_dtype` (O: T, or bool for the
// comparisons) = the rows' op over the plan Prepare resolved once per signature.
template <class T, class O = T>
class BinaryMapKernel final : public OpKernel {
 public:
  BinaryMapKernel(DataType dtype, DataType out_dtype, BinaryMapRows<T, T, O> rows)
      : dtype_(dtype), out_dtype_(out_dtype), rows_(rows) {}

  void Prepare(PrepareContext& ctx) const override {
    const InputSpec& a = ctx.tensor_input(0);
    const InputSpec& b = ctx.tensor_input(1);
    if (a.dtype != dtype_ || b.dtype != dtype_) {
      throw InvalidArgumentError(ctx.Describe() + ": " + ctx.InputString(0) + " and " + ctx.InputString(1) +
                                 ": expected " + std::string(DataTypeName(dtype_)) + " for both");
    }
    BinaryMapPlan p(a.shape, b.shape, ref::BroadcastShapes({a.shape, b.shape}, ctx.Describe()));
    ctx.SetOutput(0, out_dtype_, p.out_shape);
    ctx.EmplaceState(std::move(p));
  }

  void Compute(KernelContext& ctx) const override {
    const BinaryMapPlan& p = ctx.state<BinaryMapPlan>();
    const Tensor& a = ctx.required_input(0);
    const Tensor& b = ctx.required_input(1);
    Tensor& out = ctx.OutputUninitialized(0);
    RunBinaryMap(ctx.threads(), p, a.data<T>(), b.data<T>(), out.data<O>(), rows_);
  }

 private:
  DataType dtype_, out_dtype_;
  BinaryMapRows<T, T, O> rows_;
};

// The kernel of an op that is one unary map with attributes P: X of the kernel's type T (InvalidArgumentError
// naming the node otherwise), Y of its shape and type = row(X, params), split over the threads.
template <class T, class P>
class UnaryMapKernel final : public OpKernel {
 public:
  UnaryMapKernel(DataType dtype, UnaryMapRowFn<T, P> row, P params = {})
      : dtype_(dtype), row_(row), params_(params) {}

  void Prepare(PrepareContext& ctx) const override {
    const InputSpec& x = ctx.tensor_input(0);
    if (x.dtype != dtype_) {
      throw InvalidArgumentError(ctx.Describe() + ": " + ctx.InputString(0) + ": expected " +
                                 std::string(DataTypeName(dtype_)));
    }
    ctx.SetOutput(0, dtype_, x.shape);
  }

  void Compute(KernelContext& ctx) const override {
    const Tensor& x = ctx.required_input(0);
    Tensor& y = ctx.OutputUninitialized(0);
    const T* px = x.data<T>();
    T* py = y.data<T>();
    ParallelFor(ctx.threads(), x.size(), kBinaryMapGrain,
                [&](int64_t s, int64_t e) { row_(px + s, py + s, e - s, params_); });
  }

 private:
  DataType dtype_;
  UnaryMapRowFn<T, P> row_;
  P params_;
};

// The name of one ISA variant of a map kernel: cpu.<tag>_<op>__<isa>.<since>, e.g. cpu.u8_bit_shift__avx2.11.
inline std::string MapKernelName(const std::string& tag, const std::string& op, MapIsa isa, int since) {
  return "cpu." + tag + "_" + op + "__" + MapIsaName(isa) + "." + std::to_string(since);
}

}  // namespace ferry::cpu
