// GridSample (opsets 16, 20, 22) on float32 X and grid: every rank ref takes (4-D from 16, any from 20), modes
// linear / nearest / cubic, padding zeros / border / reflection, align_corners either way. Ref's node code
// (ref/grid_sample.h) parses the attributes, checks the inputs and computes each spatial dim's taps (coordinate
// un-normalization, padding, weights), so the semantics live once; this kernel only sums the taps faster.
//
// The output is cut into segments of at most kSegment pixels along its innermost dim, threaded over (N, segment).
// A segment's taps are tabulated once for all channels: for each of the taps^r combinations k (ref's order, the
// innermost dim's tap fastest) the pixels' offsets into a channel plane (-1: zero padding) and weights, their
// product computed in double as ref does. The taps are summed in double, as ref sums (cubic weights are negative,
// and a float sum of large values would cancel away digits ref keeps):
//   - AVX2, 8 channels or more: on a channels-last copy of X, 8 channels of a pixel per pair of registers with
//     contiguous loads (the segment's [pixel][channel] result is transposed into Y);
//   - AVX2, fewer channels: per channel plane, 8 pixels at a time with masked gathers;
//   - scalar: per channel plane, pixel by pixel.
// Both AVX2 paths fuse each multiply-add, so they give the same bits. A plane of 2^31 or more elements (no 32-bit
// gather offsets) takes the channels-last path or the scalar sum. com.microsoft::GridSample-1 (ONNX Runtime's
// contrib op, GridSample-16's computation) is served by the same variants.
#include <immintrin.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>
#include <limits>
#include <string>
#include <vector>

#include "core/parallel.h"
#include "kernels/cpu/strided_copy.h"
#include "kernels/kernel_def.h"
#include "kernels/ref/common.h"
#include "kernels/ref/grid_sample.h"
#include "kernels/registry.h"

