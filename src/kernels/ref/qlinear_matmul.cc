// QLinearMatMul: quantized matrix product. acc = (a - a_zero_point)·(b - b_zero_point) in int32, then
// y = saturate(round_half_even(acc · a_scale·b_scale/y_scale) + y_zero_point). a_scale/a_zero_point may be per row
// of A and b_scale/b_zero_point per column of B. From opset 21 the scales may be float16/bfloat16; the scale product
// is then rounded to that type at each step, as the ONNX reference computes it.
#include <vector>

#include "kernels/kernel_def.h"
#include "kernels/ref/common.h"
#include "kernels/ref/gemm.h"
#include "kernels/ref/quant_util.h"
#include "kernels/registry.h"

namespace ferry::ref {
namespace {

float RoundTo(DataType t, float v) {
  if (t == DataType::kFloat16) return static_cast<float>(Float16(v));
  if (t == DataType::kBFloat16) return static_cast<float>(BFloat16(v));
  return v;
}

class QLinearMatMul : public OpKernel {
 public:
  explicit QLinearMatMul(const ir::Node&) {}

  void Compute(KernelContext& ctx) const override {
    const std::string what = ctx.Describe();
    const Tensor& a = ctx.required_input(0);
    const Tensor& a_scale_t = ctx.required_input(1);
    const Tensor& b = ctx.required_input(3);
    const Tensor& y_scale_t = ctx.required_input(6);
    const Tensor* yzp_t = ctx.input(7);
    const MatMulPlan p = PlanMatMul(a.shape(), b.shape(), what);
    const std::vector<float> a_scale = ReadScales(a_scale_t, what + " a_scale");
    const std::vector<float> b_scale = ReadScales(ctx.required_input(4), what + " b_scale");
    const std::vector<float> y_scale = ReadScales(y_scale_t, what + " y_scale");
    const std::vector<int32_t> azp = ReadZeroPoints(ctx.input(2), what + " a_zero_point");
    const std::vector<int32_t> bzp = ReadZeroPoints(ctx.input(5), what + " b_zero_point");
    const std::vector<int32_t> yzp = ReadZeroPoints(yzp_t, what + " y_zero_point");
    if ((a_scale.size() != 1 && static_cast<int64_t>(a_scale.size()) != p.m) ||
        (b_scale.size() != 1 && static_cast<int64_t>(b_scale.size()) != p.n) || y_scale.size() != 1 ||
        yzp.size() != 1) {
      throw InvalidArgumentError(what + ": a_scale must have 1 or M values, b_scale 1 or N values, y_scale and "
                                 "y_zero_point one value each");
    }
    const std::vector<int32_t> a32 = WidenMinusZeroPoint(a, azp, true, p.m, p.k, what + " a_zero_point");
    const std::vector<int32_t> b32 = WidenMinusZeroPoint(b, bzp, false, p.k, p.n, what + " b_zero_point");
    const DataType out_type = yzp_t ? yzp_t->dtype() : a.dtype();
    Tensor& y = ctx.Output(0, out_type, p.out_shape);
    if (y.size() == 0) return;
    std::vector<int32_t> acc(static_cast<size_t>(y.size()));
    MatMulInt32(p, a32.data(), b32.data(), acc.data(), ctx.threads());
    const DataType st = a_scale_t.dtype();
    // Scale per (row, column): a_scale·b_scale/y_scale in the scales' own precision.
    std::vector<float> scale(a_scale.size() * b_scale.size());
    for (size_t i = 0; i < a_scale.size(); ++i)
      for (size_t j = 0; j < b_scale.size(); ++j)
        scale[i * b_scale.size() + j] = RoundTo(st, RoundTo(st, a_scale[i] * b_scale[j]) / y_scale[0]);
    const int64_t nb = static_cast<int64_t>(b_scale.size()), na = static_cast<int64_t>(a_scale.size());
    auto requantize = [&](auto* out) {
      using T = std::remove_pointer_t<decltype(out)>;
      for (int64_t i = 0; i < y.size(); ++i) {
        const int64_t col = i % p.n, row = (i / p.n) % p.m;
        const float s = scale[static_cast<size_t>((na == 1 ? 0 : row) * nb + (nb == 1 ? 0 : col))];
        out[i] = SaturateRound<T>(static_cast<double>(acc[static_cast<size_t>(i)]) * s, yzp[0]);
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
};

}  // namespace

void RegisterQLinearMatMulKernels(KernelRegistry& r) {
  const std::vector<DataType> q8 = {DataType::kInt8, DataType::kUint8};
  r.Add({.op = "QLinearMatMul",
         .since = 10,
         .types = {{"T1", q8},
                   {"T2", q8},
                   {"T3", q8},
                   {"TS", {DataType::kFloat, DataType::kFloat16, DataType::kBFloat16}}},
         .create = MakeKernel<QLinearMatMul>});
}

}  // namespace ferry::ref
