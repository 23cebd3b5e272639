// Softmax, LogSoftmax and Hardmax. Opsets < 13 coerce the input to 2-D at `axis` (default 1) and normalise each
// row of the flattened [outer, prod(dims[axis:])] matrix; opset 13 normalises along `axis` only (default -1).
// Both cases reduce to an [outer, n, inner] view (Prepare's); inner == 1 (the common last-axis case) is a
// contiguous row.
#include <algorithm>
#include <cmath>
#include <limits>
#include <vector>

#include "core/parallel.h"
#include "kernels/kernel_def.h"
#include "kernels/ref/common.h"
#include "kernels/registry.h"

namespace ferry::ref {
namespace {

enum class SoftmaxKind { kSoftmax, kLogSoftmax, kHardmax };

// X as [outer, n, inner]: `outer` groups of n elements to normalise, `inner` apart.
struct Plan {
  int64_t outer = 1, n = 1, inner = 1;
};

template <SoftmaxKind kKind>
class SoftmaxFamily : public OpKernel {
 public:
  explicit SoftmaxFamily(const ir::Node& node)
      : coerce_2d_(node.opset() < 13), axis_(node.GetInt("axis", node.opset() < 13 ? 1 : -1)) {}

  // The [outer, n, inner] view for X's shape (an empty X has none: its axis is not checked).
  void Prepare(PrepareContext& ctx) const override {
    const InputSpec& x = ctx.tensor_input(0);
    ctx.SetOutput(0, x.dtype, x.shape);
    if (ShapeElementCount(x.shape) == 0) return;
    const auto rank = static_cast<int64_t>(x.shape.size());
    // A scalar behaves as a single-element row; the 2-D coercion also accepts axis == rank (rows of one).
    const int64_t axis = rank == 0                       ? 0
                         : (coerce_2d_ && axis_ == rank) ? rank
                                                         : NormalizeAxis(axis_, rank, ctx.Describe());
    Plan p;
    auto dim = [&](int64_t d) { return x.shape[static_cast<size_t>(d)]; };
    for (int64_t d = 0; d < axis; ++d) p.outer *= dim(d);
    if (coerce_2d_) {
      for (int64_t d = axis; d < rank; ++d) p.n *= dim(d);
    } else {
      if (rank > 0) p.n = dim(axis);
      for (int64_t d = axis + 1; d < rank; ++d) p.inner *= dim(d);
    }
    ctx.EmplaceState(p);
  }

  void Compute(KernelContext& ctx) const override {
    const Tensor& x = ctx.required_input(0);
    Tensor& y = ctx.Output(0);
    if (x.size() == 0) return;
    const Plan& p = ctx.state<Plan>();
    const int64_t outer = p.outer, n = p.n, inner = p.inner;
    Dispatch(FloatTypes{}, x.dtype(), ctx, [&](auto tag) {
      using T = decltype(tag);
      const T* in = x.data<T>();
      T* out = y.data<T>();
      const int64_t row = n * inner;
      const int64_t min_chunk = std::max<int64_t>(1, 16384 / std::max<int64_t>(row, 1));
      ParallelFor(ctx.threads(), outer, min_chunk, [&](int64_t begin, int64_t end) {
        std::vector<Acc<T>> scratch;
        for (int64_t o = begin; o < end; ++o) {
          if (inner == 1) {
            Row<T>(in + o * row, out + o * row, n);
          } else {
            Strided<T>(in + o * row, out + o * row, n, inner, scratch);
          }
        }
      });
    });
  }

 private:
  // One contiguous row of n elements.
  template <typename T>
  static void Row(const T* in, T* out, int64_t n) {
    using A = Acc<T>;
    A mx = static_cast<A>(in[0]);
    int64_t arg = 0;
    for (int64_t i = 1; i < n; ++i) {
      A v = static_cast<A>(in[i]);
      if (v > mx) {
        mx = v;
        arg = i;
      }
    }
    if constexpr (kKind == SoftmaxKind::kHardmax) {
      for (int64_t i = 0; i < n; ++i) out[i] = T(A(i == arg ? 1 : 0));
    } else if constexpr (kKind == SoftmaxKind::kSoftmax) {
      if constexpr (std::is_same_v<T, A>) {
        A sum = 0;
        for (int64_t i = 0; i < n; ++i) {
          A e = std::exp(in[i] - mx);
          out[i] = e;
          sum += e;
        }
        const A inv = A(1) / sum;
        for (int64_t i = 0; i < n; ++i) out[i] *= inv;
      } else {
        A sum = 0;
        for (int64_t i = 0; i < n; ++i) sum += std::exp(static_cast<A>(in[i]) - mx);
        const A inv = A(1) / sum;
        for (int64_t i = 0; i < n; ++i) out[i] = T(std::exp(static_cast<A>(in[i]) - mx) * inv);
      }
    } else {
      A sum = 0;
      for (int64_t i = 0; i < n; ++i) sum += std::exp(static_cast<A>(in[i]) - mx);
      const A shift = mx + std::log(sum);
      for (int64_t i = 0; i < n; ++i) out[i] = T(static_cast<A>(in[i]) - shift);
    }
  }

