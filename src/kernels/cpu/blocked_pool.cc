// ai.ferry BlockedPool (float32, block 8, 16 or 0: channels-last): MaxPool / AveragePool on oneDNN's pooling
// primitive over the blocked tensors themselves (nC[d][h]w{b}c over [N, ceil(C/b) * b, spatial...]: the padding
// channels are pooled like the others, so they stay finite when they come in finite; n[d][h]wc channels-last),
// with the window resolved as ref resolves it and oneDNN's output corrected to ONNX's (pool_common.h);
// GlobalAveragePool / GlobalMaxPool as own loops over the interleaved planes of each block (b, or all C
// channels-last), in ref's order (sums in double, four partial sums; max propagating NaN). Three variants. The
// AVX-512 one sums the global average 16 lanes at a time in double vectors (the same additions per lane in the same
// order, so the same bits as the scalar loop), and runs 2-D MaxPool on nChw16c and nChw8c as its own loop, one
// vector per output position over the taps in ref's order, so no output needs the exactness pass oneDNN's needs.
// Both replace paths that took about twice ORT's time: the scalar loop, and oneDNN plus the pass (figures:
// docs/performance.md, "Kernel design measurements", blocked_pool.cc). The AVX2 variant sums the global average 8
// lanes at a time (the same bits again; the scalar loop took 2x ORT's time on RegNet's squeeze-excitation pools),
// runs the nChw8c loop (an AVX2 host's block; oneDNN plus the pass took 3-7x ORT's time there: GoogLeNet's 3x3
// stride-1 branch pools) and oneDNN for the rest; the portable variant runs oneDNN for both.
// Refused: a window that holds no input element, which MaxPool makes -inf and AveragePool without
// count_include_pad NaN — in the padding channels too, where a following BlockedConv's zero weights would turn it
// into NaN everywhere; and what oneDNN would pool on its reference implementation (dilations, and whatever else
// its primitive descriptor reports as ref when the spatial dims are static). Prepare checks X, resolves the window
// and builds the primitive for each input shape (its scratchpad goes to the workspace); Compute only runs it.
// ONNX Runtime's com.microsoft.nchwc MaxPool / AveragePool / GlobalMaxPool / GlobalAveragePool are the same kernel
// (the op names the mode, the block is the machine's NCHWc block: kernels/nchwc_layout.h): their X and Y are 4-D
// [N, Cp, H, W] stored exactly as the blocked [N, Cp/b, H, W, b], so Prepare reads X's shape as that and declares
// Y 4-D again; the data is the same bytes.
#include <immintrin.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "core/parallel.h"
#include "kernels/cpu/blocked_layout.h"
#include "kernels/cpu/conv_common.h"
#include "kernels/cpu/dnnl_scratchpad.h"
#include "kernels/cpu/dnnl_util.h"
#include "kernels/cpu/pool_common.h"
#include "kernels/cpu/simd_common.h"
#include "kernels/kernel_def.h"
#include "kernels/nchwc_layout.h"
#include "kernels/ref/nchwc.h"
#include "kernels/registry.h"
#include "schemas/op_origin.h"
#include "schemas/schema.h"
#include "semantics/window.h"

