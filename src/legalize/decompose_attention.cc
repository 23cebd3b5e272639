// Attention (ai.onnx opsets 23, 24) into Transpose, MatMul, Mul, Add, Softmax, MatMul, with Reshape/Transpose for
// 3-D Q/K/V, Concat for past_key/past_value, Unsqueeze/Expand/Reshape for grouped-query heads, Where for a bool
// mask, Pad for a mask shorter than the keys, a constant causal bias, Div/Tanh/Mul for softcap, and Cast for half
// precision (computed in float, as the ref kernel does); nonpad_kv_seqlen (opset 24) as Less/Where biases over the
// static key positions. Identity: the op's definition (its function body):
// s = scale * Q Kᵀ (scale default 1/sqrt(head size)); softcap c > 0: s = c tanh(s / c);
// p = Softmax(s + mask + causal, last axis); Y = p V. Query head h reads key/value head h / (q_heads / kv_heads).
// With a mask or nonpad_kv_seqlen, a row they hide entirely gets p = 0 (ReduceMax, Equal, Where), as the function
// body (and Ferry's ref kernel) define it; without them no row can be hidden (the causal frontier keeps key 0).
// ai.ferry::Attention (fuse_attention's op): Y = Softmax(scale * Q Kᵀ + mask) V, into the same primitives.
#include <algorithm>
#include <cmath>
#include <limits>

#include "legalize/decompose_util.h"

