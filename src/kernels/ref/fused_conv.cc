// ai.ferry FusedConv and BlockedConv (schemas_ferry.cc): Y = act(Conv(X, W, B) + Z), computed exactly by that
// definition: the ref Conv loops (ConvF32) into a buffer holding the bias, then + Z, then the fused activation
// (fused_activation.h). BlockedConv unblocks X (unless plain_input = 1) and Z first and blocks Y at the end
// (blocked_layout.h); X's padding lanes are never read and Y's are written as zeros.
#include <algorithm>
#include <vector>

#include "kernels/kernel_def.h"
#include "kernels/ref/blocked_layout.h"
#include "kernels/ref/common.h"
#include "kernels/ref/conv_util.h"
#include "kernels/ref/fused_activation.h"
#include "kernels/registry.h"

namespace ferry::ref {
namespace {

class FerryConv : public OpKernel {
 public:
  // blocked = false: FusedConv (everything plain); true: BlockedConv (block_ > 0 marks it below).
  FerryConv(const ir::Node& node, bool blocked)
      : attrs_(WindowAttrs::FromNode(node)),
        group_(node.GetInt("group", 1)),
        act_(FusedActivation::FromNode(node)),
        blocked_(blocked),
        block_(blocked ? node.GetInt("block", -1) : 0),
        plain_input_(!blocked || node.GetInt("plain_input", 0) != 0) {
    if (group_ < 1) throw InvalidModelError(node.Describe() + ": group must be >= 1, got " + std::to_string(group_));
    if (blocked && block_ < 0) {
      throw InvalidModelError(node.Describe() + ": attribute block = " + std::to_string(block_) +
                              " must be >= 0 (0: channels-last)");
    }
  }

  // Every check of X, W, B and Z at these shapes, the geometry on X's logical shape, and ConvF32's packing panels.
  void Prepare(PrepareContext& ctx) const override {
    const std::string what = ctx.Describe();
    const char* const names[] = {"X", "W", "B", "Z"};
    for (int i = 0; i < 4; ++i) {
      const InputSpec& t = i < 2 ? ctx.tensor_input(i) : ctx.input(i);
      if (t.is_tensor() && t.dtype != DataType::kFloat) {
        throw InvalidArgumentError(what + ": input " + names[i] + " (" + ctx.InputString(i) + ") is not float");
      }
    }
    const Shape& x = ctx.input(0).shape;
    const Shape& w = ctx.input(1).shape;
    const Shape x_plain = plain_input_ ? x : LogicalInput(x, w, what);
    const ConvShape& cs = ctx.EmplaceState(ResolveConv(attrs_, group_, x_plain, w, what));
    const InputSpec& bias = ctx.input(2);
    if (bias.is_tensor() && (bias.shape.size() != 1 || bias.shape[0] != cs.out_channels)) {
      throw InvalidArgumentError(what + ": input B has shape " + ShapeToString(bias.shape) + ", expected [" +
                                 std::to_string(cs.out_channels) + "]");
    }
    const InputSpec& z = ctx.input(3);
    if (z.is_tensor() && blocked_) {
      CheckBlockedShape(z.shape, cs.y_shape, block_, what, "Z");
    } else if (z.is_tensor() && z.shape != cs.y_shape) {
      throw InvalidArgumentError(what + ": input Z has shape " + ShapeToString(z.shape) + ", expected " +
                                 ShapeToString(cs.y_shape) + " (Y's shape)");
    }
    AddConvF32Workspace(cs, ctx.threads(), ctx.workspace());
    ctx.SetOutput(0, DataType::kFloat, blocked_ ? BlockedShape(cs.y_shape, block_) : cs.y_shape);
  }