namespace ferry::cpu {
namespace {

constexpr int64_t kMaxSpatial = 3;  // oneDNN pooling: 1-D, 2-D and 3-D

enum class Mode { kMax, kAverage, kGlobalAverage, kGlobalMax, kUnknown };

Mode ParseMode(const std::string& m) {
  if (m == "MaxPool") return Mode::kMax;
  if (m == "AveragePool") return Mode::kAverage;
  if (m == "GlobalAveragePool") return Mode::kGlobalAverage;
  if (m == "GlobalMaxPool") return Mode::kGlobalMax;
  return Mode::kUnknown;
}

bool IsNchwc(const ir::Node& node) { return node.domain() == schemas::kMsNchwcDomain; }

// The pool's mode name: ai.ferry's `mode` attribute, or a com.microsoft.nchwc node's op.
std::string ModeName(const ir::Node& node) { return IsNchwc(node) ? node.op_type() : node.GetString("mode", ""); }

// The block: ai.ferry's `block` attribute, or the machine's NCHWc block (throws InvalidModelError naming the node
// for a bad FERRY_NCHWC_BLOCK).
int64_t BlockOf(const ir::Node& node) { return IsNchwc(node) ? NchwcBlockSizeFor(node) : node.GetInt("block", 0); }

// The prepared state of one input shape: X as `outer` groups of `lanes` interleaved planes ([N * Cb] x b blocked,
// [N] x C channels-last), the window and the primitive (MaxPool / AveragePool), and the node, for oneDNN's errors.
struct BlockedPoolPlan {
  PoolPrimitive p;
  int64_t outer = 0, lanes = 0;
  std::string what;
};

// The average of `lanes` (1-16) interleaved planes of `size` elements: element i of lane l is base[i * all_lanes + l].
// ref's order per plane: four partial sums in double over i mod 4, the tail into the first.
using AverageLanesFn = void (*)(const float* base, int64_t size, int64_t all_lanes, int64_t lanes, float* out);

void AverageLanesScalar(const float* base, int64_t size, int64_t all_lanes, int64_t lanes, float* out) {
  constexpr int64_t kMaxLanes = 16;
  double s[4][kMaxLanes] = {};
  int64_t i = 0;
  for (; i + 4 <= size; i += 4) {
    for (int j = 0; j < 4; ++j) {
      for (int64_t l = 0; l < lanes; ++l) s[j][l] += static_cast<double>(base[(i + j) * all_lanes + l]);
    }
  }
  for (; i < size; ++i) {
    for (int64_t l = 0; l < lanes; ++l) s[0][l] += static_cast<double>(base[i * all_lanes + l]);
  }
  for (int64_t l = 0; l < lanes; ++l) {
    out[l] = static_cast<float>(((s[0][l] + s[1][l]) + (s[2][l] + s[3][l])) / static_cast<double>(size));
  }
}

// lo += lanes 0-7 of p's 16 floats (masked by m), hi += lanes 8-15, in double.
__attribute__((target("avx512f"), always_inline)) inline void AddLanes(__m512d& lo, __m512d& hi, __mmask16 m,
                                                                       const float* p) {
  // GCC 12's unmasked cvtps_pd / extractf64x4 (and the 512->256 casts built on it) start from an undefined vector
  // and trip -Wmaybe-uninitialized; the masked forms with every lane selected are the same instructions.
  const __m512d zero = _mm512_setzero_pd();
  const __m512d v = _mm512_castps_pd(_mm512_maskz_loadu_ps(m, p));
  const __m256d lower = _mm512_mask_extractf64x4_pd(_mm256_setzero_pd(), 0xF, v, 0);
  const __m256d upper = _mm512_mask_extractf64x4_pd(_mm256_setzero_pd(), 0xF, v, 1);
  lo = _mm512_add_pd(lo, _mm512_mask_cvtps_pd(zero, 0xFF, _mm256_castpd_ps(lower)));
  hi = _mm512_add_pd(hi, _mm512_mask_cvtps_pd(zero, 0xFF, _mm256_castpd_ps(upper)));
}

// The same additions as AverageLanesScalar, lanes 0-7 and 8-15 in two double vectors per partial sum.
__attribute__((target("avx512f"))) void AverageLanesAvx512(const float* base, int64_t size, int64_t all_lanes,
                                                           int64_t lanes, float* out) {
  const __mmask16 m = static_cast<__mmask16>(lanes >= 16 ? 0xFFFFu : (1u << lanes) - 1u);
  __m512d lo0 = _mm512_setzero_pd(), lo1 = lo0, lo2 = lo0, lo3 = lo0, hi0 = lo0, hi1 = lo0, hi2 = lo0, hi3 = lo0;
  int64_t i = 0;
  for (; i + 4 <= size; i += 4) {
    AddLanes(lo0, hi0, m, base + i * all_lanes);
    AddLanes(lo1, hi1, m, base + (i + 1) * all_lanes);
    AddLanes(lo2, hi2, m, base + (i + 2) * all_lanes);
    AddLanes(lo3, hi3, m, base + (i + 3) * all_lanes);
  }
  for (; i < size; ++i) AddLanes(lo0, hi0, m, base + i * all_lanes);
  const __m512d n = _mm512_set1_pd(static_cast<double>(size));
  const __m512d a = _mm512_div_pd(_mm512_add_pd(_mm512_add_pd(lo0, lo1), _mm512_add_pd(lo2, lo3)), n);
  const __m512d b = _mm512_div_pd(_mm512_add_pd(_mm512_add_pd(hi0, hi1), _mm512_add_pd(hi2, hi3)), n);
  float r[16];
  _mm256_storeu_ps(r, _mm512_mask_cvtpd_ps(_mm256_setzero_ps(), 0xFF, a));
  _mm256_storeu_ps(r + 8, _mm512_mask_cvtpd_ps(_mm256_setzero_ps(), 0xFF, b));
  std::copy(r, r + lanes, out);
}

// lo += lanes 0-3 of p's 8 floats (masked by m), hi += lanes 4-7, in double.
__attribute__((target("avx2"), always_inline)) inline void AddLanesAvx2(__m256d& lo, __m256d& hi, __m256i m,
                                                                       const float* p) {
  const __m256 v = _mm256_maskload_ps(p, m);
  lo = _mm256_add_pd(lo, _mm256_cvtps_pd(_mm256_castps256_ps128(v)));
  hi = _mm256_add_pd(hi, _mm256_cvtps_pd(_mm256_extractf128_ps(v, 1)));
}

// The same additions as AverageLanesScalar, 8 lanes at a time in two double vectors per partial sum.
__attribute__((target("avx2"))) void AverageLanesAvx2(const float* base, int64_t size, int64_t all_lanes,
                                                      int64_t lanes, float* out) {
  for (int64_t first = 0; first < lanes; first += 8) {
    const int n_lanes = static_cast<int>(std::min<int64_t>(8, lanes - first));
    const __m256i m = _mm256_cmpgt_epi32(_mm256_set1_epi32(n_lanes), _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7));
    const float* b = base + first;
    __m256d lo0 = _mm256_setzero_pd(), lo1 = lo0, lo2 = lo0, lo3 = lo0, hi0 = lo0, hi1 = lo0, hi2 = lo0, hi3 = lo0;
    int64_t i = 0;
    for (; i + 4 <= size; i += 4) {
      AddLanesAvx2(lo0, hi0, m, b + i * all_lanes);
      AddLanesAvx2(lo1, hi1, m, b + (i + 1) * all_lanes);
      AddLanesAvx2(lo2, hi2, m, b + (i + 2) * all_lanes);
      AddLanesAvx2(lo3, hi3, m, b + (i + 3) * all_lanes);
    }
    for (; i < size; ++i) AddLanesAvx2(lo0, hi0, m, b + i * all_lanes);
    const __m256d n = _mm256_set1_pd(static_cast<double>(size));
    const __m256d a = _mm256_div_pd(_mm256_add_pd(_mm256_add_pd(lo0, lo1), _mm256_add_pd(lo2, lo3)), n);
    const __m256d c = _mm256_div_pd(_mm256_add_pd(_mm256_add_pd(hi0, hi1), _mm256_add_pd(hi2, hi3)), n);
    float r[8];
    _mm_storeu_ps(r, _mm256_cvtpd_ps(a));
    _mm_storeu_ps(r + 4, _mm256_cvtpd_ps(c));
    std::copy(r, r + n_lanes, out + first);
  }
}

// The own 2-D MaxPool loop (blocked_pool_kernels.inc) of one output row on one blocked plane.
using MaxPoolRowFn = void (*)(const float* plane, const semantics::WindowGeometry& g, int64_t oh, float* out_row);

}  // namespace

