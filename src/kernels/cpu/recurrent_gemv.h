// The per-step recurrence product of the cpu LSTM, GRU and RNN kernels for small batches: c[m, n] = a[m, k] * B[k, n] +
// beta * c with B (a column range of R^T, constant over the run) packed once into panels of `width` columns (four
// vector registers: 32 on AVX2, 64 on AVX-512; [panel][k][width], the last one zero-padded), so each step streams B
// linearly with no per-call packing; AVX2+FMA and AVX-512F variants, rows in tiles of 1 or 2 against one panel while it
// sits in L1, panels split over threads, walked in alternating directions (see SmallGemm). Larger batches stay with
// dnnl_sgemm (see SmallGemm).
#pragma once

#include <cstdint>
#include <vector>

namespace ferry::cpu::recurrent {

// The vector ISA one kernel instance runs (its KernelDef's .isa guarantees the host has it).
enum class Simd { kNone, kAvx2, kAvx512 };

struct Panels {
  int64_t k = 0, n = 0, width = 0;  // width: columns per panel (0: not packed, no vector ISA on this host)
  std::vector<float> data;
  int64_t count() const { return width == 0 ? 0 : (n + width - 1) / width; }
};

// Packs columns [0, n) of the row-major b[k, ldb] for `simd` (width 0, nothing packed, for kNone).
Panels PackPanels(Simd simd, const float* b, int64_t ldb, int64_t k, int64_t n);

// The batch sizes SmallGemm serves (1..kMaxRows); above, dnnl_sgemm's blocking wins.
inline constexpr int64_t kMaxSmallRows = 8;

// c[m, n] = a[m, k] * B + beta * c (beta 0 or 1; row-major, lda/ldc in floats) with the ISA p was packed for, when
// p is packed and m is at most kMaxSmallRows; returns false, touching nothing, otherwise. `reverse` walks the
// panels last to first: alternating it from step to step starts each step on the panels the previous one left in
// L2 (B is usually larger than L2, which a same-order stream would flush entirely every step).
bool SmallGemm(int threads, int64_t m, const float* a, int64_t lda, const Panels& p, bool reverse, float beta,
               float* c, int64_t ldc);

}  // namespace ferry::cpu::recurrent
