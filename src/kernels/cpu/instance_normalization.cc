// InstanceNormalization (opsets 1, 6, 22) on the cpu backend, float32: X is [N, C, D1, ...]; each (n, c) plane of
// `spatial` contiguous values is normalized by its own mean and population variance, then scaled and shifted per
// channel: Y = scale[c] * (X - mean) / sqrt(var + epsilon) + B[c]. As ref: the mean, then the variance about it
// (a second pass, re-reading the plane from cache), then one pass y = x * mul + add with mul = scale[c] /
// sqrt(var + epsilon) and add = B[c] - mean * mul (normalization_rows.h); only the sums' order differs. Planes run
// in parallel; Y takes over X's buffer when that is X's last use. Prepare checks the inputs (ref's checks) and
// keeps the geometry. AVX-512F, AVX2+FMA and scalar variants, best first.
#include <cmath>
#include <string>

#include "kernels/cpu/normalization_rows.h"
#include "kernels/kernel_def.h"
#include "kernels/ref/common.h"
#include "kernels/registry.h"

namespace ferry::cpu {
namespace {

// The prepared geometry: N * C planes of `spatial` values.
struct InstanceNormPlan {
  int64_t planes = 0, channels = 0, spatial = 1;
};

class InstanceNormalization : public OpKernel {
 public:
  InstanceNormalization(const ir::Node& node, const NormRows& rows)
      : rows_(rows), epsilon_(node.GetFloat("epsilon", 1e-5f)) {}

  // Ref's checks (X of rank >= 2, scale and B of C elements) and float32 inputs; Y of X's shape, written in place
  // over X when the executor allows it.
  void Prepare(PrepareContext& ctx) const override {
    const InputSpec& x = ctx.tensor_input(0);
    const InputSpec& scale = ctx.tensor_input(1);
    const InputSpec& bias = ctx.tensor_input(2);
    CheckPlaneNormInputs(ctx, "'input', 'scale' and 'B'", "'input'");
    InstanceNormPlan p;
    p.channels = x.shape[1];
    const int64_t scale_size = ShapeElementCount(scale.shape), bias_size = ShapeElementCount(bias.shape);
    if (scale_size != p.channels || bias_size != p.channels) {
      throw InvalidArgumentError(ctx.Describe() + ": inputs 'scale' and 'B' must have C = " +
                                 std::to_string(p.channels) + " elements, got " + std::to_string(scale_size) +
                                 " and " + std::to_string(bias_size) + " (" + ctx.InputString(1) + ", " +
                                 ctx.InputString(2) + ")");
    }
    p.planes = x.shape[0] * p.channels;
    for (size_t d = 2; d < x.shape.size(); ++d) p.spatial *= x.shape[d];
    DeclareNormOutput(ctx, x.shape);
    ctx.EmplaceState(p);
  }

  void Compute(KernelContext& ctx) const override {
    const InstanceNormPlan& p = ctx.state<InstanceNormPlan>();
    const Tensor& x = ctx.required_input(0);
    const float* s = ctx.required_input(1).data<float>();
    const float* b = ctx.required_input(2).data<float>();
    Tensor& y = NormOutput(ctx, x);
    if (x.size() == 0) return;
    const float* xp = x.data<float>();
    float* yp = y.data<float>();
    const int64_t n = p.spatial, channels = p.channels;
    const NormRows& rows = rows_;
    const float epsilon = epsilon_;
    ForEachPlaneMoments(ctx.threads(), rows, xp, p.planes, n, [&](int64_t q, float mean, float var) {
      const int64_t c = q % channels;
      const float mul = s[c] / std::sqrt(var + epsilon);
      rows.affine(xp + q * n, yp + q * n, mul, b[c] - mean * mul, n);
    });
  }

 private:
  const NormRows& rows_;
  float epsilon_;
};

}  // namespace

void RegisterInstanceNormalizationKernels(KernelRegistry& r) {
  AddNormRowsKernels<InstanceNormalization>(r, "InstanceNormalization", "instance_normalization", 1);
}

}  // namespace ferry::cpu
