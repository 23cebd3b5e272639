// ai.ferry BlockedConv as Ferry's own Winograd convolution F(4x4, 3x3) on nChw8c, for AVX2 hosts: oneDNN 2.6 has
// Winograd kernels for AVX-512 only, and on an AVX2 host its direct jit:avx2 convolution ran the 3x3 layers of
// GoogLeNet, ResNet-18 and FCN-ResNet50 at 10-25% behind ONNX Runtime's (docs/performance.md, issue 24). F(4x4, 3x3)
// computes each 4x4 output tile from a 6x6 input tile with 36 products per (input, output channel) pair instead of
// 144 (Lavin & Gray, "Fast Algorithms for Convolutional Neural Networks"):
//   Y = A^T [ (G g G^T) . (B^T d B) ] A      g: a 3x3 filter, d: a 6x6 input tile, .: elementwise
// in three phases over a chunk of tiles (tiles of every image of the batch, row-major):
//   1. input transform: V[xi][tile][c] = (B^T d B)[xi], 8 channels per AVX2 vector (X's blocks), zeros outside X;
//   2. 36 matrix products M[xi] = V[xi] (tiles x C) * U[xi] (C x M), U = G g G^T packed once at creation, as
//      column panels of 16 (the last one 8) output channels: a 6x16 register tile of FMAs;
//   3. output transform: Y = A^T M A per tile and block of 8 output channels, + B, + Z, the activation, zeros in
//      Y's padding channels, only the positions inside Y written.
// The chunk holds as many tiles as keep V and M within kChunkBudget (at least kMinChunkTiles): they stay in L2
// between the phases, and the products read each U[xi] once per chunk. Results differ from the direct
// convolution by float rounding (the transforms reassociate the sums), as oneDNN's Winograd kernels do; the order
// is fixed, so they do not depend on the thread count. U is 36/9 = 4x W's size (W itself is released once packed).
//
// Taken (predicate and shape predicate) for what it is faster on: block 8, a 2-D 3x3 stride-1 undilated ungrouped
// convolution with constant weights, X blocked (not plain_input), at least kMinChannels input and output channels
// and X's spatial dims static with at least kMinTiles output tiles per image: on fewer (a 7x7 plane is 4 tiles)
// the products read U's 4x the weights for little work, and oneDNN's direct kernel is faster (GoogLeNet's
// 192 -> 384 layer at 7x7: 1.23-1.36 ms against 1.03; at 14x14 Winograd wins). At 16 input channels it still wins
// (SqueezeNet's 16 -> 64 expand layers at 55x55: 0.45-0.58 ms against 0.65); figures: docs/performance.md, "Kernel
// design measurements". Every fused activation, applied with the unary kernels' vectorized formulas
// (simd_kernels.inc: their accuracy is stated there; SiLU as x * sigmoid(x), whose accurate sigmoid costs about as
// much per output as a small layer's products).
#include <immintrin.h>
#include <dnnl.hpp>

#include <algorithm>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "core/parallel.h"
#include "kernels/cpu/blocked_layout.h"
#include "kernels/cpu/conv_common.h"
#include "kernels/cpu/dnnl_util.h"
#include "kernels/cpu/fused_activation.h"
#include "kernels/cpu/shared_packs.h"
#include "kernels/cpu/simd_common.h"
#include "kernels/kernel_def.h"
#include "kernels/registry.h"
#include "schemas/schema.h"
#include "semantics/window.h"

