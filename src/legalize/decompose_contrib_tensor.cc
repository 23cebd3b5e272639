// ONNX Runtime's contrib tensor ops (com.microsoft, group "tensor") into ONNX primitives:
//   ExpandDims(X, axis)  -> Unsqueeze(X, [axis])           (a run-time axis: Cast to int64, Reshape to [1]; opset 13+)
//   Trilu(X, k?)         -> Trilu (opset 14+, the same op)
//   GridSample(X, Grid)  -> GridSample (opset 16+; from 20 the modes are named linear / cubic)
//   Range(s, l, delta?)  -> Range (opset 11+; an absent delta becomes the constant 1 of the type)
//   Unique(x)            -> Unique(x, sorted=0) (opset 11+): y = Y, idx = inverse_indices, counts = counts. One
//                           difference is the data's: ONNX's Unique gives all NaNs one entry, the contrib op one
//                           entry per NaN (ONNX Runtime's hash map).
//   CDist(A, B)          -> (-2 A B^T + ReduceSum(A * A, 1)) + ReduceSum(B * B, 1)^T, Relu, (euclidean) Sqrt:
//                           the product form ONNX Runtime's kernel computes, clamped at 0.
// Inverse and WordConvEmbedding have no expansion into primitives (no matrix inverse in ONNX; per-word lengths).
#include <string>

#include "ir/attribute.h"
#include "legalize/decomposition.h"

