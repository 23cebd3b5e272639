// ONNX Runtime's fusions (com.microsoft, schemas_com_microsoft_fused.cc) back into ONNX primitives, each its op's
// definition written out:
//   FusedConv(X, W, B, Z)  -> Conv (every attribute but the activation's), Add Z, the activation (as ai.ferry's
//                             FusedConv: BuildFusedActivation, the same table)
//   FusedGemm(A, B, C)     -> Gemm, then the activation as its ONNX op (Relu, LeakyRelu, Elu, Selu, HardSigmoid,
//                             Sigmoid, Tanh, Softplus, Softsign, ThresholdedRelu) or as Mul / Tanh / Softplus
//                             (ScaledTanh: alpha tanh(beta x); ParametricSoftplus: alpha softplus(beta x))
//   FusedMatMul / TransposeMatMul(A, B) -> Transpose (perm [1, ..., r-2, 0, r-1] for transBatch, the last two
//                             swapped for trans), MatMul, Mul alpha (alpha != 1)
//   Gelu(X)                -> Gelu's erf formula (BuildGelu)
//   BiasGelu(A, B)         -> Add, Gelu's erf formula;  FastGelu(X, bias) -> (Add), Gelu's tanh formula
//   QuickGelu(X)           -> Mul(X, Sigmoid(Mul(X, alpha)))
//   BiasAdd(X, bias, skip) -> Add, Add
#include <numeric>
#include <string>
#include <vector>

#include "legalize/decompose_util.h"
#include "semantics/ort_gemm_activation.h"