namespace ferry::cpu {
namespace {

constexpr int64_t kBlock = 8;         // X's and Y's channel block: one AVX2 vector
constexpr int64_t kPoints = 36;       // 6x6 transform points
constexpr int64_t kPanel = 16;        // output channels per column panel of U
constexpr int64_t kRows = 6;          // tiles per register tile of the products
constexpr int64_t kMinChannels = 16;  // see the top of the file
constexpr int64_t kMinTiles = 16;
constexpr int64_t kMinChunkTiles = 32;
// Bytes of V and M per chunk: within L2 (measured on GoogLeNet's 3x3 layers, 1 thread, AVX2 EPYC: its 64 -> 192
// layer at 56x56 took 3.6 ms with 512 KiB, 4.7-5.9 ms with 4 MiB, 9.4 ms on oneDNN's direct kernel).
constexpr int64_t kChunkBudget = int64_t{512} << 10;

using Kind = FusedActivation::Kind;

int64_t RoundUp(int64_t v, int64_t to) { return (v + to - 1) / to * to; }

// U: for each point xi, C_pad x M_pad floats as column panels: panel p (output channels 16p..) holds C_pad rows of
// its width (16, or 8 for a last panel of 8), row-major, at xi * C_pad * M_pad + 16p * C_pad. Held as a oneDNN
// memory so that the kernels reading one initializer share one copy (shared_packs.h: RAFT's unrolled refinement
// steps would each pack their own).
struct PackedFilter {
  std::shared_ptr<const dnnl::memory> u;
  bool made_here = false;  // this kernel packed it (held_bytes counts a shared copy once)
  int64_t channels = 0, out_channels = 0, c_pad = 0, m_pad = 0;
  int64_t panel_width(int64_t p) const { return std::min(kPanel, m_pad - p * kPanel); }
  int64_t panels() const { return (m_pad + kPanel - 1) / kPanel; }
  int64_t floats() const { return kPoints * c_pad * m_pad; }
  const float* data() const { return static_cast<const float*>(u->get_data_handle()); }
};

// U = G g G^T for every (output, input) channel pair of W [M, C, 3, 3], in double, rounded once.
void PackFilter(const float* w, const PackedFilter& f, float* u) {
  static constexpr double kG[6][3] = {{1.0 / 4, 0, 0},
                                      {-1.0 / 6, -1.0 / 6, -1.0 / 6},
                                      {-1.0 / 6, 1.0 / 6, -1.0 / 6},
                                      {1.0 / 24, 1.0 / 12, 1.0 / 6},
                                      {1.0 / 24, -1.0 / 12, 1.0 / 6},
                                      {0, 0, 1}};
  const int64_t plane = f.c_pad * f.m_pad;
  std::memset(u, 0, static_cast<size_t>(f.floats()) * sizeof(float));
  for (int64_t m = 0; m < f.out_channels; ++m) {
    const int64_t p = m / kPanel, width = f.panel_width(p);
    for (int64_t c = 0; c < f.channels; ++c) {
      const float* g = w + (m * f.channels + c) * 9;
      double gg[6][3];  // G g
      for (int i = 0; i < 6; ++i) {
        for (int j = 0; j < 3; ++j) {
          gg[i][j] = kG[i][0] * g[j] + kG[i][1] * g[3 + j] + kG[i][2] * g[6 + j];
        }
      }
      float* at = u + p * kPanel * f.c_pad + c * width + (m - p * kPanel);
      for (int i = 0; i < 6; ++i) {
        for (int j = 0; j < 6; ++j) {
          const double v = gg[i][0] * kG[j][0] + gg[i][1] * kG[j][1] + gg[i][2] * kG[j][2];
          at[(i * 6 + j) * plane] = static_cast<float>(v);
        }
      }
    }
  }
}

// The geometry of one run: tiles over the batch, X's and Y's planes.
struct Geometry {
  int64_t batch = 0, in_h = 0, in_w = 0, out_h = 0, out_w = 0, pad_top = 0, pad_left = 0;
  int64_t tiles_h = 0, tiles_w = 0;
  int64_t c_blocks = 0, m_blocks = 0;  // X's and Y's channel blocks
  int64_t tiles() const { return batch * tiles_h * tiles_w; }
};

// The vector code: AVX2 and FMA (the kernel's ISA; the registry runs it only on hosts with both), with the cpu
// backend's vectorized activations (simd_kernels.inc).
#pragma GCC push_options
#pragma GCC target("avx2,fma")
namespace winograd_avx2 {
using V = simd::F32x8;
#include "kernels/cpu/simd_kernels.inc"

// B^T applied to six vectors in[0..5] at `stride`: out[0..5].
__attribute__((always_inline)) inline void InputRows(const __m256* in, int stride, __m256* out, int out_stride) {
  const __m256 d0 = in[0], d1 = in[stride], d2 = in[2 * stride], d3 = in[3 * stride], d4 = in[4 * stride],
               d5 = in[5 * stride];
  const __m256 four = _mm256_set1_ps(4.0f), five = _mm256_set1_ps(5.0f), two = _mm256_set1_ps(2.0f);
  // 4 d0 - 5 d2 + d4;  -4 (d1 + d2) + d3 + d4;  4 (d1 - d2) - d3 + d4;  -2 (d1 - d3) - d2 + d4;
  // 2 (d1 - d3) - d2 + d4;  4 d1 - 5 d3 + d5
  const __m256 d4_d2 = _mm256_sub_ps(d4, d2);
  out[0] = _mm256_fmadd_ps(four, d0, _mm256_fnmadd_ps(five, d2, d4));
  out[out_stride] = _mm256_fnmadd_ps(four, _mm256_add_ps(d1, d2), _mm256_add_ps(d3, d4));
  out[2 * out_stride] = _mm256_fmadd_ps(four, _mm256_sub_ps(d1, d2), _mm256_sub_ps(d4, d3));
  const __m256 d1_d3 = _mm256_sub_ps(d1, d3);
  out[3 * out_stride] = _mm256_fnmadd_ps(two, d1_d3, d4_d2);
  out[4 * out_stride] = _mm256_fmadd_ps(two, d1_d3, d4_d2);
  out[5 * out_stride] = _mm256_fmadd_ps(four, d1, _mm256_fnmadd_ps(five, d3, d5));
}

// Phase 1 for tiles [t0, t1) and every channel block: V[xi][t - t0][c].
void InputTransform(const float* x, const Geometry& g, int64_t t0, int64_t t1, int64_t chunk, int64_t c_pad, float* v,
                    int threads) {
  const int64_t per_image = g.tiles_h * g.tiles_w;
  const int64_t point_stride = chunk * c_pad;
  ParallelFor(threads, (t1 - t0) * g.c_blocks, 16, [&](int64_t begin, int64_t end) {
    alignas(32) __m256 d[36], t[36];
    for (int64_t task = begin; task < end; ++task) {
      const int64_t tl = task / g.c_blocks, cb = task % g.c_blocks, tile = t0 + tl;
      const int64_t n = tile / per_image, th = tile % per_image / g.tiles_w, tw = tile % g.tiles_w;
      const int64_t ih0 = th * 4 - g.pad_top, iw0 = tw * 4 - g.pad_left;
      const float* plane = x + (n * g.c_blocks + cb) * g.in_h * g.in_w * kBlock;
      const bool inside = ih0 >= 0 && iw0 >= 0 && ih0 + 6 <= g.in_h && iw0 + 6 <= g.in_w;
      for (int i = 0; i < 6; ++i) {
        const int64_t ih = ih0 + i;
        for (int j = 0; j < 6; ++j) {
          const int64_t iw = iw0 + j;
          d[i * 6 + j] = inside || (ih >= 0 && ih < g.in_h && iw >= 0 && iw < g.in_w)
                             ? _mm256_loadu_ps(plane + (ih * g.in_w + iw) * kBlock)
                             : _mm256_setzero_ps();
        }
      }
      for (int j = 0; j < 6; ++j) InputRows(d + j, 6, t + j, 6);          // B^T d: down each column
      for (int i = 0; i < 6; ++i) InputRows(t + i * 6, 1, d + i * 6, 1);  // (B^T d) B: along each row
      float* out = v + tl * c_pad + cb * kBlock;
      for (int xi = 0; xi < 36; ++xi) _mm256_storeu_ps(out + xi * point_stride, d[xi]);
    }
  });
}

// C[r][0..8*NV) = sum_k A[r][k] * Bm[k][0..8*NV) for R rows of A (at a_stride) and a panel of B (b_stride wide).
template <int R, int NV>
__attribute__((always_inline)) inline void Tile(const float* a, int64_t a_stride, const float* b, int64_t b_stride,
                                                int64_t k, float* c, int64_t c_stride) {
  __m256 acc[R][NV];
  for (int r = 0; r < R; ++r) {
    for (int n = 0; n < NV; ++n) acc[r][n] = _mm256_setzero_ps();
  }
  for (int64_t kk = 0; kk < k; ++kk) {
    __m256 bv[NV];
    for (int n = 0; n < NV; ++n) bv[n] = _mm256_loadu_ps(b + kk * b_stride + n * 8);
    for (int r = 0; r < R; ++r) {
      const __m256 av = _mm256_broadcast_ss(a + r * a_stride + kk);
      for (int n = 0; n < NV; ++n) acc[r][n] = _mm256_fmadd_ps(av, bv[n], acc[r][n]);
    }
  }
  for (int r = 0; r < R; ++r) {
    for (int n = 0; n < NV; ++n) _mm256_storeu_ps(c + r * c_stride + n * 8, acc[r][n]);
  }
}

template <int NV>
void PanelProduct(const float* a, int64_t rows, int64_t k, const float* b, float* c, int64_t c_stride) {
  constexpr int64_t width = NV * 8;
  int64_t r = 0;
  for (; r + kRows <= rows; r += kRows) Tile<kRows, NV>(a + r * k, k, b, width, k, c + r * c_stride, c_stride);
  switch (rows - r) {
    case 5: Tile<5, NV>(a + r * k, k, b, width, k, c + r * c_stride, c_stride); break;
    case 4: Tile<4, NV>(a + r * k, k, b, width, k, c + r * c_stride, c_stride); break;
    case 3: Tile<3, NV>(a + r * k, k, b, width, k, c + r * c_stride, c_stride); break;
    case 2: Tile<2, NV>(a + r * k, k, b, width, k, c + r * c_stride, c_stride); break;
    case 1: Tile<1, NV>(a + r * k, k, b, width, k, c + r * c_stride, c_stride); break;
    default: break;
  }
}

// Phase 2: M[xi] = V[xi] * U[xi] for the chunk's `rows` tiles, one task per (point, panel).
void Products(const float* v, const PackedFilter& f, int64_t rows, int64_t chunk, float* m, int threads) {
  const int64_t panels = f.panels();
  const int64_t min_tasks = std::max<int64_t>(1, 200000 / std::max<int64_t>(rows * f.c_pad * kPanel, 1));
  ParallelFor(threads, kPoints * panels, min_tasks, [&](int64_t begin, int64_t end) {
    for (int64_t task = begin; task < end; ++task) {
      const int64_t xi = task / panels, p = task % panels;
      const float* a = v + xi * chunk * f.c_pad;
      const float* b = f.data() + xi * f.c_pad * f.m_pad + p * kPanel * f.c_pad;
      float* c = m + xi * chunk * f.m_pad + p * kPanel;
      if (f.panel_width(p) == kPanel) {
        PanelProduct<2>(a, rows, f.c_pad, b, c, f.m_pad);
      } else {
        PanelProduct<1>(a, rows, f.c_pad, b, c, f.m_pad);
      }
    }
  });
}

// A^T applied to six vectors in[0..5] at `stride`: out[0..3].
__attribute__((always_inline)) inline void OutputRows(const __m256* in, int stride, __m256* out, int out_stride) {
  const __m256 m0 = in[0], m1 = in[stride], m2 = in[2 * stride], m3 = in[3 * stride], m4 = in[4 * stride],
               m5 = in[5 * stride];
  const __m256 s12 = _mm256_add_ps(m1, m2), d12 = _mm256_sub_ps(m1, m2);
  const __m256 s34 = _mm256_add_ps(m3, m4), d34 = _mm256_sub_ps(m3, m4);
  out[0] = _mm256_add_ps(_mm256_add_ps(m0, s12), s34);
  out[out_stride] = _mm256_fmadd_ps(_mm256_set1_ps(2.0f), d34, d12);
  out[2 * out_stride] = _mm256_fmadd_ps(_mm256_set1_ps(4.0f), s34, s12);
  out[3 * out_stride] = _mm256_add_ps(_mm256_fmadd_ps(_mm256_set1_ps(8.0f), d34, d12), m5);
}

struct OutputArgs {
  const float* m;
  const float* bias;  // m_pad values, zeros past M
  const float* z;     // Y's layout, or null
  float* y;
  int64_t chunk, m_pad, out_channels;
  simd::UnaryParams params;  // the activation's
};

// Phase 3 for tiles [t0, t1) and every output channel block, with the activation Op (simd_kernels.inc: the
// unary kernels' vectorized formulas, NaN kept as in ref).
template <class Op>
void OutputTransform(const OutputArgs& o, const Geometry& g, int64_t t0, int64_t t1, int threads) {
  const int64_t per_image = g.tiles_h * g.tiles_w;
  const int64_t point_stride = o.chunk * o.m_pad;
  ParallelFor(threads, (t1 - t0) * g.m_blocks, 16, [&](int64_t begin, int64_t end) {
    alignas(32) __m256 in[36], t[24], out[16];
    const Op act(o.params);
    for (int64_t task = begin; task < end; ++task) {
      const int64_t tl = task / g.m_blocks, ob = task % g.m_blocks, tile = t0 + tl;
      const int64_t n = tile / per_image, th = tile % per_image / g.tiles_w, tw = tile % g.tiles_w;
      const float* src = o.m + tl * o.m_pad + ob * kBlock;
      for (int xi = 0; xi < 36; ++xi) in[xi] = _mm256_loadu_ps(src + xi * point_stride);
      for (int j = 0; j < 6; ++j) OutputRows(in + j, 6, t + j, 6);           // A^T M: 4 rows of 6
      for (int i = 0; i < 4; ++i) OutputRows(t + i * 6, 1, out + i * 4, 1);  // (A^T M) A: 4x4
      const __m256 bias = _mm256_loadu_ps(o.bias + ob * kBlock);
      // Lanes past M (Y's padding channels) are zeros.
      const int64_t live = std::min<int64_t>(kBlock, o.out_channels - ob * kBlock);
      const __m256i lane = _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7);
      const __m256 keep = _mm256_castsi256_ps(_mm256_cmpgt_epi32(_mm256_set1_epi32(static_cast<int>(live)), lane));
      const int64_t oh0 = th * 4, ow0 = tw * 4;
      const int64_t rows = std::min<int64_t>(4, g.out_h - oh0), cols = std::min<int64_t>(4, g.out_w - ow0);
      const int64_t base = ((n * g.m_blocks + ob) * g.out_h + oh0) * g.out_w + ow0;
      for (int64_t i = 0; i < rows; ++i) {
        for (int64_t j = 0; j < cols; ++j) {
          const int64_t at = (base + i * g.out_w + j) * kBlock;
          __m256 r = _mm256_add_ps(out[i * 4 + j], bias);
          if (o.z) r = _mm256_add_ps(r, _mm256_loadu_ps(o.z + at));
          r = _mm256_and_ps(act(r), keep);
          _mm256_storeu_ps(o.y + at, r);
        }
      }
    }
  });
}

using OutputFn = void (*)(const OutputArgs&, const Geometry&, int64_t, int64_t, int);

OutputFn OutputFor(Kind k) {
  switch (k) {
    case Kind::kNone: return &OutputTransform<IdentityOp>;
    case Kind::kRelu: return &OutputTransform<ReluOp>;
    case Kind::kLeakyRelu: return &OutputTransform<LeakyReluOp>;
    case Kind::kClip: return &OutputTransform<ClipOp>;
    case Kind::kSigmoid: return &OutputTransform<SigmoidOp>;
    case Kind::kTanh: return &OutputTransform<TanhOp>;
    case Kind::kHardSigmoid: return &OutputTransform<HardSigmoidOp>;
    case Kind::kHardSwish: return &OutputTransform<HardSwishOp>;
    case Kind::kSilu: return &OutputTransform<SiluOp>;
    case Kind::kGelu: return &OutputTransform<GeluErfOp>;
    case Kind::kGeluTanh: return &OutputTransform<GeluTanhOp>;
    case Kind::kMish: return &OutputTransform<MishOp>;
  }
  return nullptr;
}

}  // namespace winograd_avx2
#pragma GCC pop_options

using winograd_avx2::OutputArgs;
using winograd_avx2::OutputFn;

// Tiles per chunk: V and M within kChunkBudget, at least kMinChunkTiles, at most every tile of the run.
int64_t ChunkTiles(const PackedFilter& f, int64_t tiles) {
  const int64_t per_tile = kPoints * (f.c_pad + f.m_pad) * static_cast<int64_t>(sizeof(float));
  return std::min(tiles, std::max(kMinChunkTiles, kChunkBudget / per_tile));
}

struct WinogradState {
  Geometry g;
  Shape y_shape;
  int64_t chunk = 0;
};

class WinogradConv : public OpKernel {
 public:
  explicit WinogradConv(const ir::Node& node)
      : attrs_(semantics::WindowAttrs::FromNode(node)),
        has_bias_(node.input(2) != nullptr),
        has_z_(node.input(3) != nullptr) {
    const std::string what = node.Describe();
    if (const std::string reason = FusedActivation::Parse(node, &act_); !reason.empty()) {
      throw UnsupportedError(what + ": " + reason);
    }
    const std::shared_ptr<const Tensor> w = ConstantInput(node, 1);
    if (!w || w->dtype() != DataType::kFloat || w->shape().size() != 4 || w->shape()[2] != 3 || w->shape()[3] != 3) {
      throw UnsupportedError(what + ": the Winograd kernel needs constant float32 weights [M, C, 3, 3]");
    }
    w_shape_ = w->shape();
    filter_.out_channels = w_shape_[0];
    filter_.channels = w_shape_[1];
    filter_.c_pad = RoundUp(filter_.channels, kBlock);
    filter_.m_pad = RoundUp(filter_.out_channels, kBlock);
    // One copy per initializer: [M, C, 3, 3] read plainly, packed as [36, C_pad, M_pad] (no other kernel packs a
    // convolution's weights into that desc).
    using dnnl::memory;
    const memory::desc user({filter_.out_channels, filter_.channels, 3, 3}, memory::data_type::f32,
                            memory::format_tag::oihw);
    const memory::desc packed({kPoints, filter_.c_pad, filter_.m_pad}, memory::data_type::f32, memory::format_tag::abc);
    filter_.u = SharedPacks::Instance().Find(w, user, packed);
    if (!filter_.u) {
      auto u = std::make_shared<dnnl::memory>(packed, Engine());
      PackFilter(w->data<float>(), filter_, static_cast<float*>(u->get_data_handle()));
      SharedPacks::Instance().Add(w, user, packed, u);
      filter_.u = std::move(u);
      filter_.made_here = true;
    }
    output_ = winograd_avx2::OutputFor(act_.kind);
    // The unary kernels' parameters of the activation (simd_common.h).
    params_.alpha = act_.alpha;
    params_.beta = act_.beta;
    params_.lo = act_.alpha;
    params_.hi = act_.beta;
  }

