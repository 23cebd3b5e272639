// The reference backend's shared matrix multiply. GemmF32 is the one fast path (cache-blocked, packed panels,
// an auto-vectorised micro-kernel, parallel over row/column blocks); Conv, ConvTranspose, MatMul, Gemm and the
// other float matrix products all go through it. GemmSimple is a plain loop for the other element types.
#pragma once

#include <cstdint>
#include <string>
#include <type_traits>
#include <vector>

#include "ferry/tensor.h"

namespace ferry {
class Workspace;
}

namespace ferry::ref {

// C[m×n] = alpha · op(A)[m×k] · op(B)[k×n] + beta · C. All matrices are row-major with row strides lda/ldb/ldc:
// op(A) is A (m×k) or, with trans_a, the transpose of A stored k×m; likewise op(B) is B (k×n) or Bᵀ (B stored
// n×k). beta == 0 overwrites C without reading it (so C may hold garbage or NaN). Splits the work over `threads`
// threads; pass 1 when the caller is already running in parallel.
void GemmF32(bool trans_a, bool trans_b, int64_t m, int64_t n, int64_t k, float alpha, const float* a, int64_t lda,
             const float* b, int64_t ldb, float beta, float* c, int64_t ldc, int threads);
// Records in `ws` (PrepareContext::workspace) the packing panels GemmF32 keeps for an m×n×k product (alpha != 0)
// with `threads`: "ref GEMM A panels" and "ref GEMM B panels", per thread that runs one of its blocks (the
// OpenMP team's threads; thread_local, kept for the thread's life and shared by every caller). Matrix-vector
// products keep none. `callers`: how many threads call GemmF32 at once (each from its own parallel task).
void AddGemmF32Workspace(int64_t m, int64_t n, int64_t k, int threads, Workspace& ws, int callers = 1);
// Bytes the calling thread's packing panels hold now (what its GemmF32 blocks have grown them to), for tests.
int64_t GemmF32PanelBytesOnThisThread();

// Same contract as GemmF32 (alpha = 1) for any arithmetic type, as a plain loop: C = op(A)·op(B) + (accumulate ?
// C : 0). Integer products wrap around like numpy's (computed in unsigned arithmetic, then truncated to T).
template <typename T>
void GemmSimple(bool trans_a, bool trans_b, int64_t m, int64_t n, int64_t k, const T* a, int64_t lda, const T* b,
                int64_t ldb, bool accumulate, T* c, int64_t ldc) {
  // Integers accumulate in an unsigned type of at least 32 bits: wrap-around without undefined behaviour, and the
  // low bits equal those of the exact product.
  using AccT = std::conditional_t<std::is_integral_v<T>, std::conditional_t<(sizeof(T) > 4), uint64_t, uint32_t>, T>;
  std::vector<AccT> row(static_cast<size_t>(n));
  std::vector<AccT> bt;
  if (trans_b) {  // op(B) into a contiguous k×n buffer so the inner loop is a unit-stride walk
    bt.resize(static_cast<size_t>(k * n));
    for (int64_t p = 0; p < k; ++p)
      for (int64_t j = 0; j < n; ++j) bt[static_cast<size_t>(p * n + j)] = static_cast<AccT>(b[j * ldb + p]);
  }
  for (int64_t i = 0; i < m; ++i) {
    for (int64_t j = 0; j < n; ++j) row[static_cast<size_t>(j)] = accumulate ? static_cast<AccT>(c[i * ldc + j]) : AccT{};
    for (int64_t p = 0; p < k; ++p) {
      const AccT av = static_cast<AccT>(trans_a ? a[p * lda + i] : a[i * lda + p]);
      if (trans_b) {
        const AccT* br = bt.data() + p * n;
        for (int64_t j = 0; j < n; ++j) row[static_cast<size_t>(j)] += av * br[j];
      } else {
        const T* br = b + p * ldb;
        for (int64_t j = 0; j < n; ++j) row[static_cast<size_t>(j)] += av * static_cast<AccT>(br[j]);
      }
    }
    for (int64_t j = 0; j < n; ++j) c[i * ldc + j] = static_cast<T>(row[static_cast<size_t>(j)]);
  }
}

// numpy matmul semantics for shapes a and b (MatMul, MatMulInteger, QLinearMatMul): 1-D operands are promoted
// to a row (a) or column (b) vector and the added dim removed from the result; batch dims broadcast.
struct MatMulPlan {
  int64_t m = 0, n = 0, k = 0;
  Shape out_shape;
  // Per output matrix (row-major over the broadcast batch dims): element offsets of its A and B matrices.
  std::vector<int64_t> a_offsets, b_offsets;
  // True when B has no batch dims of its own (or only 1s): every batch uses the same B, and because A's matrices
  // are then contiguous the whole product is one [batch·m × k]·[k × n] GEMM.
  bool b_shared = false;
};
// Defined in matmul.cc; throws InvalidArgumentError naming `what` for scalars or mismatched K / batch dims.
MatMulPlan PlanMatMul(const Shape& a, const Shape& b, const std::string& what);
// y = a · b for float32 operands laid out as `p` describes (defined in matmul.cc; the ref MatMul's float path,
// also run by FusedMatMul): one GEMM when B is shared, else one per matrix; writes every element of y.
void MatMulF32(const MatMulPlan& p, const float* a, const float* b, float* y, int threads);
// What MatMulF32 keeps for `p` with `threads` (AddGemmF32Workspace).
void AddMatMulF32Workspace(const MatMulPlan& p, int threads, Workspace& ws);
// float and the 16-bit floats, whose products run GemmF32 (the 16-bit ones through float copies).
inline bool GemmsAsFloat(DataType t) {
  return t == DataType::kFloat || t == DataType::kFloat16 || t == DataType::kBFloat16;
}

// Element-wise conversion between a storage type (float16, bfloat16, float, ...) and float work buffers, so the
// 16-bit float types compute through GemmF32.
template <typename T>
std::vector<float> ToFloatVector(const T* p, int64_t n) {
  std::vector<float> out(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i) out[static_cast<size_t>(i)] = static_cast<float>(p[i]);
  return out;
}
template <typename T>
void FromFloatVector(const std::vector<float>& v, T* out) {
  for (size_t i = 0; i < v.size(); ++i) out[i] = T(v[i]);
}

}  // namespace ferry::ref
