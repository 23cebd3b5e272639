// MatMul (float32) on oneDNN's matmul primitive, with numpy semantics: 1-D operands are promoted to a row (A)
// or column (B) vector, batch dims broadcast. Batch dims are merged where A and B broadcast alike, so any rank
// fits oneDNN's 12 dims (beyond that, the outermost merged dims become a loop); when B has no batch extent the
// whole product is one [batch·M × K]·[K × N] matmul. A constant B without batch extent is reordered once, at
// creation, into the layout oneDNN prefers for the statically known M. Prepare checks the shapes and builds the
// primitive of each input signature (its prepared state), with the scratchpad it records in the workspace.
//
// The same kernel runs the optimizer's ai.ferry FusedMatMul, Y = act(MatMul(A, B) + C): C ([N]) is the
// primitive's bias, described as [1, ..., 1, N] over Y's rank, and the activation its eltwise post-ops
// (fused_activation.h), SiLU a pass of Ferry's over Y after it (activation_pass.h); with K = 0 (no product) Y is
// act(C) computed here.
//
// The same kernel runs ONNX Runtime's com.microsoft FusedMatMul and TransposeMatMul, Y = alpha · MatMul(op(A),
// op(B)) (ref/ort_fused_matmul.cc has the definition): transA / transB are strided descs of the operand as stored
// (oneDNN's gemm reads them in place, as Gemm's transposes), alpha the primitive's output scale; transBatchA /
// transBatchB (dim 0 moved past the batch dims) copy the operand into that order first, a blocked transpose of
// whole rows. With neither it is MatMul's code path, the constant B packed as for MatMul (transposed: read as Gemm
// reads a transposed B), the skinny loop only without transposes and with alpha = 1.
//
// Skinny products: the AVX2 variant runs a product of at most kMaxSkinnyRows rows against a B shared by the batch
// as skinny_gemm.h's own loop, reading B in place (its packed copy when row-major, as on AVX2, else B itself while
// it is held), then the activation per element; oneDNN's gemm otherwise.
#include <algorithm>
#include <optional>
#include <string>
#include <vector>

#include "core/parallel.h"
#include "kernels/cpu/activation_pass.h"
#include "kernels/cpu/dnnl_util.h"
#include "kernels/cpu/fused_activation.h"
#include "kernels/cpu/matmul_util.h"
#include "kernels/cpu/skinny_gemm.h"
#include "kernels/kernel_def.h"
#include "kernels/registry.h"
#include "schemas/schema.h"
#include "semantics/matmul.h"

