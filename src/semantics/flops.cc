#include "semantics/flops.h"

#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

namespace ferry::semantics {
namespace {

using Dims = std::vector<int64_t>;
using FlopsFn = double (*)(const ir::Node&);

// The value's type dims when all static (what shape inference left on it).
std::optional<Dims> StaticDims(const ir::Value* v) {
  if (!v || !v->type().has_static_shape()) return std::nullopt;
  return v->type().static_dims();
}

double Elements(const Dims& shape) {
  double n = 1;
  for (int64_t d : shape) n *= static_cast<double>(d);
  return n;
}

double ProductFrom(const Dims& shape, size_t first) {
  double n = 1;
  for (size_t i = first; i < shape.size(); ++i) n *= static_cast<double>(shape[i]);
  return n;
}

// Conv, ConvInteger, QLinearConv (W is input kW): 2 * N * Cout * spatial_out * (Cin / group) * kernel
// = 2 * |Y| * prod(W.shape[1:]).
template <size_t kW>
double ConvFlops(const ir::Node& n) {
  const auto out = StaticDims(n.output(0)), w = StaticDims(n.input(kW));
  if (!out || !w || w->size() < 2) return 0;
  return 2 * Elements(*out) * ProductFrom(*w, 1);
}

// ConvTranspose: every input element scatters into (Cout / group) * kernel outputs: 2 * |X| * prod(W.shape[1:]).
double ConvTransposeFlops(const ir::Node& n) {
  const auto x = StaticDims(n.input(0)), w = StaticDims(n.input(1));
  if (!x || !w || w->size() < 2) return 0;
  return 2 * Elements(*x) * ProductFrom(*w, 1);
}

// MatMul, MatMulInteger, QLinearMatMul: 2 * |Y| * K, batched and broadcast (|Y| = batch * M * N).
double MatMulFlops(const ir::Node& n) {
  const auto out = StaticDims(n.output(0)), a = StaticDims(n.input(0));
  if (!out || !a || a->empty()) return 0;
  return 2 * Elements(*out) * static_cast<double>(a->back());
}

double GemmFlops(const ir::Node& n) {
  const auto out = StaticDims(n.output(0)), a = StaticDims(n.input(0));
  if (!out || !a || a->size() != 2) return 0;
  const int64_t k = n.GetInt("transA", 0) ? (*a)[0] : (*a)[1];
  return 2 * Elements(*out) * static_cast<double>(k);
}

// |Y| times `kPerElement`.
template <int kPerElement>
double PerOutputElement(const ir::Node& n) {
  const auto out = StaticDims(n.output(0));
  return out ? kPerElement * Elements(*out) : 0;
}

// MaxPool, AveragePool, LpPool: one operation per window tap.
double PoolFlops(const ir::Node& n) {
  const auto out = StaticDims(n.output(0));
  if (!out) return 0;
  double per = 1;
  for (int64_t d : n.GetInts("kernel_shape")) per *= static_cast<double>(d);
  return Elements(*out) * per;
}

// The global pools and reductions: one operation per input element.
double ReduceFlops(const ir::Node& n) {
  if (!StaticDims(n.output(0))) return 0;
  const auto x = StaticDims(n.input(0));
  return x ? Elements(*x) : 0;
}

const std::unordered_map<std::string_view, FlopsFn>& Table() {
  static const auto* table = [] {
    auto* t = new std::unordered_map<std::string_view, FlopsFn>{
        {"Conv", ConvFlops<1>},
        {"ConvInteger", ConvFlops<1>},
        {"QLinearConv", ConvFlops<3>},
        {"ConvTranspose", ConvTransposeFlops},
        {"MatMul", MatMulFlops},
        {"MatMulInteger", MatMulFlops},
        {"QLinearMatMul", MatMulFlops},
        {"Gemm", GemmFlops},
        {"MaxPool", PoolFlops},
        {"AveragePool", PoolFlops},
        {"LpPool", PoolFlops},
        // Softmax, LogSoftmax: exp, sum, divide.
        {"Softmax", PerOutputElement<3>},
        {"LogSoftmax", PerOutputElement<3>},
    };
    // The normalizations: a scale and a shift per element (the statistics are not counted).
    for (const char* op : {"BatchNormalization", "InstanceNormalization", "LayerNormalization", "GroupNormalization",
                           "RMSNormalization"}) {
      t->emplace(op, PerOutputElement<2>);
    }
    for (const char* op : {"GlobalAveragePool", "GlobalMaxPool", "ReduceL1", "ReduceL2", "ReduceLogSum",
                           "ReduceLogSumExp", "ReduceMax", "ReduceMean", "ReduceMin", "ReduceProd", "ReduceSum",
                           "ReduceSumSquare"}) {
      t->emplace(op, ReduceFlops);
    }
    // Elementwise: one operation per output element.
    for (const char* op :
         {"Abs",       "Acos",       "Acosh",      "Add",        "And",         "Asin",       "Asinh",
          "Atan",      "Atanh",      "BitShift",   "Ceil",       "Celu",        "Clip",       "Cos",
          "Cosh",      "Div",        "Elu",        "Equal",      "Erf",         "Exp",        "Floor",
          "Gelu",      "Greater",    "GreaterOrEqual", "HardSigmoid", "HardSwish", "IsInf",   "IsNaN",
          "LeakyRelu", "Less",       "LessOrEqual", "Log",       "Max",         "Mean",       "Min",
          "Mish",      "Mod",        "Mul",        "Neg",        "Not",         "Or",         "PRelu",
          "Pow",       "Reciprocal", "Relu",       "Round",      "Selu",        "Sigmoid",    "Sign",
          "Sin",       "Sinh",       "Softplus",   "Softsign",   "Sqrt",        "Sub",        "Sum",
          "Tan",       "Tanh",       "ThresholdedRelu", "Where", "Xor",         "Swish",      "BitwiseAnd",
          "BitwiseOr", "BitwiseXor", "BitwiseNot", "Shrink"}) {
      t->emplace(op, PerOutputElement<1>);
    }
    return t;
  }();
  return *table;
}

}  // namespace

double EstimateFlops(const ir::Node& n) {
  if (!n.domain().empty() && n.domain() != "ai.onnx") return 0;
  const auto it = Table().find(n.op_type());
  return it == Table().end() ? 0 : it->second(n);
}

bool HasFlops(std::string_view op) { return Table().count(op) != 0; }

}  // namespace ferry::semantics
