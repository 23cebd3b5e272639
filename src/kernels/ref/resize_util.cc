#include "kernels/ref/resize_util.h"

#include <algorithm>
#include <cmath>
#include <limits>

#include "core/parallel.h"
#include "kernels/ref/common.h"
#include "kernels/ref/complex_types.h"

namespace ferry::ref {

bool ParseResizeMode(const std::string& s, ResizeParams::Mode* out) {
  using M = ResizeParams::Mode;
  if (s == "nearest") {
    *out = M::kNearest;
  } else if (s == "linear" || s == "bilinear" || s == "trilinear") {
    *out = M::kLinear;
  } else if (s == "cubic" || s == "bicubic") {
    *out = M::kCubic;
  } else {
    return false;
  }
  return true;
}

bool ParseResizeCoord(const std::string& s, ResizeParams::Coord* out) {
  using C = ResizeParams::Coord;
  static const std::pair<const char*, C> kNames[] = {
      {"half_pixel", C::kHalfPixel},
      {"half_pixel_symmetric", C::kHalfPixelSymmetric},
      {"pytorch_half_pixel", C::kPytorchHalfPixel},
      {"align_corners", C::kAlignCorners},
      {"asymmetric", C::kAsymmetric},
      {"tf_half_pixel_for_nn", C::kTfHalfPixelForNN},
      {"tf_crop_and_resize", C::kTfCropAndResize},
  };
  for (const auto& [name, c] : kNames) {
    if (s == name) {
      *out = c;
      return true;
    }
  }
  return false;
}

bool ParseNearestMode(const std::string& s, ResizeParams::NearestMode* out) {
  using N = ResizeParams::NearestMode;
  if (s == "round_prefer_floor") {
    *out = N::kRoundPreferFloor;
  } else if (s == "round_prefer_ceil") {
    *out = N::kRoundPreferCeil;
  } else if (s == "floor") {
    *out = N::kFloor;
  } else if (s == "ceil") {
    *out = N::kCeil;
  } else {
    return false;
  }
  return true;
}

std::string ResizeModeReason(const std::string& op, const std::string& mode, DataType t) {
  if (IsInterpolatable(t) || mode == "nearest") return "";
  return op + ": mode=" + mode + " on tensor(" + std::string(DataTypeName(t)) + ") is not defined; only nearest";
}

namespace {

// The taps of one axis: for output coordinate i, taps [i*taps, (i+1)*taps) of offset/weight.
struct AxisTaps {
  int64_t taps = 1;
  std::vector<int64_t> offset;  // input index (clamped) times the axis stride
  std::vector<double> weight;
  std::vector<uint8_t> outside;  // tf_crop_and_resize: the sample lies outside the input
  bool any_outside = false;
};

// Maps output coordinate x of an axis (in -> out, scale) to the input coordinate.
double SourceCoord(double x, int64_t in, int64_t out, double scale, double roi0, double roi1, ResizeParams::Coord coord,
                   bool* outside) {
  using C = ResizeParams::Coord;
  const double in_d = static_cast<double>(in);
  const double out_w = scale * in_d;  // the unrounded output length, as the ONNX reference uses it
  switch (coord) {
    case C::kAlignCorners:
      return out_w == 1 ? 0.0 : x * (in_d - 1) / (out_w - 1);
    case C::kAsymmetric:
      return x / scale;
    case C::kTfHalfPixelForNN:
      return (x + 0.5) / scale;
    case C::kTfCropAndResize: {
      double v = out_w == 1 ? (roi1 - roi0) * (in_d - 1) / 2 : x * (roi1 - roi0) * (in_d - 1) / (out_w - 1);
      v += roi0 * (in_d - 1);
      if (v < 0 || v > in_d - 1) *outside = true;
      return v;
    }
    case C::kPytorchHalfPixel:
      return out > 1 ? (x + 0.5) / scale - 0.5 : 0.0;
    case C::kHalfPixel:
      return (x + 0.5) / scale - 0.5;
    case C::kHalfPixelSymmetric: {
      const double adjustment = static_cast<double>(out) / out_w;
      const double offset = in_d / 2 * (1 - adjustment);
      return offset + (x + 0.5) / scale - 0.5;
    }
  }
  return 0.0;
}

double CubicKernel(double x, double a) {
  x = std::abs(x);
  if (x <= 1) return ((a + 2) * x - (a + 3)) * x * x + 1;
  if (x < 2) return ((a * x - 5 * a) * x + 8 * a) * x - 4 * a;
  return 0.0;
}

AxisTaps ComputeAxisTaps(int64_t in, int64_t out, double scale, double roi0, double roi1, int64_t stride,
                         const ResizeParams& p) {
  using M = ResizeParams::Mode;
  using N = ResizeParams::NearestMode;
  AxisTaps t;
  t.outside.assign(static_cast<size_t>(out), 0);
  std::vector<int64_t> rel;  // tap offsets relative to `base`
  const double s = std::min(scale, 1.0);
  if (p.mode == M::kNearest) {
    rel = {0};
  } else if (!p.antialias) {
    rel = p.mode == M::kLinear ? std::vector<int64_t>{0, 1} : std::vector<int64_t>{-1, 0, 1, 2};
  } else {
    const int64_t start = static_cast<int64_t>(std::floor((p.mode == M::kLinear ? -1.0 : -2.0) / s)) + 1;
    for (int64_t i = start; i < 2 - start; ++i) rel.push_back(i);
  }
  t.taps = static_cast<int64_t>(rel.size());
  t.offset.resize(static_cast<size_t>(out * t.taps));
  t.weight.resize(static_cast<size_t>(out * t.taps));
  std::vector<double> w(rel.size());
  for (int64_t i = 0; i < out; ++i) {
    bool outside = false;
    double xo = SourceCoord(static_cast<double>(i), in, out, scale, roi0, roi1, p.coord, &outside);
    if (std::isnan(xo)) {
      xo = 0;
      outside = true;
    }
    // Far outside the input every tap lands on the edge anyway; clamping keeps the index maths finite.
    xo = std::clamp(xo, -static_cast<double>(in) - 8, static_cast<double>(in) + 8);
    if (outside) {
      t.outside[static_cast<size_t>(i)] = 1;
      t.any_outside = true;
    }
    const double fl = std::floor(xo);
    const bool integral = fl == xo;
    // The reference keeps the ratio in (0, 1]: an integral coordinate sits at ratio 1 of the previous pixel.
    const int64_t base = static_cast<int64_t>(integral ? fl - 1 : fl);
    const double ratio = integral ? 1.0 : xo - fl;
    int64_t nearest = 0;
    if (p.mode == M::kNearest) {
      bool up = true;  // pick base + 1 (for an integral coordinate that is the coordinate itself)
      if (!integral) {
        switch (p.nearest) {
          case N::kRoundPreferFloor:
            up = ratio > 0.5;
            break;
          case N::kRoundPreferCeil:
            up = ratio >= 0.5;
            break;
          case N::kFloor:
            up = false;
            break;
          case N::kCeil:
            up = true;
            break;
          case N::kSimple:
            up = scale < 1;
            break;
        }
      }
      nearest = up ? base + 1 : base;
      w[0] = 1.0;
    } else if (!p.antialias) {
      if (p.mode == M::kLinear) {
        w[0] = 1 - ratio;
        w[1] = ratio;
      } else {
        const double a = p.cubic_a;
        w[0] = CubicKernel(ratio + 1, a);
        w[1] = CubicKernel(ratio, a);
        w[2] = CubicKernel(1 - ratio, a);
        w[3] = CubicKernel(2 - ratio, a);
      }
    } else {
      double sum = 0;
      for (size_t j = 0; j < rel.size(); ++j) {
        const double arg = (static_cast<double>(rel[j]) - ratio) * s;
        w[j] = p.mode == M::kLinear ? std::clamp(1 - std::abs(arg), 0.0, 1.0) : CubicKernel(arg, p.cubic_a);
        sum += w[j];
      }
      if (sum != 0) {
        for (double& v : w) v /= sum;
      }
    }
    if (p.exclude_outside) {
      double sum = 0;
      for (size_t j = 0; j < rel.size(); ++j) {
        const int64_t idx = p.mode == M::kNearest ? nearest : base + rel[j];
        if (idx < 0 || idx >= in) w[j] = 0;
        sum += w[j];
      }
      if (sum != 0) {
        for (double& v : w) v /= sum;
      }
    }
    for (size_t j = 0; j < rel.size(); ++j) {
      const int64_t idx = p.mode == M::kNearest ? nearest : base + rel[j];
      const size_t k = static_cast<size_t>(i * t.taps) + j;
      t.offset[k] = std::clamp<int64_t>(idx, 0, in - 1) * stride;
      t.weight[k] = w[j];
    }
  }
  // Collapse to one tap when every position takes exactly one input with weight 1 (identity axes, nearest).
  if (t.taps > 1) {
    std::vector<int64_t> single(static_cast<size_t>(out));
    bool collapsible = true;
    for (int64_t i = 0; i < out && collapsible; ++i) {
      int ones = 0;
      for (int64_t j = 0; j < t.taps; ++j) {
        const double v = t.weight[static_cast<size_t>(i * t.taps + j)];
        if (v == 1.0) {
          ++ones;
          single[static_cast<size_t>(i)] = t.offset[static_cast<size_t>(i * t.taps + j)];
        } else if (v != 0.0) {
          collapsible = false;
        }
      }
      if (ones != 1) collapsible = false;
    }
    if (collapsible) {
      t.taps = 1;
      t.offset = std::move(single);
      t.weight.assign(static_cast<size_t>(out), 1.0);
    }
  }
  return t;
}

// `v` is the weighted sum: double, or std::complex<double> for the complex types.
template <typename T, typename V>
T FromResizeDouble(V v) {
  if constexpr (std::is_same_v<T, bool>) {
    return v != 0;
  } else if constexpr (std::is_integral_v<T>) {
    // Truncate toward zero like the ONNX reference's astype, but first snap values within rounding noise of an
    // integer (a weighted sum of 255s can come out as 254.99999999999997).
    const double r = std::nearbyint(v);
    if (std::abs(v - r) <= 1e-9 * std::max(1.0, std::abs(v))) v = r;
    if (std::isnan(v)) return T(0);
    if (v <= static_cast<double>(std::numeric_limits<T>::lowest())) return std::numeric_limits<T>::lowest();
    if (v >= static_cast<double>(std::numeric_limits<T>::max())) return std::numeric_limits<T>::max();
    return static_cast<T>(v);
  } else if constexpr (kIsHalf<T>) {
    return T(static_cast<float>(v));
  } else if constexpr (kIsComplex<T>) {
    return T(v);
  } else {
    return static_cast<T>(v);
  }
}

}  // namespace

void ResizeTensor(const Tensor& x, Tensor& y, const std::vector<double>& scales, const std::vector<double>& roi_start,
                  const std::vector<double>& roi_end, const ResizeParams& params, int threads,
                  const std::string& what) {
  const int64_t rank = x.rank();
  const Shape& out_shape = y.shape();
  if (y.size() == 0) return;
  if (x.size() == 0) {
    throw InvalidArgumentError(what + ": cannot resize the empty input " + ShapeToString(x.shape()) + " to " +
                               ShapeToString(out_shape));
  }
  const std::vector<int64_t> strides = Strides(x.shape());
  std::vector<AxisTaps> axes;
  std::vector<size_t> multi;  // axes with more than one tap
  bool any_outside = false;
  for (int64_t a = 0; a < rank; ++a) {
    const size_t i = static_cast<size_t>(a);
    axes.push_back(ComputeAxisTaps(x.dim(a), out_shape[i], scales[i], roi_start[i], roi_end[i], strides[i], params));
    if (axes.back().taps > 1) multi.push_back(i);
    any_outside = any_outside || axes.back().any_outside;
  }
  const bool interpolate = !multi.empty();
  int64_t combos = 1;
  for (size_t m : multi) combos *= axes[m].taps;

  auto run = [&](auto tag) {
    using T = decltype(tag);
    constexpr bool kNumeric = !std::is_same_v<T, std::string> && !std::is_same_v<T, bool>;
    // The weighted sum's type: complex numbers interpolate their real and imaginary parts with the same weights.
    using Sum = std::conditional_t<kIsComplex<T>, std::complex<double>, double>;
    if (interpolate && !kNumeric) {
      throw UnsupportedError(what + ": linear/cubic interpolation of tensor(" + std::string(DataTypeName(x.dtype())) +
                             ") is not defined; only nearest");
    }
    const T* in = x.data<T>();
    T* out = y.data<T>();
    T extrapolation{};
    if constexpr (kNumeric) extrapolation = FromResizeDouble<T>(Sum(params.extrapolation_value));
    ParallelFor(threads, y.size(), std::max<int64_t>(1, 16384 / combos), [&](int64_t begin, int64_t end) {
      std::vector<int64_t> c(static_cast<size_t>(rank), 0);
      for (int64_t rem = begin, a = rank; a-- > 0;) {
        c[static_cast<size_t>(a)] = rem % out_shape[static_cast<size_t>(a)];
        rem /= out_shape[static_cast<size_t>(a)];
      }
      std::vector<int64_t> j(multi.size(), 0);
      for (int64_t o = begin; o < end; ++o) {
        bool outside = false;
        if (any_outside) {
          for (size_t a = 0; a < axes.size(); ++a) outside = outside || axes[a].outside[static_cast<size_t>(c[a])];
        }
        if (outside) {
          out[o] = extrapolation;
        } else {
          int64_t base = 0;
          for (size_t a = 0; a < axes.size(); ++a) {
            if (axes[a].taps == 1) base += axes[a].offset[static_cast<size_t>(c[a])];
          }
          if (!interpolate) {
            out[o] = in[base];
          } else if constexpr (kNumeric) {
            Sum acc = 0;
            std::fill(j.begin(), j.end(), 0);
            for (int64_t k = 0; k < combos; ++k) {
              int64_t off = base;
              double w = 1;
              for (size_t m = 0; m < multi.size(); ++m) {
                const AxisTaps& t = axes[multi[m]];
                const size_t idx = static_cast<size_t>(c[multi[m]] * t.taps + j[m]);
                off += t.offset[idx];
                w *= t.weight[idx];
              }
              if constexpr (kIsComplex<T>) {
                acc += w * Sum(in[off]);
              } else {
                acc += w * static_cast<double>(static_cast<Acc<T>>(in[off]));
              }
              for (size_t m = multi.size(); m-- > 0;) {  // next tap combination
                if (++j[m] < axes[multi[m]].taps) break;
                j[m] = 0;
              }
            }
            out[o] = FromResizeDouble<T>(acc);
          }
        }
        for (int64_t a = rank; a-- > 0;) {  // next output coordinate
          if (++c[static_cast<size_t>(a)] < out_shape[static_cast<size_t>(a)]) break;
          c[static_cast<size_t>(a)] = 0;
        }
      }
    });
  };
  Dispatch(AllTypesWithComplex{}, x.dtype(), what, run);
}

}  // namespace ferry::ref
