// Tile: repeats the input repeats[d] times along each dimension d (opset 6+: int64 input `repeats`; opset 1:
// scalar inputs `tiles` and `axis` repeat along one axis). One strided copy over a 2r-dimensional view of the
// output, [repeats_0, dim_0, repeats_1, dim_1, ...], with zero source strides on the repeat dimensions. Prepare
// checks the repeat inputs and plans the copy when they are constants; repeats read at run time are resolved (and
// their errors raised) by Compute.
#include <string>
#include <vector>

#include "kernels/kernel_def.h"
#include "kernels/ref/common.h"
#include "kernels/ref/copy_util.h"
#include "kernels/registry.h"

namespace ferry::ref {
namespace {

// Y's shape and the strided copy that fills it: box, destination and source strides of the 2r-dimensional view.
struct Plan {
  Shape out_shape;
  std::vector<int64_t> box, ds, ss;
};

class Tile : public OpKernel {
 public:
  explicit Tile(const ir::Node& node) : opset_(node.opset()) {}

  // The repeat inputs' dtypes and shapes; the plan when they are constants (else Y is dynamic and Compute
  // resolves the run's repeats).
  void Prepare(PrepareContext& ctx) const override {
    const InputSpec& x = ctx.tensor_input(0);
    if (opset_ < 6) {
      if (x.shape.empty()) {  // `axis` names a dimension of X
        throw InvalidArgumentError(ctx.Describe() + ": a scalar cannot be tiled along an axis (" + ctx.InputString(0) +
                                   ")");
      }
      for (int i : {1, 2}) {
        const std::string name = i == 1 ? "tiles" : "axis";
        const InputSpec& t = ctx.tensor_input(i);
        if (ShapeElementCount(t.shape) != 1) {  // ReadScalarInteger's checks
          throw InvalidArgumentError(ctx.Describe() + ": input '" + name + "': expected a scalar, got " +
                                     ctx.InputString(i));
        }
        if (t.dtype != DataType::kBool) {
          Dispatch(NumericTypes{}, t.dtype, ctx.Describe() + ": input '" + name + "'", [](auto) {});
        }
      }
      if (!ctx.constant(1) || !ctx.constant(2)) return ctx.SetOutputDynamic(0);
    } else {
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
    }
    const Plan& p = ctx.EmplaceState(Resolve(x.shape, ctx.constant(1), ctx.constant(2), ctx.Describe()));
    ctx.SetOutput(0, x.dtype, p.out_shape);
  }

  void Compute(KernelContext& ctx) const override {
    const Tensor& x = ctx.required_input(0);
    const Plan* prepared = ctx.state_if_any<Plan>();
    Plan resolved;
    if (!prepared) {  // repeats read at run time: their errors are the data's (they name the node)
      resolved = Resolve(x.shape(), ctx.input(1), ctx.input(2), ctx.Describe());
    }
    const Plan& p = prepared ? *prepared : resolved;
    Tensor& y = prepared ? ctx.Output(0) : ctx.Output(0, x.dtype(), p.out_shape);
    CopyStrided(x.dtype(), y.raw_data(), 0, p.ds, x.raw_data(), 0, p.ss, p.box, ctx.threads());
  }

 private:
  int64_t opset_;

  // The plan for X's shape and the repeat inputs' data (opset 6+: `t1` repeats; opset 1: `t1` tiles and `t2`
  // axis), of the dtypes and shapes Prepare checked; throws naming `what` for values that cannot tile X.
  Plan Resolve(const Shape& x_shape, const Tensor* t1, const Tensor* t2, const std::string& what) const {
    const auto rank = static_cast<int64_t>(x_shape.size());
    std::vector<int64_t> repeats;
    if (opset_ < 6) {
      repeats.assign(static_cast<size_t>(rank), 1);
      const int64_t tiles = ReadScalarInteger(*t1, what + ": input 'tiles'");
      const int64_t axis =
          NormalizeAxis(ReadScalarInteger(*t2, what + ": input 'axis'"), rank, what + ": input 'axis'");
      repeats[static_cast<size_t>(axis)] = tiles;
    } else {
      repeats = ReadInt64s(*t1, what + ": input 'repeats'");
    }
    Plan p;
    p.out_shape.resize(static_cast<size_t>(rank));
    for (size_t d = 0; d < p.out_shape.size(); ++d) {
      if (repeats[d] < 0) {
        throw InvalidArgumentError(what + ": repeats " + ShapeToString(repeats) + " has a negative entry");
      }
      if (__builtin_mul_overflow(x_shape[d], repeats[d], &p.out_shape[d])) {
        throw ResourceExhaustedError(what + ": output dimension overflows int64");
      }
    }
    const std::vector<int64_t> in_strides = Strides(x_shape), out_strides = Strides(p.out_shape);
    for (size_t d = 0; d < p.out_shape.size(); ++d) {
      p.box.push_back(repeats[d]);
      p.ds.push_back(x_shape[d] * out_strides[d]);
      p.ss.push_back(0);
      p.box.push_back(x_shape[d]);
      p.ds.push_back(out_strides[d]);
      p.ss.push_back(in_strides[d]);
    }
    return p;
  }
};

}  // namespace

void RegisterTileKernels(KernelRegistry& r) {
  r.Add({.op = "Tile", .since = 1, .until = 5, .types = {{"T", dtypes::All()}}, .create = MakeKernel<Tile>,
         .host_inputs = {1, 2}});
  r.Add({.op = "Tile", .since = 6, .types = {{"T", dtypes::All()}, {"T1", {DataType::kInt64}}},
         .create = MakeKernel<Tile>, .host_inputs = {1}});
}

}  // namespace ferry::ref