  // n rows of `inner` contiguous elements, normalised column-wise; scratch holds per-column max and sum.
  template <typename T>
  static void Strided(const T* in, T* out, int64_t n, int64_t inner, std::vector<Acc<T>>& scratch) {
    using A = Acc<T>;
    scratch.assign(static_cast<size_t>(2 * inner), A(0));
    A* mx = scratch.data();
    A* sum = scratch.data() + inner;
    for (int64_t i = 0; i < inner; ++i) mx[i] = static_cast<A>(in[i]);
    if constexpr (kKind == SoftmaxKind::kHardmax) {
      // sum[] holds the arg-max row index per column (first occurrence wins).
      for (int64_t k = 1; k < n; ++k) {
        const T* r = in + k * inner;
        for (int64_t i = 0; i < inner; ++i) {
          A v = static_cast<A>(r[i]);
          if (v > mx[i]) {
            mx[i] = v;
            sum[i] = static_cast<A>(k);
          }
        }
      }
      for (int64_t k = 0; k < n; ++k) {
        T* w = out + k * inner;
        for (int64_t i = 0; i < inner; ++i) w[i] = T(A(static_cast<int64_t>(sum[i]) == k ? 1 : 0));
      }
    } else {
      for (int64_t k = 1; k < n; ++k) {
        const T* r = in + k * inner;
        for (int64_t i = 0; i < inner; ++i) mx[i] = std::max(mx[i], static_cast<A>(r[i]));
      }
      for (int64_t k = 0; k < n; ++k) {
        const T* r = in + k * inner;
        for (int64_t i = 0; i < inner; ++i) sum[i] += std::exp(static_cast<A>(r[i]) - mx[i]);
      }
      if constexpr (kKind == SoftmaxKind::kSoftmax) {
        for (int64_t i = 0; i < inner; ++i) sum[i] = A(1) / sum[i];
        for (int64_t k = 0; k < n; ++k) {
          const T* r = in + k * inner;
          T* w = out + k * inner;
          for (int64_t i = 0; i < inner; ++i) w[i] = T(std::exp(static_cast<A>(r[i]) - mx[i]) * sum[i]);
        }
      } else {
        for (int64_t i = 0; i < inner; ++i) sum[i] = mx[i] + std::log(sum[i]);
        for (int64_t k = 0; k < n; ++k) {
          const T* r = in + k * inner;
          T* w = out + k * inner;
          for (int64_t i = 0; i < inner; ++i) w[i] = T(static_cast<A>(r[i]) - sum[i]);
        }
      }
    }
  }

  bool coerce_2d_;
  int64_t axis_;
};

void AddFamily(KernelRegistry& r, const std::string& op, KernelFactory create) {
  // Versions 1 and 11 differ only in the allowed axis range; 13 switches to the single-axis semantics.
  r.Add({.op = op,
         .since = 1,
         .until = 12,
         .types = {{"T", {DataType::kFloat, DataType::kDouble, DataType::kFloat16}}},
         .create = create});
  r.Add({.op = op, .since = 13, .types = {{"T", dtypes::Floats()}}, .create = create});
}

}  // namespace

void RegisterSoftmaxKernels(KernelRegistry& r) {
  AddFamily(r, "Softmax", MakeKernel<SoftmaxFamily<SoftmaxKind::kSoftmax>>);
  AddFamily(r, "LogSoftmax", MakeKernel<SoftmaxFamily<SoftmaxKind::kLogSoftmax>>);
  AddFamily(r, "Hardmax", MakeKernel<SoftmaxFamily<SoftmaxKind::kHardmax>>);
}

}  // namespace ferry::ref
