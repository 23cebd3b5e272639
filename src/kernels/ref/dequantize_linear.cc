// DequantizeLinear (opsets 10, 13, 19, 21, 23, 24, 25): y = (x - x_zero_point) * x_scale, with the scale and zero
// point per tensor, per axis (`axis`), or blocked along `axis` (`block_size`, opset 21+). x may be any quantized
// type (8/16/32-bit integers, int4/uint4/int2/uint2, float8, float4e2m1). The output has the scale's type, or
// `output_dtype` (opset 23+) when set. From opset 24 the scale may be float8e8m0 (the power of two 2^(code-127),
// 0xFF = NaN; MX block scaling); y is never float8e8m0, so such a scale needs `output_dtype`.
#include <cmath>
#include <string>
#include <vector>

#include "core/float8.h"
#include "kernels/kernel_def.h"
#include "kernels/ref/common.h"
#include "kernels/ref/quantize_util.h"
#include "kernels/registry.h"

namespace ferry::ref {
namespace {

const char kE8M0NeedsOutputDtype[] =
    "x_scale of type float8e8m0 needs attribute output_dtype (y is float, float16 or bfloat16, never float8e8m0)";

std::string DequantizeLinearPredicate(const ir::Node& node) {
  const ir::Value* scale = node.input(1);
  if (scale && scale->type().is_tensor() && scale->type().elem_type == DataType::kFloat8E8M0 &&
      node.GetInt("output_dtype", 0) == 0) {
    return std::string("DequantizeLinear: ") + kE8M0NeedsOutputDtype;
  }
  return "";
}

class DequantizeLinear : public OpKernel {
 public:
  explicit DequantizeLinear(const ir::Node& node)
      : axis_(node.GetInt("axis", 1)),
        block_size_(node.GetInt("block_size", 0)),
        output_dtype_(static_cast<DataType>(node.GetInt("output_dtype", 0))) {
    if (block_size_ < 0) {
      throw InvalidModelError(node.Describe() + ": attribute 'block_size' must be >= 0, got " +
                              std::to_string(block_size_));
    }
  }

  // x's and the zero point's types, the output type and the scale layout over x.
  void Prepare(PrepareContext& ctx) const override {
    const InputSpec& x = ctx.tensor_input(0);
    const InputSpec& scale = ctx.tensor_input(1);
    const InputSpec* zp = ctx.has_input(2) ? &ctx.tensor_input(2) : nullptr;
    if (zp && zp->dtype != x.dtype) {
      throw InvalidArgumentError(ctx.Describe() + ": x_zero_point has type " + std::string(DataTypeName(zp->dtype)) +
                                 ", x has " + std::string(DataTypeName(x.dtype)));
    }
    const DataType out_type = output_dtype_ != DataType::kUndefined ? output_dtype_ : scale.dtype;
    if (out_type == DataType::kFloat8E8M0) {
      throw InvalidArgumentError(ctx.Describe() + ": " + kE8M0NeedsOutputDtype);
    }
    // MakeQuantLayout reads only the parameters' shapes.
    const Tensor scale_shape = Tensor::Wrap(scale.dtype, scale.shape, nullptr, nullptr);
    const Tensor zp_shape = zp ? Tensor::Wrap(zp->dtype, zp->shape, nullptr, nullptr) : Tensor();
    ctx.EmplaceState(MakeQuantLayout(x.shape, scale_shape, zp ? &zp_shape : nullptr, axis_, block_size_,
                                     ctx.Describe(), "x_scale"));
    if (out_type != DataType::kFloat && out_type != DataType::kDouble && out_type != DataType::kFloat16 &&
        out_type != DataType::kBFloat16) {
      throw UnsupportedError(ctx.Describe() + ": data type " + std::string(DataTypeName(out_type)) +
                             " is not supported");
    }
    switch (x.dtype) {
      case DataType::kUint8:
      case DataType::kInt8:
      case DataType::kUint16:
      case DataType::kInt16:
      case DataType::kInt32:
      case DataType::kInt4:
      case DataType::kUint4:
      case DataType::kInt2:
      case DataType::kUint2:
      case DataType::kFloat4E2M1:
      case DataType::kFloat8E4M3FN:
      case DataType::kFloat8E4M3FNUZ:
      case DataType::kFloat8E5M2:
      case DataType::kFloat8E5M2FNUZ:
      case DataType::kFloat8E8M0: break;
      default:
        throw UnsupportedError(ctx.Describe() + ": input x of type " + std::string(DataTypeName(x.dtype)) +
                               " is not a quantized type");
    }
    ctx.SetOutput(0, out_type, x.shape);
  }

