// com.microsoft RotaryEmbedding (ONNX Runtime's contrib op; the semantics are ref's, src/kernels/ref/
// rotary_embedding.cc) into Gather, Unsqueeze, Slice, Mul, Sub, Add, Concat and Reshape. Identity: the op's definition:
// the cache rows of the positions (Gather of position_ids [B, S], or of start + [0, S) for a single start position)
// rotate, per head, the pairs (k, k + rot/2), or (2k, 2k + 1) when interleaved: (x1, x2) -> (cos x1 - sin x2, sin x1 +
// cos x2); features past rot are kept. The layout stays the input's: [B, N, S, D], or [B, S, N*D] viewed as
// [B, S, N, D]. Needs the head size, the rotary dims and (for a start position) S known statically, and caches of
// exactly rot/2 values per position (ONNX Runtime's reading of head_size / 2 wide caches is not a Gather).
#include <limits>

#include "legalize/decompose_util.h"

namespace ferry::legalize {
namespace {

struct Geometry {
  int64_t rank = -1, heads = -1, head = -1, rot = -1, seq = -1;
  bool start = false;  // position_ids is one start position
};

// ONNX Runtime's rules (rotary_embedding_helper.h) over static dims; -1 where a dim is unknown.
Geometry Resolve(const ir::Node& n) {
  Geometry g;
  const ir::Value* x = n.input(0);
  g.rank = RankOrMinusOne(x);
  const int64_t rd = n.GetInt("rotary_embedding_dim", 0), nh = n.GetInt("num_heads", 0);
  const int64_t hidden = g.rank == 4 ? (DimOrMinusOne(x, 1) < 0 || DimOrMinusOne(x, 3) < 0
                                            ? -1
                                            : DimOrMinusOne(x, 1) * DimOrMinusOne(x, 3))
                                     : DimOrMinusOne(x, 2);
  const int64_t c = DimOrMinusOne(n.input(2), 1);
  g.head = rd == 0 ? (c < 0 ? -1 : 2 * c) : (hidden < 0 || nh <= 0 ? -1 : hidden / nh);
  g.heads = nh > 0 ? nh : (hidden < 0 || g.head <= 0 ? -1 : hidden / g.head);
  g.rot = rd > 0 ? rd : g.head;
  g.seq = DimOrMinusOne(x, g.rank == 4 ? 2 : 1);
  g.start = RankOrMinusOne(n.input(1)) == 0 || (RankOrMinusOne(n.input(1)) == 1 && DimOrMinusOne(n.input(1), 0) == 1);
  return g;
}

std::string Refuse(const ir::Node& n, int64_t opset) {
  const ir::Value* x = n.input(0);
  if (!IsFloatType(ElementType(x))) return "RotaryEmbedding: input's element type is unknown or not floating-point";
  const Geometry g = Resolve(n);
  if (g.rank != 3 && g.rank != 4) return "RotaryEmbedding: input's rank is unknown or not 3 or 4";
  if (g.head <= 0 || g.heads <= 0) return "RotaryEmbedding: the head size is not known statically";
  if (g.rot > g.head || g.rot % 2 != 0) return "RotaryEmbedding: rotary_embedding_dim is odd or exceeds the head size";
  if (DimOrMinusOne(n.input(2), 1) != g.rot / 2 || DimOrMinusOne(n.input(3), 1) != g.rot / 2) {
    return "RotaryEmbedding: cos_cache / sin_cache do not hold exactly rotary_embedding_dim / 2 values per position";
  }
  if (ElementType(n.input(2)) != ElementType(x) || ElementType(n.input(3)) != ElementType(x)) {
    return "RotaryEmbedding: cos_cache / sin_cache of another element type than the input";
  }
  const int64_t pos_rank = RankOrMinusOne(n.input(1));
  if (!g.start && pos_rank != 2) return "RotaryEmbedding: position_ids' rank is unknown or not 0, 1 ([1]) or 2";
  if (g.start && g.seq < 0) return "RotaryEmbedding: a start position needs the sequence length known statically";
  if (opset < 13) return "RotaryEmbedding: needs ai.onnx opset 13 (Unsqueeze, Slice of int64 inputs)";
  return "";
}

void Build(Builder& b) {
  const ir::Node& n = b.node();
  const Geometry g = Resolve(n);
  const bool three_d = g.rank == 3, interleaved = n.GetInt("interleaved", 0) == 1;
  const int64_t d = g.head, rot = g.rot, half = rot / 2;
  ir::Value* x = three_d ? b.Reshape(b.input(0), {0, 0, g.heads, d}) : b.input(0);
  ir::Value* pos = b.input(1);
  if (g.start) {  // rows start + s
    std::vector<double> steps;
    for (int64_t s = 0; s < g.seq; ++s) steps.push_back(static_cast<double>(s));
    pos = b.Add(b.Reshape(pos, {1}), b.Constant(DataType::kInt64, {g.seq}, steps));
  }
  ir::Value* cos = b.Op("Gather", {b.input(2), pos}, {IntAttr("axis", 0)});  // [B, S, half] or [S, half]
  ir::Value* sin = b.Op("Gather", {b.input(3), pos}, {IntAttr("axis", 0)});
  if (three_d) {  // against [B, S, N, half]
    cos = b.Unsqueeze(cos, {g.start ? 1 : 2});
    sin = b.Unsqueeze(sin, {g.start ? 1 : 2});
  } else if (!g.start) {  // [B, S, half] against [B, N, S, half]
    cos = b.Unsqueeze(cos, {1});
    sin = b.Unsqueeze(sin, {1});
  }
  ir::Value* part = rot < d ? b.Slice(x, 0, rot, 3) : x;
  ir::Value* rotated;
  if (interleaved) {  // [.., rot] viewed as [.., half, 2]
    ir::Value* pairs = b.Reshape(part, {0, 0, 0, half, 2});
    ir::Value* x1 = b.Slice(pairs, 0, 1, 4);
    ir::Value* x2 = b.Slice(pairs, 1, 2, 4);
    cos = b.Unsqueeze(cos, {-1});
    sin = b.Unsqueeze(sin, {-1});
    ir::Value* real = b.Sub(b.Mul(cos, x1), b.Mul(sin, x2));
    ir::Value* imag = b.Add(b.Mul(sin, x1), b.Mul(cos, x2));
    rotated = b.Reshape(b.Concat({real, imag}, 4), {0, 0, 0, rot});
  } else {
    ir::Value* x1 = b.Slice(part, 0, half, 3);
    ir::Value* x2 = b.Slice(part, half, rot, 3);
    ir::Value* real = b.Sub(b.Mul(cos, x1), b.Mul(sin, x2));
    ir::Value* imag = b.Add(b.Mul(sin, x1), b.Mul(cos, x2));
    rotated = b.Concat({real, imag}, 3);
  }
  if (rot < d) rotated = b.Concat({rotated, b.Slice(x, rot, std::numeric_limits<int64_t>::max(), 3)}, 3);
  b.SetOutput(0, three_d ? b.Reshape(rotated, {0, 0, -1}) : rotated);
}

}  // namespace

void AddOrtRotaryEmbeddingDecompositions(std::vector<Decomposition>& list) {
  list.push_back({"com.microsoft", "RotaryEmbedding", 1, INT64_MAX,
                  "com.microsoft RotaryEmbedding -> Gather, Unsqueeze, Slice, Mul, Sub, Add, Concat (Reshape for 3-D "
                  "or interleaved)",
                  Refuse, Build, true});
}

}  // namespace ferry::legalize
