// Upsample (opsets 1, 7, 9; deprecated in 10, where the same kernel still serves it): nearest or (bi)linear
// resize by per-axis scales, output = floor(input * scale), asymmetric coordinates; nearest rounds like ONNX
// Runtime (floor when upsampling, ceil when downsampling). Opset 1 takes height_scale/width_scale of an NCHW
// input, opset 7 a `scales` attribute, opset 9+ a `scales` input. Uses the Resize engine (resize_util.h): linear
// interpolates numbers and complex numbers, and is refused for bool and string. Prepare checks the scales' dtype
// and count and resolves Y's shape when the scales are known before the run; scales read at run time are resolved
// (and their errors raised) by Compute.
#include <cmath>
#include <string>
#include <vector>

#include "kernels/kernel_def.h"
#include "kernels/ref/common.h"
#include "kernels/ref/resize_util.h"
#include "kernels/registry.h"

namespace ferry::ref {
namespace {

// The per-axis scales and Y's shape.
struct Geometry {
  std::vector<double> scales;
  Shape out_shape;
};

class Upsample : public OpKernel {
 public:
  explicit Upsample(const ir::Node& node) : opset_(node.opset()) {
    const std::string mode = node.GetString("mode", "nearest");
    const bool ok = mode == "nearest" || (opset_ < 7 ? mode == "bilinear" : mode == "linear");
    if (!ok || !ParseResizeMode(mode, &params_.mode)) {
      throw InvalidModelError(node.Describe() + ": unsupported mode '" + mode + "'");
    }
    params_.coord = ResizeParams::Coord::kAsymmetric;
    params_.nearest = ResizeParams::NearestMode::kSimple;
    if (opset_ < 7) {
      attr_scales_ = {1.0, 1.0, node.GetFloat("height_scale", 0.0f), node.GetFloat("width_scale", 0.0f)};
    } else if (opset_ < 9) {
      for (float s : node.GetFloats("scales")) attr_scales_.push_back(s);
    }
  }

  // The scales' dtype and count; Y's shape when the scales are attributes or a constant input (else Y is dynamic
  // and Compute resolves the run's scales).
  void Prepare(PrepareContext& ctx) const override {
    const InputSpec& x = ctx.tensor_input(0);
    if (opset_ >= 9) {
      const InputSpec& s = ctx.tensor_input(1);
      if (s.dtype != DataType::kFloat) {
        throw InvalidArgumentError(ctx.Describe() + ": input 'scales' must be float32, got " + ctx.InputString(1));
      }
      if (ShapeElementCount(s.shape) != static_cast<int64_t>(x.shape.size())) {
        throw InvalidArgumentError(ctx.Describe() + ": got " + std::to_string(ShapeElementCount(s.shape)) +
                                   " scales for input shape " + ShapeToString(x.shape) + " (" + ctx.InputString(1) +
                                   ")");
      }
      if (!ctx.constant(1)) return ctx.SetOutputDynamic(0);
    }
    const Geometry& g = ctx.EmplaceState(Resolve(x.shape, ctx.constant(1), ctx.Describe()));
    ctx.SetOutput(0, x.dtype, g.out_shape);
  }

  void Compute(KernelContext& ctx) const override {
    const Tensor& x = ctx.required_input(0);
    const Geometry* prepared = ctx.state_if_any<Geometry>();
    Geometry resolved;
    if (!prepared) {  // scales read at run time: their errors are the data's (they name the node)
      resolved = Resolve(x.shape(), ctx.input(1), ctx.Describe());
    }
    const Geometry& g = prepared ? *prepared : resolved;
    const std::vector<double> roi_start(g.scales.size(), 0.0), roi_end(g.scales.size(), 1.0);
    Tensor& y = prepared ? ctx.Output(0) : ctx.Output(0, x.dtype(), g.out_shape);
    // Resolve checked the shapes and the kernel's predicate the element type: ResizeTensor's own checks cannot
    // fail; should one, its message gets the node's description.
    try {
      ResizeTensor(x, y, g.scales, roi_start, roi_end, params_, ctx.threads(), std::string());
    } catch (const InvalidArgumentError& e) {
      throw InvalidArgumentError(ctx.Describe() + e.what());
    } catch (const UnsupportedError& e) {
      throw UnsupportedError(ctx.Describe() + e.what());
    }
  }

