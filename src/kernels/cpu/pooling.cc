// MaxPool and AveragePool (float32, 1-3 spatial dims) on oneDNN's pooling primitive, with the window geometry
// (auto_pad, pads, strides, dilations, ceil_mode) resolved by the same code as ref (ref::ResolveWindow): oneDNN
// gets the output extent from it and as much end padding as that needs. oneDNN differs from ONNX in a few
// places, each corrected after the primitive runs:
// - max pooling starts from the lowest float, ONNX from -inf: an output equal to the lowest float (a window of
//   only -inf, NaN or padding, or one whose maximum really is the lowest float) is recomputed exactly, skipping
//   NaN like ref;
// - its include-padding average divides by the kernel size, ONNX (count_include_pad=1) by the taps inside the
//   padded input: they differ where ceil_mode lets the last window overhang the end padding;
// - its exclude-padding average refuses pads as long as the window (and dilations beyond the input), which
//   ONNX allows: then the include-padding average runs and divides by the kernel size;
// so average outputs whose divisor differs from ref's are rescaled, and a window with no tap inside the input
// is NaN without count_include_pad (ref's 0 / 0).
// GlobalAveragePool and GlobalMaxPool are plain plane reductions (sums in double in ref's order, max propagating
// NaN like ref), vectorised by the compiler over independent lanes.
#include <cmath>
#include <limits>
#include <string>
#include <vector>

#include "core/parallel.h"
#include "kernels/cpu/dnnl_scratchpad.h"
#include "kernels/cpu/dnnl_util.h"
#include "kernels/kernel_def.h"
#include "kernels/ref/conv_util.h"
#include "kernels/registry.h"

