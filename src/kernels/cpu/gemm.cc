// Gemm (float32) on oneDNN's matmul primitive: Y = alpha · op(A) · op(B) + beta · C. Transposes are strided
// memory descriptors, alpha an output scale; C (unidirectionally broadcast to [M, N]) is the primitive's bias
// when alpha = beta = 1 and C is one row, else it is copied into Y and added with a sum post-op scaled by beta.
// alpha = 0 or K = 0 leave beta · C (as ref does, without reading A and B). A constant B is reordered once, at
// creation, into the layout oneDNN prefers for the statically known M. Prepare checks the shapes and builds the
// primitive of each input signature (its prepared state), with the scratchpad it records in the workspace.
//
// The same kernel runs ONNX Runtime's com.microsoft::FusedGemm, Y = act(alpha · op(A) · op(B) + beta · C), with
// ONNX Runtime's activation functors (semantics/ort_gemm_activation.h) as eltwise post-ops after the bias or sum:
//   Relu relu(0)  LeakyRelu relu(alpha)  Elu elu(alpha)  Selu (alpha >= 0) elu(alpha) scaled by gamma
//   HardSigmoid linear(alpha, beta), clip_v2(0, 1)  Sigmoid logistic  Tanh tanh  Softplus soft_relu (log(1 + e^x))
//   ScaledTanh linear(beta, 0), tanh scaled by alpha  ParametricSoftplus linear(beta, 0), soft_relu scaled by alpha
// (the eltwise's own scale, not a second linear: oneDNN 2.6 ran two linear post-ops with the first one's alpha)
// Softsign, ThresholdedRelu and Selu with alpha < 0 (oneDNN has no such eltwise) run the scalar formula over Y
// after the product, as does every activation where no primitive runs (K = 0 or alpha = 0: Y = act(beta · C)).
// The NaN caveat of fused_activation.h holds for Relu and HardSigmoid (oneDNN's maps NaN to 0).
#include <optional>
#include <string>
#include <vector>

#include "core/parallel.h"
#include "kernels/cpu/dnnl_util.h"
#include "kernels/cpu/matmul_util.h"
#include "kernels/kernel_def.h"
#include "kernels/registry.h"
#include "semantics/gemm.h"
#include "semantics/ort_gemm_activation.h"