namespace ferry::cpu {
namespace {

constexpr int64_t kSegment = 256;  // output pixels per tap table
constexpr int64_t kLanes = 8;      // tables are padded to a multiple of the AVX2 width

// out[p] = sum_k w[k][p] * plane[off[k][p]] over the taps whose offset is >= 0, for p < count, summed in double
// as ref sums; row k of the table starts at k * stride.
template <typename Off>
void SumTapsScalar(const float* plane, const Off* off, const double* w, int64_t taps, int64_t stride, int64_t count,
                   float* out) {
  for (int64_t p = 0; p < count; ++p) {
    double acc = 0;
    for (int64_t k = 0; k < taps; ++k) {
      const Off o = off[k * stride + p];
      if (o >= 0) acc += w[k * stride + p] * static_cast<double>(plane[o]);
    }
    out[p] = static_cast<float>(acc);
  }
}

#pragma GCC push_options
#pragma GCC target("avx2,fma")
namespace avx2 {

void SumTaps(const float* plane, const int32_t* off, const double* w, int64_t taps, int64_t stride, int64_t count,
             float* out) {
  const __m256i none = _mm256_set1_epi32(-1);
  for (int64_t p = 0; p < count; p += kLanes) {
    __m256d lo = _mm256_setzero_pd(), hi = _mm256_setzero_pd();
    for (int64_t k = 0; k < taps; ++k) {
      const __m256i idx = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(off + k * stride + p));
      const __m256 valid = _mm256_castsi256_ps(_mm256_cmpgt_epi32(idx, none));
      const __m256 v = _mm256_mask_i32gather_ps(_mm256_setzero_ps(), plane, idx, valid, 4);
      const double* wk = w + k * stride + p;
      lo = _mm256_fmadd_pd(_mm256_loadu_pd(wk), _mm256_cvtps_pd(_mm256_castps256_ps128(v)), lo);
      hi = _mm256_fmadd_pd(_mm256_loadu_pd(wk + 4), _mm256_cvtps_pd(_mm256_extractf128_ps(v, 1)), hi);
    }
    const __m256 acc = _mm256_set_m128(_mm256_cvtpd_ps(hi), _mm256_cvtpd_ps(lo));
    const int64_t left = count - p;
    if (left >= kLanes) {
      _mm256_storeu_ps(out + p, acc);
    } else {
      const __m256i first = _mm256_cmpgt_epi32(_mm256_set1_epi32(static_cast<int>(left)),
                                               _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7));
      _mm256_maskstore_ps(out + p, first, acc);
    }
  }
}

// The same sums on channels-last data: xt is the image as [in_spatial][channels] and out_t receives
// [count][channels], 8 channels per pair of registers (the rest one by one with std::fma, the same rounding); a
// zero-padded tap is skipped (adding 0 * 0 changes no sum).
void SumTapsChannelsLast(const float* xt, int64_t channels, const int64_t* off, const double* w, int64_t taps,
                         int64_t stride, int64_t count, float* out_t) {
  for (int64_t p = 0; p < count; ++p) {
    float* o = out_t + p * channels;
    int64_t c = 0;
    for (; c + kLanes <= channels; c += kLanes) {
      __m256d lo = _mm256_setzero_pd(), hi = _mm256_setzero_pd();
      for (int64_t k = 0; k < taps; ++k) {
        const int64_t t = off[k * stride + p];
        if (t < 0) continue;
        const __m256d wk = _mm256_set1_pd(w[k * stride + p]);
        const __m256 v = _mm256_loadu_ps(xt + t * channels + c);
        lo = _mm256_fmadd_pd(wk, _mm256_cvtps_pd(_mm256_castps256_ps128(v)), lo);
        hi = _mm256_fmadd_pd(wk, _mm256_cvtps_pd(_mm256_extractf128_ps(v, 1)), hi);
      }
      _mm256_storeu_ps(o + c, _mm256_set_m128(_mm256_cvtpd_ps(hi), _mm256_cvtpd_ps(lo)));
    }
    for (; c < channels; ++c) {
      double acc = 0;
      for (int64_t k = 0; k < taps; ++k) {
        const int64_t t = off[k * stride + p];
        if (t >= 0) acc = std::fma(w[k * stride + p], static_cast<double>(xt[t * channels + c]), acc);
      }
      o[c] = static_cast<float>(acc);
    }
  }
}

}  // namespace avx2
#pragma GCC pop_options

using SumTaps32 = void (*)(const float* plane, const int32_t* off, const double* w, int64_t taps, int64_t stride,
                           int64_t count, float* out);
using SumTapsCl = void (*)(const float* xt, int64_t channels, const int64_t* off, const double* w, int64_t taps,
                           int64_t stride, int64_t count, float* out_t);

class GridSample : public OpKernel {
 public:
  // `cl`: the channels-last sum, or nullptr (the variant has none).
  GridSample(const ir::Node& node, SumTaps32 sum, SumTapsCl cl)
      : attrs_(ref::ParseGridSampleAttributes(node)), sum_(sum), cl_(cl) {}

  void Prepare(PrepareContext& ctx) const override {
    const InputSpec& x = ctx.tensor_input(0);
    const InputSpec& grid = ctx.tensor_input(1);
    if (x.dtype != DataType::kFloat || grid.dtype != DataType::kFloat) {
      throw InvalidArgumentError(ctx.Describe() + ": X and grid must be float32, got " + ctx.InputString(0) + ", " +
                                 ctx.InputString(1));
    }
    ref::GridSamplePlan p = ref::CheckGridSampleInputs(ctx, attrs_);
    ctx.SetOutput(0, DataType::kFloat, p.out_shape);
    ctx.EmplaceState(std::move(p));
  }

