// Helpers for elementwise reference kernels: parallel unary maps, numpy-broadcast n-ary maps with fast paths
// (equal shapes, a scalar side, contiguous rows), and the legacy (opset < 7) `broadcast`/`axis` attributes.
#pragma once

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>
#include <limits>
#include <string>
#include <type_traits>
#include <vector>

#include "core/parallel.h"
#include "kernels/ref/common.h"

namespace ferry::ref {

// Minimum elements per thread chunk for cheap elementwise work.
inline constexpr int64_t kElementwiseGrain = 1 << 14;

// out[i] = f(in[i]) for i in [0, n), in parallel.
template <typename In, typename Out, typename F>
void UnaryMap(int threads, const In* in, Out* out, int64_t n, F f) {
  ParallelFor(threads, n, kElementwiseGrain, [&](int64_t begin, int64_t end) {
    for (int64_t i = begin; i < end; ++i) out[i] = f(in[i]);
  });
}

// y = Op(x) for every element, for the element types in Types; Op is built from the node (it reads the
// attributes once) and has a const `T operator()(T) const` for each T.
template <typename Op, typename Types>
class UnaryKernel : public OpKernel {
 public:
  explicit UnaryKernel(const ir::Node& node) : op_(node) {}
  void Prepare(PrepareContext& ctx) const override {
    const InputSpec& x = ctx.tensor_input(0);
    ctx.SetOutput(0, x.dtype, x.shape);
  }
  void Compute(KernelContext& ctx) const override {
    const Tensor& x = ctx.required_input(0);
    Tensor& y = ctx.OutputUninitialized(0);  // UnaryMap writes every element
    Dispatch(Types{}, x.dtype(), ctx, [&](auto tag) {
      using T = decltype(tag);
      UnaryMap(ctx.threads(), x.data<T>(), y.data<T>(), x.size(), [this](T v) { return op_(v); });
    });
  }

 private:
  Op op_;
};

// Applies f in the accumulation type of T (float for float16/bfloat16) and converts back.
template <typename T, typename F>
inline T ViaAcc(T v, F f) {
  return static_cast<T>(f(static_cast<Acc<T>>(v)));
}

// Float -> integer conversion that never invokes undefined behaviour: truncates toward zero; NaN and values
// outside int64 map to INT64_MIN (as x86 does), then the result wraps to T's width.
template <typename T>
inline T FloatToIntWrap(double v) {
  if constexpr (std::is_same_v<T, uint64_t>) {
    if (v >= 9223372036854775808.0 && v < 18446744073709551616.0) return static_cast<uint64_t>(v);
  }
  int64_t i = std::numeric_limits<int64_t>::min();
  if (v > -9223372036854775808.0 && v < 9223372036854775808.0) i = static_cast<int64_t>(v);
  return static_cast<T>(i);
}

// Cast's conversion between numeric element types (float, double, float16, bfloat16, integers, bool): to bool
// is "!= 0", float to integer truncates via FloatToIntWrap, integer to integer wraps, half types go through float.
template <typename D, typename S>
inline D ConvertNumber(S v) {
  if constexpr (std::is_same_v<D, S>) {
    return v;
  } else if constexpr (std::is_same_v<D, bool>) {
    return static_cast<Acc<S>>(v) != Acc<S>(0);
  } else if constexpr (std::is_integral_v<D>) {
    if constexpr (std::is_integral_v<S>) {
      return static_cast<D>(v);
    } else {
      return FloatToIntWrap<D>(static_cast<double>(static_cast<Acc<S>>(v)));
    }
  } else if constexpr (kIsHalf<D>) {
    return D(static_cast<float>(static_cast<Acc<S>>(v)));
  } else {
    return static_cast<D>(static_cast<Acc<S>>(v));
  }
}

// ---- broadcasting -----------------------------------------------------------------------------------------

// An iteration plan for a numpy broadcast of K inputs to `out_shape`: dimensions are coalesced where every
// input is contiguous across them, and the output is walked as `rows()` rows of `inner()` elements; in each
// row input k advances by `inner_stride(k)` (0 when broadcast along the row, else its own stride).
template <size_t K>
class BroadcastPlan {
 public:
  BroadcastPlan(const std::array<const Shape*, K>& in_shapes, const Shape& out_shape) {
    const size_t rank = out_shape.size();
    size_ = ShapeElementCount(out_shape);
    // Per-input strides over the output dims (0 where broadcast).
    std::array<std::vector<int64_t>, K> st;
    for (size_t k = 0; k < K; ++k) {
      const Shape& s = *in_shapes[k];
      st[k].assign(rank, 0);
      size_t off = rank - s.size();
      int64_t stride = 1;
      for (size_t i = s.size(); i-- > 0;) {
        st[k][off + i] = s[i] == 1 ? 0 : stride;
        stride *= s[i];
      }
    }
    // Coalesce adjacent dims (skipping size-1 output dims) when every input can be walked as one dim.
    for (size_t d = 0; d < rank; ++d) {
      if (out_shape[d] == 1) continue;
      bool merge = !dims_.empty();
      for (size_t k = 0; k < K && merge; ++k) merge = strides_[k].back() == st[k][d] * out_shape[d];
      if (merge) {
        dims_.back() *= out_shape[d];
        for (size_t k = 0; k < K; ++k) strides_[k].back() = st[k][d];
      } else {
        dims_.push_back(out_shape[d]);
        for (size_t k = 0; k < K; ++k) strides_[k].push_back(st[k][d]);
      }
    }
    if (dims_.empty()) {
      dims_.push_back(1);
      for (size_t k = 0; k < K; ++k) strides_[k].push_back(0);
    }
    inner_ = dims_.back();
    rows_ = inner_ ? size_ / inner_ : 0;
  }

