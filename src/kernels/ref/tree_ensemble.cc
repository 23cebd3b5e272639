// TreeEnsemble (ai.onnx.ml opset 5): the unified tree-ensemble op. Each tree starts at a node in tree_roots;
// node i compares X[:, nodes_featureids[i]] with nodes_splits[i] by nodes_modes[i] (0 LEQ, 1 LT, 2 GTE, 3 GT,
// 4 EQ, 5 NEQ, 6 MEMBER of the i-th NaN-separated set in membership_values; a NaN feature goes the true way when
// nodes_missing_value_tracks_true[i]) and follows nodes_true/falsenodeids, which name a leaf when
// nodes_true/falseleafs is set. Leaf j adds leaf_weights[j] to target leaf_targetids[j]; trees are combined by
// aggregate_function (0 AVERAGE, 1 SUM, 2 MIN, 3 MAX) and post_transform (0 NONE, 1 SOFTMAX, 2 LOGISTIC,
// 3 SOFTMAX_ZERO, 4 PROBIT) is applied per row. Output [N, n_targets]; targets no tree reaches stay 0.
// The tree structure is validated once at session creation (indices in range, no cycles), X's shape by Prepare.
#include <algorithm>
#include <cmath>
#include <limits>
#include <vector>

#include "kernels/kernel_def.h"
#include "kernels/ref/common.h"
#include "kernels/registry.h"

