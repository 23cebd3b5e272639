// DeformConv (2-D): each kernel tap samples the input at its regular position plus a learned per-output-position
// offset (bilinear interpolation, zero outside the image), optionally scaled by a mask; the sampled taps form a
// "deformable im2col" matrix that is multiplied by the weights per group, as in Conv.
#include <cmath>
#include <string>
#include <vector>

#include "core/parallel.h"
#include "kernels/kernel_def.h"
#include "kernels/ref/common.h"
#include "kernels/ref/conv_util.h"
#include "kernels/ref/gemm.h"
#include "kernels/registry.h"

namespace ferry::ref {
namespace {

// Bilinear sample of plane[h][w] (height ih, width iw) at real coordinates (y, x); taps outside read 0.
template <typename C>
C Bilinear(const C* plane, int64_t ih, int64_t iw, C y, C x) {
  if (!(y > C(-1)) || !(x > C(-1)) || !(y < C(ih)) || !(x < C(iw))) return C(0);  // also NaN
  const C fy = std::floor(y), fx = std::floor(x);
  const int64_t y0 = static_cast<int64_t>(fy), x0 = static_cast<int64_t>(fx);
  const C ly = y - fy, lx = x - fx;
  C v = 0;
  auto at = [&](int64_t r, int64_t c) { return r >= 0 && r < ih && c >= 0 && c < iw ? plane[r * iw + c] : C(0); };
  v += (C(1) - ly) * (C(1) - lx) * at(y0, x0);
  v += (C(1) - ly) * lx * at(y0, x0 + 1);
  v += ly * (C(1) - lx) * at(y0 + 1, x0);
  v += ly * lx * at(y0 + 1, x0 + 1);
  return v;
}

class DeformConv : public OpKernel {
 public:
  explicit DeformConv(const ir::Node& node)
      : attrs_(WindowAttrs::FromNode(node)),
        group_(node.GetInt("group", 1)),
        offset_group_(node.GetInt("offset_group", 1)) {
    if (offset_group_ < 1) throw InvalidModelError(node.Describe() + ": offset_group must be >= 1");
  }

  // The geometry and every check of W, offset, B and mask against it.
  void Prepare(PrepareContext& ctx) const override {
    const std::string what = ctx.Describe();
    const InputSpec& x = ctx.tensor_input(0);
    const InputSpec& w = ctx.tensor_input(1);
    const InputSpec& offset = ctx.tensor_input(2);
    const InputSpec& bias = ctx.input(3);
    const InputSpec& mask = ctx.input(4);
    if (ctx.has_input(3)) ctx.tensor_input(3);
    if (ctx.has_input(4)) ctx.tensor_input(4);
    if (x.shape.size() != 4) {
      throw UnsupportedError(what + ": only 2-D DeformConv (4-D X) is implemented, got X " + ShapeToString(x.shape));
    }
    const ConvShape& s = ctx.EmplaceState(ResolveConv(attrs_, group_, x.shape, w.shape, what));
    const WindowGeometry& g = s.g;
    const int64_t kk = g.kernel[0] * g.kernel[1], oh = g.out[0], ow = g.out[1];
    if (s.channels % offset_group_ != 0) {
      throw InvalidArgumentError(what + ": C = " + std::to_string(s.channels) + " is not divisible by offset_group " +
                                 std::to_string(offset_group_));
    }
    const Shape offset_shape{s.batch, offset_group_ * 2 * kk, oh, ow};
    if (offset.shape != offset_shape) {
      throw InvalidArgumentError(what + ": offset has shape " + ShapeToString(offset.shape) + ", expected " +
                                 ShapeToString(offset_shape));
    }
    const Shape mask_shape{s.batch, offset_group_ * kk, oh, ow};
    if (mask.is_tensor() && mask.shape != mask_shape) {
      throw InvalidArgumentError(what + ": mask has shape " + ShapeToString(mask.shape) + ", expected " +
                                 ShapeToString(mask_shape));
    }
    if (bias.is_tensor() && ShapeElementCount(bias.shape) != s.out_channels) {
      throw InvalidArgumentError(what + ": bias B has shape " + ShapeToString(bias.shape) + ", expected [" +
                                 std::to_string(s.out_channels) + "]");
    }
    for (int i = 1; i <= 4; ++i) {
      if (ctx.input(i).is_tensor() && ctx.input(i).dtype != x.dtype) {
        throw InvalidArgumentError(what + ": all inputs must share X's type (" + ctx.InputString(0) + ", " +
                                   ctx.InputString(i) + ")");
      }
    }
    ctx.SetOutput(0, x.dtype, s.y_shape);
  }

