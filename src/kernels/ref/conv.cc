// Conv: N-D grouped convolution. Each (image, group) is one GEMM, W_g[M/g × C/g·K] · col[C/g·K × out], where col
// is the im2col matrix of the group's input planes (or the input itself for a 1×1 stride-1 unpadded kernel).
// Depthwise convolutions (one input channel per group) in 1-D/2-D run a direct loop instead.
// float16/bfloat16 compute through float; double uses the plain GEMM loop.
#include <algorithm>
#include <vector>

#include "core/parallel.h"
#include "kernels/kernel_def.h"
#include "kernels/ref/common.h"
#include "kernels/ref/conv_util.h"
#include "kernels/ref/gemm.h"
#include "kernels/registry.h"

namespace ferry::ref {
namespace {

struct ConvDims {
  int64_t batch, channels, out_channels, group;
};

// y[m] += Σ_t w[m][t] · x[c(m)] (shifted by tap t), for a depthwise conv of rank 1 or 2 (rank 1 is treated as a
// height-1 image). Output planes are split over the threads.
template <typename T>
void DepthwiseConv(const T* x, const T* w, const ConvDims& d, const WindowGeometry& g, T* y, int threads) {
  const bool one_d = g.rank() == 1;
  const int64_t ih = one_d ? 1 : g.in[0], iw = g.in[g.rank() - 1];
  const int64_t oh = one_d ? 1 : g.out[0], ow = g.out[g.rank() - 1];
  const int64_t kh = one_d ? 1 : g.kernel[0], kw = g.kernel[g.rank() - 1];
  const int64_t sh = one_d ? 1 : g.strides[0], sw = g.strides[g.rank() - 1];
  const int64_t dh = one_d ? 1 : g.dilations[0], dw = g.dilations[g.rank() - 1];
  const int64_t ph = one_d ? 0 : g.pad_begin[0], pw = g.pad_begin[g.rank() - 1];
  const int64_t per_group = d.out_channels / d.group;
  // Per kernel column: the range of output columns whose tap lands inside the input row.
  std::vector<int64_t> lo(static_cast<size_t>(kw)), hi(static_cast<size_t>(kw));
  for (int64_t k = 0; k < kw; ++k) {
    ValidOutputRange(iw, ow, sw, k * dw - pw, &lo[static_cast<size_t>(k)], &hi[static_cast<size_t>(k)]);
  }
  const int64_t planes = d.batch * d.out_channels;
  ParallelFor(threads, planes, 1, [&](int64_t begin, int64_t end) {
    for (int64_t p = begin; p < end; ++p) {
      const int64_t n = p / d.out_channels, m = p % d.out_channels;
      const int64_t c = m / per_group;
      const T* xp = x + (n * d.channels + c) * ih * iw;
      const T* wm = w + m * kh * kw;
      T* yp = y + p * oh * ow;
      for (int64_t r = 0; r < oh; ++r) {
        T* yrow = yp + r * ow;
        for (int64_t i = 0; i < kh; ++i) {
          const int64_t xr = r * sh - ph + i * dh;
          if (xr < 0 || xr >= ih) continue;
          const T* xrow = xp + xr * iw;
          for (int64_t k = 0; k < kw; ++k) {
            const T wv = wm[i * kw + k];
            const int64_t base = k * dw - pw;
            const int64_t l = lo[static_cast<size_t>(k)], h = hi[static_cast<size_t>(k)];
            if (l >= h) continue;
            if (sw == 1) {
              const T* s = xrow + l + base;  // in range: column l + base >= 0
              T* d = yrow + l;
              for (int64_t o = 0; o < h - l; ++o) d[o] += wv * s[o];
            } else {
              for (int64_t o = l; o < h; ++o) yrow[o] += wv * xrow[o * sw + base];
            }
          }
        }
      }
    }
  });
}

// The convolution for float (GemmF32) and double (GemmSimple). y must hold the bias (or zeros) on entry.
template <typename T>
void ConvCore(const T* x, const T* w, const ConvDims& d, const WindowGeometry& g, T* y, int threads) {
  const int64_t cg = d.channels / d.group, mg = d.out_channels / d.group;
  const int64_t ksize = g.kernel_size();
  const int64_t kdim = cg * ksize;
  const int64_t in_size = g.in_size(), out_size = g.out_size();
  if (cg == 1 && d.group > 1 && g.rank() <= 2) {
    DepthwiseConv(x, w, d, g, y, threads);
    return;
  }
  bool pointwise = true;
  for (size_t i = 0; i < g.rank(); ++i) {
    pointwise = pointwise && g.kernel[i] == 1 && g.strides[i] == 1 && g.pad_begin[i] == 0 && g.pad_end[i] == 0;
  }
  std::vector<T> col;
  if (!pointwise) col.resize(static_cast<size_t>(kdim * out_size));
  for (int64_t n = 0; n < d.batch; ++n) {
    for (int64_t grp = 0; grp < d.group; ++grp) {
      const T* xg = x + (n * d.channels + grp * cg) * in_size;
      const T* wg = w + grp * mg * kdim;
      T* yg = y + (n * d.out_channels + grp * mg) * out_size;
      const T* b = xg;
      if (!pointwise) {
        Im2Col(xg, cg, g, col.data(), threads);
        b = col.data();
      }
      if constexpr (std::is_same_v<T, float>) {
        GemmF32(false, false, mg, out_size, kdim, 1.0f, wg, kdim, b, out_size, 1.0f, yg, out_size, threads);
      } else {
        GemmSimple(false, false, mg, out_size, kdim, wg, kdim, b, out_size, true, yg, out_size);
      }
    }
  }
}

class Conv : public OpKernel {
 public:
  explicit Conv(const ir::Node& node) : attrs_(WindowAttrs::FromNode(node)), group_(node.GetInt("group", 1)) {
    if (group_ < 1) throw InvalidModelError(node.Describe() + ": group must be >= 1, got " + std::to_string(group_));
  }