namespace ferry::cpu {
namespace {

// How C enters the product.
enum class CMode { kNone, kBias, kSum };

// Appends FusedGemm's activation as eltwise post-ops (the table at the top); false when oneDNN has none for it.
bool AppendActivation(const semantics::OrtGemmActivation& act, dnnl::post_ops& ops) {
  using K = semantics::OrtGemmActivationKind;
  using alg = dnnl::algorithm;
  switch (act.kind) {
    case K::kNone: return true;
    case K::kRelu: ops.append_eltwise(1.0f, alg::eltwise_relu, 0.0f, 0.0f); return true;
    case K::kLeakyRelu: ops.append_eltwise(1.0f, alg::eltwise_relu, act.alpha, 0.0f); return true;
    case K::kElu: ops.append_eltwise(1.0f, alg::eltwise_elu, act.alpha, 0.0f); return true;
    case K::kSelu:
      if (!(act.alpha >= 0)) return false;
      ops.append_eltwise(act.gamma, alg::eltwise_elu, act.alpha, 0.0f);
      return true;
    case K::kHardSigmoid:
      ops.append_eltwise(1.0f, alg::eltwise_linear, act.alpha, act.beta);
      ops.append_eltwise(1.0f, alg::eltwise_clip_v2, 0.0f, 1.0f);
      return true;
    case K::kSigmoid: ops.append_eltwise(1.0f, alg::eltwise_logistic, 0.0f, 0.0f); return true;
    case K::kTanh: ops.append_eltwise(1.0f, alg::eltwise_tanh, 0.0f, 0.0f); return true;
    case K::kSoftplus: ops.append_eltwise(1.0f, alg::eltwise_soft_relu, 0.0f, 0.0f); return true;
    case K::kScaledTanh:
      ops.append_eltwise(1.0f, alg::eltwise_linear, act.beta, 0.0f);
      ops.append_eltwise(act.alpha, alg::eltwise_tanh, 0.0f, 0.0f);
      return true;
    case K::kParametricSoftplus:
      ops.append_eltwise(1.0f, alg::eltwise_linear, act.beta, 0.0f);
      ops.append_eltwise(act.alpha, alg::eltwise_soft_relu, 0.0f, 0.0f);
      return true;
    case K::kSoftsign:
    case K::kThresholdedRelu: return false;
  }
  return false;
}

// A [rows × cols] matrix stored row-major, or (transposed) as its [cols × rows] transpose.
dnnl::memory::desc MatrixDesc(int64_t rows, int64_t cols, bool transposed) {
  return dnnl::memory::desc({rows, cols}, dnnl::memory::data_type::f32,
                            transposed ? dnnl::memory::dims{1, rows} : dnnl::memory::dims{cols, 1});
}

// Everything one input signature needs (the prepared state): the geometry, how C enters, and the primitive.
struct GemmPlan {
  int64_t m = 0, k = 0, n = 0;
  // C's strides into the [M, N] output (0 along broadcast dims).
  int64_t c_row = 0, c_col = 0;
  bool use_c = false;   // C present and beta != 0
  bool only_c = false;  // K == 0 or alpha == 0: Y = beta · C (or 0), A and B unread, no primitive
  CMode mode = CMode::kNone;
  dnnl::memory::desc a_md, b_md, bias_md, y_md;
  // The primitive for B as Prepare saw it: the constant B (reading the packed weights when they suit it), or,
  // when B's data is not known before the run, the initializer B that a run reads unless a feed overrides it.
  MatMulPrimitive mm;
  // When B is not known before the run but may be the packed initializer: the plain primitive for a fed B.
  std::optional<MatMulPrimitive> fed;
  std::string what;  // the node, for oneDNN's errors
};

class Gemm : public OpKernel {
 public:
  // fused: com.microsoft::FusedGemm (its activation), else Gemm.
  Gemm(const ir::Node& node, bool fused)
      : trans_a_(node.GetInt("transA", 0) != 0),
        trans_b_(node.GetInt("transB", 0) != 0),
        alpha_(node.GetFloat("alpha", 1.0f)),
        beta_(node.GetFloat("beta", 1.0f)),
        act_(fused ? semantics::OrtGemmActivationFromNode(node) : semantics::OrtGemmActivation{}) {
    dnnl::post_ops probe;
    act_in_primitive_ = AppendActivation(act_, probe);
    const ir::Value* bv = node.input(1);
    if (!bv || !bv->initializer() || bv->initializer()->dtype() != DataType::kFloat) return;
    const Tensor& b = *bv->initializer();
    if (b.rank() != 2 || b.size() == 0 || alpha_ == 0.0f) return;
    const int64_t k = trans_b_ ? b.dim(1) : b.dim(0), n = trans_b_ ? b.dim(0) : b.dim(1);
    // The representative M: A's static shape, else a guess; C's mode as far as it is known now.
    int64_t m = 64;
    const ir::Value* av = node.input(0);
    if (av && av->type().shape && av->type().shape->size() == 2) {
      const ir::Dim& d = (*av->type().shape)[trans_a_ ? 1 : 0];
      if (d.is_static() && d.value > 0) m = d.value;
    }
    CMode mode = CMode::kNone;
    const ir::Value* cv = node.input(2);
    if (cv && beta_ != 0.0f) {
      mode = CMode::kSum;
      const auto& cs = cv->type().shape;
      if (alpha_ == 1.0f && beta_ == 1.0f && cs && !cs->empty() && cs->size() <= 2 && cs->back().is_static() &&
          cs->back().value == n && (cs->size() == 1 || ((*cs)[0].is_static() && (*cs)[0].value == 1))) {
        mode = CMode::kBias;
      }
    }
    const dnnl::memory::desc bias = mode == CMode::kBias ? MatrixDesc(1, n, false) : dnnl::memory::desc();
    weights_ = MatMulWeights(bv->initializer_ptr(), MatrixDesc(k, n, trans_b_), MatrixDesc(m, k, false),
                             MatrixDesc(m, n, false), bias, Attr(mode), node.Describe());
  }

