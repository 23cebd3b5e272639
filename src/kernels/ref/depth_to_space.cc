// DepthToSpace: [N, C, H, W] -> [N, C/b^2, H*b, W*b], moving channel blocks into spatial blocks. DCR mode
// (default) takes channel (b1*b + b2)*C' + c, CRD mode (opset 11+) channel c*b^2 + b1*b + b2, for output
// (n, c, h*b + b1, w*b + b2). One strided copy over the 6-D view [N, C', H, b, W, b] of the output.
#include <string>

#include "kernels/kernel_def.h"
#include "kernels/ref/common.h"
#include "kernels/ref/copy_util.h"
#include "kernels/registry.h"

namespace ferry::ref {
namespace {

class DepthToSpace : public OpKernel {
 public:
  explicit DepthToSpace(const ir::Node& node) : blocksize_(node.RequireAttr("blocksize").i) {
    const std::string mode = node.GetString("mode", "DCR");
    if (mode != "DCR" && mode != "CRD") throw InvalidModelError(node.Describe() + ": unknown mode '" + mode + "'");
    crd_ = mode == "CRD";
    if (blocksize_ < 1) throw InvalidModelError(node.Describe() + ": blocksize must be positive");
  }

  void Prepare(PrepareContext& ctx) const override {
    const InputSpec& x = ctx.tensor_input(0);
    const int64_t b = blocksize_;
    if (x.shape.size() != 4 || x.shape[1] % (b * b) != 0) {
      throw InvalidArgumentError(ctx.Describe() + ": input must be 4-D with channels divisible by blocksize^2 = " +
                                 std::to_string(b * b) + ", got " + ctx.InputString(0));
    }
    ctx.SetOutput(0, x.dtype, {x.shape[0], x.shape[1] / (b * b), x.shape[2] * b, x.shape[3] * b});
  }

  void Compute(KernelContext& ctx) const override {
    const Tensor& x = ctx.required_input(0);
    const int64_t b = blocksize_;
    const int64_t n = x.dim(0), c = x.dim(1) / (b * b), h = x.dim(2), w = x.dim(3);
    Tensor& y = ctx.Output(0);
    const int64_t hw = h * w;
    const int64_t box[6] = {n, c, h, b, w, b};
    const int64_t ds[6] = {c * h * b * w * b, h * b * w * b, b * w * b, w * b, b, 1};
    // Source strides of (n, c, h, b1, w, b2).
    const int64_t dcr[6] = {x.dim(1) * hw, hw, w, b * c * hw, 1, c * hw};
    const int64_t crd[6] = {x.dim(1) * hw, b * b * hw, w, b * hw, 1, hw};
    CopyStrided(x.dtype(), y.raw_data(), 0, ds, x.raw_data(), 0, crd_ ? crd : dcr, box, ctx.threads());
  }

 private:
  int64_t blocksize_;
  bool crd_ = false;
};

}  // namespace

void RegisterDepthToSpaceKernels(KernelRegistry& r) {
  r.Add({.op = "DepthToSpace", .since = 1, .types = {{"T", dtypes::All()}}, .create = MakeKernel<DepthToSpace>});
}

}  // namespace ferry::ref