  // The geometry for these shapes, every check of X, W and B, and GemmF32's packing panels (double runs the
  // plain loop: none).
  void Prepare(PrepareContext& ctx) const override {
    const InputSpec& x = ctx.tensor_input(0);
    const InputSpec& w = ctx.tensor_input(1);
    const InputSpec& bias = ctx.input(2);
    if (w.dtype != x.dtype) {
      throw InvalidArgumentError(ctx.Describe() + ": X and W have different element types (" + ctx.InputString(0) +
                                 ", " + ctx.InputString(1) + ")");
    }
    const ConvShape& cs = ctx.EmplaceState(ResolveConv(attrs_, group_, x.shape, w.shape, ctx.Describe()));
    if (bias.is_tensor() && (bias.shape.size() != 1 || bias.shape[0] != cs.out_channels || bias.dtype != x.dtype)) {
      throw InvalidArgumentError(ctx.Describe() + ": bias " + ctx.InputString(2) + ", expected [" +
                                 std::to_string(cs.out_channels) + "] of X's type");
    }
    if (GemmsAsFloat(x.dtype)) AddConvF32Workspace(cs, ctx.threads(), ctx.workspace());
    ctx.SetOutput(0, x.dtype, cs.y_shape);
  }

  void Compute(KernelContext& ctx) const override {
    const Tensor& x = ctx.required_input(0);
    const Tensor& w = ctx.required_input(1);
    const Tensor* bias = ctx.input(2);
    const ConvShape& cs = ctx.state<ConvShape>();
    const ConvDims d{cs.batch, cs.channels, cs.out_channels, cs.group};
    const WindowGeometry& g = cs.g;
    Tensor& y = ctx.Output(0);
    if (y.size() == 0) return;
    const int64_t out_size = g.out_size();
    Dispatch(FloatTypes{}, x.dtype(), ctx, [&](auto tag) {
      using T = decltype(tag);
      using C = std::conditional_t<std::is_same_v<T, double>, double, float>;
      std::vector<C> xs, ws, ys;
      const C* xp;
      const C* wp;
      C* yp;
      if constexpr (std::is_same_v<T, C>) {
        xp = x.data<T>();
        wp = w.data<T>();
        yp = y.data<T>();
      } else {
        xs = ToFloatVector(x.data<T>(), x.size());
        ws = ToFloatVector(w.data<T>(), w.size());
        ys.resize(static_cast<size_t>(y.size()));
        xp = xs.data();
        wp = ws.data();
        yp = ys.data();
      }
      if (bias) {
        const T* bp = bias->data<T>();
        for (int64_t n = 0; n < d.batch; ++n)
          for (int64_t m = 0; m < d.out_channels; ++m)
            std::fill_n(yp + (n * d.out_channels + m) * out_size, out_size, static_cast<C>(bp[m]));
      }
      ConvCore<C>(xp, wp, d, g, yp, ctx.threads());
      if constexpr (!std::is_same_v<T, C>) FromFloatVector(ys, y.data<T>());
    });
  }

 private:
  WindowAttrs attrs_;
  int64_t group_;
};

}  // namespace

void ConvF32(const float* x, const float* w, const ConvShape& s, float* y, int threads) {
  ConvCore<float>(x, w, ConvDims{s.batch, s.channels, s.out_channels, s.group}, s.g, y, threads);
}

void AddConvF32Workspace(const ConvShape& s, int threads, Workspace& ws) {
  const int64_t cg = s.channels / s.group, mg = s.out_channels / s.group;
  if (ShapeElementCount(s.y_shape) == 0 || (cg == 1 && s.group > 1 && s.g.rank() <= 2)) return;  // see ConvCore
  AddGemmF32Workspace(mg, s.g.out_size(), cg * s.g.kernel_size(), threads, ws);
}

void RegisterConvKernels(KernelRegistry& r) {
  r.Add({.op = "Conv", .since = 1, .types = {{"T", dtypes::Floats()}}, .create = MakeKernel<Conv>});
}

}  // namespace ferry::ref
