// Gather: out[o, j..., i] = data[o, indices[j...], i] along `axis`; any data type with a byte-sized element,
// int32 or int64 indices. Negative indices count from the end; every index is checked before anything is
// written, and one outside [-dim, dim) is an InvalidArgumentError (as in ref). Each (o, j) copies one row of
// the inner dimensions (memcpy when long); an element-wise gather when the inner size is 1. Prepare checks the types
// and ranks and resolves the geometry and Y's shape once per input signature, and normalizes the indices there when
// they are a constant; indices read at run time are checked by Compute (a data error).
#include <algorithm>
#include <string>
#include <vector>

#include "core/parallel.h"
#include "kernels/cpu/strided_copy.h"
#include "kernels/kernel_def.h"
#include "kernels/ref/common.h"
#include "kernels/ref/copy_util.h"
#include "kernels/registry.h"

namespace ferry::cpu {
namespace {

// `what()` names the input in the error; it is called only when an index is out of range.
template <typename I, typename What>
void NormalizeIndices(const I* in, int64_t n, int64_t dim, int64_t* out, const What& what) {
  for (int64_t j = 0; j < n; ++j) {
    const int64_t v = static_cast<int64_t>(in[j]);
    const int64_t i = v < 0 ? v + dim : v;
    if (i < 0 || i >= dim) ref::NormalizeIndex(v, dim, what());  // throws the ref kernel's message
    out[j] = i;
  }
}

// The int32 or int64 (checked by Prepare) indices normalized into [0, dim); an index outside [-dim, dim) is an
// InvalidArgumentError naming `what()`.
template <typename What>
std::vector<int64_t> Normalized(const Tensor& indices, int64_t dim, const What& what) {
  std::vector<int64_t> idx(static_cast<size_t>(indices.size()));
  if (indices.dtype() == DataType::kInt64) {
    NormalizeIndices(indices.data<int64_t>(), indices.size(), dim, idx.data(), what);
  } else {
    NormalizeIndices(indices.data<int32_t>(), indices.size(), dim, idx.data(), what);
  }
  return idx;
}

// The prepared state of one signature: the gather as [outer, dim, inner] -> [outer, n, inner], and the normalized
// indices when they are known before the run.
struct GatherPlan {
  int64_t dim = 0, outer = 1, inner = 1, n = 0;
  int elem = 0;
  bool known_indices = false;
  std::vector<int64_t> idx;
};

class Gather : public OpKernel {
 public:
  explicit Gather(const ir::Node& node) : axis_(node.GetInt("axis", 0)) {}

  // Y's shape (data's with the axis replaced by the indices' shape) and the geometry; the indices themselves when
  // they are a constant (then an index out of range is raised here).
  void Prepare(PrepareContext& ctx) const override {
    const InputSpec& data = ctx.tensor_input(0);
    const InputSpec& indices = ctx.tensor_input(1);
    if (indices.dtype != DataType::kInt32 && indices.dtype != DataType::kInt64) {
      throw InvalidArgumentError(ctx.Describe() + ": " + ctx.InputString(1) + ": expected int32 or int64 indices");
    }
    const int64_t rank = static_cast<int64_t>(data.shape.size());
    if (rank == 0) {
      throw InvalidArgumentError(ctx.Describe() + ": input 'data' must have rank >= 1, got " + ctx.InputString(0));
    }
    const int64_t axis = ref::NormalizeAxis(axis_, rank, ctx.Describe());
    GatherPlan p;
    p.dim = data.shape[static_cast<size_t>(axis)];
    p.n = ShapeElementCount(indices.shape);
    p.elem = ElementBytes(data.dtype);
    for (int64_t d = 0; d < rank; ++d) {
      if (d < axis) p.outer *= data.shape[static_cast<size_t>(d)];
      if (d > axis) p.inner *= data.shape[static_cast<size_t>(d)];
    }
    if (const Tensor* t = ctx.constant(1)) {
      p.known_indices = true;
      p.idx = Normalized(*t, p.dim, [&] { return ctx.Describe() + ": input 'indices'"; });
    }
    Shape out_shape(data.shape.begin(), data.shape.begin() + axis);
    out_shape.insert(out_shape.end(), indices.shape.begin(), indices.shape.end());
    out_shape.insert(out_shape.end(), data.shape.begin() + axis + 1, data.shape.end());
    ctx.SetOutput(0, data.dtype, std::move(out_shape));
    ctx.EmplaceState(std::move(p));
  }

  void Compute(KernelContext& ctx) const override {
    const GatherPlan& p = ctx.state<GatherPlan>();
    const Tensor& data = ctx.required_input(0);
    // Indices read from the run's data: one out of range is the data's error (it names the node).
    auto what = [&] { return ctx.Describe() + ": input 'indices'"; };
    const std::vector<int64_t> read =
        p.known_indices ? std::vector<int64_t>{} : Normalized(ctx.required_input(1), p.dim, what);
    const std::vector<int64_t>& idx = p.known_indices ? p.idx : read;
    Tensor& y = ctx.Output(0);
    if (y.size() == 0) return;
    const int64_t dim = p.dim, n = p.n, outer = p.outer, inner = p.inner;
    const int elem = p.elem;
    const int threads = CopyThreads(ctx.threads(), y.size() * elem);
    const int64_t* ix = idx.data();
    DispatchWord(elem, [&](auto tag) {
      using W = decltype(tag);
      const W* src = static_cast<const W*>(data.raw_data());
      W* dst = static_cast<W*>(y.raw_data());
      const int64_t grain = std::max<int64_t>(1, kCopyGrainBytes / static_cast<int64_t>(sizeof(W)) / inner);
      ParallelFor(threads, outer * n, grain, [&](int64_t begin, int64_t end) {
        int64_t o = begin / n, j = begin % n;
        const W* base = src + o * dim * inner;
        for (int64_t k = begin; k < end; ++k) {
          if (inner == 1) {
            dst[k] = base[ix[j]];
          } else {
            CopyRun(dst + k * inner, base + ix[j] * inner, inner);
          }
          if (++j == n) {
            j = 0;
            base += dim * inner;
          }
        }
      });
    });
  }

 private:
  int64_t axis_;
};

}  // namespace

void RegisterGatherKernels(KernelRegistry& r) {
  r.Add({.op = "Gather",
         .since = 1,
         .types = {{"T", ByteSizedTypes()}, {"Tind", {DataType::kInt32, DataType::kInt64}}},
         .create = MakeKernel<Gather>,
         .name = "cpu.any_gather__memcpy.1"});
}

}  // namespace ferry::cpu
