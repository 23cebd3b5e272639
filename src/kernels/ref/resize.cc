// Resize (opsets 10, 11, 13, 18, 19): nearest / linear / cubic interpolation over any axes.
//   10: inputs (X, scales); asymmetric coordinates, nearest rounds like ONNX Runtime's "simple" mode.
//   11: inputs (X, roi, scales, sizes); coordinate_transformation_mode, nearest_mode, cubic_coeff_a,
//       exclude_outside, extrapolation_value (tf_half_pixel_for_nn exists only here).
//   13: roi and scales become optional.   18: antialias, axes, keep_aspect_ratio_policy.
//   19: coordinate_transformation_mode half_pixel_symmetric.
// With scales, output = floor(input * scale) (computed in double, as the ONNX reference does; roi does not
// change the output size, as in the reference and ONNX Runtime); with sizes, scale = output / input, or with
// keep_aspect_ratio_policy one scale for all listed axes and output = round_half_up(input * scale).
// Element types: nearest copies any; linear and cubic interpolate numbers and complex numbers (real and imaginary
// parts with the same weights), and are refused for bool and string.
#include <algorithm>
#include <cmath>
#include <limits>

#include "kernels/kernel_def.h"
#include "kernels/ref/common.h"
#include "kernels/ref/resize_node.h"
#include "kernels/ref/resize_util.h"
#include "kernels/registry.h"

namespace ferry::ref {
namespace {

class Resize : public OpKernel {
 public:
  explicit Resize(const ir::Node& node) : attrs_(ParseResizeAttributes(node)) {}

  // Which of scales / sizes is given, the axes they refer to, their (and roi's) dtypes and lengths
  // (resize_node.h); the output shape and interpolation geometry when the values they hold are constants, dynamic
  // otherwise.
  void Prepare(PrepareContext& ctx) const override {
    const InputSpec& x = ctx.tensor_input(0);
    State st;
    st.in = CheckResizeInputs(ctx, attrs_);
    const Tensor* values_t = ctx.constant(st.in.values_index);
    const Tensor* roi_t = st.in.use_roi ? ctx.constant(1) : nullptr;
    if (values_t && (!st.in.use_roi || roi_t)) {
      st.resolved = true;
      st.g = ResolveResize(attrs_, st.in, x.shape, *values_t, roi_t, ctx.Describe());
      ctx.SetOutput(0, x.dtype, st.g.out_shape);
    } else {
      ctx.SetOutputDynamic(0);
    }
    ctx.EmplaceState(std::move(st));
  }

  void Compute(KernelContext& ctx) const override {
    const Tensor& x = ctx.required_input(0);
    const State& st = ctx.state<State>();
    ResizeGeometry read;  // from this run's scales / sizes / roi: their errors are the data's, naming the node
    if (!st.resolved) {
      read = ResolveResize(attrs_, st.in, x.shape(), ctx.required_input(st.in.values_index),
                           st.in.use_roi ? &ctx.required_input(1) : nullptr, ctx.Describe());
    }
    const ResizeGeometry& g = st.resolved ? st.g : read;
    Tensor& y = st.resolved ? ctx.Output(0) : ctx.Output(0, x.dtype(), g.out_shape);
    // Resolve checked the shapes and the kernel's predicate the element type: ResizeTensor's own checks cannot
    // fail; should one, its message gets the node's description.
    try {
      ResizeTensor(x, y, g.scales, g.roi_start, g.roi_end, attrs_.params, ctx.threads(), std::string());
    } catch (const InvalidArgumentError& e) {
      throw InvalidArgumentError(ctx.Describe() + e.what());
    } catch (const UnsupportedError& e) {
      throw UnsupportedError(ctx.Describe() + e.what());
    }
  }

 private:
  struct State {
    ResizeInputs in;
    bool resolved = false;  // g holds the geometry (constant scales / sizes / roi)
    ResizeGeometry g;
  };

  ResizeAttributes attrs_;
};

std::string ResizePredicate(const ir::Node& node) {
  const ir::Value* x = node.input(0);
  return ResizeModeReason("Resize", node.GetString("mode", "nearest"),
                          x && x->type().is_tensor() ? x->type().elem_type : DataType::kUndefined);
}

}  // namespace

void RegisterResizeKernels(KernelRegistry& r) {
  const auto t1 = dtypes::Concat(dtypes::Numeric(), {DataType::kBool, DataType::kString, DataType::kComplex64,
                                                      DataType::kComplex128});
  const char* constraints = "bool and string input only with mode=nearest";
  const std::vector<DataType> t2 = {DataType::kFloat16, DataType::kFloat, DataType::kDouble};
  r.Add({.op = "Resize",
         .since = 10,
         .until = 10,
         .types = {{"T", t1}},
         .create = MakeKernel<Resize>,
         .predicate = ResizePredicate,
         .host_inputs = {1},
         .constraints = constraints});
  const int versions[] = {11, 13, 18, 19};
  for (int i = 0; i < 4; ++i) {
    r.Add({.op = "Resize",
           .since = versions[i],
           .until = i < 3 ? versions[i + 1] - 1 : kOpsetOpen,
           .types = {{"T1", t1}, {"T2", t2}},
           .create = MakeKernel<Resize>,
           .predicate = ResizePredicate,
           .host_inputs = {1, 2, 3},
           .constraints = constraints});
  }
}

}  // namespace ferry::ref