  void Compute(KernelContext& ctx) const override {
    const Tensor& x = ctx.required_input(0);
    const Tensor& w = ctx.required_input(1);
    const Tensor* bias = ctx.input(2);
    const Tensor* z = ctx.input(3);
    const bool blocked = blocked_;
    const ConvShape& cs = ctx.state<ConvShape>();
    Tensor& y = ctx.Output(0);
    if (y.size() == 0) return;
    const int threads = ctx.threads();
    const int64_t batch = cs.batch, m = cs.out_channels, out_size = cs.g.out_size();
    const int64_t y_count = batch * m * out_size;

    // X plain.
    std::vector<float> xs;
    const float* xp = x.data<float>();
    if (!plain_input_) {
      xs.resize(static_cast<size_t>(batch * cs.channels * cs.g.in_size()));
      UnblockChannels(xp, batch, cs.channels, cs.g.in_size(), block_, xs.data(), threads);
      xp = xs.data();
    }
    // Y plain: the bias, then += Conv, then + Z, then the activation.
    std::vector<float> ys;
    float* yp = y.data<float>();
    if (blocked) {
      ys.resize(static_cast<size_t>(y_count));
      yp = ys.data();
    }
    if (bias) {
      const float* bp = bias->data<float>();
      for (int64_t n = 0; n < batch; ++n)
        for (int64_t c = 0; c < m; ++c) std::fill_n(yp + (n * m + c) * out_size, out_size, bp[c]);
    }
    ConvF32(xp, w.data<float>(), cs, yp, threads);
    if (z) {
      std::vector<float> zs;
      const float* zp = z->data<float>();
      if (blocked) {
        zs.resize(static_cast<size_t>(y_count));
        UnblockChannels(zp, batch, m, out_size, block_, zs.data(), threads);
        zp = zs.data();
      }
      for (int64_t i = 0; i < y_count; ++i) yp[i] += zp[i];
    }
    act_.Apply(yp, y_count, threads);
    if (blocked) BlockChannels(yp, batch, m, out_size, block_, y.data<float>(), threads);  // y is zeroed: padding 0
  }

 private:
  // The logical [N, C, in...] of a blocked X [N, ceil(C/b), in..., b] (block 0: [N, in..., C]), C = W[1] * group.
  Shape LogicalInput(const Shape& x, const Shape& w, const std::string& what) const {
    if (w.size() < 3) {
      throw InvalidArgumentError(what + ": weight W must have rank >= 3 (M, C/group, kernel...), got shape " +
                                 ShapeToString(w));
    }
    int64_t channels = 0;
    if (__builtin_mul_overflow(w[1], group_, &channels)) {
      throw InvalidArgumentError(what + ": W[1] * group overflows for W " + ShapeToString(w));
    }
    const auto spatial = BlockedSpatial(x, block_);
    if (x.size() < 2 || spatial.size() + 2 != w.size()) {
      throw InvalidArgumentError(what + ": input X has shape " + ShapeToString(x) + ", expected a blocked " +
                                 "tensor with " + std::to_string(w.size() - 2) + " spatial dims (W " +
                                 ShapeToString(w) + ", block " + std::to_string(block_) + ")");
    }
    Shape logical{x[0], channels};
    logical.insert(logical.end(), spatial.begin(), spatial.end());
    CheckBlockedShape(x, logical, block_, what, "X");
    return logical;
  }

  WindowAttrs attrs_;
  int64_t group_;
  FusedActivation act_;
  bool blocked_;
  int64_t block_;
  bool plain_input_;
};

std::unique_ptr<OpKernel> MakeFusedConv(const ir::Node& node, const KernelOptions&) {
  return std::make_unique<FerryConv>(node, false);
}
std::unique_ptr<OpKernel> MakeBlockedConv(const ir::Node& node, const KernelOptions&) {
  return std::make_unique<FerryConv>(node, true);
}

}  // namespace

void RegisterFusedConvKernels(KernelRegistry& r) {
  const std::vector<TypeConstraintDef> t = {{"T", {DataType::kFloat}}};
  r.Add({.op = "FusedConv", .domain = "ai.ferry", .since = 1, .types = t, .create = MakeFusedConv});
  r.Add({.op = "BlockedConv", .domain = "ai.ferry", .since = 1, .types = t, .create = MakeBlockedConv});
  // com.microsoft::FusedConv (ONNX Runtime's conv + activation fusion): the same attributes and definition; ONNX
  // Runtime's activation names (Relu, Tanh, Sigmoid, LeakyRelu, Clip, HardSigmoid) are rows of the same table, with
  // the same parameter order. (ONNX Runtime requires activation_params for the last three; here they default.)
  r.Add({.op = "FusedConv", .domain = "com.microsoft", .since = 1, .types = t, .create = MakeFusedConv});
}

}  // namespace ferry::ref