namespace ferry::legalize {
namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();

bool SameDim(const ir::Value* a, int64_t i, const ir::Value* b, int64_t j) {
  const int64_t x = DimOrMinusOne(a, i), y = DimOrMinusOne(b, j);
  if (x >= 0 || y >= 0) return x == y;
  const int64_t ra = RankOrMinusOne(a), rb = RankOrMinusOne(b);
  if (i < 0) i += ra;
  if (j < 0) j += rb;
  const std::string& sa = (*a->type().shape)[static_cast<size_t>(i)].symbol;
  return !sa.empty() && sa == (*b->type().shape)[static_cast<size_t>(j)].symbol;
}

// What the rule needs to know statically, read once by Refuse and Build.
struct Shapes {
  int64_t rank = -1, q_heads = -1, kv_heads = -1, head = -1, v_head = -1;
  int64_t q_seq = -1, kv_seq = -1, past = 0, total = -1;  // total: past + kv_seq
  int64_t mask_len = -1, mask_pad = 0;
};

Shapes Read(const ir::Node& n) {
  Shapes s;
  const ir::Value *q = n.input(0), *k = n.input(1), *v = n.input(2);
  s.rank = RankOrMinusOne(q);
  const int64_t qh = n.GetInt("q_num_heads", 0), kvh = n.GetInt("kv_num_heads", 0);
  if (s.rank == 3) {
    s.q_heads = qh > 0 ? qh : -1;
    s.kv_heads = kvh > 0 ? kvh : -1;
    const int64_t hq = DimOrMinusOne(q, 2), hv = DimOrMinusOne(v, 2);
    if (s.q_heads > 0 && hq >= 0) s.head = hq / s.q_heads;
    if (s.kv_heads > 0 && hv >= 0) s.v_head = hv / s.kv_heads;
    s.q_seq = DimOrMinusOne(q, 1), s.kv_seq = DimOrMinusOne(k, 1);
  } else if (s.rank == 4) {
    s.q_heads = DimOrMinusOne(q, 1) >= 0 ? DimOrMinusOne(q, 1) : (qh > 0 ? qh : -1);
    s.kv_heads = DimOrMinusOne(k, 1) >= 0 ? DimOrMinusOne(k, 1) : (kvh > 0 ? kvh : -1);
    s.head = DimOrMinusOne(q, 3), s.v_head = DimOrMinusOne(v, 3);
    s.q_seq = DimOrMinusOne(q, 2), s.kv_seq = DimOrMinusOne(k, 2);
  }
  if (n.input(4)) s.past = DimOrMinusOne(n.input(4), 2);
  s.total = s.past >= 0 && s.kv_seq >= 0 ? s.past + s.kv_seq : -1;
  if (n.input(3)) {
    s.mask_len = DimOrMinusOne(n.input(3), -1);
    if (s.mask_len >= 0 && s.total >= 0) s.mask_pad = s.total - s.mask_len;
  }
  return s;
}

std::string Refuse(const ir::Node& n, int64_t opset) {
  const ir::Value *q = n.input(0), *k = n.input(1), *v = n.input(2), *mask = n.input(3);
  const DataType t = ElementType(q);
  if (!IsFloatType(t)) return "Attention: Q's element type is unknown or not floating-point";
  if (ElementType(k) != t || ElementType(v) != t) return "Attention: K and V of another element type than Q";
  if ((n.input(4) == nullptr) != (n.input(5) == nullptr)) return "Attention: past_key without past_value or back";
  const Shapes s = Read(n);
  if ((s.rank != 3 && s.rank != 4) || RankOrMinusOne(k) != s.rank || RankOrMinusOne(v) != s.rank) {
    return "Attention: Q, K and V must have one known rank, 3 or 4";
  }
  if (s.rank == 3 && (n.GetInt("q_num_heads", 0) <= 0 || n.GetInt("kv_num_heads", 0) <= 0)) {
    return "Attention: 3-D inputs need q_num_heads and kv_num_heads";
  }
  if (s.q_heads < 0 || s.kv_heads < 0) return "Attention: the head counts are not known statically";
  if (s.q_heads % s.kv_heads != 0) return "Attention: q heads are not a multiple of kv heads";
  if (s.q_heads != s.kv_heads && (s.head < 0 || s.v_head < 0)) {
    return "Attention: grouped-query heads need static head sizes";
  }
  if (!n.has_attr("scale") && s.head < 0) return "Attention: no scale attribute and the head size is not static";
  const int64_t mode = n.GetInt("qk_matmul_output_mode", 0);
  if (mode < 0 || mode > 3) return "Attention: qk_matmul_output_mode " + std::to_string(mode) + " is unknown";
  if (n.GetInt("is_causal", 0) != 0 && (s.q_seq < 0 || s.total < 0)) {
    return "Attention: is_causal needs static query and key lengths";
  }
  if (n.input(6) && (s.total < 0 || ElementType(n.input(6)) != DataType::kInt64)) {
    return "Attention: nonpad_kv_seqlen needs a static key length";
  }
  if (mask) {
    const int64_t r = RankOrMinusOne(mask);
    if (r < 2 || r > 4) return "Attention: attn_mask's rank is unknown or not 2 to 4";
    if (ElementType(mask) != DataType::kBool && ElementType(mask) != t) {
      return "Attention: attn_mask is neither bool nor Q's type";
    }
    if (s.mask_pad < 0) return "Attention: attn_mask is longer than the keys";
    const bool padded = s.mask_len >= 0 && s.total >= 0;  // padded with -inf up to the key length when shorter
    if (!padded && (n.input(4) || !SameDim(mask, -1, k, s.rank == 3 ? 1 : 2))) {
      return "Attention: attn_mask's last dim is not provably the key length (static shapes needed)";
    }
  }
  if (opset < 13) return "Attention: needs ai.onnx opset 13";
  return "";
}

// [B, S, H*D] -> [B, H, S, D].
ir::Value* Heads(Builder& b, ir::Value* x, int64_t heads) {
  return b.Transpose(b.Reshape(x, {0, 0, heads, -1}), {0, 2, 1, 3});
}

// [B, Hkv, S, D] -> [B, Hkv * group, S, D], each head repeated `group` times in place.
ir::Value* RepeatHeads(Builder& b, ir::Value* x, int64_t group, int64_t heads, int64_t dim) {
  ir::Value* e = b.Op("Expand", {b.Unsqueeze(x, {2}), b.Int64s({1, 1, group, 1, 1})});
  return b.Reshape(e, {0, heads, -1, dim});
}

void Build(Builder& b) {
  const ir::Node& n = b.node();
  const Shapes s = Read(n);
  // Half precision is computed in float (as the ref kernel does, whatever softmax_precision says), cast back.
  const DataType t = ElementType(b.input(0));
  const DataType u = t == DataType::kFloat16 || t == DataType::kBFloat16 ? DataType::kFloat : t;
  const bool three_d = s.rank == 3;
  ir::Value* q = three_d ? Heads(b, b.input(0), s.q_heads) : b.input(0);
  ir::Value* k = three_d ? Heads(b, b.input(1), s.kv_heads) : b.input(1);
  ir::Value* v = three_d ? Heads(b, b.input(2), s.kv_heads) : b.input(2);
  if (b.input(4)) {
    k = b.Concat({b.input(4), k}, 2);
    v = b.Concat({b.input(5), v}, 2);
  }
  if (OutputUsed(n, 1)) b.SetOutput(1, k);
  if (OutputUsed(n, 2)) b.SetOutput(2, v);
  if (u != t) {
    q = b.Cast(q, u);
    k = b.Cast(k, u);
    v = b.Cast(v, u);
  }
  if (s.q_heads != s.kv_heads) {
    const int64_t group = s.q_heads / s.kv_heads;
    k = RepeatHeads(b, k, group, s.q_heads, s.head);
    v = RepeatHeads(b, v, group, s.q_heads, s.v_head);
  }
  const double scale = n.has_attr("scale") ? n.GetFloat("scale", 1.0f)
                                           : 1.0 / std::sqrt(static_cast<double>(s.head));
  ir::Value* s0 = b.Mul(b.Op("MatMul", {q, b.Transpose(k, {0, 1, 3, 2})}), b.Scalar(scale, u));
  ir::Value* s1 = s0;
  if (const float cap = n.GetFloat("softcap", 0.0f); cap > 0) {
    s1 = b.Mul(b.Op("Tanh", {b.Div(s0, b.Scalar(cap, u))}), b.Scalar(cap, u));
  }
  ir::Value* bias = nullptr;
  if (ir::Value* mask = b.input(3)) {
    if (ElementType(mask) == DataType::kBool) {
      bias = b.Op("Where", {mask, b.Scalar(0, u), b.Scalar(-kInf, u)}, {}, u);
    } else {
      bias = u != t ? b.Cast(mask, u) : mask;
    }
    if (s.mask_pad > 0) {
      std::vector<int64_t> pads(static_cast<size_t>(2 * RankOrMinusOne(mask)), 0);
      pads.back() = s.mask_pad;
      bias = b.Op("Pad", {bias, b.Int64s(pads), b.Scalar(-kInf, u)});
    }
  }
  ir::Value* lens = b.input(6) ? b.Reshape(b.input(6), {-1, 1, 1, 1}) : nullptr;  // [B, 1, 1, 1]
  auto add_bias = [&](ir::Value* c) { bias = bias ? b.Add(bias, c) : c; };
  // The bias of a bool tensor: 0 where true, -inf where false.
  auto where = [&](ir::Value* keep) { return b.Op("Where", {keep, b.Scalar(0, u), b.Scalar(-kInf, u)}, {}, u); };
  if (n.GetInt("is_causal", 0) != 0 && lens && !b.input(4)) {
    // The frontier per batch: key j is visible to query i when j <= i + nonpad[b] - Sq, i.e. j - i + Sq - 1 < len.
    std::vector<double> d(static_cast<size_t>(s.q_seq * s.total));
    for (int64_t i = 0; i < s.q_seq; ++i) {
      for (int64_t j = 0; j < s.total; ++j) d[static_cast<size_t>(i * s.total + j)] = double(j - i + s.q_seq - 1);
    }
    add_bias(where(b.Op("Less", {b.Constant(DataType::kInt64, {s.q_seq, s.total}, d), lens}, {}, DataType::kBool)));
  } else if (n.GetInt("is_causal", 0) != 0) {  // -inf where key j is past query i's frontier i + past
    std::vector<double> causal(static_cast<size_t>(s.q_seq * s.total), 0.0);
    for (int64_t i = 0; i < s.q_seq; ++i) {
      for (int64_t j = i + s.past + 1; j < s.total; ++j) causal[static_cast<size_t>(i * s.total + j)] = -kInf;
    }
    add_bias(b.Constant(u, {s.q_seq, s.total}, causal));
  }
  if (lens) {  // keys at or past nonpad_kv_seqlen[b] are padding
    std::vector<double> j(static_cast<size_t>(s.total));
    for (int64_t i = 0; i < s.total; ++i) j[static_cast<size_t>(i)] = static_cast<double>(i);
    add_bias(where(b.Op("Less", {b.Constant(DataType::kInt64, {s.total}, j), lens}, {}, DataType::kBool)));
  }
  ir::Value* s2 = bias ? b.Add(s1, bias) : s1;
  ir::Value* p = b.Softmax(s2, 4);
  if (b.input(3) || lens) {  // a row the mask (or the padding) hides entirely: p = 0, not the NaN of a softmax over -inf (function body)
    ir::Value* hidden = b.Op("Equal", {b.Reduce("ReduceMax", bias, {-1}), b.Scalar(-kInf, u)}, {}, DataType::kBool);
    p = b.Op("Where", {hidden, b.Scalar(0, u), p}, {}, u);
  }
  ir::Value* y = b.Op("MatMul", {p, v});
  if (u != t) y = b.Cast(y, t);
  b.SetOutput(0, three_d ? b.Reshape(b.Transpose(y, {0, 2, 1, 3}), {0, 0, -1}) : y);
  if (OutputUsed(n, 3)) {
    const int64_t mode = n.GetInt("qk_matmul_output_mode", 0);
    ir::Value* qk = mode == 0 ? s0 : mode == 1 ? s1 : mode == 2 ? s2 : p;
    b.SetOutput(3, u != t ? b.Cast(qk, t) : qk);
  }
}

// ---- ai.ferry::Attention ----

std::string RefuseFerry(const ir::Node& n, int64_t) {
  const DataType t = ElementType(n.input(0));
  if (!IsFloatType(t)) return "ai.ferry::Attention: Q's element type is unknown or not floating-point";
  const int64_t rq = RankOrMinusOne(n.input(0)), rk = RankOrMinusOne(n.input(1));
  if (rq < 2 || rk < 2) return "ai.ferry::Attention: the ranks of Q and K are unknown";
  return "";
}

void BuildFerry(Builder& b) {
  const ir::Node& n = b.node();
  const int64_t rq = RankOrMinusOne(b.input(0)), rk = RankOrMinusOne(b.input(1));
  ir::Value* k = b.input(1);
  if (n.GetInt("k_transposed", 0) == 0) {
    std::vector<int64_t> perm;
    for (int64_t i = 0; i < rk; ++i) perm.push_back(i);
    std::swap(perm[static_cast<size_t>(rk - 1)], perm[static_cast<size_t>(rk - 2)]);
    k = b.Transpose(k, perm);
  }
  ir::Value* s = b.Mul(b.Op("MatMul", {b.input(0), k}), b.Scalar(n.GetFloat("scale", 1.0f), ElementType(b.input(0))));
  if (b.input(3)) s = b.Add(s, b.input(3));
  b.SetOutput(0, b.Op("MatMul", {b.Softmax(s, std::max(rq, rk)), b.input(2)}));
}

}  // namespace

void AddAttentionDecompositions(std::vector<Decomposition>& list) {
  list.push_back({"", "Attention", 23, INT64_MAX,
                  "Attention -> Transpose, MatMul, Mul, Add, Softmax, MatMul (Reshape for 3-D, Concat for past, "
                  "Expand for grouped heads, Tanh for softcap, Where/ReduceMax/Equal for a mask)",
                  Refuse, Build});
  list.push_back({"ai.ferry", "Attention", 1, INT64_MAX,
                  "ai.ferry::Attention -> Transpose, MatMul, Mul, Add, Softmax, MatMul", RefuseFerry, BuildFerry});
}

}  // namespace ferry::legalize
