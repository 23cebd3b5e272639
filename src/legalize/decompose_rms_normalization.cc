// RMSNormalization (ai.onnx opset 23; ai.ferry::RMSNormalization for models of any opset) into Mul, ReduceMean,
// Add, Sqrt, Div, Mul over the dims [axis, rank). Identity: the op's definition, Y = X / sqrt(mean(X^2) + epsilon)
// * scale. Half-precision X is normalized in float (stash_type 1) and cast back before the scale.
#include "legalize/decompose_util.h"

namespace ferry::legalize {
namespace {

std::string Refuse(const ir::Node& n, int64_t) {
  const ir::Value* x = n.input(0);
  const DataType t = ElementType(x);
  if (!IsFloatType(t)) return "RMSNormalization: X's element type is unknown or not floating-point";
  const int64_t rank = RankOrMinusOne(x);
  if (rank < 1) return "RMSNormalization: X's rank is unknown (the reduced axes are not known)";
  const int64_t axis = n.GetInt("axis", -1);
  if (axis < -rank || axis >= rank) return "RMSNormalization: axis " + std::to_string(axis) + " is out of range";
  if (StashType(t, n.GetInt("stash_type", 1)) == DataType::kUndefined) {
    return "RMSNormalization: stash_type other than 1 (float) with a half-precision X";
  }
  if (ElementType(n.input(1)) != t) return "RMSNormalization: a scale of another element type than X";
  return "";
}

void Build(Builder& b) {
  const ir::Node& n = b.node();
  ir::Value* x = b.input(0);
  const DataType t = ElementType(x), u = StashType(t, n.GetInt("stash_type", 1));
  const int64_t rank = RankOrMinusOne(x);
  int64_t axis = n.GetInt("axis", -1);
  if (axis < 0) axis += rank;
  std::vector<int64_t> axes;
  for (int64_t d = axis; d < rank; ++d) axes.push_back(d);
  if (u != t) x = b.Cast(x, u);
  ir::Value* ms = b.ReduceMean(b.Mul(x, x), axes);
  ir::Value* rms = b.Op("Sqrt", {b.Add(ms, b.Scalar(n.GetFloat("epsilon", 1e-5f), u))});
  ir::Value* normalized = b.Div(x, rms);
  if (u != t) normalized = b.Cast(normalized, t);
  b.SetOutput(0, b.Mul(normalized, b.input(1)));
}

}  // namespace

void AddRMSNormalizationDecompositions(std::vector<Decomposition>& list) {
  const char* ops = " -> Mul, ReduceMean, Add, Sqrt, Div, Mul";
  list.push_back(
      {"", "RMSNormalization", 23, INT64_MAX, std::string("RMSNormalization") + ops, Refuse, Build, true});
  list.push_back({"ai.ferry", "RMSNormalization", 1, INT64_MAX, std::string("ai.ferry::RMSNormalization") + ops,
                  Refuse, Build, true});
}

}  // namespace ferry::legalize
