// What the oneDNN pooling kernels (MaxPool / AveragePool on plain tensors in pooling.cc, ai.ferry BlockedPool in
// blocked_pool.cc) share: the pooling_v2 primitive for a window resolved as ref resolves it (semantics::ResolveWindow),
// and the corrections that turn its output into ONNX's (described at the top of pooling.cc).
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

}  // namespace ferry::cpu
