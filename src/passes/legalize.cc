// Legalize (level 0, only when asked: PassContext::legalize, `--legalize`): rewrites each node that no target
// backend has a kernel for into standard ONNX ops some target backend runs, when a decomposition exists
// (src/legalize/: LayerNormalization, Gelu, HardSwish, Mish, Softplus, GroupNormalization, RMSNormalization,
// RotaryEmbedding, Attention, and Ferry's fused ops), again on what the rewrites made until nothing changes.
// Identity: each decomposition is its op's definition written in primitives (results differ by float rounding
// only). Level 0 so that it runs at every level, -O0 included, once asked; first, so the passes after it see (and
// may fuse for the backends that run them) the primitives. A supported node, or a frozen (pinned) one, is never
// rewritten; without target backends (portable mode) the pass does nothing.
#include "legalize/legalize.h"
#include "passes/pass_list.h"

namespace ferry::passes {
namespace {

class Legalize : public Pass {
 public:
  std::string_view name() const override { return "legalize"; }
  int level() const override { return 0; }
  std::string_view summary() const override {
    return "Only with --legalize: rewrites nodes no target backend has a kernel for into standard ONNX ops they "
           "run (LayerNormalization, Gelu, Mish, Attention, ... -> primitives). Identity: each op's definition.";
  }

  bool Apply(ir::Model& model, const PassContext& ctx) const override {
    if (!ctx.legalize || ctx.backends.empty()) return false;
    const legalize::LegalizeTarget target{ctx.backends, ctx.target};
    return legalize::Legalize(model, target, [&](const ir::Node& n) { return ctx.Frozen(n); }).rewritten > 0;
  }
};

}  // namespace

std::unique_ptr<Pass> MakeLegalize() { return std::make_unique<Legalize>(); }

}  // namespace ferry::passes
