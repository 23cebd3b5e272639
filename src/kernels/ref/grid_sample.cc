// GridSample (opsets 16, 20, 22): samples X [N, C, D1..Dr] at the normalized coordinates of grid
// [N, O1..Or, r] (last dim ordered x, y, (z): innermost spatial dim first) into Y [N, C, O1..Or].
//   16: 4-D only, modes bilinear / nearest / bicubic.   20: any rank, modes linear / nearest / cubic.
// padding_mode zeros / border / reflection, align_corners. Follows the ONNX reference
// (onnx/reference/ops/op_grid_sample.py): coordinates outside the border range are clamped (border) or
// reflected (reflection) before interpolation, then each tap is fetched with the padding rule; nearest rounds
// half to even in every rank (the ONNX volumetric test data expects that, not std::round).
// X may be any type: complex interpolates its real and imaginary parts; bool and string only take samples
// (mode nearest; zeros padding gives false / ""), the predicate refuses the interpolating modes for them.
// com.microsoft::GridSample-1 (ONNX Runtime's contrib op from before ONNX had it) is GridSample-16 (4-D, modes
// bilinear / nearest / bicubic; node.opset() is its domain's, 1) as ONNX Runtime computes it: border and
// reflection pad the taps only, not the coordinate first (the same samples for nearest and linear; for bicubic near
// the border the taps past it repeat or mirror the edge pixels at the unclamped weights). This kernel serves it, X
// and Grid of one float type (its schema's T1 for both; Y, T2, has X's type).
#include <algorithm>
#include <array>
#include <cmath>
#include <limits>
#include <string>
#include <vector>

#include "core/parallel.h"
#include "kernels/kernel_def.h"
#include "kernels/ref/common.h"
#include "kernels/ref/complex_types.h"
#include "kernels/ref/grid_sample.h"
#include "kernels/registry.h"

namespace ferry::ref {
namespace {

// Reflects x into [lo, hi] by the nearer border, repeatedly.
double Reflect(double x, double lo, double hi) {
  const double range = hi - lo;
  if (range <= 0) return lo;
  if (x >= lo && x <= hi) return x;
  const bool below = x < lo;
  const double dx = below ? lo - x : x - hi;
  const double n = std::floor(dx / range);
  const double r = dx - n * range;
  const bool even = std::fmod(n, 2.0) == 0;
  const double v = below == even ? lo + r : hi - r;
  return std::clamp(v, lo, hi);
}

void CubicCoeffs(double t, double c[4]) {
  constexpr double a = -0.75;
  t = std::abs(t);
  c[0] = ((a * (t + 1) - 5 * a) * (t + 1) + 8 * a) * (t + 1) - 4 * a;
  c[1] = ((a + 2) * t - (a + 3)) * t * t + 1;
  c[2] = ((a + 2) * (1 - t) - (a + 3)) * (1 - t) * (1 - t) + 1;
  c[3] = ((a * (2 - t) - 5 * a) * (2 - t) + 8 * a) * (2 - t) - 4 * a;
}

template <typename T>
T FromGsDouble(double v) {
  if constexpr (std::is_integral_v<T>) {
    const double r = std::nearbyint(v);  // snap rounding noise before truncating (see resize_util.cc)
    if (std::abs(v - r) <= 1e-9 * std::max(1.0, std::abs(v))) v = r;
    if (std::isnan(v)) return T(0);
    if (v <= static_cast<double>(std::numeric_limits<T>::lowest())) return std::numeric_limits<T>::lowest();
    if (v >= static_cast<double>(std::numeric_limits<T>::max())) return std::numeric_limits<T>::max();
    return static_cast<T>(v);
  } else {
    return T(static_cast<Acc<T>>(v));
  }
}

std::string GridSamplePredicate(const ir::Node& node) {
  const ir::Value* x = node.input(0);
  const DataType t = x && x->type().is_tensor() ? x->type().elem_type : DataType::kUndefined;
  const std::string mode = GridSampleModeName(node);
  if (!IsInterpolatable(t) && mode != "nearest") {
    return "GridSample: mode=" + mode + " on tensor(" + std::string(DataTypeName(t)) +
           ") is not defined; only nearest";
  }
  return "";
}

class GridSample : public OpKernel {
 public:
  explicit GridSample(const ir::Node& node) : attrs_(ParseGridSampleAttributes(node)) {}

