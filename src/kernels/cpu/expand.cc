// Expand: broadcasts the input to the bidirectional broadcast of its shape and input 1 (numpy rules, the shape
// read on the host); any data type with a byte-sized element. One strided copy with zero source strides on the
// broadcast dimensions (strided_copy.h): rows that are not broadcast are memcpy runs, a broadcast innermost
// dimension is a fill.
#include "kernels/cpu/strided_copy.h"
#include "kernels/kernel_def.h"
#include "kernels/ref/common.h"
#include "kernels/ref/copy_util.h"
#include "kernels/registry.h"

namespace ferry::cpu {
namespace {

class Expand : public OpKernel {
 public:
  explicit Expand(const ir::Node&) {}

  void Compute(KernelContext& ctx) const override {
    const Tensor& x = ctx.required_input(0);
    const Tensor& shape_t = ctx.required_input(1);
    if (shape_t.rank() > 1) {
      throw InvalidArgumentError(ctx.Describe() + ": input 'shape' must be 1-D, got " + ref::DescribeTensor(shape_t));
    }
    const Shape shape = ref::ReadInt64s(shape_t, ctx.Describe() + ": input 'shape'");
    for (int64_t d : shape) {
      if (d < 0) {
        throw InvalidArgumentError(ctx.Describe() + ": input 'shape' " + ShapeToString(shape) +
                                   " has a negative dimension");
      }
    }
    const Shape out_shape = ref::BroadcastShapes({x.shape(), shape}, ctx.Describe());
    Tensor& y = ctx.Output(0, x.dtype(), out_shape);
    const size_t rank = out_shape.size(), off = rank - x.shape().size();
    const std::vector<int64_t> in_strides = RowMajorStrides(x.shape());
    std::vector<int64_t> src_strides(rank, 0);
    for (size_t d = off; d < rank; ++d) src_strides[d] = x.shape()[d - off] == 1 ? 0 : in_strides[d - off];
    StridedCopy(ElementBytes(x.dtype()), y.raw_data(), RowMajorStrides(out_shape), x.raw_data(), src_strides,
                out_shape, ctx.threads());
  }
};

}  // namespace

void RegisterExpandKernels(KernelRegistry& r) {
  r.Add({.op = "Expand",
         .since = 8,
         .types = {{"T", ByteSizedTypes()}},
         .create = MakeKernel<Expand>,
         .host_inputs = {1},
         .name = "cpu.any_expand__strided.8"});
}

}  // namespace ferry::cpu
