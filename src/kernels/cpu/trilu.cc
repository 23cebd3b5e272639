// Trilu: keeps the upper (upper=1: j >= i + k) or lower (upper=0: j <= i + k) triangle of each matrix in the last
// two dimensions and zeroes the rest; k is the optional scalar input 1 (read on the host). Each row is one memcpy of
// its kept run and memsets of the rest (all-zero bytes are zero in every byte-sized type), rows split over
// threads when the tensor is large. Prepare checks the shapes and k's dtype; k's value is read by Compute (the
// run's data), as in ref. com.microsoft::Trilu-1 (ONNX Runtime's contrib op) is the same op: this kernel serves both.
#include <algorithm>
#include <cstring>

#include "core/parallel.h"
#include "kernels/cpu/strided_copy.h"
#include "kernels/kernel_def.h"
#include "kernels/ref/common.h"
#include "kernels/ref/copy_util.h"
#include "kernels/ref/ms_types.h"
#include "kernels/registry.h"

namespace ferry::cpu {
namespace {

class Trilu : public OpKernel {
 public:
  explicit Trilu(const ir::Node& node) : upper_(node.GetInt("upper", 1) != 0) {}

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
      if (kt.dtype != DataType::kBool) {
        ref::Dispatch(ref::NumericTypes{}, kt.dtype, ctx.Describe() + ": input 'k'", [](auto) {});
      }
    }
    ctx.SetOutput(0, x.dtype, x.shape);
  }

  void Compute(KernelContext& ctx) const override {
    const Tensor& x = ctx.required_input(0);
    int64_t k = 0;
    if (const Tensor* kt = ctx.input(1)) {
      // k's value is the run's data (a NaN is its error, naming the node).
      k = kt->dtype() == DataType::kInt64 ? kt->data<int64_t>()[0]
                                          : ref::ReadScalarInteger(*kt, ctx.Describe() + ": input 'k'");
    }
    Tensor& y = ctx.OutputUninitialized(0);
    if (y.size() == 0) return;
    const int64_t rows = x.dim(x.rank() - 2), cols = x.dim(x.rank() - 1);
    k = std::clamp<int64_t>(k, -rows - 1, cols + 1);
    const int64_t total_rows = x.size() / cols;
    const auto elem = static_cast<int64_t>(ElementBytes(x.dtype()));
    const auto* src = static_cast<const uint8_t*>(x.raw_data());
    auto* dst = static_cast<uint8_t*>(y.raw_data());
    const bool upper = upper_;
    const int64_t row_bytes = cols * elem;
    const int64_t grain = std::max<int64_t>(1, kCopyGrainBytes / row_bytes);
    ParallelFor(CopyThreads(ctx.threads(), y.size() * elem), total_rows, grain, [&](int64_t begin, int64_t end) {
      for (int64_t r = begin; r < end; ++r) {
        const int64_t i = r % rows;
        const int64_t j0 = upper ? std::clamp<int64_t>(i + k, 0, cols) : 0;
        const int64_t j1 = upper ? cols : std::clamp<int64_t>(i + k + 1, 0, cols);
        uint8_t* out = dst + r * row_bytes;
        const uint8_t* in = src + r * row_bytes;
        if (j0 > 0) std::memset(out, 0, static_cast<size_t>(j0 * elem));
        if (j1 > j0) std::memcpy(out + j0 * elem, in + j0 * elem, static_cast<size_t>((j1 - j0) * elem));
        if (j1 < cols) std::memset(out + j1 * elem, 0, static_cast<size_t>((cols - j1) * elem));
      }
    });
  }

 private:
  bool upper_;
};

}  // namespace

void RegisterTriluKernels(KernelRegistry& r) {
  r.Add({.op = "Trilu",
         .since = 14,
         .types = {{"T", ByteSizedTypes()}},
         .create = MakeKernel<Trilu>,
         .host_inputs = {1},
         .name = "cpu.any_trilu__memcpy.14"});
  r.Add({.op = "Trilu",
         .domain = "com.microsoft",
         .since = 1,
         .types = {{"T", ref::MsTriluTypes()}},
         .create = MakeKernel<Trilu>,
         .host_inputs = {1},
         .name = "cpu.com.microsoft.any_trilu__memcpy.1"});
}

}  // namespace ferry::cpu
