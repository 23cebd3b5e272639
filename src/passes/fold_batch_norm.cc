// FoldBatchNorm (level 2): Conv(X, W, B) -> BatchNormalization(·, scale, bias, mean, var) in inference mode
// => Conv(X, W', B'), and the same for ConvTranspose. Standard ONNX in, standard ONNX out: it also runs without
// target backends, and the new convolution (same op, opset and attributes) goes wherever the old one went.
// Identity: with a[m] = scale[m] / sqrt(var[m] + epsilon) for output channel m,
//   BN(conv(X, W) + B) = a * (conv(X, W) + B - mean) + bias = conv(X, a * W) + (B - mean) * a + bias,
// since a convolution is linear in each output channel's weights: W'[m] = a[m] W[m] (Conv's W is [M, C/group,
// k...]; ConvTranspose's is [C, M/group, k...], where output channel m = g * M/group + j of group g is
// W[g * C/group .. (g+1) * C/group - 1, j]), B'[m] = (B[m] - mean[m]) a[m] + bias[m] (B = 0 when absent).
// Exact up to rounding: W' and B' are computed in double and rounded once to the weights' type.
// Only when W (and B) and the four BN parameters are constants (per channel: M elements each), the weights are
// float or double, the conv output is read by the BN alone (and is no graph output), the BN runs in inference
// mode (the ref kernel's rule: opset >= 14 training_mode = 0; before, no running-statistics output asked for,
// or is_test = 1 up to opset 6) and neither node is frozen. W' and B' are new initializers (W and B may be shared
// with another node); the replaced initializers nothing reads any more are removed.
#include <cmath>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "passes/cleanup_util.h"
#include "passes/pass_list.h"
#include "passes/rewrite_util.h"

namespace ferry::passes {
namespace {

bool IsFloatOrDouble(DataType t) { return t == DataType::kFloat || t == DataType::kDouble; }

double At(const Tensor& t, int64_t i) {
  return t.dtype() == DataType::kFloat ? static_cast<double>(t.data<float>()[i]) : t.data<double>()[i];
}

void Set(Tensor& t, int64_t i, double v) {
  if (t.dtype() == DataType::kFloat) {
    t.data<float>()[i] = static_cast<float>(v);
  } else {
    t.data<double>()[i] = v;
  }
}

// A matched Conv / ConvTranspose -> BN pair and what the fold computes from.
struct Fold {
  ir::Node* conv = nullptr;
  ir::Node* bn = nullptr;
  const Tensor* w = nullptr;
  const Tensor* b = nullptr;  // null: the conv has no bias
  const Tensor* params[4] = {};  // scale, bias, mean, var
  double epsilon = 1e-5;
  int64_t m = 0;                 // output channels
  int64_t group = 1;
};

bool Match(const ir::Graph& g, ir::Node* bn, Fold* f) {
  if (bn->num_inputs() != 5 || !bn->input(0) || !BatchNormInferenceMode(g, *bn)) return false;
  ir::Value* y = bn->input(0);
  ir::Node* conv = y->producer();
  const bool transpose = IsOp(conv, "ConvTranspose");
  if (!(IsOp(conv, "Conv") || transpose) || conv->owner() != &g || SoleConsumer(g, y) != bn) return false;
  if (conv->num_outputs() != 1 || conv->num_inputs() < 2 || conv->num_inputs() > 3) return false;
  const Tensor* w = ConstantTensor(g, conv->input(1));
  const Tensor* b = conv->input(2) ? ConstantTensor(g, conv->input(2)) : nullptr;
  if (!w || !IsFloatOrDouble(w->dtype()) || w->rank() < 3 || (conv->input(2) && !b)) return false;
  if (b && (b->dtype() != w->dtype() || b->rank() != 1)) return false;
  const ir::Value* x = conv->input(0);
  if (!x || (x->type().elem_type != w->dtype() && x->type().elem_type != DataType::kUndefined)) return false;
  const auto group = IntAttrOr(*conv, "group", 1);
  if (!group || *group < 1) return false;
  int64_t m = w->dim(0);
  if (transpose) {
    if (w->dim(0) % *group != 0) return false;
    m = w->dim(1) * *group;
  }
  if (m <= 0 || (b && b->size() != m)) return false;
  Fold r{conv, bn, w, b, {}, 1e-5, m, *group};
  for (int i = 0; i < 4; ++i) {
    const Tensor* t = ConstantTensor(g, bn->input(static_cast<size_t>(i) + 1));
    if (!t || !IsFloatOrDouble(t->dtype()) || t->size() != m) return false;
    r.params[i] = t;
  }
  if (const ir::Attribute* eps = bn->attr("epsilon")) {
    if (eps->type != ir::AttrType::kFloat) return false;
    r.epsilon = eps->f;
  }
  // Ferry's BN kernels add epsilon as a float: so does the fold.
  r.epsilon = static_cast<double>(static_cast<float>(r.epsilon));
  *f = r;
  return true;
}

// W' and B' of a match.
void Compute(const Fold& f, Tensor* w_out, Tensor* b_out) {
  std::vector<double> a(static_cast<size_t>(f.m)), shift(static_cast<size_t>(f.m));
  for (int64_t m = 0; m < f.m; ++m) {
    const double scale = At(*f.params[0], m), bias = At(*f.params[1], m);
    const double mean = At(*f.params[2], m), var = At(*f.params[3], m);
    const double s = scale / std::sqrt(var + f.epsilon);
    a[static_cast<size_t>(m)] = s;
    shift[static_cast<size_t>(m)] = ((f.b ? At(*f.b, m) : 0.0) - mean) * s + bias;
  }
  const Tensor& w = *f.w;
  *w_out = Tensor(w.dtype(), w.shape());
  int64_t kernel = 1;  // elements per [row, column] pair
  for (int64_t d = 2; d < w.rank(); ++d) kernel *= w.dim(d);
  const bool transpose = f.conv->op_type() == "ConvTranspose";
  const int64_t in_per_group = w.dim(0) / f.group, out_per_group = w.dim(1);
  for (int64_t r = 0; r < w.dim(0); ++r) {
    for (int64_t c = 0; c < w.dim(1); ++c) {
      const int64_t channel = transpose ? (r / in_per_group) * out_per_group + c : r;
      const double s = a[static_cast<size_t>(channel)];
      const int64_t base = (r * w.dim(1) + c) * kernel;
      for (int64_t k = 0; k < kernel; ++k) Set(*w_out, base + k, At(w, base + k) * s);
    }
  }
  *b_out = Tensor(w.dtype(), {f.m});
  for (int64_t m = 0; m < f.m; ++m) Set(*b_out, m, shift[static_cast<size_t>(m)]);
}

// `base`_folded (without doubling the suffix when a folded weight is folded again), unique in `g`.
std::string FoldedName(const ir::Graph& g, std::string base) {
  constexpr std::string_view kSuffix = "_folded";
  if (base.size() > kSuffix.size() && base.ends_with(kSuffix)) base.resize(base.size() - kSuffix.size());
  return g.UniqueValueName(base + std::string(kSuffix));
}

class FoldBatchNorm : public Pass {
 public:
  std::string_view name() const override { return "fold_batch_norm"; }
  int level() const override { return 2; }
  std::string_view summary() const override {
    return "Conv or ConvTranspose(X, W, B) -> BatchNormalization (inference, constant parameters) => Conv(X, W', "
           "B'). Identity: with a = scale / sqrt(var + eps) per output channel, W' = a W and B' = (B - mean) a + "
           "bias; exact up to rounding.";
  }