  // V and M of a chunk of `chunk` tiles, and the padded bias.
  int64_t ScratchFloats(int64_t chunk) const {
    return kPoints * chunk * (filter_.c_pad + filter_.m_pad) + filter_.m_pad;
  }

  int64_t held_bytes() const override {
    return filter_.made_here ? filter_.floats() * static_cast<int64_t>(sizeof(float)) : 0;
  }

  // W is read once, at creation: its transform is all Compute uses.
  bool ReleaseConstantInput(size_t k) override { return k == 1; }

  void Prepare(PrepareContext& ctx) const override {
    const InputSpec& x = ctx.tensor_input(0);
    const std::string what = ctx.Describe();
    const int64_t c_blocks = filter_.c_pad / kBlock;
    if (x.dtype != DataType::kFloat || x.shape.size() != 5 || x.shape[1] != c_blocks || x.shape[4] != kBlock) {
      throw InvalidArgumentError(what + ": " + ctx.InputString(0) + ", expected float32 [N, " +
                                 std::to_string(c_blocks) + ", H, W, 8] (W's " + std::to_string(filter_.channels) +
                                 " channels blocked by 8)");
    }
    const Shape logical = LogicalShape(x.shape, filter_.channels, kBlock);
    semantics::ConvShape cs;
    try {
      cs = semantics::ResolveConv(attrs_, 1, logical, w_shape_, what);
    } catch (const InvalidArgumentError& e) {
      throw InvalidArgumentError(std::string(e.what()) + " (" + ctx.InputString(0) + ", W " + ShapeToString(w_shape_) +
                                 ")");
    }
    if (has_bias_) {
      const InputSpec& b = ctx.tensor_input(2);
      if (b.dtype != DataType::kFloat || b.shape != Shape{filter_.out_channels}) {
        throw InvalidArgumentError(what + ": bias B is " + ctx.InputString(2) + ", expected float32[" +
                                   std::to_string(filter_.out_channels) + "]");
      }
    }
    WinogradState s;
    s.y_shape = BlockedShape(cs.y_shape, kBlock);
    if (has_z_) {
      const InputSpec& z = ctx.tensor_input(3);
      if (z.dtype != DataType::kFloat || z.shape != s.y_shape) {
        throw InvalidArgumentError(what + ": input Z is " + ctx.InputString(3) + ", expected Y's float32" +
                                   ShapeToString(s.y_shape));
      }
      ctx.output(0).in_place_of = 3;  // each position of Z is read before Y's is written
    }
    ctx.SetOutput(0, DataType::kFloat, s.y_shape);
    Geometry& g = s.g;
    g.batch = cs.batch;
    g.in_h = cs.g.in[0];
    g.in_w = cs.g.in[1];
    g.out_h = cs.g.out[0];
    g.out_w = cs.g.out[1];
    g.pad_top = cs.g.pad_begin[0];
    g.pad_left = cs.g.pad_begin[1];
    g.tiles_h = (g.out_h + 3) / 4;
    g.tiles_w = (g.out_w + 3) / 4;
    g.c_blocks = c_blocks;
    g.m_blocks = filter_.m_pad / kBlock;
    s.chunk = ChunkTiles(filter_, g.tiles());
    if (g.tiles() > 0) {
      ctx.workspace().Need("conv scratchpad", ScratchFloats(s.chunk) * static_cast<int64_t>(sizeof(float)));
    }
    ctx.EmplaceState(std::move(s));
  }