namespace ferry::cpu {
namespace {

constexpr size_t kMaxDnnlBatchDims = DNNL_MAX_NDIMS - 2;

// The shape analysis of one (A, B) pair.
struct MatMulShape {
  int64_t m = 0, k = 0, n = 0;
  Shape y_shape;
  // Merged batch dims, outermost first: the output's extent and A's / B's (1 where that operand broadcasts).
  std::vector<int64_t> batch, a_batch, b_batch;
  bool b_shared() const {
    return std::all_of(b_batch.begin(), b_batch.end(), [](int64_t d) { return d == 1; });
  }
};

MatMulShape ResolveMatMul(const Shape& a, const Shape& b, const std::string& what) {
  const semantics::MatMulShape r = semantics::ResolveMatMul(a, b, what);
  MatMulShape s;
  s.m = r.m;
  s.k = r.k;
  s.n = r.n;
  s.y_shape = r.y_shape;
  const size_t ra = r.batch_a.size(), rb = r.batch_b.size(), rank = r.batch.size();
  int prev_pattern = -1;
  for (size_t i = 0; i < rank; ++i) {
    const int64_t da = i < rank - ra ? 1 : r.batch_a[i - (rank - ra)];
    const int64_t db = i < rank - rb ? 1 : r.batch_b[i - (rank - rb)];
    const int64_t d = r.batch[i];
    if (d == 1) continue;
    // Adjacent dims where A and B broadcast alike merge into one.
    const int pattern = (da != 1 ? 1 : 0) | (db != 1 ? 2 : 0);
    if (pattern == prev_pattern) {
      s.batch.back() *= d;
      s.a_batch.back() *= da;
      s.b_batch.back() *= db;
    } else {
      s.batch.push_back(d);
      s.a_batch.push_back(da);
      s.b_batch.push_back(db);
      prev_pattern = pattern;
    }
  }
  return s;
}

dnnl::memory::desc Dense(const std::vector<int64_t>& dims) {
  return PlainDesc(Shape(dims.begin(), dims.end()), DataType::kFloat);
}

// dims [..., r, c] of a tensor stored densely as [..., r, c], or (transposed) as [..., c, r].
dnnl::memory::desc Strided(const std::vector<int64_t>& dims, bool transposed) {
  if (!transposed || dims.size() < 2) return Dense(dims);
  const size_t n = dims.size();
  dnnl::memory::dims strides(n);
  std::vector<int64_t> stored = dims;
  std::swap(stored[n - 1], stored[n - 2]);
  int64_t st = 1;
  for (size_t i = n; i-- > 0;) {
    strides[i] = st;
    st *= std::max<int64_t>(stored[i], 1);
  }
  std::swap(strides[n - 1], strides[n - 2]);
  return dnnl::memory::desc(dnnl::memory::dims(dims.begin(), dims.end()), dnnl::memory::data_type::f32, strides);
}

// transBatch's order of a stored shape: [d0, d1, ..., dk, r, c] -> [d1, ..., dk, r, d0, c].
Shape BatchTransposed(Shape s) {
  if (s.size() > 2) std::rotate(s.begin(), s.begin() + 1, s.end() - 1);
  return s;
}

// transBatch's copy: x stored as [d0, mid, c] (mid the product of the dims between) into y as [mid, d0, c].
void CopyBatchTransposed(const float* x, const Shape& stored, float* y, int threads) {
  const int64_t d0 = stored[0], c = stored.back();
  const int64_t mid = ShapeElementCount(stored) / std::max<int64_t>(1, d0 * c);
  ParallelFor(threads, mid, std::max<int64_t>(1, (1 << 14) / std::max<int64_t>(1, d0 * c)), [&](int64_t b, int64_t e) {
    for (int64_t j = b; j < e; ++j) {
      for (int64_t i = 0; i < d0; ++i) std::copy_n(x + (i * mid + j) * c, c, y + (j * d0 + i) * c);
    }
  });
}

// Which op the kernel runs.
enum class MatMulOp { kMatMul, kFerryFused, kOrtFused };

// What the node adds to the product: nothing (MatMul), FusedMatMul's bias C and activation (ai.ferry), or the
// operand transposes and scale (com.microsoft).
struct MatMulConfig {
  bool has_bias = false;
  FusedActivation act;
  ActivationPass act_pass;    // act as a pass over Y after the primitive, not a post-op (activation_pass.h)
  dnnl::primitive_attr attr;  // the activation's eltwise post-ops, alpha's output scale
  float alpha = 1.0f;
  bool trans_a = false, trans_b = false, trans_batch_a = false, trans_batch_b = false;

