// Transpose: out[i_0, ..., i_n] = in[i at perm^-1] with out.shape[k] = in.shape[perm[k]] (perm defaults to
// reversing the axes). Runs as one strided copy: contiguous rows become block copies and 2-D transposed tiles
// are copied in cache blocks, in parallel.
#include "kernels/kernel_def.h"
#include "kernels/ref/common.h"
#include "kernels/ref/copy_util.h"
#include "kernels/registry.h"

namespace ferry::ref {
namespace {

class Transpose : public OpKernel {
 public:
  explicit Transpose(const ir::Node& node) {
    if (node.has_attr("perm")) {
      perm_ = node.GetInts("perm");
      has_perm_ = true;
      std::vector<bool> seen(perm_.size(), false);
      for (int64_t p : perm_) {
        if (p < 0 || p >= static_cast<int64_t>(perm_.size()) || seen[static_cast<size_t>(p)]) {
          throw InvalidModelError(node.Describe() + ": attribute 'perm' " + ShapeToString(perm_) +
                                  " is not a permutation");
        }
        seen[static_cast<size_t>(p)] = true;
      }
    }
  }

  void Compute(KernelContext& ctx) const override {
    const Tensor& x = ctx.required_input(0);
    const size_t rank = x.shape().size();
    std::vector<int64_t> perm = perm_;
    if (!has_perm_) {
      perm.resize(rank);
      for (size_t i = 0; i < rank; ++i) perm[i] = static_cast<int64_t>(rank - 1 - i);
    } else if (perm.size() != rank) {
      throw InvalidArgumentError(ctx.Describe() + ": attribute 'perm' " + ShapeToString(perm) +
                                 " does not match the rank of input 'data' " + DescribeTensor(x));
    }
    const std::vector<int64_t> in_strides = Strides(x.shape());
    Shape out_shape(rank);
    std::vector<int64_t> src_strides(rank);
    for (size_t i = 0; i < rank; ++i) {
      out_shape[i] = x.shape()[static_cast<size_t>(perm[i])];
      src_strides[i] = in_strides[static_cast<size_t>(perm[i])];
    }
    Tensor& y = ctx.Output(0, x.dtype(), out_shape);
    CopyStrided(x.dtype(), y.raw_data(), 0, Strides(out_shape), x.raw_data(), 0, src_strides, out_shape,
                ctx.threads());
  }

 private:
  std::vector<int64_t> perm_;
  bool has_perm_ = false;
};

}  // namespace

void RegisterTransposeKernels(KernelRegistry& r) {
  r.Add({.op = "Transpose", .since = 1, .types = {{"T", dtypes::All()}}, .create = MakeKernel<Transpose>});
}

}  // namespace ferry::ref
