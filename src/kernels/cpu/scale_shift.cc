// ai.ferry ScaleShift (schemas_ferry.cc) on the cpu backend: Y = act(X * scale + shift) in one pass over X, for
// float32, with AVX-512F, AVX2+FMA and scalar variants registered best first. It replaces a Mul, an Add and an
// activation, three memory-bound passes (DenseNet's 58 pre-activation BatchNormalization -> ReLU pairs on
// nChw16c ran as Mul, Add and Relu: 6.3 ms of a 46 ms run; see docs/performance.md).
//
// The broadcast is planned once per shape as ref's elementwise kernels plan theirs (X's dims with scale's and
// shift's strides, 0 where they broadcast; size-1 dims dropped, neighbours merged), then viewed as [outer..., R, L].
// A task runs panels of R' <= R rows of L elements; along each of R and L scale and shift advance by their own
// stride, so the common layouts are all one loop: per-channel on NCHW ([C, HW], a scalar per row), on blocked
// nChw16c / nChw8c ([Cb, HW, b], one register of constants for HW rows) and channels-last ([NHW, C], a row of
// constants). The vector variants compute the product, the sum and the activation with simd_kernels.inc's
// formulas (the transcendental ones within their documented ulp of ref's; GCC may contract the product and the
// sum into one FMA, one rounding instead of two); the scalar variant computes exactly what ref does.
#include <algorithm>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "core/parallel.h"
#include "kernels/cpu/fused_activation.h"
#include "kernels/cpu/simd_common.h"
#include "kernels/kernel_def.h"
#include "kernels/ref/elementwise.h"
#include "kernels/ref/scale_shift.h"
#include "kernels/registry.h"
#include "schemas/schema.h"

