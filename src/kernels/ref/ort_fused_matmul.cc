// com.microsoft FusedMatMul and TransposeMatMul (schemas_com_microsoft_fused.cc): Y = alpha * MatMul(op(A), op(B))
// with numpy MatMul semantics on the transformed operands. op: `transBatchA` / `transBatchB` first move an
// operand's dim 0 past its batch dims ([d0, d1, ..., dk, r, c] -> [d1, ..., dk, r, d0, c], the Transpose ONNX
// Runtime's matmul_transpose_fusion folds in; it needs both operands of the same rank >= 3, as ONNX Runtime's
// MatMulComputeHelper demands), then `transA` / `transB` swap the last two dims. A 1-D operand is not
// transposed (ONNX Runtime ignores transA / transB on it as well). TransposeMatMul has no transBatch attributes.
// The transposes are strides (no copy): each output matrix is one GemmF32 (float; float16 / bfloat16 through
// float copies) or GemmSimple (double) over its operands' matrices, with op's transpose flags and leading
// dimensions; one GEMM over every row when B is shared and A's matrices are contiguous rows.
#include <algorithm>
#include <string>
#include <utility>
#include <vector>

#include "core/parallel.h"
#include "kernels/kernel_def.h"
#include "kernels/ref/common.h"
#include "kernels/ref/gemm.h"
#include "kernels/registry.h"
#include "semantics/matmul.h"