namespace ferry::cpu {
namespace {

constexpr size_t kMaxSpatial = 3;  // oneDNN pooling: 1-D, 2-D and 3-D

enum class PoolKind { kMax, kAverage };

// Taps of output position `o` (row-major over g.out) that fall inside the input, as row-major in-plane offsets.
template <typename Fn>
void ForEachTap(const ref::WindowGeometry& g, int64_t o, Fn&& fn) {
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

// ref's MaxPool of one output position: NaN never wins, an empty window gives -inf.
float ExactMax(const float* plane, const ref::WindowGeometry& g, int64_t o) {
  float best = -std::numeric_limits<float>::infinity();
  ForEachTap(g, o, [&](int64_t off) {
    if (plane[off] > best) best = plane[off];
  });
  return best;
}

struct PoolEntry {
  ref::WindowGeometry g;
  Shape y_shape;
  dnnl::memory::desc x_md, y_md, scratch;
  dnnl::pooling_v2_forward prim;
  bool has_prim = false;
  // AveragePool: in-plane output positions oneDNN's divisor gets wrong, with the factor that fixes them (NaN:
  // the output is NaN).
  std::vector<std::pair<int64_t, float>> fixes;
};

class Pool : public OpKernel {
 public:
  Pool(const ir::Node& node, PoolKind kind)
      : kind_(kind),
        attrs_(ref::WindowAttrs::FromNode(node)),
        ceil_mode_(node.GetInt("ceil_mode", 0) != 0),
        count_include_pad_(node.GetInt("count_include_pad", 0) != 0) {
    if (attrs_.kernel_shape.empty()) {
      throw InvalidModelError(node.Describe() + ": required attribute kernel_shape is missing");
    }
  }

  void Compute(KernelContext& ctx) const override {
    const Tensor& x = ctx.required_input(0);
    const std::string what = ctx.Describe();
    if (x.dtype() != DataType::kFloat) {
      throw InvalidArgumentError(what + ": input X must be float32, got " + std::string(DataTypeName(x.dtype())));
    }
    if (x.rank() < 3) {
      throw InvalidArgumentError(what + ": input X must have rank >= 3 (N, C, spatial...), got shape " +
                                 ShapeToString(x.shape()));
    }
    auto entry = cache_.Get(ShapeKey({&x}), [&] { return Build(x.shape(), what); });
    const PoolEntry& e = *entry;
    Tensor& y = ctx.OutputUninitialized(0, DataType::kFloat, e.y_shape);
    if (y.size() == 0) return;
    const int64_t planes = x.dim(0) * x.dim(1);
    const int64_t in_size = e.g.in_size(), out_size = e.g.out_size();
    const float* xp = x.data<float>();
    float* yp = y.data<float>();
    if (!e.has_prim) {
      // An empty spatial input with padding: every window is empty (max -inf; average 0, or NaN without
      // count_include_pad).
      const float v = kind_ == PoolKind::kMax ? -std::numeric_limits<float>::infinity()
                      : count_include_pad_    ? 0.0f
                                              : std::numeric_limits<float>::quiet_NaN();
      std::fill(yp, yp + y.size(), v);
      return;
    }
    std::unordered_map<int, dnnl::memory> args{{DNNL_ARG_SRC, Wrap(x, e.x_md)}, {DNNL_ARG_DST, Wrap(y, e.y_md)}};
    AddScratchpad(args, e.scratch);
    Execute(e.prim, args, ctx.threads(), what);
    if (kind_ == PoolKind::kMax) {
      const float lowest = std::numeric_limits<float>::lowest();
      ParallelFor(y.size() < (1 << 16) ? 1 : ctx.threads(), planes, 1, [&](int64_t begin, int64_t end) {
        for (int64_t p = begin; p < end; ++p) {
          float* out = yp + p * out_size;
          for (int64_t o = 0; o < out_size; ++o) {
            if (out[o] == lowest || std::isnan(out[o])) out[o] = ExactMax(xp + p * in_size, e.g, o);
          }
        }
      });
    } else if (!e.fixes.empty()) {
      for (int64_t p = 0; p < planes; ++p) {
        float* out = yp + p * out_size;
        for (const auto& [o, f] : e.fixes) out[o] = std::isnan(f) ? f : out[o] * f;
      }
    }
  }

 private:
  std::shared_ptr<PoolEntry> Build(const Shape& xs, const std::string& what) const {
    auto e = std::make_shared<PoolEntry>();
    const std::span<const int64_t> in_spatial(xs.data() + 2, xs.size() - 2);
    e->g = ref::ResolveWindow(attrs_, in_spatial, attrs_.kernel_shape, ceil_mode_, what);
    const ref::WindowGeometry& g = e->g;
    if (g.rank() > kMaxSpatial) {
      throw InvalidArgumentError(what + ": the cpu kernel pools at most 3 spatial dims, got " +
                                 std::to_string(g.rank()));
    }
    e->y_shape = {xs[0], xs[1]};
    e->y_shape.insert(e->y_shape.end(), g.out.begin(), g.out.end());
    if (ShapeElementCount(e->y_shape) == 0 || ShapeElementCount(xs) == 0) return e;
    // oneDNN checks out = (in + pad_l + pad_r - extent) / stride + 1: give it the end padding that yields
    // ref's output extent (never negative; the windows themselves are the same).
    dnnl::memory::dims strides, kernel, dilation, pad_l, pad_r;
    for (size_t d = 0; d < g.rank(); ++d) {
      const int64_t extent = (g.kernel[d] - 1) * g.dilations[d] + 1;
      strides.push_back(g.strides[d]);
      kernel.push_back(g.kernel[d]);
      dilation.push_back(g.dilations[d] - 1);
      pad_l.push_back(g.pad_begin[d]);
      pad_r.push_back(std::max<int64_t>(0, (g.out[d] - 1) * g.strides[d] + extent - g.in[d] - g.pad_begin[d]));
    }
    e->x_md = PlainDesc(xs, DataType::kFloat);
    e->y_md = PlainDesc(e->y_shape, DataType::kFloat);
    // oneDNN's exclude-padding average wants every pad shorter than the window and dilations below the input
    // extent; where that fails, its include-padding average runs and every divisor is fixed afterwards.
    bool exclude_ok = true;
    for (size_t d = 0; d < g.rank(); ++d) {
      const int64_t extent = (g.kernel[d] - 1) * g.dilations[d] + 1;
      exclude_ok = exclude_ok && pad_l[d] < extent && pad_r[d] < extent && dilation[d] < g.in[d];
    }
    const bool dnnl_include = count_include_pad_ || !exclude_ok;
    const dnnl::algorithm alg = kind_ == PoolKind::kMax ? dnnl::algorithm::pooling_max
                                : dnnl_include          ? dnnl::algorithm::pooling_avg_include_padding
                                                        : dnnl::algorithm::pooling_avg_exclude_padding;
    try {
      dnnl::pooling_v2_forward::desc d(dnnl::prop_kind::forward_inference, alg, e->x_md, e->y_md, strides, kernel,
                                       dilation, pad_l, pad_r);
      const dnnl::pooling_v2_forward::primitive_desc pd(d, WithUserScratchpad(), Engine());
      e->prim = dnnl::pooling_v2_forward(pd);
      e->scratch = pd.scratchpad_desc();
    } catch (const dnnl::error& err) {
      throw InternalError(what + ": oneDNN pooling: " + err.what());
    }
    e->has_prim = true;
    if (kind_ == PoolKind::kAverage) e->fixes = AverageFixes(g, dnnl_include);
    return e;
  }

  // Per output position: the factor from oneDNN's divisor (the kernel size with `dnnl_include`, else the taps
  // inside the input) to ref's (the taps inside the padded input with count_include_pad, else the taps inside
  // the input), or NaN where ref divides 0 by 0 (no tap inside the input, without count_include_pad).
  std::vector<std::pair<int64_t, float>> AverageFixes(const ref::WindowGeometry& g, bool dnnl_include) const {
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
        const int64_t want = count_include_pad_ ? n_pad : n_in;
        any = any || have != want || (!count_include_pad_ && n_in == 0);
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
        want *= count_include_pad_ ? padded[d][od] : inside[d][od];
      }
      if (want == 0) {  // only without count_include_pad: ref's 0 / 0
        fixes.emplace_back(o, std::numeric_limits<float>::quiet_NaN());
      } else if (have != want) {
        fixes.emplace_back(o, static_cast<float>(have) / static_cast<float>(want));
      }
    }
    return fixes;
  }

