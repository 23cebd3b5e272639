// LpPool (opsets 1, 2, 11, 18, 22) and GlobalLpPool (opsets 1, 2, 22) on the cpu backend, float32: y = (sum over
// the window's taps inside X of |x|^p)^(1/p), p from the attribute (a float at opset 1, an int from opset 2;
// default 2), the window resolved as ref resolves it (semantics::ResolveWindow: kernel_shape, strides, pads,
// auto_pad, dilations, ceil_mode), any number of spatial dims.
//
// As ref, the terms |x|^p and their sums are doubles and the taps are added in ref's order (the kernel's
// row-major order), so for p = 1 and p = 2, whose terms are exact in double, LpPool's sums are ref's bit for bit.
// How: per (n, c) plane, a pass writes the plane's |x|^p into a double buffer; then each output row (the outputs
// with every spatial coordinate but the innermost fixed) accumulates, for each of its window's input rows inside X
// and each innermost tap, the run of the buffer that tap reads over the outputs where it lands inside X (ranges
// Prepare resolved): contiguous adds along the output row for stride 1, strided ones otherwise; a last pass over
// the row takes the root. GlobalLpPool sums each plane in eight partial sums. Planes run in parallel. AVX2+FMA and
// scalar variants of the row routines (lp_pool_rows.inc), best first.
#include <immintrin.h>

#include <algorithm>
#include <cmath>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "core/parallel.h"
#include "kernels/kernel_def.h"
#include "kernels/ref/common.h"
#include "kernels/registry.h"
#include "semantics/window.h"

