// Softmax and LogSoftmax (float32) on the cpu backend, with AVX-512F, AVX2+FMA and scalar variants registered best
// first. Opsets 1-12 coerce the input to 2-D at `axis` and normalise each row of
// [prod(dims[:axis]), prod(dims[axis:])]; opset 13 normalises along `axis` alone, as an [outer, n, inner] view
// (contiguous rows when `axis` is the last dim, else columns vectorised across `inner`).
//
// Why not oneDNN's softmax: it departs from ONNX where ref follows it. A row holding +inf or NaN is all NaN in
// ONNX (and ref: inf - inf) but oneDNN returns finite values there; its LogSoftmax subtracts max and log(sum)
// separately where ref rounds max + log(sum) first (visible for large inputs), and its log is off by ~1e-6. These
// kernels do ref's operations in ref's order (softmax_kernels.inc), so NaN, ±inf and huge values come out as in
// ref; the scalar variant is ref's code.
#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include "core/parallel.h"
#include "kernels/cpu/simd_common.h"
#include "kernels/kernel_def.h"
#include "kernels/ref/common.h"
#include "kernels/registry.h"

namespace ferry::cpu {
namespace {

#pragma GCC push_options
#pragma GCC target("avx512f")
namespace avx512 {
using V = simd::F32x16;
#include "kernels/cpu/simd_kernels.inc"
#include "kernels/cpu/softmax_kernels.inc"
}  // namespace avx512
#pragma GCC pop_options

#pragma GCC push_options
#pragma GCC target("avx2,fma")
namespace avx2 {
using V = simd::F32x8;
#include "kernels/cpu/simd_kernels.inc"
#include "kernels/cpu/softmax_kernels.inc"
}  // namespace avx2
#pragma GCC pop_options

// ref's Row / Strided for float.
namespace scalar {

template <bool kLog>
void SoftmaxRow(const float* in, float* out, int64_t n) {
  float mx = in[0];
  for (int64_t i = 1; i < n; ++i) {
    if (in[i] > mx) mx = in[i];
  }
  float sum = 0;
  if constexpr (kLog) {
    for (int64_t i = 0; i < n; ++i) sum += std::exp(in[i] - mx);
    const float shift = mx + std::log(sum);
    for (int64_t i = 0; i < n; ++i) out[i] = in[i] - shift;
  } else {
    for (int64_t i = 0; i < n; ++i) {
      const float e = std::exp(in[i] - mx);
      out[i] = e;
      sum += e;
    }
    const float inv = 1.0f / sum;
    for (int64_t i = 0; i < n; ++i) out[i] *= inv;
  }
}

template <bool kLog>
void SoftmaxStrided(const float* in, float* out, int64_t n, int64_t inner) {
  std::vector<float> scratch(static_cast<size_t>(2 * inner), 0.0f);
  float* mx = scratch.data();
  float* sum = scratch.data() + inner;
  for (int64_t i = 0; i < inner; ++i) mx[i] = in[i];
  for (int64_t k = 1; k < n; ++k) {
    for (int64_t i = 0; i < inner; ++i) mx[i] = std::max(mx[i], in[k * inner + i]);
  }
  for (int64_t k = 0; k < n; ++k) {
    for (int64_t i = 0; i < inner; ++i) sum[i] += std::exp(in[k * inner + i] - mx[i]);
  }
  if constexpr (kLog) {
    for (int64_t i = 0; i < inner; ++i) sum[i] = mx[i] + std::log(sum[i]);
    for (int64_t k = 0; k < n; ++k) {
      for (int64_t i = 0; i < inner; ++i) out[k * inner + i] = in[k * inner + i] - sum[i];
    }
  } else {
    for (int64_t i = 0; i < inner; ++i) sum[i] = 1.0f / sum[i];
    for (int64_t k = 0; k < n; ++k) {
      for (int64_t i = 0; i < inner; ++i) out[k * inner + i] = std::exp(in[k * inner + i] - mx[i]) * sum[i];
    }
  }
}

}  // namespace scalar

// One ISA's pair of kernels for Softmax or LogSoftmax.
struct SoftmaxFns {
  void (*row)(const float* in, float* out, int64_t n);
  void (*strided)(const float* in, float* out, int64_t n, int64_t inner);
};

// The [outer, n, inner] view of one input signature (the prepared state); outer = 0 for an empty input.
struct SoftmaxPlan {
  int64_t outer = 0, n = 1, inner = 1;
};

class Softmax : public OpKernel {
 public:
  Softmax(const ir::Node& node, SoftmaxFns fns)
      : fns_(fns), coerce_2d_(node.opset() < 13), axis_(node.GetInt("axis", node.opset() < 13 ? 1 : -1)) {}

