// Col2Im: rearranges column blocks [N, C·prod(block_shape), L] back into images [N, C, image_shape...], summing
// overlapping blocks; the inverse of the im2col used by Conv, with the same dilations/pads/strides.
#include <vector>

#include "kernels/kernel_def.h"
#include "kernels/ref/common.h"
#include "kernels/ref/conv_util.h"
#include "kernels/ref/gemm.h"
#include "kernels/registry.h"

namespace ferry::ref {
namespace {

class Col2Im : public OpKernel {
 public:
  explicit Col2Im(const ir::Node& node) : attrs_(WindowAttrs::FromNode(node)) {}

  void Compute(KernelContext& ctx) const override {
    const Tensor& input = ctx.required_input(0);
    const std::string what = ctx.Describe();
    const std::vector<int64_t> image = ReadInt64s(ctx.required_input(1), what + " input image_shape");
    const std::vector<int64_t> block = ReadInt64s(ctx.required_input(2), what + " input block_shape");
    if (image.empty() || image.size() != block.size()) {
      throw InvalidArgumentError(what + ": image_shape " + IntsToString(image) + " and block_shape " +
                                 IntsToString(block) + " must be non-empty and of equal length");
    }
    for (int64_t v : image) {
      if (v < 0) throw InvalidArgumentError(what + ": image_shape " + IntsToString(image) + " has a negative dim");
    }
    if (input.rank() != 3) {
      throw InvalidArgumentError(what + ": input must have shape [N, C*prod(block_shape), L], got " +
                                 ShapeToString(input.shape()));
    }
    const WindowGeometry g = ResolveWindow(attrs_, image, block, false, what);
    const int64_t ksize = g.kernel_size();
    if (input.dim(1) % ksize != 0 || input.dim(2) != g.out_size()) {
      throw InvalidArgumentError(what + ": input shape " + ShapeToString(input.shape()) + " does not match " +
                                 "block_shape " + IntsToString(block) + " (dim 1 must be a multiple of " +
                                 std::to_string(ksize) + ") and the " + std::to_string(g.out_size()) +
                                 " block positions of image_shape " + IntsToString(image));
    }
    const int64_t batch = input.dim(0), channels = input.dim(1) / ksize;
    Shape y_shape{batch, channels};
    y_shape.insert(y_shape.end(), image.begin(), image.end());
    Tensor& y = ctx.Output(0, input.dtype(), y_shape);
    if (y.size() == 0) return;
    const int64_t col_per_image = input.dim(1) * input.dim(2), img_per_image = channels * g.in_size();
    Dispatch(NumericTypes{}, input.dtype(), what, [&](auto tag) {
      using T = decltype(tag);
      if constexpr (kIsHalf<T>) {
        std::vector<float> cols = ToFloatVector(input.data<T>(), input.size());
        std::vector<float> out(static_cast<size_t>(y.size()), 0.0f);
        for (int64_t n = 0; n < batch; ++n) {
          Col2ImAdd(cols.data() + n * col_per_image, channels, g, out.data() + n * img_per_image, ctx.threads());
        }
        FromFloatVector(out, y.data<T>());
      } else {
        for (int64_t n = 0; n < batch; ++n) {
          Col2ImAdd(input.data<T>() + n * col_per_image, channels, g, y.data<T>() + n * img_per_image,
                    ctx.threads());
        }
      }
    });
  }

 private:
  WindowAttrs attrs_;
};

}  // namespace

void RegisterCol2ImKernels(KernelRegistry& r) {
  r.Add({.op = "Col2Im",
         .since = 18,
         .types = {{"T", dtypes::Numeric()}},
         .create = MakeKernel<Col2Im>,
         .host_inputs = {1, 2}});
}

}  // namespace ferry::ref