  int64_t held_bytes() const override { return weights_.bytes(); }
  bool ReleaseConstantInput(size_t k) override { return k == 1 && weights_.ReleaseSource(); }

  // Checks the inputs, declares Y [M, N], builds the primitive for these shapes (for ctx.threads(), the split it
  // will run with) and records its scratchpad.
  void Prepare(PrepareContext& ctx) const override {
    const InputSpec& a = ctx.tensor_input(0);
    const InputSpec& b = ctx.tensor_input(1);
    const InputSpec* c = ctx.has_input(2) ? &ctx.tensor_input(2) : nullptr;
    for (int i = 0; i < (c ? 3 : 2); ++i) {
      if (ctx.input(i).dtype != DataType::kFloat) {
        throw InvalidArgumentError(ctx.Describe() + ": A, B and C must be float32, got " + ctx.InputString(i));
      }
    }
    std::string error;
    const auto g = semantics::GemmShapeOf(a.shape, b.shape, c ? &c->shape : nullptr, trans_a_, trans_b_, &error);
    if (!g) {
      throw InvalidArgumentError(ctx.Describe() + ": " + error + " (" + ctx.InputString(0) + ", " +
                                 ctx.InputString(1) + (c ? ", " + ctx.InputString(2) : std::string()) + ")");
    }
    GemmPlan& p = ctx.EmplaceState(GemmPlan{});
    p.m = g->m;
    p.k = g->k;
    p.n = g->n;
    p.c_row = g->c_row_stride;
    p.c_col = g->c_col_stride;
    p.use_c = c && beta_ != 0.0f;
    p.only_c = g->k == 0 || alpha_ == 0.0f;
    p.what = ctx.Describe();
    ctx.SetOutput(0, DataType::kFloat, {p.m, p.n});
    if (p.only_c || p.m == 0 || p.n == 0) return;  // no product: no primitive
    if (p.use_c) {
      const bool one_row = g->c_rows == 1 && g->c_cols == p.n;
      p.mode = alpha_ == 1.0f && beta_ == 1.0f && one_row ? CMode::kBias : CMode::kSum;
    }
    const ScopedOmpThreads scope(ctx.threads());
    p.a_md = MatrixDesc(p.m, p.k, trans_a_);
    p.b_md = MatrixDesc(p.k, p.n, trans_b_);
    p.y_md = MatrixDesc(p.m, p.n, false);
    if (p.mode == CMode::kBias) p.bias_md = MatrixDesc(1, p.n, false);
    // The packed weights serve the constant B they were made from, also once released (then Prepare sees no data,
    // and no feed can override it); a B known only at run time may be that initializer (then they do) or a feed
    // overriding it (then the plain primitive runs).
    const Tensor* constant_b = ctx.constant(1);
    const bool packed = constant_b ? weights_.Usable(*constant_b) : weights_.has_packed();
    p.mm = MakeMatMul(p.a_md, p.b_md, p.bias_md, p.y_md, Attr(p.mode), packed ? &weights_ : nullptr);
    if (packed && !constant_b && !weights_.released() && p.mm.packed) {
      p.fed = MakeMatMul(p.a_md, p.b_md, p.bias_md, p.y_md, Attr(p.mode), nullptr);
    }
    NeedScratchpad(p.mm.scratch, ctx.workspace());
    if (p.fed) NeedScratchpad(p.fed->scratch, ctx.workspace());
  }

