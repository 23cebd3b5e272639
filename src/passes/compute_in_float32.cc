// ComputeInFloat32 (level 1, only with target backends): float16 and bfloat16 models on backends that compute in
// float32 only (the cpu backend on a CPU without AVX512_FP16/BF16) — ONNX Runtime's InsertCastTransformer idea:
// half storage at the model's edges, float32 compute inside. Per graph (subgraph bodies each on their own):
//  1. Seeds: a node reading float16/bfloat16 tensors whose float32 twin (the node with every half input, and the
//     outputs of the same type variables, float32) runs on a target backend of higher priority than the node as
//     written (which may run nowhere, or only on the fallback) computes in float32.
//  2. Carried: a node whose twin runs where the node does computes in float32 too when every half input it reads
//     is at hand in float32 (made by a node computing in float32, a constant, or a model's Cast from float32) and
//     its half outputs are read in float32: for a data-movement op (Reshape, Transpose, Concat, Slice, Gather, ...:
//     outputs are elements of inputs, so exact) by some reader, for any other op by every reader and by no graph
//     output or subgraph (ONNX Runtime's "isolated float16 node": cpu's half Add or Mul between two Convs), and
//     always for a node without half outputs (Shape). Judged in reverse order, so a chain of them is kept or dropped
//     together. Other nodes a backend runs in half (as well as in float32) are left alone.
//  3. Rewrite: the half constants a converted node reads become float32 initializers (converted once, shared by
//     every reader); its other half inputs get a Cast to float32 (one per value). Its half outputs become float32
//     values, and a Cast back writes the original (half, same name) value where something needs half: a node that
//     computes in half, a subgraph, a graph output. A converted node reads its producer's float32 value directly,
//     so there is no Cast(float32 -> half) -> Cast(half -> float32) chain between two float32-computed nodes; a
//     model's own Cast to float32 of a converted value, and its own Cast from float32 that a converted node reads,
//     are bypassed the same way (and removed when nothing else reads them; one writing a graph output becomes an
//     Identity of the float32 value). A fully converted model has Casts only at its inputs and outputs.
// Identity: none exact. Each converted node computes in float32 what it computed in half, without rounding its
// results (the next node's inputs) to half: the results are closer to the exact values than half compute; they
// differ from a half run by half rounding (about 1e-3 relative for float16, 1e-2 for bfloat16), and where a half
// intermediate would overflow (beyond 65504 in float16) float32 does not. The weights take twice the memory.
// Level 1 so that every optimizing level runs half models on the fast backend; placed after the cleanups (the
// constants they fold are converted once) and before the fusions (which then see float32 Conv, MatMul and
// BatchNormalization, as in a float32 model). Graph inputs and outputs keep their declared types; frozen (pinned)
// nodes, Casts and nodes holding subgraphs are never converted. Without target backends (portable mode) and for
// models without half tensors the pass does nothing.
#include <cstdint>
#include <optional>
#include <set>
#include <string>
#include <unordered_map>
#include <unordered_set>
#include <utility>
#include <vector>

#include "ferry/error.h"
#include "ferry/float16.h"
#include "passes/cleanup_util.h"
#include "passes/pass_list.h"
#include "passes/rewrite_util.h"
#include "schemas/schema.h"