  static MatMulConfig FromNode(const ir::Node& node, MatMulOp op) {
    MatMulConfig c;
    if (op == MatMulOp::kMatMul) return c;
    if (op == MatMulOp::kOrtFused) {
      c.alpha = node.GetFloat("alpha", 1.0f);
      c.trans_a = node.GetInt("transA", 0) != 0;
      c.trans_b = node.GetInt("transB", 0) != 0;
      c.trans_batch_a = node.GetInt("transBatchA", 0) != 0;
      c.trans_batch_b = node.GetInt("transBatchB", 0) != 0;
      if (c.alpha != 1.0f) c.attr.set_output_scales(0, {c.alpha});
      return c;
    }
    c.has_bias = node.input(2) != nullptr;
    if (const std::string reason = FusedActivation::Parse(node, &c.act); !reason.empty()) {
      throw UnsupportedError(node.Describe() + ": " + reason);
    }
    c.act_pass = ActivationPass::For(c.act);
    if (c.act.kind != FusedActivation::Kind::kNone && !c.act_pass) {
      dnnl::post_ops ops;
      c.act.AppendTo(ops);
      c.attr.set_post_ops(ops);
    }
    return c;
  }
  // The bias desc for a destination of `y_rank` dims: [1, ..., 1, n] (a zero desc without bias).
  dnnl::memory::desc Bias(size_t y_rank, int64_t n) const {
    if (!has_bias) return {};
    std::vector<int64_t> dims(y_rank, 1);
    dims.back() = n;
    return Dense(dims);
  }
};

// Everything one input signature needs (the prepared state): the primitive and how the buffers map onto it.
struct MatMulPlan {
  MatMulShape shape;
  bool trivial = false;  // empty output, or K == 0 (act(C) or zeros): no primitive
  dnnl::memory::desc a_md, b_md, bias_md, y_md;
  // The primitive for B as Prepare saw it: the constant B (reading the packed weights when they suit it), or,
  // when B's data is not known before the run, the initializer B that a run reads unless a feed overrides it.
  MatMulPrimitive mm;
  // When B is not known before the run but may be the packed initializer: the plain primitive for a fed B.
  std::optional<MatMulPrimitive> fed;
  // A skinny product (see the top of the file): rows of A (over the batch) when it runs one, else 0.
  int64_t skinny_rows = 0;
  // Merged batch dims beyond oneDNN's rank limit run as a loop: their extents and per-step element strides.
  std::vector<int64_t> outer, outer_a_stride, outer_b_stride, outer_y_stride;
  std::string what;  // the node, for oneDNN's errors
};

class MatMul : public OpKernel {
 public:
  // op: which (see MatMulOp); skinny: the AVX2 variant (skinny products).
  MatMul(const ir::Node& node, MatMulOp op, bool skinny) : cfg_(MatMulConfig::FromNode(node, op)), skinny_(skinny) {
    const ir::Value* bv = node.input(1);
    if (!bv || !bv->initializer() || bv->initializer()->dtype() != DataType::kFloat) return;
    const Tensor& b = *bv->initializer();
    if (b.rank() < 1 || cfg_.trans_batch_b) return;  // transBatchB: B is copied per run
    for (int64_t i = 0; i + 2 < b.rank(); ++i) {
      if (b.dim(i) != 1) return;  // a batched constant B runs on the plain layout
    }
    const bool tb = cfg_.trans_b && b.rank() >= 2;
    const int64_t k = b.rank() == 1 ? b.dim(0) : b.dim(b.rank() - (tb ? 1 : 2));
    const int64_t n = b.rank() == 1 ? 1 : b.dim(b.rank() - (tb ? 2 : 1));
    if (k == 0 || n == 0) return;
    // The representative M: every row of A (B is shared by the whole batch), or a guess when A is dynamic.
    int64_t rows = 64;
    const ir::Value* av = node.input(0);
    if (av && av->type().shape && !av->type().shape->empty()) {
      int64_t r = 1;
      bool known = true;
      const auto& dims = *av->type().shape;
      for (size_t i = 0; i + 1 < dims.size(); ++i) {
        known = known && dims[i].is_static();
        if (dims[i].is_static()) r *= dims[i].value;
      }
      if (known && r > 0) rows = r;
    }
    weights_ = MatMulWeights(bv->initializer_ptr(), Strided({k, n}, tb), Dense({rows, k}), Dense({rows, n}),
                             cfg_.Bias(2, n), cfg_.attr, node.Describe());
  }

  int64_t held_bytes() const override { return weights_.bytes(); }
  bool ReleaseConstantInput(size_t k) override { return k == 1 && weights_.ReleaseSource(); }