namespace ferry::ref {
namespace {

std::vector<double> TensorAttrDoubles(const ir::Node& node, const char* name, bool required) {
  const Tensor* t = node.GetTensor(name);
  if (!t) {
    if (required) throw InvalidModelError(node.Describe() + ": attribute '" + name + "' is required");
    return {};
  }
  std::vector<double> v(static_cast<size_t>(t->size()));
  Dispatch(FloatTypes{}, t->dtype(), node.Describe() + ": attribute " + name, [&](auto tag) {
    using T = decltype(tag);
    for (int64_t i = 0; i < t->size(); ++i) v[static_cast<size_t>(i)] = static_cast<double>(static_cast<Acc<T>>(t->data<T>()[i]));
  });
  return v;
}

std::vector<int64_t> TensorAttrInts(const ir::Node& node, const char* name) {
  const Tensor* t = node.GetTensor(name);
  if (!t) throw InvalidModelError(node.Describe() + ": attribute '" + name + "' is required");
  std::vector<int64_t> v(static_cast<size_t>(t->size()));
  Dispatch(IntTypes{}, t->dtype(), node.Describe() + ": attribute " + name, [&](auto tag) {
    using T = decltype(tag);
    for (int64_t i = 0; i < t->size(); ++i) v[static_cast<size_t>(i)] = static_cast<int64_t>(t->data<T>()[i]);
  });
  return v;
}

// Inverse of the standard normal CDF: sqrt(2) * erfinv(2p - 1), by Newton steps on erf.
double Probit(double p) {
  if (p <= 0) return -std::numeric_limits<double>::infinity();
  if (p >= 1) return std::numeric_limits<double>::infinity();
  const double y = 2 * p - 1;
  double x = 0;  // erfinv(y)
  // Initial guess (Winitzki), then Newton refinement.
  const double a = 0.147, ln = std::log(1 - y * y), t = 2 / (M_PI * a) + ln / 2;
  x = std::copysign(std::sqrt(std::sqrt(t * t - ln / a) - t), y);
  for (int i = 0; i < 4; ++i) x -= (std::erf(x) - y) / (2 / std::sqrt(M_PI) * std::exp(-x * x));
  return M_SQRT2 * x;
}

class TreeEnsemble : public OpKernel {
 public:
  explicit TreeEnsemble(const ir::Node& node) {
    const std::string what = node.Describe();
    feature_ = node.GetInts("nodes_featureids");
    true_id_ = node.GetInts("nodes_truenodeids");
    false_id_ = node.GetInts("nodes_falsenodeids");
    true_leaf_ = node.GetInts("nodes_trueleafs");
    false_leaf_ = node.GetInts("nodes_falseleafs");
    modes_ = TensorAttrInts(node, "nodes_modes");
    splits_ = TensorAttrDoubles(node, "nodes_splits", true);
    missing_true_ = node.GetInts("nodes_missing_value_tracks_true");
    target_ = node.GetInts("leaf_targetids");
    weight_ = TensorAttrDoubles(node, "leaf_weights", true);
    roots_ = node.GetInts("tree_roots");
    n_targets_ = node.GetInt("n_targets", -1);
    aggregate_ = node.GetInt("aggregate_function", 1);
    post_ = node.GetInt("post_transform", 0);
    const size_t nn = feature_.size(), nl = target_.size();
    if (true_id_.size() != nn || false_id_.size() != nn || true_leaf_.size() != nn || false_leaf_.size() != nn ||
        modes_.size() != nn || splits_.size() != nn || (!missing_true_.empty() && missing_true_.size() != nn))
      throw InvalidModelError(what + ": the nodes_* attributes must all have the same length");
    if (weight_.size() != nl) throw InvalidModelError(what + ": leaf_targetids and leaf_weights differ in length");
    if (n_targets_ < 1) throw InvalidModelError(what + ": n_targets must be positive");
    if (aggregate_ < 0 || aggregate_ > 3) throw InvalidModelError(what + ": aggregate_function must be 0..3");
    if (post_ < 0 || post_ > 4) throw InvalidModelError(what + ": post_transform must be 0..4");
    for (int64_t t : target_)
      if (t < 0 || t >= n_targets_) throw InvalidModelError(what + ": leaf target id out of range");
    // Membership sets, one per MEMBER node in node order.
    const std::vector<double> members = TensorAttrDoubles(node, "membership_values", false);
    set_of_.assign(nn, -1);
    size_t pos = 0;
    for (size_t i = 0; i < nn; ++i) {
      if (modes_[i] < 0 || modes_[i] > 6) throw InvalidModelError(what + ": nodes_modes values must be 0..6");
      if (feature_[i] < 0) throw InvalidModelError(what + ": negative feature id");
      max_feature_ = std::max(max_feature_, feature_[i]);
      if (modes_[i] != 6) continue;
      std::vector<double> set;
      while (pos < members.size() && !std::isnan(members[pos])) set.push_back(members[pos++]);
      if (pos >= members.size())
        throw InvalidModelError(what + ": membership_values has fewer NaN-terminated sets than MEMBER nodes");
      ++pos;
      set_of_[i] = static_cast<int64_t>(sets_.size());
      sets_.push_back(std::move(set));
    }
    // Every reachable id in range, and no cycles (three-colour depth-first search, linear in the node count).
    std::vector<char> colour(nn, 0);  // 0 unvisited, 1 on the current path, 2 done
    for (int64_t root : roots_) {
      if (root < 0 || static_cast<size_t>(root) >= nn) throw InvalidModelError(what + ": tree root out of range");
      if (colour[static_cast<size_t>(root)] == 2) continue;
      std::vector<std::pair<size_t, int>> stack = {{static_cast<size_t>(root), 0}};
      colour[static_cast<size_t>(root)] = 1;
      while (!stack.empty()) {
        auto& [i, side] = stack.back();
        if (side == 2) {
          colour[i] = 2;
          stack.pop_back();
          continue;
        }
        const int64_t next = side ? false_id_[i] : true_id_[i];
        const bool leaf = (side ? false_leaf_[i] : true_leaf_[i]) != 0;
        ++side;
        if (leaf) {
          if (next < 0 || static_cast<size_t>(next) >= nl) throw InvalidModelError(what + ": leaf id out of range");
          continue;
        }
        if (next < 0 || static_cast<size_t>(next) >= nn) throw InvalidModelError(what + ": node id out of range");
        const size_t j = static_cast<size_t>(next);
        if (colour[j] == 1) throw InvalidModelError(what + ": the tree from root " + std::to_string(root) + " has a cycle");
        if (colour[j] == 0) {
          colour[j] = 1;
          stack.push_back({j, 0});
        }
      }
    }
  }

  // X [N, F] with every feature the trees read; Y [N, n_targets] of X's type.
  void Prepare(PrepareContext& ctx) const override {
    const InputSpec& x = ctx.tensor_input(0);
    if (x.shape.size() != 2) {
      throw InvalidArgumentError(ctx.Describe() + ": X must have shape [N, F], got " + ShapeToString(x.shape) + " (" +
                                 ctx.InputString(0) + ")");
    }
    const int64_t f = x.shape[1];
    if (!feature_.empty() && max_feature_ >= f) {
      throw InvalidArgumentError(ctx.Describe() + ": the trees use feature " + std::to_string(max_feature_) +
                                 " but X has " + std::to_string(f) + " features (" + ctx.InputString(0) + ")");
    }
    ctx.SetOutput(0, x.dtype, {x.shape[0], n_targets_});
  }