namespace ferry::cpu {
namespace {

using Kind = semantics::FusedActivationKind;

// One panel: `rows` rows of `len` elements of X and Y (contiguous), the constants of row r and element i at
// scale[r * rs + i * ls] and shift[r * rt + i * lt] (ls, lt: 0 or 1).
struct Panel {
  const float* x;
  float* y;
  int64_t rows, len;
  const float* scale;
  const float* shift;
  int64_t rs, ls, rt, lt;
};

using PanelFn = void (*)(const Panel& p, const simd::UnaryParams& params);

#define FERRY_SCALE_SHIFT_PANELS                                                                      \
  template <class Op>                                                                                 \
  void Panels(const Panel& p, const simd::UnaryParams& params) {                                      \
    const Op act(params);                                                                             \
    constexpr int64_t w = V::kWidth;                                                                  \
    const int64_t full = p.len / w * w;                                                               \
    const int tail = static_cast<int>(p.len - full);                                                  \
    for (int64_t r = 0; r < p.rows; ++r) {                                                            \
      const float* x = p.x + r * p.len;                                                               \
      float* y = p.y + r * p.len;                                                                     \
      const float* s = p.scale + r * p.rs;                                                            \
      const float* t = p.shift + r * p.rt;                                                            \
      const Reg s1 = V::Set1(s[0]), t1 = V::Set1(t[0]);                                               \
      for (int64_t i = 0; i < full; i += w) {                                                         \
        const Reg sv = p.ls ? V::Load(s + i) : s1;                                                    \
        const Reg tv = p.lt ? V::Load(t + i) : t1;                                                    \
        V::Store(y + i, act(V::Add(V::Mul(V::Load(x + i), sv), tv)));                                 \
      }                                                                                               \
      if (tail > 0) {                                                                                 \
        const Reg sv = p.ls ? V::LoadPartial(s + full, tail) : s1;                                    \
        const Reg tv = p.lt ? V::LoadPartial(t + full, tail) : t1;                                    \
        V::StorePartial(y + full, act(V::Add(V::Mul(V::LoadPartial(x + full, tail), sv), tv)), tail); \
      }                                                                                               \
    }                                                                                                 \
  }                                                                                                   \
  PanelFn PanelFor(Kind k) {                                                                          \
    switch (k) {                                                                                      \
      case Kind::kNone: return &Panels<IdentityOp>;                                                   \
      case Kind::kRelu: return &Panels<ReluOp>;                                                       \
      case Kind::kLeakyRelu: return &Panels<LeakyReluOp>;                                             \
      case Kind::kClip: return &Panels<ClipOp>;                                                       \
      case Kind::kSigmoid: return &Panels<SigmoidOp>;                                                 \
      case Kind::kTanh: return &Panels<TanhOp>;                                                       \
      case Kind::kHardSigmoid: return &Panels<HardSigmoidOp>;                                         \
      case Kind::kHardSwish: return &Panels<HardSwishOp>;                                             \
      case Kind::kSilu: return &Panels<SiluOp>;                                                       \
      case Kind::kGelu: return &Panels<GeluErfOp>;                                                    \
      case Kind::kGeluTanh: return &Panels<GeluTanhOp>;                                               \
      case Kind::kMish: return &Panels<MishOp>;                                                       \
    }                                                                                                 \
    return nullptr;                                                                                   \
  }

#pragma GCC push_options
#pragma GCC target("avx512f")
namespace avx512 {
using V = simd::F32x16;
#include "kernels/cpu/simd_kernels.inc"
FERRY_SCALE_SHIFT_PANELS
}  // namespace avx512
#pragma GCC pop_options

#pragma GCC push_options
#pragma GCC target("avx2,fma")
namespace avx2 {
using V = simd::F32x8;
#include "kernels/cpu/simd_kernels.inc"
FERRY_SCALE_SHIFT_PANELS
}  // namespace avx2
#pragma GCC pop_options
#undef FERRY_SCALE_SHIFT_PANELS

// The scalar variant: ref's expression, element by element (act is the table's reference formula).
void ScalarPanels(const Panel& p, const FusedActivation& act) {
  for (int64_t r = 0; r < p.rows; ++r) {
    for (int64_t i = 0; i < p.len; ++i) {
      const float product = p.x[r * p.len + i] * p.scale[r * p.rs + i * p.ls];
      p.y[r * p.len + i] = act.Apply(product + p.shift[r * p.rt + i * p.lt]);
    }
  }
}

enum class Variant { kAvx512, kAvx2, kScalar };

// X as [outer..., R, L] with scale's and shift's strides (see the top of the file).
struct ScaleShiftPlan {
  std::vector<int64_t> outer_dims, outer_s, outer_t;  // outermost first
  int64_t rows = 1, len = 1, rs = 0, rt = 0, ls = 0, lt = 0;
  int64_t outer = 1;

  // Offsets of scale and shift at the first element of outer index `o`.
  void OuterOffsets(int64_t o, int64_t* s, int64_t* t) const {
    *s = 0, *t = 0;
    for (size_t d = outer_dims.size(); d-- > 0;) {
      const int64_t i = o % outer_dims[d];
      o /= outer_dims[d];
      *s += i * outer_s[d];
      *t += i * outer_t[d];
    }
  }
};

// The broadcast coalesced as ref's elementwise kernels do (ref::BroadcastPlan: size-1 dims dropped, neighbours
// merged), its last two dims as R and L.
ScaleShiftPlan PlanScaleShift(const Shape& x, const Shape& scale, const Shape& shift) {
  const ref::BroadcastPlan<3> b({&x, &scale, &shift}, x);
  std::vector<int64_t> dims = b.dims(), ds = b.strides(1), dt = b.strides(2);  // at least one dim
  ScaleShiftPlan p;
  p.len = dims.back(), p.ls = ds.back(), p.lt = dt.back();
  dims.pop_back(), ds.pop_back(), dt.pop_back();
  if (!dims.empty()) {
    p.rows = dims.back(), p.rs = ds.back(), p.rt = dt.back();
    dims.pop_back(), ds.pop_back(), dt.pop_back();
  }
  p.outer_dims = std::move(dims);
  p.outer_s = std::move(ds);
  p.outer_t = std::move(dt);
  for (int64_t d : p.outer_dims) p.outer *= d;
  return p;
}

class ScaleShift final : public OpKernel {
 public:
  ScaleShift(const ir::Node& node, Variant variant) : variant_(variant) {
    FusedActivation::Parse(node, &act_);  // the predicate accepted it
    params_.alpha = act_.alpha;
    params_.beta = act_.beta;
    params_.lo = act_.alpha;
    params_.hi = act_.beta;
    if (variant == Variant::kAvx512) panel_ = avx512::PanelFor(act_.kind);
    if (variant == Variant::kAvx2) panel_ = avx2::PanelFor(act_.kind);
  }