#pragma GCC push_options
#pragma GCC target("avx512f")
namespace blocked_pool_avx512 {
using V = simd::F32x16;
#include "kernels/cpu/blocked_pool_kernels.inc"
}  // namespace blocked_pool_avx512
#pragma GCC pop_options

#pragma GCC push_options
#pragma GCC target("avx2,fma")
namespace blocked_pool_avx2 {
using V = simd::F32x8;
#include "kernels/cpu/blocked_pool_kernels.inc"
}  // namespace blocked_pool_avx2
#pragma GCC pop_options

namespace {

// Global pools of `outer` blocks of `all_lanes` interleaved planes of `size` elements each, 16 lanes at a time.
template <bool kMax>
void GlobalPoolBlocks(const float* x, int64_t outer, int64_t size, int64_t all_lanes, float* y, int threads,
                      AverageLanesFn average) {
  constexpr int64_t kMaxLanes = 16;
  const int64_t chunks = (all_lanes + kMaxLanes - 1) / kMaxLanes;
  const int64_t min_tasks = std::max<int64_t>(1, 16384 / std::max<int64_t>(size * kMaxLanes, 1));
  ParallelFor(threads, outer * chunks, min_tasks, [&](int64_t begin, int64_t end) {
    for (int64_t task = begin; task < end; ++task) {
      const int64_t q = task / chunks, first = task % chunks * kMaxLanes;
      const int64_t lanes = std::min(kMaxLanes, all_lanes - first);
      const float* base = x + q * size * all_lanes + first;
      float* out = y + q * all_lanes + first;
      // Element i of lane l: base[i * all_lanes + l].
      if constexpr (kMax) {
        float m[kMaxLanes];
        bool nan[kMaxLanes];
        for (int64_t l = 0; l < lanes; ++l) {
          m[l] = -std::numeric_limits<float>::infinity();
          nan[l] = false;
        }
        for (int64_t i = 0; i < size; ++i) {
          for (int64_t l = 0; l < lanes; ++l) {
            const float e = base[i * all_lanes + l];
            m[l] = e > m[l] ? e : m[l];
            nan[l] = nan[l] || e != e;
          }
        }
        for (int64_t l = 0; l < lanes; ++l) out[l] = nan[l] ? std::numeric_limits<float>::quiet_NaN() : m[l];
      } else {
        average(base, size, all_lanes, lanes, out);
      }
    }
  });
}

class BlockedPool : public OpKernel {
 public:
  BlockedPool(const ir::Node& node, AverageLanesFn average, MaxPoolRowFn max_row16, MaxPoolRowFn max_row8)
      : average_(average),
        max_row_(BlockOf(node) == 16  ? max_row16
                 : BlockOf(node) == 8 ? max_row8
                                      : nullptr),
        mode_(ParseMode(ModeName(node))),
        block_(BlockOf(node)),
        nchwc_(IsNchwc(node)),
        attrs_(semantics::WindowAttrs::FromNode(node)),
        ceil_mode_(node.GetInt("ceil_mode", 0) != 0),
        count_include_pad_(node.GetInt("count_include_pad", 0) != 0) {
    if (mode_ == Mode::kUnknown) {
      throw InvalidModelError(node.Describe() + ": mode '" + ModeName(node) + "' is not a pool");
    }
    if (const std::string reason = BlockReason(node.op_type(), block_); !reason.empty()) {
      throw UnsupportedError(node.Describe() + ": " + reason);
    }
    if ((mode_ == Mode::kMax || mode_ == Mode::kAverage) && attrs_.kernel_shape.empty()) {
      throw InvalidModelError(node.Describe() + ": required attribute kernel_shape is missing");
    }
  }