  bool Apply(ir::Model& model, const PassContext& ctx) const override {
    ir::Graph& g = *model.graph;
    std::vector<ir::Node*> bns;
    for (const auto& n : g.nodes()) {
      if (IsOp(n.get(), "BatchNormalization")) bns.push_back(n.get());
    }
    bool changed = false;
    for (ir::Node* bn : bns) {  // in topological order: Conv -> BN -> BN folds both in one run
      Fold f;
      if (ctx.Frozen(*bn) || !Match(g, bn, &f) || ctx.Frozen(*f.conv)) continue;
      auto w = std::make_shared<Tensor>();
      auto b = std::make_shared<Tensor>();
      Compute(f, w.get(), b.get());
      ir::Node* conv = f.conv;
      ir::Value* old_w = conv->input(1);
      ir::Value* old_b = conv->input(2);
      ir::Value* new_w = g.AddInitializer(FoldedName(g, old_w->name()), std::move(w));
      ir::Value* new_b = g.AddInitializer(FoldedName(g, old_b ? old_b->name() : conv->name() + "_bias"), std::move(b));
      std::vector<ir::Value*> stale{old_w, old_b};
      for (size_t i = 1; i < 5; ++i) stale.push_back(bn->input(i));
      ir::Value* x = conv->input(0);
      ir::Value* mid = conv->output(0);
      ir::Value* out = bn->output(0);
      std::vector<ir::Value*> dead_outputs;
      for (size_t i = 1; i < bn->num_outputs(); ++i) {
        if (bn->output(i)) dead_outputs.push_back(bn->output(i));
      }
      const std::string name = conv->name(), op = conv->op_type(), doc = conv->doc();
      const int64_t opset = conv->opset();
      std::vector<ir::Attribute> attrs = conv->attributes();
      g.RemoveNode(bn);
      g.RemoveNode(conv);
      g.RemoveValue(mid);
      for (ir::Value* v : dead_outputs) g.RemoveValue(v);
      ir::Node* folded = g.AddNode(name, op, "", {x, new_w, new_b}, {out}, std::move(attrs));
      folded->set_opset(opset);
      folded->set_doc(doc);
      RemoveUnreadInitializers(g, stale);
      changed = true;
    }
    if (changed) g.TopologicalSort();
    return changed;
  }
};

}  // namespace

std::unique_ptr<Pass> MakeFoldBatchNorm() { return std::make_unique<FoldBatchNorm>(); }

}  // namespace ferry::passes