namespace ferry::ref {
namespace {

// One operand as MatMul sees it: its logical dims and the element strides of each into the stored tensor.
struct StridedOperand {
  Shape dims;
  std::vector<int64_t> strides;
};

StridedOperand Transposed(const Shape& stored, bool trans_batch, bool trans) {
  StridedOperand o{stored, Strides(stored)};
  const size_t r = stored.size();
  if (r < 2) return o;
  if (trans_batch && r > 2) {
    std::rotate(o.dims.begin(), o.dims.begin() + 1, o.dims.end() - 1);
    std::rotate(o.strides.begin(), o.strides.begin() + 1, o.strides.end() - 1);
  }
  if (trans) {
    std::swap(o.dims[r - 1], o.dims[r - 2]);
    std::swap(o.strides[r - 1], o.strides[r - 2]);
  }
  return o;
}

// How GemmF32 reads one operand's [rows x cols] matrix with strides (row, col): as stored (col stride 1, leading
// dimension = row stride) or transposed (row stride 1, leading dimension = col stride).
struct MatrixAccess {
  bool trans = false;
  int64_t ld = 0;
};

MatrixAccess AccessOf(int64_t rows, int64_t cols, int64_t row_stride, int64_t col_stride) {
  // One of the two is 1: the stored tensor's last dim ends up as the matrix's rows or columns.
  if (col_stride == 1) return {false, std::max(row_stride, cols)};
  return {true, std::max(col_stride, rows)};
}

struct Plan {
  int64_t m = 0, k = 0, n = 0;
  Shape y_shape;
  std::vector<int64_t> a_offsets, b_offsets;  // per output matrix, into A and B
  MatrixAccess a, b;
  bool one_gemm = false;  // B shared, A's matrices contiguous rows: one [batches*m x k] product
};

Plan MakePlan(const Shape& a_stored, const Shape& b_stored, bool tba, bool ta, bool tbb, bool tb,
              const std::string& what) {
  if ((tba || tbb) && (a_stored.size() < 3 || a_stored.size() != b_stored.size())) {
    throw InvalidArgumentError(what + ": transBatchA / transBatchB need A and B of the same rank >= 3, got A " +
                               ShapeToString(a_stored) + " and B " + ShapeToString(b_stored));
  }
  const StridedOperand a = Transposed(a_stored, tba, ta);
  const StridedOperand b = Transposed(b_stored, tbb, tb);
  const semantics::MatMulShape s = semantics::ResolveMatMul(a.dims, b.dims, what);
  Plan p;
  p.m = s.m;
  p.k = s.k;
  p.n = s.n;
  p.y_shape = s.y_shape;
  const size_t ra = a.dims.size(), rb = b.dims.size();
  // The matrix strides: a 1-D A is a row [1, K], a 1-D B a column [K, 1].
  const int64_t a_rs = ra >= 2 ? a.strides[ra - 2] : p.k, a_cs = ra >= 2 ? a.strides[ra - 1] : 1;
  const int64_t b_rs = rb >= 2 ? b.strides[rb - 2] : 1, b_cs = rb >= 2 ? b.strides[rb - 1] : 1;
  p.a = AccessOf(p.m, p.k, a_rs, a_cs);
  p.b = AccessOf(p.k, p.n, b_rs, b_cs);
  // Offsets of every output matrix's operands, the batch dims right-aligned (stride 0 where an operand
  // broadcasts or lacks the dim).
  const size_t nb = s.batch.size();
  const size_t ba = ra >= 2 ? ra - 2 : 0, bb = rb >= 2 ? rb - 2 : 0;
  const int64_t count = ShapeElementCount(s.batch);
  p.a_offsets.reserve(static_cast<size_t>(count));
  p.b_offsets.reserve(static_cast<size_t>(count));
  std::vector<int64_t> idx(nb, 0);
  for (int64_t i = 0; i < count; ++i) {
    int64_t ao = 0, bo = 0;
    for (size_t d = 0; d < nb; ++d) {
      if (d + ba >= nb && a.dims[d + ba - nb] != 1) ao += idx[d] * a.strides[d + ba - nb];
      if (d + bb >= nb && b.dims[d + bb - nb] != 1) bo += idx[d] * b.strides[d + bb - nb];
    }
    p.a_offsets.push_back(ao);
    p.b_offsets.push_back(bo);
    for (size_t d = nb; d-- > 0;) {
      if (++idx[d] < s.batch[d]) break;
      idx[d] = 0;
    }
  }
  bool one = count > 0 && !p.a.trans && p.a.ld == p.k;
  for (int64_t i = 0; one && i < count; ++i) {
    one = p.b_offsets[static_cast<size_t>(i)] == p.b_offsets[0] && p.a_offsets[static_cast<size_t>(i)] == i * p.m * p.k;
  }
  p.one_gemm = one;
  return p;
}

// Many small products: one single-threaded GemmF32 per matrix, the matrices split over the threads.
bool AcrossBatches(const Plan& p, int threads) {
  const int64_t batches = static_cast<int64_t>(p.a_offsets.size());
  const double flops = 2.0 * static_cast<double>(p.m) * static_cast<double>(p.n) * static_cast<double>(p.k);
  return !p.one_gemm && threads > 1 && batches >= 2 * threads && flops < 5e7;
}

void RunF32(const Plan& p, float alpha, const float* a, const float* b, float* y, int threads) {
  const int64_t batches = static_cast<int64_t>(p.a_offsets.size());
  if (p.one_gemm) {
    GemmF32(false, p.b.trans, batches * p.m, p.n, p.k, alpha, a, p.k, b + p.b_offsets[0], p.b.ld, 0.0f, y, p.n,
            threads);
    return;
  }
  auto one = [&](int64_t i, int t) {
    GemmF32(p.a.trans, p.b.trans, p.m, p.n, p.k, alpha, a + p.a_offsets[static_cast<size_t>(i)], p.a.ld,
            b + p.b_offsets[static_cast<size_t>(i)], p.b.ld, 0.0f, y + i * p.m * p.n, p.n, t);
  };
  if (AcrossBatches(p, threads)) {
    ParallelFor(threads, batches, 1, [&](int64_t begin, int64_t end) {
      for (int64_t i = begin; i < end; ++i) one(i, 1);
    });
    return;
  }
  for (int64_t i = 0; i < batches; ++i) one(i, threads);
}

class OrtFusedMatMul : public OpKernel {
 public:
  explicit OrtFusedMatMul(const ir::Node& node)
      : alpha_(node.GetFloat("alpha", 1.0f)),
        trans_a_(node.GetInt("transA", 0) != 0),
        trans_b_(node.GetInt("transB", 0) != 0),
        trans_batch_a_(node.GetInt("transBatchA", 0) != 0),
        trans_batch_b_(node.GetInt("transBatchB", 0) != 0) {}

