// LayerNormalization (ai.onnx opset 17; ai.ferry::LayerNormalization for models of any opset) into ReduceMean,
// Sub, Mul, ReduceMean, Add, Sqrt, Div, Mul, Add over the dims [axis, rank). Identity: the op's definition (its
// ONNX function body): Y = (X - mean) / sqrt(mean((X - mean)^2) + epsilon) * Scale + B; Mean is the mean and
// InvStdDev 1 / sqrt(var + epsilon) (a Div of 1, when read). Half-precision X is normalized in float (stash_type 1)
// and cast back before Scale and B, as the function body does. ONNX Runtime's LayerNormalization-1 (default
// domain, below 17) the same way, its statistics (float or double, `stash_type` 1 or 11) cast to their type where
// the computation's (X's, float for half precision) differs.
#include "legalize/decompose_util.h"

namespace ferry::legalize {

LayerNormParts BuildLayerNorm(Builder& b, ir::Value* x, ir::Value* scale, ir::Value* bias, int64_t axis, int64_t rank,
                              float epsilon, DataType stash) {
  const DataType t = ElementType(x);
  std::vector<int64_t> axes;
  for (int64_t d = axis; d < rank; ++d) axes.push_back(d);
  if (stash != t) x = b.Cast(x, stash);
  LayerNormParts p;
  p.mean = b.ReduceMean(x, axes);
  ir::Value* d = b.Sub(x, p.mean);
  ir::Value* var = b.ReduceMean(b.Mul(d, d), axes);
  p.stddev = b.Op("Sqrt", {b.Add(var, b.Scalar(epsilon, stash))});
  ir::Value* normalized = b.Div(d, p.stddev);
  if (stash != t) normalized = b.Cast(normalized, t);
  p.y = b.Mul(normalized, scale);
  if (bias) p.y = b.Add(p.y, bias);
  return p;
}

namespace {

// The checks of every version, with the computation's stash_type `stash`.
std::string Check(const ir::Node& n, int64_t stash) {
  const ir::Value* x = n.input(0);
  const DataType t = ElementType(x);
  if (!IsFloatType(t)) return "LayerNormalization: X's element type is unknown or not floating-point";
  const int64_t rank = RankOrMinusOne(x);
  if (rank < 1) return "LayerNormalization: X's rank is unknown (the reduced axes are not known)";
  const int64_t axis = n.GetInt("axis", -1);
  if (axis < -rank || axis >= rank) return "LayerNormalization: axis " + std::to_string(axis) + " is out of range";
  if (StashType(t, stash) == DataType::kUndefined) {
    return "LayerNormalization: stash_type other than 1 (float) with a half-precision X";
  }
  if (ElementType(n.input(1)) != t || (n.input(2) && ElementType(n.input(2)) != t)) {
    return "LayerNormalization: Scale and B of another element type than X";
  }
  return "";
}

std::string Refuse(const ir::Node& n, int64_t) { return Check(n, n.GetInt("stash_type", 1)); }

void Build(Builder& b) {
  const ir::Node& n = b.node();
  ir::Value* x = b.input(0);
  const int64_t rank = RankOrMinusOne(x);
  int64_t axis = n.GetInt("axis", -1);
  if (axis < 0) axis += rank;
  const DataType u = StashType(ElementType(x), n.GetInt("stash_type", 1));
  const LayerNormParts ln = BuildLayerNorm(b, x, b.input(1), b.input(2), axis, rank, n.GetFloat("epsilon", 1e-5f), u);
  b.SetOutput(0, ln.y);
  if (OutputUsed(n, 1)) b.SetOutput(1, ln.mean);
  if (OutputUsed(n, 2)) b.SetOutput(2, b.Div(b.Scalar(1.0, u), ln.stddev));
}

// ONNX Runtime's version 1: stash_type names the statistics' type (1 float, 11 double), not the computation's.
DataType OrtStatsType(const ir::Node& n) {
  const int64_t stash = n.GetInt("stash_type", 1);
  return stash == 1 ? DataType::kFloat : stash == 11 ? DataType::kDouble : DataType::kUndefined;
}

std::string RefuseOrt(const ir::Node& n, int64_t) {
  if (OrtStatsType(n) == DataType::kUndefined) {
    return "LayerNormalization-1: stash_type " + std::to_string(n.GetInt("stash_type", 1)) +
           " is neither 1 (float) nor 11 (double)";
  }
  return Check(n, 1);
}

void BuildOrt(Builder& b) {
  const ir::Node& n = b.node();
  ir::Value* x = b.input(0);
  const int64_t rank = RankOrMinusOne(x);
  int64_t axis = n.GetInt("axis", -1);
  if (axis < 0) axis += rank;
  const DataType u = StashType(ElementType(x), 1), stats = OrtStatsType(n);
  const LayerNormParts ln = BuildLayerNorm(b, x, b.input(1), b.input(2), axis, rank, n.GetFloat("epsilon", 1e-5f), u);
  const auto as_stats = [&](ir::Value* v) { return stats == u ? v : b.Cast(v, stats); };
  b.SetOutput(0, ln.y);
  if (OutputUsed(n, 1)) b.SetOutput(1, as_stats(ln.mean));
  if (OutputUsed(n, 2)) b.SetOutput(2, as_stats(b.Div(b.Scalar(1.0, u), ln.stddev)));
}

}  // namespace

void AddLayerNormalizationDecompositions(std::vector<Decomposition>& list) {
  const char* ops = " -> ReduceMean, Sub, Mul, ReduceMean, Add, Sqrt, Div, Mul, Add";
  list.push_back(
      {"", "LayerNormalization", 17, INT64_MAX, std::string("LayerNormalization") + ops, Refuse, Build, true});
  list.push_back({"ai.ferry", "LayerNormalization", 1, INT64_MAX, std::string("ai.ferry::LayerNormalization") + ops,
                  Refuse, Build, true});
  // ONNX Runtime's LayerNormalization-1 in the default domain (norm group of the contrib ops).
  list.push_back({"", "LayerNormalization", 1, 16,
                  std::string("LayerNormalization (ONNX Runtime's version 1)") + ops + ", Cast", RefuseOrt, BuildOrt,
                  true});
}

}  // namespace ferry::legalize
