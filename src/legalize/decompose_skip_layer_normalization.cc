// ai.ferry::SkipLayerNormalization (fuse_skip_layer_norm's op) into Add and the LayerNormalization primitives
// (ReduceMean, Sub, Mul, ReduceMean, Add, Sqrt, Div, Mul, Add). Identity: its definition (schemas_ferry.cc):
// S = X + Skip (Skip's dims are X's trailing dims: numpy broadcasting), Y = LayerNormalization(S, gamma, beta) over
// [axis, rank); Sum, when read, is S. gamma and beta hold the normalized dims' values in row-major order: used as
// they are when they have the normalized dims' rank (or one normalized dim), else refused.
// ONNX Runtime's com.microsoft SkipLayerNormalization (input, skip, gamma, beta?, bias?) and
// SkipSimplifiedLayerNormalization (input, skip, gamma, bias?): S = input + skip (+ bias), then LayerNormalization
// (or RMS normalization: S / sqrt(mean(S^2) + epsilon) * gamma) over the last dim, epsilon default 1e-12; mean,
// inv_std_var (1 / sqrt(var + epsilon), float) and input_skip_bias_sum (S) when read. Half-precision inputs are
// normalized in float. The simplified op's mean output (always 0) is refused when read.
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

// ONNX Runtime's two: inputs 3 and 4 are beta and bias (SkipLayerNormalization) or bias (simplified: input 3).
bool Simplified(const ir::Node& n) { return n.op_type() == "SkipSimplifiedLayerNormalization"; }

std::string RefuseOrt(const ir::Node& n, int64_t) {
  const ir::Value* x = n.input(0);
  const DataType t = ElementType(x);
  if (t != DataType::kFloat && t != DataType::kFloat16 && t != DataType::kBFloat16) {
    return n.op_type() + ": input's element type is unknown or not float, float16 or bfloat16";
  }
  if (RankOrMinusOne(x) < 1) return n.op_type() + ": input's rank is unknown";
  for (size_t i = 2; i < n.num_inputs(); ++i) {
    if (n.input(i) && RankOrMinusOne(n.input(i)) != 1) return n.op_type() + ": gamma, beta or bias is not 1-D";
  }
  if (Simplified(n) && OutputUsed(n, 1)) return n.op_type() + ": its mean output (always 0) is read";
  return "";
}

void BuildOrt(Builder& b) {
  const ir::Node& n = b.node();
  const bool simplified = Simplified(n);
  ir::Value* bias = b.input(simplified ? 3 : 4);
  ir::Value* sum = b.Add(b.input(0), b.input(1));
  if (bias) sum = b.Add(sum, bias);
  const int64_t rank = RankOrMinusOne(b.input(0));
  const float epsilon = n.GetFloat("epsilon", 1e-12f);
  const DataType t = ElementType(b.input(0)), u = StashType(t, 1);
  ir::Value* inv = nullptr;
  if (simplified) {
    ir::Value* s = u == t ? sum : b.Cast(sum, u);
    ir::Value* rms = b.Op("Sqrt", {b.Add(b.ReduceMean(b.Mul(s, s), {rank - 1}), b.Scalar(epsilon, u))});
    ir::Value* normalized = b.Div(s, rms);
    if (u != t) normalized = b.Cast(normalized, t);
    b.SetOutput(0, b.Mul(normalized, b.input(2)));
    if (OutputUsed(n, 2)) inv = b.Div(b.Scalar(1.0, u), rms);
  } else {
    const LayerNormParts ln = BuildLayerNorm(b, sum, b.input(2), b.input(3), rank - 1, rank, epsilon, u);
    b.SetOutput(0, ln.y);
    if (OutputUsed(n, 1)) b.SetOutput(1, ln.mean);
    if (OutputUsed(n, 2)) inv = b.Div(b.Scalar(1.0, u), ln.stddev);
  }
  if (inv) b.SetOutput(2, inv);  // u is float: the statistics' type
  if (OutputUsed(n, 3)) b.SetOutput(3, sum);
}

}  // namespace

void AddSkipLayerNormalizationDecompositions(std::vector<Decomposition>& list) {
  list.push_back({"ai.ferry", "SkipLayerNormalization", 1, INT64_MAX,
                  "ai.ferry::SkipLayerNormalization -> Add, ReduceMean, Sub, Mul, ReduceMean, Add, Sqrt, Div, Mul, Add",
                  Refuse, Build, true});
  // ONNX Runtime's (norm group of the contrib ops).
  list.push_back(
      {"com.microsoft", "SkipLayerNormalization", 1, INT64_MAX,
       "com.microsoft::SkipLayerNormalization -> Add, Add, ReduceMean, Sub, Mul, ReduceMean, Add, Sqrt, Div, "
       "Mul, Add",
       RefuseOrt, BuildOrt, true});
  list.push_back({"com.microsoft", "SkipSimplifiedLayerNormalization", 1, INT64_MAX,
                  "com.microsoft::SkipSimplifiedLayerNormalization -> Add, Add, Mul, ReduceMean, Add, Sqrt, Div, Mul",
                  RefuseOrt, BuildOrt, true});
}

}  // namespace ferry::legalize
