// FoldConstants (level 1): evaluates, once, the nodes whose every input is a constant (an initializer that is no
// graph input, or a Constant node's value) with the ref backend's kernels, and makes their outputs initializers of
// the same names; Constant nodes themselves become initializers. Shape(x) (with opset 15's start/end) and Size(x)
// fold when x's dims are all static, even though x is computed: so Shape -> Gather -> Concat -> Reshape shape
// computations of static-shape models fold to a constant shape.
// Identity: a deterministic op applied to constants gives the same result at every run; the shape of a value with
// static dims is those dims (the session rejects inputs of other shapes). Results are ref's, the oracle's.
// Never folded: random ops and Dropout (nondeterministic), nodes with subgraphs, ops of other domains than ai.onnx,
// frozen nodes, nodes whose outputs are all unread (eliminate_dead_nodes removes those), outputs that are not
// plain tensors or whose static shape is unknown (their size cannot be bounded before running), and nodes whose
// kernel throws (skipped, never reported). Size cap: an output larger than kMaxFoldedBytes and than the largest
// constant input is not made (a transposed or cast weight is, an Expand or ConstantOfShape blow-up is not).
// Runs to a fixed point: a folded output may make its readers foldable. A folded graph output stays a graph output,
// now an initializer of that name (which ONNX export writes and import reads back).
#include <algorithm>
#include <cstdint>
#include <unordered_set>

#include "backends/backend.h"
#include "kernels/evaluate_node.h"
#include "passes/cleanup_util.h"
#include "passes/pass_list.h"
#include "passes/rewrite_util.h"

namespace ferry::passes {
namespace {

// The largest output a fold may make when it is also larger than every constant input of the node.
constexpr int64_t kMaxFoldedBytes = int64_t{1} << 20;

bool IsOnnx(const ir::Node& n) { return n.domain().empty() || n.domain() == "ai.onnx"; }

bool IsOp(const ir::Node& n, const char* op) { return IsOnnx(n) && n.op_type() == op; }

// Bytes a tensor of `v`'s static type takes, or nullopt when its shape is unknown (or absurd); an unknown dtype
// counts 8 bytes an element.
std::optional<int64_t> StaticBytes(const ir::Value* v) {
  const auto dims = KnownStaticShape(v);
  if (!dims) return std::nullopt;
  try {
    const int64_t n = ShapeElementCount(*dims);
    const int bits = v->type().elem_type == DataType::kUndefined ? 64 : DataTypeBits(v->type().elem_type);
    const int64_t per = std::max(1, bits / 8);
    if (n > (int64_t{1} << 50) / per) return std::nullopt;
    return n * per;
  } catch (const Error&) {
    return std::nullopt;
  }
}

// Shape(x) or Size(x) of an x whose dims are all static, as the ref kernels compute them.
std::optional<Tensor> StaticShapeOf(const ir::Node& n) {
  const bool is_shape = IsOp(n, "Shape"), is_size = IsOp(n, "Size");
  if ((!is_shape && !is_size) || n.num_inputs() != 1 || !n.output(0)) return std::nullopt;
  const auto dims = KnownStaticShape(n.input(0));
  if (!dims) return std::nullopt;
  const int64_t rank = static_cast<int64_t>(dims->size());
  if (is_size) {
    int64_t count = 1;
    for (int64_t d : *dims) {
      if (d != 0 && count > INT64_MAX / d) return std::nullopt;
      count *= d;
    }
    return Tensor::FromVector<int64_t>(DataType::kInt64, {}, {count});
  }
  auto clamp = [rank](int64_t v) { return std::clamp<int64_t>(v < 0 ? v + rank : v, 0, rank); };
  const ir::Attribute* start_attr = n.attr("start");
  const ir::Attribute* end_attr = n.attr("end");
  if ((start_attr && start_attr->type != ir::AttrType::kInt) || (end_attr && end_attr->type != ir::AttrType::kInt)) {
    return std::nullopt;
  }
  const int64_t start = start_attr ? clamp(start_attr->i) : 0;
  const int64_t end = end_attr ? clamp(end_attr->i) : rank;
  const std::vector<int64_t> slice(dims->begin() + start, dims->begin() + std::max(start, end));
  return Tensor::FromVector<int64_t>(DataType::kInt64, {static_cast<int64_t>(slice.size())}, slice);
}

class FoldConstants : public Pass {
 public:
  std::string_view name() const override { return "fold_constants"; }
  int level() const override { return 1; }
  std::string_view summary() const override {
    return "Evaluates nodes whose inputs are all constants (and Shape/Size of static shapes) once, with the ref "
           "kernels, into initializers. Identity: a deterministic op of constants gives the same result every run.";
  }