  void Compute(KernelContext& ctx) const override {
    const WinogradState& s = ctx.state<WinogradState>();
    const Tensor& x = ctx.required_input(0);
    const Tensor* bias = has_bias_ ? ctx.input(2) : nullptr;
    const Tensor* z = has_z_ ? ctx.input(3) : nullptr;
    Tensor* reused = z ? ctx.ReuseInput(3, 0, DataType::kFloat, s.y_shape) : nullptr;
    Tensor& y = reused ? *reused : ctx.OutputUninitialized(0);  // every element written below
    if (y.size() == 0) return;
    const Geometry& g = s.g;
    const int64_t chunk = s.chunk, tiles = g.tiles();
    const int64_t v_size = kPoints * chunk * filter_.c_pad, m_size = kPoints * chunk * filter_.m_pad;
    // V, M and the padded bias in this thread's conv scratchpad (the pool's workers write into it too).
    float* v = static_cast<float*>(ConvScratchpad(static_cast<size_t>(ScratchFloats(chunk)) * sizeof(float)));
    float* m = v + v_size;
    float* padded_bias = m + m_size;
    std::fill(padded_bias, padded_bias + filter_.m_pad, 0.0f);
    if (bias) std::copy_n(bias->data<float>(), filter_.out_channels, padded_bias);
    const OutputArgs out{.m = m,
                         .bias = padded_bias,
                         .z = reused ? y.data<float>()
                              : z    ? z->data<float>()
                                     : nullptr,
                         .y = y.data<float>(),
                         .chunk = chunk,
                         .m_pad = filter_.m_pad,
                         .out_channels = filter_.out_channels,
                         .params = params_};
    const int threads = ctx.threads();
    for (int64_t t0 = 0; t0 < tiles; t0 += chunk) {
      const int64_t t1 = std::min(tiles, t0 + chunk);
      winograd_avx2::InputTransform(x.data<float>(), g, t0, t1, chunk, filter_.c_pad, v, threads);
      winograd_avx2::Products(v, filter_, t1 - t0, chunk, m, threads);
      output_(out, g, t0, t1, threads);
    }
  }

