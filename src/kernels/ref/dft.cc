// DFT (opsets 17, 20). The input is [..., n, ..., 1] (real) or [..., n, ..., 2] (complex as re/im pairs); the
// transform runs along `axis` (attribute in opset 17, default 1; optional scalar input 2 in opset 20, default -2),
// which may not be the last (re/im) dimension. dft_length (optional scalar input 1) truncates or zero-pads the
// signal. Forward: output [..., L or L/2+1 (onesided), ..., 2]. Inverse: the 1/L-scaled inverse transform; with
// onesided=1 the input holds the first bins of a Hermitian spectrum and the output is the real signal (an
// "irfft": output [..., L, ..., 1], L defaulting to 2 * (n - 1)), matching the ONNX test data.
#include <complex>
#include <vector>

#include "kernels/kernel_def.h"
#include "kernels/ref/common.h"
#include "kernels/ref/signal_util.h"
#include "kernels/registry.h"

namespace ferry::ref {
namespace {

class Dft : public OpKernel {
 public:
  explicit Dft(const ir::Node& node)
      : axis_input_(node.opset() >= 20),
        axis_attr_(node.GetInt("axis", 1)),
        inverse_(node.GetInt("inverse", 0) != 0),
        onesided_(node.GetInt("onesided", 0) != 0) {}

  void Compute(KernelContext& ctx) const override {
    const Tensor& x = ctx.required_input(0);
    const int64_t rank = x.rank();
    if (rank < 2 || (x.dim(rank - 1) != 1 && x.dim(rank - 1) != 2))
      throw InvalidArgumentError(ctx.Describe() + ": input must have rank >= 2 and a last dimension of 1 (real) or "
                                 "2 (complex), got " + ShapeToString(x.shape()));
    int64_t axis = axis_attr_;
    if (axis_input_) {
      axis = -2;
      if (const Tensor* a = ctx.input(2)) axis = ReadScalarInt(*a, ctx.Describe(), "axis");
    }
    if (axis < -rank || axis >= rank - 1 || axis == -1)
      throw InvalidArgumentError(ctx.Describe() + ": axis " + std::to_string(axis) + " is out of range for input " +
                                 ShapeToString(x.shape()) + " (the last dimension holds re/im parts)");
    if (axis < 0) axis += rank;
    const int64_t n = x.dim(axis);
    int64_t len = inverse_ && onesided_ ? 2 * (n - 1) : n;
    if (const Tensor* l = ctx.input(1)) len = ReadScalarInt(*l, ctx.Describe(), "dft_length");
    if (len < 1)
      throw InvalidArgumentError(ctx.Describe() + ": dft_length must be positive, got " + std::to_string(len));
    const bool complex_in = x.dim(rank - 1) == 2;
    const bool real_out = inverse_ && onesided_;
    const int64_t out_n = real_out ? len : (onesided_ ? len / 2 + 1 : len);
    Shape ys = x.shape();
    ys[static_cast<size_t>(axis)] = out_n;
    ys[static_cast<size_t>(rank - 1)] = real_out ? 1 : 2;
    Tensor& y = ctx.Output(0, x.dtype(), ys);
    int64_t outer = 1, inner = 1;
    for (int64_t d = 0; d < axis; ++d) outer *= x.dim(d);
    for (int64_t d = axis + 1; d < rank - 1; ++d) inner *= x.dim(d);
    const int64_t cin = complex_in ? 2 : 1, cout = real_out ? 1 : 2;
    Dispatch(FloatTypes{}, x.dtype(), ctx.Describe(), [&](auto tag) {
      using T = decltype(tag);
      const T* in = x.data<T>();
      T* out = y.data<T>();
      auto load = [](T v) { return static_cast<double>(static_cast<Acc<T>>(v)); };
      std::vector<std::complex<double>> buf;
      for (int64_t o = 0; o < outer; ++o) {
        for (int64_t i = 0; i < inner; ++i) {
          auto at = [&](int64_t j) { return ((o * n + j) * inner + i) * cin; };
          buf.assign(static_cast<size_t>(len), {0.0, 0.0});
          if (real_out) {
            // Hermitian completion of the first L/2+1 bins; the imaginary parts of bin 0 (and L/2) are dropped.
            const int64_t half = len / 2;
            for (int64_t k = 0; k <= half && k < n; ++k) {
              std::complex<double> v(load(in[at(k)]), complex_in ? load(in[at(k) + 1]) : 0.0);
              if (k == 0 || (len % 2 == 0 && k == half)) v = {v.real(), 0.0};
              buf[static_cast<size_t>(k)] = v;
              if (k > 0 && len - k != k) buf[static_cast<size_t>(len - k)] = std::conj(v);
            }
          } else {
            for (int64_t j = 0; j < n && j < len; ++j)
              buf[static_cast<size_t>(j)] = {load(in[at(j)]), complex_in ? load(in[at(j) + 1]) : 0.0};
          }
          DftInPlace(buf, inverse_);
          const double scale = inverse_ ? 1.0 / static_cast<double>(len) : 1.0;
          for (int64_t k = 0; k < out_n; ++k) {
            T* p = out + ((o * out_n + k) * inner + i) * cout;
            p[0] = T(static_cast<Acc<T>>(buf[static_cast<size_t>(k)].real() * scale));
            if (!real_out) p[1] = T(static_cast<Acc<T>>(buf[static_cast<size_t>(k)].imag() * scale));
          }
        }
      }
    });
  }

 private:
  bool axis_input_;
  int64_t axis_attr_;
  bool inverse_;
  bool onesided_;
};

}  // namespace

void RegisterDftKernels(KernelRegistry& r) {
  const std::vector<DataType> ind = {DataType::kInt32, DataType::kInt64};
  r.Add({.op = "DFT",
         .since = 17,
         .until = 19,
         .types = {{"T1", dtypes::Floats()}, {"T2", ind}},
         .create = MakeKernel<Dft>,
         .host_inputs = {1}});
  r.Add({.op = "DFT",
         .since = 20,
         .types = {{"T1", dtypes::Floats()}, {"T2", ind}},
         .create = MakeKernel<Dft>,
         .host_inputs = {1, 2}});
}

}  // namespace ferry::ref