  void Prepare(PrepareContext& ctx) const override {
    GridSamplePlan p = CheckGridSampleInputs(ctx, attrs_);
    Shape out_shape = p.out_shape;
    ctx.EmplaceState(std::move(p));
    ctx.SetOutput(0, ctx.tensor_input(0).dtype, std::move(out_shape));
  }

  void Compute(KernelContext& ctx) const override {
    const Tensor& x = ctx.required_input(0);
    const Tensor& grid = ctx.required_input(1);
    const GridSamplePlan& plan = ctx.state<GridSamplePlan>();
    Tensor& y = ctx.Output(0);
    if (y.size() == 0) return;
    const int64_t r = plan.r, n_batch = plan.n_batch, channels = plan.channels;
    const int64_t out_spatial = plan.out_spatial, in_spatial = plan.in_spatial;
    const std::vector<int64_t>& dims = plan.dims;
    const std::vector<int64_t>& strides = plan.strides;
    const int taps = attrs_.taps();

    Dispatch(FloatTypes{}, grid.dtype(), ctx, [&](auto gtag) {
      using G = decltype(gtag);
      const G* gd = grid.data<G>();
      Dispatch(AllTypesWithComplex{}, x.dtype(), ctx, [&](auto tag) {
        using T = decltype(tag);
        // The weighted sum's type: complex<double> for complex, unused (samples only) for bool and string.
        using Sum = std::conditional_t<kIsComplex<T>, std::complex<double>, double>;
        constexpr bool kSampleOnly = std::is_same_v<T, bool> || std::is_same_v<T, std::string>;
        const T* xd = x.data<T>();
        T* yd = y.data<T>();
        ParallelFor(ctx.threads(), n_batch * out_spatial, std::max<int64_t>(1, 1024 / std::max<int64_t>(channels, 1)),
                    [&](int64_t begin, int64_t end) {
                      // Per spatial dim: tap offsets into the image (-1 = zero padding) and weights.
                      std::vector<std::array<int64_t, 4>> tap_off(static_cast<size_t>(r));
                      std::vector<std::array<double, 4>> tap_w(static_cast<size_t>(r));
                      std::vector<int> j(static_cast<size_t>(r));
                      int64_t combos = 1;
                      for (int64_t i = 0; i < r; ++i) combos *= taps;
                      for (int64_t p = begin; p < end; ++p) {
                        const int64_t n = p / out_spatial, o = p % out_spatial;
                        const G* g = gd + p * r;
                        for (int64_t i = 0; i < r; ++i) {
                          GridSampleTaps(attrs_, static_cast<double>(static_cast<Acc<G>>(g[r - 1 - i])),
                                         dims[static_cast<size_t>(i)], strides[static_cast<size_t>(i)],
                                         tap_off[static_cast<size_t>(i)].data(), tap_w[static_cast<size_t>(i)].data());
                        }
                        for (int64_t c = 0; c < channels; ++c) {
                          const T* img = xd + (n * channels + c) * in_spatial;
                          T& out = yd[(n * channels + c) * out_spatial + o];
                          if constexpr (kSampleOnly) {  // nearest: one tap of weight 1; zeros padding leaves T{}
                            int64_t off = 0;
                            for (int64_t i = 0; i < r && off >= 0; ++i) {
                              const int64_t t = tap_off[static_cast<size_t>(i)][0];
                              off = t < 0 ? -1 : off + t;
                            }
                            if (off >= 0) out = img[off];
                            continue;
                          }
                          Sum acc = 0;
                          std::fill(j.begin(), j.end(), 0);
                          for (int64_t k = 0; k < combos; ++k) {
                            int64_t off = 0;
                            double w = 1;
                            for (size_t i = 0; i < j.size(); ++i) {
                              const int64_t t = tap_off[i][static_cast<size_t>(j[i])];
                              if (t < 0) {
                                off = -1;
                                break;
                              }
                              off += t;
                              w *= tap_w[i][static_cast<size_t>(j[i])];
                            }
                            if constexpr (kIsComplex<T>) {
                              if (off >= 0) acc += w * Sum(img[off]);
                            } else if constexpr (!kSampleOnly) {
                              if (off >= 0) acc += w * static_cast<double>(static_cast<Acc<T>>(img[off]));
                            }
                            for (size_t i = j.size(); i-- > 0;) {
                              if (++j[i] < taps) break;
                              j[i] = 0;
                            }
                          }
                          if constexpr (kIsComplex<T>) {
                            out = T(acc);
                          } else if constexpr (!kSampleOnly) {
                            out = FromGsDouble<T>(acc);
                          }
                        }
                      }
                    });
      });
    });
  }

