// Resize (opsets 10, 11, 13, 18, 19) on float32: nearest (every nearest_mode), linear and cubic (cubic_coeff_a,
// exclude_outside) with every coordinate_transformation_mode (tf_crop_and_resize with roi and
// extrapolation_value), scales or sizes (keep_aspect_ratio_policy, axes), any rank. Prepare checks the inputs as
// ref does and, when scales / sizes / roi are constants, builds the interpolation plan (resize_tables.h) once;
// otherwise Compute builds it from the run's values. Antialias is refused (placement falls back to ref).
#include <algorithm>
#include <cmath>
#include <limits>
#include <string>
#include <vector>

#include "ferry/float16.h"
#include "kernels/cpu/resize_tables.h"
#include "kernels/kernel_def.h"
#include "kernels/ref/common.h"
#include "kernels/registry.h"

namespace ferry::cpu {
namespace {

using ref::ResizeParams;

enum class AspectPolicy { kStretch, kNotLarger, kNotSmaller };

bool IsFloatType(DataType t) {
  return t == DataType::kFloat || t == DataType::kDouble || t == DataType::kFloat16 || t == DataType::kBFloat16;
}

// A float16/bfloat16/float/double tensor (scales, roi) as doubles; Prepare checked the dtype.
std::vector<double> ReadDoubles(const Tensor& t) {
  std::vector<double> out(static_cast<size_t>(t.size()));
  for (int64_t i = 0; i < t.size(); ++i) {
    double v = 0;
    switch (t.dtype()) {
      case DataType::kFloat: v = t.data<float>()[i]; break;
      case DataType::kDouble: v = t.data<double>()[i]; break;
      case DataType::kFloat16: v = static_cast<float>(t.data<Float16>()[i]); break;
      default: v = static_cast<float>(t.data<BFloat16>()[i]); break;
    }
    out[static_cast<size_t>(i)] = v;
  }
  return out;
}

class Resize : public OpKernel {
 public:
  explicit Resize(const ir::Node& node) : opset_(node.opset()) {
    const std::string mode = node.GetString("mode", "nearest");
    if (mode == "bilinear" || mode == "bicubic" || !ref::ParseResizeMode(mode, &params_.mode) ||
        (opset_ < 11 && params_.mode == ResizeParams::Mode::kCubic)) {
      throw InvalidModelError(node.Describe() + ": unsupported mode '" + mode + "'");
    }
    if (opset_ < 11) {
      params_.coord = ResizeParams::Coord::kAsymmetric;
      params_.nearest = ResizeParams::NearestMode::kSimple;
    } else {
      const std::string coord = node.GetString("coordinate_transformation_mode", "half_pixel");
      if (!ref::ParseResizeCoord(coord, &params_.coord) ||
          (params_.coord == ResizeParams::Coord::kTfHalfPixelForNN && opset_ >= 13) ||
          (params_.coord == ResizeParams::Coord::kHalfPixelSymmetric && opset_ < 19)) {
        throw InvalidModelError(node.Describe() + ": unsupported coordinate_transformation_mode '" + coord + "'");
      }
      const std::string nearest = node.GetString("nearest_mode", "round_prefer_floor");
      if (!ref::ParseNearestMode(nearest, &params_.nearest)) {
        throw InvalidModelError(node.Describe() + ": unsupported nearest_mode '" + nearest + "'");
      }
      params_.cubic_a = node.GetFloat("cubic_coeff_a", -0.75f);
      params_.exclude_outside = node.GetInt("exclude_outside", 0) != 0;
      params_.extrapolation_value = node.GetFloat("extrapolation_value", 0.0f);
    }
    if (opset_ >= 18) {
      axes_ = node.GetInts("axes");
      const std::string policy = node.GetString("keep_aspect_ratio_policy", "stretch");
      if (policy == "stretch") {
        policy_ = AspectPolicy::kStretch;
      } else if (policy == "not_larger") {
        policy_ = AspectPolicy::kNotLarger;
      } else if (policy == "not_smaller") {
        policy_ = AspectPolicy::kNotSmaller;
      } else {
        throw InvalidModelError(node.Describe() + ": unsupported keep_aspect_ratio_policy '" + policy + "'");
      }
    }
  }

