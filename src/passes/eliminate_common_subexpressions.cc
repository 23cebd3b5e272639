// EliminateCommonSubexpressions (level 1): two nodes of the same domain, op and opset reading the same values in
// the same order, with equal attributes, compute the same outputs: the later node goes and its readers read the
// earlier node's outputs. Identical small constant initializers (same dtype, shape and bytes, at most
// kMaxMergedElements elements; no graph inputs, which a feed may override, nor outputs) become one, first, so that
// nodes reading two copies of one constant (the axes of two Unsqueezes) are found equal.
// Identity: a deterministic op is a function of its inputs and attributes. Exact.
// Left alone: random ops and Dropout, nodes with subgraphs (bodies are not compared), frozen nodes, ops of domains
// other than ai.onnx, ai.onnx.ml and ai.ferry (a plugin's op may have state). When the later node's output is a
// graph output, the earlier node is rebuilt to write that name (skipped when the earlier output is graph-visible
// too). Readers inside subgraphs (outer-scope captures) are redirected too.
#include <algorithm>
#include <cstdint>
#include <map>
#include <string>
#include <unordered_map>

#include "passes/cleanup_util.h"
#include "passes/pass_list.h"
#include "passes/rewrite_util.h"
#include "schemas/schema.h"

namespace ferry::passes {
namespace {

// Initializers of more elements than this are not compared (weights are rarely duplicated, and comparing them is
// not free).
constexpr int64_t kMaxMergedElements = 64;

bool Mergeable(const ir::Node& n, const PassContext& ctx) {
  const std::string& d = n.domain();
  const bool known_domain = d.empty() || d == "ai.onnx" || d == "ai.onnx.ml" || d == schemas::kFerryDomain;
  return known_domain && !ctx.Frozen(n) && n.subgraphs().empty() && !IsNondeterministic(n) && n.num_outputs() > 0;
}

// Domain, op, opset, overload and the input values: what two equal nodes share exactly.
std::string Key(const ir::Node& n) {
  std::string k = n.domain() + '\n' + n.op_type() + '\n' + n.overload() + '\n' + std::to_string(n.opset()) + '\n' +
                  std::to_string(n.num_outputs());
  for (const ir::Value* v : n.inputs()) k += ' ' + std::to_string(reinterpret_cast<uintptr_t>(v));
  return k;
}

// Whether `later`'s read outputs all have a counterpart in `earlier`.
bool OutputsCover(const ir::Graph& g, const ir::Node& earlier, const ir::Node& later) {
  for (size_t i = 0; i < later.num_outputs(); ++i) {
    if (later.output(i) && !earlier.output(i) && IsRead(g, later.output(i))) return false;
  }
  return true;
}

class EliminateCommonSubexpressions : public Pass {
 public:
  std::string_view name() const override { return "eliminate_common_subexpressions"; }
  int level() const override { return 1; }
  std::string_view summary() const override {
    return "Merges nodes of one op, opset and attributes reading the same values, and identical small constant "
           "initializers; the later one's readers read the earlier one. Identity: deterministic ops are functions.";
  }

  bool Apply(ir::Model& model, const PassContext& ctx) const override {
    ir::Graph& g = *model.graph;
    bool changed = MergeInitializers(g, ctx);
    for (bool again = true; again;) {
      again = false;
      bool renamed = false;
      std::unordered_map<std::string, std::vector<ir::Node*>> seen;
      std::vector<ir::Node*> nodes;
      for (const auto& n : g.nodes()) nodes.push_back(n.get());
      for (ir::Node* n : nodes) {
        if (!Mergeable(*n, ctx)) continue;
        std::vector<ir::Node*>& same_inputs = seen[Key(*n)];
        ir::Node* match = nullptr;
        for (ir::Node* c : same_inputs) {
          if (SameAttributes(*c, *n) && OutputsCover(g, *c, *n) && Forwardable(g, ctx, *n, *c)) {
            match = c;
            break;
          }
        }
        if (!match) {
          same_inputs.push_back(n);
          continue;
        }
        renamed = Merge(g, n, match);
        again = changed = true;
        if (renamed) break;  // `match` was rebuilt: pointers in `seen` are stale
      }
      if (renamed) g.TopologicalSort();
    }
    return changed;
  }

 private:
  // Every read output of `later` can be forwarded to `earlier`'s.
  static bool Forwardable(const ir::Graph& g, const PassContext& ctx, const ir::Node& later,
                          const ir::Node& earlier) {
    for (size_t i = 0; i < later.num_outputs(); ++i) {
      const ir::Value* v = later.output(i);
      if (v && IsRead(g, v) && !CanForward(g, ctx, v, earlier.output(i))) return false;
    }
    return true;
  }

  // Removes `later`; its readers read `earlier`'s outputs. Returns true when `earlier` was rebuilt (Forward).
  static bool Merge(ir::Graph& g, ir::Node* later, ir::Node* earlier) {
    const std::vector<ir::Value*> from = later->outputs(), to = earlier->outputs();
    g.RemoveNode(later);
    bool rebuilt = false;
    for (size_t i = 0; i < from.size(); ++i) {
      if (!from[i]) continue;
      if (IsRead(g, from[i])) {
        rebuilt = Forward(g, from[i], to[i]) || rebuilt;
      } else {
        g.RemoveValue(from[i]);
      }
    }
    return rebuilt;
  }

  static bool MergeInitializers(ir::Graph& g, const PassContext& ctx) {
    std::map<std::pair<DataType, Shape>, std::vector<ir::Value*>> kept;
    const std::vector<ir::Value*> inits = g.initializers();
    bool changed = false;
    for (ir::Value* v : inits) {
      const Tensor* t = v->initializer();
      if (t->size() > kMaxMergedElements || IsGraphInput(g, v) || IsGraphOutput(g, v)) continue;
      std::vector<ir::Value*>& same_type = kept[{t->dtype(), t->shape()}];
      auto first = std::find_if(same_type.begin(), same_type.end(), [&](const ir::Value* k) {
        return TensorsEqual(*k->initializer(), *t) && CanForward(g, ctx, v, k);
      });
      if (first == same_type.end()) {
        same_type.push_back(v);
        continue;
      }
      Forward(g, v, *first);
      changed = true;
    }
    return changed;
  }
};

}  // namespace

std::unique_ptr<Pass> MakeEliminateCommonSubexpressions() {
  return std::make_unique<EliminateCommonSubexpressions>();
}

}  // namespace ferry::passes