  void Compute(KernelContext& ctx) const override {
    const Tensor& x = ctx.required_input(0);
    const Tensor& w = ctx.required_input(1);
    const Tensor& offset = ctx.required_input(2);
    const Tensor* bias = ctx.input(3);
    const Tensor* mask = ctx.input(4);
    const ConvShape& s = ctx.state<ConvShape>();
    const WindowGeometry& g = s.g;
    const int64_t kh = g.kernel[0], kw = g.kernel[1], kk = kh * kw;
    const int64_t oh = g.out[0], ow = g.out[1], ih = g.in[0], iw = g.in[1];
    Tensor& y = ctx.Output(0);
    if (y.size() == 0) return;
    const int threads = ctx.threads();
    Dispatch(FloatTypes{}, x.dtype(), ctx, [&](auto tag) {
      using T = decltype(tag);
      using C = std::conditional_t<std::is_same_v<T, double>, double, float>;
      auto widen = [](const Tensor* t) {
        std::vector<C> v;
        if (t) v.assign(t->data<T>(), t->data<T>() + t->size());
        return v;
      };
      const std::vector<C> xs = widen(&x), ws = widen(&w), offs = widen(&offset), masks = widen(mask);
      std::vector<C> ys(static_cast<size_t>(y.size()), C(0));
      const int64_t cg = s.channels / s.group, mg = s.out_channels / s.group;
      const int64_t c_per_og = s.channels / offset_group_;
      const int64_t out_size = oh * ow, kdim = cg * kk;
      std::vector<C> col(static_cast<size_t>(kdim * out_size));
      for (int64_t n = 0; n < s.batch; ++n) {
        for (int64_t grp = 0; grp < s.group; ++grp) {
          ParallelFor(threads, kdim, 4, [&](int64_t begin, int64_t end) {
            for (int64_t row = begin; row < end; ++row) {
              const int64_t c = grp * cg + row / kk, tap = row % kk, ki = tap / kw, kj = tap % kw;
              const int64_t og = c / c_per_og;
              const C* plane = xs.data() + (n * s.channels + c) * ih * iw;
              const C* off_y = offs.data() + ((n * offset_group_ + og) * kk + tap) * 2 * out_size;
              const C* off_x = off_y + out_size;
              const C* m = mask ? masks.data() + ((n * offset_group_ + og) * kk + tap) * out_size : nullptr;
              C* dst = col.data() + row * out_size;
              for (int64_t r = 0; r < oh; ++r) {
                for (int64_t q = 0; q < ow; ++q) {
                  const int64_t o = r * ow + q;
                  const C py = C(r * g.strides[0] - g.pad_begin[0] + ki * g.dilations[0]) + off_y[o];
                  const C px = C(q * g.strides[1] - g.pad_begin[1] + kj * g.dilations[1]) + off_x[o];
                  C v = Bilinear(plane, ih, iw, py, px);
                  if (m) v *= m[o];
                  dst[o] = v;
                }
              }
            }
          });
          const C* wg = ws.data() + grp * mg * kdim;
          C* yg = ys.data() + (n * s.out_channels + grp * mg) * out_size;
          if constexpr (std::is_same_v<C, float>) {
            GemmF32(false, false, mg, out_size, kdim, 1.0f, wg, kdim, col.data(), out_size, 0.0f, yg, out_size,
                    threads);
          } else {
            GemmSimple(false, false, mg, out_size, kdim, wg, kdim, col.data(), out_size, false, yg, out_size);
          }
        }
        if (bias) {
          for (int64_t c = 0; c < s.out_channels; ++c) {
            C* plane = ys.data() + (n * s.out_channels + c) * out_size;
            const C b = static_cast<C>(bias->data<T>()[c]);
            for (int64_t i = 0; i < out_size; ++i) plane[i] += b;
          }
        }
      }
      T* out = y.data<T>();
      for (size_t i = 0; i < ys.size(); ++i) out[i] = T(ys[i]);
    });
  }

 private:
  WindowAttrs attrs_;
  int64_t group_, offset_group_;
};

}  // namespace

void RegisterDeformConvKernels(KernelRegistry& r) {
  r.Add({.op = "DeformConv", .since = 19, .types = {{"T", dtypes::Floats()}}, .create = MakeKernel<DeformConv>});
}

}  // namespace ferry::ref