 private:
  semantics::WindowAttrs attrs_;
  bool has_bias_, has_z_;
  FusedActivation act_;
  Shape w_shape_;
  PackedFilter filter_;
  OutputFn output_ = nullptr;
  simd::UnaryParams params_;
};

// From the attributes and W alone (see the top of the file).
std::string WinogradPredicate(const ir::Node& node) {
  const std::string no = "BlockedConv (Winograd F(4x4, 3x3)): ";
  if (node.GetInt("block", 0) != kBlock) return no + "block is not 8";
  if (node.GetInt("plain_input", 0) != 0) return no + "plain_input";
  if (node.GetInt("group", 1) != 1) return no + "a grouped convolution";
  FusedActivation act;
  if (std::string reason = FusedActivation::Parse(node, &act); !reason.empty()) return reason;
  const std::shared_ptr<const Tensor> w = ConstantInput(node, 1);
  if (!w || w->dtype() != DataType::kFloat) return no + "W is not a float32 constant";
  const Shape& ws = w->shape();
  if (ws.size() != 4 || ws[2] != 3 || ws[3] != 3) return no + "W is not [M, C, 3, 3]";
  if (ws[0] < kMinChannels || ws[1] < kMinChannels) {
    return no + "fewer than " + std::to_string(kMinChannels) + " input or output channels";
  }
  for (const char* name : {"strides", "dilations"}) {
    const std::vector<int64_t> v = node.GetInts(name);
    if (std::any_of(v.begin(), v.end(), [](int64_t s) { return s != 1; })) return no + name + " other than 1";
  }
  return "";
}

// X's spatial dims static, with at least kMinTiles output tiles per image.
std::string WinogradShapePredicate(const ir::Node& node) {
  const std::string no = "BlockedConv (Winograd F(4x4, 3x3)): ";
  const ir::Value* xv = node.input(0);
  if (!xv || !xv->type().is_tensor() || !xv->type().shape || xv->type().shape->size() != 5) {
    return no + "X's spatial dims are not known";
  }
  const auto& dims = *xv->type().shape;
  if (!dims[2].is_static() || !dims[3].is_static()) return no + "X's spatial dims are not static";
  const std::shared_ptr<const Tensor> w = ConstantInput(node, 1);
  if (!w || w->shape().size() != 4) return "";  // the predicate refuses it
  try {
    const Shape logical{1, w->shape()[1], dims[2].value, dims[3].value};
    const semantics::ConvShape cs = semantics::ResolveConv(semantics::WindowAttrs::FromNode(node), 1, logical,
                                                           w->shape(), node.Describe());
    const int64_t tiles = (cs.g.out[0] + 3) / 4 * ((cs.g.out[1] + 3) / 4);
    if (tiles < kMinTiles) {
      return no + std::to_string(tiles) + " output tiles per image, fewer than " + std::to_string(kMinTiles) +
             " (oneDNN's direct kernel is as fast)";
    }
  } catch (const InvalidArgumentError&) {
    return "";  // left for Prepare to report
  }
  return "";
}

}  // namespace

void RegisterWinogradConvKernels(KernelRegistry& r) {
  r.Add({.op = "BlockedConv",
         .domain = std::string(schemas::kFerryDomain),
         .since = 1,
         .types = {{"T", {DataType::kFloat}}},
         .create = [](const ir::Node& node, const KernelOptions&) { return std::make_unique<WinogradConv>(node); },
         .predicate = WinogradPredicate,
         .shape_predicate = WinogradShapePredicate,
         .isa = {Isa::kAvx2, Isa::kFma},
         .name = "cpu.f32_blocked_conv__winograd_avx2.1",
         .constraints = "float32; block 8; 2-D 3x3, stride 1, no dilation, group 1, constant W, C and M >= 16, "
                        "X not plain; X's spatial dims static with >= 16 output tiles (4x4) per image"});
}

}  // namespace ferry::cpu
