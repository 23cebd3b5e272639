// ai.ferry Attention (schemas_ferry.cc) on the cpu backend, float32: Y = Softmax(scale * Q Kᵀ + mask, axis = -1) V,
// what fuse_attention makes of the MatMul -> [scale] -> [Add mask] -> Softmax -> MatMul core of a transformer.
//
// Prepare checks the shapes (ref::PlanAttention) and cuts the work into tasks of (leading index, block of query
// rows), which Compute spreads over the threads with ParallelFor.
// Each task computes its block of scores S = scale * Q_block Kᵀ with oneDNN's dnnl_sgemm (row-major C API; K read
// as [Sk, Dh] transposed, or as [Dh, Sk] when k_transposed, through the leading dimension), adds the mask rows and
// normalizes every row in place while the block is in L1/L2 (softmax_kernels.inc: ref Softmax's operations in its
// order with the vector exp, so NaN/±inf rows — a row masked by -inf everywhere included — come out as from the
// unfused graph), then writes Y_block = P V with a second dnnl_sgemm. The scores never go to memory as a whole
// [Sq, Sk] tensor per head, and no intermediate is allocated per block: each thread sizes one scratch block per
// call. dnnl_sgemm called inside the parallel region runs single-threaded (oneDNN does not nest parallelism under
// OpenMP); when the tasks run inline, it gets ctx.threads() threads.
//
// Variants: AVX-512F and AVX2+FMA (the softmax row); a CPU with neither leaves the node to ref (fuse_attention
// then does not fuse for cpu). `scale` must be finite and nonzero (sgemm's alpha = 0 would skip the product, so
// inf / NaN scores would not turn into NaN as the definition says).
#include <dnnl.h>

#include <algorithm>
#include <cmath>
#include <mutex>
#include <optional>
#include <string>

#include "kernels/cpu/attention_common.h"
#include "kernels/cpu/dnnl_util.h"
#include "kernels/cpu/simd_common.h"
#include "kernels/kernel_def.h"
#include "kernels/ref/ferry_attention.h"
#include "kernels/registry.h"
#include "schemas/schema.h"

namespace ferry::cpu {
namespace {

#pragma GCC push_options
#pragma GCC target("avx512f")
namespace avx512 {
using V = simd::F32x16;
#include "kernels/cpu/simd_kernels.inc"
#include "kernels/cpu/softmax_kernels.inc"
#include "kernels/cpu/attention_kernels.inc"
}  // namespace avx512
#pragma GCC pop_options

#pragma GCC push_options
#pragma GCC target("avx2,fma")
namespace avx2 {
using V = simd::F32x8;
#include "kernels/cpu/simd_kernels.inc"
#include "kernels/cpu/softmax_kernels.inc"
#include "kernels/cpu/attention_kernels.inc"
}  // namespace avx2
#pragma GCC pop_options

using RowsFn = void (*)(float* s, int64_t rows, int64_t n, const float* mask, int64_t row_stride, int64_t col_stride);

// A task keeps at least this many query rows (attention_common.h).
constexpr int64_t kMinRows = 8;

// oneDNN generates its GEMM kernels on the first dnnl_sgemm call of the process (~60 ms here): done when the first
// Attention kernel is created (with the session), not in its first run.
void WarmUpSgemm() {
  static std::once_flag once;
  std::call_once(once, [] {
    const float a[4] = {1, 2, 3, 4}, b[4] = {1, 0, 0, 1};
    float c[4];
    ScopedOmpThreads omp(1);
    dnnl_sgemm('N', 'N', 2, 2, 2, 1.0f, a, 2, b, 2, 0.0f, c, 2);
    dnnl_sgemm('N', 'T', 2, 2, 2, 1.0f, a, 2, b, 2, 0.0f, c, 2);
  });
}

// Tensor-shaped stand-ins for the inputs Prepare sees (dtype and shape, no data), for ref::PlanAttention, which
// reads only those.
Tensor Spec(const InputSpec& s) { return Tensor::Wrap(s.dtype, s.shape, nullptr, nullptr); }

// What one input signature needs (the prepared state): the validated geometry and the task split.
struct AttentionState {
  ref::AttentionPlan plan;
  int threads = 1;
  int64_t rows = 0, blocks = 0;  // query rows per task, tasks per leading index
};

class Attention : public OpKernel {
 public:
  Attention(const ir::Node& node, RowsFn rows)
      : rows_(rows), scale_(node.GetFloat("scale", 1.0f)), k_transposed_(node.GetInt("k_transposed", 0) != 0) {
    WarmUpSgemm();
  }

