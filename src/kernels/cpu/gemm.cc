// Gemm (float32) on oneDNN's matmul primitive: Y = alpha · op(A) · op(B) + beta · C. Transposes are strided
// memory descriptors, alpha an output scale; C (unidirectionally broadcast to [M, N]) is the primitive's bias
// when alpha = beta = 1 and C is one row, else it is copied into Y and added with a sum post-op scaled by beta.
// alpha = 0 or K = 0 leave beta · C (as ref does, without reading A and B). A constant B is reordered once, at
// creation, into the layout oneDNN prefers for the statically known M. One primitive per shape signature.
#include <string>
#include <vector>

#include "kernels/cpu/dnnl_util.h"
#include "kernels/cpu/matmul_util.h"
#include "kernels/kernel_def.h"
#include "kernels/registry.h"
#include "semantics/gemm.h"

namespace ferry::cpu {
namespace {

// How C enters the product.
enum class CMode { kNone, kBias, kSum };

// A [rows × cols] matrix stored row-major, or (transposed) as its [cols × rows] transpose.
dnnl::memory::desc MatrixDesc(int64_t rows, int64_t cols, bool transposed) {
  return dnnl::memory::desc({rows, cols}, dnnl::memory::data_type::f32,
                            transposed ? dnnl::memory::dims{1, rows} : dnnl::memory::dims{cols, 1});
}

struct GemmEntry {
  dnnl::memory::desc a_md, b_md, bias_md, y_md;
  MatMulPrimitive mm;
};

class Gemm : public OpKernel {
 public:
  explicit Gemm(const ir::Node& node)
      : trans_a_(node.GetInt("transA", 0) != 0),
        trans_b_(node.GetInt("transB", 0) != 0),
        alpha_(node.GetFloat("alpha", 1.0f)),
        beta_(node.GetFloat("beta", 1.0f)) {
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

  // The scratchpad of the primitive Compute runs at the node's static shapes (built now, as the first run would).
  void AddWorkspace(const ir::Node& node, int threads, Workspace& ws) const override {
    const auto a = StaticShape(node, 0), b = StaticShape(node, 1);
    if (!a || !b || alpha_ == 0.0f) return;
    const bool with_c = node.input(2) && beta_ != 0.0f;
    const auto c = with_c ? StaticShape(node, 2) : std::nullopt;
    if (with_c && !c) return;
    const auto g = semantics::GemmShapeOf(*a, *b, c ? &*c : nullptr, trans_a_, trans_b_);
    if (!g) return;  // a shape error, left for Compute to report
    const int64_t m = g->m, k = g->k, n = g->n;
    if (m == 0 || n == 0 || k == 0) return;  // no product: no primitive
    CMode mode = CMode::kNone;
    if (with_c) mode = alpha_ == 1.0f && beta_ == 1.0f && g->c_rows == 1 && g->c_cols == n ? CMode::kBias : CMode::kSum;
    const Tensor* constant_b = node.input(1)->initializer();  // what the run reads unless a feed overrides it
    const bool packed = constant_b && weights_.Usable(*constant_b);
    NeedScratchpad(Entry(*a, *b, m, k, n, mode, packed, threads)->mm.scratch, ws);
  }

  void Compute(KernelContext& ctx) const override {
    const Tensor& a = ctx.required_input(0);
    const Tensor& b = ctx.required_input(1);
    const Tensor* c = ctx.input(2);
    const std::string what = ctx.Describe();
    if (a.rank() == 2 && b.rank() == 2 &&
        (a.dtype() != DataType::kFloat || b.dtype() != DataType::kFloat || (c && c->dtype() != DataType::kFloat))) {
      throw InvalidArgumentError(what + ": A, B and C must be float32");
    }
    const semantics::GemmShape g =
        semantics::ResolveGemm(a.shape(), b.shape(), c ? &c->shape() : nullptr, trans_a_, trans_b_, what);
    const int64_t m = g.m, k = g.k, n = g.n;
    // C's extents and strides into the [M, N] output (0 along broadcast dims).
    const int64_t cm = g.c_rows, cn = g.c_cols, c_row = g.c_row_stride, c_col = g.c_col_stride;
    // Zeroed only where nothing else writes Y: K == 0 or alpha == 0 without C.
    const bool only_c = k == 0 || alpha_ == 0.0f;
    Tensor& y = only_c && !(c && beta_ != 0.0f) ? ctx.Output(0, DataType::kFloat, {m, n})
                                                : ctx.OutputUninitialized(0, DataType::kFloat, {m, n});
    if (y.size() == 0) return;
    const bool use_c = c && beta_ != 0.0f;
    float* yp = y.data<float>();
    auto fill_c = [&](float scale) {
      const float* cp = c->data<float>();
      for (int64_t i = 0; i < m; ++i) {
        for (int64_t j = 0; j < n; ++j) yp[i * n + j] = scale * cp[i * c_row + j * c_col];
      }
    };
    if (k == 0 || alpha_ == 0.0f) {  // Y = beta · C (or 0), A and B unread
      if (use_c) fill_c(beta_);
      return;
    }
    CMode mode = CMode::kNone;
    if (use_c) mode = alpha_ == 1.0f && beta_ == 1.0f && cm == 1 && cn == n ? CMode::kBias : CMode::kSum;
    const bool packed = weights_.Usable(b);
    auto entry = Entry(a.shape(), b.shape(), m, k, n, mode, packed, ctx.threads());
    if (mode == CMode::kSum) fill_c(1.0f);  // the sum post-op adds beta · (what Y holds)
    std::unordered_map<int, dnnl::memory> args{
        {DNNL_ARG_SRC, Wrap(a, entry->a_md)},
        {DNNL_ARG_WEIGHTS, entry->mm.packed     ? weights_.memory()
                           : weights_.released() ? Wrap(weights_.Plain(), entry->b_md)
                                                 : Wrap(b, entry->b_md)},
        {DNNL_ARG_DST, Wrap(y, entry->y_md)}};
    if (mode == CMode::kBias) args.emplace(DNNL_ARG_BIAS, Wrap(*c, entry->bias_md));
    AddScratchpad(args, entry->mm.scratch);
    Execute(entry->mm.prim, args, ctx.threads(), what);
  }

 private:
  // The primitive for these shapes (op(A) m×k, op(B) k×n), built on first use for `threads` (the split it will
  // run with).
  std::shared_ptr<const GemmEntry> Entry(const Shape& a, const Shape& b, int64_t m, int64_t k, int64_t n,
                                         CMode mode, bool packed, int threads) const {
    std::vector<int64_t> key = ShapeKey({a, b});
    key.push_back(static_cast<int64_t>(mode));
    key.push_back(packed ? 1 : 0);
    return cache_.Get(key, [&] {
      const ScopedOmpThreads scope(threads);
      auto e = std::make_shared<GemmEntry>();
      e->a_md = MatrixDesc(m, k, trans_a_);
      e->b_md = MatrixDesc(k, n, trans_b_);
      e->y_md = MatrixDesc(m, n, false);
      if (mode == CMode::kBias) e->bias_md = MatrixDesc(1, n, false);
      e->mm = MakeMatMul(e->a_md, e->b_md, e->bias_md, e->y_md, Attr(mode), packed ? &weights_ : nullptr);
      return e;
    });
  }

  dnnl::primitive_attr Attr(CMode mode) const {
    dnnl::primitive_attr attr;
    if (alpha_ != 1.0f) attr.set_output_scales(0, {alpha_});
    if (mode == CMode::kSum) {
      dnnl::post_ops po;
      po.append_sum(beta_);
      attr.set_post_ops(po);
    }
    return attr;
  }

  bool trans_a_, trans_b_;
  float alpha_, beta_;
  MatMulWeights weights_;
  ShapeCache<GemmEntry> cache_;
};

}  // namespace

void RegisterGemmKernels(KernelRegistry& r) {
  // Versions 1-13 differ in C's broadcasting rules (always broadcast here, as in ref), C becoming optional (11)
  // and the type list; float32 has the same semantics in all of them.
  r.Add({.op = "Gemm",
         .since = 1,
         .types = {{"T", {DataType::kFloat}}},
         .create = MakeKernel<Gemm>,
         .name = "cpu.f32_gemm__onednn.1"});
}

}  // namespace ferry::cpu
