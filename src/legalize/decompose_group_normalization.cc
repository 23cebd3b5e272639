// GroupNormalization (opsets 18 and 21) into Reshape, ReduceMean, Sub, Mul, ReduceMean, Add, Sqrt, Div, Reshape,
// Mul, Add. Identity: the op's definition: X [N, C, D...] viewed as [N, G, C/G * prod(D)] is normalized per row
// (population variance), viewed back, then scaled and shifted: per group at opset 18 (scale, bias [G], applied on
// the [N, G, -1] view), per channel from opset 21 (scale, bias [C], reshaped to [C, 1, ...]). Half-precision X is
// normalized in float (stash_type 1) and cast back before the scale.
#include "legalize/decompose_util.h"

namespace ferry::legalize {
namespace {

std::string Refuse(const ir::Node& n, int64_t) {
  const ir::Value* x = n.input(0);
  const DataType t = ElementType(x);
  if (!IsFloatType(t)) return "GroupNormalization: X's element type is unknown or not floating-point";
  const int64_t rank = RankOrMinusOne(x);
  if (rank < 2) return "GroupNormalization: X's rank is unknown or below 2";
  const ir::Attribute* groups = n.attr("num_groups");
  if (!groups || groups->type != ir::AttrType::kInt || groups->i <= 0) {
    return "GroupNormalization: num_groups is missing or not positive";
  }
  const int64_t c = DimOrMinusOne(x, 1);
  if (c >= 0 && c % groups->i != 0) {
    return "GroupNormalization: C = " + std::to_string(c) + " is not divisible by num_groups = " +
           std::to_string(groups->i);
  }
  if (StashType(t, n.GetInt("stash_type", 1)) == DataType::kUndefined) {
    return "GroupNormalization: stash_type other than 1 (float) with a half-precision X";
  }
  if (ElementType(n.input(1)) != t || ElementType(n.input(2)) != t) {
    return "GroupNormalization: scale and bias of another element type than X";
  }
  return "";
}

void Build(Builder& b) {
  const ir::Node& n = b.node();
  ir::Value* x = b.input(0);
  const DataType t = ElementType(x), u = StashType(t, n.GetInt("stash_type", 1));
  const int64_t rank = RankOrMinusOne(x), groups = n.GetInt("num_groups", 1);
  if (u != t) x = b.Cast(x, u);
  ir::Value* rows = b.Reshape(x, {0, groups, -1});
  ir::Value* mean = b.ReduceMean(rows, {2});
  ir::Value* d = b.Sub(rows, mean);
  ir::Value* var = b.ReduceMean(b.Mul(d, d), {2});
  ir::Value* normalized = b.Div(d, b.Op("Sqrt", {b.Add(var, b.Scalar(n.GetFloat("epsilon", 1e-5f), u))}));
  if (u != t) normalized = b.Cast(normalized, t);

  // X's shape for the view back: static dims where known, 0 (copy) for N, -1 for one unknown dim, else Shape(X).
  std::vector<int64_t> shape = {0};
  int unknown = 0;
  for (int64_t i = 1; i < rank; ++i) {
    const int64_t dim = DimOrMinusOne(b.input(0), i);
    unknown += dim < 0;
    shape.push_back(dim < 0 ? -1 : dim);
  }
  auto view_back = [&](ir::Value* v) {
    if (unknown <= 1) return b.Reshape(v, shape);
    return b.Op("Reshape", {v, b.Op("Shape", {b.input(0)}, {}, DataType::kInt64)});
  };
  ir::Value* y;
  if (n.opset() >= 21) {
    std::vector<int64_t> per_channel(static_cast<size_t>(rank - 1), 1);
    per_channel[0] = -1;
    y = b.Add(b.Mul(view_back(normalized), b.Reshape(b.input(1), per_channel)), b.Reshape(b.input(2), per_channel));
  } else {
    y = view_back(b.Add(b.Mul(normalized, b.Reshape(b.input(1), {-1, 1})), b.Reshape(b.input(2), {-1, 1})));
  }
  b.SetOutput(0, y);
}

}  // namespace

void AddGroupNormalizationDecompositions(std::vector<Decomposition>& list) {
  list.push_back({"", "GroupNormalization", 18, INT64_MAX,
                  "GroupNormalization -> Reshape, ReduceMean, Sub, Mul, ReduceMean, Add, Sqrt, Div, Reshape, Mul, Add",
                  Refuse, Build, true});
}

}  // namespace ferry::legalize
