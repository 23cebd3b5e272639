// Resize (opsets 10, 11, 13, 18, 19) on float32: nearest (every nearest_mode), linear and cubic (cubic_coeff_a,
// exclude_outside) with every coordinate_transformation_mode (tf_crop_and_resize with roi and
// extrapolation_value), scales or sizes (keep_aspect_ratio_policy, axes), any rank. Prepare checks the inputs as
// ref does and, when scales / sizes / roi are constants, builds the interpolation plan (resize_tables.h) once;
// otherwise Compute builds it from the run's values. Antialias is refused (placement falls back to ref).
#include <string>
#include <vector>

#include "kernels/cpu/resize_tables.h"
#include "kernels/kernel_def.h"
#include "kernels/ref/resize_node.h"
#include "kernels/registry.h"

namespace ferry::cpu {
namespace {

class Resize : public OpKernel {
 public:
  explicit Resize(const ir::Node& node) : attrs_(ref::ParseResizeAttributes(node)) {}

  // The inputs checked as ref checks them (ref/resize_node.h); the plan when scales / sizes / roi are constants.
  void Prepare(PrepareContext& ctx) const override {
    const InputSpec& x = ctx.tensor_input(0);
    State st;
    st.in = ref::CheckResizeInputs(ctx, attrs_);
    const Tensor* values_t = ctx.constant(st.in.values_index);
    const Tensor* roi_t = st.in.use_roi ? ctx.constant(1) : nullptr;
    if (values_t && (!st.in.use_roi || roi_t)) {
      st.resolved = true;
      st.plan = Plan(st.in, x.shape, *values_t, roi_t, ctx.Describe());
      ctx.SetOutput(0, x.dtype, st.plan.out_shape);
    } else {
      ctx.SetOutputDynamic(0);
    }
    ctx.EmplaceState(std::move(st));
  }

  void Compute(KernelContext& ctx) const override {
    const Tensor& x = ctx.required_input(0);
    const State& st = ctx.state<State>();
    ResizePlan read;  // from this run's scales / sizes / roi: their errors are the data's, naming the node
    if (!st.resolved) {
      read = Plan(st.in, x.shape(), ctx.required_input(st.in.values_index),
                  st.in.use_roi ? &ctx.required_input(1) : nullptr, ctx.Describe());
    }
    const ResizePlan& plan = st.resolved ? st.plan : read;
    Tensor& y = st.resolved ? ctx.Output(0) : ctx.Output(0, x.dtype(), plan.out_shape);
    RunResizePlan(plan, x.data<float>(), y.data<float>(), ctx.threads());
  }

 private:
  struct State {
    ref::ResizeInputs in;
    bool resolved = false;
    ResizePlan plan;
  };

  // The geometry ref resolves from `values` (scales or sizes) and `roi_t` (null when unused), and its plan;
  // InvalidArgumentError naming `what` for values that make no size.
  ResizePlan Plan(const ref::ResizeInputs& in, const Shape& x, const Tensor& values, const Tensor* roi_t,
                  const std::string& what) const {
    const ref::ResizeGeometry g = ref::ResolveResize(attrs_, in, x, values, roi_t, what);
    return BuildResizePlan(x, g.out_shape, g.scales, g.roi_start, g.roi_end, attrs_.params);
  }

  ref::ResizeAttributes attrs_;
};

std::string ResizePredicate(const ir::Node& node) {
  if (node.opset() >= 18 && node.GetInt("antialias", 0) != 0) return "Resize: antialias=1 is not supported on cpu";
  return "";
}

}  // namespace

void RegisterResizeKernels(KernelRegistry& r) {
  const std::vector<DataType> f32 = {DataType::kFloat};
  const std::vector<DataType> t2 = {DataType::kFloat16, DataType::kFloat, DataType::kDouble};
  const char* constraints = "float32 only; antialias=0";
  r.Add({.op = "Resize",
         .since = 10,
         .until = 10,
         .types = {{"T", f32}},
         .create = MakeKernel<Resize>,
         .predicate = ResizePredicate,
         .host_inputs = {1},
         .constraints = constraints});
  const int versions[] = {11, 13, 18, 19};
  for (int i = 0; i < 4; ++i) {
    r.Add({.op = "Resize",
           .since = versions[i],
           .until = i < 3 ? versions[i + 1] - 1 : kOpsetOpen,
           .types = {{"T1", f32}, {"T2", t2}},
           .create = MakeKernel<Resize>,
           .predicate = ResizePredicate,
           .host_inputs = {1, 2, 3},
           .constraints = constraints});
  }
}

}  // namespace ferry::cpu