  // X's checks, Y's shape, and for MaxPool / AveragePool the window resolved and the primitive built (under the
  // thread count it will run with), its scratchpad in the workspace; the global modes run none.
  void Prepare(PrepareContext& ctx) const override {
    const InputSpec& x = ctx.tensor_input(0);
    if (nchwc_) ref::CheckNchwcTensor(ctx, 0, "X", block_);  // 4-D [N, Cp, H, W]: read as [N, Cp/b, H, W, b]
    const Shape xs = nchwc_ ? Shape{x.shape[0], x.shape[1] / block_, x.shape[2], x.shape[3], block_} : x.shape;
    const std::string what = ctx.Describe();
    if (x.dtype != DataType::kFloat) {
      throw InvalidArgumentError(what + ": X must be float32, got " + ctx.InputString(0));
    }
    if (static_cast<int64_t>(xs.size()) < (block_ > 0 ? 4 : 3) || (block_ > 0 && xs.back() != block_)) {
      throw InvalidArgumentError(what + ": " + ctx.InputString(0) + ", expected a tensor " +
                                 (block_ > 0 ? "blocked by " + std::to_string(block_) +
                                                   " ([N, C/block, spatial..., block])"
                                             : std::string("channels-last ([N, spatial..., C])")));
    }
    BlockedPoolPlan plan;
    plan.lanes = xs.back();
    plan.outer = block_ > 0 ? xs[0] * xs[1] : xs[0];
    plan.what = what;
    if (mode_ == Mode::kGlobalAverage || mode_ == Mode::kGlobalMax) {
      Shape y_shape(xs.size(), 1);
      y_shape[0] = xs[0];
      if (block_ > 0) y_shape[1] = xs[1];
      y_shape.back() = plan.lanes;
      ctx.EmplaceState(std::move(plan));
      ctx.SetOutput(0, DataType::kFloat, Declared(y_shape));
      return;
    }
    if (static_cast<int64_t>(xs.size()) - BlockedRank(2, block_) > kMaxSpatial) {
      throw UnsupportedError(what + ": the cpu kernel pools at most 3 spatial dims, got " + ctx.InputString(0));
    }
    Shape y_shape;
    {
      const ScopedOmpThreads scope(ctx.threads());
      y_shape = Build(xs, what + ": " + ctx.InputString(0), &plan.p);
    }
    if (plan.p.has_prim) NeedScratchpad(plan.p.scratch, ctx.workspace());
    ctx.EmplaceState(std::move(plan));
    ctx.SetOutput(0, DataType::kFloat, Declared(y_shape));
  }