  // The transposed operands' geometry for these shapes, and GemmF32's packing panels.
  void Prepare(PrepareContext& ctx) const override {
    const InputSpec& a = ctx.tensor_input(0);
    const InputSpec& b = ctx.tensor_input(1);
    if (a.dtype != b.dtype) {
      throw InvalidArgumentError(ctx.Describe() + ": A and B have different element types (" + ctx.InputString(0) +
                                 ", " + ctx.InputString(1) + ")");
    }
    const Plan& p = ctx.EmplaceState(
        MakePlan(a.shape, b.shape, trans_batch_a_, trans_a_, trans_batch_b_, trans_b_, ctx.Describe()));
    if (GemmsAsFloat(a.dtype) && p.m > 0 && p.n > 0 && !p.a_offsets.empty()) {
      const int64_t batches = static_cast<int64_t>(p.a_offsets.size());
      if (p.one_gemm) {
        AddGemmF32Workspace(batches * p.m, p.n, p.k, ctx.threads(), ctx.workspace());
      } else if (AcrossBatches(p, ctx.threads())) {
        AddGemmF32Workspace(p.m, p.n, p.k, 1, ctx.workspace(),
                            static_cast<int>(std::min<int64_t>(ctx.threads(), batches)));
      } else {
        AddGemmF32Workspace(p.m, p.n, p.k, ctx.threads(), ctx.workspace());
      }
    }
    ctx.SetOutput(0, a.dtype, p.y_shape);
  }

  void Compute(KernelContext& ctx) const override {
    const Tensor& a = ctx.required_input(0);
    const Tensor& b = ctx.required_input(1);
    const Plan& p = ctx.state<Plan>();
    Tensor& y = ctx.Output(0);  // zeroed: K = 0 leaves it so
    if (y.size() == 0 || p.k == 0) return;
    Dispatch(FloatTypes{}, a.dtype(), ctx, [&](auto tag) {
      using T = decltype(tag);
      if constexpr (std::is_same_v<T, float>) {
        RunF32(p, alpha_, a.data<float>(), b.data<float>(), y.data<float>(), ctx.threads());
      } else if constexpr (kIsHalf<T>) {
        const std::vector<float> af = ToFloatVector(a.data<T>(), a.size());
        const std::vector<float> bf = ToFloatVector(b.data<T>(), b.size());
        std::vector<float> yf(static_cast<size_t>(y.size()));
        RunF32(p, alpha_, af.data(), bf.data(), yf.data(), ctx.threads());
        FromFloatVector(yf, y.data<T>());
      } else {
        T* yp = y.data<T>();
        for (size_t i = 0; i < p.a_offsets.size(); ++i) {
          GemmSimple(p.a.trans, p.b.trans, p.m, p.n, p.k, a.data<T>() + p.a_offsets[i], p.a.ld,
                     b.data<T>() + p.b_offsets[i], p.b.ld, false, yp + static_cast<int64_t>(i) * p.m * p.n, p.n);
        }
        if (alpha_ != 1.0f) {
          for (int64_t i = 0; i < y.size(); ++i) yp[i] = static_cast<T>(yp[i] * static_cast<T>(alpha_));
        }
      }
    });
  }

 private:
  float alpha_;
  bool trans_a_, trans_b_, trans_batch_a_, trans_batch_b_;
};

}  // namespace

void RegisterOrtFusedMatMulKernels(KernelRegistry& r) {
  for (const char* op : {"FusedMatMul", "TransposeMatMul"}) {
    r.Add({.op = op,
           .domain = "com.microsoft",
           .since = 1,
           .types = {{"T", dtypes::Floats()}},
           .create = MakeKernel<OrtFusedMatMul>});
  }
}

}  // namespace ferry::ref