namespace ferry::legalize {
namespace {

constexpr const char* kMs = "com.microsoft";

std::string RefuseNotFloat(const ir::Node& n) {
  if (!IsFloatType(ElementType(n.input(0)))) {
    return n.op_type() + ": the input's element type is unknown or not floating-point";
  }
  return "";
}

// ---- FusedConv ----

std::string RefuseConv(const ir::Node& n, int64_t opset) {
  if (ElementType(n.input(0)) != DataType::kFloat) return "FusedConv: X's element type is unknown or not float";
  return RefuseFusedActivation(n, opset);
}

void BuildConv(Builder& b) {
  std::vector<ir::Attribute> attrs;
  for (const ir::Attribute& a : b.node().attributes()) {
    if (a.name != "activation" && a.name != "activation_params") attrs.push_back(a);
  }
  std::vector<ir::Value*> in = {b.input(0), b.input(1)};
  if (b.input(2)) in.push_back(b.input(2));
  ir::Value* y = b.Op("Conv", std::move(in), std::move(attrs));
  if (b.input(3)) y = b.Add(y, b.input(3));
  b.SetOutput(0, BuildFusedActivation(b, y));
}

// ---- FusedGemm ----

std::string RefuseGemm(const ir::Node& n, int64_t opset) {
  if (ElementType(n.input(0)) != DataType::kFloat) return "FusedGemm: A's element type is unknown or not float";
  semantics::OrtGemmActivation act;
  if (std::string reason = semantics::ParseOrtGemmActivation(n, &act); !reason.empty()) return reason;
  using K = semantics::OrtGemmActivationKind;
  if (act.kind == K::kThresholdedRelu && opset < 10) {
    return "FusedGemm: ThresholdedRelu needs ai.onnx opset 10, the model has " + std::to_string(opset);
  }
  if (act.kind == K::kSelu && !(act.alpha >= 0)) {
    return "FusedGemm: Selu with activation_alpha < 0 (ONNX Runtime's formula differs from ONNX's Selu there)";
  }
  return "";
}

void BuildGemm(Builder& b) {
  const ir::Node& n = b.node();
  std::vector<ir::Attribute> attrs;
  for (const char* name : {"transA", "transB", "alpha", "beta"}) {
    if (const ir::Attribute* a = n.attr(name)) attrs.push_back(*a);
  }
  std::vector<ir::Value*> in = {b.input(0), b.input(1)};
  if (b.input(2)) in.push_back(b.input(2));
  ir::Value* y = b.Op("Gemm", std::move(in), std::move(attrs));
  const semantics::OrtGemmActivation act = semantics::OrtGemmActivationFromNode(n);
  const DataType t = DataType::kFloat;
  using K = semantics::OrtGemmActivationKind;
  switch (act.kind) {
    case K::kNone: break;
    case K::kRelu:
    case K::kSigmoid:
    case K::kTanh:
    case K::kSoftplus:
    case K::kSoftsign: y = b.Op(act.name, {y}); break;
    case K::kLeakyRelu:
    case K::kElu:
    case K::kThresholdedRelu: y = b.Op(act.name, {y}, {FloatAttr("alpha", act.alpha)}); break;
    case K::kSelu: y = b.Op("Selu", {y}, {FloatAttr("alpha", act.alpha), FloatAttr("gamma", act.gamma)}); break;
    case K::kHardSigmoid:
      y = b.Op("HardSigmoid", {y}, {FloatAttr("alpha", act.alpha), FloatAttr("beta", act.beta)});
      break;
    case K::kScaledTanh: y = b.Mul(b.Op("Tanh", {b.Mul(y, b.Scalar(act.beta, t))}), b.Scalar(act.alpha, t)); break;
    case K::kParametricSoftplus:
      y = b.Mul(b.Op("Softplus", {b.Mul(y, b.Scalar(act.beta, t))}), b.Scalar(act.alpha, t));
      break;
  }
  b.SetOutput(0, y);
}

// ---- FusedMatMul, TransposeMatMul ----

std::string RefuseMatMul(const ir::Node& n, int64_t) {
  if (std::string reason = RefuseNotFloat(n); !reason.empty()) return reason;
  const bool tba = n.GetInt("transBatchA", 0) != 0, tbb = n.GetInt("transBatchB", 0) != 0;
  const bool ta = n.GetInt("transA", 0) != 0, tb = n.GetInt("transB", 0) != 0;
  const int64_t ra = RankOrMinusOne(n.input(0)), rb = RankOrMinusOne(n.input(1));
  if (((ta || tba) && ra < 0) || ((tb || tbb) && rb < 0)) {
    return n.op_type() + ": a transposed operand's rank is unknown";
  }
  if ((tba || tbb) && (ra < 3 || ra != rb)) {
    return n.op_type() + ": transBatchA / transBatchB need A and B of the same rank >= 3";
  }
  return "";
}

// The operand as MatMul sees it: Transposed by transBatch's and trans's perm (unchanged when the perm is the
// identity or the operand 1-D).
ir::Value* TransposedOperand(Builder& b, ir::Value* v, bool trans_batch, bool trans) {
  const int64_t r = RankOrMinusOne(v);
  if (r < 2 || (!trans && !trans_batch)) return v;
  std::vector<int64_t> perm(static_cast<size_t>(r));
  std::iota(perm.begin(), perm.end(), 0);
  if (trans_batch && r > 2) {
    for (int64_t i = 0; i + 2 < r; ++i) perm[static_cast<size_t>(i)] = i + 1;
    perm[static_cast<size_t>(r - 2)] = 0;
  }
  if (trans) std::swap(perm[static_cast<size_t>(r - 1)], perm[static_cast<size_t>(r - 2)]);
  bool identity = true;
  for (int64_t i = 0; i < r; ++i) identity = identity && perm[static_cast<size_t>(i)] == i;
  return identity ? v : b.Op("Transpose", {v}, {IntsAttr("perm", perm)});
}

void BuildMatMul(Builder& b) {
  const ir::Node& n = b.node();
  ir::Value* a = TransposedOperand(b, b.input(0), n.GetInt("transBatchA", 0) != 0, n.GetInt("transA", 0) != 0);
  ir::Value* bb = TransposedOperand(b, b.input(1), n.GetInt("transBatchB", 0) != 0, n.GetInt("transB", 0) != 0);
  ir::Value* y = b.Op("MatMul", {a, bb});
  const float alpha = n.GetFloat("alpha", 1.0f);
  if (alpha != 1.0f) y = b.Mul(y, b.Scalar(alpha, b.dtype()));
  b.SetOutput(0, y);
}

// ---- the Gelus, BiasAdd ----

std::string RefuseErfGelu(const ir::Node& n, int64_t opset) {
  if (std::string reason = RefuseNotFloat(n); !reason.empty()) return reason;
  if (opset < 9) return n.op_type() + ": Erf needs ai.onnx opset 9, the model has " + std::to_string(opset);
  return "";
}

std::string RefuseElementwise(const ir::Node& n, int64_t) { return RefuseNotFloat(n); }

void BuildGeluOp(Builder& b) { b.SetOutput(0, BuildGelu(b, b.input(0), false)); }
void BuildBiasGelu(Builder& b) { b.SetOutput(0, BuildGelu(b, b.Add(b.input(0), b.input(1)), false)); }
void BuildFastGelu(Builder& b) {
  ir::Value* x = b.input(1) ? b.Add(b.input(0), b.input(1)) : b.input(0);
  b.SetOutput(0, BuildGelu(b, x, true));
}
void BuildQuickGelu(Builder& b) {
  ir::Value* x = b.input(0);
  const double alpha = b.node().GetFloat("alpha", 1.702f);
  b.SetOutput(0, b.Mul(x, b.Op("Sigmoid", {b.Mul(x, b.Scalar(alpha, b.dtype()))})));
}
void BuildBiasAdd(Builder& b) { b.SetOutput(0, b.Add(b.Add(b.input(0), b.input(1)), b.input(2))); }

}  // namespace

void AddOrtFusedDecompositions(std::vector<Decomposition>& list) {
  list.push_back(
      {kMs, "FusedConv", 1, INT64_MAX, "com.microsoft::FusedConv -> Conv, Add, activation", RefuseConv, BuildConv});
  list.push_back(
      {kMs, "FusedGemm", 1, INT64_MAX, "com.microsoft::FusedGemm -> Gemm, activation", RefuseGemm, BuildGemm});
  for (const char* op : {"FusedMatMul", "TransposeMatMul"}) {
    list.push_back({kMs, op, 1, INT64_MAX, std::string("com.microsoft::") + op + " -> Transpose, MatMul, Mul",
                    RefuseMatMul, BuildMatMul});
  }
  list.push_back(
      {kMs, "Gelu", 1, INT64_MAX, "com.microsoft::Gelu -> Mul, Mul, Erf, Add, Mul", RefuseErfGelu, BuildGeluOp, true});
  list.push_back({kMs, "BiasGelu", 1, INT64_MAX, "com.microsoft::BiasGelu -> Add, Mul, Mul, Erf, Add, Mul",
                  RefuseErfGelu, BuildBiasGelu, true});
  list.push_back({kMs, "FastGelu", 1, INT64_MAX,
                  "com.microsoft::FastGelu -> Add, Mul, Mul, Mul, Mul, Add, Mul, Tanh, Add, Mul", RefuseElementwise,
                  BuildFastGelu, true});
  list.push_back({kMs, "QuickGelu", 1, INT64_MAX, "com.microsoft::QuickGelu -> Mul, Sigmoid, Mul", RefuseElementwise,
                  BuildQuickGelu, true});
  list.push_back(
      {kMs, "BiasAdd", 1, INT64_MAX, "com.microsoft::BiasAdd -> Add, Add", RefuseElementwise, BuildBiasAdd, true});
}

}  // namespace ferry::legalize