  int64_t size() const { return size_; }
  int64_t rows() const { return rows_; }
  int64_t inner() const { return inner_; }
  int64_t inner_stride(size_t k) const { return strides_[k].back(); }
  // The coalesced dims, outermost first (at least one), and input k's stride along each (0 where it broadcasts).
  const std::vector<int64_t>& dims() const { return dims_; }
  const std::vector<int64_t>& strides(size_t k) const { return strides_[k]; }

  // Offsets of every input at the first element of row `row`.
  void RowOffsets(int64_t row, std::array<int64_t, K>& offsets) const {
    offsets.fill(0);
    for (size_t d = dims_.size() - 1; d-- > 0;) {
      int64_t idx = row % dims_[d];
      row /= dims_[d];
      for (size_t k = 0; k < K; ++k) offsets[k] += idx * strides_[k][d];
    }
  }

  // Calls fn(out_offset, offsets, count) for every row, rows split over `threads`.
  template <typename Fn>
  void ForEachRow(int threads, Fn&& fn) const {
    if (size_ == 0) return;
    int64_t grain = std::max<int64_t>(1, kElementwiseGrain / std::max<int64_t>(inner_, 1));
    ParallelFor(threads, rows_, grain, [&](int64_t begin, int64_t end) {
      std::array<int64_t, K> off;
      for (int64_t r = begin; r < end; ++r) {
        RowOffsets(r, off);
        fn(r * inner_, off, inner_);
      }
    });
  }

 private:
  int64_t size_ = 0, rows_ = 0, inner_ = 1;
  std::vector<int64_t> dims_;
  std::array<std::vector<int64_t>, K> strides_;
};

// out = f(a, b) with numpy broadcasting; `out` is already allocated with the broadcast shape of a and b.
template <typename A, typename B, typename Out, typename F>
void BinaryMap(int threads, const Tensor& a, const Tensor& b, Tensor& out, F f) {
  const A* pa = a.data<A>();
  const B* pb = b.data<B>();
  Out* po = out.data<Out>();
  const int64_t n = out.size();
  if (n == 0) return;
  if (a.size() == n && b.size() == n) {
    ParallelFor(threads, n, kElementwiseGrain, [&](int64_t s, int64_t e) {
      for (int64_t i = s; i < e; ++i) po[i] = f(pa[i], pb[i]);
    });
    return;
  }
  if (a.size() == n && b.size() == 1) {
    const B bv = pb[0];
    ParallelFor(threads, n, kElementwiseGrain, [&](int64_t s, int64_t e) {
      for (int64_t i = s; i < e; ++i) po[i] = f(pa[i], bv);
    });
    return;
  }
  if (a.size() == 1 && b.size() == n) {
    const A av = pa[0];
    ParallelFor(threads, n, kElementwiseGrain, [&](int64_t s, int64_t e) {
      for (int64_t i = s; i < e; ++i) po[i] = f(av, pb[i]);
    });
    return;
  }
  BroadcastPlan<2> plan({&a.shape(), &b.shape()}, out.shape());
  const int64_t sa = plan.inner_stride(0), sb = plan.inner_stride(1);
  plan.ForEachRow(threads, [&](int64_t o, const std::array<int64_t, 2>& off, int64_t count) {
    const A* ra = pa + off[0];
    const B* rb = pb + off[1];
    Out* ro = po + o;
    if (sa == 1 && sb == 1) {
      for (int64_t i = 0; i < count; ++i) ro[i] = f(ra[i], rb[i]);
    } else if (sa == 1 && sb == 0) {
      const B bv = rb[0];
      for (int64_t i = 0; i < count; ++i) ro[i] = f(ra[i], bv);
    } else if (sa == 0 && sb == 1) {
      const A av = ra[0];
      for (int64_t i = 0; i < count; ++i) ro[i] = f(av, rb[i]);
    } else {
      for (int64_t i = 0; i < count; ++i) ro[i] = f(ra[i * sa], rb[i * sb]);
    }
  });
}

// out[i] = in broadcast to out's shape (a numpy broadcast copy).
template <typename T>
void BroadcastCopy(int threads, const Tensor& in, Tensor& out) {
  const T* pi = in.data<T>();
  T* po = out.data<T>();
  const int64_t n = out.size();
  if (n == 0) return;
  if (in.size() == n) {
    ParallelFor(threads, n, kElementwiseGrain, [&](int64_t s, int64_t e) { std::copy(pi + s, pi + e, po + s); });
    return;
  }
  BroadcastPlan<1> plan({&in.shape()}, out.shape());
  const int64_t si = plan.inner_stride(0);
  plan.ForEachRow(threads, [&](int64_t o, const std::array<int64_t, 1>& off, int64_t count) {
    for (int64_t i = 0; i < count; ++i) po[o + i] = pi[off[0] + i * si];
  });
}

// ---- legacy broadcast (opset < 7: attributes broadcast=1 and axis) -----------------------------------------

// Reads `broadcast`/`axis` on nodes of opset < 7 once; Prepare() gives the B to use (reshaped so numpy rules
// reproduce the limited broadcast: B's dims aligned with A's starting at `axis`, or at the end without axis)
// and the output shape. For opset >= 7 (or broadcast=0) it is plain numpy broadcasting.
class BinaryBroadcast {
 public:
  explicit BinaryBroadcast(const ir::Node& node) {
    if (node.opset() < 7 && node.GetInt("broadcast", 0) != 0) {
      legacy_ = true;
      has_axis_ = node.has_attr("axis");
      axis_ = node.GetInt("axis", 0);
    }
  }

