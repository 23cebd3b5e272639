// Trilu: keeps the upper (upper=1: j >= i + k) or lower (upper=0: j <= i + k) triangle of each matrix in the
// last two dimensions and zeroes the rest. k is the optional scalar input 1. Prepare checks the shapes.
// com.microsoft::Trilu (ONNX Runtime's contrib op from before ONNX had it) is the same op; this kernel serves both.
#include <algorithm>

#include "kernels/kernel_def.h"
#include "kernels/ref/common.h"
#include "kernels/ref/copy_util.h"
#include "kernels/ref/ms_types.h"
#include "kernels/registry.h"

namespace ferry::ref {
namespace {

class Trilu : public OpKernel {
 public:
  explicit Trilu(const ir::Node& node) : upper_(node.GetInt("upper", 1) != 0) {}

  // X's rank and k's size and dtype (what ReadScalarInteger reads); Y has X's shape.
  void Prepare(PrepareContext& ctx) const override {
    const InputSpec& x = ctx.tensor_input(0);
    if (x.shape.size() < 2) {
      throw InvalidArgumentError(ctx.Describe() + ": input must have rank >= 2, got " + ctx.InputString(0));
    }
    if (ctx.has_input(1)) {
      const InputSpec& kt = ctx.tensor_input(1);
      if (ShapeElementCount(kt.shape) != 1) {
        throw InvalidArgumentError(ctx.Describe() + ": input 'k': expected a scalar, got " + ctx.InputString(1));
      }
      if (kt.dtype != DataType::kBool) Dispatch(NumericTypes{}, kt.dtype, ctx.Describe() + ": input 'k'", [](auto) {});
    }
    ctx.SetOutput(0, x.dtype, x.shape);
  }

  void Compute(KernelContext& ctx) const override {
    const Tensor& x = ctx.required_input(0);
    int64_t k = 0;
    if (const Tensor* kt = ctx.input(1)) {
      // k's value is the run's data (a NaN is its error, naming the node).
      k = kt->dtype() == DataType::kInt64 ? kt->data<int64_t>()[0]
                                          : ReadScalarInteger(*kt, ctx.Describe() + ": input 'k'");
    }
    const int64_t rows = x.dim(x.rank() - 2), cols = x.dim(x.rank() - 1);
    k = std::clamp<int64_t>(k, -rows - 1, cols + 1);
    Tensor& y = ctx.Output(0);  // zero-initialised
    if (y.size() == 0) return;
    const int64_t mats = x.size() / (rows * cols);
    for (int64_t m = 0; m < mats; ++m) {
      for (int64_t i = 0; i < rows; ++i) {
        const int64_t j0 = upper_ ? std::clamp<int64_t>(i + k, 0, cols) : 0;
        const int64_t j1 = upper_ ? cols : std::clamp<int64_t>(i + k + 1, 0, cols);
        const int64_t row = (m * rows + i) * cols;
        CopyElements(x.dtype(), y.raw_data(), row + j0, x.raw_data(), row + j0, j1 - j0);
      }
    }
  }

 private:
  bool upper_;
};

}  // namespace

void RegisterTriluKernels(KernelRegistry& r) {
  r.Add({.op = "Trilu", .since = 14, .types = {{"T", dtypes::All()}}, .create = MakeKernel<Trilu>,
         .host_inputs = {1}});
  // com.microsoft::Trilu-1: the types of its schema.
  r.Add({.op = "Trilu",
         .domain = "com.microsoft",
         .since = 1,
         .types = {{"T", MsTriluTypes()}},
         .create = MakeKernel<Trilu>,
         .host_inputs = {1}});
}

}  // namespace ferry::ref
