// GroupNormalization (opsets 18, 21) on the cpu backend, float32: X is [N, C, D1, ...]; the C channels form
// num_groups groups of C / num_groups consecutive channels, and each (n, group) block (contiguous) is normalized by
// its own mean and population variance, then scaled and shifted: per group at opset 18, per channel at opset 21
// (as ref reads the two versions; stash_type is checked, and the statistics are float as ref computes them for
// float32). As ref: the block's mean, then the variance about it (a second pass over the block), then one pass per
// channel y = x * mul + add with mul = scale / sqrt(var + epsilon) and add = bias - mean * mul
// (normalization_rows.h); only the sums' order differs. Blocks run in parallel; Y takes over X's buffer when that
// is X's last use. Prepare checks the inputs (ref's checks) and keeps the geometry. AVX-512F, AVX2+FMA and scalar
// variants, best first.
#include <cmath>
#include <string>

#include "kernels/cpu/normalization_rows.h"
#include "kernels/kernel_def.h"
#include "kernels/ref/common.h"
#include "kernels/ref/normalization_util.h"
#include "kernels/registry.h"

namespace ferry::cpu {
namespace {

// The prepared geometry: N * num_groups blocks of group_channels channels of `spatial` values.
struct GroupNormPlan {
  int64_t blocks = 0, group_channels = 0, spatial = 1;
};

class GroupNormalization : public OpKernel {
 public:
  GroupNormalization(const ir::Node& node, const NormRows& rows)
      : rows_(rows),
        epsilon_(node.GetFloat("epsilon", 1e-5f)),
        groups_(node.RequireAttr("num_groups").i),
        per_channel_(node.opset() >= 21) {
    if (groups_ <= 0) {
      throw InvalidModelError(node.Describe() + ": attribute 'num_groups' must be positive, got " +
                              std::to_string(groups_));
    }
    ref::StashType(node.GetInt("stash_type", 1), node.Describe());  // validates the attribute
  }

  // Ref's checks (X of rank >= 2, C divisible by num_groups, scale and bias of num_groups or C elements) and float32
  // inputs; Y of X's shape, written in place over X when the executor allows it.
  void Prepare(PrepareContext& ctx) const override {
    const InputSpec& x = ctx.tensor_input(0);
    const InputSpec& scale = ctx.tensor_input(1);
    const InputSpec& bias = ctx.tensor_input(2);
    CheckPlaneNormInputs(ctx, "'X', 'scale' and 'bias'", "'X'");
    const int64_t channels = x.shape[1];
    if (channels % groups_ != 0) {
      throw InvalidArgumentError(ctx.Describe() + ": C = " + std::to_string(channels) +
                                 " is not divisible by num_groups = " + std::to_string(groups_) + " (" +
                                 ctx.InputString(0) + ")");
    }
    const int64_t params = per_channel_ ? channels : groups_;
    const int64_t scale_size = ShapeElementCount(scale.shape), bias_size = ShapeElementCount(bias.shape);
    if (scale_size != params || bias_size != params) {
      throw InvalidArgumentError(ctx.Describe() + ": inputs 'scale' and 'bias' must have " + std::to_string(params) +
                                 (per_channel_ ? " (C)" : " (num_groups)") + " elements, got " +
                                 std::to_string(scale_size) + " and " + std::to_string(bias_size) + " (" +
                                 ctx.InputString(1) + ", " + ctx.InputString(2) + ")");
    }
    GroupNormPlan p;
    p.blocks = x.shape[0] * groups_;
    p.group_channels = channels / groups_;
    for (size_t d = 2; d < x.shape.size(); ++d) p.spatial *= x.shape[d];
    DeclareNormOutput(ctx, x.shape);
    ctx.EmplaceState(p);
  }

  void Compute(KernelContext& ctx) const override {
    const GroupNormPlan& p = ctx.state<GroupNormPlan>();
    const Tensor& x = ctx.required_input(0);
    const float* s = ctx.required_input(1).data<float>();
    const float* b = ctx.required_input(2).data<float>();
    Tensor& y = NormOutput(ctx, x);
    if (x.size() == 0) return;
    const float* xp = x.data<float>();
    float* yp = y.data<float>();
    const int64_t spatial = p.spatial, group_channels = p.group_channels, block = group_channels * spatial;
    const NormRows& rows = rows_;
    ForEachPlaneMoments(ctx.threads(), rows, xp, p.blocks, block, [&](int64_t g, float mean, float var) {
      const float inv = 1.0f / std::sqrt(var + epsilon_);
      const int64_t group = g % groups_;
      for (int64_t c = 0; c < group_channels; ++c) {
        const int64_t k = per_channel_ ? group * group_channels + c : group;
        const float mul = s[k] * inv;
        const int64_t off = g * block + c * spatial;
        rows.affine(xp + off, yp + off, mul, b[k] - mean * mul, spatial);
      }
    });
  }

 private:
  const NormRows& rows_;
  float epsilon_;
  int64_t groups_;
  bool per_channel_;
};

}  // namespace

void RegisterGroupNormalizationKernels(KernelRegistry& r) {
  AddNormRowsKernels<GroupNormalization>(r, "GroupNormalization", "group_normalization", 18);
}

}  // namespace ferry::cpu
