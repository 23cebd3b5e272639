// SoftmaxCrossEntropyLoss on the cpu backend: log_prob = LogSoftmax(scores, axis=1), then the loss of
// NegativeLogLikelihoodLoss on it (ref's checks and per-position loss, ref/loss_util.h), threaded over (batch entry,
// block of positions) items (negative_log_likelihood_loss.h).
//   - float32 with AVX-512F or AVX2+FMA: the cpu LogSoftmax routines (softmax_kernels.inc: ref's operations in
//     ref's order, lane-parallel, in float; the AVX-512 variant is the AVX2 one's twin) over the C classes: a
//     contiguous row when D = 1, else a block of positions gathered into [C, w] and normalised column-wise;
//   - float64, float16, and float32 without AVX2 or AVX-512: ref's log-softmax in double (ref::LogSoftmaxColumns),
//     threaded.
// log_prob is written when requested; otherwise each thread keeps its block's in scratch.
#include <algorithm>
#include <cmath>
#include <cstring>
#include <string>
#include <vector>

#include "kernels/cpu/negative_log_likelihood_loss.h"
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

// One ISA's float32 LogSoftmax: a contiguous row of n, or n rows of `inner` (stride `inner`) column by column.
struct LogSoftmaxFns {
  void (*row)(const float* in, float* out, int64_t n);
  void (*strided)(const float* in, float* out, int64_t n, int64_t inner);
};

class SoftmaxCrossEntropyLoss : public OpKernel {
 public:
  // `f32`: the float32 routines, or null for the double path.
  SoftmaxCrossEntropyLoss(const ir::Node& node, const LogSoftmaxFns* f32) : attrs_(node), f32_(f32) {}

  // Scores [N, C, d1..dk], labels [N, d1..dk], weights [C] (ref::PrepareLoss); log_prob has the scores' shape.
  void Prepare(PrepareContext& ctx) const override { ctx.EmplaceState(ref::PrepareLoss(ctx, attrs_.reduction)); }

  void Compute(KernelContext& ctx) const override {
    const Tensor& scores = ctx.required_input(0);
    const Tensor& labels = ctx.required_input(1);
    const ref::LossShape& s = ctx.state<ref::LossShape>();
    Tensor& out = ctx.OutputUninitialized(0);
    Tensor* log_prob = ctx.output_requested(1) ? &ctx.OutputUninitialized(1) : nullptr;
    ref::Dispatch(ref::TypeList<int32_t, int64_t>{}, labels.dtype(), ctx, [&](auto itag) {
      using I = decltype(itag);
      const I* tgt = labels.data<I>();
      ref::CheckLossTargets(tgt, s.n * s.d, s.c, attrs_.has_ignore, attrs_.ignore_index, ctx.Describe());
      if (scores.dtype() == DataType::kFloat && f32_) return RunFloat(ctx, s, tgt, out, log_prob);
      ref::Dispatch(ref::TypeList<float, double, Float16>{}, scores.dtype(), ctx, [&](auto tag) {
        RunDouble<decltype(tag)>(ctx, s, tgt, out, log_prob);
      });
    });
  }

 private:
  // Blocks of positions: [C, w] floats of scratch stay near 64 KiB, w a multiple of 8 (one AVX2 register).
  static int64_t BlockWidth(const ref::LossShape& s) {
    if (s.d == 1) return 1;
    const int64_t w = std::max<int64_t>(8, (16384 / std::max<int64_t>(s.c, 1)) / 8 * 8);
    return std::min(w, s.d);
  }

  // Items a thread takes at least: about 32K elements of scores.
  static int64_t Grain(const ref::LossShape& s, int64_t block) {
    return std::max<int64_t>(1, 32768 / std::max<int64_t>(1, s.c * block));
  }

  template <typename T>
  void WriteLoss(Tensor& out, const ref::LossShape& s, int64_t i, int64_t j0, int64_t p, double v) const {
    if (attrs_.reduction == ref::LossReduction::kNone) out.data<T>()[i * s.d + j0 + p] = T(static_cast<ref::Acc<T>>(v));
  }