  PoolKind kind_;
  ref::WindowAttrs attrs_;
  bool ceil_mode_, count_include_pad_;
  ShapeCache<PoolEntry> cache_;
};

std::string SpatialRankReason(const ir::Node& node) {
  const size_t rank = node.GetInts("kernel_shape").size();
  if (rank > kMaxSpatial) {
    return node.op_type() + ": " + std::to_string(rank) + " spatial dims are not implemented on cpu (at most 3)";
  }
  return "";
}

std::string MaxPoolReason(const ir::Node& node) {
  if (node.num_outputs() > 1 && node.output(1) != nullptr) {
    return "MaxPool: the Indices output is not implemented on cpu";
  }
  return SpatialRankReason(node);
}

// The sum of one plane of `n` floats in ref's order (four partial sums in double), so even sums that cancel
// large terms (±1e30) agree with ref.
double SumPlane(const float* v, int64_t n) {
  double s[4] = {0, 0, 0, 0};
  int64_t i = 0;
  for (; i + 4 <= n; i += 4) {
    for (int j = 0; j < 4; ++j) s[j] += static_cast<double>(v[i + j]);
  }
  for (; i < n; ++i) s[0] += static_cast<double>(v[i]);
  return (s[0] + s[1]) + (s[2] + s[3]);
}

// NaN-propagating maximum (ref returns the first NaN); -inf for an empty plane.
float MaxPlane(const float* v, int64_t n) {
  constexpr int kLanes = 16;
  float m[kLanes];
  int32_t nan[kLanes];
  for (int j = 0; j < kLanes; ++j) {
    m[j] = -std::numeric_limits<float>::infinity();
    nan[j] = 0;
  }
  int64_t i = 0;
  for (; i + kLanes <= n; i += kLanes) {
    for (int j = 0; j < kLanes; ++j) {
      const float e = v[i + j];
      m[j] = e > m[j] ? e : m[j];
      nan[j] |= e != e;
    }
  }
  for (; i < n; ++i) {
    m[0] = v[i] > m[0] ? v[i] : m[0];
    nan[0] |= v[i] != v[i];
  }
  float best = m[0];
  int32_t any_nan = nan[0];
  for (int j = 1; j < kLanes; ++j) {
    best = m[j] > best ? m[j] : best;
    any_nan |= nan[j];
  }
  if (any_nan) {
    for (int64_t k = 0; k < n; ++k) {
      if (std::isnan(v[k])) return v[k];
    }
  }
  return best;
}

template <bool kMax>
class GlobalPool : public OpKernel {
 public:
  explicit GlobalPool(const ir::Node&) {}

