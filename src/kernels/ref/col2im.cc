// Col2Im: rearranges column blocks [N, C·prod(block_shape), L] back into images [N, C, image_shape...], summing
// overlapping blocks; the inverse of the im2col used by Conv, with the same dilations/pads/strides. Any element
// type: complex sums as complex; bool "sums" as numpy does (logical or, what the ONNX reference's `+=` on a bool
// array computes); strings have no sum, so they are only moved, and blocks that overlap are refused.
#include <algorithm>
#include <string>
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
    // Bad shapes or attributes: the kernel reports them (Prepare, or Compute for run-time values).
  }
  return "";
}

// What image_shape and block_shape give for an input [N, C*prod(block_shape), L].
struct Col2ImPlan {
  WindowGeometry g;
  int64_t batch = 0, channels = 0;
  Shape y_shape;
};

// Checks image_shape and block_shape (their values) against the attributes and the input's shape; what() names
// the node in errors.
template <typename What>
Col2ImPlan PlanCol2Im(const WindowAttrs& attrs, const InputSpec& input, const std::vector<int64_t>& image,
                      const std::vector<int64_t>& block, const What& what) {
  if (image.empty() || image.size() != block.size()) {
    throw InvalidArgumentError(what() + ": image_shape " + IntsToString(image) + " and block_shape " +
                               IntsToString(block) + " must be non-empty and of equal length");
  }
  for (int64_t v : image) {
    if (v < 0) throw InvalidArgumentError(what() + ": image_shape " + IntsToString(image) + " has a negative dim");
  }
  Col2ImPlan p;
  p.g = ResolveWindow(attrs, image, block, false, what());
  const int64_t ksize = p.g.kernel_size();
  const Shape& in = input.shape;
  if (in[1] % ksize != 0 || in[2] != p.g.out_size()) {
    throw InvalidArgumentError(what() + ": input shape " + ShapeToString(in) + " does not match " + "block_shape " +
                               IntsToString(block) + " (dim 1 must be a multiple of " + std::to_string(ksize) +
                               ") and the " + std::to_string(p.g.out_size()) + " block positions of image_shape " +
                               IntsToString(image));
  }
  p.batch = in[0];
  p.channels = in[1] / ksize;
  p.y_shape = {p.batch, p.channels};
  p.y_shape.insert(p.y_shape.end(), image.begin(), image.end());
  if (input.dtype == DataType::kString && ShapeElementCount(p.y_shape) != 0 && BlocksOverlap(p.g)) {
    throw UnsupportedError(what() + ": " + kStringOverlap + " (block_shape " + IntsToString(block) +
                           ", image_shape " + IntsToString(image) + ")");
  }
  return p;
}

class Col2Im : public OpKernel {
 public:
  explicit Col2Im(const ir::Node& node) : attrs_(WindowAttrs::FromNode(node)) {}

  // The input's rank and the types of image_shape and block_shape are checked here; the geometry is resolved here
  // when both are known, else the output is dynamic and Compute resolves it from their values.
  void Prepare(PrepareContext& ctx) const override {
    const InputSpec& input = ctx.tensor_input(0);
    for (int i : {1, 2}) {
      const DataType t = ctx.tensor_input(i).dtype;
      if (t != DataType::kInt64 && t != DataType::kInt32) {
        throw InvalidArgumentError(ctx.Describe() + (i == 1 ? " input image_shape" : " input block_shape") +
                                   ": expected an int32 or int64 tensor, got " + std::string(DataTypeName(t)));
      }
    }
    if (input.shape.size() != 3) {
      throw InvalidArgumentError(ctx.Describe() + ": input must have shape [N, C*prod(block_shape), L], got " +
                                 ShapeToString(input.shape));
    }
    const Tensor* image = ctx.constant(1);
    const Tensor* block = ctx.constant(2);
    if (!image || !block) {
      ctx.SetOutputDynamic(0);
      return;
    }
    const Col2ImPlan& p =
        ctx.EmplaceState(PlanCol2Im(attrs_, input, ReadInt64s(*image, {}), ReadInt64s(*block, {}),
                                    [&] { return ctx.Describe(); }));
    ctx.SetOutput(0, input.dtype, p.y_shape);
  }

  void Compute(KernelContext& ctx) const override {
    const Tensor& input = ctx.required_input(0);
    Col2ImPlan planned;
    const Col2ImPlan* p = ctx.state_if_any<Col2ImPlan>();
    if (!p) {  // image_shape / block_shape are run-time data: their errors name the node
      planned = PlanCol2Im(attrs_, InputSpec::Of(ctx.input_value(0)), ReadInt64s(ctx.required_input(1), {}),
                           ReadInt64s(ctx.required_input(2), {}), [&] { return ctx.Describe(); });
      p = &planned;
    }
    const WindowGeometry& g = p->g;
    const int64_t batch = p->batch, channels = p->channels;
    Tensor& y = ctx.Output(0, input.dtype(), p->y_shape);
    if (y.size() == 0) return;
    const int64_t col_per_image = input.dim(1) * input.dim(2), img_per_image = channels * g.in_size();
    Dispatch(AllTypesWithComplex{}, input.dtype(), ctx, [&](auto tag) {
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
