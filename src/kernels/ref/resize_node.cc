#include "kernels/ref/resize_node.h"

#include <algorithm>
#include <cmath>
#include <limits>

#include "kernels/ref/common.h"

namespace ferry::ref {
namespace {

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

}  // namespace

ResizeAttributes ParseResizeAttributes(const ir::Node& node) {
  ResizeAttributes out;
  const int64_t opset = node.opset();
  out.opset = opset;
  ResizeParams& params = out.params;
  std::vector<int64_t>& axes = out.axes;
  const std::string mode = node.GetString("mode", "nearest");
  if (mode == "bilinear" || mode == "bicubic" || !ParseResizeMode(mode, &params.mode) ||
      (opset < 11 && params.mode == ResizeParams::Mode::kCubic)) {
    throw InvalidModelError(node.Describe() + ": unsupported mode '" + mode + "'");
  }
  if (opset < 11) {
    params.coord = ResizeParams::Coord::kAsymmetric;
    params.nearest = ResizeParams::NearestMode::kSimple;
  } else {
    const std::string coord = node.GetString("coordinate_transformation_mode", "half_pixel");
    if (!ParseResizeCoord(coord, &params.coord) ||
        (params.coord == ResizeParams::Coord::kTfHalfPixelForNN && opset >= 13) ||
        (params.coord == ResizeParams::Coord::kHalfPixelSymmetric && opset < 19)) {
      throw InvalidModelError(node.Describe() + ": unsupported coordinate_transformation_mode '" + coord + "'");
    }
    const std::string nearest = node.GetString("nearest_mode", "round_prefer_floor");
    if (!ParseNearestMode(nearest, &params.nearest)) {
      throw InvalidModelError(node.Describe() + ": unsupported nearest_mode '" + nearest + "'");
    }
    params.cubic_a = node.GetFloat("cubic_coeff_a", -0.75f);
    params.exclude_outside = node.GetInt("exclude_outside", 0) != 0;
    params.extrapolation_value = node.GetFloat("extrapolation_value", 0.0f);
  }
  if (opset >= 18) {
    params.antialias = node.GetInt("antialias", 0) != 0;
    axes = node.GetInts("axes");
    const std::string policy = node.GetString("keep_aspect_ratio_policy", "stretch");
    if (policy == "stretch") {
      out.policy = AspectPolicy::kStretch;
    } else if (policy == "not_larger") {
      out.policy = AspectPolicy::kNotLarger;
    } else if (policy == "not_smaller") {
      out.policy = AspectPolicy::kNotSmaller;
    } else {
      throw InvalidModelError(node.Describe() + ": unsupported keep_aspect_ratio_policy '" + policy + "'");
    }
  }
  return out;
}

ResizeInputs CheckResizeInputs(const PrepareContext& ctx, const ResizeAttributes& attrs) {
  const std::string what = ctx.Describe();
  const InputSpec& x = ctx.tensor_input(0);
  const int64_t rank = static_cast<int64_t>(x.shape.size());
  const int scales_i = attrs.opset >= 11 ? 2 : 1;
  // Input i when it is present and not empty.
  auto given = [&](int i) { return ctx.has_input(i) && ShapeElementCount(ctx.tensor_input(i).shape) > 0; };
  ResizeInputs st;
  st.has_scales = given(scales_i);
  const bool has_sizes = attrs.opset >= 11 && given(3);
  if (st.has_scales == has_sizes) {
    throw InvalidArgumentError(what + ": exactly one of 'scales' and 'sizes' must be given (non-empty)");
  }
  // The axes the scales/sizes/roi entries refer to.
  if (attrs.axes.empty()) {
    for (int64_t a = 0; a < rank; ++a) st.axes.push_back(a);
  } else {
    std::vector<bool> seen(static_cast<size_t>(rank), false);
    for (int64_t a : attrs.axes) {
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
  st.use_roi = attrs.params.coord == ResizeParams::Coord::kTfCropAndResize && attrs.opset >= 11 && given(1);
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
  st.values_index = values_i;
  return st;
}

ResizeGeometry ResolveResize(const ResizeAttributes& attrs, const ResizeInputs& inputs, const Shape& x,
                             const Tensor& values, const Tensor* roi_t, const std::string& what) {
  const int64_t rank = static_cast<int64_t>(x.size());
  const std::vector<int64_t>& axes = inputs.axes;
  const size_t naxes = axes.size();
  ResizeGeometry g;
  g.scales.assign(static_cast<size_t>(rank), 1.0);
  g.out_shape = x;
  std::vector<double>& scales = g.scales;
  Shape& out_shape = g.out_shape;
  if (inputs.has_scales) {
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
    if (attrs.policy != AspectPolicy::kStretch) {
      double s = attrs.policy == AspectPolicy::kNotLarger ? std::numeric_limits<double>::infinity() : 0.0;
      for (int64_t a : axes) {
        const double v = scales[static_cast<size_t>(a)];
        s = attrs.policy == AspectPolicy::kNotLarger ? std::min(s, v) : std::max(s, v);
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

}  // namespace ferry::ref
