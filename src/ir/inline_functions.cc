#include "ir/inline_functions.h"

#include <algorithm>
#include <unordered_map>
#include <unordered_set>

#include "ferry/error.h"

namespace ferry::ir {
namespace {

constexpr int kMaxDepth = 64;
// Nodes a graph may have once its functions are inlined. Calls nested in each other multiply: a function calling
// another twice, 64 levels deep, is a few hundred bytes of model and 2^64 nodes, so the bound (far above any real
// model's node count) is what keeps such a file from exhausting memory.
constexpr int64_t kMaxInlinedNodes = int64_t{1} << 20;

struct InlineState {
  int counter = 0;  // suffix making the names of inlined values unique
};

struct SizeWalk {
  const Model& model;
  std::unordered_map<const Function*, int64_t> sizes;  // nodes of a function's body once fully inlined
  std::unordered_set<const Function*> active;          // functions whose size is being computed (the call path)

  // Nodes `g` holds once every call in it and its subgraphs is inlined, saturating at kMaxInlinedNodes + 1.
  int64_t GraphSize(const Graph& g) {
    int64_t total = 0;
    for (const auto& n : g.nodes()) {
      const Function* f = model.FindFunction(n->domain(), n->op_type());
      total += f ? FunctionSize(*f) : 1;
      for (const Graph* sub : n->subgraphs()) total += GraphSize(*sub);
      total = std::min(total, kMaxInlinedNodes + 1);
    }
    return total;
  }
  int64_t FunctionSize(const Function& f) {
    if (auto it = sizes.find(&f); it != sizes.end()) return it->second;
    if (active.size() >= static_cast<size_t>(kMaxDepth)) {  // the inlining rounds would stop there too
      throw InvalidModelError(model.Describe() + ": function calls nest deeper than " + std::to_string(kMaxDepth) +
                              " levels (at '" + f.name + "')");
    }
    if (!active.insert(&f).second) {
      throw InvalidModelError(model.Describe() + ": function '" + f.name +
                              "' calls itself (directly or through other functions); a recursive function cannot "
                              "be inlined");
    }
    const int64_t n = GraphSize(*f.body);
    active.erase(&f);
    sizes.emplace(&f, n);
    return n;
  }
};

const Attribute* FindAttr(const std::vector<Attribute>& attrs, const std::string& name) {
  for (const auto& a : attrs) {
    if (a.name == name) return &a;
  }
  return nullptr;
}

// Replaces `call` in `g` by a copy of `f`'s body. Returns the number of nodes added.
void InlineCall(const Model& model, Graph& g, Node* call, const Function& f, InlineState& state) {
  std::string prefix = call->name() + "/";
  std::unordered_map<const Value*, Value*> map;
  const auto& body_inputs = f.body->inputs();
  for (size_t i = 0; i < body_inputs.size(); ++i) map[body_inputs[i]] = call->input(i);
  std::unordered_map<const Value*, Value*> output_map;
  for (size_t i = 0; i < f.body->outputs().size(); ++i) output_map[f.body->outputs()[i]] = call->output(i);

  std::vector<Attribute> call_attrs = call->attributes();
  std::vector<Value*> call_outputs = call->outputs();
  g.RemoveNode(call);  // frees the outputs for the inlined producers

  for (const auto& bn : f.body->nodes()) {
    if (!bn->subgraphs().empty()) {
      throw UnsupportedError(model.Describe() + ": function '" + f.name + "' uses control flow (" + bn->Describe() +
                             "); inlining such functions is not supported yet");
    }
    std::vector<Value*> ins;
    for (const Value* v : bn->inputs()) {
      if (!v) {
        ins.push_back(nullptr);
        continue;
      }
      auto it = map.find(v);
      if (it == map.end()) {
        throw InvalidModelError(model.Describe() + ": function '" + f.name + "': " + bn->Describe() + " reads '" +
                                v->name() + "' which the body does not define");
      }
      ins.push_back(it->second);
    }
    std::vector<Value*> outs;
    for (const Value* v : bn->outputs()) {
      if (!v) {
        outs.push_back(nullptr);
        continue;
      }
      auto o = output_map.find(v);
      Value* nv = (o != output_map.end() && o->second) ? o->second
                                                       : g.AddValue(prefix + v->name() + "#" + std::to_string(state.counter++));
      map[v] = nv;
      outs.push_back(nv);
    }
    std::vector<Attribute> attrs;
    for (const auto& a : bn->attributes()) {
      if (a.ref_attr_name.empty()) {
        attrs.push_back(a);
        continue;
      }
      const Attribute* src = FindAttr(call_attrs, a.ref_attr_name);
      if (!src) src = FindAttr(f.attribute_defaults, a.ref_attr_name);
      if (!src) continue;  // optional attribute not given: the op's default applies
      Attribute copy = *src;
      copy.name = a.name;
      attrs.push_back(std::move(copy));
    }
    Node* nn = g.AddNode(prefix + bn->name(), bn->op_type(), bn->domain(), ins, outs, std::move(attrs));
    auto op = f.opsets.find(bn->domain());
    if (op != f.opsets.end()) {
      nn->set_opset(op->second);
    } else if (auto mo = model.opsets.find(bn->domain()); mo != model.opsets.end()) {
      nn->set_opset(mo->second);
    } else {
      nn->set_opset(bn->opset());
    }
  }
  // A function output that is directly a function input (or unproduced) needs an Identity.
  for (size_t i = 0; i < call_outputs.size(); ++i) {
    Value* out = call_outputs[i];
    if (!out || out->producer() || i >= f.body->outputs().size()) continue;
    auto it = map.find(f.body->outputs()[i]);
    if (it == map.end() || !it->second) {
      throw InvalidModelError(model.Describe() + ": function '" + f.name + "' does not produce output " +
                              std::to_string(i));
    }
    Node* id = g.AddNode(prefix + "output_" + std::to_string(i), "Identity", "", {it->second}, {out});
    id->set_opset(13);
  }
}

bool InlineGraph(const Model& model, Graph& g, InlineState& state) {
  bool changed = false;
  for (int depth = 0; depth < kMaxDepth; ++depth) {
    Node* call = nullptr;
    const Function* f = nullptr;
    for (const auto& n : g.nodes()) {
      if ((f = model.FindFunction(n->domain(), n->op_type()))) {
        call = n.get();
        break;
      }
    }
    if (!call) {
      for (const auto& n : g.nodes()) {
        for (Graph* sub : n->mutable_subgraphs()) changed |= InlineGraph(model, *sub, state);
      }
      if (changed) g.TopologicalSort();
      return changed;
    }
    // Inline every call of this round, then look again (bodies may call further functions).
    std::vector<std::pair<Node*, const Function*>> calls;
    for (const auto& n : g.nodes()) {
      if (const Function* fn = model.FindFunction(n->domain(), n->op_type())) calls.emplace_back(n.get(), fn);
    }
    for (auto& [c, fn] : calls) InlineCall(model, g, c, *fn, state);
    changed = true;
  }
  throw InvalidModelError(model.Describe() + ": function calls nest deeper than " + std::to_string(kMaxDepth) +
                          " levels (recursive functions?)");
}

}  // namespace

void InlineModelFunctions(Model& model) {
  if (model.functions.empty()) return;
  // The size of the result first: calls nested in each other multiply, and a graph that large would exhaust
  // memory (and time) on the way.
  SizeWalk size{model, {}, {}};
  if (size.GraphSize(*model.graph) > kMaxInlinedNodes) {
    throw ResourceExhaustedError(model.Describe() + ": inlining the model's functions would make more than " +
                                 std::to_string(kMaxInlinedNodes) + " nodes (calls nested in each other multiply)");
  }
  InlineState state;
  InlineGraph(model, *model.graph, state);
}

}  // namespace ferry::ir
