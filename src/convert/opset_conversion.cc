// The opset converter's driver: clones the model, walks every default-domain node (subgraphs and functions too),
// steps each across the schema version boundaries between its opset and the target with the registered adapter
// or the generic rule (adapter.h), converts the helper nodes adapters add the same way, and on success moves the
// converted graphs into the caller's model. Errors are collected per node and reported together.
#include "convert/opset_conversion.h"

#include <algorithm>
#include <deque>
#include <set>
#include <unordered_map>

#include "convert/adapter.h"
#include "ir/clone_model.h"
#include "ferry/error.h"

namespace ferry::convert {
namespace {

// The IR version of the ONNX release that introduced each opset: converting up raises ir_version to it (an older
// IR may not carry the opset); converting down lowers ir_version to it, so that runtimes of that release load the
// model, unless the model uses something a newer IR introduced (IrNeeded).
int64_t ReleaseIrVersion(int64_t opset) {
  if (opset <= 8) return 3;
  if (opset == 9) return 4;
  if (opset == 10) return 5;
  if (opset == 11) return 6;
  if (opset <= 14) return 7;
  if (opset <= 18) return 8;
  if (opset <= 20) return 9;
  if (opset <= 22) return 10;
  return 11;
}

// The IR version the model's contents need: float8 element types came with IR 9, int4/uint4 with 10; newer
// element types keep the model's own version.
int64_t IrNeeded(const ir::Graph& g, int64_t current) {
  int64_t need = 3;
  for (const auto& v : g.values()) {
    const DataType t = v->type().elem_type;
    if (t >= DataType::kFloat8E4M3FN && t <= DataType::kFloat8E5M2FNUZ) need = std::max<int64_t>(need, 9);
    if (t == DataType::kUint4 || t == DataType::kInt4) need = std::max<int64_t>(need, 10);
    if (static_cast<int32_t>(t) > static_cast<int32_t>(DataType::kInt4)) need = std::max(need, current);
  }
  for (const auto& n : g.nodes()) {
    for (const ir::Graph* sub : n->subgraphs()) need = std::max(need, IrNeeded(*sub, current));
  }
  return need;
}

int64_t IrNeeded(const ir::Model& m) {
  int64_t need = m.graph ? IrNeeded(*m.graph, m.ir_version) : 3;
  for (const auto& f : m.functions) {
    if (!f.overload.empty()) need = std::max<int64_t>(need, 10);
    if (!f.attribute_defaults.empty()) need = std::max<int64_t>(need, 9);
    if (f.body) need = std::max(need, IrNeeded(*f.body, m.ir_version));
  }
  return need;
}

void CollectNodes(ir::Graph& g, std::vector<ir::Node*>& out) {
  for (const auto& n : g.nodes()) {
    if (n->domain().empty()) out.push_back(n.get());
    for (ir::Graph* sub : n->mutable_subgraphs()) CollectNodes(*sub, out);
  }
}

// What an adapter may change about a node, to count only the nodes it rewrote.
std::string Fingerprint(const ir::Node& n) {
  std::string s = n.op_type() + "(";
  for (const ir::Value* v : n.inputs()) s += (v ? v->name() : std::string()) + ",";
  s += ")->(";
  for (const ir::Value* v : n.outputs()) s += (v ? v->name() : std::string()) + ",";
  s += ")";
  for (const ir::Attribute& a : n.attributes()) s += " " + a.name + "=" + AttrValueString(a);
  return s;
}

void SortAll(ir::Graph& g) {
  g.TopologicalSort();
  for (const auto& n : g.nodes()) {
    for (ir::Graph* sub : n->mutable_subgraphs()) SortAll(*sub);
  }
}

class Converter {
 public:
  Converter(ir::Model& model, int64_t to) : ctx_(model), to_(to) {}

  void Run(OpsetConversion& report) {
    std::vector<ir::Node*> nodes;
    if (ctx_.model().graph) CollectNodes(*ctx_.model().graph, nodes);
    for (auto& f : ctx_.model().functions) {
      if (f.body && f.opsets.count("")) CollectNodes(*f.body, nodes);
    }
    report.nodes = static_cast<int>(nodes.size());
    std::deque<std::pair<ir::Node*, std::string>> work;  // node, and the node it helps ("" for model nodes)
    for (ir::Node* n : nodes) work.emplace_back(n, "");
    while (!work.empty()) {
      auto [n, origin] = work.front();
      work.pop_front();
      const std::string who = origin.empty() ? n->Describe() : origin;
      std::set<std::string> used;
      try {
        Convert(n, used);
      } catch (const Unconvertible& u) {
        std::string e = who + ": cannot be expressed in opset " + std::to_string(to_) + ": ";
        if (!origin.empty()) e += "its helper " + n->op_type() + ": ";
        errors_.push_back(e + u.reason);
      }
      for (ir::Node* h : ctx_.TakeAdded()) {
        work.emplace_back(h, who);
        ++report.nodes_added;
      }
      if (origin.empty() && !used.empty()) ++report.nodes_changed;
      if (origin.empty()) {
        for (const auto& a : used) ++report.by_adapter[a];
      }
    }
    ctx_.RemoveOrphans();
  }

  const std::vector<std::string>& errors() const { return errors_; }

