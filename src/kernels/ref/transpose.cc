// Transpose: out[i_0, ..., i_n] = in[i at perm^-1] with out.shape[k] = in.shape[perm[k]] (perm defaults to
// reversing the axes). Runs as one strided copy: contiguous rows become block copies and 2-D transposed tiles
// are copied in cache blocks, in parallel. Prepare checks perm against X's rank and plans the copy.
#include <optional>
#include <utility>
#include <vector>

#include "kernels/kernel_def.h"
#include "kernels/ref/common.h"
#include "kernels/ref/copy_util.h"
#include "kernels/ref/data_movement_shapes.h"
#include "kernels/registry.h"

namespace ferry::ref {

std::optional<std::vector<int64_t>> ReadPerm(const ir::Node& node) {
  if (!node.has_attr("perm")) return std::nullopt;
  std::vector<int64_t> perm = node.GetInts("perm");
  std::vector<bool> seen(perm.size(), false);
  for (int64_t p : perm) {
    if (p < 0 || p >= static_cast<int64_t>(perm.size()) || seen[static_cast<size_t>(p)]) {
      throw InvalidModelError(node.Describe() + ": attribute 'perm' " + ShapeToString(perm) + " is not a permutation");
    }
    seen[static_cast<size_t>(p)] = true;
  }
  return perm;
}

std::vector<int64_t> ResolvePerm(const std::optional<std::vector<int64_t>>& perm, const Tensor& x,
                                 const std::string& what) {
  const size_t rank = x.shape().size();
  if (!perm) {
    std::vector<int64_t> reversed(rank);
    for (size_t i = 0; i < rank; ++i) reversed[i] = static_cast<int64_t>(rank - 1 - i);
    return reversed;
  }
  if (perm->size() != rank) {
    throw InvalidArgumentError(what + ": attribute 'perm' " + ShapeToString(*perm) +
                               " does not match the rank of input 'data' " + DescribeTensor(x));
  }
  return *perm;
}

namespace {

// Y's shape and the strided copy of one signature.
struct Plan {
  Shape out_shape;
  std::vector<int64_t> dst_strides, src_strides;
};

class Transpose : public OpKernel {
 public:
  explicit Transpose(const ir::Node& node) : perm_(ReadPerm(node)) {}

  // perm against X's rank (ResolvePerm reads X's dtype and shape only: a tensor without data stands for X); Y's
  // shape and the copy's strides.
  void Prepare(PrepareContext& ctx) const override {
    const InputSpec& x = ctx.tensor_input(0);
    const size_t rank = x.shape.size();
    const std::vector<int64_t> perm =
        ResolvePerm(perm_, Tensor::Wrap(x.dtype, x.shape, nullptr, nullptr), ctx.Describe());
    const std::vector<int64_t> in_strides = Strides(x.shape);
    Plan p;
    p.out_shape.resize(rank);
    p.src_strides.resize(rank);
    for (size_t i = 0; i < rank; ++i) {
      p.out_shape[i] = x.shape[static_cast<size_t>(perm[i])];
      p.src_strides[i] = in_strides[static_cast<size_t>(perm[i])];
    }
    p.dst_strides = Strides(p.out_shape);
    ctx.SetOutput(0, x.dtype, p.out_shape);
    ctx.EmplaceState(std::move(p));
  }

  void Compute(KernelContext& ctx) const override {
    const Tensor& x = ctx.required_input(0);
    const Plan& p = ctx.state<Plan>();
    Tensor& y = ctx.Output(0);
    CopyStrided(x.dtype(), y.raw_data(), 0, p.dst_strides, x.raw_data(), 0, p.src_strides, p.out_shape,
                ctx.threads());
  }

 private:
  std::optional<std::vector<int64_t>> perm_;
};

}  // namespace

void RegisterTransposeKernels(KernelRegistry& r) {
  r.Add({.op = "Transpose", .since = 1, .types = {{"T", dtypes::All()}}, .create = MakeKernel<Transpose>});
}

}  // namespace ferry::ref