namespace ferry::passes {
namespace {

constexpr size_t kNowhere = SIZE_MAX;

bool IsHalf(DataType t) { return t == DataType::kFloat16 || t == DataType::kBFloat16; }

// Ops whose outputs are elements of their inputs (or their shape), with no arithmetic on them: computing them in
// float32 gives exactly the half result widened, so they carry float32 between converted nodes.
bool MovesData(const ir::Node& n) {
  static const std::set<std::string, std::less<>> kOps = {
      "Compress",  "Concat",    "DepthToSpace", "Expand",   "Flatten", "Gather",       "GatherElements",
      "GatherND",  "Identity",  "Pad",          "Reshape",  "ReverseSequence",         "Shape",
      "Size",      "Slice",     "SpaceToDepth", "Split",    "Squeeze", "Tile",         "Transpose",
      "Trilu",     "Unsqueeze", "Where"};
  return (n.domain().empty() || n.domain() == "ai.onnx") && kOps.count(n.op_type());
}

// The `to` attribute of a Cast, kUndefined when absent or not an int.
DataType CastTo(const ir::Node& n) {
  const ir::Attribute* a = n.attr("to");
  return a && a->type == ir::AttrType::kInt ? static_cast<DataType>(a->i) : DataType::kUndefined;
}

// The index in ctx.backends of the first backend with a kernel for `n` when its inputs have element types `types`,
// kNowhere when none has one.
size_t Home(const PassContext& ctx, const ir::Node& n, const std::vector<DataType>& types) {
  for (size_t i = 0; i < ctx.backends.size(); ++i) {
    try {
      if (ctx.backends[i]->kernels().Query(n, types, ctx.target).supported()) return i;
    } catch (const Error&) {  // a predicate refusing a malformed node: not this backend
    }
  }
  return kNowhere;
}

// What a node computing in float32 changes: which inputs it reads in float32, and for each output the half type
// it had (kUndefined: the output keeps its type).
struct Twin {
  std::vector<bool> inputs;
  std::vector<DataType> outputs;
};

// The twin of `n`, or nullopt when `n` reads no half tensor, or its schema does not say which outputs follow them.
std::optional<Twin> PlanTwin(const ir::Node& n, int64_t onnx_opset) {
  const auto& registry = schemas::SchemaRegistry::Get();
  const schemas::OpSchema* schema = registry.Find(schemas::CanonicalDomain(n.domain()), n.op_type(), n.opset());
  if (!schema) return std::nullopt;
  Twin twin;
  std::unordered_map<std::string, DataType> vars;  // type variable -> the half type its inputs have
  for (size_t i = 0; i < n.num_inputs(); ++i) {
    const DataType t = n.input(i) ? ir::ElementType(n.input(i)) : DataType::kUndefined;
    twin.inputs.push_back(IsHalf(t));
    if (!IsHalf(t)) continue;
    if (t == DataType::kBFloat16 && onnx_opset < 13) return std::nullopt;  // no Cast to or from bfloat16 before 13
    const std::string var = schema->InputTypeVar(i);
    if (var.empty()) return std::nullopt;  // a concrete half type: its float32 twin is another op
    const auto [it, fresh] = vars.emplace(var, t);
    if (!fresh && it->second != t) return std::nullopt;  // float16 and bfloat16 in one type variable
  }
  if (vars.empty()) return std::nullopt;
  for (size_t i = 0; i < n.num_outputs(); ++i) {
    DataType half = DataType::kUndefined;
    if (n.output(i)) {
      auto it = vars.find(schema->OutputTypeVar(i));
      if (it != vars.end()) half = it->second;
      const DataType declared = ir::TensorElementType(n.output(i));
      if (half != DataType::kUndefined && declared != DataType::kUndefined && declared != half) return std::nullopt;
    }
    twin.outputs.push_back(half);
  }
  return twin;
}

// A half tensor a converter can widen once: a constant initializer or a Constant node's tensor (whose data is
// loaded), of `v`'s own graph.
const Tensor* HalfConstant(const ir::Value* v) {
  const Tensor* t = ir::ConstantTensor(*v->owner(), v);
  if (!t || !IsHalf(t->dtype()) || (t->size() > 0 && !t->raw_data())) return nullptr;
  return t;
}

// The weights of a whole model go through here once per session: float16 by a table of every bit pattern (256 KiB,
// built once), bfloat16 (the top half of a float) by a shift.
Tensor ToFloat32(const Tensor& t) {
  Tensor out(DataType::kFloat, t.shape());
  float* y = out.data<float>();
  if (t.dtype() == DataType::kFloat16) {
    static const std::vector<float> table = [] {
      std::vector<float> v(65536);
      for (uint32_t b = 0; b < 65536; ++b) v[b] = Float16::ToFloat(static_cast<uint16_t>(b));
      return v;
    }();
    const Float16* x = t.data<Float16>();
    for (int64_t i = 0; i < t.size(); ++i) y[i] = table[x[i].bits];
  } else {
    const BFloat16* x = t.data<BFloat16>();
    for (int64_t i = 0; i < t.size(); ++i) y[i] = static_cast<float>(x[i]);
  }
  return out;
}

// One graph's conversion: the plan (which nodes compute in float32), then the rewrite.
class Converter {
 public:
  Converter(ir::Graph& graph, const PassContext& ctx, ir::NameScope& names, int64_t opset)
      : graph_(graph), ctx_(ctx), b_(graph, opset, &names), opset_(opset) {}

  bool Run() {
    Plan();
    if (plan_.empty()) return false;
    Rewrite();
    return true;
  }

 private:
  // A model's Cast from float32 producing `v`, which a converted node bypasses to read its input.
  ir::Node* BypassableProducer(const ir::Value* v) const {
    ir::Node* p = v->producer();
    if (!IsOp(p, "Cast") || p->owner() != &graph_ || ctx_.Frozen(*p)) return nullptr;
    return ir::ElementType(p->input(0)) == DataType::kFloat ? p : nullptr;
  }
  // A model's Cast to float32 (of a converted node's half output) whose readers can read the float32 value.
  bool BypassableReader(const ir::Node* c) const {
    return IsOp(c, "Cast") && c->owner() == &graph_ && !ctx_.Frozen(*c) && CastTo(*c) == DataType::kFloat &&
           c->output(0);
  }
  // `v` is at hand in float32 for a node that would read it so.
  bool InFloat32(const ir::Value* v) const {
    const ir::Node* p = v->producer();
    return (p && p->owner() == &graph_ && plan_.count(p)) || HalfConstant(v) || BypassableProducer(v);
  }