 private:
  GridSampleAttributes attrs_;
};

}  // namespace

std::string GridSampleModeName(const ir::Node& node) {
  return node.GetString("mode", node.opset() >= 20 ? "linear" : "bilinear");
}

GridSampleAttributes ParseGridSampleAttributes(const ir::Node& node) {
  GridSampleAttributes a;
  a.opset = node.opset();
  a.align_corners = node.GetInt("align_corners", 0) != 0;
  a.pad_coordinate = node.domain() != "com.microsoft";
  const std::string mode = GridSampleModeName(node);
  if (mode == "linear" || mode == "bilinear") {
    a.mode = GridSampleMode::kLinear;
  } else if (mode == "nearest") {
    a.mode = GridSampleMode::kNearest;
  } else if (mode == "cubic" || mode == "bicubic") {
    a.mode = GridSampleMode::kCubic;
  } else {
    throw InvalidModelError(node.Describe() + ": unsupported mode '" + mode + "'");
  }
  const std::string padding = node.GetString("padding_mode", "zeros");
  if (padding == "zeros") {
    a.padding = GridSamplePadding::kZeros;
  } else if (padding == "border") {
    a.padding = GridSamplePadding::kBorder;
  } else if (padding == "reflection") {
    a.padding = GridSamplePadding::kReflection;
  } else {
    throw InvalidModelError(node.Describe() + ": unsupported padding_mode '" + padding + "'");
  }
  return a;
}

GridSamplePlan CheckGridSampleInputs(const PrepareContext& ctx, const GridSampleAttributes& attrs) {
  const InputSpec& x = ctx.tensor_input(0);
  const InputSpec& grid = ctx.tensor_input(1);
  const Shape& xs = x.shape;
  const Shape& gs = grid.shape;
  const int64_t r = static_cast<int64_t>(xs.size()) - 2;
  const bool only_4d = attrs.opset < 20;
  if (r < 1 || (only_4d && r != 2)) {
    throw InvalidArgumentError(ctx.Describe() + ": input 'X' must be " + (only_4d ? "4-D" : "at least 3-D") +
                               ", got " + ShapeToString(xs) + " (" + ctx.InputString(0) + ")");
  }
  if (static_cast<int64_t>(gs.size()) != r + 2 || gs[0] != xs[0] || gs[static_cast<size_t>(r + 1)] != r) {
    throw InvalidArgumentError(ctx.Describe() + ": input 'grid' must have shape [" + std::to_string(xs[0]) +
                               ", spatial..., " + std::to_string(r) + "] for X " + ShapeToString(xs) + ", got " +
                               ShapeToString(gs) + " (" + ctx.InputString(1) + ")");
  }
  GridSamplePlan p;
  p.r = r;
  p.n_batch = xs[0];
  p.channels = xs[1];
  p.out_shape = {p.n_batch, p.channels};
  p.dims.resize(static_cast<size_t>(r));
  for (int64_t i = 0; i < r; ++i) {
    const auto u = static_cast<size_t>(i);
    p.out_shape.push_back(gs[u + 1]);
    p.out_spatial *= gs[u + 1];
    p.dims[u] = xs[u + 2];
    p.in_spatial *= xs[u + 2];
  }
  if (ShapeElementCount(p.out_shape) != 0) {  // an empty Y samples nothing
    if (p.in_spatial == 0) {
      throw InvalidArgumentError(ctx.Describe() + ": cannot sample from the empty input " + ShapeToString(xs) +
                                 " (" + ctx.InputString(0) + ")");
    }
    if (!IsInterpolatable(x.dtype) && attrs.mode != GridSampleMode::kNearest) {
      throw UnsupportedError(ctx.Describe() + ": mode " +
                             (attrs.mode == GridSampleMode::kLinear ? "linear" : "cubic") + " on tensor(" +
                             std::string(DataTypeName(x.dtype)) + ") is not defined; only nearest");
    }
  }
  p.strides = Strides(p.dims);
  return p;
}

void GridSampleTaps(const GridSampleAttributes& attrs, double v, int64_t d, int64_t stride, int64_t* off,
                    double* w) {
  const int taps = attrs.taps();
  for (int k = 0; k < taps; ++k) {
    off[k] = -1;
    w[k] = 0;
  }
  const bool align = attrs.align_corners;
  const GridSamplePadding padding = attrs.padding;
  const double dd = static_cast<double>(d);
  double x = align ? (v + 1) / 2 * (dd - 1) : ((v + 1) * dd - 1) / 2;
  x = static_cast<float>(x);  // the reference keeps denormalized coordinates in float32
  if (!std::isfinite(x)) return;
  if (attrs.mode == GridSampleMode::kNearest) x = std::nearbyint(x);  // half to even (the volumetric data agrees)
  const double lo = align ? 0.0 : -0.5, hi = align ? dd - 1 : dd - 0.5;
  if (attrs.pad_coordinate && (x < lo || x > hi)) {
    if (padding == GridSamplePadding::kBorder) x = std::clamp(x, 0.0, dd - 1);
    if (padding == GridSamplePadding::kReflection) x = Reflect(x, lo, hi);
  }
  if (!attrs.pad_coordinate && padding != GridSamplePadding::kZeros && (x < lo - 8 || x > hi + 8)) {
    // Taps-only padding: x is brought near the image without changing any tap's pixel or weight.
    if (padding == GridSamplePadding::kBorder || hi <= lo) {
      x = std::clamp(x, lo - 8, hi + 8);  // every tap an edge pixel (or the one pixel) either way
    } else if (padding == GridSamplePadding::kReflection) {
      const double period = 2 * (hi - lo);  // an integer: the shift moves every tap by whole periods
      x -= period * std::floor((x - lo) / period);
    }
  }
  if (padding == GridSamplePadding::kZeros && (x < -8 || x > dd + 8)) return;  // far outside: every tap is 0
  auto fetch = [&](int64_t i) -> int64_t {
    if (padding == GridSamplePadding::kZeros) return i >= 0 && i < d ? i * stride : -1;
    if (padding == GridSamplePadding::kBorder) return std::clamp<int64_t>(i, 0, d - 1) * stride;
    return std::clamp<int64_t>(static_cast<int64_t>(Reflect(static_cast<double>(i), lo, hi)), 0, d - 1) * stride;
  };
  if (attrs.mode == GridSampleMode::kNearest) {
    off[0] = fetch(static_cast<int64_t>(x));  // truncation, as the reference's astype(int32)
    w[0] = 1;
    return;
  }
  const double fl = std::floor(x);
  const int64_t x0 = static_cast<int64_t>(fl);
  const double t = x - fl;
  if (attrs.mode == GridSampleMode::kLinear) {
    off[0] = fetch(x0);
    off[1] = fetch(x0 + 1);
    w[0] = 1 - t;
    w[1] = t;
    return;
  }
  CubicCoeffs(t, w);
  for (int k = 0; k < 4; ++k) off[k] = fetch(x0 - 1 + k);
}

void RegisterGridSampleKernels(KernelRegistry& r) {
  const auto t1 = dtypes::Concat(dtypes::Numeric(), {DataType::kBool, DataType::kString, DataType::kComplex64,
                                                      DataType::kComplex128});
  const std::vector<DataType> t2 = {DataType::kFloat16, DataType::kFloat, DataType::kDouble};
  const char* constraints = "bool and string X only with mode=nearest";
  r.Add({.op = "GridSample",
         .since = 16,
         .until = 19,
         .types = {{"T1", t1}, {"T2", t2}},
         .create = MakeKernel<GridSample>,
         .predicate = GridSamplePredicate,
         .constraints = constraints});
  // From 20 the grid (T2) may be bfloat16 too.
  r.Add({.op = "GridSample",
         .since = 20,
         .until = 21,
         .types = {{"T1", t1}, {"T2", dtypes::Concat(t2, {DataType::kBFloat16})}},
         .create = MakeKernel<GridSample>,
         .predicate = GridSamplePredicate,
         .constraints = constraints});
  r.Add({.op = "GridSample",
         .since = 22,
         .types = {{"T1", t1}, {"T2", dtypes::Concat(t2, {DataType::kBFloat16})}},
         .create = MakeKernel<GridSample>,
         .predicate = GridSamplePredicate,
         .constraints = constraints});
  r.Add({.op = "GridSample",
         .domain = "com.microsoft",
         .since = 1,
         .types = {{"T1", t2}, {"T2", t2}},
         .create = MakeKernel<GridSample>});
}

}  // namespace ferry::ref
