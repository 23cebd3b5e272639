// A product of a few rows against a large constant matrix, c[m, n] = a[m, k] · b[k, n] + bias[n], for m up to
// kMaxSkinnyRows: a decoder's step ([1, d] · [d, 4d]), a classifier's head at batch 1, a detector's box head over a
// few boxes. Such a product reads each element of b once for m multiply-adds: it runs at the speed b streams from
// memory, which oneDNN 2.6's gemm does not reach on AVX2 (Faster R-CNN's box head, [9, 12544] · [12544, 1024], took
// 1.59x ONNX Runtime's node time, a decoder step's [1, 768] · [768, 3072] 0.92x: bench/op_bench.py --only MatMul).
// Here b is read in place, row-major (its row stride ldb may exceed n), row after row: c's rows (m x the task's
// columns, in L1/L2) start as the bias, then every pass adds eight (then four, then one) rows of b, slab by slab of
// kSlabCols columns kept in L1 while every row of c, two at a time, passes over it. Columns are split over the
// threads in units of kBlockCols. AVX2 + FMA (the caller's KernelDef guarantees them). Figures:
// docs/performance.md, "Kernel design measurements".
#pragma once

#include <cstdint>

namespace ferry::cpu {

inline constexpr int64_t kMaxSkinnyRows = 16;

// c = a · b (+ bias when not null), m in [1, kMaxSkinnyRows], k >= 1, n >= 1; lda, ldb, ldc in floats.
void SkinnyGemmAvx2(int threads, int64_t m, int64_t k, int64_t n, const float* a, int64_t lda, const float* b,
                    int64_t ldb, const float* bias, float* c, int64_t ldc);

}  // namespace ferry::cpu