  void Plan() {
    std::unordered_set<const ir::Node*> carried;
    for (const auto& node : graph_.nodes()) {
      const ir::Node& n = *node;
      if (ctx_.Frozen(n) || IsOp(&n, "Cast") || !n.subgraphs().empty()) continue;
      std::optional<Twin> twin = PlanTwin(n, opset_);
      if (!twin) continue;
      std::vector<DataType> types, twin_types;
      for (size_t i = 0; i < n.num_inputs(); ++i) {
        types.push_back(n.input(i) ? ir::ElementType(n.input(i)) : DataType::kUndefined);
        twin_types.push_back(twin->inputs[i] ? DataType::kFloat : types.back());
      }
      const size_t as_written = Home(ctx_, n, types), in_float32 = Home(ctx_, n, twin_types);
      if (in_float32 == kNowhere || in_float32 > as_written) continue;
      if (in_float32 == as_written) {  // runs as well in half: only between nodes computing in float32
        bool at_hand = true;
        for (size_t i = 0; at_hand && i < n.num_inputs(); ++i) at_hand = !twin->inputs[i] || InFloat32(n.input(i));
        if (!at_hand) continue;
        carried.insert(&n);
      }
      plan_.emplace(&n, std::move(*twin));
    }
    // Reverse order: a carried node's readers are judged before it. Data movement stays when some reader computes
    // in float32; another op (one a backend runs in half) only when every reader does (ONNX Runtime's "isolated
    // float16 node"): converting it then removes every Cast around it and adds none.
    for (size_t k = graph_.nodes().size(); k-- > 0;) {
      const ir::Node* n = graph_.nodes()[k].get();
      if (!carried.count(n)) continue;
      const Twin& twin = plan_.at(n);
      bool half_outputs = false, some = false, all = true;
      for (size_t i = 0; i < n->num_outputs(); ++i) {
        if (twin.outputs[i] == DataType::kUndefined) continue;
        const ir::Value* o = n->output(i);
        half_outputs = true;
        all = all && !IsGraphOutput(graph_, o) && ir::SubgraphReaders(graph_, o).empty();
        for (const ir::Node* c : o->consumers()) {
          const bool f32 = (c->owner() == &graph_ && plan_.count(c)) || BypassableReader(c);
          some = some || f32;
          all = all && f32;
        }
      }
      if (half_outputs && !(MovesData(*n) ? some : all)) plan_.erase(n);
    }
  }

  // The float32 value a converted node reads in place of the half value `v`.
  ir::Value* Float32Of(ir::Value* v) {
    if (auto it = float32_.find(v); it != float32_.end()) return it->second;
    ir::Value* w = nullptr;
    if (const Tensor* t = HalfConstant(v)) {
      w = b_.AddInitializer(v->name() + "_float32", ToFloat32(*t));
      widened_.push_back(v);
    } else if (ir::Node* p = BypassableProducer(v)) {
      w = p->input(0);
      check_.insert(p);
    } else {
      w = b_.AddValue(v->name() + "_float32", ir::TypeInfo::Tensor(DataType::kFloat, v->type().shape));
      b_.AddNode(v->name() + "_to_float32", "Cast", {v}, {w}, {IntAttr("to", static_cast<int64_t>(DataType::kFloat))});
    }
    float32_[v] = w;
    return w;
  }

  // `old` (a half output now computed as `w`) is written back by a Cast where something reads it in half.
  void CastBack(ir::Value* old, ir::Value* w, DataType half) {
    bool needed = IsGraphOutput(graph_, old) || !ir::SubgraphReaders(graph_, old).empty();
    const std::vector<ir::Node*> readers = old->consumers();
    for (ir::Node* c : readers) {
      if (c->owner() != &graph_) continue;  // a subgraph's node: counted by SubgraphReaders
      if (auto it = plan_.find(c); it != plan_.end()) {  // reads `w` once rewritten, where it reads `old` in float32
        for (size_t j = 0; j < c->num_inputs(); ++j) needed = needed || (c->input(j) == old && !it->second.inputs[j]);
        continue;
      }
      if (BypassableReader(c)) {
        if (IsGraphOutput(graph_, c->output(0))) {  // the output keeps its name: an Identity of `w` writes it
          ir::Rebuild(c, "Identity", {w}, {c->output(0)}, {});
        } else {
          ir::ReplaceAllUses(graph_, c->output(0), w);
          check_.insert(c);
        }
        continue;
      }
      needed = true;
    }
    if (!needed) {
      orphans_.push_back(old);
      return;
    }
    b_.AddNode(old->name() + "_to_" + std::string(DataTypeName(half)), "Cast", {w}, {old},
               {IntAttr("to", static_cast<int64_t>(half))});
  }

