// ai.ferry::SkipLayerNormalization (fuse_skip_layer_norm's op) into Add and the LayerNormalization primitives
// (ReduceMean, Sub, Mul, ReduceMean, Add, Sqrt, Div, Mul, Add). Identity: its definition (schemas_ferry.cc):
// S = X + Skip (Skip's dims are X's trailing dims: numpy broadcasting), Y = LayerNormalization(S, gamma, beta) over
// [axis, rank); Sum, when read, is S. gamma and beta hold the normalized dims' values in row-major order: used as
// they are when they have the normalized dims' rank (or one normalized dim), else refused.
#include "legalize/decompose_util.h"

namespace ferry::legalize {
namespace {

std::string Refuse(const ir::Node& n, int64_t) {
  const ir::Value* x = n.input(0);
  if (ElementType(x) != DataType::kFloat) return "SkipLayerNormalization: X's element type is unknown or not float";
  const int64_t rank = RankOrMinusOne(x);
  if (rank < 1) return "SkipLayerNormalization: X's rank is unknown";
  int64_t axis = n.GetInt("axis", -1);
  if (axis < -rank || axis >= rank) return "SkipLayerNormalization: axis " + std::to_string(axis) + " is out of range";
  if (axis < 0) axis += rank;
  for (size_t i : {2, 3}) {
    if (n.input(i) && rank - axis > 1 && RankOrMinusOne(n.input(i)) != rank - axis) {
      return "SkipLayerNormalization: gamma/beta flattened over several normalized dims";
    }
  }
  return "";
}

void Build(Builder& b) {
  const ir::Node& n = b.node();
  ir::Value* sum = b.Add(b.input(0), b.input(1));
  const int64_t rank = RankOrMinusOne(b.input(0));
  int64_t axis = n.GetInt("axis", -1);
  if (axis < 0) axis += rank;
  const LayerNormParts ln = BuildLayerNorm(b, sum, b.input(2), b.input(3), axis, rank, n.GetFloat("epsilon", 1e-5f),
                                           DataType::kFloat);
  b.SetOutput(0, ln.y);
  if (OutputUsed(n, 1)) b.SetOutput(1, sum);
}

}  // namespace

void AddSkipLayerNormalizationDecompositions(std::vector<Decomposition>& list) {
  list.push_back({"ai.ferry", "SkipLayerNormalization", 1, INT64_MAX,
                  "ai.ferry::SkipLayerNormalization -> Add, ReduceMean, Sub, Mul, ReduceMean, Add, Sqrt, Div, Mul, Add",
                  Refuse, Build, true});
}

}  // namespace ferry::legalize
