// MatMulInteger: int32 matrix product of (A - a_zero_point) and (B - b_zero_point), numpy batching; zero points
// per tensor, per row of A or per column of B. Also defines the integer helpers QLinearMatMul shares.
#include <algorithm>
#include <string>
#include <vector>

#include "core/parallel.h"
#include "kernels/kernel_def.h"
#include "kernels/ref/common.h"
#include "kernels/ref/gemm.h"
#include "kernels/ref/quant_util.h"
#include "kernels/registry.h"

namespace ferry::ref {

// Throws InvalidArgumentError naming `what` unless a zero point of `zn` values fits a matrix operand of `size`
// elements: one value, one per row of A / column of B (per_row), or one per row / column of every matrix.
void CheckZeroPointCount(int64_t zn, int64_t size, bool per_row, int64_t rows, int64_t cols, const std::string& what) {
  const int64_t per_matrix = per_row ? rows : cols;
  const int64_t matrices = rows > 0 && cols > 0 ? size / (rows * cols) : 0;
  if (zn != 1 && zn != per_matrix && zn != per_matrix * matrices) {
    throw InvalidArgumentError(what + ": zero point has " + std::to_string(zn) + " values, expected 1 or " +
                               std::to_string(per_matrix) + " (one per " + (per_row ? "row" : "column") + ")");
  }
}

std::vector<int32_t> WidenMinusZeroPoint(const Tensor& t, const std::vector<int32_t>& zp, bool per_row, int64_t rows,
                                         int64_t cols, const std::string& what) {
  std::vector<int32_t> v = WidenInt8(t, what);
  const int64_t zn = static_cast<int64_t>(zp.size());
  const int64_t per_matrix = per_row ? rows : cols;
  CheckZeroPointCount(zn, t.size(), per_row, rows, cols, what);
  for (int64_t i = 0; i < t.size(); ++i) {
    int64_t z = 0;
    if (zn != 1) {
      const int64_t mat = i / (rows * cols), r = (i / cols) % rows, c = i % cols;
      const int64_t idx = per_row ? r : c;
      z = zn == per_matrix ? idx : mat * per_matrix + idx;
    }
    v[static_cast<size_t>(i)] -= zp[static_cast<size_t>(z)];
  }
  return v;
}

void MatMulInt32(const MatMulPlan& p, const int32_t* a, const int32_t* b, int32_t* y, int threads) {
  const int64_t batches = static_cast<int64_t>(p.a_offsets.size());
  const int64_t min_rows = std::max<int64_t>(1, 16384 / std::max<int64_t>(1, p.n * p.k));
  ParallelFor(threads, batches * p.m, min_rows, [&](int64_t begin, int64_t end) {
    for (int64_t r = begin; r < end;) {
      const int64_t i = r / p.m, row = r % p.m;
      const int64_t rows = std::min(end - r, p.m - row);
      GemmSimple(false, false, rows, p.n, p.k, a + p.a_offsets[static_cast<size_t>(i)] + row * p.k, p.k,
                 b + p.b_offsets[static_cast<size_t>(i)], p.n, false, y + r * p.n, p.n);
      r += rows;
    }
  });
}

namespace {

class MatMulInteger : public OpKernel {
 public:
  explicit MatMulInteger(const ir::Node&) {}

  // The product's geometry, and the type and size rules of ReadZeroPoints / WidenMinusZeroPoint on the shapes.
  void Prepare(PrepareContext& ctx) const override {
    const InputSpec& a = ctx.tensor_input(0);
    const InputSpec& b = ctx.tensor_input(1);
    const MatMulPlan& p = ctx.EmplaceState(PlanMatMul(a.shape, b.shape, ctx.Describe()));
    const std::string what = ctx.Describe();
    const struct {
      const InputSpec& t;
      int zp;
      bool per_row;
      int64_t rows, cols;
      const char* name;
    } operands[] = {{a, 2, true, p.m, p.k, " a_zero_point"}, {b, 3, false, p.k, p.n, " b_zero_point"}};
    for (const auto& o : operands) {
      if (!ctx.has_input(o.zp)) continue;
      const DataType zt = ctx.tensor_input(o.zp).dtype;
      if (zt != DataType::kInt8 && zt != DataType::kUint8 && zt != DataType::kInt32) {
        throw UnsupportedError(what + o.name + ": zero point of type " + std::string(DataTypeName(zt)) +
                               " is not supported");
      }
    }
    for (const auto& o : operands) {
      if (o.t.dtype != DataType::kInt8 && o.t.dtype != DataType::kUint8) {
        throw UnsupportedError(what + o.name + ": data type " + std::string(DataTypeName(o.t.dtype)) +
                               " is not supported (int8 or uint8 expected)");
      }
      const int64_t zn = ctx.has_input(o.zp) ? ShapeElementCount(ctx.tensor_input(o.zp).shape) : 1;
      CheckZeroPointCount(zn, ShapeElementCount(o.t.shape), o.per_row, o.rows, o.cols, what + o.name);
    }
    ctx.SetOutput(0, DataType::kInt32, p.out_shape);
  }

  void Compute(KernelContext& ctx) const override {
    const Tensor& a = ctx.required_input(0);
    const Tensor& b = ctx.required_input(1);
    const MatMulPlan& p = ctx.state<MatMulPlan>();
    // Prepare checked every dtype and size: the readers below cannot throw.
    const std::vector<int32_t> azp = ReadZeroPoints(ctx.input(2), {});
    const std::vector<int32_t> bzp = ReadZeroPoints(ctx.input(3), {});
    const std::vector<int32_t> a32 = WidenMinusZeroPoint(a, azp, true, p.m, p.k, {});
    const std::vector<int32_t> b32 = WidenMinusZeroPoint(b, bzp, false, p.k, p.n, {});
    Tensor& y = ctx.Output(0);
    if (y.size() == 0) return;
    MatMulInt32(p, a32.data(), b32.data(), y.data<int32_t>(), ctx.threads());
  }
};

}  // namespace

void RegisterMatMulIntegerKernels(KernelRegistry& r) {
  r.Add({.op = "MatMulInteger",
         .since = 10,
         .types = {{"T1", {DataType::kInt8, DataType::kUint8}},
                   {"T2", {DataType::kInt8, DataType::kUint8}},
                   {"T3", {DataType::kInt32}}},
         .create = MakeKernel<MatMulInteger>});
}

}  // namespace ferry::ref
