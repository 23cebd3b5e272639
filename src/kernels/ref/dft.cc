// DFT (opsets 17, 20). The input is [..., n, ..., 1] (real) or [..., n, ..., 2] (complex as re/im pairs); the
// transform runs along `axis` (attribute in opset 17, default 1; optional scalar input 2 in opset 20, default -2),
// which may not be the last (re/im) dimension. dft_length (optional scalar input 1) truncates or zero-pads the
// signal. Forward: output [..., L or L/2+1 (onesided), ..., 2]. Inverse: the 1/L-scaled inverse transform; with
// onesided=1 the input holds the first bins of a Hermitian spectrum and the output is the real signal (an
// "irfft": output [..., L, ..., 1], L defaulting to 2 * (n - 1)), matching the ONNX test data.
#include <complex>
#include <string>
#include <vector>

#include "kernels/kernel_def.h"
#include "kernels/ref/common.h"
#include "kernels/ref/signal_util.h"
#include "kernels/registry.h"

namespace ferry::ref {
namespace {

// The transform's geometry for x's shape, the axis and dft_length.
struct DftPlan {
  int64_t axis = 0, n = 0, len = 0, out_n = 0, outer = 1, inner = 1;
  bool complex_in = false, real_out = false;
  Shape y_shape;
};

// A one-element int32/int64 tensor's value (Prepare checked).
int64_t ScalarValue(const Tensor& t) {
  return t.dtype() == DataType::kInt64 ? t.data<int64_t>()[0] : t.data<int32_t>()[0];
}

class Dft : public OpKernel {
 public:
  explicit Dft(const ir::Node& node)
      : axis_input_(node.opset() >= 20),
        axis_attr_(node.GetInt("axis", 1)),
        inverse_(node.GetInt("inverse", 0) != 0),
        onesided_(node.GetInt("onesided", 0) != 0) {}

  // x's shape and the types and sizes of dft_length and axis are checked here; the geometry is resolved here when
  // their values are known, else the output is dynamic and Compute resolves it from them.
  void Prepare(PrepareContext& ctx) const override {
    const InputSpec& x = ctx.tensor_input(0);
    const int64_t rank = static_cast<int64_t>(x.shape.size());
    if (rank < 2 || (x.shape.back() != 1 && x.shape.back() != 2)) {
      throw InvalidArgumentError(ctx.Describe() + ": input must have rank >= 2 and a last dimension of 1 (real) or " +
                                 "2 (complex), got " + ShapeToString(x.shape));
    }
    bool known = true;
    for (int i : {2, 1}) {
      if ((i == 2 && !axis_input_) || !ctx.has_input(i)) continue;
      const InputSpec& t = ctx.tensor_input(i);
      const std::string name = i == 2 ? "axis" : "dft_length";
      if (ShapeElementCount(t.shape) != 1) {
        throw InvalidArgumentError(ctx.Describe() + ": " + name + " must be a scalar, got shape " +
                                   ShapeToString(t.shape));
      }
      if (t.dtype != DataType::kInt64 && t.dtype != DataType::kInt32) {
        throw InvalidArgumentError(ctx.Describe() + ": " + name + ": expected an int32 or int64 tensor, got " +
                                   std::string(DataTypeName(t.dtype)));
      }
      known = known && ctx.constant(i);
    }
    if (!known) {
      ctx.SetOutputDynamic(0);
      return;
    }
    const DftPlan& p =
        ctx.EmplaceState(Resolve(x.shape, ctx.constant(1), ctx.constant(2), [&] { return ctx.Describe(); }));
    ctx.SetOutput(0, x.dtype, p.y_shape);
  }

  void Compute(KernelContext& ctx) const override {
    const Tensor& x = ctx.required_input(0);
    DftPlan resolved;
    const DftPlan* plan = ctx.state_if_any<DftPlan>();
    if (!plan) {  // dft_length / axis are run-time data: their errors name the node
      resolved = Resolve(x.shape(), ctx.input(1), ctx.input(2), [&] { return ctx.Describe(); });
      plan = &resolved;
    }
    const int64_t n = plan->n, len = plan->len, out_n = plan->out_n, outer = plan->outer, inner = plan->inner;
    const bool complex_in = plan->complex_in, real_out = plan->real_out;
    Tensor& y = ctx.Output(0, x.dtype(), plan->y_shape);
    const int64_t cin = complex_in ? 2 : 1, cout = real_out ? 1 : 2;
    Dispatch(FloatTypes{}, x.dtype(), ctx, [&](auto tag) {
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
  // The geometry for the values of dft_length (`length`) and axis (`axis_t`, read from opset 20), each nullptr when
  // absent; what() names the node when they are out of range.
  template <typename What>
  DftPlan Resolve(const Shape& x, const Tensor* length, const Tensor* axis_t, const What& what) const {
    const int64_t rank = static_cast<int64_t>(x.size());
    DftPlan p;
    int64_t axis = axis_attr_;
    if (axis_input_) axis = axis_t ? ScalarValue(*axis_t) : -2;
    if (axis < -rank || axis >= rank - 1 || axis == -1) {
      throw InvalidArgumentError(what() + ": axis " + std::to_string(axis) + " is out of range for input " +
                                 ShapeToString(x) + " (the last dimension holds re/im parts)");
    }
    if (axis < 0) axis += rank;
    p.axis = axis;
    p.n = x[static_cast<size_t>(axis)];
    p.len = inverse_ && onesided_ ? 2 * (p.n - 1) : p.n;
    if (length) p.len = ScalarValue(*length);
    if (p.len < 1) throw InvalidArgumentError(what() + ": dft_length must be positive, got " + std::to_string(p.len));
    p.complex_in = x[static_cast<size_t>(rank - 1)] == 2;
    p.real_out = inverse_ && onesided_;
    p.out_n = p.real_out ? p.len : (onesided_ ? p.len / 2 + 1 : p.len);
    p.y_shape = x;
    p.y_shape[static_cast<size_t>(axis)] = p.out_n;
    p.y_shape[static_cast<size_t>(rank - 1)] = p.real_out ? 1 : 2;
    for (int64_t d = 0; d < axis; ++d) p.outer *= x[static_cast<size_t>(d)];
    for (int64_t d = axis + 1; d < rank - 1; ++d) p.inner *= x[static_cast<size_t>(d)];
    return p;
  }

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
