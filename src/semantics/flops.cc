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

// LSTM, GRU, RNN (W [directions, gates * hidden, input]): per time step and direction, the input and recurrent
// products, 2 * batch * gates * hidden * (input + hidden), plus kPerHidden operations per batch x hidden element
// (biases, gate activations, the state update).
template <int kGates, int kPerHidden>
double RecurrentFlops(const ir::Node& n) {
  const auto x = StaticDims(n.input(0)), w = StaticDims(n.input(1));
  if (!x || !w || x->size() != 3 || w->size() != 3) return 0;
  const bool batch_first = n.GetInt("layout", 0) == 1;
  const double seq = static_cast<double>((*x)[batch_first ? 1 : 0]);
  const double batch = static_cast<double>((*x)[batch_first ? 0 : 1]);
  const double input = static_cast<double>((*x)[2]);
  const double directions = static_cast<double>((*w)[0]);
  const double hidden = static_cast<double>((*w)[1]) / kGates;
  return seq * directions * (2 * batch * kGates * hidden * (input + hidden) + kPerHidden * batch * hidden);
}

// Attention (opset 23): Q K^T and the product with V (2 multiply-adds per score and head dim), and the softmax (3
// per score). Q, K, V are 4-D [batch, heads, sequence, head size] or 3-D [batch, sequence, heads * head size]
// (q_num_heads, kv_num_heads: the query heads share the key/value heads evenly).
double AttentionFlops(const ir::Node& n) {
  const auto q = StaticDims(n.input(0)), k = StaticDims(n.input(1)), v = StaticDims(n.input(2));
  if (!q || !k || !v || q->size() != k->size() || q->size() != v->size()) return 0;
  double batch, heads, seq, kv_seq, qk_width, v_width;  // widths summed over the query heads
  if (q->size() == 4) {
    batch = static_cast<double>((*q)[0]), heads = static_cast<double>((*q)[1]);
    seq = static_cast<double>((*q)[2]), kv_seq = static_cast<double>((*k)[2]);
    qk_width = heads * static_cast<double>((*q)[3]), v_width = heads * static_cast<double>((*v)[3]);
  } else if (q->size() == 3) {
    const int64_t q_heads = n.GetInt("q_num_heads", 0), kv_heads = n.GetInt("kv_num_heads", 0);
    if (q_heads <= 0 || kv_heads <= 0) return 0;
    batch = static_cast<double>((*q)[0]), heads = static_cast<double>(q_heads);
    seq = static_cast<double>((*q)[1]), kv_seq = static_cast<double>((*k)[1]);
    qk_width = static_cast<double>((*q)[2]);
    v_width = static_cast<double>((*v)[2]) * static_cast<double>(q_heads) / static_cast<double>(kv_heads);
  } else {
    return 0;
  }
  return 2 * batch * seq * kv_seq * (qk_width + v_width) + 3 * batch * heads * seq * kv_seq;
}

// Einsum: one multiply-add per point of the index space of every letter (one operation with a single input).
// 0 with an ellipsis or a letter whose size is not static.
double EinsumFlops(const ir::Node& n) {
  const std::string equation = n.GetString("equation", "");
  if (equation.find('.') != std::string::npos) return 0;
  const std::string lhs = equation.substr(0, equation.find("->"));
  std::unordered_map<char, int64_t> sizes;
  size_t input = 0, axis = 0;
  for (char c : lhs) {
    if (c == ',') {
      ++input, axis = 0;
      continue;
    }
    if (c == ' ') continue;
    if (input >= n.inputs().size()) return 0;
    const auto dims = StaticDims(n.input(input));
    if (!dims || axis >= dims->size()) return 0;
    sizes[c] = (*dims)[axis++];
  }
  double points = 1;
  for (const auto& [letter, size] : sizes) points *= static_cast<double>(size);
  return (n.inputs().size() > 1 ? 2 : 1) * points;
}

// Resize: per output element, the taps of its mode (nearest 1; linear 2, cubic 4 per resized axis) times two
// (a weight and an add per tap).
double ResizeFlops(const ir::Node& n) {
  const auto x = StaticDims(n.input(0)), out = StaticDims(n.output(0));
  if (!x || !out || x->size() != out->size()) return 0;
  const std::string mode = n.GetString("mode", "nearest");
  if (mode == "nearest") return Elements(*out);
  const double taps_per_axis = mode == "cubic" ? 4 : 2;
  double taps = 1;
  for (size_t i = 0; i < x->size(); ++i) {
    if ((*x)[i] != (*out)[i]) taps *= taps_per_axis;
  }
  return 2 * taps * Elements(*out);
}

