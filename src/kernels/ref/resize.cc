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
#include "kernels/ref/resize_util.h"
#include "kernels/registry.h"

namespace ferry::ref {
namespace {

enum class AspectPolicy { kStretch, kNotLarger, kNotSmaller };

// Reads a float16/float/double tensor (scales, roi) into doubles.
std::vector<double> ReadDoubles(const Tensor& t, const std::string& what) {
  std::vector<double> out(static_cast<size_t>(t.size()));
  Dispatch(FloatTypes{}, t.dtype(), what, [&](auto tag) {
    using T = decltype(tag);
    for (int64_t i = 0; i < t.size(); ++i)
      out[static_cast<size_t>(i)] = static_cast<double>(static_cast<Acc<T>>(t.data<T>()[i]));
  });
  return out;
}

bool IsFloatType(DataType t) {
  return t == DataType::kFloat || t == DataType::kDouble || t == DataType::kFloat16 || t == DataType::kBFloat16;
}

class Resize : public OpKernel {
 public:
  explicit Resize(const ir::Node& node) : opset_(node.opset()) {
    const std::string mode = node.GetString("mode", "nearest");
    if (mode == "bilinear" || mode == "bicubic" || !ParseResizeMode(mode, &params_.mode) ||
        (opset_ < 11 && params_.mode == ResizeParams::Mode::kCubic)) {
      throw InvalidModelError(node.Describe() + ": unsupported mode '" + mode + "'");
    }
    if (opset_ < 11) {
      params_.coord = ResizeParams::Coord::kAsymmetric;
      params_.nearest = ResizeParams::NearestMode::kSimple;
    } else {
      const std::string coord = node.GetString("coordinate_transformation_mode", "half_pixel");
      if (!ParseResizeCoord(coord, &params_.coord) ||
          (params_.coord == ResizeParams::Coord::kTfHalfPixelForNN && opset_ >= 13) ||
          (params_.coord == ResizeParams::Coord::kHalfPixelSymmetric && opset_ < 19)) {
        throw InvalidModelError(node.Describe() + ": unsupported coordinate_transformation_mode '" + coord + "'");
      }
      const std::string nearest = node.GetString("nearest_mode", "round_prefer_floor");
      if (!ParseNearestMode(nearest, &params_.nearest)) {
        throw InvalidModelError(node.Describe() + ": unsupported nearest_mode '" + nearest + "'");
      }
      params_.cubic_a = node.GetFloat("cubic_coeff_a", -0.75f);
      params_.exclude_outside = node.GetInt("exclude_outside", 0) != 0;
      params_.extrapolation_value = node.GetFloat("extrapolation_value", 0.0f);
    }
    if (opset_ >= 18) {
      params_.antialias = node.GetInt("antialias", 0) != 0;
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

  // Which of scales / sizes is given, the axes they refer to, their (and roi's) dtypes and lengths; the output
  // shape and interpolation geometry when the values they hold are constants, dynamic otherwise.
  void Prepare(PrepareContext& ctx) const override {
    const std::string what = ctx.Describe();
    const InputSpec& x = ctx.tensor_input(0);
    const int64_t rank = static_cast<int64_t>(x.shape.size());
    const int scales_i = opset_ >= 11 ? 2 : 1;
    // Input i when it is present and not empty.
    auto given = [&](int i) { return ctx.has_input(i) && ShapeElementCount(ctx.tensor_input(i).shape) > 0; };
    State st;
    st.has_scales = given(scales_i);
    const bool has_sizes = opset_ >= 11 && given(3);
    if (st.has_scales == has_sizes) {
      throw InvalidArgumentError(what + ": exactly one of 'scales' and 'sizes' must be given (non-empty)");
    }
    // The axes the scales/sizes/roi entries refer to.
    if (axes_.empty()) {
      for (int64_t a = 0; a < rank; ++a) st.axes.push_back(a);
    } else {
      std::vector<bool> seen(static_cast<size_t>(rank), false);
      for (int64_t a : axes_) {
        const int64_t n = NormalizeAxis(a, rank, what);
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
      st.g = Resolve(st, x.shape, *values_t, roi_t, what);
      ctx.SetOutput(0, x.dtype, st.g.out_shape);
    } else {
      ctx.SetOutputDynamic(0);
    }
    ctx.EmplaceState(std::move(st));
  }

  void Compute(KernelContext& ctx) const override {
    const Tensor& x = ctx.required_input(0);
    const State& st = ctx.state<State>();
    Geometry read;  // scales / sizes / roi read from this run's data: their errors are the data's, naming the node
    if (!st.resolved) {
      const Tensor& values = ctx.required_input(st.has_scales ? (opset_ >= 11 ? 2 : 1) : 3);
      read = Resolve(st, x.shape(), values, st.use_roi ? &ctx.required_input(1) : nullptr, ctx.Describe());
    }
    const Geometry& g = st.resolved ? st.g : read;
    Tensor& y = st.resolved ? ctx.Output(0) : ctx.Output(0, x.dtype(), g.out_shape);
    // Resolve checked the shapes and the kernel's predicate the element type: ResizeTensor's own checks cannot
    // fail; should one, its message gets the node's description.
    try {
      ResizeTensor(x, y, g.scales, g.roi_start, g.roi_end, params_, ctx.threads(), std::string());
    } catch (const InvalidArgumentError& e) {
      throw InvalidArgumentError(ctx.Describe() + e.what());
    } catch (const UnsupportedError& e) {
      throw UnsupportedError(ctx.Describe() + e.what());
    }
  }

 private:
  // The per-axis scales of the coordinate transform, the roi (tf_crop_and_resize) and the output shape.
  struct Geometry {
    std::vector<double> scales, roi_start, roi_end;
    Shape out_shape;
  };
  struct State {
    std::vector<int64_t> axes;  // the axes the scales / sizes / roi entries refer to
    bool has_scales = false;    // scales given (else sizes)
    bool use_roi = false;       // tf_crop_and_resize with a non-empty roi
    bool resolved = false;      // g holds the geometry (constant scales / sizes / roi)
    Geometry g;
  };

  // The geometry from the scales or sizes in `values` and the roi (null when not used) over input shape x, whose
  // lengths and dtypes Prepare checked. Throws InvalidArgumentError naming `what` for values that make no size.
  Geometry Resolve(const State& st, const Shape& x, const Tensor& values, const Tensor* roi_t,
                   const std::string& what) const {
    const int64_t rank = static_cast<int64_t>(x.size());
    const std::vector<int64_t>& axes = st.axes;
    const size_t naxes = axes.size();
    Geometry g;
    g.scales.assign(static_cast<size_t>(rank), 1.0);
    g.out_shape = x;
    std::vector<double>& scales = g.scales;
    Shape& out_shape = g.out_shape;
    if (st.has_scales) {
      std::vector<double> s = ReadDoubles(values, what + ": input 'scales'");
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
      std::vector<int64_t> sz = ReadInt64s(values, what + ": input 'sizes'");
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
          scales[static_cast<size_t>(a)] = s;
          const size_t d = static_cast<size_t>(a);
          out_shape[d] = static_cast<int64_t>(s * static_cast<double>(x[d]) + 0.5);
        }
      }
    }
    g.roi_start.assign(static_cast<size_t>(rank), 0.0);
    g.roi_end.assign(static_cast<size_t>(rank), 1.0);
    if (roi_t) {
      std::vector<double> roi = ReadDoubles(*roi_t, what + ": input 'roi'");
      for (size_t i = 0; i < naxes; ++i) {
        g.roi_start[static_cast<size_t>(axes[i])] = roi[i];
        g.roi_end[static_cast<size_t>(axes[i])] = roi[naxes + i];
      }
    }
    // ResizeTensor's check, on the shapes.
    if (ShapeElementCount(out_shape) != 0 && ShapeElementCount(x) == 0) {
      throw InvalidArgumentError(what + ": cannot resize the empty input " + ShapeToString(x) + " to " +
                                 ShapeToString(out_shape));
    }
    return g;
  }

  int64_t opset_;
  ResizeParams params_;
  std::vector<int64_t> axes_;
  AspectPolicy policy_ = AspectPolicy::kStretch;
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
