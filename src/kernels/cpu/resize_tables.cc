#include "kernels/cpu/resize_tables.h"

#include <algorithm>
#include <cmath>
#include <cstring>

#include "core/parallel.h"

namespace ferry::cpu {
namespace {

using Coord = ref::ResizeParams::Coord;
using Mode = ref::ResizeParams::Mode;
using Nearest = ref::ResizeParams::NearestMode;

// Output coordinate x of an axis (in -> out, scale) mapped to the input coordinate, as the ref engine does.
double SourceCoord(double x, int64_t in, int64_t out, double scale, double roi0, double roi1, Coord coord,
                   bool* outside) {
  const double in_d = static_cast<double>(in);
  const double out_w = scale * in_d;
  switch (coord) {
    case Coord::kAlignCorners:
      return out_w == 1 ? 0.0 : x * (in_d - 1) / (out_w - 1);
    case Coord::kAsymmetric:
      return x / scale;
    case Coord::kTfHalfPixelForNN:
      return (x + 0.5) / scale;
    case Coord::kTfCropAndResize: {
      double v = out_w == 1 ? (roi1 - roi0) * (in_d - 1) / 2 : x * (roi1 - roi0) * (in_d - 1) / (out_w - 1);
      v += roi0 * (in_d - 1);
      if (v < 0 || v > in_d - 1) *outside = true;
      return v;
    }
    case Coord::kPytorchHalfPixel:
      return out > 1 ? (x + 0.5) / scale - 0.5 : 0.0;
    case Coord::kHalfPixel:
      return (x + 0.5) / scale - 0.5;
    case Coord::kHalfPixelSymmetric: {
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

ResizeAxis BuildAxis(int64_t in, int64_t out, double scale, double roi0, double roi1, const ref::ResizeParams& p) {
  ResizeAxis t;
  const std::vector<int64_t> rel = p.mode == Mode::kNearest  ? std::vector<int64_t>{0}
                                   : p.mode == Mode::kLinear ? std::vector<int64_t>{0, 1}
                                                             : std::vector<int64_t>{-1, 0, 1, 2};
  t.taps = static_cast<int64_t>(rel.size());
  t.outside.assign(static_cast<size_t>(out), 0);
  std::vector<int64_t> index(static_cast<size_t>(out * t.taps));
  std::vector<double> weight(static_cast<size_t>(out * t.taps));
  double w[4] = {1, 0, 0, 0};
  for (int64_t i = 0; i < out; ++i) {
    bool outside = false;
    double xo = SourceCoord(static_cast<double>(i), in, out, scale, roi0, roi1, p.coord, &outside);
    if (std::isnan(xo)) {
      xo = 0;
      outside = true;
    }
    xo = std::clamp(xo, -static_cast<double>(in) - 8, static_cast<double>(in) + 8);
    if (outside) {
      t.outside[static_cast<size_t>(i)] = 1;
      t.any_outside = true;
    }
    const double fl = std::floor(xo);
    const bool integral = fl == xo;
    // As ref: the ratio stays in (0, 1]; an integral coordinate sits at ratio 1 of the previous pixel.
    const int64_t base = static_cast<int64_t>(integral ? fl - 1 : fl);
    const double ratio = integral ? 1.0 : xo - fl;
    int64_t nearest = 0;
    if (p.mode == Mode::kNearest) {
      bool up = true;
      if (!integral) {
        switch (p.nearest) {
          case Nearest::kRoundPreferFloor: up = ratio > 0.5; break;
          case Nearest::kRoundPreferCeil: up = ratio >= 0.5; break;
          case Nearest::kFloor: up = false; break;
          case Nearest::kCeil: up = true; break;
          case Nearest::kSimple: up = scale < 1; break;
        }
      }
      nearest = up ? base + 1 : base;
      w[0] = 1.0;
    } else if (p.mode == Mode::kLinear) {
      w[0] = 1 - ratio;
      w[1] = ratio;
    } else {
      w[0] = CubicKernel(ratio + 1, p.cubic_a);
      w[1] = CubicKernel(ratio, p.cubic_a);
      w[2] = CubicKernel(1 - ratio, p.cubic_a);
      w[3] = CubicKernel(2 - ratio, p.cubic_a);
    }
    if (p.exclude_outside) {
      double sum = 0;
      for (size_t j = 0; j < rel.size(); ++j) {
        const int64_t idx = p.mode == Mode::kNearest ? nearest : base + rel[j];
        if (idx < 0 || idx >= in) w[j] = 0;
        sum += w[j];
      }
      if (sum != 0) {
        for (size_t j = 0; j < rel.size(); ++j) w[j] /= sum;
      }
    }
    for (size_t j = 0; j < rel.size(); ++j) {
      const int64_t idx = p.mode == Mode::kNearest ? nearest : base + rel[j];
      const size_t k = static_cast<size_t>(i * t.taps) + j;
      index[k] = std::clamp<int64_t>(idx, 0, in - 1);
      weight[k] = w[j];
    }
  }
  // As ref: collapse to one tap when every position takes exactly one input with weight 1.
  if (t.taps > 1) {
    std::vector<int64_t> single(static_cast<size_t>(out));
    bool collapsible = true;
    for (int64_t i = 0; i < out && collapsible; ++i) {
      int ones = 0;
      for (int64_t j = 0; j < t.taps; ++j) {
        const double v = weight[static_cast<size_t>(i * t.taps + j)];
        if (v == 1.0) {
          ++ones;
          single[static_cast<size_t>(i)] = index[static_cast<size_t>(i * t.taps + j)];
        } else if (v != 0.0) {
          collapsible = false;
        }
      }
      if (ones != 1) collapsible = false;
    }
    if (collapsible) {
      t.taps = 1;
      index = std::move(single);
      weight.assign(static_cast<size_t>(out), 1.0);
    }
  }
  t.index = std::move(index);
  t.weight.assign(weight.begin(), weight.end());
  t.identity = t.taps == 1 && out == in && !t.any_outside;
  for (int64_t i = 0; i < out && t.identity; ++i) t.identity = t.index[static_cast<size_t>(i)] == i;
  return t;
}

// Resizes `rows` rows of length `in_w` along the innermost axis into rows of length out_w.
void ResizeRows(const ResizeAxis& ax, const float* x, float* h, int64_t rows, int64_t in_w, int64_t out_w,
                int threads) {
  const int64_t* ix = ax.index.data();
  const float* wt = ax.weight.data();
  const int64_t taps = ax.taps;
  ParallelFor(threads, rows, std::max<int64_t>(1, 16384 / std::max<int64_t>(1, out_w * taps)),
              [&](int64_t begin, int64_t end) {
                for (int64_t r = begin; r < end; ++r) {
                  const float* src = x + r * in_w;
                  float* dst = h + r * out_w;
                  if (taps == 1) {
                    for (int64_t i = 0; i < out_w; ++i) dst[i] = src[ix[i]];
                  } else if (taps == 2) {
                    for (int64_t i = 0; i < out_w; ++i) {
                      dst[i] = src[ix[2 * i]] * wt[2 * i] + src[ix[2 * i + 1]] * wt[2 * i + 1];
                    }
                  } else {
                    for (int64_t i = 0; i < out_w; ++i) {
                      const int64_t* k = ix + 4 * i;
                      const float* w = wt + 4 * i;
                      dst[i] = src[k[0]] * w[0] + src[k[1]] * w[1] + src[k[2]] * w[2] + src[k[3]] * w[3];
                    }
                  }
                }
              });
}

}  // namespace

ResizePlan BuildResizePlan(const Shape& in, const Shape& out, const std::vector<double>& scales,
                           const std::vector<double>& roi_start, const std::vector<double>& roi_end,
                           const ref::ResizeParams& params) {
  ResizePlan plan;
  plan.in_shape = in;
  plan.out_shape = out;
  plan.extrapolation = static_cast<float>(params.extrapolation_value);
  for (size_t a = 0; a < in.size(); ++a) {
    plan.axes.push_back(in[a] == 0 || out[a] == 0 ? ResizeAxis{}
                                                  : BuildAxis(in[a], out[a], scales[a], roi_start[a], roi_end[a],
                                                              params));
  }
  return plan;
}

void RunResizePlan(const ResizePlan& plan, const float* x, float* y, int threads) {
  const int64_t rank = static_cast<int64_t>(plan.in_shape.size());
  const int64_t out_size = ShapeElementCount(plan.out_shape);
  if (out_size == 0) return;
  if (rank == 0) {
    y[0] = x[0];
    return;
  }
  const size_t last = static_cast<size_t>(rank - 1);
  const int64_t in_w = plan.in_shape[last], out_w = plan.out_shape[last];
  const ResizeAxis& inner = plan.axes[last];
  int64_t in_rows = 1, out_rows = 1;
  bool outer_identity = true;
  for (size_t a = 0; a < last; ++a) {
    in_rows *= plan.in_shape[a];
    out_rows *= plan.out_shape[a];
    outer_identity = outer_identity && plan.axes[a].identity;
  }
  const float extrapolation = plan.extrapolation;
  // Pass 1: the innermost axis, straight into y when the outer axes are unchanged.
  std::vector<float> scratch;
  const float* h = x;
  if (!inner.identity) {
    float* dst = y;
    if (!outer_identity) {
      scratch.resize(static_cast<size_t>(in_rows * out_w));
      dst = scratch.data();
    }
    ResizeRows(inner, x, dst, in_rows, in_w, out_w, threads);
    h = dst;
  }
  if (outer_identity) {
    if (inner.identity) std::memcpy(y, x, static_cast<size_t>(out_size) * sizeof(float));
    if (inner.any_outside) {
      for (int64_t r = 0; r < out_rows; ++r) {
        for (int64_t i = 0; i < out_w; ++i) {
          if (inner.outside[static_cast<size_t>(i)]) y[r * out_w + i] = extrapolation;
        }
      }
    }
    return;
  }
  // Pass 2: the outer axes. Row strides of the scratch (input outer shape), in rows.
  std::vector<int64_t> row_stride(last, 1);
  for (size_t a = last; a-- > 1;) row_stride[a - 1] = row_stride[a] * plan.in_shape[a];
  std::vector<size_t> multi;
  int64_t combos = 1;
  for (size_t a = 0; a < last; ++a) {
    if (plan.axes[a].taps > 1) {
      multi.push_back(a);
      combos *= plan.axes[a].taps;
    }
  }
  ParallelFor(threads, out_rows, std::max<int64_t>(1, 16384 / std::max<int64_t>(1, out_w * combos)),
              [&](int64_t begin, int64_t end) {
                std::vector<int64_t> c(last, 0), j(multi.size(), 0);
                for (int64_t rem = begin, a = static_cast<int64_t>(last); a-- > 0;) {
                  c[static_cast<size_t>(a)] = rem % plan.out_shape[static_cast<size_t>(a)];
                  rem /= plan.out_shape[static_cast<size_t>(a)];
                }
                for (int64_t r = begin; r < end; ++r) {
                  float* dst = y + r * out_w;
                  bool outside = false;
                  int64_t base = 0;
                  for (size_t a = 0; a < last; ++a) {
                    const ResizeAxis& ax = plan.axes[a];
                    outside = outside || (ax.any_outside && ax.outside[static_cast<size_t>(c[a])]);
                    if (ax.taps == 1) base += ax.index[static_cast<size_t>(c[a])] * row_stride[a];
                  }
                  if (outside) {
                    std::fill(dst, dst + out_w, extrapolation);
                  } else if (multi.empty()) {
                    std::memcpy(dst, h + base * out_w, static_cast<size_t>(out_w) * sizeof(float));
                  } else {
                    std::fill(j.begin(), j.end(), 0);
                    for (int64_t k = 0; k < combos; ++k) {
                      int64_t row = base;
                      float w = 1;
                      for (size_t m = 0; m < multi.size(); ++m) {
                        const ResizeAxis& ax = plan.axes[multi[m]];
                        const size_t t = static_cast<size_t>(c[multi[m]] * ax.taps + j[m]);
                        row += ax.index[t] * row_stride[multi[m]];
                        w *= ax.weight[t];
                      }
                      const float* src = h + row * out_w;
                      if (k == 0) {
                        for (int64_t i = 0; i < out_w; ++i) dst[i] = w * src[i];
                      } else {
                        for (int64_t i = 0; i < out_w; ++i) dst[i] += w * src[i];
                      }
                      for (size_t m = multi.size(); m-- > 0;) {
                        if (++j[m] < plan.axes[multi[m]].taps) break;
                        j[m] = 0;
                      }
                    }
                  }
                  if (!outside && inner.any_outside) {
                    for (int64_t i = 0; i < out_w; ++i) {
                      if (inner.outside[static_cast<size_t>(i)]) dst[i] = extrapolation;
                    }
                  }
                  for (size_t a = last; a-- > 0;) {
                    if (++c[a] < plan.out_shape[a]) break;
                    c[a] = 0;
                  }
                }
              });
}

}  // namespace ferry::cpu