  void Compute(KernelContext& ctx) const override {
    const ref::GridSamplePlan& plan = ctx.state<ref::GridSamplePlan>();
    Tensor& y = ctx.OutputUninitialized(0);
    if (y.size() == 0) return;
    const float* xd = ctx.required_input(0).data<float>();
    const float* gd = ctx.required_input(1).data<float>();
    float* yd = y.data<float>();
    const int64_t width = plan.out_shape.back();  // the output's innermost dim
    const int64_t rows = plan.out_spatial / width, segs = (width + kSegment - 1) / kSegment;
    int64_t combos = 1;
    for (int64_t i = 0; i < plan.r; ++i) combos *= attrs_.taps();
    const bool narrow = plan.in_spatial <= std::numeric_limits<int32_t>::max();
    // With 8 channels or more the AVX2 variant samples a channels-last copy of X: contiguous loads, no gathers.
    std::vector<float> xt;
    if (cl_ && plan.channels >= kLanes) {
      xt.resize(static_cast<size_t>(y.size() / plan.out_spatial * plan.in_spatial));
      const int64_t cs = plan.channels * plan.in_spatial;
      const int64_t dst_strides[] = {cs, 1, plan.channels}, src_strides[] = {cs, plan.in_spatial, 1};
      const int64_t shape[] = {plan.n_batch, plan.channels, plan.in_spatial};
      StridedCopy(4, xt.data(), dst_strides, xd, src_strides, shape, ctx.threads());
    }
    // Work per (N, segment): channels x pixels x taps.
    const int64_t work = std::max<int64_t>(1, plan.channels * std::min(width, kSegment) * combos);
    ParallelFor(ctx.threads(), plan.n_batch * rows * segs, std::max<int64_t>(1, 32768 / work),
                [&](int64_t begin, int64_t end) {
                  if (!xt.empty()) {
                    Segments<int64_t>(plan, combos, width, segs, xt.data(), gd, yd, begin, end);
                  } else if (narrow) {
                    Segments<int32_t>(plan, combos, width, segs, xd, gd, yd, begin, end);
                  } else {
                    Segments<int64_t>(plan, combos, width, segs, xd, gd, yd, begin, end);
                  }
                });
  }

 private:
  // Samples segments [begin, end) of the (N, row, segment) index space from xd: X, or with cl_ its channels-last
  // copy (called with Off = int64_t).
  template <typename Off>
  void Segments(const ref::GridSamplePlan& plan, int64_t combos, int64_t width, int64_t segs, const float* xd,
                const float* gd, float* yd, int64_t begin, int64_t end) const {
    const int64_t r = plan.r, per_batch = plan.out_spatial / width * segs, channels = plan.channels;
    const bool channels_last = cl_ && channels >= kLanes;
    std::vector<Off> off(static_cast<size_t>(combos * kSegment));
    std::vector<double> w(static_cast<size_t>(combos * kSegment));
    std::vector<float> tile(channels_last ? static_cast<size_t>(kSegment * channels) : 0);
    for (int64_t item = begin; item < end; ++item) {
      const int64_t n = item / per_batch, row = item % per_batch / segs, seg = item % segs;
      const int64_t o0 = row * width + seg * kSegment;  // first output pixel (flat over the spatial dims)
      const int64_t count = std::min(kSegment, width - seg * kSegment);
      const int64_t stride = (count + kLanes - 1) / kLanes * kLanes;
      Tabulate(plan, gd + (n * plan.out_spatial + o0) * r, count, stride, combos, off.data(), w.data());
      const float* image = xd + n * channels * plan.in_spatial;
      float* out = yd + n * channels * plan.out_spatial + o0;
      if constexpr (std::is_same_v<Off, int64_t>) {
        if (channels_last) {
          cl_(image, channels, off.data(), w.data(), combos, stride, count, tile.data());
          const int64_t dst_strides[] = {plan.out_spatial, 1}, src_strides[] = {1, channels};
          const int64_t shape[] = {channels, count};
          StridedCopy(4, out, dst_strides, tile.data(), src_strides, shape, 1);
          continue;
        }
      }
      for (int64_t c = 0; c < channels; ++c) {
        const float* plane = image + c * plan.in_spatial;
        if constexpr (std::is_same_v<Off, int32_t>) {
          sum_(plane, off.data(), w.data(), combos, stride, count, out + c * plan.out_spatial);
        } else {
          SumTapsScalar(plane, off.data(), w.data(), combos, stride, count, out + c * plan.out_spatial);
        }
      }
    }
  }

