// Concat: joins its inputs along `axis` (all other dimensions must match). Each input is one 2-D strided copy
// [outer, dim*inner] into its column range of the output.
#include "kernels/kernel_def.h"
#include "kernels/ref/common.h"
#include "kernels/ref/copy_util.h"
#include "kernels/ref/data_movement_shapes.h"
#include "kernels/registry.h"

namespace ferry::ref {

int64_t ReadConcatAxis(const ir::Node& node) {
  if (node.opset() >= 4) node.RequireAttr("axis");  // Concat-1's axis is optional (default 1)
  return node.GetInt("axis", 1);
}

ConcatShape ResolveConcat(const KernelContext& ctx, int64_t axis_attr) {
  std::vector<const Tensor*> ins;
  for (int i = 0; i < ctx.input_count(); ++i) {
    if (const Tensor* t = ctx.input(i)) ins.push_back(t);
  }
  if (ins.empty()) throw InvalidArgumentError(ctx.Describe() + ": needs at least one input");
  const Tensor& first = *ins[0];
  const int64_t rank = first.rank();
  if (rank == 0) throw InvalidArgumentError(ctx.Describe() + ": cannot concatenate scalars");
  const int64_t axis = NormalizeAxis(axis_attr, rank, ctx.Describe());
  Shape out_shape = first.shape();
  out_shape[static_cast<size_t>(axis)] = 0;
  for (size_t k = 0; k < ins.size(); ++k) {
    const Tensor& t = *ins[k];
    bool ok = t.dtype() == first.dtype() && t.rank() == rank;
    for (int64_t d = 0; ok && d < rank; ++d) ok = d == axis || t.dim(d) == first.dim(d);
    if (!ok) {
      throw InvalidArgumentError(ctx.Describe() + ": input " + std::to_string(k) + " " + DescribeTensor(t) +
                                 " does not match input 0 " + DescribeTensor(first) + " outside axis " +
                                 std::to_string(axis));
    }
    out_shape[static_cast<size_t>(axis)] += t.dim(axis);
  }
  return {std::move(ins), axis, std::move(out_shape)};
}

namespace {

class Concat : public OpKernel {
 public:
  explicit Concat(const ir::Node& node) : axis_(ReadConcatAxis(node)) {}

  void Compute(KernelContext& ctx) const override {
    const ConcatShape cs = ResolveConcat(ctx, axis_);
    const std::vector<const Tensor*>& ins = cs.inputs;
    const Tensor& first = *ins[0];
    const int64_t rank = first.rank(), axis = cs.axis;
    const Shape& out_shape = cs.out_shape;
    Tensor& y = ctx.Output(0, first.dtype(), out_shape);
    int64_t outer = 1, inner = 1;
    for (int64_t d = 0; d < rank; ++d) {
      if (d < axis) outer *= out_shape[static_cast<size_t>(d)];
      if (d > axis) inner *= out_shape[static_cast<size_t>(d)];
    }
    const int64_t out_block = out_shape[static_cast<size_t>(axis)] * inner;
    int64_t offset = 0;
    for (const Tensor* t : ins) {
      const int64_t block = t->dim(axis) * inner;
      const int64_t box[2] = {outer, block};
      const int64_t ds[2] = {out_block, 1};
      const int64_t ss[2] = {block, 1};
      CopyStrided(y.dtype(), y.raw_data(), offset, ds, t->raw_data(), 0, ss, box, ctx.threads());
      offset += block;
    }
  }

 private:
  int64_t axis_ = 1;
};

}  // namespace

void RegisterConcatKernels(KernelRegistry& r) {
  r.Add({.op = "Concat", .since = 1, .types = {{"T", dtypes::All()}}, .create = MakeKernel<Concat>});
}

}  // namespace ferry::ref
