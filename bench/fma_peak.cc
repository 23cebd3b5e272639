// The machine's measured single-thread float32 peak: independent FMA chains in registers, AVX-512 and AVX2
// (whichever the CPU has), best of several trials. docs/performance.md relates model GFLOP/s to this figure.
//   build/bin/ferry-fma-peak
#include <immintrin.h>

#include <chrono>
#include <cstdio>

#include "core/isa.h"

namespace {

constexpr long kIterations = 100'000'000;

// 12 independent chains of 4-cycle-latency FMAs keep two FMA ports busy (the chains' results are summed at the
// end, and FMA is not reassociated without -ffast-math, so the compiler must do every one).
__attribute__((target("avx512f"))) double Avx512Gflops() {
  __m512 acc[12];
  for (int i = 0; i < 12; ++i) acc[i] = _mm512_set1_ps(1.0f + static_cast<float>(i) * 1e-3f);
  const __m512 a = _mm512_set1_ps(0.999999f), b = _mm512_set1_ps(1e-7f);
  const auto t0 = std::chrono::steady_clock::now();
  for (long it = 0; it < kIterations; ++it) {
    for (int i = 0; i < 12; ++i) acc[i] = _mm512_fmadd_ps(acc[i], a, b);
  }
  const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  __m512 sum = acc[0];
  for (int i = 1; i < 12; ++i) sum = _mm512_add_ps(sum, acc[i]);
  float out[16];
  _mm512_storeu_ps(out, sum);
  volatile float sink = out[0];
  (void)sink;
  return 2.0 * 16 * 12 * static_cast<double>(kIterations) / s / 1e9;
}

__attribute__((target("avx2,fma"))) double Avx2Gflops() {
  __m256 acc[12];
  for (int i = 0; i < 12; ++i) acc[i] = _mm256_set1_ps(1.0f + static_cast<float>(i) * 1e-3f);
  const __m256 a = _mm256_set1_ps(0.999999f), b = _mm256_set1_ps(1e-7f);
  const auto t0 = std::chrono::steady_clock::now();
  for (long it = 0; it < kIterations; ++it) {
    for (int i = 0; i < 12; ++i) acc[i] = _mm256_fmadd_ps(acc[i], a, b);
  }
  const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  float out[8];
  __m256 sum = acc[0];
  for (int i = 1; i < 12; ++i) sum = _mm256_add_ps(sum, acc[i]);
  _mm256_storeu_ps(out, sum);
  volatile float sink = out[0];
  (void)sink;
  return 2.0 * 8 * 12 * static_cast<double>(kIterations) / s / 1e9;
}

template <typename F>
double Best(F f, int trials = 3) {
  double best = 0;
  for (int i = 0; i < trials; ++i) best = std::max(best, f());
  return best;
}

}  // namespace

int main() {
  const ferry::IsaSet host = ferry::DetectHostIsa();
  std::printf("host ISA: %s\n", host.ToString().c_str());
  if (host.contains(ferry::IsaSet{ferry::Isa::kAvx512f})) {
    std::printf("avx512f  fp32 FMA peak, 1 thread: %.1f GFLOP/s\n", Best(Avx512Gflops));
  }
  if (host.contains(ferry::IsaSet{ferry::Isa::kAvx2, ferry::Isa::kFma})) {
    std::printf("avx2,fma fp32 FMA peak, 1 thread: %.1f GFLOP/s\n", Best(Avx2Gflops));
  }
  return 0;
}
