// DynamicQuantizeLinear (opset 11): uint8 asymmetric quantization with the range taken from the data, as the ONNX
// function body defines it: x_min = min(0, min(x)), x_max = max(0, max(x)), y_scale = (x_max - x_min) / 255,
// y_zero_point = saturate(round_half_even(-x_min / y_scale)), y = saturate(round_half_even(x / y_scale) + zp).
// An all-zero input (scale 0) yields scale 0, zero point 0 and y = 0.
#include <algorithm>
#include <cmath>
#include <string>

#include "kernels/kernel_def.h"
#include "kernels/ref/common.h"
#include "kernels/registry.h"

namespace ferry::ref {
namespace {

class DynamicQuantizeLinear : public OpKernel {
 public:
  explicit DynamicQuantizeLinear(const ir::Node&) {}

  // y has x's shape; y_scale and y_zero_point are scalars.
  void Prepare(PrepareContext& ctx) const override {
    const InputSpec& x = ctx.tensor_input(0);
    if (x.dtype != DataType::kFloat) {
      throw UnsupportedError(ctx.Describe() + ": input x must be float32, got " + std::string(DataTypeName(x.dtype)));
    }
    ctx.SetOutput(0, DataType::kUint8, x.shape);
    if (ctx.output_count() > 1) ctx.SetOutput(1, DataType::kFloat, {});
    if (ctx.output_count() > 2) ctx.SetOutput(2, DataType::kUint8, {});
  }

  void Compute(KernelContext& ctx) const override {
    const Tensor& x = ctx.required_input(0);
    const float* in = x.data<float>();
    float lo = 0.f, hi = 0.f;
    for (int64_t i = 0; i < x.size(); ++i) {
      lo = std::min(lo, in[i]);
      hi = std::max(hi, in[i]);
    }
    const float scale = (hi - lo) / 255.f;
    float zp = 0.f;
    if (scale != 0.f) zp = std::min(255.f, std::max(0.f, std::nearbyint(-lo / scale)));
    Tensor& y = ctx.Output(0);
    ctx.Output(1).data<float>()[0] = scale;
    if (ctx.output_count() > 2) ctx.Output(2).data<uint8_t>()[0] = static_cast<uint8_t>(zp);
    uint8_t* out = y.data<uint8_t>();
    if (scale == 0.f) return;
    for (int64_t i = 0; i < x.size(); ++i) {
      float q = std::nearbyint(in[i] / scale) + zp;
      if (std::isnan(q)) q = 0.f;
      out[i] = static_cast<uint8_t>(std::min(255.f, std::max(0.f, q)));
    }
  }
};

}  // namespace

void RegisterDynamicQuantizeLinearKernels(KernelRegistry& r) {
  r.Add({.op = "DynamicQuantizeLinear",
         .since = 11,
         .types = {{"T1", {DataType::kFloat}}, {"T2", {DataType::kUint8}}},
         .create = MakeKernel<DynamicQuantizeLinear>});
}

}  // namespace ferry::ref