  bool Apply(ir::Model& model, const PassContext& ctx) const override {
    const Backend* ref = FindBackend("ref");
    if (!ref) return false;
    ir::Graph& g = *model.graph;
    std::unordered_set<const ir::Node*> refused;  // evaluated and not folded: not tried again
    bool changed = false;
    for (bool again = true; again;) {
      again = false;
      std::vector<ir::Node*> nodes;
      for (const auto& n : g.nodes()) nodes.push_back(n.get());
      for (ir::Node* n : nodes) {
        if (refused.count(n) || !Candidate(g, ctx, *n)) continue;
        std::optional<std::vector<Tensor>> results = Evaluate(g, *ref, *n);
        if (!results) {
          refused.insert(n);
          continue;
        }
        Replace(g, n, std::move(*results));
        again = changed = true;
      }
    }
    return changed;
  }

 private:
  // Whether `n` may be folded, before evaluating it.
  static bool Candidate(const ir::Graph& g, const PassContext& ctx, const ir::Node& n) {
    if (!IsOnnx(n) || ctx.Frozen(n) || !n.subgraphs().empty() || IsNondeterministic(n) || n.num_outputs() == 0) {
      return false;
    }
    bool read = false;
    for (const ir::Value* v : n.outputs()) read = read || (v && IsRead(g, v));
    if (!read) return false;
    if (StaticShapeOf(n)) return true;
    for (const ir::Value* v : n.inputs()) {
      if (v && !ConstantTensor(g, v)) return false;
    }
    return true;
  }

  // The node's outputs (an undefined Tensor for an omitted one), or nullopt when it is not to be folded.
  static std::optional<std::vector<Tensor>> Evaluate(const ir::Graph& g, const Backend& ref, const ir::Node& n) {
    if (std::optional<Tensor> t = StaticShapeOf(n)) return std::vector<Tensor>{std::move(*t)};
    const bool is_constant = IsOp(n, "Constant");
    if (is_constant) {  // the value as it is, whatever its size: no new data is made
      if (const Tensor* t = ConstantTensor(g, n.output(0))) return std::vector<Tensor>{*t};
    }
    int64_t largest_input = 0;
    std::vector<Value> values;
    values.reserve(n.num_inputs());
    for (const ir::Value* v : n.inputs()) {
      const Tensor* t = v ? ConstantTensor(g, v) : nullptr;
      values.push_back(t ? Value(*t) : Value());
      if (t) largest_input = std::max(largest_input, static_cast<int64_t>(t->nbytes()));
    }
    auto too_big = [&](int64_t bytes) { return !is_constant && bytes > kMaxFoldedBytes && bytes > largest_input; };
    for (const ir::Value* v : n.outputs()) {
      if (!v || is_constant) continue;
      const auto bytes = StaticBytes(v);
      if (!bytes || too_big(*bytes)) return std::nullopt;  // unknown size: it could be anything
    }
    std::vector<const Value*> inputs;
    for (size_t i = 0; i < values.size(); ++i) inputs.push_back(n.input(i) ? &values[i] : nullptr);
    std::vector<Value> outs;
    try {
      outs = EvaluateNode(ref.kernels(), n, inputs);
    } catch (const std::exception&) {
      return std::nullopt;  // the kernel refused: the node stays, and the session reports it as usual
    }
    std::vector<Tensor> results(n.num_outputs());
    for (size_t i = 0; i < outs.size() && i < results.size(); ++i) {
      if (!n.output(i)) continue;
      if (!outs[i].is_tensor() || outs[i].is_optional()) return std::nullopt;
      Tensor t = outs[i].tensor();
      if (too_big(static_cast<int64_t>(t.nbytes()))) return std::nullopt;
      // A result sharing a larger buffer (a view) would keep that buffer alive: copy it out.
      if (!t.buffer_unique() && static_cast<int64_t>(t.nbytes()) < largest_input) t = t.Clone();
      results[i] = std::move(t);
    }
    return results;
  }

  // Replaces `n` by initializers holding `results`, under its outputs' names.
  static void Replace(ir::Graph& g, ir::Node* n, std::vector<Tensor> results) {
    const std::vector<ir::Value*> ins = n->inputs(), outs = n->outputs();
    g.RemoveNode(n);
    for (size_t i = 0; i < outs.size(); ++i) {
      ir::Value* v = outs[i];
      if (!v) continue;
      if (!IsRead(g, v)) {
        g.RemoveValue(v);
        continue;
      }
      Tensor& t = results[i];
      v->set_type(ir::StaticTensorType(t.dtype(), t.shape()));
      g.AddInitializer(v->name(), std::make_shared<const Tensor>(std::move(t)));
    }
    RemoveUnreadInitializers(g, ins);
  }
};

}  // namespace

std::unique_ptr<Pass> MakeFoldConstants() { return std::make_unique<FoldConstants>(); }

}  // namespace ferry::passes
