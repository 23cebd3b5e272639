// Tile (opset 6+): repeats X repeats[d] times along each dimension d. One strided box copy over the
// 2r-dimensional view of Y, [repeats_0, dim_0, repeats_1, dim_1, ...], with zero source strides on the repeat
// dimensions; the copy engine (strided_copy.h) merges contiguous dimensions and fills broadcast runs by element
// size, so every byte-sized type shares one instantiation per width. Prepare checks the repeats input and plans the
// copy when it is a constant; repeats read at run time are resolved (and their errors raised) by Compute, as in ref.
#include <string>
#include <vector>

#include "kernels/cpu/strided_copy.h"
#include "kernels/kernel_def.h"
#include "kernels/ref/common.h"
#include "kernels/registry.h"

namespace ferry::cpu {
namespace {

// Y's shape and the strided copy that fills it: box, destination and source strides of the 2r-dimensional view.
struct TilePlan {
  Shape out_shape;
  std::vector<int64_t> box, ds, ss;
};

// The plan for X's shape and the run's or the constant repeats; throws naming `what` for a negative repeat or an
// output dimension past int64.
TilePlan ResolveTile(const Shape& x_shape, const Tensor& repeats_t, const std::string& what) {
  const std::vector<int64_t> repeats = ref::ReadInt64s(repeats_t, what + ": input 'repeats'");
  TilePlan p;
  p.out_shape.resize(x_shape.size());
  for (size_t d = 0; d < x_shape.size(); ++d) {
    if (repeats[d] < 0) {
      throw InvalidArgumentError(what + ": repeats " + ShapeToString(repeats) + " has a negative entry");
    }
    if (__builtin_mul_overflow(x_shape[d], repeats[d], &p.out_shape[d])) {
      throw ResourceExhaustedError(what + ": output dimension overflows int64");
    }
  }
  const std::vector<int64_t> in_strides = RowMajorStrides(x_shape), out_strides = RowMajorStrides(p.out_shape);
  for (size_t d = 0; d < x_shape.size(); ++d) {
    p.box.insert(p.box.end(), {repeats[d], x_shape[d]});
    p.ds.insert(p.ds.end(), {x_shape[d] * out_strides[d], out_strides[d]});
    p.ss.insert(p.ss.end(), {int64_t{0}, in_strides[d]});
  }
  return p;
}

class Tile : public OpKernel {
 public:
  explicit Tile(const ir::Node&) {}

  void Prepare(PrepareContext& ctx) const override {
    const InputSpec& x = ctx.tensor_input(0);
    const InputSpec& rt = ctx.tensor_input(1);
    if (rt.dtype != DataType::kInt32 && rt.dtype != DataType::kInt64) {
      throw InvalidArgumentError(ctx.Describe() + ": input 'repeats': expected an int32 or int64 tensor, got " +
                                 ctx.InputString(1));
    }
    if (rt.shape.size() != 1 || rt.shape[0] != static_cast<int64_t>(x.shape.size())) {
      throw InvalidArgumentError(ctx.Describe() + ": input 'repeats' " + ctx.InputString(1) +
                                 " must be 1-D with one entry per dimension of input " + ctx.InputString(0));
    }
    if (!ctx.constant(1)) return ctx.SetOutputDynamic(0);
    const TilePlan& p = ctx.EmplaceState(ResolveTile(x.shape, *ctx.constant(1), ctx.Describe()));
    ctx.SetOutput(0, x.dtype, p.out_shape);
  }

  void Compute(KernelContext& ctx) const override {
    const Tensor& x = ctx.required_input(0);
    const TilePlan* prepared = ctx.state_if_any<TilePlan>();
    TilePlan resolved;
    if (!prepared) {  // repeats read at run time: their errors are the data's (they name the node)
      const Tensor& rt = ctx.required_input(1);
      if (rt.size() != x.rank()) {
        throw InvalidArgumentError(ctx.Describe() + ": input 'repeats' must have one entry per dimension of X");
      }
      resolved = ResolveTile(x.shape(), rt, ctx.Describe());
    }
    const TilePlan& p = prepared ? *prepared : resolved;
    Tensor& y = prepared ? ctx.OutputUninitialized(0) : ctx.OutputUninitialized(0, x.dtype(), p.out_shape);
    if (y.size() == 0) return;
    const int elem = ElementBytes(x.dtype());
    StridedCopy(elem, y.raw_data(), p.ds, x.raw_data(), p.ss, p.box, CopyThreads(ctx.threads(), y.size() * elem));
  }
};

}  // namespace

void RegisterTileKernels(KernelRegistry& r) {
  r.Add({.op = "Tile",
         .since = 6,
         .types = {{"T", ByteSizedTypes()}, {"T1", {DataType::kInt64}}},
         .create = MakeKernel<Tile>,
         .host_inputs = {1},
         .name = "cpu.any_tile__strided_copy.6"});
}

}  // namespace ferry::cpu
