// ConvTranspose: the adjoint of Conv. Per (image, group): col[M/g·K × in] = W_gᵀ · X_g (one GEMM), then col2im
// scatters col into the output planes. Output extent and pads follow the ONNX rules for output_shape,
// output_padding and auto_pad. float16/bfloat16 compute through float; double uses the plain GEMM loop.
#include <algorithm>
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
  explicit ConvTranspose(const ir::Node& node)
      : attrs_(WindowAttrs::FromNode(node)),
        group_(node.GetInt("group", 1)),
        output_padding_(node.GetInts("output_padding")),
        output_shape_(node.GetInts("output_shape")) {
    if (group_ < 1) throw InvalidModelError(node.Describe() + ": group must be >= 1, got " + std::to_string(group_));
    for (int64_t v : output_padding_) {
      if (v < 0) throw InvalidModelError(node.Describe() + ": output_padding must be >= 0");
    }
  }

  void Compute(KernelContext& ctx) const override {
    const Tensor& x = ctx.required_input(0);
    const Tensor& w = ctx.required_input(1);
    const Tensor* bias = ctx.input(2);
    const std::string what = ctx.Describe();
    if (x.rank() < 3 || w.rank() != x.rank()) {
      throw InvalidArgumentError(what + ": X " + ShapeToString(x.shape()) + " and W " + ShapeToString(w.shape()) +
                                 " must have the same rank >= 3");
    }
    if (w.dtype() != x.dtype()) throw InvalidArgumentError(what + ": X and W have different element types");
    const int64_t batch = x.dim(0), channels = x.dim(1);
    if (w.dim(0) != channels || channels % group_ != 0) {
      throw InvalidArgumentError(what + ": W " + ShapeToString(w.shape()) + " does not match X " +
                                 ShapeToString(x.shape()) + " with group = " + std::to_string(group_) +
                                 " (expected W[0] = C, divisible by group)");
    }
    const int64_t mg = w.dim(1), out_channels = mg * group_, cg = channels / group_;
    if (bias && (bias->rank() != 1 || bias->dim(0) != out_channels || bias->dtype() != x.dtype())) {
      throw InvalidArgumentError(what + ": bias B has shape " + ShapeToString(bias->shape()) + ", expected [" +
                                 std::to_string(out_channels) + "]");
    }
    const size_t rank = static_cast<size_t>(x.rank() - 2);
    std::vector<int64_t> kernel(w.shape().begin() + 2, w.shape().end());
    if (!attrs_.kernel_shape.empty() && attrs_.kernel_shape != kernel) {
      throw InvalidArgumentError(what + ": kernel_shape " + IntsToString(attrs_.kernel_shape) +
                                 " does not match the weight's spatial shape " + IntsToString(kernel));
    }
    // The geometry of the forward Conv that maps the output (its input) onto X (its output).
    WindowGeometry g;
    g.out.assign(x.shape().begin() + 2, x.shape().end());
    g.kernel = kernel;
    g.strides = SpatialAttr(attrs_.strides, rank, 1, "strides", what);
    g.dilations = SpatialAttr(attrs_.dilations, rank, 1, "dilations", what);
    std::vector<int64_t> out_pad(rank, 0);
    if (!output_padding_.empty()) {
      if (output_padding_.size() != rank && output_padding_.size() != 2 * rank) {
        throw InvalidArgumentError(what + ": output_padding " + IntsToString(output_padding_) + " has " +
                                   std::to_string(output_padding_.size()) + " values, expected " +
                                   std::to_string(rank));
      }
      std::copy_n(output_padding_.begin(), rank, out_pad.begin());
    }
    std::vector<int64_t> out_shape;
    if (!output_shape_.empty()) {
      if (output_shape_.size() == rank) {
        out_shape = output_shape_;
      } else if (output_shape_.size() == rank + 2) {
        out_shape.assign(output_shape_.begin() + 2, output_shape_.end());
      } else {
        throw InvalidArgumentError(what + ": output_shape " + IntsToString(output_shape_) + " must have " +
                                   std::to_string(rank) + " values");
      }
    }
    g.pad_begin.assign(rank, 0);
    g.pad_end.assign(rank, 0);
    g.in.assign(rank, 0);
    const bool same = attrs_.auto_pad == AutoPad::kSameUpper || attrs_.auto_pad == AutoPad::kSameLower;
    if (attrs_.auto_pad == AutoPad::kNotSet && !attrs_.pads.empty() && out_shape.empty()) {
      if (attrs_.pads.size() != 2 * rank) {
        throw InvalidArgumentError(what + ": attribute pads = " + IntsToString(attrs_.pads) + " has " +
                                   std::to_string(attrs_.pads.size()) + " values, expected " +
                                   std::to_string(2 * rank));
      }
      std::copy_n(attrs_.pads.begin(), rank, g.pad_begin.begin());
      std::copy_n(attrs_.pads.begin() + static_cast<std::ptrdiff_t>(rank), rank, g.pad_end.begin());
    }
    for (size_t d = 0; d < rank; ++d) {
      const int64_t eff = (kernel[d] - 1) * g.dilations[d] + 1;
      const int64_t natural = g.strides[d] * (g.out[d] - 1) + out_pad[d] + eff;
      if (!out_shape.empty() || same) {
        // Pads come from the requested output extent: total = natural - out, split by auto_pad.
        const int64_t out = !out_shape.empty() ? out_shape[d] : g.out[d] * g.strides[d];
        const int64_t total = std::max<int64_t>(0, natural - out);
        const int64_t small = total / 2, large = total - total / 2;
        g.pad_begin[d] = attrs_.auto_pad == AutoPad::kSameUpper ? small : large;
        g.pad_end[d] = attrs_.auto_pad == AutoPad::kSameUpper ? large : small;
        g.in[d] = out;
      } else {
        g.in[d] = natural - g.pad_begin[d] - g.pad_end[d];
      }
      if (g.in[d] <= 0) {
        throw InvalidArgumentError(what + ": the output spatial extent along dim " + std::to_string(d) +
                                   " would be " + std::to_string(g.in[d]));
      }
    }
    Shape y_shape{batch, out_channels};
    y_shape.insert(y_shape.end(), g.in.begin(), g.in.end());
    Tensor& y = ctx.Output(0, x.dtype(), y_shape);
    if (y.size() == 0) return;
    const int64_t ksize = g.kernel_size(), in_size = g.out_size(), out_size = g.in_size();
    const int64_t kdim = mg * ksize;  // rows of col per group
    const int threads = ctx.threads();
    Dispatch(FloatTypes{}, x.dtype(), what, [&](auto tag) {
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
        for (int64_t grp = 0; grp < group_; ++grp) {
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
  WindowAttrs attrs_;
  int64_t group_;
  std::vector<int64_t> output_padding_, output_shape_;
};

}  // namespace

void RegisterConvTransposeKernels(KernelRegistry& r) {
  r.Add({.op = "ConvTranspose", .since = 1, .types = {{"T", dtypes::Floats()}}, .create = MakeKernel<ConvTranspose>});
}

}  // namespace ferry::ref
