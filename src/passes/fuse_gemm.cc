// FuseGemm (level 2, portable mode only): MatMul(A, B) -> Add(·, C)  =>  Gemm(A, B, C), for a float 2-D A
// [M, K], a constant 2-D B [K, N] and a C unidirectionally broadcastable to [M, N] (rank <= 2, each dim 1 or the
// product's). Identity: Gemm with alpha = beta = 1 and no transposes is A B + C by definition; exact up to float
// re-association of the product. Runs only without target backends (`ferry optimize` with no --target), where it
// makes a linear layer one standard node; with a Ferry target, fuse_matmul makes an ai.ferry::FusedMatMul
// (which also takes an activation) instead. Only when the product has no other reader (and is no graph output),
// the Add broadcasts numpy-style (opset >= 7) and neither node is frozen.
#include "passes/pass_list.h"
#include "passes/rewrite_util.h"

namespace ferry::passes {
namespace {

bool SameDim(const ir::Dim& a, const ir::Dim& b) {
  return (a.is_static() && b.is_static() && a.value == b.value) ||
         (!a.is_static() && !b.is_static() && !a.symbol.empty() && a.symbol == b.symbol);
}

// C of the Add reading `y` (the product, dims [M, N]) when it broadcasts to [M, N] without changing the shape.
ir::Value* MatchBias(const ir::Node& add, const ir::Value* y, const std::vector<ir::Dim>& mn) {
  if (add.num_inputs() != 2 || add.opset() < 7 || (add.input(0) == y) == (add.input(1) == y)) return nullptr;
  ir::Value* c = add.input(0) == y ? add.input(1) : add.input(0);
  const auto dims = KnownDims(c);
  if (!DeclaresFloat(c) || !dims || dims->size() > 2 || !DeclaresFloat(add.output(0))) return nullptr;
  for (size_t i = 0; i < dims->size(); ++i) {  // aligned from the right
    const ir::Dim& d = (*dims)[i];
    const ir::Dim& want = mn[2 - dims->size() + i];
    if (!(d.is_static() && d.value == 1) && !SameDim(d, want)) return nullptr;
  }
  return c;
}

class FuseGemm : public Pass {
 public:
  std::string_view name() const override { return "fuse_gemm"; }
  int level() const override { return 2; }
  std::string_view summary() const override {
    return "Without target backends: MatMul(A, B) -> Add(., C) => Gemm(A, B, C) for a 2-D float A, a constant "
           "2-D B and C broadcastable to the product. Identity: Gemm's definition A B + C; exact up to float "
           "re-association.";
  }

  bool Apply(ir::Model& model, const PassContext& ctx) const override {
    if (!ctx.backends.empty()) return false;  // with a target, fuse_matmul makes FusedMatMul
    ir::Graph& g = *model.graph;
    std::vector<ir::Node*> matmuls;
    for (const auto& n : g.nodes()) {
      if (IsOp(n.get(), "MatMul") && n->num_inputs() == 2 && n->num_outputs() == 1) matmuls.push_back(n.get());
    }
    bool changed = false;
    for (ir::Node* mm : matmuls) {
      ir::Value* a = mm->input(0);
      ir::Value* y = mm->output(0);
      const auto a_dims = KnownDims(a);
      const Tensor* b = ConstantTensor(g, mm->input(1));
      if (!DeclaresFloat(a) || !a_dims || a_dims->size() != 2 || !b || b->dtype() != DataType::kFloat ||
          b->rank() != 2 || !DeclaresFloat(y) || ctx.Frozen(*mm)) {
        continue;
      }
      ir::Node* add = SoleConsumer(g, y);
      if (!IsOp(add, "Add") || ctx.Frozen(*add)) continue;
      const std::vector<ir::Dim> mn{(*a_dims)[0], ir::Dim::Static(b->dim(1))};
      ir::Value* c = MatchBias(*add, y, mn);
      if (!c) continue;
      ir::Value* out = add->output(0);
      const std::string name = mm->name();
      const int64_t opset = add->opset();  // the model's ai.onnx opset (>= 7: Gemm-7's broadcasting C)
      std::vector<ir::Value*> inputs{a, mm->input(1), c};
      g.RemoveNode(add);
      g.RemoveNode(mm);
      g.RemoveValue(y);
      ir::Builder(g, opset).AddNode(name, "Gemm", std::move(inputs), {out});
      changed = true;
    }
    if (changed) g.TopologicalSort();
    return changed;
  }
};

}  // namespace

std::unique_ptr<Pass> MakeFuseGemm() { return std::make_unique<FuseGemm>(); }

}  // namespace ferry::passes
