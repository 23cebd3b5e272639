// Col2Im: rearranges column blocks [N, C·prod(block_shape), L] back into images [N, C, image_shape...], summing
// overlapping blocks; the inverse of the im2col used by Conv, with the same dilations/pads/strides. Any element
// type: complex sums as complex; bool "sums" as numpy does (logical or, what the ONNX reference's `+=` on a bool
// array computes); strings have no sum, so they are only moved, and blocks that overlap are refused.
#include <vector>

#include "kernels/kernel_def.h"
#include "kernels/ref/common.h"
#include "kernels/ref/complex_types.h"
#include "kernels/ref/conv_util.h"
#include "kernels/ref/gemm.h"
#include "kernels/registry.h"

namespace ferry::ref {
namespace {

// Whether two (block position, tap) pairs write the same image element. Per dim, count the pairs landing on each
// index inside the image: the blocks overlap when some dim lands twice on one index and every dim lands somewhere.
bool BlocksOverlap(const WindowGeometry& g) {
  bool twice = false, every_dim_lands = true;
  for (size_t d = 0; d < g.rank(); ++d) {
    std::vector<uint8_t> hits(static_cast<size_t>(g.in[d]), 0);
    bool lands = false;
    for (int64_t p = 0; p < g.out[d]; ++p) {
      for (int64_t t = 0; t < g.kernel[d]; ++t) {
        const int64_t i = p * g.strides[d] - g.pad_begin[d] + t * g.dilations[d];
        if (i < 0 || i >= g.in[d]) continue;
        lands = true;
        if (hits[static_cast<size_t>(i)]++) twice = true;
        hits[static_cast<size_t>(i)] = 1;
      }
    }
    every_dim_lands = every_dim_lands && lands;
  }
  return twice && every_dim_lands;
}

const char kStringOverlap[] = "overlapping blocks would have to be summed, and tensor(string) has no sum";

// Refuses string data whose blocks overlap when image_shape and block_shape are initializers (else the kernel
// checks at run time).
std::string Col2ImPredicate(const ir::Node& node) {
  const ir::Value* x = node.input(0);
  const ir::Value* image = node.input(1);
  const ir::Value* block = node.input(2);
  if (!x || x->type().elem_type != DataType::kString || !image || !block || !image->initializer() ||
      !block->initializer()) {
    return "";
  }
  try {
    const std::vector<int64_t> im = ReadInt64s(*image->initializer(), node.Describe());
    const std::vector<int64_t> bl = ReadInt64s(*block->initializer(), node.Describe());
    if (BlocksOverlap(ResolveWindow(WindowAttrs::FromNode(node), im, bl, false, node.Describe()))) {
      return std::string("Col2Im: ") + kStringOverlap;
    }
  } catch (const Error&) {
    // Bad shapes or attributes: the kernel reports them at run time.
  }
  return "";
}

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
    if (input.dtype() == DataType::kString && BlocksOverlap(g)) {
      throw UnsupportedError(what + ": " + kStringOverlap + " (block_shape " + IntsToString(block) + ", image_shape " +
                             IntsToString(image) + ")");
    }
    Dispatch(AllTypesWithComplex{}, input.dtype(), what, [&](auto tag) {
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
         .types = {{"T", dtypes::Concat(dtypes::Numeric(), {DataType::kBool, DataType::kString,
                                                             DataType::kComplex64, DataType::kComplex128})}},
         .create = MakeKernel<Col2Im>,
         .predicate = Col2ImPredicate,
         .host_inputs = {1, 2},
         .constraints = "string input only where no two blocks overlap"});
}

}  // namespace ferry::ref
