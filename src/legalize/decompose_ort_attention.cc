// com.microsoft Attention and MultiHeadAttention (ONNX Runtime's contrib ops; the semantics are the ref kernel's,
// src/kernels/ref/ort_attention.cc, which follows ONNX Runtime's CPU kernels) into MatMul, Add, Slice, Reshape,
// Transpose, Mul, Softmax and MatMul, with Gather/Concat/Unsqueeze for a past and present, Less/Greater/And/Not/Where
// for the mask, a constant for the causal rule and Cast for half precision. Identity: the ops' definition:
//   Attention: [Q K V] = input · weights + bias, split at qkv_hidden_sizes (three equal thirds by default);
//   MultiHeadAttention: Q = query + bias[0, D), K = key + bias[D, 2D), V = value + bias[2D, ..) (key and value
//   [B, N, L, H] are used as they are);
// each [B, S, N H] viewed as [B, N, S, H] heads; the past keys and values come first (T = P + L); scores = scale Q Kᵀ
// + (attention_bias + mask) with scale = the attribute, or 1 / sqrt(H) when absent or 0; output = softmax(scores) V,
// back to [B, S, N Hv]. The mask adds 0 for a visible key and mask_filter_value (default -10000) for a masked one:
// [B] key lengths (the first B values of [3B + 2] likewise; keys j >= mask[b] masked), Attention's [2B] end then
// start positions (j >= end or j < start masked), [B, T] and [B, S, T] with 0 for masked ([B, 1] / [1, 1] on
// Attention: no mask). unidirectional with S > 1 puts float's lowest value in place of the mask where key j > P + i
// for the query rows i < S - 1 (ONNX Runtime leaves the last row alone). MultiHeadAttention's qk output is the
// scores with the biases added, before the softmax. Half precision is computed in float with Q, K, V (and present)
// rounded to the input type, as the ref kernel does.
//
// Static shapes: Attention needs weights' dim 1 (or qkv_hidden_sizes) and MultiHeadAttention query's hidden size
// (the head size, the bias offsets); a mask needs B, S, P and L and its own shape (its form, the key positions);
// unidirectional needs S and P. Other dims may be symbolic. One difference from the kernels: a negative key length
// masks every key here, where the kernels raise an error. Refused: what the ref kernel refuses (do_rotary,
// past_present_share_buffer, past_sequence_length, a 4-D mask, packed QKV / KV, cache_indirection, a past with
// [B, N, L, H] key and value), a bad geometry, and shapes the rule needs but cannot see.
#include <cmath>
#include <limits>
#include <string>
#include <vector>

#include "legalize/decompose_util.h"