  // Checks X and `axis`, declares Y (X's shape) and resolves the view.
  void Prepare(PrepareContext& ctx) const override {
    const InputSpec& x = ctx.tensor_input(0);
    if (x.dtype != DataType::kFloat) {
      throw InvalidArgumentError(ctx.Describe() + ": input must be float32, got " + ctx.InputString(0));
    }
    ctx.SetOutput(0, DataType::kFloat, x.shape);
    SoftmaxPlan& p = ctx.EmplaceState(SoftmaxPlan{});
    if (ShapeElementCount(x.shape) == 0) return;  // nothing to normalise, whatever the axis
    const int64_t rank = static_cast<int64_t>(x.shape.size());
    auto dim = [&](int64_t d) { return x.shape[static_cast<size_t>(d)]; };
    // A scalar is a single-element row; the 2-D coercion also accepts axis == rank (rows of one element).
    const int64_t axis = rank == 0                       ? 0
                         : (coerce_2d_ && axis_ == rank) ? rank
                                                         : ref::NormalizeAxis(axis_, rank, ctx.Describe());
    p.outer = 1;
    for (int64_t d = 0; d < axis; ++d) p.outer *= dim(d);
    if (coerce_2d_) {
      for (int64_t d = axis; d < rank; ++d) p.n *= dim(d);
    } else {
      if (rank > 0) p.n = dim(axis);
      for (int64_t d = axis + 1; d < rank; ++d) p.inner *= dim(d);
    }
  }

  void Compute(KernelContext& ctx) const override {
    const SoftmaxPlan& p = ctx.state<SoftmaxPlan>();
    const Tensor& x = ctx.required_input(0);
    Tensor& y = ctx.OutputUninitialized(0);
    if (p.outer == 0) return;
    const int64_t n = p.n, inner = p.inner;
    const float* in = x.data<float>();
    float* out = y.data<float>();
    const int64_t block = n * inner;
    const int64_t min_chunk = std::max<int64_t>(1, 16384 / block);
    ParallelFor(ctx.threads(), p.outer, min_chunk, [&](int64_t begin, int64_t end) {
      for (int64_t o = begin; o < end; ++o) {
        if (inner == 1) {
          fns_.row(in + o * block, out + o * block, n);
        } else {
          fns_.strided(in + o * block, out + o * block, n, inner);
        }
      }
    });
  }

 private:
  SoftmaxFns fns_;
  bool coerce_2d_;
  int64_t axis_;
};

template <bool kLog>
void AddFamily(KernelRegistry& r, const std::string& op, const std::string& lower) {
  const struct {
    const char* impl;
    IsaSet isa;
    SoftmaxFns fns;
  } variants[] = {
      {"avx512", {Isa::kAvx512f}, {&avx512::SoftmaxRow<kLog>, &avx512::SoftmaxStrided<kLog>}},
      {"avx2", {Isa::kAvx2, Isa::kFma}, {&avx2::SoftmaxRow<kLog>, &avx2::SoftmaxStrided<kLog>}},
      {"scalar", {}, {&scalar::SoftmaxRow<kLog>, &scalar::SoftmaxStrided<kLog>}},
  };
  // 1 and 11 differ only in the allowed axis range (2-D coercion); 13 normalises along one axis.
  for (const auto& [since, until] : {std::pair{1, 12}, std::pair{13, kOpsetOpen}}) {
    for (const auto& v : variants) {
      const SoftmaxFns fns = v.fns;
      r.Add({.op = op,
             .since = since,
             .until = until,
             .types = {{"T", {DataType::kFloat}}},
             .create = [fns](const ir::Node& node, const KernelOptions&) {
               return std::make_unique<Softmax>(node, fns);
             },
             .isa = v.isa,
             .name = "cpu.f32_" + lower + "__" + v.impl + "." + std::to_string(since)});
    }
  }
}

}  // namespace

void RegisterSoftmaxKernels(KernelRegistry& r) {
  AddFamily<false>(r, "Softmax", "softmax");
  AddFamily<true>(r, "LogSoftmax", "logsoftmax");
}

}  // namespace ferry::cpu