 private:
  // The next boundary between the node's opset and the target; false when the node's schema is the target's.
  bool NextStep(const ir::Node& n, Step& step) {
    const auto& reg = schemas::SchemaRegistry::Get();
    const auto versions = reg.Versions(n.domain(), n.op_type());
    if (versions.empty()) Refuse("unknown operator " + n.op_type());
    const int64_t cur = n.opset();
    const schemas::OpSchema* here = reg.Find(n.domain(), n.op_type(), cur);
    if (!here) Refuse(n.op_type() + " does not exist in opset " + std::to_string(cur));
    step = Step{};
    step.target = to_;
    const ir::Graph* root = n.owner();
    while (root->parent()) root = root->parent();
    step.in_function = root != ctx_.model().graph.get();
    if (to_ > cur) {
      for (const schemas::OpSchema* v : versions) {
        if (v->since_version > cur && v->since_version <= to_) {
          step.up = true;
          step.boundary = v->since_version;
          step.older = here;
          step.newer = v;
          return true;
        }
      }
      return false;
    }
    if (here->since_version <= to_) return false;
    step.up = false;
    step.boundary = here->since_version;
    step.newer = here;
    step.older = here->since_version > 1 ? reg.Find(n.domain(), n.op_type(), here->since_version - 1) : nullptr;
    return true;
  }

  void Convert(ir::Node* n, std::set<std::string>& used) {
    const auto& reg = schemas::SchemaRegistry::Get();
    Step step;
    while (n && n->opset() != to_) {
      if (!NextStep(*n, step)) {
        n->set_opset(to_);
        break;
      }
      const Adapter* a = Adapters().Find(n->op_type(), step.boundary);
      const AdaptFn fn = a ? (step.up ? a->up : a->down) : nullptr;
      if (!fn) {
        if (GenericStep(*n, step)) used.insert("generic");
        n->set_opset(step.after());
        continue;
      }
      const std::string op = n->op_type();
      const std::string before = Fingerprint(*n);
      ir::Node* r = fn(ctx_, n, step);
      if (!r || Fingerprint(*r) != before) used.insert(a->name);
      if (r) {
        r->set_opset(step.after());
        const schemas::OpSchema* s = reg.Find(r->domain(), r->op_type(), step.after());
        if (!s) Refuse(r->op_type() + " does not exist in opset " + std::to_string(step.after()));
        CheckNodeAt(*r, *s, r->op_type() == op && !step.in_function ? step.from() : nullptr);
      }
      n = r;
    }
  }

  ConversionContext ctx_;
  int64_t to_;
  std::vector<std::string> errors_;
};

}  // namespace

OpsetConversion ConvertOpset(ir::Model& model, int64_t to) {
  const int64_t max = schemas::SchemaRegistry::Get().MaxOpset("");
  const std::string range = std::to_string(kMinConvertibleOpset) + ".." + std::to_string(max);
  if (to < kMinConvertibleOpset || to > max) {
    throw InvalidArgumentError("--opset " + std::to_string(to) + ": Ferry converts between opsets " + range);
  }
  OpsetConversion report;
  auto it = model.opsets.find("");
  report.from = it == model.opsets.end() ? to : it->second;
  report.to = to;
  if (report.from < kMinConvertibleOpset || report.from > max) {
    throw InvalidArgumentError(model.Describe() + ": imports opset " + std::to_string(report.from) +
                               " of ai.onnx; Ferry converts between opsets " + range);
  }
  auto work = ir::CloneModel(model);
  Converter converter(*work, to);
  converter.Run(report);
  if (!converter.errors().empty()) {
    std::string msg = model.Describe() + ": cannot convert from opset " + std::to_string(report.from) + " to " +
                      std::to_string(to) + ": " + std::to_string(converter.errors().size()) + " node" +
                      (converter.errors().size() == 1 ? "" : "s") + " cannot be expressed:";
    for (const auto& e : converter.errors()) msg += "\n  " + e;
    throw InvalidArgumentError(msg);
  }
  if (work->graph) SortAll(*work->graph);
  work->opsets[""] = to;
  for (auto& f : work->functions) {
    if (f.opsets.count("")) f.opsets[""] = to;
    if (f.body) SortAll(*f.body);
  }
  if (to > report.from) {
    work->ir_version = std::max(work->ir_version, ReleaseIrVersion(to));
  } else if (to < report.from) {
    work->ir_version = std::min(work->ir_version, std::max(ReleaseIrVersion(to), IrNeeded(*work)));
  }
  model = std::move(*work);
  return report;
}

std::string FormatOpsetConversion(const OpsetConversion& c) {
  std::string s = "opset " + std::to_string(c.from) + " -> " + std::to_string(c.to) + ": " +
                  std::to_string(c.nodes_changed) + " of " + std::to_string(c.nodes) + " nodes rewritten";
  if (!c.by_adapter.empty()) {
    s += " (";
    bool first = true;
    for (const auto& [name, n] : c.by_adapter) {
      s += (first ? "" : ", ") + name + " " + std::to_string(n);
      first = false;
    }
    s += ")";
  }
  if (c.nodes_added) s += ", " + std::to_string(c.nodes_added) + " helper nodes added";
  return s;
}

}  // namespace ferry::convert
