// FLOPs of one node from static shapes: what the fallback ratio by FLOPs weighs nodes by.
#include "runtime/flops.h"

#include <optional>

namespace ferry::runtime {
namespace {

std::optional<std::vector<int64_t>> StaticShape(const ir::Value* v) {
  if (!v || !v->type().has_static_shape()) return std::nullopt;
  std::vector<int64_t> s;
  for (const ir::Dim& d : *v->type().shape) s.push_back(d.value);
  return s;
}

double Elements(const std::vector<int64_t>& shape) {
  double n = 1;
  for (int64_t d : shape) n *= static_cast<double>(d);
  return n;
}

double ProductFrom(const std::vector<int64_t>& shape, size_t first) {
  double n = 1;
  for (size_t i = first; i < shape.size(); ++i) n *= static_cast<double>(shape[i]);
  return n;
}

bool IsElementwise(const std::string& op) {
  static const char* const kOps[] = {
      "Abs",   "Acos",      "Acosh",       "Add",        "And",         "Asin",     "Asinh",    "Atan",
      "Atanh", "BitShift",  "Ceil",        "Celu",       "Clip",        "Cos",      "Cosh",     "Div",
      "Elu",   "Equal",     "Erf",         "Exp",        "Floor",       "Gelu",     "Greater",  "GreaterOrEqual",
      "HardSigmoid",        "HardSwish",   "IsInf",      "IsNaN",       "LeakyRelu", "Less",    "LessOrEqual",
      "Log",   "Max",       "Mean",        "Min",        "Mish",        "Mod",      "Mul",      "Neg",
      "Not",   "Or",        "PRelu",       "Pow",        "Reciprocal",  "Relu",     "Round",    "Selu",
      "Sigmoid", "Sign",    "Sin",         "Sinh",       "Softplus",    "Softsign", "Sqrt",     "Sub",
      "Sum",   "Tan",       "Tanh",        "ThresholdedRelu", "Where",  "Xor",      "Swish",    "BitwiseAnd",
      "BitwiseOr", "BitwiseXor", "BitwiseNot", "Shrink"};
  for (const char* k : kOps) {
    if (op == k) return true;
  }
  return false;
}

}  // namespace

double EstimateFlops(const ir::Node& n) {
  if (!n.domain().empty() && n.domain() != "ai.onnx") return 0;
  const std::string& op = n.op_type();
  auto out = StaticShape(n.output(0));
  if (op == "Conv" || op == "ConvInteger" || op == "QLinearConv") {
    // 2 * N * Cout * spatial_out * (Cin / group) * kernel = 2 * |Y| * prod(W.shape[1:]).
    auto w = StaticShape(n.input(op == "QLinearConv" ? 3 : 1));
    if (!out || !w || w->size() < 2) return 0;
    return 2 * Elements(*out) * ProductFrom(*w, 1);
  }
  if (op == "ConvTranspose") {
    // Every input element scatters into (Cout / group) * kernel outputs: 2 * |X| * prod(W.shape[1:]).
    auto x = StaticShape(n.input(0));
    auto w = StaticShape(n.input(1));
    if (!x || !w || w->size() < 2) return 0;
    return 2 * Elements(*x) * ProductFrom(*w, 1);
  }
  if (op == "MatMul" || op == "MatMulInteger" || op == "QLinearMatMul") {
    // 2 * |Y| * K, batched and broadcast (|Y| = batch * M * N).
    auto a = StaticShape(n.input(0));
    if (!out || !a || a->empty()) return 0;
    return 2 * Elements(*out) * static_cast<double>(a->back());
  }
  if (op == "Gemm") {
    auto a = StaticShape(n.input(0));
    if (!out || !a || a->size() != 2) return 0;
    const int64_t k = n.GetInt("transA", 0) ? (*a)[0] : (*a)[1];
    return 2 * Elements(*out) * static_cast<double>(k);
  }
  if (!out) return 0;
  if (IsElementwise(op)) return Elements(*out);
  if (op == "BatchNormalization" || op == "InstanceNormalization" || op == "LayerNormalization" ||
      op == "GroupNormalization" || op == "RMSNormalization") {
    return 2 * Elements(*out);  // a scale and a shift per element (the statistics are not counted)
  }
  if (op == "Softmax" || op == "LogSoftmax") return 3 * Elements(*out);  // exp, sum, divide
  if (op == "MaxPool" || op == "AveragePool" || op == "LpPool") {
    const auto k = n.GetInts("kernel_shape");
    double per = 1;
    for (int64_t d : k) per *= static_cast<double>(d);
    return Elements(*out) * per;
  }
  if (op == "GlobalAveragePool" || op == "GlobalMaxPool" || op.rfind("Reduce", 0) == 0) {
    auto x = StaticShape(n.input(0));
    return x ? Elements(*x) : 0;
  }
  return 0;
}

}  // namespace ferry::runtime