  void Compute(KernelContext& ctx) const override {
    const Tensor& x = ctx.required_input(0);
    const int64_t n = x.dim(0), f = x.dim(1);
    Tensor& y = ctx.Output(0);
    Dispatch(TypeList<float, double, Float16>{}, x.dtype(), ctx, [&](auto tag) {
      using T = decltype(tag);
      const T* in = x.data<T>();
      T* out = y.data<T>();
      std::vector<double> acc(static_cast<size_t>(n_targets_));
      std::vector<char> hit(static_cast<size_t>(n_targets_));
      std::vector<double> row(static_cast<size_t>(f));
      for (int64_t r = 0; r < n; ++r) {
        for (int64_t j = 0; j < f; ++j) row[static_cast<size_t>(j)] = static_cast<double>(static_cast<Acc<T>>(in[r * f + j]));
        std::fill(acc.begin(), acc.end(), 0.0);
        std::fill(hit.begin(), hit.end(), 0);
        for (int64_t root : roots_) {
          const size_t leaf = static_cast<size_t>(Walk(root, row));
          const size_t t = static_cast<size_t>(target_[leaf]);
          const double w = weight_[leaf];
          if (aggregate_ <= 1) {
            acc[t] += w;
          } else if (!hit[t]) {
            acc[t] = w;
          } else {
            acc[t] = aggregate_ == 2 ? std::min(acc[t], w) : std::max(acc[t], w);
          }
          hit[t] = 1;
        }
        if (aggregate_ == 0 && !roots_.empty())
          for (double& v : acc) v /= static_cast<double>(roots_.size());
        PostTransform(acc);
        for (int64_t t = 0; t < n_targets_; ++t) out[r * n_targets_ + t] = T(static_cast<Acc<T>>(acc[static_cast<size_t>(t)]));
      }
    });
  }

 private:
  // Returns the leaf index reached from node `id`.
  int64_t Walk(int64_t id, const std::vector<double>& row) const {
    while (true) {
      const size_t i = static_cast<size_t>(id);
      const double v = row[static_cast<size_t>(feature_[i])];
      bool cond;
      if (std::isnan(v) && !missing_true_.empty() && missing_true_[i]) {
        cond = true;
      } else {
        const double s = splits_[i];
        switch (modes_[i]) {
          case 0: cond = v <= s; break;
          case 1: cond = v < s; break;
          case 2: cond = v >= s; break;
          case 3: cond = v > s; break;
          case 4: cond = v == s; break;
          case 5: cond = v != s; break;
          default: {
            const auto& set = sets_[static_cast<size_t>(set_of_[i])];
            cond = std::find(set.begin(), set.end(), v) != set.end();
          }
        }
      }
      if (cond) {
        if (true_leaf_[i]) return true_id_[i];
        id = true_id_[i];
      } else {
        if (false_leaf_[i]) return false_id_[i];
        id = false_id_[i];
      }
    }
  }

  void PostTransform(std::vector<double>& v) const {
    switch (post_) {
      case 1:
      case 3: {  // SOFTMAX, SOFTMAX_ZERO (zeros stay zero and do not take part)
        const bool zero = post_ == 3;
        double mx = -std::numeric_limits<double>::infinity();
        for (double a : v)
          if (!(zero && a == 0)) mx = std::max(mx, a);
        double sum = 0;
        for (double& a : v) {
          if (zero && a == 0) continue;
          a = std::exp(a - mx);
          sum += a;
        }
        for (double& a : v)
          if (!(zero && a == 0) && sum > 0) a /= sum;
        break;
      }
      case 2:
        for (double& a : v) a = 1.0 / (1.0 + std::exp(-a));
        break;
      case 4:
        for (double& a : v) a = Probit(a);
        break;
      default: break;
    }
  }

  std::vector<int64_t> feature_, true_id_, false_id_, true_leaf_, false_leaf_, modes_, missing_true_, target_, roots_;
  std::vector<double> splits_, weight_;
  std::vector<int64_t> set_of_;
  std::vector<std::vector<double>> sets_;
  int64_t n_targets_ = 0, aggregate_ = 1, post_ = 0, max_feature_ = -1;
};

}  // namespace

void RegisterTreeEnsembleKernels(KernelRegistry& r) {
  r.Add({.op = "TreeEnsemble",
         .domain = "ai.onnx.ml",
         .since = 5,
         .types = {{"T", {DataType::kFloat16, DataType::kFloat, DataType::kDouble}}},
         .create = MakeKernel<TreeEnsemble>});
}

}  // namespace ferry::ref