  void Compute(KernelContext& ctx) const override {
    const BlockedPoolPlan& plan = ctx.state<BlockedPoolPlan>();
    const Tensor& x = ctx.required_input(0);
    Tensor& y = ctx.OutputUninitialized(0);
    if (y.size() == 0) return;
    const int64_t outer = plan.outer, lanes = plan.lanes;
    if (mode_ == Mode::kGlobalAverage || mode_ == Mode::kGlobalMax) {
      const int64_t size = x.size() / y.size();
      if (mode_ == Mode::kGlobalMax) {
        GlobalPoolBlocks<true>(x.data<float>(), outer, size, lanes, y.data<float>(), ctx.threads(), average_);
      } else {
        GlobalPoolBlocks<false>(x.data<float>(), outer, size, lanes, y.data<float>(), ctx.threads(), average_);
      }
      return;
    }
    const semantics::WindowGeometry& g = plan.p.g;
    if (OwnMaxLoop(g)) {
      const int64_t rows = outer * g.out[0];
      const int64_t min_rows = std::max<int64_t>(1, 2048 / std::max<int64_t>(g.out[1] * g.kernel_size(), 1));
      ParallelFor(ctx.threads(), rows, min_rows, [&](int64_t begin, int64_t end) {
        for (int64_t r = begin; r < end; ++r) {
          const int64_t q = r / g.out[0], oh = r % g.out[0];
          float* out_row = y.data<float>() + (q * g.out_size() + oh * g.out[1]) * block_;
          max_row_(x.data<float>() + q * g.in_size() * block_, g, oh, out_row);
        }
      });
      return;
    }
    const PoolKind kind = mode_ == Mode::kMax ? PoolKind::kMax : PoolKind::kAverage;
    RunPoolPrimitive(plan.p, kind, count_include_pad_, x.data<float>(), y.data<float>(), outer, lanes,
                     ctx.threads(), plan.what);
  }