  void Rewrite() {
    std::vector<ir::Node*> order;
    for (const auto& n : graph_.nodes()) order.push_back(n.get());
    for (ir::Node* n : order) {
      auto it = plan_.find(n);
      if (it == plan_.end()) continue;
      const Twin twin = std::move(it->second);
      plan_.erase(it);  // before Rebuild frees `n`: the plan holds only nodes still to rewrite
      std::vector<ir::Value*> inputs = n->inputs(), outputs = n->outputs();
      for (size_t i = 0; i < inputs.size(); ++i) {
        if (twin.inputs[i]) inputs[i] = Float32Of(inputs[i]);
      }
      std::vector<std::pair<ir::Value*, DataType>> widened_outputs;
      for (size_t i = 0; i < outputs.size(); ++i) {
        if (twin.outputs[i] == DataType::kUndefined) continue;
        ir::Value* old = outputs[i];
        outputs[i] = b_.AddValue(old->name() + "_float32", ir::TypeInfo::Tensor(DataType::kFloat, old->type().shape));
        float32_[old] = outputs[i];
        widened_outputs.push_back({old, twin.outputs[i]});
      }
      ir::Rebuild(n, n->op_type(), std::move(inputs), std::move(outputs), n->attributes());
      for (const auto& [old, half] : widened_outputs) CastBack(old, float32_.at(old), half);
    }
    // What the rewrite left unread: bypassed Casts and widened Constant nodes, half outputs no Cast writes back,
    // half initializers.
    for (const ir::Value* v : widened_) {
      if (ir::Node* p = v->producer(); p && p->owner() == &graph_) check_.insert(p);
    }
    for (ir::Node* p : check_) {
      bool read = false;
      for (const ir::Value* v : p->outputs()) read = read || (v && IsRead(graph_, v));
      if (read || ctx_.Frozen(*p)) continue;
      std::vector<ir::Value*> outs = p->outputs();
      graph_.RemoveNode(p);
      for (ir::Value* v : outs) {
        if (v) graph_.RemoveValue(v);
      }
    }
    for (ir::Value* v : orphans_) {
      if (!v->producer() && !IsRead(graph_, v)) graph_.RemoveValue(v);
    }
    RemoveUnreadInitializers(graph_, widened_);
    graph_.TopologicalSort();
  }

  ir::Graph& graph_;
  const PassContext& ctx_;
  ir::Builder b_;
  int64_t opset_;
  std::unordered_map<const ir::Node*, Twin> plan_;          // nodes computing in float32, until rewritten
  std::unordered_map<const ir::Value*, ir::Value*> float32_;  // half value -> the float32 value converted nodes read
  std::vector<ir::Value*> widened_;                           // half constants given a float32 initializer
  std::vector<ir::Value*> orphans_;                           // half outputs no Cast writes back
  std::set<ir::Node*> check_;                                 // nodes removed when nothing reads them any more
};

bool ConvertGraph(ir::Graph& graph, const PassContext& ctx, ir::NameScope& names, int64_t opset) {
  bool changed = Converter(graph, ctx, names, opset).Run();
  std::vector<ir::Node*> holders;
  for (const auto& n : graph.nodes()) {
    if (!n->subgraphs().empty()) holders.push_back(n.get());
  }
  for (ir::Node* n : holders) {
    for (ir::Graph* sub : n->mutable_subgraphs()) changed |= ConvertGraph(*sub, ctx, names, opset);
  }
  return changed;
}

class ComputeInFloat32 : public Pass {
 public:
  std::string_view name() const override { return "compute_in_float32"; }
  int level() const override { return 1; }
  std::string_view summary() const override {
    return "For target backends: float16/bfloat16 nodes whose float32 twin runs on a better backend compute in "
           "float32 (half weights converted once, data movement carrying float32 through, Casts only where half is "
           "read: graph inputs and outputs, nodes run in half). Identity: none exact; results are closer to exact "
           "than half compute.";
  }

  bool Apply(ir::Model& model, const PassContext& ctx) const override {
    if (ctx.backends.empty() || !model.graph) return false;
    int64_t opset = 0;
    for (const char* domain : {"", "ai.onnx"}) {
      if (auto it = model.opsets.find(domain); it != model.opsets.end()) opset = it->second;
    }
    if (opset <= 0) return false;
    ir::NameScope names(model);
    return ConvertGraph(*model.graph, ctx, names, opset);
  }
};

}  // namespace

std::unique_ptr<Pass> MakeComputeInFloat32() { return std::make_unique<ComputeInFloat32>(); }

}  // namespace ferry::passes
