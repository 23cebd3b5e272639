// ConvTranspose: the adjoint of Conv. Per (image, group): col[M/g·K × in] = W_gᵀ · X_g (one GEMM), then col2im
// scatters col into the output planes. Output extent and pads: semantics::ResolveConvTranspose (the ONNX rules
// for output_shape, output_padding and auto_pad, shared with shape inference and cpu). float16/bfloat16 compute
// through float; double uses the plain GEMM loop.
#include <algorithm>
#include <string>
#include <vector>

#include "kernels/kernel_def.h"
#include "kernels/ref/common.h"
#include "kernels/ref/conv_util.h"
#include "kernels/ref/gemm.h"
#include "kernels/registry.h"

namespace ferry::ref {
namespace {

class ConvTranspose : public OpKernel {
 public:
  explicit ConvTranspose(const ir::Node& node) : attrs_(semantics::ConvTransposeAttrs::FromNode(node)) {}

  // Every check of X, W and B; the output extent and the forward-Conv geometry Compute scatters through.
  void Prepare(PrepareContext& ctx) const override {
    const InputSpec& x = ctx.tensor_input(0);
    const InputSpec& w = ctx.tensor_input(1);
    const InputSpec& bias = ctx.input(2);
    if (ctx.has_input(2)) ctx.tensor_input(2);
    const std::string what = ctx.Describe();
    if (w.dtype != x.dtype) {
      throw InvalidArgumentError(what + ": X and W have different element types (" + ctx.InputString(0) + ", " +
                                 ctx.InputString(1) + ")");
    }
    Plan p;
    p.s = semantics::ResolveConvTranspose(attrs_, x.shape, w.shape, what);
    const semantics::ConvTransposeShape& s = p.s;
    if (bias.is_tensor() && (bias.shape.size() != 1 || bias.shape[0] != s.out_channels || bias.dtype != x.dtype)) {
      throw InvalidArgumentError(what + ": bias B has shape " + ShapeToString(bias.shape) + ", expected [" +
                                 std::to_string(s.out_channels) + "] (" + ctx.InputString(2) + ")");
    }
    // The geometry of the forward Conv that maps the output (its input) onto X (its output).
    p.g.in = s.out;
    p.g.out = s.in;
    p.g.kernel = s.kernel;
    p.g.strides = s.strides;
    p.g.dilations = s.dilations;
    p.g.pad_begin = s.pad_begin;
    p.g.pad_end = s.pad_end;
    p.mg = w.shape[1];
    ctx.SetOutput(0, x.dtype, s.y_shape);
    ctx.EmplaceState(std::move(p));
  }

  void Compute(KernelContext& ctx) const override {
    const Tensor& x = ctx.required_input(0);
    const Tensor& w = ctx.required_input(1);
    const Tensor* bias = ctx.input(2);
    const Plan& p = ctx.state<Plan>();
    const semantics::ConvTransposeShape& s = p.s;
    const WindowGeometry& g = p.g;
    const int64_t batch = s.batch, channels = s.channels, group = s.group;
    const int64_t mg = p.mg, out_channels = s.out_channels, cg = channels / group;
    Tensor& y = ctx.Output(0);
    if (y.size() == 0) return;
    const int64_t ksize = g.kernel_size(), in_size = g.out_size(), out_size = g.in_size();
    const int64_t kdim = mg * ksize;  // rows of col per group
    const int threads = ctx.threads();
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
      std::vector<C> col(static_cast<size_t>(kdim * in_size));
      for (int64_t n = 0; n < batch; ++n) {
        for (int64_t grp = 0; grp < group; ++grp) {
          const C* xg = xp + (n * channels + grp * cg) * in_size;
          const C* wg = wp + grp * cg * kdim;
          C* yg = yp + (n * out_channels + grp * mg) * out_size;
          // col = W_gᵀ · X_g, W_g stored [cg × kdim]
          if constexpr (std::is_same_v<C, float>) {
            GemmF32(true, false, kdim, in_size, cg, 1.0f, wg, kdim, xg, in_size, 0.0f, col.data(), in_size, threads);
          } else {
            GemmSimple(true, false, kdim, in_size, cg, wg, kdim, xg, in_size, false, col.data(), in_size);
          }
          Col2ImAdd(col.data(), mg, g, yg, threads);
        }
        if (bias) {
          const T* bp = bias->data<T>();
          for (int64_t m = 0; m < out_channels; ++m) {
            C* plane = yp + (n * out_channels + m) * out_size;
            const C bv = static_cast<C>(bp[m]);
            for (int64_t i = 0; i < out_size; ++i) plane[i] += bv;
          }
        }
      }
      if constexpr (!std::is_same_v<T, C>) FromFloatVector(ys, y.data<T>());
    });
  }

 private:
  struct Plan {
    semantics::ConvTransposeShape s;
    WindowGeometry g;
    int64_t mg = 0;  // output channels per group: W's dim 1
  };

  semantics::ConvTransposeAttrs attrs_;
};

}  // namespace

void RegisterConvTransposeKernels(KernelRegistry& r) {
  r.Add({.op = "ConvTranspose", .since = 1, .types = {{"T", dtypes::Floats()}}, .create = MakeKernel<ConvTranspose>});
}

}  // namespace ferry::ref