 private:
  // Y as the node declares it: the blocked shape, or for com.microsoft.nchwc [N, Cb * b, spatial...].
  Shape Declared(const Shape& blocked) const {
    if (!nchwc_) return blocked;
    Shape y{blocked[0], blocked[1] * block_};
    y.insert(y.end(), blocked.begin() + 2, blocked.end() - 1);
    return y;
  }

  // Resolves the window of X of shape `xs` into `p` and builds its primitive (call under the thread count it will
  // run with); returns Y's shape. Throws InvalidArgumentError naming `what` for a window that does not fit X.
  Shape Build(const Shape& xs, const std::string& what, PoolPrimitive* p) const {
    const size_t first = block_ > 0 ? 2 : 1;  // the first spatial dim
    const std::span<const int64_t> in_spatial(xs.data() + first, xs.size() - first - 1);
    p->g = semantics::ResolveWindow(attrs_, in_spatial, attrs_.kernel_shape, ceil_mode_, what);
    // The padding channels are pooled like the others: oneDNN sees ceil(C/b) * b channels, no padded dims.
    const int64_t channels = block_ > 0 ? xs[1] * block_ : xs.back();
    Shape x_logical = LogicalShape(xs, channels, block_);
    Shape y_logical{xs[0], channels};
    y_logical.insert(y_logical.end(), p->g.out.begin(), p->g.out.end());
    Shape y_shape = BlockedShape(y_logical, block_);
    const bool empty = ShapeElementCount(y_shape) == 0 || ShapeElementCount(xs) == 0;
    if (!empty) {
      p->x_md = BlockedDesc(x_logical, block_);
      p->y_md = BlockedDesc(y_logical, block_);
    }
    const PoolKind kind = mode_ == Mode::kMax ? PoolKind::kMax : PoolKind::kAverage;
    // The own max loop needs only the geometry: no primitive (nor its scratchpad in the workspace).
    if (!OwnMaxLoop(p->g)) BuildPoolPrimitive(kind, count_include_pad_, empty, p, what);
    return y_shape;
  }

  // Whether Compute runs MaxPool as the variant's own loop for this block (2-D) rather than on oneDNN.
  bool OwnMaxLoop(const semantics::WindowGeometry& g) const {
    return mode_ == Mode::kMax && max_row_ != nullptr && g.rank() == 2;
  }