  // The tap table of `count` pixels whose grid coordinates start at g: rows of `stride` entries (padding entries
  // are zero-padded taps), one per tap combination.
  template <typename Off>
  void Tabulate(const ref::GridSamplePlan& plan, const float* g, int64_t count, int64_t stride, int64_t combos,
                Off* off, double* w) const {
    const int64_t r = plan.r;
    const int taps = attrs_.taps();
    std::vector<std::array<int64_t, 4>> tap_off(static_cast<size_t>(r));
    std::vector<std::array<double, 4>> tap_w(static_cast<size_t>(r));
    std::vector<int> j(static_cast<size_t>(r));
    for (int64_t p = 0; p < stride; ++p) {
      if (p >= count) {
        for (int64_t k = 0; k < combos; ++k) {
          off[k * stride + p] = -1;
          w[k * stride + p] = 0;
        }
        continue;
      }
      for (int64_t i = 0; i < r; ++i) {
        const auto u = static_cast<size_t>(i);
        ref::GridSampleTaps(attrs_, static_cast<double>(g[p * r + r - 1 - i]), plan.dims[u], plan.strides[u],
                            tap_off[u].data(), tap_w[u].data());
      }
      std::fill(j.begin(), j.end(), 0);
      for (int64_t k = 0; k < combos; ++k) {
        int64_t o = 0;
        double weight = 1;
        for (size_t i = 0; i < j.size(); ++i) {
          const int64_t t = tap_off[i][static_cast<size_t>(j[i])];
          if (t < 0) {
            o = -1;
            break;
          }
          o += t;
          weight *= tap_w[i][static_cast<size_t>(j[i])];
        }
        off[k * stride + p] = static_cast<Off>(o);
        w[k * stride + p] = o < 0 ? 0.0 : weight;
        for (size_t i = j.size(); i-- > 0;) {
          if (++j[i] < taps) break;
          j[i] = 0;
        }
      }
    }
  }

  ref::GridSampleAttributes attrs_;
  SumTaps32 sum_;
  SumTapsCl cl_;
};

}  // namespace

void RegisterGridSampleKernels(KernelRegistry& r) {
  const std::vector<DataType> f32 = {DataType::kFloat};
  const struct {
    const char* impl;
    IsaSet isa;
    SumTaps32 sum;
    SumTapsCl cl;
  } variants[] = {
      {"avx2", {Isa::kAvx2, Isa::kFma}, &avx2::SumTaps, &avx2::SumTapsChannelsLast},
      {"scalar", {}, &SumTapsScalar<int32_t>, nullptr},
  };
  for (const auto& [since, until] : {std::pair{16, 19}, std::pair{20, 21}, std::pair{22, kOpsetOpen}}) {
    for (const auto& v : variants) {
      const SumTaps32 sum = v.sum;
      const SumTapsCl cl = v.cl;
      r.Add({.op = "GridSample",
             .since = since,
             .until = until,
             .types = {{"T1", f32}, {"T2", f32}},
             .create = [sum, cl](const ir::Node& node, const KernelOptions&) {
               return std::make_unique<GridSample>(node, sum, cl);
             },
             .isa = v.isa,
             .name = "cpu.f32_gridsample__" + std::string(v.impl) + "." + std::to_string(since),
             .constraints = "float32 X and grid"});
    }
  }
  for (const auto& v : variants) {
    const SumTaps32 sum = v.sum;
    const SumTapsCl cl = v.cl;
    r.Add({.op = "GridSample",
           .domain = "com.microsoft",
           .since = 1,
           .types = {{"T1", f32}, {"T2", f32}},
           .create = [sum, cl](const ir::Node& node, const KernelOptions&) {
             return std::make_unique<GridSample>(node, sum, cl);
           },
           .isa = v.isa,
           .name = "cpu.com.microsoft.f32_gridsample__" + std::string(v.impl) + ".1",
           .constraints = "float32 X and grid"});
  }
}

}  // namespace ferry::cpu
