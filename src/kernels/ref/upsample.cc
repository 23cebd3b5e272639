// Upsample (opsets 1, 7, 9; deprecated in 10, where the same kernel still serves it): nearest or (bi)linear
// resize by per-axis scales, output = floor(input * scale), asymmetric coordinates; nearest rounds like ONNX
// Runtime (floor when upsampling, ceil when downsampling). Opset 1 takes height_scale/width_scale of an NCHW
// input, opset 7 a `scales` attribute, opset 9+ a `scales` input. Uses the Resize engine (resize_util.h): linear
// interpolates numbers and complex numbers, and is refused for bool and string.
#include <cmath>

#include "kernels/kernel_def.h"
#include "kernels/ref/common.h"
#include "kernels/ref/resize_util.h"
#include "kernels/registry.h"

namespace ferry::ref {
namespace {

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

  void Compute(KernelContext& ctx) const override {
    const std::string what = ctx.Describe();
    const Tensor& x = ctx.required_input(0);
    std::vector<double> scales = attr_scales_;
    if (opset_ >= 9) {
      const Tensor& s = ctx.required_input(1);
      if (s.dtype() != DataType::kFloat) {
        throw InvalidArgumentError(what + ": input 'scales' must be float32, got " +
                                   std::string(DataTypeName(s.dtype())));
      }
      scales.assign(s.data<float>(), s.data<float>() + s.size());
    }
    if (static_cast<int64_t>(scales.size()) != x.rank()) {
      throw InvalidArgumentError(what + ": got " + std::to_string(scales.size()) + " scales for input shape " +
                                 ShapeToString(x.shape()));
    }
    Shape out_shape = x.shape();
    for (size_t a = 0; a < scales.size(); ++a) {
      if (!(scales[a] > 0) || !std::isfinite(scales[a])) {
        throw InvalidArgumentError(what + ": scales must be positive, got " + std::to_string(scales[a]));
      }
      const double len = std::floor(static_cast<double>(x.dim(static_cast<int64_t>(a))) * scales[a]);
      if (len >= 9.0e18) throw InvalidArgumentError(what + ": scales give an output dim too large");
      out_shape[a] = static_cast<int64_t>(len);
    }
    const std::vector<double> roi_start(scales.size(), 0.0), roi_end(scales.size(), 1.0);
    Tensor& y = ctx.Output(0, x.dtype(), out_shape);
    ResizeTensor(x, y, scales, roi_start, roi_end, params_, ctx.threads(), what);
  }

 private:
  int64_t opset_;
  ResizeParams params_;
  std::vector<double> attr_scales_;
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
