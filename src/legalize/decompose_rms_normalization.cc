// RMSNormalization (ai.onnx opset 23; ai.ferry::RMSNormalization for models of any opset) into Mul, ReduceMean,
// Add, Sqrt, Div, Mul over the dims [axis, rank). Identity: the op's definition, Y = X / sqrt(mean(X^2) + epsilon)
// * scale. Half-precision X is normalized in float (stash_type 1) and cast back before the scale. ONNX Runtime's
// SimplifiedLayerNormalization (default domain and com.microsoft) the same way, with its inv_std_var output
// 1 / sqrt(mean(X^2) + epsilon) (a Div of 1, cast to the type `stash_type` names, float or double, when read).
#include "legalize/decompose_util.h"

namespace ferry::legalize {
namespace {

// The checks of both ops, with the computation's stash_type `stash`.
std::string Check(const ir::Node& n, int64_t stash) {
  const ir::Value* x = n.input(0);
  const DataType t = ElementType(x);
  if (!IsFloatType(t)) return n.op_type() + ": X's element type is unknown or not floating-point";
  const int64_t rank = RankOrMinusOne(x);
  if (rank < 1) return n.op_type() + ": X's rank is unknown (the reduced axes are not known)";
  const int64_t axis = n.GetInt("axis", -1);
  if (axis < -rank || axis >= rank) return n.op_type() + ": axis " + std::to_string(axis) + " is out of range";
  if (StashType(t, stash) == DataType::kUndefined) {
    return n.op_type() + ": stash_type other than 1 (float) with a half-precision X";
  }
  if (ElementType(n.input(1)) != t) return n.op_type() + ": a scale of another element type than X";
  return "";
}

std::string Refuse(const ir::Node& n, int64_t) { return Check(n, n.GetInt("stash_type", 1)); }

// SimplifiedLayerNormalization: stash_type names inv_std_var's type (1 float, 11 double).
DataType InvStdVarType(const ir::Node& n) {
  const int64_t stash = n.GetInt("stash_type", 1);
  return stash == 1 ? DataType::kFloat : stash == 11 ? DataType::kDouble : DataType::kUndefined;
}

std::string RefuseSimplified(const ir::Node& n, int64_t) {
  if (InvStdVarType(n) == DataType::kUndefined) {
    return "SimplifiedLayerNormalization: stash_type " + std::to_string(n.GetInt("stash_type", 1)) +
           " is neither 1 (float) nor 11 (double)";
  }
  return Check(n, 1);
}

void Build(Builder& b) {
  const ir::Node& n = b.node();
  ir::Value* x = b.input(0);
  const bool simplified = n.op_type() == "SimplifiedLayerNormalization";
  const DataType t = ElementType(x), u = StashType(t, simplified ? 1 : n.GetInt("stash_type", 1));
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
  if (simplified && OutputUsed(n, 1)) {
    ir::Value* inv = b.Div(b.Scalar(1.0, u), rms);
    b.SetOutput(1, InvStdVarType(n) == u ? inv : b.Cast(inv, InvStdVarType(n)));
  }
}

}  // namespace

void AddRMSNormalizationDecompositions(std::vector<Decomposition>& list) {
  const char* ops = " -> Mul, ReduceMean, Add, Sqrt, Div, Mul";
  list.push_back(
      {"", "RMSNormalization", 23, INT64_MAX, std::string("RMSNormalization") + ops, Refuse, Build, true});
  list.push_back({"ai.ferry", "RMSNormalization", 1, INT64_MAX, std::string("ai.ferry::RMSNormalization") + ops,
                  Refuse, Build, true});
  // ONNX Runtime's SimplifiedLayerNormalization (norm group of the contrib ops), in both domains it is written in.
  list.push_back({"", "SimplifiedLayerNormalization", 1, INT64_MAX,
                  std::string("SimplifiedLayerNormalization (ONNX Runtime's)") + ops + ", Cast", RefuseSimplified,
                  Build, true});
  list.push_back({"com.microsoft", "SimplifiedLayerNormalization", 1, INT64_MAX,
                  std::string("com.microsoft::SimplifiedLayerNormalization") + ops + ", Cast", RefuseSimplified, Build,
                  true});
}

}  // namespace ferry::legalize
