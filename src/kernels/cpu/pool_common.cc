#include "kernels/cpu/pool_common.h"

#include <algorithm>
#include <cmath>
#include <limits>

#include "core/parallel.h"
#include "kernels/cpu/dnnl_scratchpad.h"
#include "kernels/cpu/dnnl_util.h"

namespace ferry::cpu {
namespace {

constexpr size_t kMaxSpatial = 3;  // oneDNN pooling: 1-D, 2-D and 3-D

// Taps of output position `o` (row-major over g.out) that fall inside the input, as row-major in-plane offsets.
template <typename Fn>
void ForEachTap(const semantics::WindowGeometry& g, int64_t o, Fn&& fn) {
  const size_t r = g.rank();
  int64_t start[kMaxSpatial] = {0, 0, 0}, t[kMaxSpatial] = {0, 0, 0};
  for (size_t d = r; d-- > 0;) {
    start[d] = (o % g.out[d]) * g.strides[d] - g.pad_begin[d];
    o /= g.out[d];
  }
  const int64_t ksize = g.kernel_size();
  for (int64_t k = 0; k < ksize; ++k) {
    int64_t off = 0;
    bool inside = true;
    for (size_t d = 0; d < r; ++d) {
      const int64_t i = start[d] + t[d] * g.dilations[d];
      inside = inside && i >= 0 && i < g.in[d];
      off = off * g.in[d] + i;
    }
    if (inside) fn(off);
    for (size_t d = r; d-- > 0;) {
      if (++t[d] < g.kernel[d]) break;
      t[d] = 0;
    }
  }
}

// ref's MaxPool of one output position of a plane whose in-plane offset o lives at plane[o * lanes]: NaN never
// wins, an empty window gives -inf.
float ExactMax(const float* plane, int64_t lanes, const semantics::WindowGeometry& g, int64_t o) {
  float best = -std::numeric_limits<float>::infinity();
  ForEachTap(g, o, [&](int64_t off) {
    if (plane[off * lanes] > best) best = plane[off * lanes];
  });
  return best;
}

// Per output position: the factor from oneDNN's divisor (the kernel size with `dnnl_include`, else the taps
// inside the input) to ref's (the taps inside the padded input with count_include_pad, else the taps inside
// the input), or NaN where ref divides 0 by 0 (no tap inside the input, without count_include_pad).
std::vector<std::pair<int64_t, float>> AverageFixes(const semantics::WindowGeometry& g, bool dnnl_include,
                                                    bool count_include_pad) {
  const size_t r = g.rank();
  std::vector<std::vector<int64_t>> inside(r), padded(r);
  bool any = false;
  for (size_t d = 0; d < r; ++d) {
    for (int64_t o = 0; o < g.out[d]; ++o) {
      const int64_t start = o * g.strides[d] - g.pad_begin[d];
      int64_t n_in = 0, n_pad = 0;
      for (int64_t t = 0; t < g.kernel[d]; ++t) {
        const int64_t i = start + t * g.dilations[d];
        n_in += i >= 0 && i < g.in[d];
        n_pad += i >= -g.pad_begin[d] && i < g.in[d] + g.pad_end[d];
      }
      inside[d].push_back(n_in);
      padded[d].push_back(n_pad);
      const int64_t have = dnnl_include ? g.kernel[d] : n_in;
      const int64_t want = count_include_pad ? n_pad : n_in;
      any = any || have != want || (!count_include_pad && n_in == 0);
    }
  }
  std::vector<std::pair<int64_t, float>> fixes;
  if (!any) return fixes;
  const int64_t out_size = g.out_size();
  for (int64_t o = 0; o < out_size; ++o) {
    int64_t rem = o, have = 1, want = 1;
    for (size_t d = r; d-- > 0;) {
      const size_t od = static_cast<size_t>(rem % g.out[d]);
      rem /= g.out[d];
      have *= dnnl_include ? g.kernel[d] : inside[d][od];
      want *= count_include_pad ? padded[d][od] : inside[d][od];
    }
    if (want == 0) {  // only without count_include_pad: ref's 0 / 0
      fixes.emplace_back(o, std::numeric_limits<float>::quiet_NaN());
    } else if (have != want) {
      fixes.emplace_back(o, static_cast<float>(have) / static_cast<float>(want));
    }
  }
  return fixes;
}

// oneDNN's pooling descriptor for `g` over x_md -> y_md, and whether its average divides by the kernel size.
struct PoolDesc {
  dnnl::pooling_v2_forward::desc desc;
  bool dnnl_include;
};

PoolDesc MakePoolDesc(PoolKind kind, bool count_include_pad, const semantics::WindowGeometry& g,
                      const dnnl::memory::desc& x_md, const dnnl::memory::desc& y_md) {
  // oneDNN checks out = (in + pad_l + pad_r - extent) / stride + 1: give it the end padding that yields ref's
  // output extent (never negative; the windows themselves are the same).
  dnnl::memory::dims strides, kernel, dilation, pad_l, pad_r;
  for (size_t d = 0; d < g.rank(); ++d) {
    const int64_t extent = (g.kernel[d] - 1) * g.dilations[d] + 1;
    strides.push_back(g.strides[d]);
    kernel.push_back(g.kernel[d]);
    dilation.push_back(g.dilations[d] - 1);
    pad_l.push_back(g.pad_begin[d]);
    pad_r.push_back(std::max<int64_t>(0, (g.out[d] - 1) * g.strides[d] + extent - g.in[d] - g.pad_begin[d]));
  }
  // oneDNN's exclude-padding average wants every pad shorter than the window and dilations below the input
  // extent; where that fails, its include-padding average runs and every divisor is fixed afterwards.
  bool exclude_ok = true;
  for (size_t d = 0; d < g.rank(); ++d) {
    const int64_t extent = (g.kernel[d] - 1) * g.dilations[d] + 1;
    exclude_ok = exclude_ok && pad_l[d] < extent && pad_r[d] < extent && dilation[d] < g.in[d];
  }
  const bool dnnl_include = count_include_pad || !exclude_ok;
  const dnnl::algorithm alg = kind == PoolKind::kMax ? dnnl::algorithm::pooling_max
                              : dnnl_include         ? dnnl::algorithm::pooling_avg_include_padding
                                                     : dnnl::algorithm::pooling_avg_exclude_padding;
  return {dnnl::pooling_v2_forward::desc(dnnl::prop_kind::forward_inference, alg, x_md, y_md, strides, kernel,
                                         dilation, pad_l, pad_r),
          dnnl_include};
}

}  // namespace

void BuildPoolPrimitive(PoolKind kind, bool count_include_pad, bool empty, PoolPrimitive* p,
                        const std::string& what) {
  const semantics::WindowGeometry& g = p->g;
  if (g.rank() > kMaxSpatial) {
    throw InvalidArgumentError(what + ": the cpu kernel pools at most 3 spatial dims, got " +
                               std::to_string(g.rank()));
  }
  if (empty) return;
  bool dnnl_include = false;
  try {
    const PoolDesc d = MakePoolDesc(kind, count_include_pad, g, p->x_md, p->y_md);
    dnnl_include = d.dnnl_include;
    const dnnl::pooling_v2_forward::primitive_desc pd(d.desc, WithUserScratchpad(), Engine());
    p->prim = dnnl::pooling_v2_forward(pd);
    p->scratch = pd.scratchpad_desc();
  } catch (const dnnl::error& err) {
    throw InternalError(what + ": oneDNN pooling: " + err.what());
  }
  p->has_prim = true;
  if (kind == PoolKind::kAverage) p->fixes = AverageFixes(g, dnnl_include, count_include_pad);
}

std::string PoolImplementation(PoolKind kind, bool count_include_pad, const semantics::WindowGeometry& g,
                               const dnnl::memory::desc& x_md, const dnnl::memory::desc& y_md) {
  const PoolDesc d = MakePoolDesc(kind, count_include_pad, g, x_md, y_md);
  return dnnl::pooling_v2_forward::primitive_desc(d.desc, WithUserScratchpad(), Engine()).impl_info_str();
}

void RunPoolPrimitive(const PoolPrimitive& p, PoolKind kind, bool count_include_pad, const float* x, float* y,
                      int64_t outer, int64_t lanes, int threads, const std::string& what) {
  const int64_t in_size = p.g.in_size(), out_size = p.g.out_size();
  const int64_t y_size = outer * lanes * out_size;
  if (!p.has_prim) {
    const float v = kind == PoolKind::kMax ? -std::numeric_limits<float>::infinity()
                    : count_include_pad    ? 0.0f
                                           : std::numeric_limits<float>::quiet_NaN();
    std::fill(y, y + y_size, v);
    return;
  }
  std::unordered_map<int, dnnl::memory> args{{DNNL_ARG_SRC, dnnl::memory(p.x_md, Engine(), const_cast<float*>(x))},
                                             {DNNL_ARG_DST, dnnl::memory(p.y_md, Engine(), y)}};
  AddScratchpad(args, p.scratch);
  Execute(p.prim, args, threads, what);
  if (kind == PoolKind::kMax) {
    // oneDNN starts from the lowest float: recompute outputs equal to it (or NaN) exactly. A vectorized scan
    // first (a plane rarely holds one: the per-element check alone took 0.5 ms of ResNet-50's 1.2 ms MaxPool).
    const float lowest = std::numeric_limits<float>::lowest();
    ParallelFor(y_size < (1 << 16) ? 1 : threads, outer, 1, [&](int64_t begin, int64_t end) {
      for (int64_t q = begin; q < end; ++q) {
        float* out = y + q * out_size * lanes;
        const float* in = x + q * in_size * lanes;
        int64_t suspects = 0;
        for (int64_t i = 0; i < out_size * lanes; ++i) suspects += !(out[i] > lowest);  // lowest, -inf or NaN
        if (suspects == 0) continue;
        for (int64_t o = 0; o < out_size; ++o) {
          for (int64_t lane = 0; lane < lanes; ++lane) {
            float& v = out[o * lanes + lane];
            if (v == lowest || std::isnan(v)) v = ExactMax(in + lane, lanes, p.g, o);
          }
        }
      }
    });
  } else if (!p.fixes.empty()) {
    for (int64_t q = 0; q < outer; ++q) {
      float* out = y + q * out_size * lanes;
      for (const auto& [o, f] : p.fixes) {
        for (int64_t lane = 0; lane < lanes; ++lane) {
          float& v = out[o * lanes + lane];
          v = std::isnan(f) ? f : v * f;
        }
      }
    }
  }
}

}  // namespace ferry::cpu
