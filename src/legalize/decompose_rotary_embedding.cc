// RotaryEmbedding (opset 23) into Gather (with position_ids), Unsqueeze, Slice, Mul, Sub, Add, Concat, and Reshape
// for a 3-D input or the interleaved layout. Identity: the op's definition: per head, the first rot features form
// pairs (k, k + rot/2), or (2k, 2k + 1) when interleaved, rotated by (cos, sin) of the position:
// (x1, x2) -> (cos x1 - sin x2, sin x1 + cos x2); features past rot are kept. The layout stays the input's:
// [B, H, S, D] (cos/sin unsqueezed at axis 1), or [B, S, H*D] viewed as [B, S, H, D] (cos/sin at axis 2).
#include <limits>

#include "legalize/decompose_util.h"

namespace ferry::legalize {
namespace {

// The head size D, or -1 when it is not known statically.
int64_t HeadSize(const ir::Node& n) {
  const ir::Value* x = n.input(0);
  if (RankOrMinusOne(x) == 4) return DimOrMinusOne(x, 3);
  const int64_t hidden = DimOrMinusOne(x, 2), heads = n.GetInt("num_heads", 0);
  return hidden >= 0 && heads > 0 && hidden % heads == 0 ? hidden / heads : -1;
}

std::string Refuse(const ir::Node& n, int64_t opset) {
  const ir::Value* x = n.input(0);
  if (!IsFloatType(ElementType(x))) return "RotaryEmbedding: X's element type is unknown or not floating-point";
  const int64_t rank = RankOrMinusOne(x);
  if (rank != 3 && rank != 4) return "RotaryEmbedding: X's rank is unknown or not 3 or 4";
  if (rank == 3 && n.GetInt("num_heads", 0) <= 0) return "RotaryEmbedding: a 3-D input needs num_heads";
  const int64_t d = HeadSize(n);
  if (d < 0) return "RotaryEmbedding: the head size is not known statically";
  const int64_t rot = n.GetInt("rotary_embedding_dim", 0) > 0 ? n.GetInt("rotary_embedding_dim", 0) : d;
  if (rot > d || rot % 2 != 0) {
    return "RotaryEmbedding: rotary_embedding_dim " + std::to_string(rot) + " is odd or exceeds the head size " +
           std::to_string(d);
  }
  if (ElementType(n.input(1)) != ElementType(x) || ElementType(n.input(2)) != ElementType(x)) {
    return "RotaryEmbedding: cos_cache / sin_cache of another element type than X";
  }
  for (size_t i : {1, 2}) {  // the rule would broadcast a cache the kernel rejects
    const int64_t last = DimOrMinusOne(n.input(i), -1);
    if (last >= 0 && last != rot / 2) {
      return "RotaryEmbedding: cos_cache / sin_cache have " + std::to_string(last) + " values per position, not " +
             std::to_string(rot / 2);
    }
  }
  if (opset < 13) return "RotaryEmbedding: needs ai.onnx opset 13 (Unsqueeze, Slice of int64 inputs)";
  return "";
}

void Build(Builder& b) {
  const ir::Node& n = b.node();
  const bool three_d = RankOrMinusOne(b.input(0)) == 3, interleaved = n.GetInt("interleaved", 0) != 0;
  const int64_t d = HeadSize(n);
  const int64_t rot = n.GetInt("rotary_embedding_dim", 0) > 0 ? n.GetInt("rotary_embedding_dim", 0) : d;
  const int64_t half = rot / 2;
  ir::Value* x = three_d ? b.Reshape(b.input(0), {0, 0, n.GetInt("num_heads", 0), d}) : b.input(0);
  ir::Value* cos = b.input(1);
  ir::Value* sin = b.input(2);
  if (ir::Value* pos = b.input(3)) {  // [max_pos, half] indexed by [B, S] -> [B, S, half]
    cos = b.Op("Gather", {cos, pos}, {IntAttr("axis", 0)});
    sin = b.Op("Gather", {sin, pos}, {IntAttr("axis", 0)});
  }
  const int64_t head_axis = three_d ? 2 : 1;
  cos = b.Unsqueeze(cos, {head_axis});
  sin = b.Unsqueeze(sin, {head_axis});
  ir::Value* part = rot < d ? b.Slice(x, 0, rot, 3) : x;
  ir::Value* rotated;
  if (interleaved) {  // [.., rot] viewed as [.., half, 2]: x1 = [..., 0], x2 = [..., 1]
    ir::Value* pairs = b.Reshape(part, {0, 0, 0, half, 2});
    ir::Value* x1 = b.Slice(pairs, 0, 1, 4);
    ir::Value* x2 = b.Slice(pairs, 1, 2, 4);
    cos = b.Unsqueeze(cos, {4});
    sin = b.Unsqueeze(sin, {4});
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

void AddRotaryEmbeddingDecompositions(std::vector<Decomposition>& list) {
  list.push_back({"", "RotaryEmbedding", 23, INT64_MAX,
                  "RotaryEmbedding -> Gather, Unsqueeze, Slice, Mul, Sub, Add, Concat (Reshape for 3-D or interleaved)",
                  Refuse, Build, true});
}

}  // namespace ferry::legalize
