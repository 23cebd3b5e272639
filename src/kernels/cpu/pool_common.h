// What the cpu pooling kernels share. (1) ai.ferry BlockedPool's oneDNN pooling_v2 primitive (blocked_pool.cc) for a
// window resolved as ref resolves it (semantics::ResolveWindow), and the corrections that turn its output into
// ONNX's: oneDNN's max starts from the lowest float, ONNX's from -inf, so outputs equal to the lowest float (or NaN)
// are recomputed exactly, skipping NaN like ref; its include-padding average divides by the kernel size, ONNX
// (count_include_pad=1) by the taps inside the padded input, which differ where ceil_mode lets the last window
// overhang the end padding; its exclude-padding average refuses pads as long as the window (and dilations beyond
// the input), which ONNX allows, so then the include-padding average runs; average outputs whose divisor differs
// from ref's are rescaled, and a window with no tap inside the input is NaN without count_include_pad (ref's 0 / 0).
// (2) The plain-layout loops of MaxPool / AveragePool (pooling.cc, pool_plain.cc), below.
#pragma once

#include <dnnl.hpp>
#include <string>
#include <utility>
#include <vector>

#include "semantics/window.h"

namespace ferry::cpu {

enum class PoolKind { kMax, kAverage };

// One pooling primitive for one input shape, and what corrects its output.
struct PoolPrimitive {
  semantics::WindowGeometry g;
  dnnl::memory::desc x_md, y_md, scratch;
  dnnl::pooling_v2_forward prim;
  bool has_prim = false;  // false when the input or output is empty (nothing for oneDNN to do)
  // AveragePool: in-plane output positions oneDNN's divisor gets wrong, with the factor that fixes them (NaN: the
  // output is NaN).
  std::vector<std::pair<int64_t, float>> fixes;
};

// Completes `p` — whose geometry `g` and memory descs `x_md` / `y_md` (any layout oneDNN pools: plain or blocked)
// are set — with the primitive (unless `empty`) and the average fixes. Throws InternalError naming `what`.
void BuildPoolPrimitive(PoolKind kind, bool count_include_pad, bool empty, PoolPrimitive* p,
                        const std::string& what);

// The name of the implementation oneDNN picks for pooling geometry `g` over x_md -> y_md ("jit:avx512_core",
// "ref:any", ...). Throws dnnl::error when oneDNN cannot pool it.
std::string PoolImplementation(PoolKind kind, bool count_include_pad, const semantics::WindowGeometry& g,
                               const dnnl::memory::desc& x_md, const dnnl::memory::desc& y_md);

// Pools x -> y with `p` and corrects the output. The tensors hold `outer` groups of `lanes` interleaved planes:
// plane (q, lane)'s element at in-plane offset o lives at (q * plane_size + o) * lanes + lane (lanes = 1: plain
// N*C planes; lanes = b: a blocked tensor's N*ceil(C/b) blocks). Without a primitive (an empty spatial input with
// padding) every window is empty: max -inf; average 0, or NaN without count_include_pad.
void RunPoolPrimitive(const PoolPrimitive& p, PoolKind kind, bool count_include_pad, const float* x, float* y,
                      int64_t outer, int64_t lanes, int threads, const std::string& what);

// --- Plain-layout pooling on our own loops (pool_plain.cc) ---
// oneDNN 2.6 pools plain N*C planes with its scalar simple_nchw implementation (no JIT for that layout on AVX2):
// 5-36x ONNX Runtime's time. These loops replace it for MaxPool (with the optional Indices) and AveragePool.

// The loops of one ISA: kAvx2 vectorizes each output row 8 outputs at a time (needs AVX2 and FMA on the host).
enum class PlainPoolIsa { kScalar, kAvx2 };

// What a plain pool computes besides the window.
struct PlainPoolOptions {
  PoolKind kind = PoolKind::kMax;
  bool count_include_pad = false;  // AveragePool: divide by the taps inside the padded input
  bool column_major = false;       // MaxPool Indices: storage_order = 1
};

// The most taps a window may have here (tap numbers are 32-bit lanes); wider windows are refused to ref.
inline constexpr int64_t kPlainPoolMaxTaps = int64_t{1} << 30;

// Pools `planes` row-major planes of g.in_size() floats (x) into planes of g.out_size() floats (y) over the window
// `g` (1-3 spatial dims, any strides, pads, dilations), with ref's semantics and ref's tap order, so the results
// are ref's bit for bit: max skips NaN (-inf for a window without an input element); the average sums in float
// and divides by the taps inside the input (or inside the padded input with count_include_pad). For MaxPool,
// `indices` (when not null) receives ref's flat argmax (the first maximum; the first tap inside when nothing beats
// -inf; 0 for an empty window), row- or column-major within the plane. Output rows are split over `threads`.
void PlainPool(const semantics::WindowGeometry& g, const PlainPoolOptions& o, PlainPoolIsa isa, const float* x,
               int64_t planes, float* y, int64_t* indices, int threads);

}  // namespace ferry::cpu