namespace ferry::legalize {
namespace {

std::string NeedOpset(const char* op, int64_t need, int64_t opset) {
  if (opset >= need) return "";
  return std::string("com.microsoft::") + op + ": the ONNX form needs ai.onnx opset " + std::to_string(need) +
         ", the model has " + std::to_string(opset);
}

// ---- ExpandDims ----

std::string RefuseExpandDims(const ir::Node& n, int64_t opset) {
  const std::optional<std::vector<int64_t>> axis = ir::ConstantInts(n.input(1));
  if (!axis) return NeedOpset("ExpandDims (an axis known only at run time)", 13, opset);
  if (axis->size() != 1) return "com.microsoft::ExpandDims: input 'axis' is not a scalar";
  if ((*axis)[0] < 0 && opset < 11) {
    const ir::Value* x = n.input(0);
    if (!x || !x->type().is_tensor() || !x->type().shape) {
      return "com.microsoft::ExpandDims: a negative axis needs ai.onnx opset 11 or X's rank";
    }
  }
  return NeedOpset("ExpandDims", 1, opset);
}

void BuildExpandDims(Builder& b) {
  ir::Value* x = b.input(0);
  const std::optional<std::vector<int64_t>> axis = ir::ConstantInts(b.input(1));
  if (!axis) {
    ir::Value* axes = b.Reshape(b.Cast(b.input(1), DataType::kInt64), {1});
    b.SetOutput(0, b.Op("Unsqueeze", {x, axes}));
    return;
  }
  int64_t a = (*axis)[0];
  if (a < 0 && b.opset() < 11) a += static_cast<int64_t>(x->type().shape->size()) + 1;
  b.SetOutput(0, b.Unsqueeze(x, {a}));
}

// ---- Trilu ----

std::string RefuseTrilu(const ir::Node&, int64_t opset) { return NeedOpset("Trilu", 14, opset); }

void BuildTrilu(Builder& b) {
  std::vector<ir::Value*> inputs = {b.input(0)};
  if (b.input(1)) inputs.push_back(b.input(1));
  b.SetOutput(0, b.Op("Trilu", inputs, {ir::IntAttr("upper", b.node().GetInt("upper", 1))}));
}

// ---- GridSample ----

std::string RefuseGridSample(const ir::Node& n, int64_t opset) {
  const std::string mode = n.GetString("mode", "bilinear");
  if (mode != "bilinear" && mode != "nearest" && mode != "bicubic") {
    return "com.microsoft::GridSample: mode '" + mode + "' is unknown";
  }
  return NeedOpset("GridSample", 16, opset);
}

void BuildGridSample(Builder& b) {
  std::string mode = b.node().GetString("mode", "bilinear");
  if (b.opset() >= 20 && mode == "bilinear") mode = "linear";
  if (b.opset() >= 20 && mode == "bicubic") mode = "cubic";
  b.SetOutput(0, b.Op("GridSample", {b.input(0), b.input(1)},
                      {ir::IntAttr("align_corners", b.node().GetInt("align_corners", 0)), ir::StringAttr("mode", mode),
                       ir::StringAttr("padding_mode", b.node().GetString("padding_mode", "zeros"))}));
}

// ---- Range ----

std::string RefuseRange(const ir::Node& n, int64_t opset) {
  if (!n.input(2) && ir::ElementType(n.input(0)) == DataType::kUndefined) {
    return "com.microsoft::Range: the type of 'start' is unknown (the delta of 1 needs it)";
  }
  return NeedOpset("Range", 11, opset);
}

void BuildRange(Builder& b) {
  ir::Value* delta = b.input(2) ? b.input(2) : b.Scalar(1.0, ir::ElementType(b.input(0)));
  b.SetOutput(0, b.Op("Range", {b.input(0), b.input(1), delta}));
}

// ---- Unique ----

std::string RefuseUnique(const ir::Node&, int64_t opset) { return NeedOpset("Unique", 11, opset); }

void BuildUnique(Builder& b) {
  const ir::Node& n = b.node();
  ir::Value* y = b.AddValue(b.prefix() + "Y");
  ir::Value* first = b.AddValue(b.prefix() + "indices");
  ir::Value* inverse = b.AddValue(b.prefix() + "inverse_indices");
  ir::Value* counts = b.AddValue(b.prefix() + "counts");
  b.AddNode(b.prefix() + "Unique", "Unique", {b.input(0)}, {y, first, inverse, counts}, {ir::IntAttr("sorted", 0)});
  b.SetOutput(0, y);
  if (n.num_outputs() > 1) b.SetOutput(1, inverse);
  if (n.num_outputs() > 2) b.SetOutput(2, counts);
}

// ---- CDist ----

std::string RefuseCDist(const ir::Node& n, int64_t opset) {
  const std::string metric = n.GetString("metric", "sqeuclidean");
  if (metric != "sqeuclidean" && metric != "euclidean") {
    return "com.microsoft::CDist: metric '" + metric + "' is unknown";
  }
  const DataType t = ir::ElementType(n.input(0));
  if (t != DataType::kFloat && t != DataType::kDouble) {
    return "com.microsoft::CDist: the element type of 'A' is unknown or not float / double";
  }
  return NeedOpset("CDist", 6, opset);
}

void BuildCDist(Builder& b) {
  ir::Value* a = b.input(0);
  ir::Value* bm = b.input(1);
  const DataType t = ir::ElementType(a);
  ir::Value* a2 = b.Reduce("ReduceSum", b.Mul(a, a), {1});                                 // [M, 1]
  ir::Value* b2 = b.Transpose(b.Reduce("ReduceSum", b.Mul(bm, bm), {1}), {1, 0});          // [1, K]
  ir::Value* ab = b.Mul(b.Op("MatMul", {a, b.Transpose(bm, {1, 0})}), b.Scalar(-2.0, t));  // [M, K]
  ir::Value* d = b.Op("Relu", {b.Add(b.Add(ab, a2), b2)});
  if (b.node().GetString("metric", "sqeuclidean") == "euclidean") d = b.Op("Sqrt", {d});
  b.SetOutput(0, d);
}

}  // namespace

void AddContribTensorDecompositions(std::vector<Decomposition>& list) {
  const char* ms = "com.microsoft";
  list.push_back(
      {ms, "ExpandDims", 1, INT64_MAX, "com.microsoft::ExpandDims -> Unsqueeze", RefuseExpandDims, BuildExpandDims});
  list.push_back({ms, "Trilu", 1, INT64_MAX, "com.microsoft::Trilu -> Trilu", RefuseTrilu, BuildTrilu, true});
  list.push_back(
      {ms, "GridSample", 1, INT64_MAX, "com.microsoft::GridSample -> GridSample", RefuseGridSample, BuildGridSample});
  list.push_back({ms, "Range", 1, INT64_MAX, "com.microsoft::Range -> Range", RefuseRange, BuildRange});
  list.push_back({ms, "Unique", 1, INT64_MAX, "com.microsoft::Unique -> Unique (sorted=0)", RefuseUnique, BuildUnique});
  list.push_back({ms, "CDist", 1, INT64_MAX,
                  "com.microsoft::CDist -> Mul, ReduceSum, Transpose, MatMul, Add, Relu (euclidean: Sqrt)", RefuseCDist,
                  BuildCDist});
}

}  // namespace ferry::legalize
