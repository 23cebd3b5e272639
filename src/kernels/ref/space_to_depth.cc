// SpaceToDepth: [N, C, H, W] -> [N, C*b^2, H/b, W/b]; output channel (b1*b + b2)*C + c holds input
// (n, c, h*b + b1, w*b + b2). One strided copy over the 6-D view [N, b, b, C, H/b, W/b] of the output. Prepare
// checks X's shape.
#include "kernels/kernel_def.h"
#include "kernels/ref/common.h"
#include "kernels/ref/copy_util.h"
#include "kernels/registry.h"

namespace ferry::ref {
namespace {

class SpaceToDepth : public OpKernel {
 public:
  explicit SpaceToDepth(const ir::Node& node) : blocksize_(node.RequireAttr("blocksize").i) {
    if (blocksize_ < 1) throw InvalidModelError(node.Describe() + ": blocksize must be positive");
  }

  void Prepare(PrepareContext& ctx) const override {
    const InputSpec& x = ctx.tensor_input(0);
    const int64_t b = blocksize_;
    if (x.shape.size() != 4 || x.shape[2] % b != 0 || x.shape[3] % b != 0) {
      throw InvalidArgumentError(ctx.Describe() + ": input must be 4-D with height and width divisible by blocksize " +
                                 std::to_string(b) + ", got " + ctx.InputString(0));
    }
    ctx.SetOutput(0, x.dtype, {x.shape[0], x.shape[1] * b * b, x.shape[2] / b, x.shape[3] / b});
  }

  void Compute(KernelContext& ctx) const override {
    const Tensor& x = ctx.required_input(0);
    const int64_t b = blocksize_;
    const int64_t n = x.dim(0), c = x.dim(1), h = x.dim(2), w = x.dim(3), ho = h / b, wo = w / b;
    Tensor& y = ctx.Output(0);
    const int64_t box[6] = {n, b, b, c, ho, wo};
    const int64_t ds[6] = {c * b * b * ho * wo, b * c * ho * wo, c * ho * wo, ho * wo, wo, 1};
    const int64_t ss[6] = {c * h * w, w, 1, h * w, b * w, b};
    CopyStrided(x.dtype(), y.raw_data(), 0, ds, x.raw_data(), 0, ss, box, ctx.threads());
  }

 private:
  int64_t blocksize_;
};

}  // namespace

void RegisterSpaceToDepthKernels(KernelRegistry& r) {
  r.Add({.op = "SpaceToDepth", .since = 1, .types = {{"T", dtypes::All()}}, .create = MakeKernel<SpaceToDepth>});
}

}  // namespace ferry::ref
