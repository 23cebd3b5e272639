// The shared reduction engine for the Reduce* kernels: reduce a tensor over any set of axes.
//
// A ReducePlan drops size-1 dims, merges neighbouring dims of the same kind (kept / reduced) and splits the
// result into an innermost contiguous run plus "outer" kept and reduced dims walked with odometers:
//   - innermost run reduced (e.g. ReduceMean over the last axis): each output is a tight loop over
//     contiguous memory (ReduceContiguous, several independent accumulators so it vectorises);
//   - innermost run kept (e.g. reducing axis 0 of [R, K]): a row of K accumulators is updated from
//     contiguous slices, one slice per combination of the reduced indices.
// An reduction op is a struct with
//   using Acc = ...;                                   accumulator type
//   static Acc Init();                                 identity (the result of an empty reduction)
//   static void Update(Acc&, T);                       fold one element in
//   static void Combine(Acc&, const Acc&);             merge two partial accumulators
//   static Out Finish(const Acc&, int64_t count);      final value; count = elements reduced (may be 0)
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <memory>
#include <span>
#include <string>
#include <type_traits>
#include <vector>

#include "core/parallel.h"
#include "ferry/tensor.h"
#include "kernels/ref/common.h"

namespace ferry::ref {

// Mask of reduced dims for a Reduce* node. `axes` are the requested axes (possibly negative); an empty list
// reduces every dim. Throws InvalidArgumentError naming `what` for an out-of-range axis.
std::vector<bool> ReduceAxesMask(std::span<const int64_t> axes, int64_t rank, const std::string& what);

// Output shape of a reduction: reduced dims become 1 (keepdims) or are removed.
Shape ReducedShape(const Shape& in, const std::vector<bool>& mask, bool keepdims);

struct ReducePlan {
  int64_t out_count = 0;      // number of outputs
  int64_t reduce_count = 0;   // elements folded into each output (0 for an empty reduction)
  bool inner_reduced = true;  // innermost contiguous run is reduced (else kept)
  int64_t inner = 1;          // length of the innermost contiguous run
  // Outer dims (outermost first) without the innermost run: sizes and element strides in the input.
  std::vector<int64_t> kept_dims, kept_strides;
  std::vector<int64_t> red_dims, red_strides;
};

ReducePlan MakeReducePlan(const Shape& in, const std::vector<bool>& mask);

// Walks a multi-index over `dims` (outermost first), tracking the linear offset sum(index[i] * strides[i]).
class Odometer {
 public:
  Odometer(const std::vector<int64_t>& dims, const std::vector<int64_t>& strides, int64_t start)
      : dims_(dims), strides_(strides), index_(dims.size(), 0) {
    for (size_t i = dims_.size(); i-- > 0;) {
      index_[i] = start % dims_[i];
      start /= dims_[i];
      offset_ += index_[i] * strides_[i];
    }
  }
  int64_t offset() const { return offset_; }
  void Next() {
    for (size_t i = dims_.size(); i-- > 0;) {
      offset_ += strides_[i];
      if (++index_[i] < dims_[i]) return;
      offset_ -= strides_[i] * index_[i];
      index_[i] = 0;
    }
  }