  // Checks the inputs, declares Y, builds the primitive for these shapes (for ctx.threads(), the split it will
  // run with) and records its scratchpad.
  void Prepare(PrepareContext& ctx) const override {
    const InputSpec& a = ctx.tensor_input(0);
    const InputSpec& b = ctx.tensor_input(1);
    const InputSpec* c = cfg_.has_bias ? &ctx.tensor_input(2) : nullptr;
    for (int i = 0; i < (c ? 3 : 2); ++i) {
      if (ctx.input(i).dtype != DataType::kFloat) {
        throw InvalidArgumentError(ctx.Describe() + ": inputs A, B (and C) must be float32, got " +
                                   ctx.InputString(i));
      }
    }
    if ((cfg_.trans_batch_a || cfg_.trans_batch_b) && (a.shape.size() < 3 || a.shape.size() != b.shape.size())) {
      throw InvalidArgumentError(ctx.Describe() + ": transBatchA / transBatchB need A and B of the same rank >= 3, " +
                                 "got " + ctx.InputString(0) + " and " + ctx.InputString(1));
    }
    // The operands as the primitive reads them: transBatch's order (a copy), then transA / transB (strides).
    const Shape a_stored = cfg_.trans_batch_a ? BatchTransposed(a.shape) : a.shape;
    const Shape b_stored = cfg_.trans_batch_b ? BatchTransposed(b.shape) : b.shape;
    const Shape a_logical = Logical(a_stored, cfg_.trans_a), b_logical = Logical(b_stored, cfg_.trans_b);
    std::string error;
    if (!semantics::MatMulShapeOf(a_logical, b_logical, &error)) {
      const std::string transposed = a_logical != a.shape || b_logical != b.shape
                                         ? "; transposed: A " + ShapeToString(a_logical) + ", B " +
                                               ShapeToString(b_logical)
                                         : std::string();
      throw InvalidArgumentError(ctx.Describe() + ": " + error + " (" + ctx.InputString(0) + ", " +
                                 ctx.InputString(1) + transposed + ")");
    }
    MatMulPlan& p = ctx.EmplaceState(Build(a_logical, b_logical, ctx.constant(1), ctx.threads(), ctx.Describe()));
    if (c && (c->shape.size() != 1 || c->shape[0] != p.shape.n)) {
      throw InvalidArgumentError(ctx.Describe() + ": input C has shape " + ShapeToString(c->shape) + ", expected [" +
                                 std::to_string(p.shape.n) + "] (B's column count, for B " + ShapeToString(b.shape) +
                                 "; " + ctx.InputString(2) + ")");
    }
    ctx.SetOutput(0, DataType::kFloat, p.shape.y_shape);
    if (p.trivial) return;
    // A skinny product that always runs Ferry's loop (B fed, or readable row-major: RunSkinny) needs no oneDNN
    // scratchpad. Constant inputs are released before the first Prepare, so what RowMajor says here holds.
    int64_t ldb = 0;
    if (p.skinny_rows > 0 && (!weights_.has_packed() || weights_.RowMajor(&ldb) != nullptr)) return;
    NeedScratchpad(p.mm.scratch, ctx.workspace());
    if (p.fed) NeedScratchpad(p.fed->scratch, ctx.workspace());
  }