  AverageLanesFn average_;
  MaxPoolRowFn max_row_;  // the own 2-D MaxPool loop for block_; null: MaxPool on oneDNN
  Mode mode_;
  int64_t block_;
  bool nchwc_;  // com.microsoft.nchwc: X and Y 4-D (see the top of the file)
  semantics::WindowAttrs attrs_;
  bool ceil_mode_, count_include_pad_;
};

std::string BlockedPoolPredicate(const ir::Node& node) {
  int64_t block = 0;
  try {
    block = BlockOf(node);
  } catch (const Error& e) {
    return e.what();
  }
  if (std::string reason = BlockReason(node.op_type(), block); !reason.empty()) return reason;
  const std::string mode = ModeName(node);
  const Mode m = ParseMode(mode);
  if (m == Mode::kUnknown) return "BlockedPool: mode '" + mode + "' is not implemented on cpu";
  if (m == Mode::kMax || m == Mode::kAverage) {
    const size_t rank = node.GetInts("kernel_shape").size();
    if (rank > static_cast<size_t>(kMaxSpatial)) {
      return "BlockedPool: " + mode + " over " + std::to_string(rank) +
             " spatial dims is not implemented on cpu (at most 3)";
    }
    const std::vector<int64_t> dilations = node.GetInts("dilations");
    if (std::any_of(dilations.begin(), dilations.end(), [](int64_t d) { return d != 1; })) {
      return "BlockedPool: " + mode + " with dilations would run on oneDNN's slow reference pooling; not blocked "
             "on cpu";
    }
  }
  return "";
}

// With X's spatial dims static: no window may be empty where the result would not be finite (see the top of the
// file), and oneDNN must pool it with a jit kernel.
std::string BlockedPoolShapePredicate(const ir::Node& node) {
  const Mode m = ParseMode(ModeName(node));
  const bool count_include_pad = node.GetInt("count_include_pad", 0) != 0;
  int64_t block = 0;
  try {
    block = BlockOf(node);
  } catch (const Error&) {
    return "";  // the predicate names it
  }
  if ((m != Mode::kMax && m != Mode::kAverage) || !BlockReason(node.op_type(), block).empty()) return "";
  // The spatial dims decide (N and the blocks need not be static).
  const ir::Value* xv = node.input(0);
  const size_t first = block > 0 ? 2 : 1;  // the first spatial dim
  const size_t trailing = IsNchwc(node) ? 0 : 1;  // dims after the spatial ones: ai.ferry's block (or C) dim
  if (!xv || !xv->type().is_tensor() || !xv->type().shape || xv->type().shape->size() < first + 1 + trailing) {
    return "";
  }
  Shape spatial;
  for (size_t d = first; d + trailing < xv->type().shape->size(); ++d) {
    const ir::Dim& dim = (*xv->type().shape)[d];
    if (!dim.is_static()) return "";
    spatial.push_back(dim.value);
  }
  try {
    const semantics::WindowAttrs attrs = semantics::WindowAttrs::FromNode(node);
    const std::span<const int64_t> in_spatial(spatial);
    const semantics::WindowGeometry g = semantics::ResolveWindow(attrs, in_spatial, attrs.kernel_shape,
                                                     node.GetInt("ceil_mode", 0) != 0, node.Describe());
    const bool empty_is_finite = m == Mode::kAverage && count_include_pad;
    for (size_t d = 0; d < g.rank() && !empty_is_finite; ++d) {
      for (int64_t o = 0; o < g.out[d]; ++o) {
        bool any = false;
        for (int64_t t = 0; t < g.kernel[d] && !any; ++t) {
          const int64_t i = o * g.strides[d] - g.pad_begin[d] + t * g.dilations[d];
          any = i >= 0 && i < g.in[d];
        }
        if (!any) {
          return "BlockedPool: " + ModeName(node) + " with a window that holds no input element (" +
                 (m == Mode::kMax ? "-inf" : "NaN") + " in the padding channels too) is not implemented on cpu";
        }
      }
    }
    if (g.rank() > static_cast<size_t>(kMaxSpatial) || g.in_size() == 0 || g.out_size() == 0) return "";
    const int64_t lanes = block > 0 ? block : 16;  // channels-last: any channel count shows oneDNN's choice
    Shape x_logical{1, lanes}, y_logical{1, lanes};
    x_logical.insert(x_logical.end(), g.in.begin(), g.in.end());
    y_logical.insert(y_logical.end(), g.out.begin(), g.out.end());
    const std::string impl =
        PoolImplementation(m == Mode::kMax ? PoolKind::kMax : PoolKind::kAverage, count_include_pad, g,
                           BlockedDesc(x_logical, block), BlockedDesc(y_logical, block));
    if (impl.find("ref") != std::string::npos) {
      return "BlockedPool: oneDNN would pool this on its slow reference implementation (" + impl +
             "); not blocked on cpu";
    }
  } catch (const InvalidArgumentError&) {
    return "";  // left for Prepare to report
  } catch (const dnnl::error& e) {
    return std::string("BlockedPool: oneDNN cannot pool this on cpu: ") + e.what();
  }
  return "";
}

}  // namespace