// LRN: the sum over `size` neighbours, then a power and a divide.
double LrnFlops(const ir::Node& n) {
  const auto out = StaticDims(n.output(0));
  return out ? Elements(*out) * static_cast<double>(n.GetInt("size", 1) + 3) : 0;
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
        {"Hardmax", PerOutputElement<1>},
        // LSTM: 4 gates; per hidden element 4 bias adds, 3 sigmoids, 2 tanh, the cell update (3), the output (1).
        {"LSTM", RecurrentFlops<4, 13>},
        // GRU: 3 gates; 3 bias adds, 2 sigmoids, a tanh, the reset product and the blend (4).
        {"GRU", RecurrentFlops<3, 10>},
        {"RNN", RecurrentFlops<1, 2>},
        {"Attention", AttentionFlops},
        {"Einsum", EinsumFlops},
        {"Resize", ResizeFlops},
        {"LRN", LrnFlops},
        {"CumSum", PerOutputElement<1>},
        // (De)quantization: a scale and a zero point per element; the dynamic one also finds the range.
        {"QuantizeLinear", PerOutputElement<2>},
        {"DequantizeLinear", PerOutputElement<2>},
        {"DynamicQuantizeLinear", PerOutputElement<4>},
        {"MeanVarianceNormalization", PerOutputElement<4>},
        {"LpNormalization", PerOutputElement<3>},
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

// BlockedConv: a Conv whose output is in a blocked layout ([N, C/b, spatial..., b], or channels-last with block
// 0) with its channels padded to the block: 2 * |Y| * prod(W.shape[1:]) over the real channels, W[0].
double BlockedConvFlops(const ir::Node& n) {
  const auto out = StaticDims(n.output(0)), w = StaticDims(n.input(1));
  if (!out || !w || w->size() < 2 || out->size() < 3) return 0;
  const double padded = n.GetInt("block", 0) > 0 ? static_cast<double>((*out)[1] * out->back())
                                                 : static_cast<double>(out->back());
  if (padded <= 0) return 0;
  return 2 * Elements(*out) * (static_cast<double>((*w)[0]) / padded) * ProductFrom(*w, 1);
}

// Ferry's Attention: Q [..., Sq, Dh], K [..., Sk, Dh] (or [..., Dh, Sk] with k_transposed), V [..., Sk, Dv]: the
// two products and the softmax, as for ONNX Attention.
double FerryAttentionFlops(const ir::Node& n) {
  const auto q = StaticDims(n.input(0)), k = StaticDims(n.input(1)), v = StaticDims(n.input(2));
  if (!q || !k || !v || q->size() < 2 || k->size() < 2 || v->size() < 2) return 0;
  const double sq = static_cast<double>((*q)[q->size() - 2]), dh = static_cast<double>(q->back());
  const double sk = static_cast<double>(n.GetInt("k_transposed", 0) ? k->back() : (*k)[k->size() - 2]);
  const double dv = static_cast<double>(v->back());
  const double batch = sq * dh > 0 ? Elements(*q) / (sq * dh) : 0;
  return 2 * batch * sq * sk * (dh + dv) + 3 * batch * sq * sk;
}

// Ferry's own ops (ai.ferry: what the optimizer fuses and the blocked layout makes), as the ops they stand for.
// Its reorders move data and do no arithmetic.
const std::unordered_map<std::string_view, FlopsFn>& FerryTable() {
  static const auto* table = new std::unordered_map<std::string_view, FlopsFn>{
      {"FusedConv", ConvFlops<1>},
      {"BlockedConv", BlockedConvFlops},
      {"BlockedPool", PoolFlops},
      {"FusedMatMul", MatMulFlops},
      {"Attention", FerryAttentionFlops},
      {"Gelu", PerOutputElement<1>},
      {"LayerNormalization", PerOutputElement<2>},
      {"RMSNormalization", PerOutputElement<2>},
      {"SkipLayerNormalization", PerOutputElement<3>},
  };
  return *table;
}

const std::unordered_map<std::string_view, FlopsFn>* TableFor(std::string_view domain) {
  if (domain.empty() || domain == "ai.onnx") return &Table();
  if (domain == "ai.ferry") return &FerryTable();
  return nullptr;
}

}  // namespace

double EstimateFlops(const ir::Node& n) {
  const auto* table = TableFor(n.domain());
  if (!table) return 0;
  const auto it = table->find(n.op_type());
  return it == table->end() ? 0 : it->second(n);
}

bool HasFlops(std::string_view domain, std::string_view op) {
  const auto* table = TableFor(domain);
  return table && table->count(op) != 0;
}

}  // namespace ferry::semantics
