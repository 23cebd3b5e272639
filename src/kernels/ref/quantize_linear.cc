// QuantizeLinear (opsets 10, 13, 19, 21, 23, 24, 25): y = saturate(round_half_even(x / y_scale) + y_zero_point)
// for integer outputs (uint8, int8, uint16, int16, uint4, int4, uint2, int2), y = cast(x / y_scale + y_zero_point)
// for float8 (with `saturate`) and float4e2m1 outputs. Scale/zero point are per tensor, per axis (`axis`), or
// blocked along `axis` (`block_size`, opset 21+). The output type is the zero point's, else `output_dtype`,
// else uint8. The division happens in `precision` (opset 23+) when given, else in the promoted type of x and
// the scale, as the ONNX reference does (float16 / float16 rounds to float16). From opset 24 the scale may be
// float8e8m0, the power of two 2^(code-127) (0xFF = NaN); the division (exact but for under/overflow) then runs
// in float, or double for double / int32 x, unless `precision` says otherwise.
#include <cmath>
#include <vector>

#include "core/float8.h"
#include "core/parallel.h"
#include "kernels/kernel_def.h"
#include "kernels/ref/common.h"
#include "kernels/ref/quantize_util.h"
#include "kernels/registry.h"

namespace ferry::ref {
namespace {

using QuantInputTypes = TypeList<float, double, Float16, BFloat16, int32_t>;

// Integer range of an integer quantized type; false for the float formats.
bool IntegerRange(DataType t, double* lo, double* hi) {
  switch (t) {
    case DataType::kUint8: *lo = 0, *hi = 255; return true;
    case DataType::kInt8: *lo = -128, *hi = 127; return true;
    case DataType::kUint16: *lo = 0, *hi = 65535; return true;
    case DataType::kInt16: *lo = -32768, *hi = 32767; return true;
    case DataType::kInt32: *lo = -2147483648.0, *hi = 2147483647.0; return true;
    case DataType::kUint4: *lo = 0, *hi = 15; return true;
    case DataType::kInt4: *lo = -8, *hi = 7; return true;
    case DataType::kUint2: *lo = 0, *hi = 3; return true;
    case DataType::kInt2: *lo = -2, *hi = 1; return true;
    default: return false;
  }
}

// Rounds a quotient computed in float/double to the precision of `t` (the type the division is defined in).
inline double RoundTo(DataType t, double v) {
  switch (t) {
    case DataType::kFloat: return static_cast<float>(v);
    case DataType::kFloat16: return static_cast<float>(Float16(static_cast<float>(v)));
    case DataType::kBFloat16: return static_cast<float>(BFloat16(static_cast<float>(v)));
    default: return v;
  }
}

class QuantizeLinear : public OpKernel {
 public:
  explicit QuantizeLinear(const ir::Node& node)
      : axis_(node.GetInt("axis", 1)),
        saturate_(node.GetInt("saturate", 1) != 0),
        block_size_(node.GetInt("block_size", 0)),
        output_dtype_(static_cast<DataType>(node.GetInt("output_dtype", 0))),
        precision_(static_cast<DataType>(node.GetInt("precision", 0))) {
    if (block_size_ < 0) {
      throw InvalidModelError(node.Describe() + ": attribute 'block_size' must be >= 0, got " +
                              std::to_string(block_size_));
    }
  }

  // The output type, the scale layout over x and the type the division runs in.
  void Prepare(PrepareContext& ctx) const override {
    const InputSpec& x = ctx.tensor_input(0);
    const InputSpec& scale = ctx.tensor_input(1);
    const InputSpec* zp = ctx.has_input(2) ? &ctx.tensor_input(2) : nullptr;
    DataType out_type = DataType::kUint8;
    if (zp) {
      out_type = zp->dtype;
      if (output_dtype_ != DataType::kUndefined && output_dtype_ != out_type) {
        throw InvalidArgumentError(ctx.Describe() + ": attribute output_dtype (" +
                                   std::string(DataTypeName(output_dtype_)) + ") differs from the zero point type " +
                                   std::string(DataTypeName(out_type)));
      }
    } else if (output_dtype_ != DataType::kUndefined) {
      out_type = output_dtype_;
    }
    Plan p;
    p.integer = IntegerRange(out_type, &p.lo, &p.hi);
    if (!p.integer && !IsSmallFloat(out_type)) {
      throw UnsupportedError(ctx.Describe() + ": output type " + std::string(DataTypeName(out_type)) +
                             " is not a quantized type");
    }
    if (out_type == DataType::kFloat8E8M0) {
      throw UnsupportedError(ctx.Describe() + ": quantizing to float8e8m0 is not implemented");
    }
    // MakeQuantLayout reads only the parameters' shapes.
    const Tensor scale_shape = Tensor::Wrap(scale.dtype, scale.shape, nullptr, nullptr);
    const Tensor zp_shape = zp ? Tensor::Wrap(zp->dtype, zp->shape, nullptr, nullptr) : Tensor();
    p.layout = MakeQuantLayout(x.shape, scale_shape, zp ? &zp_shape : nullptr, axis_, block_size_, ctx.Describe(),
                               "y_scale");
    p.div_type = precision_;
    if (p.div_type == DataType::kUndefined) {
      if (x.dtype == scale.dtype) {
        p.div_type = x.dtype;
      } else if (x.dtype == DataType::kDouble || scale.dtype == DataType::kDouble || x.dtype == DataType::kInt32) {
        p.div_type = DataType::kDouble;
      } else {
        p.div_type = DataType::kFloat;
      }
    }
    if (p.div_type == DataType::kInt32) p.div_type = DataType::kDouble;
    ctx.EmplaceState(p);
    ctx.SetOutput(0, out_type, x.shape);
  }

