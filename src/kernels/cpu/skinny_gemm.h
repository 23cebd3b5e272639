// A product of a few rows against a large constant matrix, c[m, n] = a[m, k] · b[k, n] + bias[n], for m up to
// kMaxSkinnyRows: a decoder's step ([1, d] · [d, 4d]), a classifier's head at batch 1, a detector's box head over a
// few boxes. Such a product reads each element of b once for m multiply-adds: it runs at the speed b streams from
// memory, which oneDNN 2.6's gemm does not reach on AVX2 (Faster R-CNN's box head, [9, 12544] · [12544, 1024], took
// 15.4 ms against ONNX Runtime's 9.7: bench/op_bench.py --only MatMul). Here b is read in place, row-major (its row
// stride ldb may exceed n), in blocks of kBlockCols columns split over the threads; within a block, chunks of
// kChunkRows rows of b stay in L2 while every tile of up to 3 rows of a passes over them (3 x 4 vector accumulators,
// 32 columns at a time, the last ones masked). AVX2 + FMA (the caller's KernelDef guarantees them).
#pragma once

#include <cstdint>

namespace ferry::cpu {

inline constexpr int64_t kMaxSkinnyRows = 16;

// c = a · b (+ bias when not null), m in [1, kMaxSkinnyRows], k >= 1, n >= 1; lda, ldb, ldc in floats.
void SkinnyGemmAvx2(int threads, int64_t m, int64_t k, int64_t n, const float* a, int64_t lda, const float* b,
                    int64_t ldb, const float* bias, float* c, int64_t ldc);

}  // namespace ferry::cpu