 private:
  int64_t opset_;
  ResizeParams params_;
  std::vector<double> attr_scales_;

  // The scales (the attributes, or `scales_t`: the float32 `scales` input's data) and Y's shape for X's shape;
  // throws InvalidArgumentError naming `what` for scales that do not resize X.
  Geometry Resolve(const Shape& x_shape, const Tensor* scales_t, const std::string& what) const {
    Geometry g;
    g.scales = attr_scales_;
    if (opset_ >= 9) g.scales.assign(scales_t->data<float>(), scales_t->data<float>() + scales_t->size());
    const std::vector<double>& scales = g.scales;
    if (scales.size() != x_shape.size()) {
      throw InvalidArgumentError(what + ": got " + std::to_string(scales.size()) + " scales for input shape " +
                                 ShapeToString(x_shape));
    }
    g.out_shape = x_shape;
    for (size_t a = 0; a < scales.size(); ++a) {
      if (!(scales[a] > 0) || !std::isfinite(scales[a])) {
        throw InvalidArgumentError(what + ": scales must be positive, got " + std::to_string(scales[a]));
      }
      const double len = std::floor(static_cast<double>(x_shape[a]) * scales[a]);
      if (len >= 9.0e18) throw InvalidArgumentError(what + ": scales give an output dim too large");
      g.out_shape[a] = static_cast<int64_t>(len);
    }
    // ResizeTensor's check, on the shapes.
    if (ShapeElementCount(g.out_shape) != 0 && ShapeElementCount(x_shape) == 0) {
      throw InvalidArgumentError(what + ": cannot resize the empty input " + ShapeToString(x_shape) + " to " +
                                 ShapeToString(g.out_shape));
    }
    return g;
  }
};

std::string UpsamplePredicate(const ir::Node& node) {
  const ir::Value* x = node.input(0);
  return ResizeModeReason("Upsample", node.GetString("mode", "nearest"),
                          x && x->type().is_tensor() ? x->type().elem_type : DataType::kUndefined);
}

}  // namespace

void RegisterUpsampleKernels(KernelRegistry& r) {
  const auto all = dtypes::Concat(dtypes::Numeric(), {DataType::kBool, DataType::kString, DataType::kComplex64,
                                                       DataType::kComplex128});
  const char* constraints = "bool and string input only with mode=nearest";
  r.Add({.op = "Upsample",
         .since = 1,
         .until = 6,
         .types = {{"T",
                    {DataType::kBool, DataType::kInt32, DataType::kInt64, DataType::kFloat16, DataType::kFloat,
                     DataType::kDouble}}},
         .create = MakeKernel<Upsample>,
         .predicate = UpsamplePredicate,
         .constraints = constraints});
  r.Add({.op = "Upsample",
         .since = 7,
         .until = 8,
         .types = {{"T", all}},
         .create = MakeKernel<Upsample>,
         .predicate = UpsamplePredicate,
         .constraints = constraints});
  r.Add({.op = "Upsample",
         .since = 9,
         .until = 9,
         .types = {{"T", all}},
         .create = MakeKernel<Upsample>,
         .predicate = UpsamplePredicate,
         .host_inputs = {1},
         .constraints = constraints});
  r.Add({.op = "Upsample",
         .since = 10,
         .types = {{"T", all}},
         .create = MakeKernel<Upsample>,
         .predicate = UpsamplePredicate,
         .host_inputs = {1},
         .constraints = constraints});
}

}  // namespace ferry::ref