  void Compute(KernelContext& ctx) const override {
    const Tensor& x = ctx.required_input(0);
    const Tensor& scale = ctx.required_input(1);
    const Tensor* zp = ctx.input(2);
    const Plan& plan = ctx.state<Plan>();
    const QuantLayout& layout = plan.layout;
    const DataType div_type = plan.div_type;
    const bool integer = plan.integer;
    const double lo = plan.lo, hi = plan.hi;
    const std::vector<double> s = QuantTensorAsDoubles(scale);
    const std::vector<double> z = zp ? QuantTensorAsDoubles(*zp) : std::vector<double>(s.size(), 0.0);
    Tensor& y = ctx.Output(0);
    const DataType out_type = y.dtype();
    const bool sub_byte = IsSubByte(out_type);
    const int bits = DataTypeBits(out_type);
    Dispatch(QuantInputTypes{}, x.dtype(), ctx, [&](auto tag) {
      using T = decltype(tag);
      const T* in = x.data<T>();
      auto quotient = [&](int64_t e, int64_t p) {
        const double v = static_cast<double>(static_cast<Acc<T>>(in[e]));
        return RoundTo(div_type, RoundTo(div_type, v) / RoundTo(div_type, s[static_cast<size_t>(p)]));
      };
      if (integer) {
        auto level = [&](int64_t e, int64_t p) {
          double q = std::nearbyint(quotient(e, p)) + z[static_cast<size_t>(p)];
          if (std::isnan(q)) q = lo;
          return std::min(hi, std::max(lo, q));
        };
        void* out = y.raw_data();
        switch (out_type) {
          case DataType::kUint8:
            ForEachQuantElement(layout, [&](int64_t e, int64_t p) {
              static_cast<uint8_t*>(out)[e] = static_cast<uint8_t>(level(e, p));
            });
            break;
          case DataType::kInt8:
            ForEachQuantElement(layout, [&](int64_t e, int64_t p) {
              static_cast<int8_t*>(out)[e] = static_cast<int8_t>(level(e, p));
            });
            break;
          case DataType::kUint16:
            ForEachQuantElement(layout, [&](int64_t e, int64_t p) {
              static_cast<uint16_t*>(out)[e] = static_cast<uint16_t>(level(e, p));
            });
            break;
          case DataType::kInt16:
            ForEachQuantElement(layout, [&](int64_t e, int64_t p) {
              static_cast<int16_t*>(out)[e] = static_cast<int16_t>(level(e, p));
            });
            break;
          case DataType::kInt32:
            ForEachQuantElement(layout, [&](int64_t e, int64_t p) {
              static_cast<int32_t*>(out)[e] = static_cast<int32_t>(level(e, p));
            });
            break;
          default:  // int4, uint4, int2, uint2: packed
            ForEachQuantElement(layout, [&](int64_t e, int64_t p) {
              WriteSubByte(out, bits, e, IntToSubByte(out_type, static_cast<int64_t>(level(e, p))));
            });
            break;
        }
      } else {
        uint8_t* out = static_cast<uint8_t*>(y.raw_data());
        ForEachQuantElement(layout, [&](int64_t e, int64_t p) {
          const double v = quotient(e, p) + z[static_cast<size_t>(p)];
          const uint8_t code = DoubleToSmallFloat(out_type, v, saturate_);
          if (sub_byte) {
            WriteSubByte(out, bits, e, code);
          } else {
            out[e] = code;
          }
        });
      }
    });
  }

 private:
  struct Plan {
    QuantLayout layout;
    DataType div_type = DataType::kUndefined;  // the type the division is carried out in
    bool integer = false;                      // an integer output type, of range [lo, hi]
    double lo = 0, hi = 0;
  };
  int64_t axis_;
  bool saturate_;
  int64_t block_size_;
  DataType output_dtype_;
  DataType precision_;
};

}  // namespace

void RegisterQuantizeLinearKernels(KernelRegistry& r) {
  const std::vector<DataType> inputs = {DataType::kFloat, DataType::kDouble, DataType::kFloat16, DataType::kBFloat16,
                                        DataType::kInt32};
  const std::vector<DataType> outputs = {
      DataType::kUint8,        DataType::kInt8,           DataType::kUint16,      DataType::kInt16,
      DataType::kUint4,        DataType::kInt4,           DataType::kUint2,       DataType::kInt2,
      DataType::kFloat8E4M3FN, DataType::kFloat8E4M3FNUZ, DataType::kFloat8E5M2, DataType::kFloat8E5M2FNUZ,
      DataType::kFloat4E2M1};
  // One computation serves every version; they differ in the attributes they allow (saturate 19, block_size and
  // output_dtype 21, precision 23) and in the type lists (T1: x, y_scale up to 21; T2: y_scale, T3: y from 23;
  // float8e8m0 scales from 24). T2 is the zero point / output up to 21, hence its union.
  r.Add({.op = "QuantizeLinear",
         .since = 10,
         .types = {{"T1", inputs},
                   {"T2", dtypes::Concat(dtypes::Concat(outputs, inputs), {DataType::kFloat8E8M0})},
                   {"T3", outputs}},
         .create = MakeKernel<QuantizeLinear>});
}

}  // namespace ferry::ref
