// Einsum's equation parser and plan (einsum_plan.h), shared by the ref and cpu kernels.
#include "kernels/ref/einsum_plan.h"

#include <algorithm>
#include <map>
#include <string>

#include "kernels/ref/common.h"

namespace ferry::ref::einsum {
namespace {

int LetterLabel(char c) {
  if (c >= 'a' && c <= 'z') return c - 'a';
  if (c >= 'A' && c <= 'Z') return 26 + (c - 'A');
  return -2;
}

Term ParseTerm(const std::string& s, const std::string& what) {
  Term t;
  for (size_t i = 0; i < s.size(); ++i) {
    if (s[i] == '.') {
      if (t.has_ellipsis || s.compare(i, 3, "...") != 0) {
        throw InvalidModelError(what + ": malformed ellipsis in equation term '" + s + "'");
      }
      t.has_ellipsis = true;
      t.labels.push_back(kEllipsis);
      i += 2;
      continue;
    }
    const int l = LetterLabel(s[i]);
    if (l < 0) throw InvalidModelError(what + ": invalid character '" + std::string(1, s[i]) + "' in equation");
    t.labels.push_back(l);
  }
  return t;
}

}  // namespace

Equation ParseEquation(const ir::Node& node) {
  Equation e;
  std::vector<Term>& inputs = e.inputs;
  Term& output = e.output;
  const std::string what = node.Describe();
  std::string eq;
  for (char c : node.RequireAttr("equation").s) {
    if (c != ' ' && c != '\t') eq += c;
  }
  const size_t arrow = eq.find("->");
  const std::string lhs = eq.substr(0, arrow);
  size_t start = 0;
  while (true) {
    const size_t comma = lhs.find(',', start);
    const size_t len = comma == std::string::npos ? std::string::npos : comma - start;
    inputs.push_back(ParseTerm(lhs.substr(start, len), what));
    if (comma == std::string::npos) break;
    start = comma + 1;
  }
  if (arrow != std::string::npos) {
    output = ParseTerm(eq.substr(arrow + 2), what);
    std::vector<int> seen;
    for (int l : output.labels) {
      if (std::find(seen.begin(), seen.end(), l) != seen.end()) {
        throw InvalidModelError(what + ": label repeated in the output of equation '" + eq + "'");
      }
      seen.push_back(l);
      if (l == kEllipsis) continue;
      bool found = false;
      for (const Term& t : inputs) found = found || std::count(t.labels.begin(), t.labels.end(), l) > 0;
      if (!found) throw InvalidModelError(what + ": output label not present in any input of '" + eq + "'");
    }
  } else {
    // Implicit output: ellipsis first, then labels occurring exactly once, in ASCII order (upper case first).
    std::map<int, int> count;
    bool any_ellipsis = false;
    for (const Term& t : inputs) {
      any_ellipsis = any_ellipsis || t.has_ellipsis;
      for (int l : t.labels) {
        if (l != kEllipsis) ++count[l];
      }
    }
    if (any_ellipsis) {
      output.labels.push_back(kEllipsis);
      output.has_ellipsis = true;
    }
    std::vector<int> once;
    for (auto [l, n] : count) {
      if (n == 1) once.push_back(l);
    }
    auto ascii = [](int l) { return l < 26 ? 'a' + l : 'A' + (l - 26); };
    std::sort(once.begin(), once.end(), [&](int a, int b) { return ascii(a) < ascii(b); });
    output.labels.insert(output.labels.end(), once.begin(), once.end());
  }
  return e;
}

Plan Resolve(const Equation& eq, const PrepareContext& ctx) {
  const std::vector<Term>& inputs = eq.inputs;
  const Term& output = eq.output;
  const int nin = ctx.input_count();
  if (nin != static_cast<int>(inputs.size())) {
    throw InvalidArgumentError(ctx.Describe() + ": the equation has " + std::to_string(inputs.size()) +
                               " input terms, the node has " + std::to_string(nin) + " inputs");
  }
  std::vector<const InputSpec*> xs;
  for (int k = 0; k < nin; ++k) xs.push_back(&ctx.tensor_input(k));
  const DataType dtype = xs[0]->dtype;
  for (const InputSpec* t : xs) {
    if (t->dtype != dtype) throw InvalidArgumentError(ctx.Describe() + ": all inputs must have the same type");
  }
  // Expand each term's ellipsis into labels kLetters + j, right-aligned across inputs.
  int ell_rank = 0;
  std::vector<int> term_ell(static_cast<size_t>(nin), 0);
  for (int k = 0; k < nin; ++k) {
    const Term& t = inputs[static_cast<size_t>(k)];
    const int letters = static_cast<int>(t.labels.size()) - (t.has_ellipsis ? 1 : 0);
    const int rank = static_cast<int>(xs[static_cast<size_t>(k)]->shape.size());
    if (t.has_ellipsis ? rank < letters : rank != letters) {
      throw InvalidArgumentError(ctx.Describe() + ": input " + std::to_string(k) + " has rank " +
                                 std::to_string(rank) + ", its equation term has " + std::to_string(letters) +
                                 " labels" + (t.has_ellipsis ? " and an ellipsis" : ""));
    }
    term_ell[static_cast<size_t>(k)] = t.has_ellipsis ? rank - letters : 0;
    ell_rank = std::max(ell_rank, term_ell[static_cast<size_t>(k)]);
  }
  constexpr int kMaxEllipsisDims = 64;
  if (ell_rank > kMaxEllipsisDims) {
    throw UnsupportedError(ctx.Describe() + ": more than " + std::to_string(kMaxEllipsisDims) +
                           " dimensions under '...' are not supported");
  }
  auto expand = [&](const Term& t, int ell) {
    std::vector<int> out;
    for (int l : t.labels) {
      if (l != kEllipsis) {
        out.push_back(l);
        continue;
      }
      for (int j = 0; j < ell; ++j) out.push_back(kLetters + (ell_rank - ell) + j);
    }
    return out;
  };
  constexpr int kMaxLabels = kLetters + kMaxEllipsisDims;
  std::vector<int64_t> size(kMaxLabels, -1);
  std::vector<std::vector<int>> dims_labels;
  for (int k = 0; k < nin; ++k) {
    dims_labels.push_back(expand(inputs[static_cast<size_t>(k)], term_ell[static_cast<size_t>(k)]));
    const Shape& x = xs[static_cast<size_t>(k)]->shape;
    for (size_t d = 0; d < dims_labels.back().size(); ++d) {
      const int l = dims_labels.back()[d];
      const int64_t n = x[d];
      int64_t& s = size[static_cast<size_t>(l)];
      if (s == -1 || s == 1) {
        s = n;
      } else if (n != s && n != 1) {
        throw InvalidArgumentError(ctx.Describe() + ": dimension " + std::to_string(d) + " of input " +
                                   std::to_string(k) + " is " + std::to_string(n) + ", its label has size " +
                                   std::to_string(s) + " elsewhere");
      }
    }
  }
  const std::vector<int> out_labels = expand(output, ell_rank);
  // Loop labels: output labels, then every other label that occurs (summed).
  std::vector<int> loop = out_labels;
  for (int l = 0; l < kMaxLabels; ++l) {
    if (size[static_cast<size_t>(l)] >= 0 && std::find(loop.begin(), loop.end(), l) == loop.end()) loop.push_back(l);
  }
  Plan p;
  p.nout = out_labels.size();
  p.nloop = loop.size();
  const size_t nloop = p.nloop;
  Shape out_shape;
  for (int l : out_labels) out_shape.push_back(size[static_cast<size_t>(l)]);
  // strides[k][i]: element stride of input k along loop label i (repeated labels add; broadcast dims are 0).
  std::vector<std::vector<int64_t>>& strides = p.strides;
  strides.assign(static_cast<size_t>(nin), std::vector<int64_t>(nloop, 0));
  for (int k = 0; k < nin; ++k) {
    const Shape& x = xs[static_cast<size_t>(k)]->shape;
    const std::vector<int64_t> own = Strides(x);
    for (size_t d = 0; d < dims_labels[static_cast<size_t>(k)].size(); ++d) {
      if (x[d] == 1) continue;
      const int l = dims_labels[static_cast<size_t>(k)][d];
      const size_t i = static_cast<size_t>(std::find(loop.begin(), loop.end(), l) - loop.begin());
      strides[static_cast<size_t>(k)][i] += own[d];
    }
  }
  for (int l : loop) p.loop_size.push_back(size[static_cast<size_t>(l)]);
  p.dtype = dtype;
  p.out_shape = std::move(out_shape);
  return p;
}

}  // namespace ferry::ref::einsum