  // The shapes of one signature: B's as the numpy broadcast sees it (B's own, or reshaped for the legacy rule)
  // and the output's. Throws InvalidArgumentError naming `what` on a mismatch.
  struct Shapes {
    Shape b_view, out;
  };
  Shapes Resolve(const Shape& a, const Shape& b, const std::string& what) const {
    Shapes r{b, {}};
    const int64_t ra = static_cast<int64_t>(a.size()), rb = static_cast<int64_t>(b.size());
    if (legacy_ && rb < ra) {
      int64_t start = ra - rb;
      if (has_axis_) {
        start = axis_ < 0 ? axis_ + ra : axis_;
        if (start < 0 || start + rb > ra) {
          throw InvalidArgumentError(what + ": legacy broadcast of B " + ShapeToString(b) + " into A " +
                                     ShapeToString(a) + " at axis " + std::to_string(axis_) + " is out of range");
        }
      }
      r.b_view.assign(static_cast<size_t>(ra), 1);
      for (int64_t i = 0; i < rb; ++i) r.b_view[static_cast<size_t>(start + i)] = b[static_cast<size_t>(i)];
    }
    r.out = BroadcastShapes({a, r.b_view}, what);
    return r;
  }

 private:
  bool legacy_ = false;
  bool has_axis_ = false;
  int64_t axis_ = 0;
};

// z = Op(a, b) with numpy broadcasting (and the legacy attributes below opset 7), for A and B of one element type
// from Types. Op is built from the node and has `Out operator()(T, T) const`; the output type is bool when
// kBoolOut, else T.
template <typename Op, typename Types, bool kBoolOut = false>
class BinaryKernel : public OpKernel {
 public:
  explicit BinaryKernel(const ir::Node& node) : bcast_(node), op_(node) {}
  void Prepare(PrepareContext& ctx) const override {
    const InputSpec& a = ctx.tensor_input(0);
    const InputSpec& b = ctx.tensor_input(1);
    if (a.dtype != b.dtype) {
      throw InvalidArgumentError(ctx.Describe() + ": inputs have different types " +
                                 std::string(DataTypeName(a.dtype)) + " and " + std::string(DataTypeName(b.dtype)));
    }
    const auto& shapes = ctx.EmplaceState(bcast_.Resolve(a.shape, b.shape, ctx.Describe()));
    ctx.SetOutput(0, kBoolOut ? DataType::kBool : a.dtype, shapes.out);
  }
  void Compute(KernelContext& ctx) const override {
    const Tensor& a = ctx.required_input(0);
    const Tensor& b = ctx.required_input(1);
    const auto& shapes = ctx.state<BinaryBroadcast::Shapes>();
    const Tensor bv = b.shape() == shapes.b_view ? b : b.Reshaped(shapes.b_view);
    Tensor& z = ctx.OutputUninitialized(0);  // BinaryMap writes every element
    Dispatch(Types{}, a.dtype(), ctx, [&](auto tag) {
      using T = decltype(tag);
      using Out = std::conditional_t<kBoolOut, bool, T>;
      BinaryMap<T, T, Out>(ctx.threads(), a, bv, z, [this](const T& x, const T& y) -> Out { return op_(x, y); });
    });
  }

 private:
  BinaryBroadcast bcast_;
  Op op_;
};

// Unsigned type wide enough that T's arithmetic does not promote to (overflowing) signed int: wrapping integer
// arithmetic without undefined behaviour.
template <typename T>
using WrapInt = std::conditional_t<(sizeof(T) < sizeof(unsigned)), unsigned, std::make_unsigned_t<T>>;

}  // namespace ferry::ref
