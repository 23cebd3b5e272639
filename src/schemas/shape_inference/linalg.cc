// Shape inference for linear algebra: MatMul (numpy semantics: 1-D promotion, batch broadcasting), its
// integer/quantized forms, ai.ferry::FusedMatMul and com.microsoft's FusedMatMul / TransposeMatMul (with
// transposes), Gemm (and com.microsoft::FusedGemm), Det, Einsum and com.microsoft::CDist. Inner dimensions that
// are both static and differ prove the model invalid.
#include <algorithm>
#include <array>
#include <map>
#include <string>

#include "schemas/op_origin.h"
#include "schemas/shape_inference/context.h"
#include "schemas/shape_inference/shape_inference.h"
#include "semantics/fused_activation.h"
#include "semantics/gemm.h"

namespace ferry::schemas {
namespace {

// MatMul's output for operand dims a and b (inputs kA and kB, named in messages).
void MatMulOfDims(InferenceContext& ctx, Dims a, Dims b, size_t kA, size_t kB) {
  const bool drop_m = a.size() == 1, drop_n = b.size() == 1;
  if (drop_m) a.insert(a.begin(), ir::Dim::Static(1));
  if (drop_n) b.push_back(ir::Dim::Static(1));
  const ir::Dim& ka = a[a.size() - 1];
  const ir::Dim& kb = b[b.size() - 2];
  if (ka.is_static() && kb.is_static() && ka.value != kb.value) {
    ctx.Fail("inner dimensions differ: A " + ctx.InputString(kA) + " has K = " + std::to_string(ka.value) + ", B " +
             ctx.InputString(kB) + " has K = " + std::to_string(kb.value));
  }
  const size_t ba = a.size() - 2, bb = b.size() - 2, batch = std::max(ba, bb);
  Dims out(batch, ir::Dim::Static(1));
  for (size_t k = 0; k < batch; ++k) {
    const ir::Dim one = ir::Dim::Static(1);
    const ir::Dim& x = k + ba >= batch ? a[k + ba - batch] : one;
    const ir::Dim& y = k + bb >= batch ? b[k + bb - batch] : one;
    bool conflict = false;
    out[k] = BroadcastDim(x, y, &conflict);
    if (conflict) {
      ctx.Fail("batch dimensions cannot be broadcast together: A " + ctx.InputString(kA) + ", B " +
               ctx.InputString(kB));
    }
  }
  if (!drop_m) out.push_back(a[a.size() - 2]);
  if (!drop_n) out.push_back(b[b.size() - 1]);
  ctx.SetOutputShape(0, std::move(out));
}

// The dims of inputs kA and kB when both are known; Fails on a rank-0 operand.
bool MatMulOperands(InferenceContext& ctx, size_t kA, size_t kB, Dims& a, Dims& b) {
  const Dims* a_shape = ctx.input_shape(kA);
  const Dims* b_shape = ctx.input_shape(kB);
  if (!a_shape || !b_shape) return false;
  if (a_shape->empty() || b_shape->empty()) {
    ctx.Fail("inputs must have rank >= 1, got A " + ctx.InputString(kA) + " and B " + ctx.InputString(kB));
  }
  a = *a_shape;
  b = *b_shape;
  return true;
}

template <size_t kA, size_t kB>
void MatMul(InferenceContext& ctx) {
  Dims a, b;
  if (MatMulOperands(ctx, kA, kB, a, b)) MatMulOfDims(ctx, std::move(a), std::move(b), kA, kB);
}

// One operand of com.microsoft::FusedMatMul as MatMul sees it: transBatch moves the first dim past the batch dims
// and the row dim (the Transpose perm [1, ..., rank-2, 0, rank-1] it replaces: [d0, d1, ..., dk, r, c] ->
// [d1, ..., dk, r, d0, c]), then trans swaps the last two. A 1-D operand is not transposed.
Dims TransposedOperand(Dims d, bool trans_batch, bool trans) {
  if (d.size() < 2) return d;
  if (trans_batch && d.size() > 2) std::rotate(d.begin(), d.begin() + 1, d.end() - 1);
  if (trans) std::swap(d[d.size() - 1], d[d.size() - 2]);
  return d;
}

// com.microsoft::FusedMatMul and TransposeMatMul: alpha * MatMul(op(A), op(B)) (schemas_com_microsoft_fused.cc).
void MsFusedMatMul(InferenceContext& ctx) {
  Dims a, b;
  if (!MatMulOperands(ctx, 0, 1, a, b)) return;
  a = TransposedOperand(std::move(a), ctx.attr_int("transBatchA", 0) != 0, ctx.attr_int("transA", 0) != 0);
  b = TransposedOperand(std::move(b), ctx.attr_int("transBatchB", 0) != 0, ctx.attr_int("transB", 0) != 0);
  MatMulOfDims(ctx, std::move(a), std::move(b), 0, 1);
}

// com.microsoft::CDist: A [M, N], B [K, N] -> [M, K].
void CDist(InferenceContext& ctx) {
  const Dims* a = ctx.input_shape(0);
  const Dims* b = ctx.input_shape(1);
  if (a && a->size() != 2) ctx.Fail("input A " + ctx.InputString(0) + " must have rank 2");
  if (b && b->size() != 2) ctx.Fail("input B " + ctx.InputString(1) + " must have rank 2");
  if (a && b && (*a)[1].is_static() && (*b)[1].is_static() && (*a)[1].value != (*b)[1].value) {
    ctx.Fail("A " + ctx.InputString(0) + " and B " + ctx.InputString(1) + " differ in their column count");
  }
  if (!a && !b) return;
  ctx.SetOutputShape(0, {a ? (*a)[0] : UnknownDim(), b ? (*b)[0] : UnknownDim()});
}

// ai.ferry::FusedMatMul (schemas_ferry.cc): MatMul's output; C, when given, is [N] (N: B's column count); an
// activation of the table.
void FusedMatMul(InferenceContext& ctx) {
  // The fused activation must be one of the table's (semantics/fused_activation.h).
  const std::string e = semantics::FusedActivationError(ctx.attr_string("activation", ""),
                                                        ctx.attr_floats("activation_params"));
  if (!e.empty()) ctx.Fail(e);
  MatMul<0, 1>(ctx);
  const Dims* c = ctx.has_input(2) ? ctx.input_shape(2) : nullptr;
  if (!c) return;
  if (c->size() != 1) ctx.Fail("input C " + ctx.InputString(2) + " must have rank 1 ([N])");
  const Dims* b = ctx.input_shape(1);
  if (!b || b->empty()) return;
  const ir::Dim n = b->size() == 1 ? ir::Dim::Static(1) : b->back();
  if (n.is_static() && (*c)[0].is_static() && n.value != (*c)[0].value) {
    ctx.Fail("input C " + ctx.InputString(2) + " must have B's column count N = " + std::to_string(n.value) +
             " (B " + ctx.InputString(1) + ")");
  }
}

// Gemm: op(A) [M, K] x op(B) [K, N] -> [M, N] (the axes: semantics::GemmAxesOf, as the kernels).
void Gemm(InferenceContext& ctx) {
  const Dims* a = ctx.input_shape(0);
  const Dims* b = ctx.input_shape(1);
  if (a && a->size() != 2) ctx.Fail("input A " + ctx.InputString(0) + " must have rank 2");
  if (b && b->size() != 2) ctx.Fail("input B " + ctx.InputString(1) + " must have rank 2");
  const bool ta = ctx.attr_int("transA", 0) != 0, tb = ctx.attr_int("transB", 0) != 0;
  const semantics::GemmAxes ax = semantics::GemmAxesOf(ta, tb);
  ir::Dim m, n;
  if (a) m = (*a)[ax.a_m];
  if (b) n = (*b)[ax.b_n];
  if (a && b) {
    const ir::Dim& ka = (*a)[ax.a_k];
    const ir::Dim& kb = (*b)[ax.b_k];
    if (ka.is_static() && kb.is_static() && ka.value != kb.value) {
      ctx.Fail("inner dimensions differ: A " + ctx.InputString(0) + (ta ? " (transposed)" : "") + " has K = " +
               std::to_string(ka.value) + ", B " + ctx.InputString(1) + (tb ? " (transposed)" : "") +
               " has K = " + std::to_string(kb.value));
    }
  }
  if (!a && !b) return;
  ctx.SetOutputShape(0, {m, n});
}

// Det: [*, M, M] -> [*].
void Det(InferenceContext& ctx) {
  const Dims* x = ctx.input_shape(0);
  if (!x) return;
  if (x->size() < 2) ctx.Fail("input " + ctx.InputString(0) + " must have rank >= 2");
  ctx.SetOutputShape(0, Dims(x->begin(), x->end() - 2));
}

// Einsum: each output letter takes the dim of that letter in the inputs; "..." broadcasts.
void Einsum(InferenceContext& ctx) {
  std::string eq = ctx.attr_string("equation", "");
  eq.erase(std::remove(eq.begin(), eq.end(), ' '), eq.end());
  const size_t arrow = eq.find("->");
  const std::string lhs = eq.substr(0, arrow);
  std::vector<std::string> terms;
  for (size_t pos = 0;;) {
    size_t comma = lhs.find(',', pos);
    terms.push_back(lhs.substr(pos, comma == std::string::npos ? std::string::npos : comma - pos));
    if (comma == std::string::npos) break;
    pos = comma + 1;
  }
  if (terms.size() != ctx.num_inputs()) return;
  std::map<char, ir::Dim> dims;
  std::map<char, int> count;
  Dims ellipsis;
  bool any_ellipsis = false;
  for (size_t i = 0; i < terms.size(); ++i) {
    const Dims* s = ctx.input_shape(i);
    if (!s) return;
    const std::string& t = terms[i];
    const size_t ell = t.find("...");
    const size_t letters = t.size() - (ell == std::string::npos ? 0 : 3);
    if (letters > s->size() || (ell == std::string::npos && letters != s->size())) {
      ctx.Fail("equation term '" + t + "' does not match input " + ctx.InputString(i));
    }
    const size_t ell_rank = s->size() - letters;
    size_t d = 0;
    for (size_t c = 0; c < t.size();) {
      if (c == ell) {
        any_ellipsis = true;
        // Broadcast this input's ellipsis dims into `ellipsis` (right-aligned).
        Dims e(s->begin() + static_cast<std::ptrdiff_t>(d), s->begin() + static_cast<std::ptrdiff_t>(d + ell_rank));
        if (e.size() > ellipsis.size()) ellipsis.insert(ellipsis.begin(), e.size() - ellipsis.size(), ir::Dim::Static(1));
        for (size_t k = 0; k < e.size(); ++k) {
          bool conflict = false;
          ir::Dim& dst = ellipsis[ellipsis.size() - e.size() + k];
          dst = BroadcastDim(dst, e[k], &conflict);
          if (conflict) ctx.Fail("the '...' dims of the inputs cannot be broadcast together");
        }
        d += ell_rank;
        c += 3;
        continue;
      }
      const char letter = t[c];
      ++count[letter];
      auto [it, inserted] = dims.emplace(letter, (*s)[d]);
      if (!inserted) {
        bool conflict = false;
        // A letter of size 1 broadcasts in Einsum implementations; only merge equal-or-unknown dims.
        if (!IsOne(it->second) && !IsOne((*s)[d])) it->second = MergeDim(it->second, (*s)[d], &conflict);
        else if (IsOne(it->second)) it->second = (*s)[d];
        if (conflict) {
          ctx.Fail("letter '" + std::string(1, letter) + "' has different sizes in the inputs (" +
                   ctx.InputString(i) + ")");
        }
      }
      ++d;
      ++c;
    }
  }
  std::string out_term;
  if (arrow != std::string::npos) {
    out_term = eq.substr(arrow + 2);
  } else {
    if (any_ellipsis) out_term = "...";
    for (const auto& [letter, n] : count) {
      if (n == 1) out_term += letter;
    }
  }
  Dims out;
  for (size_t c = 0; c < out_term.size();) {
    if (out_term.compare(c, 3, "...") == 0) {
      out.insert(out.end(), ellipsis.begin(), ellipsis.end());
      c += 3;
      continue;
    }
    auto it = dims.find(out_term[c]);
    if (it == dims.end()) return;
    out.push_back(it->second);
    ++c;
  }
  ctx.SetOutputShape(0, std::move(out));
}

}  // namespace

void RegisterLinalgShapeInference(SchemaRegistry& r) {
  r.SetInference("", "MatMul", 1, MatMul<0, 1>);
  r.SetInference("", "MatMulInteger", 1, MatMul<0, 1>);
  r.SetInference("", "QLinearMatMul", 1, MatMul<0, 3>);
  r.SetInference("", "Gemm", 1, Gemm);
  r.SetInference("", "Det", 1, Det);
  r.SetInference("", "Einsum", 1, Einsum);
  r.SetInference(kFerryDomain, "FusedMatMul", 1, FusedMatMul);  // here for MatMul's; other ai.ferry ops: nn.cc
  // ONNX Runtime's contrib ops with MatMul's or Gemm's geometry.
  const std::string ms(kMsDomain);
  r.SetInference(ms, "FusedMatMul", 1, MsFusedMatMul);
  r.SetInference(ms, "TransposeMatMul", 1, MsFusedMatMul);
  r.SetInference(ms, "FusedGemm", 1, Gemm);
  r.SetInference(ms, "CDist", 1, CDist);
}

}  // namespace ferry::schemas