  void Compute(KernelContext& ctx) const override {
    const Tensor& x = ctx.required_input(0);
    const Tensor& scale = ctx.required_input(1);
    const Tensor* zp = ctx.input(2);
    const QuantLayout& layout = ctx.state<QuantLayout>();
    const std::vector<double> s = QuantTensorAsDoubles(scale);
    const std::vector<double> z = zp ? QuantTensorAsDoubles(*zp) : std::vector<double>(s.size(), 0.0);
    Tensor& y = ctx.Output(0);
    const DataType out_type = y.dtype();
    Dispatch(FloatTypes{}, out_type, ctx, [&](auto otag) {
      using O = decltype(otag);
      O* out = y.data<O>();
      auto run = [&](auto&& load) {
        ForEachQuantElement(layout, [&](int64_t e, int64_t p) {
          const double v = (load(e) - z[static_cast<size_t>(p)]) * s[static_cast<size_t>(p)];
          out[e] = O(static_cast<Acc<O>>(v));
        });
      };
      // Typed loads for the byte-addressable integer types; the packed and float formats decode per element.
      switch (x.dtype()) {
        case DataType::kUint8: run([p = x.data<uint8_t>()](int64_t e) { return static_cast<double>(p[e]); }); break;
        case DataType::kInt8: run([p = x.data<int8_t>()](int64_t e) { return static_cast<double>(p[e]); }); break;
        case DataType::kUint16: run([p = x.data<uint16_t>()](int64_t e) { return static_cast<double>(p[e]); }); break;
        case DataType::kInt16: run([p = x.data<int16_t>()](int64_t e) { return static_cast<double>(p[e]); }); break;
        case DataType::kInt32: run([p = x.data<int32_t>()](int64_t e) { return static_cast<double>(p[e]); }); break;
        default: run([&x](int64_t e) { return QuantElementAsDouble(x, e); }); break;  // Prepare checked the type
      }
    });
  }

 private:
  int64_t axis_;
  int64_t block_size_;
  DataType output_dtype_;
};

}  // namespace

void RegisterDequantizeLinearKernels(KernelRegistry& r) {
  const std::vector<DataType> quantized = {
      DataType::kUint8,        DataType::kInt8,           DataType::kUint16,      DataType::kInt16,
      DataType::kInt32,        DataType::kUint4,          DataType::kInt4,        DataType::kUint2,
      DataType::kInt2,         DataType::kFloat8E4M3FN,   DataType::kFloat8E4M3FNUZ, DataType::kFloat8E5M2,
      DataType::kFloat8E5M2FNUZ, DataType::kFloat8E8M0,   DataType::kFloat4E2M1};
  // One computation serves every version; they differ in the type lists (T: x up to 19; T1: x, T2: scale from
  // 21, with float8e8m0 from 24; T3: y from 23) and attributes (block_size 21, output_dtype 23).
  r.Add({.op = "DequantizeLinear",
         .since = 10,
         .types = {{"T", quantized},
                   {"T1", quantized},
                   {"T2", dtypes::Concat(dtypes::Floats(), {DataType::kFloat8E8M0})},
                   {"T3", dtypes::Floats()}},
         .create = MakeKernel<DequantizeLinear>,
         .predicate = DequantizeLinearPredicate,
         .constraints = "a float8e8m0 x_scale only with output_dtype set"});
}

}  // namespace ferry::ref