namespace ferry::cpu {
namespace {

// The row routines of one ISA (lp_pool_rows.inc).
struct LpPoolRows {
  void (*power)(const float* x, double* buf, int64_t n, double p);           // buf = |x|^p
  void (*add_run)(double* acc, const double* src, int64_t n, int64_t stride);  // acc[i] += src[i * stride]
  void (*root)(const double* acc, float* y, int64_t n, double p);            // y = acc^(1/p)
  float (*plane_norm)(const float* x, int64_t n, double p);                  // (sum |x|^p)^(1/p)
};

// y[i] = sqrt(acc[i]) rounded to float, for lp_pool_rows.inc: written per ISA, since the compiler keeps a scalar
// square root (for errno) in a plain loop.
#pragma GCC push_options
#pragma GCC target("avx2,fma")
namespace avx2 {
inline void SqrtRow(const double* acc, float* y, int64_t n) {
  int64_t i = 0;
  for (; i + 4 <= n; i += 4) _mm_storeu_ps(y + i, _mm256_cvtpd_ps(_mm256_sqrt_pd(_mm256_loadu_pd(acc + i))));
  for (; i < n; ++i) y[i] = static_cast<float>(std::sqrt(acc[i]));
}
#include "kernels/cpu/lp_pool_rows.inc"
constexpr LpPoolRows kTable = Table();
}  // namespace avx2
#pragma GCC pop_options

namespace scalar {
inline void SqrtRow(const double* acc, float* y, int64_t n) {
  for (int64_t i = 0; i < n; ++i) y[i] = static_cast<float>(std::sqrt(acc[i]));
}
#include "kernels/cpu/lp_pool_rows.inc"
constexpr LpPoolRows kTable = Table();
}  // namespace scalar

struct LpPoolVariant {
  const char* impl;
  IsaSet isa;
  const LpPoolRows* rows;
};
constexpr LpPoolVariant kVariants[] = {{"avx2", {Isa::kAvx2, Isa::kFma}, &avx2::kTable},
                                       {"scalar", {}, &scalar::kTable}};

// Work (values read or added) a thread takes at least.
constexpr int64_t kGrain = 32768;

// LpPool's / GlobalLpPool's p: a float at opset 1, an int from opset 2; 2 when absent. Throws InvalidModelError
// naming the node unless it is positive.
double ReadP(const ir::Node& node) {
  const ir::Attribute* a = node.attr("p");
  if (!a) return 2.0;
  const double p = a->type == ir::AttrType::kFloat ? static_cast<double>(a->f) : static_cast<double>(a->i);
  if (!(p > 0)) throw InvalidModelError(node.Describe() + ": attribute 'p' must be positive");
  return p;
}

// The innermost spatial dim's tap k: it reads buffer offset o * stride + base of output o, inside X for o in
// [lo, hi).
struct InnerTap {
  int64_t base = 0, lo = 0, hi = 0;
};

// The prepared geometry of one input shape.
struct LpPoolPlan {
  int64_t planes = 0, in_size = 0, out_size = 0;
  int64_t out_width = 1, stride = 1;  // the innermost dim's output extent and stride
  int64_t work = 0;                   // per plane: values read and added
  // Per output row: the buffer offsets of the starts of the input rows its window reads inside X, in the
  // kernel's row-major order (rows [row_begin[r], row_begin[r + 1]) of row_offsets).
  std::vector<int64_t> row_begin, row_offsets;
  std::vector<InnerTap> taps;  // the innermost taps that land inside X for some output, in kernel order
};

// The plan of window `g` (rank >= 1) over `planes` planes.
LpPoolPlan PlanFor(const semantics::WindowGeometry& g, int64_t planes) {
  LpPoolPlan p;
  const size_t rank = g.rank(), last = rank - 1;
  p.planes = planes;
  p.in_size = g.in_size();
  p.out_size = g.out_size();
  p.out_width = g.out[last];
  p.stride = g.strides[last];
  const int64_t width = g.in[last];
  for (int64_t k = 0; k < g.kernel[last]; ++k) {
    InnerTap t;
    t.base = k * g.dilations[last] - g.pad_begin[last];
    // o * stride + base >= 0 and < width
    t.lo = t.base >= 0 ? 0 : (-t.base + p.stride - 1) / p.stride;
    t.hi = width - t.base <= 0 ? 0 : std::min(p.out_width, (width - t.base + p.stride - 1) / p.stride);
    if (t.lo < t.hi) p.taps.push_back(t);
  }
  // The outer dims (all but the innermost): per output row, its window's input rows inside X.
  const int64_t out_rows = p.out_width == 0 ? 0 : p.out_size / p.out_width;
  std::vector<int64_t> o(last, 0), t(last, 0);
  int64_t outer_kernel = 1;
  for (size_t d = 0; d < last; ++d) outer_kernel *= g.kernel[d];
  p.row_begin.reserve(static_cast<size_t>(out_rows) + 1);
  p.row_begin.push_back(0);
  for (int64_t r = 0; r < out_rows; ++r) {
    int64_t rem = r;
    for (size_t d = last; d-- > 0;) {
      o[d] = rem % g.out[d];
      rem /= g.out[d];
    }
    std::fill(t.begin(), t.end(), 0);
    for (int64_t k = 0; k < outer_kernel; ++k) {
      int64_t off = 0;
      bool inside = true;
      for (size_t d = 0; d < last && inside; ++d) {
        const int64_t i = o[d] * g.strides[d] - g.pad_begin[d] + t[d] * g.dilations[d];
        inside = i >= 0 && i < g.in[d];
        off = off * g.in[d] + i;
      }
      if (inside) p.row_offsets.push_back(off * width);
      for (size_t d = last; d-- > 0;) {
        if (++t[d] < g.kernel[d]) break;
        t[d] = 0;
      }
    }
    p.row_begin.push_back(static_cast<int64_t>(p.row_offsets.size()));
  }
  int64_t inner_taps = 0;
  for (const InnerTap& tap : p.taps) inner_taps += tap.hi - tap.lo;
  p.work = p.in_size + static_cast<int64_t>(p.row_offsets.size()) * inner_taps + p.out_size;
  return p;
}

// "input 'X' must be float32 of rank >= `min_rank` (N, C, spatial...)", checked for both ops.
void CheckX(const PrepareContext& ctx, size_t min_rank) {
  const InputSpec& x = ctx.tensor_input(0);
  if (x.dtype != DataType::kFloat) {
    throw InvalidArgumentError(ctx.Describe() + ": input X must be float32, got " + ctx.InputString(0));
  }
  if (x.shape.size() < min_rank) {
    throw InvalidArgumentError(ctx.Describe() + ": input X must have rank >= " + std::to_string(min_rank) +
                               " (N, C, spatial...), got " + ctx.InputString(0));
  }
}

class LpPool : public OpKernel {
 public:
  LpPool(const ir::Node& node, const LpPoolRows& rows)
      : rows_(rows),
        attrs_(semantics::WindowAttrs::FromNode(node)),
        ceil_mode_(node.GetInt("ceil_mode", 0) != 0),
        p_(ReadP(node)) {
    if (attrs_.kernel_shape.empty()) {
      throw InvalidModelError(node.Describe() + ": required attribute kernel_shape is missing");
    }
  }

  // X float32 of rank >= 3; the window resolved for X's spatial dims (errors name the node), Y's shape, the plan.
  void Prepare(PrepareContext& ctx) const override {
    CheckX(ctx, 3);
    const Shape& xs = ctx.tensor_input(0).shape;
    const std::span<const int64_t> in_spatial(xs.data() + 2, xs.size() - 2);
    const semantics::WindowGeometry g =
        semantics::ResolveWindow(attrs_, in_spatial, attrs_.kernel_shape, ceil_mode_, ctx.Describe());
    Shape y_shape{xs[0], xs[1]};
    y_shape.insert(y_shape.end(), g.out.begin(), g.out.end());
    ctx.EmplaceState(PlanFor(g, xs[0] * xs[1]));
    ctx.SetOutput(0, DataType::kFloat, std::move(y_shape));
  }