  void Compute(KernelContext& ctx) const override {
    const Tensor& x = ctx.required_input(0);
    const std::string what = ctx.Describe();
    if (x.dtype() != DataType::kFloat) {
      throw InvalidArgumentError(what + ": input X must be float32, got " + std::string(DataTypeName(x.dtype())));
    }
    if (x.rank() < 2) {
      throw InvalidArgumentError(what + ": input X must have rank >= 2 (N, C, spatial...), got shape " +
                                 ShapeToString(x.shape()));
    }
    Shape y_shape(x.shape().size(), 1);
    y_shape[0] = x.dim(0);
    y_shape[1] = x.dim(1);
    Tensor& y = ctx.OutputUninitialized(0, DataType::kFloat, y_shape);
    const int64_t planes = y.size();
    if (planes == 0) return;
    const int64_t size = x.size() / planes;
    const float* xp = x.data<float>();
    float* yp = y.data<float>();
    const int64_t min_planes = std::max<int64_t>(1, 16384 / std::max<int64_t>(size, 1));
    ParallelFor(ctx.threads(), planes, min_planes, [&](int64_t begin, int64_t end) {
      for (int64_t p = begin; p < end; ++p) {
        if constexpr (kMax) {
          yp[p] = MaxPlane(xp + p * size, size);
        } else {
          yp[p] = static_cast<float>(SumPlane(xp + p * size, size) / static_cast<double>(size));
        }
      }
    });
  }
};

std::unique_ptr<OpKernel> MakeMaxPool(const ir::Node& node) { return std::make_unique<Pool>(node, PoolKind::kMax); }
std::unique_ptr<OpKernel> MakeAveragePool(const ir::Node& node) {
  return std::make_unique<Pool>(node, PoolKind::kAverage);
}

}  // namespace

void RegisterPoolingKernels(KernelRegistry& r) {
  const std::vector<TypeConstraintDef> f32 = {{"T", {DataType::kFloat}}};
  // Later versions add attributes (storage_order, ceil_mode, dilations, count_include_pad) whose defaults keep
  // the earlier meaning, and types; float32 has one semantics across them.
  r.Add({.op = "MaxPool",
         .since = 1,
         .types = f32,
         .create = MakeMaxPool,
         .predicate = MaxPoolReason,
         .name = "cpu.f32_maxpool__onednn.1",
         .constraints = "no Indices output; 1-3 spatial dims"});
  r.Add({.op = "AveragePool",
         .since = 1,
         .types = f32,
         .create = MakeAveragePool,
         .predicate = SpatialRankReason,
         .name = "cpu.f32_averagepool__onednn.1",
         .constraints = "1-3 spatial dims"});
  r.Add({.op = "GlobalAveragePool",
         .since = 1,
         .types = f32,
         .create = MakeKernel<GlobalPool<false>>,
         .name = "cpu.f32_globalaveragepool__scalar.1"});
  r.Add({.op = "GlobalMaxPool",
         .since = 1,
         .types = f32,
         .create = MakeKernel<GlobalPool<true>>,
         .name = "cpu.f32_globalmaxpool__scalar.1"});
}

}  // namespace ferry::cpu