namespace ferry::legalize {
namespace {

enum class Mask { kNone, kLengths, kLengthsPrefix, kEndStart, kPadding, kRows };

// What the rule reads of a node, once by Refuse and again by Build; `error` says why it refuses (one line).
struct Geometry {
  std::string error;
  bool mha = false;
  DataType t = DataType::kUndefined;
  int64_t B = -1, S = -1, L = -1, P = 0, T = -1, N = 0, H = -1;
  int64_t dq = -1, dk = -1, dv = -1;  // Attention's projection widths
  int64_t D = -1;                     // MultiHeadAttention's query hidden size
  bool kv_bnsh = false, has_past = false;
  Mask mask = Mask::kNone;
  bool causal = false;
  float scale = 1.0f, filter = -10000.0f;
};

bool IsAttentionType(DataType t) {
  return t == DataType::kFloat || t == DataType::kFloat16 || t == DataType::kBFloat16;
}

// The mask's form against B, S and T (`attention`: Attention's mask_index, else MultiHeadAttention's
// key_padding_mask); sets g.error when it cannot tell or the form is not one the ops define.
void ReadMask(const ir::Node& n, size_t i, bool attention, Geometry& g) {
  const ir::Value* m = i < n.num_inputs() ? n.input(i) : nullptr;
  if (!m) return;
  const std::string what = n.op_type() + ": " + (attention ? "mask_index" : "key_padding_mask");
  if (ElementType(m) != DataType::kInt32) {
    g.error = what + "'s element type is not int32";
    return;
  }
  const std::optional<Shape> d = ir::KnownStaticShape(m);
  if (attention && RankOrMinusOne(m) == 4) {
    g.error = what + ": a 4-D (Megatron) mask is not implemented (ONNX Runtime's CPU kernel refuses it too)";
    return;
  }
  if (!d || g.B < 0 || g.S < 0 || g.T < 0) {
    g.error = what + " needs static shapes (the mask's, batch, sequence, past and key lengths)";
    return;
  }
  const int64_t B = g.B, S = g.S, T = g.T;
  if (d->size() == 1 && (*d)[0] == B) {
    g.mask = Mask::kLengths;
  } else if (d->size() == 1 && (*d)[0] == 3 * B + 2) {
    g.mask = Mask::kLengthsPrefix;
  } else if (d->size() == 1 && attention && (*d)[0] == 2 * B) {
    g.mask = Mask::kEndStart;
  } else if (d->size() == 2 && (*d)[0] == B && (*d)[1] == T) {
    g.mask = Mask::kPadding;
  } else if (d->size() == 2 && attention && ((*d)[0] == B || (*d)[0] == 1) && (*d)[1] == 1) {
    g.mask = Mask::kNone;  // a dummy mask: the same value for every key
  } else if (d->size() == 3 && (*d)[0] == B && (*d)[1] == S && (*d)[2] == T) {
    g.mask = Mask::kRows;
  } else {
    g.error = what + " has shape " + ShapeToString(*d) + ", not [B]" + (attention ? ", [2B]" : "") +
              ", [3B + 2], [B, T] or [B, S, T] (B = " + std::to_string(B) + ", S = " + std::to_string(S) +
              ", T = " + std::to_string(T) + ")";
  }
}

// The checks both ops share once the geometry is read: attention_bias, the causal rule, the scale, the opset.
void Finish(const ir::Node& n, size_t ab_input, int64_t opset, Geometry& g) {
  if (!g.error.empty()) return;
  const std::string op = n.op_type();
  if (const ir::Value* ab = n.input(ab_input)) {
    if (ElementType(ab) != g.t) {
      g.error = op + ": attention_bias of another element type than the input";
      return;
    }
    if (RankOrMinusOne(ab) != 4) {
      g.error = op + ": attention_bias's rank is unknown or not 4";
      return;
    }
  }
  if (n.GetInt("unidirectional", 0) == 1) {
    if (g.S < 0 || g.P < 0) {
      g.error = op + ": unidirectional needs the sequence and past lengths known statically";
      return;
    }
    g.causal = g.S > 1;
  }
  if (g.H <= 0) {
    g.error = op + ": the head size is not known statically";
    return;
  }
  const float scale = n.GetFloat("scale", 0.0f);
  g.scale = scale == 0.0f ? 1.0f / std::sqrt(static_cast<float>(g.H)) : scale;
  g.filter = n.GetFloat("mask_filter_value", -10000.0f);
  if (g.t == DataType::kBFloat16 && opset < 13) {
    g.error = op + ": bfloat16 needs ai.onnx opset 13 (Cast)";
  } else if ((g.mask != Mask::kNone || g.causal) && opset < 9) {
    g.error = op + ": a mask needs ai.onnx opset 9 (Where, Less of int32)";
  }
}

Geometry ReadAttention(const ir::Node& n, int64_t opset) {
  Geometry g;
  const ir::Value *x = n.input(0), *w = n.input(1);
  g.t = ElementType(x);
  g.N = n.GetInt("num_heads", 0);
  auto fail = [&](const std::string& why) {
    g.error = "Attention: " + why;
    return g;
  };
  if (!IsAttentionType(g.t)) return fail("input's element type is unknown or not float, float16 or bfloat16");
  if (g.N <= 0) return fail("num_heads is not positive");
  if (n.GetInt("do_rotary", 0) != 0) return fail("do_rotary = 1 is not implemented");
  if (n.GetInt("past_present_share_buffer", 0) != 0) return fail("past_present_share_buffer = 1 is not implemented");
  if (n.num_inputs() > 6 && n.input(6)) return fail("input past_sequence_length is not implemented");
  if (ElementType(w) != g.t || (n.input(2) && ElementType(n.input(2)) != g.t)) {
    return fail("weights or bias of another element type than the input");
  }
  if (RankOrMinusOne(x) != 3) return fail("input's rank is unknown or not 3");
  if (RankOrMinusOne(w) != 2) return fail("weights' rank is unknown or not 2");
  const int64_t width = DimOrMinusOne(w, 1);
  const std::vector<int64_t> sizes = n.GetInts("qkv_hidden_sizes");
  if (!sizes.empty()) {
    if (sizes.size() != 3 || sizes[0] != sizes[1]) return fail("qkv_hidden_sizes is not 3 values with Q's = K's");
    for (int64_t s : sizes) {
      if (s <= 0 || s % g.N != 0) return fail("qkv_hidden_sizes are not positive multiples of num_heads");
    }
    if (width >= 0 && sizes[0] + sizes[1] + sizes[2] != width)
      return fail("qkv_hidden_sizes do not sum to weights' dim 1");
    g.dq = sizes[0], g.dk = sizes[1], g.dv = sizes[2];
  } else {
    if (width < 0) return fail("weights' dim 1 is not static (and no qkv_hidden_sizes)");
    if (width % 3 != 0 || (width / 3) % g.N != 0) return fail("weights' dim 1 is not 3 x a multiple of num_heads");
    g.dq = g.dk = g.dv = width / 3;
  }
  g.H = g.dq / g.N;
  g.B = DimOrMinusOne(x, 0), g.S = DimOrMinusOne(x, 1), g.L = g.S;
  if (const ir::Value* past = n.input(4)) {
    if (ElementType(past) != g.t) return fail("past of another element type than the input");
    if (RankOrMinusOne(past) != 5) return fail("past's rank is unknown or not 5");
    if (g.dk != g.dv) return fail("a past needs K and V of one hidden size");
    g.has_past = true;
    g.P = DimOrMinusOne(past, 3);
  }
  if (OutputUsed(n, 1) && g.dk != g.dv) return fail("output present needs K and V of one hidden size");
  g.T = g.P >= 0 && g.L >= 0 ? g.P + g.L : -1;
  ReadMask(n, 3, true, g);
  Finish(n, 5, opset, g);
  return g;
}

Geometry ReadMultiHeadAttention(const ir::Node& n, int64_t opset) {
  Geometry g;
  g.mha = true;
  const ir::Value *q = n.input(0), *k = n.input(1), *v = n.input(2);
  g.t = ElementType(q);
  g.N = n.GetInt("num_heads", 0);
  auto fail = [&](const std::string& why) {
    g.error = "MultiHeadAttention: " + why;
    return g;
  };
  if (!IsAttentionType(g.t)) return fail("query's element type is unknown or not float, float16 or bfloat16");
  if (g.N <= 0) return fail("num_heads is not positive");
  for (size_t i : {8, 9}) {
    if (i < n.num_inputs() && n.input(i)) {
      return fail(std::string("input ") + (i == 8 ? "past_sequence_length" : "cache_indirection") +
                  " is not implemented");
    }
  }
  if (RankOrMinusOne(q) == 5) return fail("packed QKV (a 5-D query) is not implemented");
  if (RankOrMinusOne(q) != 3) return fail("query's rank is unknown or not 3");
  if (!k) return fail("key is absent (packed QKV in query is not implemented)");
  if (!v) {
    return fail(RankOrMinusOne(k) == 5 ? "packed KV (a 5-D key) is not implemented"
                                       : "value is absent and key is not packed KV");
  }
  if (ElementType(k) != g.t || ElementType(v) != g.t) return fail("key or value of another element type than query");
  g.D = DimOrMinusOne(q, 2);
  if (g.D < 0) return fail("query's hidden size is not static");
  if (g.D % g.N != 0) return fail("query's hidden size is not a multiple of num_heads");
  g.H = g.D / g.N;
  g.B = DimOrMinusOne(q, 0), g.S = DimOrMinusOne(q, 1);
  const int64_t rk = RankOrMinusOne(k), rv = RankOrMinusOne(v);
  if (rk == 3 && rv == 3) {
    g.L = DimOrMinusOne(k, 1);
  } else if (rk == 4 && rv == 4) {
    g.kv_bnsh = true;
    g.L = DimOrMinusOne(k, 2);
  } else {
    return fail("key and value are not both 3-D [B, L, D] or both 4-D [B, N, L, H]");
  }
  if (n.input(3) && ElementType(n.input(3)) != g.t) return fail("bias of another element type than query");
  const ir::Value *pk = n.input(6), *pv = n.input(7);
  if ((pk == nullptr) != (pv == nullptr)) return fail("past_key and past_value must be both present or both absent");
  if (pk) {
    if (g.kv_bnsh) return fail("a past with [B, N, L, H] key and value is not implemented");
    if (ElementType(pk) != g.t || ElementType(pv) != g.t) return fail("a past of another element type than query");
    if (RankOrMinusOne(pk) != 4 || RankOrMinusOne(pv) != 4) return fail("past_key / past_value are not 4-D");
    g.has_past = true;
    g.P = DimOrMinusOne(pk, 2);
  }
  g.T = g.P >= 0 && g.L >= 0 ? g.P + g.L : -1;
  if (OutputUsed(n, 3)) {
    const DataType qk = ir::DeclaredElementType(n.output(3));
    if (qk != DataType::kUndefined && !IsAttentionType(qk)) return fail("output qk is not of a float type");
  }
  ReadMask(n, 4, false, g);
  Finish(n, 5, opset, g);
  return g;
}

std::string RefuseAttention(const ir::Node& n, int64_t opset) { return ReadAttention(n, opset).error; }
std::string RefuseMultiHeadAttention(const ir::Node& n, int64_t opset) {
  return ReadMultiHeadAttention(n, opset).error;
}

DataType ComputeType(DataType t) { return t == DataType::kFloat ? t : DataType::kFloat; }

// [B, S, N * dim] -> [B, N, S, dim].
ir::Value* Heads(Builder& b, ir::Value* x, int64_t heads) {
  return b.Transpose(b.Reshape(x, {0, 0, heads, -1}), {0, 2, 1, 3});
}

// keep ? 0 : mask_filter_value, in type u.
ir::Value* Filter(Builder& b, ir::Value* keep, const Geometry& g, DataType u) {
  return b.Op("Where", {keep, b.Scalar(0, u), b.Scalar(g.filter, u)}, {}, u);
}

// The additive mask [B, 1, 1 or S, T] of type u with the causal rule folded in, or nullptr when there is none.
ir::Value* BuildMask(Builder& b, ir::Value* m, const Geometry& g, DataType u) {
  constexpr DataType kI32 = DataType::kInt32, kBool = DataType::kBool;
  ir::Value* bias = nullptr;
  if (m && g.mask != Mask::kNone) {
    std::vector<double> positions;
    for (int64_t j = 0; j < g.T; ++j) positions.push_back(static_cast<double>(j));
    ir::Value* pos = g.mask == Mask::kLengths || g.mask == Mask::kLengthsPrefix || g.mask == Mask::kEndStart
                         ? b.Constant(kI32, {g.T}, positions)
                         : nullptr;
    auto below = [&](int64_t from) {  // key j < mask[from + b], [B, 1, 1, T]
      ir::Value* part = g.mask == Mask::kLengths ? m : b.Slice(m, from, from + g.B, 0);
      return b.Op("Less", {pos, b.Reshape(part, {-1, 1, 1, 1})}, {}, kBool);
    };
    switch (g.mask) {
      case Mask::kLengths:
      case Mask::kLengthsPrefix: bias = Filter(b, below(0), g, u); break;
      case Mask::kEndStart:
        bias = Filter(b, b.Op("And", {below(0), b.Op("Not", {below(g.B)})}, {}, kBool), g, u);
        break;
      case Mask::kPadding:
      case Mask::kRows: {
        ir::Value* keep = b.Op("Greater", {m, b.Scalar(0, kI32)}, {}, kBool);
        bias = b.Unsqueeze(Filter(b, keep, g, u),
                           g.mask == Mask::kPadding ? std::vector<int64_t>{1, 2} : std::vector<int64_t>{1});
        break;
      }
      case Mask::kNone: break;
    }
  }
  if (!g.causal) return bias;
  // Query row i < S - 1 does not see key j > P + i (ONNX Runtime's loop leaves the last row alone).
  const double lowest = std::numeric_limits<float>::lowest();
  std::vector<double> hidden(static_cast<size_t>(g.S * g.T), 0.0), add(hidden.size(), 0.0);
  for (int64_t i = 0; i + 1 < g.S; ++i) {
    for (int64_t j = g.P + i + 1; j < g.T; ++j) {
      hidden[static_cast<size_t>(i * g.T + j)] = 1.0;
      add[static_cast<size_t>(i * g.T + j)] = lowest;
    }
  }
  if (!bias) return b.Constant(u, {g.S, g.T}, add);
  return b.Op("Where", {b.Constant(kBool, {g.S, g.T}, hidden), b.Scalar(lowest, u), bias}, {}, u);
}

// The attention of q [B, N, S, H], k [B, N, T, H] and v [B, N, T, Hv] (of the input type): output 0, and
// MultiHeadAttention's qk (output 3) when read.
void BuildCore(Builder& b, const Geometry& g, ir::Value* q, ir::Value* k, ir::Value* v, ir::Value* mask,
               ir::Value* attention_bias) {
  const ir::Node& n = b.node();
  const DataType t = g.t, u = ComputeType(t);
  if (u != t) {
    q = b.Cast(q, u);
    k = b.Cast(k, u);
    v = b.Cast(v, u);
  }
  ir::Value* scores = b.Mul(b.Op("MatMul", {q, b.Transpose(k, {0, 1, 3, 2})}), b.Scalar(g.scale, u));
  ir::Value* ab = attention_bias && u != t ? b.Cast(attention_bias, u) : attention_bias;
  ir::Value* m = BuildMask(b, mask, g, u);
  ir::Value* add = ab && m ? b.Add(ab, m) : ab ? ab : m;
  if (add) scores = b.Add(scores, add);
  if (g.mha && OutputUsed(n, 3)) {
    const DataType declared = ir::DeclaredElementType(n.output(3));
    const DataType qk = declared == DataType::kUndefined ? t : declared;
    b.SetOutput(3, qk != u ? b.Cast(scores, qk) : scores);
  }
  ir::Value* y = b.Op("MatMul", {b.Softmax(scores, 4), v});
  y = b.Reshape(b.Transpose(y, {0, 2, 1, 3}), {0, 0, -1});
  b.SetOutput(0, u != t ? b.Cast(y, t) : y);
}

void BuildAttention(Builder& b) {
  const ir::Node& n = b.node();
  const Geometry g = ReadAttention(n, b.opset());
  const DataType t = g.t, u = ComputeType(t);
  ir::Value* x = b.input(0);
  ir::Value* w = b.input(1);
  ir::Value* bias = b.input(2);
  if (u != t) {
    x = b.Cast(x, u);
    w = b.Cast(w, u);
    if (bias) bias = b.Cast(bias, u);
  }
  ir::Value* proj = b.Op("MatMul", {x, w});
  if (bias) proj = b.Add(proj, bias);
  if (u != t) proj = b.Cast(proj, t);  // Q, K and V stored in the input type
  ir::Value* q = Heads(b, b.Slice(proj, 0, g.dq, 2), g.N);
  ir::Value* k = Heads(b, b.Slice(proj, g.dq, g.dq + g.dk, 2), g.N);
  ir::Value* v = Heads(b, b.Slice(proj, g.dq + g.dk, g.dq + g.dk + g.dv, 2), g.N);
  if (g.has_past) {  // past [2, B, N, P, H]: keys, then values
    k = b.Concat({b.Op("Gather", {b.input(4), b.Constant(DataType::kInt64, {}, {0})}, {IntAttr("axis", 0)}), k}, 2);
    v = b.Concat({b.Op("Gather", {b.input(4), b.Constant(DataType::kInt64, {}, {1})}, {IntAttr("axis", 0)}), v}, 2);
  }
  if (OutputUsed(n, 1)) b.SetOutput(1, b.Concat({b.Unsqueeze(k, {0}), b.Unsqueeze(v, {0})}, 0));
  BuildCore(b, g, q, k, v, b.input(3), b.input(5));
}

void BuildMultiHeadAttention(Builder& b) {
  const ir::Node& n = b.node();
  const Geometry g = ReadMultiHeadAttention(n, b.opset());
  ir::Value* bias = b.input(3);
  auto biased = [&](ir::Value* x, int64_t begin, int64_t end) {
    return bias ? b.Add(x, b.Slice(bias, begin, end, 0)) : x;
  };
  ir::Value* q = Heads(b, biased(b.input(0), 0, g.D), g.N);
  ir::Value* k = b.input(1);
  ir::Value* v = b.input(2);
  if (!g.kv_bnsh) {
    k = Heads(b, biased(k, g.D, 2 * g.D), g.N);
    v = Heads(b, biased(v, 2 * g.D, std::numeric_limits<int64_t>::max()), g.N);
  }
  if (g.has_past) {
    k = b.Concat({b.input(6), k}, 2);
    v = b.Concat({b.input(7), v}, 2);
  }
  if (OutputUsed(n, 1)) b.SetOutput(1, k);
  if (OutputUsed(n, 2)) b.SetOutput(2, v);
  BuildCore(b, g, q, k, v, b.input(4), b.input(5));
}

}  // namespace

void AddOrtAttentionDecompositions(std::vector<Decomposition>& list) {
  list.push_back({"com.microsoft", "Attention", 1, INT64_MAX,
                  "com.microsoft Attention -> MatMul, Add, Slice, Reshape, Transpose, MatMul, Mul, Softmax, MatMul "
                  "(Gather/Concat for past and present, Less/Greater/Where for the mask, a causal constant)",
                  RefuseAttention, BuildAttention});
  list.push_back({"com.microsoft", "MultiHeadAttention", 1, INT64_MAX,
                  "com.microsoft MultiHeadAttention -> Add, Slice, Reshape, Transpose, MatMul, Mul, Softmax, MatMul "
                  "(Concat for past and present, Less/Greater/Where for the mask, a causal constant)",
                  RefuseMultiHeadAttention, BuildMultiHeadAttention});
}

}  // namespace ferry::legalize