  void Prepare(PrepareContext& ctx) const override {
    const std::string what = ctx.Describe();
    const InputSpec& x = ctx.tensor_input(0);
    const int64_t rank = static_cast<int64_t>(x.shape.size());
    const int scales_i = opset_ >= 11 ? 2 : 1;
    auto given = [&](int i) { return ctx.has_input(i) && ShapeElementCount(ctx.tensor_input(i).shape) > 0; };
    State st;
    st.has_scales = given(scales_i);
    const bool has_sizes = opset_ >= 11 && given(3);
    if (st.has_scales == has_sizes) {
      throw InvalidArgumentError(what + ": exactly one of 'scales' and 'sizes' must be given (non-empty)");
    }
    if (axes_.empty()) {
      for (int64_t a = 0; a < rank; ++a) st.axes.push_back(a);
    } else {
      std::vector<bool> seen(static_cast<size_t>(rank), false);
      for (int64_t a : axes_) {
        const int64_t n = ref::NormalizeAxis(a, rank, what);
        if (seen[static_cast<size_t>(n)]) {
          throw InvalidArgumentError(what + ": attribute 'axes' lists axis " + std::to_string(a) + " twice");
        }
        seen[static_cast<size_t>(n)] = true;
        st.axes.push_back(n);
      }
    }
    const int64_t naxes = static_cast<int64_t>(st.axes.size());
    const int values_i = st.has_scales ? scales_i : 3;
    const InputSpec& values = ctx.tensor_input(values_i);
    const char* values_name = st.has_scales ? "scales" : "sizes";
    if (st.has_scales && !IsFloatType(values.dtype)) {
      throw UnsupportedError(what + ": input 'scales': data type " + std::string(DataTypeName(values.dtype)) +
                             " is not supported");
    }
    if (!st.has_scales && values.dtype != DataType::kInt32 && values.dtype != DataType::kInt64) {
      throw InvalidArgumentError(what + ": input 'sizes': expected an int32 or int64 tensor, got " +
                                 std::string(DataTypeName(values.dtype)));
    }
    if (ShapeElementCount(values.shape) != naxes) {
      throw InvalidArgumentError(what + ": input '" + values_name + "' has " +
                                 std::to_string(ShapeElementCount(values.shape)) + " values, expected " +
                                 std::to_string(naxes) + " for input shape " + ShapeToString(x.shape));
    }
    st.use_roi = params_.coord == ResizeParams::Coord::kTfCropAndResize && opset_ >= 11 && given(1);
    if (st.use_roi) {
      const InputSpec& roi = ctx.tensor_input(1);
      if (!IsFloatType(roi.dtype)) {
        throw UnsupportedError(what + ": input 'roi': data type " + std::string(DataTypeName(roi.dtype)) +
                               " is not supported");
      }
      if (ShapeElementCount(roi.shape) != 2 * naxes) {
        throw InvalidArgumentError(what + ": input 'roi' has " + std::to_string(ShapeElementCount(roi.shape)) +
                                   " values, expected " + std::to_string(2 * naxes));
      }
    }
    const Tensor* values_t = ctx.constant(values_i);
    const Tensor* roi_t = st.use_roi ? ctx.constant(1) : nullptr;
    if (values_t && (!st.use_roi || roi_t)) {
      st.resolved = true;
      st.plan = Plan(st, x.shape, *values_t, roi_t, what);
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
      const Tensor& values = ctx.required_input(st.has_scales ? (opset_ >= 11 ? 2 : 1) : 3);
      read = Plan(st, x.shape(), values, st.use_roi ? &ctx.required_input(1) : nullptr, ctx.Describe());
    }
    const ResizePlan& plan = st.resolved ? st.plan : read;
    Tensor& y = st.resolved ? ctx.Output(0) : ctx.Output(0, x.dtype(), plan.out_shape);
    RunResizePlan(plan, x.data<float>(), y.data<float>(), ctx.threads());
  }