  void Compute(KernelContext& ctx) const override {
    const MatMulPlan& p = ctx.state<MatMulPlan>();
    const Tensor& a = ctx.required_input(0);
    const Tensor& b = ctx.required_input(1);
    const Tensor* c = cfg_.has_bias ? &ctx.required_input(2) : nullptr;
    // A trivial product (empty, or K == 0) is the zeroed output; otherwise oneDNN writes every element.
    Tensor& y = p.trivial ? ctx.Output(0) : ctx.OutputUninitialized(0);
    if (p.trivial) {  // empty, or K == 0: the product is zeros, Y is act(C) (or act(0)) in every row
      FillWithoutProduct(c, p.shape.n, y);
      return;
    }
    if (p.skinny_rows > 0 && RunSkinny(p, a, b, c, ctx.threads(), y)) return;
    // A B fed at run time in place of the packed initializer runs on the plain primitive.
    const MatMulPrimitive& mm = p.fed && !weights_.Usable(b) ? *p.fed : p.mm;
    const bool use_packed = mm.packed;
    int64_t steps = 1;
    for (int64_t d : p.outer) steps *= d;
    const float* ap = a.data<float>();
    // A released B has no data of its own: a primitive that wants the plain layout reads it unpacked.
    const float* bp = use_packed ? nullptr : weights_.released() ? weights_.Plain().data<float>() : b.data<float>();
    // transBatch: the operand copied into the order the primitive reads.
    std::vector<float> a_copy, b_copy;
    if (cfg_.trans_batch_a) {
      a_copy.resize(static_cast<size_t>(a.size()));
      CopyBatchTransposed(ap, a.shape(), a_copy.data(), ctx.threads());
      ap = a_copy.data();
    }
    if (cfg_.trans_batch_b) {
      b_copy.resize(static_cast<size_t>(b.size()));
      CopyBatchTransposed(bp, b.shape(), b_copy.data(), ctx.threads());
      bp = b_copy.data();
    }
    float* yp = y.data<float>();
    WithStream(ctx.threads(), p.what, [&](dnnl::stream& s) {
      for (int64_t step = 0; step < steps; ++step) {
        int64_t rem = step, ao = 0, bo = 0, yo = 0;
        for (size_t d = p.outer.size(); d-- > 0;) {
          const int64_t i = rem % p.outer[d];
          rem /= p.outer[d];
          ao += i * p.outer_a_stride[d];
          bo += i * p.outer_b_stride[d];
          yo += i * p.outer_y_stride[d];
        }
        dnnl::memory am(p.a_md, Engine(), const_cast<float*>(ap + ao));
        dnnl::memory bm =
            use_packed ? weights_.memory() : dnnl::memory(p.b_md, Engine(), const_cast<float*>(bp + bo));
        dnnl::memory ym(p.y_md, Engine(), yp + yo);
        std::unordered_map<int, dnnl::memory> args{{DNNL_ARG_SRC, am}, {DNNL_ARG_WEIGHTS, bm}, {DNNL_ARG_DST, ym}};
        if (c) args.emplace(DNNL_ARG_BIAS, dnnl::memory(p.bias_md, Engine(), const_cast<float*>(c->data<float>())));
        AddScratchpad(args, mm.scratch);
        mm.prim.execute(s, args);
      }
    });
    if (cfg_.act_pass) cfg_.act_pass.Run(yp, y.size(), ctx.threads());
  }

 private:
  // An operand's shape as MatMul sees it: the last two dims swapped by transA / transB (not for a 1-D one).
  static Shape Logical(Shape s, bool trans) {
    if (trans && s.size() >= 2) std::swap(s[s.size() - 1], s[s.size() - 2]);
    return s;
  }

  // The skinny product, when B can be read row-major in place (the packed copy or the initializer itself, or a fed
  // B); false, touching nothing, when it cannot (a blocked copy of a released initializer).
  bool RunSkinny(const MatMulPlan& p, const Tensor& a, const Tensor& b, const Tensor* c, int threads,
                 Tensor& y) const {
    const int64_t k = p.shape.k, n = p.shape.n;
    int64_t ldb = n;
    const float* bp = weights_.Usable(b) ? weights_.RowMajor(&ldb) : weights_.released() ? nullptr : b.data<float>();
    if (!bp) return false;
    float* yp = y.data<float>();
    SkinnyGemmAvx2(threads, p.skinny_rows, k, n, a.data<float>(), k, bp, ldb, c ? c->data<float>() : nullptr, yp, n);
    if (cfg_.act.kind != FusedActivation::Kind::kNone) {
      for (int64_t i = 0; i < p.skinny_rows * n; ++i) yp[i] = cfg_.act.Apply(yp[i]);
    }
    return true;
  }

