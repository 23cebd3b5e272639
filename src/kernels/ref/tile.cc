// Tile: repeats the input repeats[d] times along each dimension d (opset 6+: int64 input `repeats`; opset 1:
// scalar inputs `tiles` and `axis` repeat along one axis). One strided copy over a 2r-dimensional view of the
// output, [repeats_0, dim_0, repeats_1, dim_1, ...], with zero source strides on the repeat dimensions.
#include "kernels/kernel_def.h"
#include "kernels/ref/common.h"
#include "kernels/ref/copy_util.h"
#include "kernels/registry.h"

namespace ferry::ref {
namespace {

class Tile : public OpKernel {
 public:
  explicit Tile(const ir::Node& node) : opset_(node.opset()) {}

  void Compute(KernelContext& ctx) const override {
    const Tensor& x = ctx.required_input(0);
    const int64_t rank = x.rank();
    std::vector<int64_t> repeats;
    if (opset_ < 6) {
      repeats.assign(static_cast<size_t>(rank), 1);
      const int64_t tiles = ReadScalarInteger(ctx.required_input(1), ctx.Describe() + ": input 'tiles'");
      const int64_t axis = NormalizeAxis(ReadScalarInteger(ctx.required_input(2), ctx.Describe() + ": input 'axis'"),
                                         rank, ctx.Describe() + ": input 'axis'");
      repeats[static_cast<size_t>(axis)] = tiles;
    } else {
      const Tensor& rt = ctx.required_input(1);
      repeats = ReadInt64s(rt, ctx.Describe() + ": input 'repeats'");
      if (rt.rank() != 1 || static_cast<int64_t>(repeats.size()) != rank) {
        throw InvalidArgumentError(ctx.Describe() + ": input 'repeats' " + DescribeTensor(rt) +
                                   " must be 1-D with one entry per dimension of input " + DescribeTensor(x));
      }
    }
    Shape out_shape(static_cast<size_t>(rank));
    for (size_t d = 0; d < out_shape.size(); ++d) {
      if (repeats[d] < 0) {
        throw InvalidArgumentError(ctx.Describe() + ": repeats " + ShapeToString(repeats) + " has a negative entry");
      }
      if (__builtin_mul_overflow(x.shape()[d], repeats[d], &out_shape[d])) {
        throw ResourceExhaustedError(ctx.Describe() + ": output dimension overflows int64");
      }
    }
    Tensor& y = ctx.Output(0, x.dtype(), out_shape);
    const std::vector<int64_t> in_strides = Strides(x.shape()), out_strides = Strides(out_shape);
    std::vector<int64_t> box, ds, ss;
    for (size_t d = 0; d < out_shape.size(); ++d) {
      box.push_back(repeats[d]);
      ds.push_back(x.shape()[d] * out_strides[d]);
      ss.push_back(0);
      box.push_back(x.shape()[d]);
      ds.push_back(out_strides[d]);
      ss.push_back(in_strides[d]);
    }
    CopyStrided(x.dtype(), y.raw_data(), 0, ds, x.raw_data(), 0, ss, box, ctx.threads());
  }

 private:
  int64_t opset_;
};

}  // namespace

void RegisterTileKernels(KernelRegistry& r) {
  r.Add({.op = "Tile", .since = 1, .until = 5, .types = {{"T", dtypes::All()}}, .create = MakeKernel<Tile>,
         .host_inputs = {1, 2}});
  r.Add({.op = "Tile", .since = 6, .types = {{"T", dtypes::All()}, {"T1", {DataType::kInt64}}},
         .create = MakeKernel<Tile>, .host_inputs = {1}});
}

}  // namespace ferry::ref
