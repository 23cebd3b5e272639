// QLinearMatMul: quantized matrix product. acc = (a - a_zero_point)·(b - b_zero_point) in int32, then
// y = saturate(round_half_even(acc · a_scale·b_scale/y_scale) + y_zero_point). a_scale/a_zero_point may be per row
// of A and b_scale/b_zero_point per column of B. From opset 21 the scales may be float16/bfloat16; the scale product
// is then rounded to that type at each step, as the ONNX reference computes it.
// Opset 21 also allows float8 a, b and y (e4m3fn, e4m3fnuz, e5m2, e5m2fnuz, in any mix with int8/uint8). The ONNX
// reference has no float8 path (it casts to int32 and asks np.iinfo for the output range), so this follows the
// operator's definition: with a float8 operand, acc is the float32 product of the dequantized-minus-zero-point
// operands; a float8 y is acc·scale + y_zero_point converted to y's type with round-to-nearest-even, saturating
// (out-of-range values and infinities become the largest finite value), as QuantizeLinear does with saturate=1.
#include <vector>

#include "core/float8.h"
#include "kernels/kernel_def.h"
#include "kernels/ref/common.h"
#include "kernels/ref/gemm.h"
#include "kernels/ref/quant_util.h"
#include "kernels/ref/quantize_util.h"
#include "kernels/registry.h"

namespace ferry::ref {
namespace {

float RoundTo(DataType t, float v) {
  if (t == DataType::kFloat16) return static_cast<float>(Float16(v));
  if (t == DataType::kBFloat16) return static_cast<float>(BFloat16(v));
  return v;
}

bool IsFloat8(DataType t) {
  return t == DataType::kFloat8E4M3FN || t == DataType::kFloat8E4M3FNUZ || t == DataType::kFloat8E5M2 ||
         t == DataType::kFloat8E5M2FNUZ;
}

// The values of a zero-point tensor of any of the op's types (int8, uint8, float8) as doubles; {0} when omitted.
std::vector<double> ZeroPointValues(const Tensor* t) { return t ? QuantTensorAsDoubles(*t) : std::vector<double>{0.0}; }

// The matrix operand `t` (int8, uint8 or float8) as float minus its zero point, laid out like WidenMinusZeroPoint
// (zp's size passed CheckZeroPointCount).
std::vector<float> DequantMinusZeroPoint(const Tensor& t, const std::vector<double>& zp, bool per_row, int64_t rows,
                                         int64_t cols) {
  const int64_t zn = static_cast<int64_t>(zp.size());
  const int64_t per_matrix = per_row ? rows : cols;
  std::vector<float> v(static_cast<size_t>(t.size()));
  for (int64_t i = 0; i < t.size(); ++i) {
    int64_t z = 0;
    if (zn != 1) {
      const int64_t mat = i / (rows * cols), r = (i / cols) % rows, c = i % cols;
      const int64_t idx = per_row ? r : c;
      z = zn == per_matrix ? idx : mat * per_matrix + idx;
    }
    v[static_cast<size_t>(i)] = static_cast<float>(QuantElementAsDouble(t, i) - zp[static_cast<size_t>(z)]);
  }
  return v;
}

class QLinearMatMul : public OpKernel {
 public:
  explicit QLinearMatMul(const ir::Node&) {}

  // The product's geometry, and the dtypes and sizes of the scales and zero points.
  void Prepare(PrepareContext& ctx) const override {
    const std::string what = ctx.Describe();
    const InputSpec& a = ctx.tensor_input(0);
    const InputSpec& b = ctx.tensor_input(3);
    Plan plan{PlanMatMul(a.shape, b.shape, what), IsFloat8(a.dtype) || IsFloat8(b.dtype)};
    const MatMulPlan& p = plan.mm;
    // Input i's element count after checking it is a float, float16 or bfloat16 scale (ReadScales' rule).
    auto scale_count = [&](int i, const char* name) {
      const InputSpec& t = ctx.tensor_input(i);
      if (t.dtype != DataType::kFloat && t.dtype != DataType::kFloat16 && t.dtype != DataType::kBFloat16) {
        throw UnsupportedError(what + " " + name + ": scale of type " + std::string(DataTypeName(t.dtype)) +
                               " is not supported");
      }
      return ShapeElementCount(t.shape);
    };
    const int64_t na = scale_count(1, "a_scale"), nb = scale_count(4, "b_scale"), ny = scale_count(6, "y_scale");
    const int64_t nyzp = ctx.has_input(7) ? ShapeElementCount(ctx.tensor_input(7).shape) : 1;
    if ((na != 1 && na != p.m) || (nb != 1 && nb != p.n) || ny != 1 || nyzp != 1) {
      throw InvalidArgumentError(what + ": a_scale must have 1 or M values, b_scale 1 or N values, y_scale and "
                                 "y_zero_point one value each");
    }
    const DataType out_type = ctx.has_input(7) ? ctx.tensor_input(7).dtype : a.dtype;
    if (out_type != DataType::kInt8 && out_type != DataType::kUint8 && !IsFloat8(out_type)) {
      throw UnsupportedError(what + ": output type " + std::string(DataTypeName(out_type)) + " is not supported");
    }
    // Both operands and their zero points (WidenInt8's and ReadZeroPoints' type rules on the integer path).
    const struct {
      const InputSpec& t;
      int zp;
      bool per_row;
      int64_t rows, cols;
      const char* name;
    } operands[] = {{a, 2, true, p.m, p.k, " a_zero_point"}, {b, 5, false, p.k, p.n, " b_zero_point"}};
    for (const auto& o : operands) {
      const std::string name = what + o.name;
      if (!plan.float_operands) {
        if (o.t.dtype != DataType::kInt8 && o.t.dtype != DataType::kUint8) {
          throw UnsupportedError(name + ": data type " + std::string(DataTypeName(o.t.dtype)) +
                                 " is not supported (int8 or uint8 expected)");
        }
        if (ctx.has_input(o.zp)) {
          const DataType zt = ctx.tensor_input(o.zp).dtype;
          if (zt != DataType::kInt8 && zt != DataType::kUint8 && zt != DataType::kInt32) {
            throw UnsupportedError(name + ": zero point of type " + std::string(DataTypeName(zt)) +
                                   " is not supported");
          }
        }
      }
      const int64_t zn = ctx.has_input(o.zp) ? ShapeElementCount(ctx.tensor_input(o.zp).shape) : 1;
      CheckZeroPointCount(zn, ShapeElementCount(o.t.shape), o.per_row, o.rows, o.cols, name);
    }
    ctx.SetOutput(0, out_type, p.out_shape);
    ctx.EmplaceState(std::move(plan));
  }