  void FillWithoutProduct(const Tensor* c, int64_t n, Tensor& y) const {
    if (!c && cfg_.act.kind == FusedActivation::Kind::kNone) return;  // zeros
    float* yp = y.data<float>();
    const float* cp = c ? c->data<float>() : nullptr;
    for (int64_t i = 0; i < y.size(); ++i) yp[i] = cfg_.act.Apply(cp ? cp[i % n] : 0.0f);
  }

  // The plan for A and B of these shapes; `constant_b`: B's data when known before the run (else nullptr). The
  // primitives are created for `threads`.
  MatMulPlan Build(const Shape& a, const Shape& b, const Tensor* constant_b, int threads, std::string what) const {
    MatMulPlan e;
    e.what = std::move(what);
    e.shape = ResolveMatMul(a, b, e.what);
    const MatMulShape& s = e.shape;
    e.trivial = ShapeElementCount(s.y_shape) == 0 || s.k == 0;
    if (e.trivial) return e;
    const ScopedOmpThreads scope(threads);
    // A's and B's last two dims are stored transposed (a 1-D operand never is).
    const bool ta = cfg_.trans_a && a.size() >= 2, tb = cfg_.trans_b && b.size() >= 2;
    if (s.b_shared() && !ta) {
      // B is the same for every batch and A's matrices are contiguous: one 2-D product over all rows.
      int64_t rows = s.m;
      for (int64_t d : s.batch) rows *= d;
      e.a_md = Dense({rows, s.k});
      e.b_md = Strided({s.k, s.n}, tb);
      e.y_md = Dense({rows, s.n});
      e.bias_md = cfg_.Bias(2, s.n);
      // The packed weights serve the constant B they were made from, also once released (then Prepare sees no data,
      // and no feed can override it); a B known only at run time may be that initializer (then they do) or a feed
      // overriding it (then the plain primitive runs).
      const bool packed = constant_b ? weights_.Usable(*constant_b) : weights_.has_packed();
      e.mm = MakeMatMul(e.a_md, e.b_md, e.bias_md, e.y_md, cfg_.attr, packed ? &weights_ : nullptr);
      if (skinny_ && rows <= kMaxSkinnyRows && !tb && cfg_.alpha == 1.0f) e.skinny_rows = rows;
      if (packed && !constant_b && !weights_.released() && e.mm.packed) {
        e.fed = MakeMatMul(e.a_md, e.b_md, e.bias_md, e.y_md, cfg_.attr, nullptr);
      }
      return e;
    }
    // Batched: inner merged dims go to oneDNN (equal ranks, 1 = broadcast), the rest become a loop.
    const size_t nb = s.batch.size();
    const size_t split = nb > kMaxDnnlBatchDims ? nb - kMaxDnnlBatchDims : 0;
    std::vector<int64_t> ad(s.a_batch.begin() + static_cast<std::ptrdiff_t>(split), s.a_batch.end());
    std::vector<int64_t> bd(s.b_batch.begin() + static_cast<std::ptrdiff_t>(split), s.b_batch.end());
    std::vector<int64_t> yd(s.batch.begin() + static_cast<std::ptrdiff_t>(split), s.batch.end());
    int64_t a_inner = s.m * s.k, b_inner = s.k * s.n, y_inner = s.m * s.n;
    for (size_t i = 0; i < ad.size(); ++i) {
      a_inner *= ad[i];
      b_inner *= bd[i];
      y_inner *= yd[i];
    }
    ad.insert(ad.end(), {s.m, s.k});
    bd.insert(bd.end(), {s.k, s.n});
    yd.insert(yd.end(), {s.m, s.n});
    e.a_md = Strided(ad, ta);
    e.b_md = Strided(bd, tb);
    e.y_md = Dense(yd);
    e.bias_md = cfg_.Bias(yd.size(), s.n);
    e.mm = MakeMatMul(e.a_md, e.b_md, e.bias_md, e.y_md, cfg_.attr, nullptr);
    // Element strides of the loop dims (0 where the operand broadcasts).
    e.outer.assign(s.batch.begin(), s.batch.begin() + static_cast<std::ptrdiff_t>(split));
    e.outer_a_stride.resize(split);
    e.outer_b_stride.resize(split);
    e.outer_y_stride.resize(split);
    for (size_t d = split; d-- > 0;) {
      e.outer_a_stride[d] = s.a_batch[d] == 1 ? 0 : a_inner;
      e.outer_b_stride[d] = s.b_batch[d] == 1 ? 0 : b_inner;
      e.outer_y_stride[d] = y_inner;
      a_inner *= s.a_batch[d];
      b_inner *= s.b_batch[d];
      y_inner *= s.batch[d];
    }
    return e;
  }

