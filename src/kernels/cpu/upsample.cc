// Upsample (opsets 7, 9; deprecated in 10, where the same kernel still serves it) on float32: nearest or linear
// by per-axis scales, output = floor(input * scale), asymmetric coordinates, nearest rounding like ONNX Runtime
// (floor when upsampling, ceil when downsampling) as in ref. Opset 7 takes a `scales` attribute, 9+ a `scales`
// input. Prepare checks the scales and builds the interpolation plan (resize_tables.h) when they are known before
// the run; scales read at run time are resolved (and their errors raised) by Compute.
#include <cmath>
#include <string>
#include <vector>

#include "kernels/cpu/resize_tables.h"
#include "kernels/kernel_def.h"
#include "kernels/ref/common.h"
#include "kernels/registry.h"

namespace ferry::cpu {
namespace {

using ref::ResizeParams;

class Upsample : public OpKernel {
 public:
  explicit Upsample(const ir::Node& node) : opset_(node.opset()) {
    const std::string mode = node.GetString("mode", "nearest");
    if ((mode != "nearest" && mode != "linear") || !ref::ParseResizeMode(mode, &params_.mode)) {
      throw InvalidModelError(node.Describe() + ": unsupported mode '" + mode + "'");
    }
    params_.coord = ResizeParams::Coord::kAsymmetric;
    params_.nearest = ResizeParams::NearestMode::kSimple;
    if (opset_ < 9) {
      for (float s : node.GetFloats("scales")) attr_scales_.push_back(s);
    }
  }

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
    const ResizePlan& plan = ctx.EmplaceState(Plan(x.shape, ctx.constant(1), ctx.Describe()));
    ctx.SetOutput(0, x.dtype, plan.out_shape);
  }

  void Compute(KernelContext& ctx) const override {
    const Tensor& x = ctx.required_input(0);
    const ResizePlan* prepared = ctx.state_if_any<ResizePlan>();
    ResizePlan read;  // scales read at run time: their errors are the data's (they name the node)
    if (!prepared) read = Plan(x.shape(), ctx.input(1), ctx.Describe());
    const ResizePlan& plan = prepared ? *prepared : read;
    Tensor& y = prepared ? ctx.Output(0) : ctx.Output(0, x.dtype(), plan.out_shape);
    RunResizePlan(plan, x.data<float>(), y.data<float>(), ctx.threads());
  }

 private:
  // The plan for the scales (the attribute, or `scales_t`: the float32 `scales` input's data) over X's shape;
  // InvalidArgumentError naming `what` for scales that do not resize X.
  ResizePlan Plan(const Shape& x_shape, const Tensor* scales_t, const std::string& what) const {
    std::vector<double> scales = attr_scales_;
    if (opset_ >= 9) scales.assign(scales_t->data<float>(), scales_t->data<float>() + scales_t->size());
    if (scales.size() != x_shape.size()) {
      throw InvalidArgumentError(what + ": got " + std::to_string(scales.size()) + " scales for input shape " +
                                 ShapeToString(x_shape));
    }
    Shape out_shape = x_shape;
    for (size_t a = 0; a < scales.size(); ++a) {
      if (!(scales[a] > 0) || !std::isfinite(scales[a])) {
        throw InvalidArgumentError(what + ": scales must be positive, got " + std::to_string(scales[a]));
      }
      const double len = std::floor(static_cast<double>(x_shape[a]) * scales[a]);
      if (len >= 9.0e18) throw InvalidArgumentError(what + ": scales give an output dim too large");
      out_shape[a] = static_cast<int64_t>(len);
    }
    if (ShapeElementCount(out_shape) != 0 && ShapeElementCount(x_shape) == 0) {
      throw InvalidArgumentError(what + ": cannot resize the empty input " + ShapeToString(x_shape) + " to " +
                                 ShapeToString(out_shape));
    }
    const std::vector<double> roi_start(scales.size(), 0.0), roi_end(scales.size(), 1.0);
    return BuildResizePlan(x_shape, out_shape, scales, roi_start, roi_end, params_);
  }

  int64_t opset_;
  ResizeParams params_;
  std::vector<double> attr_scales_;
};

}  // namespace

void RegisterUpsampleKernels(KernelRegistry& r) {
  const std::vector<DataType> f32 = {DataType::kFloat};
  const char* constraints = "float32 only";
  r.Add({.op = "Upsample", .since = 7, .until = 8, .types = {{"T", f32}}, .create = MakeKernel<Upsample>,
         .constraints = constraints});
  r.Add({.op = "Upsample", .since = 9, .until = 9, .types = {{"T", f32}}, .create = MakeKernel<Upsample>,
         .host_inputs = {1}, .constraints = constraints});
  r.Add({.op = "Upsample", .since = 10, .types = {{"T", f32}}, .create = MakeKernel<Upsample>, .host_inputs = {1},
         .constraints = constraints});
}

}  // namespace ferry::cpu