void RegisterBlockedPoolKernels(KernelRegistry& r) {
  // Best first: the AVX-512 loops, the AVX2 one, then the portable variant (identical results).
  const auto def = [&](const std::string& impl, IsaSet isa, AverageLanesFn average, MaxPoolRowFn max_row16,
                       MaxPoolRowFn max_row8) {
    r.Add({.op = "BlockedPool",
           .domain = std::string(schemas::kFerryDomain),
           .since = 1,
           .types = {{"T", {DataType::kFloat}}},
           .create = [average, max_row16, max_row8](const ir::Node& node, const KernelOptions&) {
             return std::make_unique<BlockedPool>(node, average, max_row16, max_row8);
           },
           .predicate = BlockedPoolPredicate,
           .shape_predicate = BlockedPoolShapePredicate,
           .isa = isa,
           .name = "cpu.f32_blocked_pool__" + impl + ".1",
           .constraints = "float32; block 8, 16 or 0 (channels-last); MaxPool/AveragePool: 1-3 spatial dims, no "
                          "dilations, no window without an input element (MaxPool; AveragePool without "
                          "count_include_pad)",
           .library = "oneDNN"});
  };
  def("onednn_avx512", {Isa::kAvx512f, Isa::kAvx2, Isa::kFma}, &AverageLanesAvx512, &blocked_pool_avx512::MaxPoolRow,
      &blocked_pool_avx2::MaxPoolRow);
  def("onednn_avx2", {Isa::kAvx2, Isa::kFma}, &AverageLanesAvx2, nullptr, &blocked_pool_avx2::MaxPoolRow);
  def("onednn", {}, &AverageLanesScalar, nullptr, nullptr);
}

// --- com.microsoft.nchwc, group "nchwc": the same kernel, the op naming the mode (see the top of the file) ---
void RegisterNchwcPoolKernels(KernelRegistry& r) {
  const auto def = [&](const std::string& op, const std::string& impl, IsaSet isa, AverageLanesFn average,
                       MaxPoolRowFn max_row16, MaxPoolRowFn max_row8) {
    r.Add({.op = op,
           .domain = std::string(schemas::kMsNchwcDomain),
           .since = 1,
           .types = {{"T", {DataType::kFloat}}},
           .create =
               [average, max_row16, max_row8](const ir::Node& node, const KernelOptions&) {
                 return std::make_unique<BlockedPool>(node, average, max_row16, max_row8);
               },
           .predicate = BlockedPoolPredicate,
           .shape_predicate = BlockedPoolShapePredicate,
           .isa = isa,
           .name = "cpu.f32_nchwc_" + op + "__" + impl + ".1",
           .constraints = "float32; 2-D; block 8 or 16 (the machine's); MaxPool/AveragePool: no dilations, no "
                          "window without an input element (MaxPool; AveragePool without count_include_pad)",
           .library = "oneDNN"});
  };
  for (const char* op : {"MaxPool", "AveragePool", "GlobalMaxPool", "GlobalAveragePool"}) {
    def(op, "onednn_avx512", {Isa::kAvx512f, Isa::kAvx2, Isa::kFma}, &AverageLanesAvx512,
        &blocked_pool_avx512::MaxPoolRow, &blocked_pool_avx2::MaxPoolRow);
    def(op, "onednn_avx2", {Isa::kAvx2, Isa::kFma}, &AverageLanesAvx2, nullptr, &blocked_pool_avx2::MaxPoolRow);
    def(op, "onednn", {}, &AverageLanesScalar, nullptr, nullptr);
  }
}

}  // namespace ferry::cpu