  // ref's checks (every input float32, scale and shift broadcasting to X); Y has X's shape, in X's buffer when the
  // executor lets it (each element is read before it is written).
  void Prepare(PrepareContext& ctx) const override {
    ref::PrepareScaleShiftOutput(ctx);
    ctx.output(0).in_place_of = 0;
    ctx.EmplaceState(PlanScaleShift(ctx.input(0).shape, ctx.input(1).shape, ctx.input(2).shape));
  }

  void Compute(KernelContext& ctx) const override {
    const ScaleShiftPlan& p = ctx.state<ScaleShiftPlan>();
    const Tensor& x = ctx.required_input(0);
    const float* scale = ctx.required_input(1).data<float>();
    const float* shift = ctx.required_input(2).data<float>();
    Tensor* reused = ctx.ReuseInput(0, 0, DataType::kFloat, x.shape());
    Tensor& y = reused ? *reused : ctx.OutputUninitialized(0);
    if (y.size() == 0) return;
    const float* px = x.data<float>();
    float* py = y.data<float>();
    const int64_t total_rows = p.outer * p.rows;
    const int64_t grain = std::max<int64_t>(1, (int64_t{1} << 14) / p.len);
    ParallelFor(ctx.threads(), total_rows, grain, [&](int64_t begin, int64_t end) {
      for (int64_t row = begin; row < end;) {
        const int64_t o = row / p.rows, r = row % p.rows;
        const int64_t count = std::min(p.rows - r, end - row);
        int64_t so = 0, to = 0;
        p.OuterOffsets(o, &so, &to);
        const Panel panel{.x = px + row * p.len,
                          .y = py + row * p.len,
                          .rows = count,
                          .len = p.len,
                          .scale = scale + so + r * p.rs,
                          .shift = shift + to + r * p.rt,
                          .rs = p.rs,
                          .ls = p.ls,
                          .rt = p.rt,
                          .lt = p.lt};
        if (variant_ == Variant::kScalar) {
          ScalarPanels(panel, act_);
        } else {
          panel_(panel, params_);
        }
        row += count;
      }
    });
  }

 private:
  Variant variant_;
  FusedActivation act_;
  simd::UnaryParams params_;
  PanelFn panel_ = nullptr;
};

std::string ScaleShiftPredicate(const ir::Node& node) {
  FusedActivation act;
  return FusedActivation::Parse(node, &act);
}

}  // namespace

void RegisterScaleShiftKernels(KernelRegistry& r) {
  auto def = [&](const std::string& impl, IsaSet isa, Variant variant) {
    r.Add({.op = "ScaleShift",
           .domain = std::string(schemas::kFerryDomain),
           .since = 1,
           .types = {{"T", {DataType::kFloat}}},
           .create = [variant](const ir::Node& node, const KernelOptions&) -> std::unique_ptr<OpKernel> {
             return std::make_unique<ScaleShift>(node, variant);
           },
           .predicate = ScaleShiftPredicate,
           .isa = isa,
           .name = "cpu.f32_scale_shift__" + impl + ".1",
           .constraints = "float32; an activation of the fused-activation table"});
  };
  def("avx512", {Isa::kAvx512f}, Variant::kAvx512);
  def("avx2", {Isa::kAvx2, Isa::kFma}, Variant::kAvx2);
  def("scalar", {}, Variant::kScalar);
}

}  // namespace ferry::cpu