 private:
  const std::vector<int64_t>& dims_;
  const std::vector<int64_t>& strides_;
  std::vector<int64_t> index_;
  int64_t offset_ = 0;
};

// Folds n contiguous elements with several independent accumulators (breaks the dependency chain so the
// compiler can vectorise) and merges them at the end.
template <typename Op, typename T>
typename Op::Acc ReduceContiguous(const T* p, int64_t n) {
  using A = typename Op::Acc;
  constexpr int kLanes = 8;
  if (n < 2 * kLanes) {
    A a = Op::Init();
    for (int64_t i = 0; i < n; ++i) Op::Update(a, p[i]);
    return a;
  }
  A lanes[kLanes];
  for (auto& l : lanes) l = Op::Init();
  int64_t i = 0;
  for (; i + kLanes <= n; i += kLanes) {
    for (int j = 0; j < kLanes; ++j) Op::Update(lanes[j], p[i + j]);
  }
  for (; i < n; ++i) Op::Update(lanes[0], p[i]);
  for (int w = kLanes / 2; w > 0; w /= 2) {
    for (int j = 0; j < w; ++j) Op::Combine(lanes[j], lanes[j + w]);
  }
  return lanes[0];
}

// Runs the reduction described by `plan` from x into y (y has plan.out_count elements).
template <typename Op, typename T, typename Out>
void RunReduce(const ReducePlan& plan, const T* x, Out* y, int threads) {
  using A = typename Op::Acc;
  if (plan.out_count == 0) return;
  const int64_t count = plan.reduce_count;
  if (count == 0) {
    const Out v = Op::Finish(Op::Init(), 0);
    std::fill(y, y + plan.out_count, v);
    return;
  }
  int64_t red_total = 1;
  for (int64_t d : plan.red_dims) red_total *= d;
  const int64_t min_chunk = std::max<int64_t>(1, 32768 / count);

  if (plan.inner_reduced) {
    const int64_t inner = plan.inner;
    ParallelFor(threads, plan.out_count, min_chunk, [&](int64_t begin, int64_t end) {
      Odometer kept(plan.kept_dims, plan.kept_strides, begin);
      for (int64_t o = begin; o < end; ++o, kept.Next()) {
        const T* base = x + kept.offset();
        A acc;
        if (red_total == 1) {
          acc = ReduceContiguous<Op>(base, inner);
        } else {
          acc = Op::Init();
          Odometer red(plan.red_dims, plan.red_strides, 0);
          for (int64_t r = 0; r < red_total; ++r, red.Next()) {
            Op::Combine(acc, ReduceContiguous<Op>(base + red.offset(), inner));
          }
        }
        y[o] = Op::Finish(acc, count);
      }
    });
    return;
  }

  // Innermost run kept: rows of `k` outputs, each updated from contiguous slices of the input.
  const int64_t k = plan.inner;
  const int64_t rows = plan.out_count / k;
  ParallelFor(threads, rows, std::max<int64_t>(1, min_chunk / k), [&](int64_t begin, int64_t end) {
    auto acc = std::make_unique<A[]>(static_cast<size_t>(k));  // not std::vector: A may be bool
    A* a = acc.get();
    Odometer kept(plan.kept_dims, plan.kept_strides, begin);
    for (int64_t row = begin; row < end; ++row, kept.Next()) {
      std::fill(a, a + k, Op::Init());
      Odometer red(plan.red_dims, plan.red_strides, 0);
      for (int64_t r = 0; r < red_total; ++r, red.Next()) {
        const T* px = x + kept.offset() + red.offset();
        for (int64_t i = 0; i < k; ++i) Op::Update(a[i], px[i]);
      }
      Out* py = y + row * k;
      for (int64_t i = 0; i < k; ++i) py[i] = Op::Finish(a[i], count);
    }
  });
}

// ---- element conversions used by the reduction ops ----------------------------------------------------------

// Converts a double result to T: saturating and NaN-safe for integers (truncation toward zero, as numpy's
// astype does for in-range values), rounding for 16-bit floats.
template <typename T>
T FromDouble(double v) {
  if constexpr (std::is_same_v<T, bool>) {
    return v != 0;
  } else if constexpr (std::is_integral_v<T>) {
    if (std::isnan(v)) return T(0);
    if (v <= static_cast<double>(std::numeric_limits<T>::lowest())) return std::numeric_limits<T>::lowest();
    if (v >= static_cast<double>(std::numeric_limits<T>::max())) return std::numeric_limits<T>::max();
    return static_cast<T>(v);
  } else if constexpr (kIsHalf<T>) {
    return T(static_cast<float>(v));
  } else {
    return static_cast<T>(v);
  }
}

}  // namespace ferry::ref
