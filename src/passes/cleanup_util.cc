#include "passes/cleanup_util.h"

#include <algorithm>
#include <array>
#include <cstring>
#include <functional>
#include <string_view>

#include "passes/rewrite_util.h"

namespace ferry::passes {
namespace {

// True when every subgraph reading `reader_of` would find `target` under `target`'s name (no value of a subgraph
// shadows it), so a reference to `reader_of` may become one to `target`.
bool VisibleToReaders(const ir::Graph& graph, const ir::Value* reader_of, const ir::Value* target) {
  for (const ir::Graph* sub : ir::SubgraphReaders(graph, reader_of)) {
    if (sub->LookupValue(target->name()) != target) return false;
  }
  return true;
}

bool SameFloatBits(float a, float b) { return std::memcmp(&a, &b, sizeof(float)) == 0; }

}  // namespace

bool TensorsEqual(const Tensor& a, const Tensor& b) {
  if (a.dtype() != b.dtype() || a.shape() != b.shape()) return false;
  if (a.dtype() == DataType::kString) {
    return std::equal(a.strings(), a.strings() + a.size(), b.strings());
  }
  const size_t n = a.nbytes();
  return n == b.nbytes() && (n == 0 || std::memcmp(a.raw_data(), b.raw_data(), n) == 0);
}

bool AttributesEqual(const ir::Attribute& a, const ir::Attribute& b) {
  if (a.name != b.name || a.type != b.type || a.ref_attr_name != b.ref_attr_name) return false;
  if (!a.ref_attr_name.empty()) return true;  // the value is the caller's
  switch (a.type) {
    case ir::AttrType::kFloat: return SameFloatBits(a.f, b.f);
    case ir::AttrType::kInt: return a.i == b.i;
    case ir::AttrType::kString: return a.s == b.s;
    case ir::AttrType::kTensor:
    case ir::AttrType::kSparseTensor: return TensorsEqual(a.t, b.t);
    case ir::AttrType::kFloats:
      return a.floats.size() == b.floats.size() &&
             std::equal(a.floats.begin(), a.floats.end(), b.floats.begin(), SameFloatBits);
    case ir::AttrType::kInts: return a.ints == b.ints;
    case ir::AttrType::kStrings: return a.strings == b.strings;
    case ir::AttrType::kTensors:
      return a.tensors.size() == b.tensors.size() &&
             std::equal(a.tensors.begin(), a.tensors.end(), b.tensors.begin(), TensorsEqual);
    case ir::AttrType::kTypeProto: return a.tp.ToString() == b.tp.ToString();
    case ir::AttrType::kTypeProtos:
      return a.tps.size() == b.tps.size() &&
             std::equal(a.tps.begin(), a.tps.end(), b.tps.begin(),
                        [](const ir::TypeInfo& x, const ir::TypeInfo& y) { return x.ToString() == y.ToString(); });
    default: return false;  // graphs (bodies are not compared), sparse tensor lists, undefined
  }
}

bool SameAttributes(const ir::Node& a, const ir::Node& b) {
  if (a.attributes().size() != b.attributes().size()) return false;
  for (const ir::Attribute& x : a.attributes()) {
    const ir::Attribute* y = b.attr(x.name);
    if (!y || !AttributesEqual(x, *y)) return false;
  }
  return true;
}

bool IsNondeterministic(const ir::Node& node) {
  static constexpr std::array<std::string_view, 7> kOps = {"RandomNormal",      "RandomUniform", "RandomNormalLike",
                                                           "RandomUniformLike", "Multinomial",   "Bernoulli",
                                                           "Dropout"};
  if (!node.domain().empty() && node.domain() != "ai.onnx") return false;
  return std::find(kOps.begin(), kOps.end(), node.op_type()) != kOps.end();
}

bool CanForward(const ir::Graph& graph, const PassContext& ctx, const ir::Value* from, const ir::Value* to) {
  if (!from || !to || from == to || from->owner() != &graph) return false;
  if (!IsGraphOutput(graph, from)) return VisibleToReaders(graph, from, to);
  // `from` keeps its name: `to`'s producer is rebuilt to write it, and `to`'s readers read it.
  if (IsGraphInput(graph, to) || IsGraphOutput(graph, to) || to->is_initializer() || IsGraphInput(graph, from)) {
    return false;
  }
  const ir::Node* p = to->producer();
  if (!p || p->owner() != &graph || ctx.Frozen(*p)) return false;
  return VisibleToReaders(graph, to, from);
}

bool Forward(ir::Graph& graph, ir::Value* from, ir::Value* to) {
  if (IsGraphOutput(graph, from)) {
    ir::ReplaceAllUses(graph, to, from);
    if (from->type().kind == ir::TypeInfo::Kind::kUnknown) from->set_type(to->type());
    ir::RebuildWithOutput(to->producer(), to, from);
    graph.RemoveValue(to);
    return true;
  }
  ir::ReplaceAllUses(graph, from, to);
  if (from->is_initializer()) {
    graph.RemoveInitializer(from);
  } else {
    graph.RemoveValue(from);
  }
  return false;
}

void RemoveUnreadInitializers(ir::Graph& graph, std::vector<ir::Value*> values) {
  std::sort(values.begin(), values.end());
  values.erase(std::unique(values.begin(), values.end()), values.end());
  for (ir::Value* v : values) {
    if (v && v->owner() == &graph && ir::IsConstantInitializer(graph, v) && !IsRead(graph, v)) {
      graph.RemoveInitializer(v);
    }
  }
}

}  // namespace ferry::passes