  MatMulConfig cfg_;
  bool skinny_ = false;
  MatMulWeights weights_;
};

std::string FusedMatMulPredicate(const ir::Node& node) {
  FusedActivation act;
  return FusedActivation::Parse(node, &act);
}

}  // namespace

void RegisterMatMulKernels(KernelRegistry& r) {
  // Versions 1, 9 and 13 only widen the type list; float32 has the same semantics in all of them. Best first: the
  // variant with skinny products, then the portable one.
  for (const bool skinny : {true, false}) {
    r.Add({.op = "MatMul",
           .since = 1,
           .types = {{"T", {DataType::kFloat}}},
           .create = [skinny](const ir::Node& node, const KernelOptions&) {
             return std::make_unique<MatMul>(node, MatMulOp::kMatMul, skinny);
           },
           .isa = skinny ? IsaSet{Isa::kAvx2, Isa::kFma} : IsaSet{},
           .name = skinny ? "cpu.f32_matmul__onednn_avx2.1" : "cpu.f32_matmul__onednn.1",
           .library = "oneDNN"});
  }
}

void RegisterFusedMatMulKernels(KernelRegistry& r) {
  for (const bool skinny : {true, false}) {
    r.Add({.op = "FusedMatMul",
           .domain = std::string(schemas::kFerryDomain),
           .since = 1,
           .types = {{"T", {DataType::kFloat}}},
           .create = [skinny](const ir::Node& node, const KernelOptions&) {
             return std::make_unique<MatMul>(node, MatMulOp::kFerryFused, skinny);
           },
           .predicate = FusedMatMulPredicate,
           .isa = skinny ? IsaSet{Isa::kAvx2, Isa::kFma} : IsaSet{},
           .name = skinny ? "cpu.f32_fused_matmul__onednn_avx2.1" : "cpu.f32_fused_matmul__onednn.1",
           .constraints = "float32; activation Clip only with min <= max",
           .library = "oneDNN"});
  }
}

// com.microsoft FusedMatMul and TransposeMatMul (ONNX Runtime's MatMul + Transpose / Mul fusions), float32.
void RegisterOrtFusedMatMulKernels(KernelRegistry& r) {
  for (const char* op : {"FusedMatMul", "TransposeMatMul"}) {
    const std::string lower = std::string(op) == "FusedMatMul" ? "ms_fused_matmul" : "ms_transpose_matmul";
    for (const bool skinny : {true, false}) {
      r.Add({.op = op,
             .domain = "com.microsoft",
             .since = 1,
             .types = {{"T", {DataType::kFloat}}},
             .create = [skinny](const ir::Node& node, const KernelOptions&) {
               return std::make_unique<MatMul>(node, MatMulOp::kOrtFused, skinny);
             },
             .isa = skinny ? IsaSet{Isa::kAvx2, Isa::kFma} : IsaSet{},
             .name = "cpu.f32_" + lower + (skinny ? "__onednn_avx2.1" : "__onednn.1"),
             .constraints = "float32",
             .library = "oneDNN"});
    }
  }
}

}  // namespace ferry::cpu