  // Checks Q, K, V and the mask (ref::PlanAttention), declares Y and cuts the work into tasks for ctx.threads().
  void Prepare(PrepareContext& ctx) const override {
    const Tensor q = Spec(ctx.tensor_input(0)), k = Spec(ctx.tensor_input(1)), v = Spec(ctx.tensor_input(2));
    const std::optional<Tensor> mask = ctx.has_input(3) ? std::optional(Spec(ctx.tensor_input(3))) : std::nullopt;
    AttentionState& st = ctx.EmplaceState(AttentionState{});
    st.plan = ref::PlanAttention(q, k, v, mask ? &*mask : nullptr, k_transposed_, ctx.Describe());
    const ref::AttentionPlan& p = st.plan;
    ctx.SetOutput(0, DataType::kFloat, p.out_shape);
    st.threads = std::max(1, ctx.threads());
    if (p.sk == 0 || ShapeElementCount(p.out_shape) == 0) return;
    st.rows = AttentionRowsPerTask(p.batch(), p.sq, p.sk, st.threads, kMinRows);
    st.blocks = (p.sq + st.rows - 1) / st.rows;
  }

  void Compute(KernelContext& ctx) const override {
    const AttentionState& prepared = ctx.state<AttentionState>();
    const ref::AttentionPlan& p = prepared.plan;
    const Tensor& q = ctx.required_input(0);
    const Tensor& k = ctx.required_input(1);
    const Tensor& v = ctx.required_input(2);
    const Tensor* mask = ctx.input(3);
    if (p.sk == 0) {  // softmax over no keys: P V sums nothing
      ctx.Output(0);
      return;
    }
    Tensor& y = ctx.OutputUninitialized(0);
    if (y.size() == 0) return;
    const float* qp = q.data<float>();
    const float* kp = k.data<float>();
    const float* vp = v.data<float>();
    const float* mp = mask ? mask->data<float>() : nullptr;
    float* yp = y.data<float>();

    const int64_t rows = prepared.rows, blocks = prepared.blocks;
    RunAttentionTasks(ctx, prepared.threads, p.batch() * blocks, rows * p.sk, [&](int64_t t, float* s) {
      const size_t b = static_cast<size_t>(t / blocks);
      const int64_t r0 = (t % blocks) * rows;
      const int64_t m = std::min(rows, p.sq - r0);
      dnnl_status_t st = dnnl_success;
      if (p.dh == 0) {
        std::fill(s, s + m * p.sk, 0.0f);
      } else {
        st = dnnl_sgemm('N', k_transposed_ ? 'N' : 'T', m, p.sk, p.dh, scale_, qp + p.q_offsets[b] + r0 * p.dh, p.dh,
                        kp + p.k_offsets[b], k_transposed_ ? p.sk : p.dh, 0.0f, s, p.sk);
      }
      const float* mrow = mp ? mp + p.mask_offsets[b] + r0 * p.mask_row_stride : nullptr;
      rows_(s, m, p.sk, mrow, p.mask_row_stride, p.mask_col_stride);
      if (st == dnnl_success) {
        st = dnnl_sgemm('N', 'N', m, p.dv, p.sk, 1.0f, s, p.sk, vp + p.v_offsets[b], p.dv, 0.0f,
                        yp + static_cast<int64_t>(b) * p.sq * p.dv + r0 * p.dv, p.dv);
      }
      return st;
    });
  }

 private:
  RowsFn rows_;
  float scale_;
  bool k_transposed_;
};

std::string AttentionPredicate(const ir::Node& node) {
  const float scale = node.GetFloat("scale", 1.0f);
  if (!std::isfinite(scale) || scale == 0.0f) {
    return "Attention: scale = " + std::to_string(scale) + " (zero or not finite) is not implemented on cpu";
  }
  return "";
}

}  // namespace

void RegisterFerryAttentionKernels(KernelRegistry& r) {
  const struct {
    const char* impl;
    IsaSet isa;
    RowsFn rows;
  } variants[] = {
      {"avx512", {Isa::kAvx512f}, &avx512::MaskedSoftmaxRows},
      {"avx2", {Isa::kAvx2, Isa::kFma}, &avx2::MaskedSoftmaxRows},
  };
  for (const auto& v : variants) {
    const RowsFn rows = v.rows;
    r.Add({.op = "Attention",
           .domain = std::string(schemas::kFerryDomain),
           .since = 1,
           .types = {{"T", {DataType::kFloat}}},
           .create = [rows](const ir::Node& node, const KernelOptions&) {
             return std::make_unique<Attention>(node, rows);
           },
           .predicate = AttentionPredicate,
           .isa = v.isa,
           .name = std::string("cpu.f32_attention__") + v.impl + ".1",
           .constraints = "float32; scale finite and nonzero",
           .library = "oneDNN"});
  }
}

}  // namespace ferry::cpu
