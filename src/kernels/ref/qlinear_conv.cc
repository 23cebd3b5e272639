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

  void Compute(KernelContext& ctx) const override {
    const std::string what = ctx.Describe();
    const Tensor& x = ctx.required_input(0);
    const Tensor& w = ctx.required_input(3);
    const ConvShape s = ResolveConv(attrs_, group_, x.shape(), w.shape(), what);
    const int64_t m = s.out_channels;
    const std::vector<float> x_scale = ReadScales(ctx.required_input(1), what + " x_scale");
    const std::vector<int32_t> xzp = ReadZeroPoints(ctx.input(2), what + " x_zero_point");
    const std::vector<float> w_scale = ReadScales(ctx.required_input(4), what + " w_scale");
    const std::vector<int32_t> wzp = ReadZeroPoints(ctx.input(5), what + " w_zero_point");
    const std::vector<float> y_scale = ReadScales(ctx.required_input(6), what + " y_scale");
    const Tensor* yzp_t = ctx.input(7);
    const std::vector<int32_t> yzp = ReadZeroPoints(yzp_t, what + " y_zero_point");
    const Tensor* bias = ctx.input(8);
    auto check = [&](size_t n, bool per_channel, const char* name) {
      if (n == 1 || (per_channel && static_cast<int64_t>(n) == m)) return;
      throw InvalidArgumentError(what + ": " + name + " has " + std::to_string(n) + " values, expected 1" +
                                 (per_channel ? " or " + std::to_string(m) : std::string()));
    };
    check(x_scale.size(), false, "x_scale");
    check(xzp.size(), false, "x_zero_point");
    check(w_scale.size(), true, "w_scale");
    check(wzp.size(), true, "w_zero_point");
    check(y_scale.size(), false, "y_scale");
    check(yzp.size(), false, "y_zero_point");
    if (bias && (bias->dtype() != DataType::kInt32 || bias->size() != m)) {
      throw InvalidArgumentError(what + ": bias B must be an int32 tensor of " + std::to_string(m) +
                                 " values, got " + ShapeToString(bias->shape()));
    }
    std::vector<int32_t> xs = WidenInt8(x, what);
    std::vector<int32_t> ws = WidenInt8(w, what);
    for (int32_t& v : xs) v -= xzp[0];
    const int64_t per_m = m ? w.size() / m : 0;
    for (int64_t i = 0; i < w.size(); ++i) ws[static_cast<size_t>(i)] -= PerIndex(wzp, i / per_m);
    const DataType out_type = yzp_t ? yzp_t->dtype() : x.dtype();
    Tensor& y = ctx.Output(0, out_type, s.y_shape);
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
    if (out_type == DataType::kInt8) {
      requantize(y.data<int8_t>());
    } else if (out_type == DataType::kUint8) {
      requantize(y.data<uint8_t>());
    } else {
      throw UnsupportedError(what + ": output type " + std::string(DataTypeName(out_type)) + " is not supported");
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