  void Compute(KernelContext& ctx) const override {
    const Tensor& a = ctx.required_input(0);
    const Tensor& a_scale_t = ctx.required_input(1);
    const Tensor& b = ctx.required_input(3);
    const Tensor& y_scale_t = ctx.required_input(6);
    const Tensor* yzp_t = ctx.input(7);
    const Plan& plan = ctx.state<Plan>();
    const MatMulPlan& p = plan.mm;
    // Prepare checked every dtype and size: the readers below cannot throw.
    const std::vector<float> a_scale = ReadScales(a_scale_t, {});
    const std::vector<float> b_scale = ReadScales(ctx.required_input(4), {});
    const std::vector<float> y_scale = ReadScales(y_scale_t, {});
    const std::vector<double> yzp = ZeroPointValues(yzp_t);
    const bool float_operands = plan.float_operands;
    std::vector<int32_t> a32, b32;
    std::vector<float> af, bf;
    if (float_operands) {
      af = DequantMinusZeroPoint(a, ZeroPointValues(ctx.input(2)), true, p.m, p.k);
      bf = DequantMinusZeroPoint(b, ZeroPointValues(ctx.input(5)), false, p.k, p.n);
    } else {
      a32 = WidenMinusZeroPoint(a, ReadZeroPoints(ctx.input(2), {}), true, p.m, p.k, {});
      b32 = WidenMinusZeroPoint(b, ReadZeroPoints(ctx.input(5), {}), false, p.k, p.n, {});
    }
    Tensor& y = ctx.Output(0);
    const DataType out_type = y.dtype();
    if (y.size() == 0) return;
    // acc(i) as double: the exact int32 product, or the float32 one.
    std::vector<double> acc(static_cast<size_t>(y.size()));
    if (float_operands) {
      std::vector<float> accf(acc.size());
      MatMulF32(p, af.data(), bf.data(), accf.data(), ctx.threads());
      for (size_t i = 0; i < acc.size(); ++i) acc[i] = accf[i];
    } else {
      std::vector<int32_t> acci(acc.size());
      MatMulInt32(p, a32.data(), b32.data(), acci.data(), ctx.threads());
      for (size_t i = 0; i < acc.size(); ++i) acc[i] = acci[i];
    }
    const DataType st = a_scale_t.dtype();
    // Scale per (row, column): a_scale·b_scale/y_scale in the scales' own precision.
    std::vector<float> scale(a_scale.size() * b_scale.size());
    for (size_t i = 0; i < a_scale.size(); ++i)
      for (size_t j = 0; j < b_scale.size(); ++j)
        scale[i * b_scale.size() + j] = RoundTo(st, RoundTo(st, a_scale[i] * b_scale[j]) / y_scale[0]);
    const int64_t nb = static_cast<int64_t>(b_scale.size()), na = static_cast<int64_t>(a_scale.size());
    auto scaled = [&](int64_t i) {
      const int64_t col = i % p.n, row = (i / p.n) % p.m;
      const float s = scale[static_cast<size_t>((na == 1 ? 0 : row) * nb + (nb == 1 ? 0 : col))];
      return acc[static_cast<size_t>(i)] * s;
    };
    const auto zp = static_cast<int32_t>(yzp[0]);
    if (out_type == DataType::kInt8) {
      for (int64_t i = 0; i < y.size(); ++i) y.data<int8_t>()[i] = SaturateRound<int8_t>(scaled(i), zp);
    } else if (out_type == DataType::kUint8) {
      for (int64_t i = 0; i < y.size(); ++i) y.data<uint8_t>()[i] = SaturateRound<uint8_t>(scaled(i), zp);
    } else {
      for (int64_t i = 0; i < y.size(); ++i) {
        y.data<uint8_t>()[i] = DoubleToSmallFloat(out_type, scaled(i) + yzp[0], /*saturate=*/true);
      }
    }
  }

 private:
  struct Plan {
    MatMulPlan mm;
    bool float_operands;  // a float8 operand: the product runs in float32
  };
};

}  // namespace

void RegisterQLinearMatMulKernels(KernelRegistry& r) {
  const std::vector<DataType> q8 = {DataType::kInt8,         DataType::kUint8,      DataType::kFloat8E4M3FN,
                                    DataType::kFloat8E4M3FNUZ, DataType::kFloat8E5M2, DataType::kFloat8E5M2FNUZ};
  r.Add({.op = "QLinearMatMul",
         .since = 10,
         .types = {{"T1", q8},
                   {"T2", q8},
                   {"T3", q8},
                   {"TS", {DataType::kFloat, DataType::kFloat16, DataType::kBFloat16}}},
         .create = MakeKernel<QLinearMatMul>});
}

}  // namespace ferry::ref