  void Compute(KernelContext& ctx) const override {
    const LpPoolPlan& p = ctx.state<LpPoolPlan>();
    const Tensor& x = ctx.required_input(0);
    Tensor& y = ctx.OutputUninitialized(0);
    if (y.size() == 0) return;
    const float* xp = x.data<float>();
    float* yp = y.data<float>();
    const LpPoolRows& rows = rows_;
    const double pw = p_;
    const int64_t width = p.out_width, out_rows = p.out_size / width;
    ParallelFor(ctx.threads(), p.planes, std::max<int64_t>(1, kGrain / std::max<int64_t>(p.work, 1)),
                [&](int64_t begin, int64_t end) {
                  std::vector<double> buf(static_cast<size_t>(p.in_size)), acc(static_cast<size_t>(width));
                  for (int64_t q = begin; q < end; ++q) {
                    rows.power(xp + q * p.in_size, buf.data(), p.in_size, pw);
                    float* yq = yp + q * p.out_size;
                    for (int64_t r = 0; r < out_rows; ++r) {
                      std::fill(acc.begin(), acc.end(), 0.0);
                      for (int64_t k = p.row_begin[static_cast<size_t>(r)];
                           k < p.row_begin[static_cast<size_t>(r) + 1]; ++k) {
                        const double* row = buf.data() + p.row_offsets[static_cast<size_t>(k)];
                        for (const InnerTap& t : p.taps) {
                          rows.add_run(acc.data() + t.lo, row + t.base + t.lo * p.stride, t.hi - t.lo, p.stride);
                        }
                      }
                      rows.root(acc.data(), yq + r * width, width, pw);
                    }
                  }
                });
  }

 private:
  const LpPoolRows& rows_;
  semantics::WindowAttrs attrs_;
  bool ceil_mode_;
  double p_;
};

class GlobalLpPool : public OpKernel {
 public:
  GlobalLpPool(const ir::Node& node, const LpPoolRows& rows) : rows_(rows), p_(ReadP(node)) {}

  // X float32 of rank >= 2; Y is [N, C, 1, ...].
  void Prepare(PrepareContext& ctx) const override {
    CheckX(ctx, 2);
    const Shape& xs = ctx.tensor_input(0).shape;
    Shape y_shape(xs.size(), 1);
    y_shape[0] = xs[0];
    y_shape[1] = xs[1];
    ctx.SetOutput(0, DataType::kFloat, std::move(y_shape));
  }

  void Compute(KernelContext& ctx) const override {
    const Tensor& x = ctx.required_input(0);
    Tensor& y = ctx.OutputUninitialized(0);
    const int64_t planes = y.size();
    if (planes == 0) return;
    const int64_t size = x.size() / planes;
    const float* xp = x.data<float>();
    float* yp = y.data<float>();
    const LpPoolRows& rows = rows_;
    const double pw = p_;
    ParallelFor(ctx.threads(), planes, std::max<int64_t>(1, kGrain / std::max<int64_t>(size, 1)),
                [&](int64_t begin, int64_t end) {
                  for (int64_t q = begin; q < end; ++q) yp[q] = rows.plane_norm(xp + q * size, size, pw);
                });
  }

 private:
  const LpPoolRows& rows_;
  double p_;
};

}  // namespace

void RegisterLpPoolKernels(KernelRegistry& r) {
  for (const LpPoolVariant& v : kVariants) {
    const LpPoolRows* rows = v.rows;
    r.Add({.op = "LpPool",
           .since = 1,
           .types = {{"T", {DataType::kFloat}}},
           .create = [rows](const ir::Node& node, const KernelOptions&) -> std::unique_ptr<OpKernel> {
             return std::make_unique<LpPool>(node, *rows);
           },
           .isa = v.isa,
           .name = std::string("cpu.f32_lppool__") + v.impl + ".1"});
    r.Add({.op = "GlobalLpPool",
           .since = 1,
           .types = {{"T", {DataType::kFloat}}},
           .create = [rows](const ir::Node& node, const KernelOptions&) -> std::unique_ptr<OpKernel> {
             return std::make_unique<GlobalLpPool>(node, *rows);
           },
           .isa = v.isa,
           .name = std::string("cpu.f32_globallppool__") + v.impl + ".1"});
  }
}

}  // namespace ferry::cpu
