// Einsum (opset 12): any equation in numpy's notation — explicit ("ij,jk->ik") or implicit output (the labels
// that occur once, sorted, after the broadcast ellipsis dims), "..." broadcasting, repeated labels within a term
// (diagonals: their strides add up), and summation over every label absent from the output.
// The equation is parsed once at creation; Prepare resolves the label sizes and builds per-operand strides for each
// label (the Plan), and Compute runs one loop nest: the output labels outside (split over threads), the summed
// labels inside with incrementally updated offsets, so batched matrix products ("bij,bjk->bik") are a tight strided dot
// product per output element.
#include <algorithm>
#include <map>
#include <string>
#include <vector>

#include "core/parallel.h"
#include "kernels/kernel_def.h"
#include "kernels/ref/common.h"
#include "kernels/registry.h"

namespace ferry::ref {
namespace {

// A term: its labels in order; kEllipsis stands for the "..." position.
constexpr int kEllipsis = -1;
constexpr int kLetters = 52;  // a-z -> 0..25, A-Z -> 26..51; ellipsis dims get labels kLetters + j

struct Term {
  std::vector<int> labels;
  bool has_ellipsis = false;
};

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

class Einsum : public OpKernel {
 public:
  // The loop nest for one signature: output labels first (nout of them), then the summed labels.
  struct Plan {
    size_t nout = 0;
    size_t nloop = 0;
    std::vector<int64_t> loop_size;              // per loop label
    std::vector<std::vector<int64_t>> strides;  // [input][loop label]: element strides (0 where broadcast)
  };

  explicit Einsum(const ir::Node& node) {
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
      inputs_.push_back(ParseTerm(lhs.substr(start, len), what));
      if (comma == std::string::npos) break;
      start = comma + 1;
    }
    explicit_output_ = arrow != std::string::npos;
    if (explicit_output_) {
      output_ = ParseTerm(eq.substr(arrow + 2), what);
      std::vector<int> seen;
      for (int l : output_.labels) {
        if (std::find(seen.begin(), seen.end(), l) != seen.end()) {
          throw InvalidModelError(what + ": label repeated in the output of equation '" + eq + "'");
        }
        seen.push_back(l);
        if (l == kEllipsis) continue;
        bool found = false;
        for (const Term& t : inputs_) found = found || std::count(t.labels.begin(), t.labels.end(), l) > 0;
        if (!found) throw InvalidModelError(what + ": output label not present in any input of '" + eq + "'");
      }
    } else {
      // Implicit output: ellipsis first, then labels occurring exactly once, in ASCII order (upper case first).
      std::map<int, int> count;
      bool any_ellipsis = false;
      for (const Term& t : inputs_) {
        any_ellipsis = any_ellipsis || t.has_ellipsis;
        for (int l : t.labels) {
          if (l != kEllipsis) ++count[l];
        }
      }
      if (any_ellipsis) {
        output_.labels.push_back(kEllipsis);
        output_.has_ellipsis = true;
      }
      std::vector<int> once;
      for (auto [l, n] : count) {
        if (n == 1) once.push_back(l);
      }
      auto ascii = [](int l) { return l < 26 ? 'a' + l : 'A' + (l - 26); };
      std::sort(once.begin(), once.end(), [&](int a, int b) { return ascii(a) < ascii(b); });
      output_.labels.insert(output_.labels.end(), once.begin(), once.end());
    }
  }

