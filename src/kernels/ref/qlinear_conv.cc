// QLinearConv: quantized convolution. acc = conv(x - x_zero_point, w - w_zero_point) + B in int32, then
// y = saturate(round_half_even(acc · x_scale·w_scale/y_scale) + y_zero_point); w_scale and w_zero_point may be
// per output channel.
#include <vector>

#include "kernels/kernel_def.h"
#include "kernels/ref/common.h"
#include "kernels/ref/conv_util.h"
#include "kernels/ref/quant_util.h"
#include "kernels/registry.h"

namespace ferry::ref {
namespace {

class QLinearConv : public OpKernel {
 public:
  explicit QLinearConv(const ir::Node& node)
      : attrs_(WindowAttrs::FromNode(node)), group_(node.GetInt("group", 1)) {}

  // The convolution's geometry, and the dtypes and sizes of the quantization parameters and the bias.
  void Prepare(PrepareContext& ctx) const override {
    const std::string what = ctx.Describe();
    const InputSpec& x = ctx.tensor_input(0);
    const InputSpec& w = ctx.tensor_input(3);
    ConvShape s = ResolveConv(attrs_, group_, x.shape, w.shape, what);
    const int64_t m = s.out_channels;
    // Input i's element count (1 for an omitted zero point, which reads as 0), after checking its dtype.
    auto count = [&](int i, bool scale, const char* name) -> int64_t {
      if (!scale && !ctx.has_input(i)) return 1;
      const InputSpec& t = ctx.tensor_input(i);
      const bool ok = scale ? t.dtype == DataType::kFloat || t.dtype == DataType::kFloat16 ||
                                  t.dtype == DataType::kBFloat16
                            : t.dtype == DataType::kInt8 || t.dtype == DataType::kUint8 || t.dtype == DataType::kInt32;
      if (!ok) {
        throw UnsupportedError(what + " " + name + (scale ? ": scale" : ": zero point") + " of type " +
                               std::string(DataTypeName(t.dtype)) + " is not supported");
      }
      return ShapeElementCount(t.shape);
    };
    const int64_t n_x_scale = count(1, true, "x_scale");
    const int64_t n_xzp = count(2, false, "x_zero_point");
    const int64_t n_w_scale = count(4, true, "w_scale");
    const int64_t n_wzp = count(5, false, "w_zero_point");
    const int64_t n_y_scale = count(6, true, "y_scale");
    const int64_t n_yzp = count(7, false, "y_zero_point");
    auto check = [&](int64_t n, bool per_channel, const char* name) {
      if (n == 1 || (per_channel && n == m)) return;
      throw InvalidArgumentError(what + ": " + name + " has " + std::to_string(n) + " values, expected 1" +
                                 (per_channel ? " or " + std::to_string(m) : std::string()));
    };
    check(n_x_scale, false, "x_scale");
    check(n_xzp, false, "x_zero_point");
    check(n_w_scale, true, "w_scale");
    check(n_wzp, true, "w_zero_point");
    check(n_y_scale, false, "y_scale");
    check(n_yzp, false, "y_zero_point");
    if (ctx.has_input(8)) {
      const InputSpec& bias = ctx.tensor_input(8);
      if (bias.dtype != DataType::kInt32 || ShapeElementCount(bias.shape) != m) {
        throw InvalidArgumentError(what + ": bias B must be an int32 tensor of " + std::to_string(m) +
                                   " values, got " + ShapeToString(bias.shape));
      }
    }
    for (const InputSpec* t : {&x, &w}) {
      if (t->dtype != DataType::kInt8 && t->dtype != DataType::kUint8) {
        throw UnsupportedError(what + ": data type " + std::string(DataTypeName(t->dtype)) +
                               " is not supported (int8 or uint8 expected)");
      }
    }
    const DataType out_type = ctx.has_input(7) ? ctx.tensor_input(7).dtype : x.dtype;
    if (out_type != DataType::kInt8 && out_type != DataType::kUint8) {
      throw UnsupportedError(what + ": output type " + std::string(DataTypeName(out_type)) + " is not supported");
    }
    ctx.SetOutput(0, out_type, s.y_shape);
    ctx.EmplaceState(std::move(s));
  }

  void Compute(KernelContext& ctx) const override {
    const Tensor& x = ctx.required_input(0);
    const Tensor& w = ctx.required_input(3);
    const ConvShape& s = ctx.state<ConvShape>();
    const int64_t m = s.out_channels;
    // Prepare checked every dtype and size: the readers below cannot throw.
    const std::vector<float> x_scale = ReadScales(ctx.required_input(1), {});
    const std::vector<int32_t> xzp = ReadZeroPoints(ctx.input(2), {});
    const std::vector<float> w_scale = ReadScales(ctx.required_input(4), {});
    const std::vector<int32_t> wzp = ReadZeroPoints(ctx.input(5), {});
    const std::vector<float> y_scale = ReadScales(ctx.required_input(6), {});
    const std::vector<int32_t> yzp = ReadZeroPoints(ctx.input(7), {});
    const Tensor* bias = ctx.input(8);
    std::vector<int32_t> xs = WidenInt8(x, {});
    std::vector<int32_t> ws = WidenInt8(w, {});
    for (int32_t& v : xs) v -= xzp[0];
    const int64_t per_m = m ? w.size() / m : 0;
    for (int64_t i = 0; i < w.size(); ++i) ws[static_cast<size_t>(i)] -= PerIndex(wzp, i / per_m);
    Tensor& y = ctx.Output(0);
    if (y.size() == 0) return;
    const int64_t out_size = s.g.out_size();
    std::vector<int32_t> acc(static_cast<size_t>(y.size()), 0);
    if (bias) {
      for (int64_t n = 0; n < s.batch; ++n)
        for (int64_t c = 0; c < m; ++c)
          std::fill_n(acc.data() + (n * m + c) * out_size, out_size, bias->data<int32_t>()[c]);
    }
    ConvInt32(xs.data(), ws.data(), s, acc.data(), ctx.threads());
    auto requantize = [&](auto* out) {
      using T = std::remove_pointer_t<decltype(out)>;
      for (int64_t n = 0; n < s.batch; ++n) {
        for (int64_t c = 0; c < m; ++c) {
          // The scale product in float, as the ONNX reference computes it.
          const float scale = x_scale[0] * PerIndex(w_scale, c) / y_scale[0];
          const int64_t base = (n * m + c) * out_size;
          for (int64_t i = 0; i < out_size; ++i) {
            out[base + i] = SaturateRound<T>(static_cast<double>(acc[static_cast<size_t>(base + i)]) * scale, yzp[0]);
          }
        }
      }
    };
    if (y.dtype() == DataType::kInt8) {
      requantize(y.data<int8_t>());
    } else {
      requantize(y.data<uint8_t>());
    }
  }

 private:
  WindowAttrs attrs_;
  int64_t group_;
};

}  // namespace

void RegisterQLinearConvKernels(KernelRegistry& r) {
  const std::vector<DataType> q8 = {DataType::kInt8, DataType::kUint8};
  r.Add({.op = "QLinearConv",
         .since = 10,
         .types = {{"T1", q8}, {"T2", q8}, {"T3", q8}, {"T4", {DataType::kInt32}}},
         .create = MakeKernel<QLinearConv>});
}

}  // namespace ferry::ref