  void Compute(KernelContext& ctx) const override {
    const GemmPlan& p = ctx.state<GemmPlan>();
    const Tensor& a = ctx.required_input(0);
    const Tensor& b = ctx.required_input(1);
    const Tensor* c = ctx.input(2);
    const int64_t m = p.m, n = p.n;
    // Zeroed only where nothing else writes Y: K == 0 or alpha == 0 without C.
    Tensor& y = p.only_c && !p.use_c ? ctx.Output(0) : ctx.OutputUninitialized(0);
    if (y.size() == 0) return;
    float* yp = y.data<float>();
    auto fill_c = [&](float scale) {
      const float* cp = c->data<float>();
      for (int64_t i = 0; i < m; ++i) {
        for (int64_t j = 0; j < n; ++j) yp[i * n + j] = scale * cp[i * p.c_row + j * p.c_col];
      }
    };
    if (p.only_c) {  // Y = act(beta · C) (or act(0)), A and B unread
      if (p.use_c) fill_c(beta_);
      ApplyActivation(yp, y.size(), ctx.threads());
      return;
    }
    // A B fed at run time in place of the packed initializer runs on the plain primitive.
    const MatMulPrimitive& mm = p.fed && !weights_.Usable(b) ? *p.fed : p.mm;
    if (p.mode == CMode::kSum) fill_c(1.0f);  // the sum post-op adds beta · (what Y holds)
    std::unordered_map<int, dnnl::memory> args{
        {DNNL_ARG_SRC, Wrap(a, p.a_md)},
        {DNNL_ARG_WEIGHTS, mm.packed             ? weights_.memory()
                           : weights_.released() ? Wrap(weights_.Plain(), p.b_md)
                                                 : Wrap(b, p.b_md)},
        {DNNL_ARG_DST, Wrap(y, p.y_md)}};
    if (p.mode == CMode::kBias) args.emplace(DNNL_ARG_BIAS, Wrap(*c, p.bias_md));
    AddScratchpad(args, mm.scratch);
    Execute(mm.prim, args, ctx.threads(), p.what);
    if (!act_in_primitive_) ApplyActivation(yp, y.size(), ctx.threads());
  }

 private:
  dnnl::primitive_attr Attr(CMode mode) const {
    dnnl::primitive_attr attr;
    if (alpha_ != 1.0f) attr.set_output_scales(0, {alpha_});
    dnnl::post_ops po;
    if (mode == CMode::kSum) po.append_sum(beta_);
    if (act_in_primitive_) AppendActivation(act_, po);
    if (po.len() > 0) attr.set_post_ops(po);
    return attr;
  }

  // y[i] = act(y[i]) with the scalar formulas (nothing without an activation).
  void ApplyActivation(float* y, int64_t n, int threads) const {
    if (act_.kind == semantics::OrtGemmActivationKind::kNone) return;
    const semantics::OrtGemmActivation& act = act_;
    ParallelFor(n < (1 << 16) ? 1 : threads, n, 1 << 14, [&](int64_t begin, int64_t end) {
      for (int64_t i = begin; i < end; ++i) y[i] = semantics::ApplyOrtGemmActivation(act, y[i]);
    });
  }

  bool trans_a_, trans_b_;
  float alpha_, beta_;
  semantics::OrtGemmActivation act_;
  bool act_in_primitive_ = true;  // the activation is the primitive's post-ops (else ApplyActivation after it)
  MatMulWeights weights_;
};

}  // namespace

void RegisterGemmKernels(KernelRegistry& r) {
  // Versions 1-13 differ in C's broadcasting rules (always broadcast here, as in ref), C becoming optional (11)
  // and the type list; float32 has the same semantics in all of them.
  r.Add({.op = "Gemm",
         .since = 1,
         .types = {{"T", {DataType::kFloat}}},
         .create = [](const ir::Node& node, const KernelOptions&) -> std::unique_ptr<OpKernel> {
           return std::make_unique<Gemm>(node, false);
         },
         .name = "cpu.f32_gemm__onednn.1",
         .library = "oneDNN"});
}

// com.microsoft::FusedGemm (ONNX Runtime's Gemm + activation fusion), float32 as ONNX Runtime's CPU kernel.
void RegisterOrtFusedGemmKernels(KernelRegistry& r) {
  r.Add({.op = "FusedGemm",
         .domain = "com.microsoft",
         .since = 1,
         .types = {{"T", {DataType::kFloat}}},
         .create = [](const ir::Node& node, const KernelOptions&) -> std::unique_ptr<OpKernel> {
           return std::make_unique<Gemm>(node, true);
         },
         .predicate = [](const ir::Node& node) -> std::string {
           semantics::OrtGemmActivation act;
           return semantics::ParseOrtGemmActivation(node, &act);
         },
         .name = "cpu.f32_ms_fused_gemm__onednn.1",
         .constraints = "float32; activation one of ONNX Runtime's Gemm functors",
         .library = "oneDNN"});
}

}  // namespace ferry::cpu
