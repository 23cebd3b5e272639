// Einsum (opset 12): any equation in numpy's notation (einsum_plan.h). The equation is parsed once at creation;
// Prepare resolves the label sizes and builds per-operand strides for each label (the Plan), and Compute runs one
// loop nest: the output labels outside (split over threads), the summed labels inside with incrementally updated
// offsets, so batched matrix products ("bij,bjk->bik") are a tight strided dot product per output element.
#include <algorithm>
#include <vector>

#include "core/parallel.h"
#include "kernels/kernel_def.h"
#include "kernels/ref/common.h"
#include "kernels/ref/einsum_plan.h"
#include "kernels/registry.h"

namespace ferry::ref {
namespace {

using einsum::Plan;

class Einsum : public OpKernel {
 public:
  explicit Einsum(const ir::Node& node) : eq_(einsum::ParseEquation(node)) {}

  // Resolves the label sizes against the input shapes: the output shape, the loop nest and per-input strides.
  void Prepare(PrepareContext& ctx) const override {
    Plan p = einsum::Resolve(eq_, ctx);
    ctx.SetOutput(0, p.dtype, p.out_shape);
    ctx.EmplaceState(std::move(p));
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
  einsum::Equation eq_;
};

}  // namespace

void RegisterEinsumKernels(KernelRegistry& r) {
  r.Add({.op = "Einsum", .since = 12, .types = {{"T", dtypes::Numeric()}}, .create = MakeKernel<Einsum>});
}

}  // namespace ferry::ref