 private:
  struct State {
    std::vector<int64_t> axes;
    bool has_scales = false, use_roi = false, resolved = false;
    ResizePlan plan;
  };

  // The output shape, per-axis scales and roi from `values` (scales or sizes) and `roi_t` (null when unused), as
  // ref resolves them, and the plan; InvalidArgumentError naming `what` for values that make no size.
  ResizePlan Plan(const State& st, const Shape& x, const Tensor& values, const Tensor* roi_t,
                  const std::string& what) const {
    const int64_t rank = static_cast<int64_t>(x.size());
    const std::vector<int64_t>& axes = st.axes;
    const size_t naxes = axes.size();
    std::vector<double> scales(static_cast<size_t>(rank), 1.0);
    Shape out_shape = x;
    if (st.has_scales) {
      const std::vector<double> s = ReadDoubles(values);
      for (size_t i = 0; i < naxes; ++i) {
        const size_t a = static_cast<size_t>(axes[i]);
        if (!(s[i] > 0) || !std::isfinite(s[i])) {
          throw InvalidArgumentError(what + ": input 'scales' must be positive, got " + std::to_string(s[i]));
        }
        scales[a] = s[i];
        const double len = std::floor(s[i] * static_cast<double>(x[a]));
        if (len >= 9.0e18) throw InvalidArgumentError(what + ": input 'scales' gives an output dim too large");
        out_shape[a] = static_cast<int64_t>(len);
      }
    } else {
      const std::vector<int64_t> sz = ref::ReadInt64s(values, what + ": input 'sizes'");
      for (size_t i = 0; i < naxes; ++i) {
        if (sz[i] < 0) throw InvalidArgumentError(what + ": input 'sizes' has a negative value");
        const size_t a = static_cast<size_t>(axes[i]);
        const int64_t in = x[a];
        if (in == 0 && sz[i] != 0) {
          throw InvalidArgumentError(what + ": cannot resize the empty dim " + std::to_string(axes[i]) + " of " +
                                     ShapeToString(x) + " to " + std::to_string(sz[i]));
        }
        scales[a] = in == 0 ? 1.0 : static_cast<double>(sz[i]) / static_cast<double>(in);
        out_shape[a] = sz[i];
      }
      if (policy_ != AspectPolicy::kStretch) {
        double s = policy_ == AspectPolicy::kNotLarger ? std::numeric_limits<double>::infinity() : 0.0;
        for (int64_t a : axes) {
          const double v = scales[static_cast<size_t>(a)];
          s = policy_ == AspectPolicy::kNotLarger ? std::min(s, v) : std::max(s, v);
        }
        for (int64_t a : axes) {
          const size_t d = static_cast<size_t>(a);
          scales[d] = s;
          out_shape[d] = static_cast<int64_t>(s * static_cast<double>(x[d]) + 0.5);
        }
      }
    }
    std::vector<double> roi_start(static_cast<size_t>(rank), 0.0), roi_end(static_cast<size_t>(rank), 1.0);
    if (roi_t) {
      const std::vector<double> roi = ReadDoubles(*roi_t);
      for (size_t i = 0; i < naxes; ++i) {
        roi_start[static_cast<size_t>(axes[i])] = roi[i];
        roi_end[static_cast<size_t>(axes[i])] = roi[naxes + i];
      }
    }
    if (ShapeElementCount(out_shape) != 0 && ShapeElementCount(x) == 0) {
      throw InvalidArgumentError(what + ": cannot resize the empty input " + ShapeToString(x) + " to " +
                                 ShapeToString(out_shape));
    }
    return BuildResizePlan(x, out_shape, scales, roi_start, roi_end, params_);
  }

  int64_t opset_;
  ResizeParams params_;
  std::vector<int64_t> axes_;
  AspectPolicy policy_ = AspectPolicy::kStretch;
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