  template <typename I>
  void RunFloat(const KernelContext& ctx, const ref::LossShape& s, const I* tgt, Tensor& out, Tensor* log_prob) const {
    const std::vector<double> w = ref::LossWeights<float>(ctx.input(2));
    const double* wp = ctx.input(2) ? w.data() : nullptr;
    const float* x = ctx.required_input(0).data<float>();
    float* lp_out = log_prob ? log_prob->data<float>() : nullptr;
    const int64_t block = BlockWidth(s), slab = s.c * s.d;
    auto body = [&](std::vector<float>& scratch, int64_t i, int64_t j0, int64_t j1, double& sum, double& weight_sum) {
      const int64_t wd = j1 - j0;
      auto store = [&](int64_t p, double v) { WriteLoss<float>(out, s, i, j0, p, v); };
      if (s.d == 1) {  // one contiguous row of C classes
        float* lp = lp_out ? lp_out + i * s.c : nullptr;
        if (!lp) {
          scratch.resize(static_cast<size_t>(s.c));
          lp = scratch.data();
        }
        f32_->row(x + i * s.c, lp, s.c);
        ref::LossColumns(lp, 1, tgt + i, wp, 1, attrs_.has_ignore, attrs_.ignore_index, store, sum, weight_sum);
        return;
      }
      scratch.resize(static_cast<size_t>(s.c * wd));
      float* buf = scratch.data();
      const float* in = x + i * slab + j0;
      for (int64_t k = 0; k < s.c; ++k) {
        std::memcpy(buf + k * wd, in + k * s.d, static_cast<size_t>(wd) * sizeof(float));
      }
      f32_->strided(buf, buf, s.c, wd);
      if (lp_out) {
        float* dst = lp_out + i * slab + j0;
        for (int64_t k = 0; k < s.c; ++k) {
          std::memcpy(dst + k * s.d, buf + k * wd, static_cast<size_t>(wd) * sizeof(float));
        }
      }
      ref::LossColumns(buf, wd, tgt + i * s.d + j0, wp, wd, attrs_.has_ignore, attrs_.ignore_index, store, sum,
                       weight_sum);
    };
    const double r = ForLossBlocks<float>(ctx.threads(), s, attrs_.reduction, block, Grain(s, block), body);
    if (attrs_.reduction != ref::LossReduction::kNone) out.data<float>()[0] = static_cast<float>(r);
  }

  template <typename T, typename I>
  void RunDouble(const KernelContext& ctx, const ref::LossShape& s, const I* tgt, Tensor& out,
                 Tensor* log_prob) const {
    using A = ref::Acc<T>;
    const std::vector<double> w = ref::LossWeights<T>(ctx.input(2));
    const double* wp = ctx.input(2) ? w.data() : nullptr;
    const T* x = ctx.required_input(0).data<T>();
    T* lp_out = log_prob ? log_prob->data<T>() : nullptr;
    const int64_t block = BlockWidth(s), slab = s.c * s.d;
    auto body = [&](std::vector<double>& scratch, int64_t i, int64_t j0, int64_t j1, double& sum, double& weight_sum) {
      const int64_t wd = j1 - j0;
      scratch.resize(static_cast<size_t>(s.c * wd));
      double* buf = scratch.data();
      ref::LogSoftmaxColumns(x + i * slab, s.c, s.d, j0, j1, buf, wd);
      if (lp_out) {
        T* dst = lp_out + i * slab + j0;
        for (int64_t k = 0; k < s.c; ++k) {
          for (int64_t p = 0; p < wd; ++p) dst[k * s.d + p] = T(static_cast<A>(buf[k * wd + p]));
        }
      }
      auto store = [&](int64_t p, double v) { WriteLoss<T>(out, s, i, j0, p, v); };
      ref::LossColumns(buf, wd, tgt + i * s.d + j0, wp, wd, attrs_.has_ignore, attrs_.ignore_index, store, sum,
                       weight_sum);
    };
    const double r = ForLossBlocks<double>(ctx.threads(), s, attrs_.reduction, block, Grain(s, block), body);
    if (attrs_.reduction != ref::LossReduction::kNone) out.data<T>()[0] = T(static_cast<A>(r));
  }

  LossAttributes attrs_;
  const LogSoftmaxFns* f32_;
};

const LogSoftmaxFns kAvx512 = {&avx512::SoftmaxRow<true>, &avx512::SoftmaxStrided<true>};
const LogSoftmaxFns kAvx2 = {&avx2::SoftmaxRow<true>, &avx2::SoftmaxStrided<true>};

}  // namespace

void RegisterSoftmaxCrossEntropyLossKernels(KernelRegistry& r) {
  const std::vector<DataType> ind = {DataType::kInt32, DataType::kInt64};
  for (const auto& [since, until] : {std::pair{12, 12}, std::pair{13, kOpsetOpen}}) {
    const std::string v = std::to_string(since);
    const struct {
      const char* impl;
      IsaSet isa;
      const LogSoftmaxFns* fns;
    } variants[] = {{"avx512", {Isa::kAvx512f}, &kAvx512}, {"avx2", {Isa::kAvx2, Isa::kFma}, &kAvx2}};
    for (const auto& variant : variants) {
      const LogSoftmaxFns* fns = variant.fns;
      r.Add({.op = "SoftmaxCrossEntropyLoss",
             .since = since,
             .until = until,
             .types = {{"T", {DataType::kFloat}}, {"Tind", ind}},
             .create = [fns](const ir::Node& node, const KernelOptions&) -> std::unique_ptr<OpKernel> {
               return std::make_unique<SoftmaxCrossEntropyLoss>(node, fns);
             },
             .isa = variant.isa,
             .name = std::string("cpu.f32_softmaxcrossentropyloss__") + variant.impl + "." + v});
    }
    r.Add({.op = "SoftmaxCrossEntropyLoss",
           .since = since,
           .until = until,
           .types = {{"T", {DataType::kFloat, DataType::kDouble, DataType::kFloat16}}, {"Tind", ind}},
           .create = [](const ir::Node& node, const KernelOptions&) -> std::unique_ptr<OpKernel> {
             return std::make_unique<SoftmaxCrossEntropyLoss>(node, nullptr);
           },
           .name = "cpu.softmaxcrossentropyloss__double." + v});
  }
}

}  // namespace ferry::cpu
