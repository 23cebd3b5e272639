// ConvTranspose: the adjoint of Conv. Per (image, group): col[M/g·K × in] = W_gᵀ · X_g (one GEMM), then col2im
// scatters col into the output planes. Output extent and pads: semantics::ResolveConvTranspose (the ONNX rules
// for output_shape, output_padding and auto_pad, shared with shape inference and cpu). float16/bfloat16 compute
// through float; double uses the plain GEMM loop. com.microsoft::ConvTransposeWithDynamicPads is the same kernel
// with the pads an input (ONNX Runtime's ConvTranspose with dynamic padding).
#include <algorithm>
#include <optional>
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
  // com.microsoft::ConvTransposeWithDynamicPads is the same op with its pads read from input 2 (int64, begin then
  // end values per spatial dim, ONNX's order; absent: the attributes' auto_pad rules, no explicit pads) and the
  // bias at input 3.
  explicit ConvTranspose(const ir::Node& node)
      : attrs_(semantics::ConvTransposeAttrs::FromNode(node)),
        dynamic_pads_(node.op_type() == "ConvTransposeWithDynamicPads") {}

  // Every check of X, W and B; the output extent and the forward-Conv geometry Compute scatters through. With
  // dynamic pads not known before the run, Compute resolves them.
  void Prepare(PrepareContext& ctx) const override {
    const InputSpec& x = ctx.tensor_input(0);
    const InputSpec& w = ctx.tensor_input(1);
    const int b = bias_input();
    const InputSpec& bias = ctx.input(b);
    if (ctx.has_input(b)) ctx.tensor_input(b);
    const std::string what = ctx.Describe();
    if (w.dtype != x.dtype) {
      throw InvalidArgumentError(what + ": X and W have different element types (" + ctx.InputString(0) + ", " +
                                 ctx.InputString(1) + ")");
    }
    if (bias.is_tensor() && bias.dtype != x.dtype) {
      throw InvalidArgumentError(what + ": bias B must have X's element type (" + ctx.InputString(b) + ")");
    }
    if (dynamic_pads_ && ctx.has_input(2) && !ctx.constant(2)) return ctx.SetOutputDynamic(0);
    const std::optional<Shape> bias_shape = bias.is_tensor() ? std::optional<Shape>(bias.shape) : std::nullopt;
    const Plan& p = ctx.EmplaceState(MakePlan(PadsOf(ctx.constant(2), what), x.shape, w.shape, bias_shape, what,
                                              bias.is_tensor() ? " (" + ctx.InputString(b) + ")" : ""));
    ctx.SetOutput(0, x.dtype, p.s.y_shape);
  }

  void Compute(KernelContext& ctx) const override {
    const Tensor& x = ctx.required_input(0);
    const Tensor& w = ctx.required_input(1);
    const Tensor* bias = ctx.input(bias_input());
    const Plan* prepared = ctx.state_if_any<Plan>();
    Plan read;  // dynamic pads read from this run's data: their errors are the data's, naming the node
    if (!prepared) {
      const std::string what = ctx.Describe();
      read = MakePlan(PadsOf(ctx.input(2), what), x.shape(), w.shape(),
                      bias ? std::optional<Shape>(bias->shape()) : std::nullopt, what, "");
    }
    const Plan& p = prepared ? *prepared : read;
    const semantics::ConvTransposeShape& s = p.s;
    const WindowGeometry& g = p.g;
    const int64_t batch = s.batch, channels = s.channels, group = s.group;
    const int64_t mg = p.mg, out_channels = s.out_channels, cg = channels / group;
    Tensor& y = prepared ? ctx.Output(0) : ctx.Output(0, x.dtype(), s.y_shape);
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

  int bias_input() const { return dynamic_pads_ ? 3 : 2; }

  // ConvTransposeWithDynamicPads' pads input (null: absent or ConvTranspose), or nullopt.
  std::optional<std::vector<int64_t>> PadsOf(const Tensor* pads, const std::string& what) const {
    if (!dynamic_pads_ || !pads) return std::nullopt;
    return ReadInt64s(*pads, what + ": input 'Pads'");
  }

  // The output extent (with `pads` in place of the attribute when given) and the forward-Conv geometry; checks B
  // (`bias_desc` ends the message: the input as Prepare describes it).
  Plan MakePlan(const std::optional<std::vector<int64_t>>& pads, const Shape& x, const Shape& w,
                const std::optional<Shape>& bias, const std::string& what, const std::string& bias_desc) const {
    Plan p;
    if (pads) {
      semantics::ConvTransposeAttrs attrs = attrs_;
      attrs.window.pads = *pads;
      p.s = semantics::ResolveConvTranspose(attrs, x, w, what);
    } else {
      p.s = semantics::ResolveConvTranspose(attrs_, x, w, what);
    }
    const semantics::ConvTransposeShape& s = p.s;
    if (bias && (bias->size() != 1 || (*bias)[0] != s.out_channels)) {
      throw InvalidArgumentError(what + ": bias B has shape " + ShapeToString(*bias) + ", expected [" +
                                 std::to_string(s.out_channels) + "]" + bias_desc);
    }
    // The geometry of the forward Conv that maps the output (its input) onto X (its output).
    p.g.in = s.out;
    p.g.out = s.in;
    p.g.kernel = s.kernel;
    p.g.strides = s.strides;
    p.g.dilations = s.dilations;
    p.g.pad_begin = s.pad_begin;
    p.g.pad_end = s.pad_end;
    p.mg = w[1];
    return p;
  }

  semantics::ConvTransposeAttrs attrs_;
  bool dynamic_pads_ = false;
};

}  // namespace

void RegisterConvTransposeKernels(KernelRegistry& r) {
  r.Add({.op = "ConvTranspose", .since = 1, .types = {{"T", dtypes::Floats()}}, .create = MakeKernel<ConvTranspose>});
  r.Add({.op = "ConvTransposeWithDynamicPads",
         .domain = "com.microsoft",
         .since = 1,
         .types = {{"T", {DataType::kFloat, DataType::kDouble, DataType::kFloat16}}},
         .create = MakeKernel<ConvTranspose>,
         .host_inputs = {2}});
}

}  // namespace ferry::ref