  // Resolves the label sizes against the input shapes: the output shape, the loop nest and per-input strides.
  void Prepare(PrepareContext& ctx) const override {
    const int nin = ctx.input_count();
    if (nin != static_cast<int>(inputs_.size())) {
      throw InvalidArgumentError(ctx.Describe() + ": the equation has " + std::to_string(inputs_.size()) +
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
      const Term& t = inputs_[static_cast<size_t>(k)];
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
      dims_labels.push_back(expand(inputs_[static_cast<size_t>(k)], term_ell[static_cast<size_t>(k)]));
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
    const std::vector<int> out_labels = expand(output_, ell_rank);
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
    ctx.EmplaceState(std::move(p));
    ctx.SetOutput(0, dtype, std::move(out_shape));
  }

  void Compute(KernelContext& ctx) const override {
    const Plan& p = ctx.state<Plan>();
    const int nin = ctx.input_count();
    std::vector<const Tensor*> xs;
    for (int k = 0; k < nin; ++k) xs.push_back(&ctx.required_input(k));
    const DataType dtype = xs[0]->dtype();
    const size_t nout = p.nout;
    const size_t nloop = p.nloop;
    const std::vector<std::vector<int64_t>>& strides = p.strides;
    const std::vector<int64_t>& loop_size = p.loop_size;
    Tensor& y = ctx.Output(0);
    if (y.size() == 0) return;
    int64_t sum_count = 1;
    for (size_t i = nout; i < nloop; ++i) sum_count *= loop_size[i];
    if (sum_count == 0) return;  // empty summation: zeros
    Dispatch(NumericTypes{}, dtype, ctx, [&](auto tag) {
      using T = decltype(tag);
      using A = std::conditional_t<std::is_integral_v<T>,
                                   std::conditional_t<std::is_signed_v<T>, int64_t, uint64_t>, Acc<T>>;
      std::vector<const T*> in;
      for (const Tensor* t : xs) in.push_back(t->data<T>());
      T* out = y.data<T>();
      const int64_t out_count = y.size();
      const int64_t work = std::max<int64_t>(1, sum_count);
      // Matrix-product shape ("bij,bjk->bik"): the last output label is contiguous in one input and absent from
      // the other, so each output row is accumulated as row += a * b_row over the summed labels (unit stride).
      if (nin == 2 && nout >= 1 && nloop > nout) {
        const size_t last = nout - 1;
        int row_in = -1;
        if (strides[1][last] == 1 && strides[0][last] == 0) row_in = 1;
        if (strides[0][last] == 1 && strides[1][last] == 0) row_in = 0;
        if (row_in >= 0) {
          const auto rb = static_cast<size_t>(row_in), sa = static_cast<size_t>(1 - row_in);
          const int64_t n = loop_size[last];
          const int64_t rows = out_count / n;
          ParallelFor(ctx.threads(), rows, std::max<int64_t>(1, 65536 / (work * n)), [&](int64_t begin, int64_t end) {
            std::vector<A> acc(static_cast<size_t>(n));
            std::vector<int64_t> ctr(nloop, 0);
            for (int64_t r = begin; r < end; ++r) {
              // Offsets of this output row in both inputs.
              int64_t base[2] = {0, 0};
              int64_t rem = r;
              for (size_t i = last; i-- > 0;) {
                const int64_t c = rem % loop_size[i];
                rem /= loop_size[i];
                base[0] += c * strides[0][i];
                base[1] += c * strides[1][i];
              }
              std::fill(acc.begin(), acc.end(), A(0));
              for (size_t i = nout; i < nloop; ++i) ctr[i] = 0;
              int64_t off[2] = {base[0], base[1]};
              while (true) {
                const A a = static_cast<A>(in[sa][off[sa]]);
                const T* brow = in[rb] + off[rb];
                for (int64_t t = 0; t < n; ++t) acc[static_cast<size_t>(t)] += a * static_cast<A>(brow[t]);
                bool done = true;
                for (size_t i = nloop; i > nout;) {
                  --i;
                  ++ctr[i];
                  off[0] += strides[0][i];
                  off[1] += strides[1][i];
                  if (ctr[i] < loop_size[i]) {
                    done = false;
                    break;
                  }
                  off[0] -= strides[0][i] * ctr[i];
                  off[1] -= strides[1][i] * ctr[i];
                  ctr[i] = 0;
                }
                if (done) break;
              }
              T* yr = out + r * n;
              for (int64_t t = 0; t < n; ++t) yr[t] = T(static_cast<Acc<T>>(acc[static_cast<size_t>(t)]));
            }
          });
          return;
        }
      }
      ParallelFor(ctx.threads(), out_count, std::max<int64_t>(1, 65536 / work), [&](int64_t begin, int64_t end) {
        // Decode `begin` into output counters and per-input offsets.
        std::vector<int64_t> ctr(nloop, 0), base(static_cast<size_t>(nin), 0), off(static_cast<size_t>(nin), 0);
        int64_t rem = begin;
        for (size_t i = nout; i-- > 0;) {
          ctr[i] = rem % loop_size[i];
          rem /= loop_size[i];
          for (int k = 0; k < nin; ++k) base[static_cast<size_t>(k)] += ctr[i] * strides[static_cast<size_t>(k)][i];
        }
        const size_t inner = nloop - 1;  // innermost summed label when nloop > nout
        for (int64_t o = begin; o < end; ++o) {
          A acc = A(0);
          if (nloop == nout) {
            A prod = A(1);
            for (int k = 0; k < nin; ++k) {
              prod *= static_cast<A>(in[static_cast<size_t>(k)][base[static_cast<size_t>(k)]]);
            }
            acc = prod;
          } else {
            // Summed labels: odometer over [nout, inner), tight loop over `inner`.
            for (size_t i = nout; i < nloop; ++i) ctr[i] = 0;
            off = base;
            const int64_t n_inner = loop_size[inner];
            while (true) {
              if (nin == 1) {
                const T* p = in[0] + off[0];
                const int64_t s0 = strides[0][inner];
                for (int64_t t = 0; t < n_inner; ++t) acc += static_cast<A>(p[t * s0]);
              } else if (nin == 2) {
                const T* p0 = in[0] + off[0];
                const T* p1 = in[1] + off[1];
                const int64_t s0 = strides[0][inner], s1 = strides[1][inner];
                for (int64_t t = 0; t < n_inner; ++t) acc += static_cast<A>(p0[t * s0]) * static_cast<A>(p1[t * s1]);
              } else {
                for (int64_t t = 0; t < n_inner; ++t) {
                  A prod = A(1);
                  for (int k = 0; k < nin; ++k) {
                    const auto ku = static_cast<size_t>(k);
                    prod *= static_cast<A>(in[ku][off[ku] + t * strides[ku][inner]]);
                  }
                  acc += prod;
                }
              }
              // Advance the summed labels outside `inner`; done when they all wrap.
              bool done = true;
              for (size_t i = inner; i > nout;) {
                --i;
                ++ctr[i];
                for (int k = 0; k < nin; ++k) off[static_cast<size_t>(k)] += strides[static_cast<size_t>(k)][i];
                if (ctr[i] < loop_size[i]) {
                  done = false;
                  break;
                }
                for (int k = 0; k < nin; ++k) {
                  off[static_cast<size_t>(k)] -= strides[static_cast<size_t>(k)][i] * ctr[i];
                }
                ctr[i] = 0;
              }
              if (done) break;
            }
          }
          out[o] = T(static_cast<Acc<T>>(acc));
          // Advance the output counters.
          for (size_t i = nout; i-- > 0;) {
            ++ctr[i];
            for (int k = 0; k < nin; ++k) base[static_cast<size_t>(k)] += strides[static_cast<size_t>(k)][i];
            if (ctr[i] < loop_size[i]) break;
            for (int k = 0; k < nin; ++k) base[static_cast<size_t>(k)] -= strides[static_cast<size_t>(k)][i] * ctr[i];
            ctr[i] = 0;
          }
        }
      });
    });
  }

 private:
  std::vector<Term> inputs_;
  Term output_;
  bool explicit_output_ = false;
};

}  // namespace

void RegisterEinsumKernels(KernelRegistry& r) {
  r.Add({.op = "Einsum", .since = 12, .types = {{"T", dtypes::Numeric()}}, .create = MakeKernel<Einsum>});
}

}  // namespace ferry::ref
