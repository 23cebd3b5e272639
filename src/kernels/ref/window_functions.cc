// HannWindow, HammingWindow, BlackmanWindow (opset 17): a window of `size` (scalar input) samples,
// w[n] = a0 - a1 cos(2 pi n / N) + a2 cos(4 pi n / N) with N = size (periodic=1, default) or size - 1
// (periodic=0). Hann: a0 = a1 = 0.5; Hamming: a0 = 25/46, a1 = 21/46; Blackman: 0.42, 0.5, 0.08. The output type
// is `output_datatype` (default float). A symmetric window of size 1 is [1]. Prepare checks the inputs and declares
// Y when `size` is a constant.
#include <string>

#include "kernels/kernel_def.h"
#include "kernels/ref/common.h"
#include "kernels/ref/signal_util.h"
#include "kernels/registry.h"

namespace ferry::ref {
namespace {

struct WindowCoeffs {
  double a0, a1, a2;
};

class WindowFunction : public OpKernel {
 public:
  WindowFunction(const ir::Node& node, WindowCoeffs c)
      : c_(c), periodic_(node.GetInt("periodic", 1) != 0) {
    const int64_t dt = node.GetInt("output_datatype", static_cast<int64_t>(DataType::kFloat));
    if (!IsKnownDataType(static_cast<int32_t>(dt)))
      throw InvalidModelError(node.Describe() + ": output_datatype " + std::to_string(dt) + " is not a data type");
    out_ = static_cast<DataType>(dt);
  }

  // `size`'s shape and dtype and the output type; Y's length when `size` is a constant (else Y is dynamic and
  // Compute reads the run's size).
  void Prepare(PrepareContext& ctx) const override {
    const InputSpec& t = ctx.tensor_input(0);
    if (ShapeElementCount(t.shape) != 1) {  // ReadScalarInt's checks
      throw InvalidArgumentError(ctx.Describe() + ": size must be a scalar, got shape " + ShapeToString(t.shape) +
                                 " (" + ctx.InputString(0) + ")");
    }
    if (t.dtype != DataType::kInt32 && t.dtype != DataType::kInt64) {
      throw InvalidArgumentError(ctx.Describe() + ": size: expected an int32 or int64 tensor, got " +
                                 ctx.InputString(0));
    }
    Dispatch(NumericTypes{}, out_, ctx.Describe(), [](auto) {});
    if (!ctx.constant(0)) return ctx.SetOutputDynamic(0);
    ctx.SetOutput(0, out_, {ReadSize(*ctx.constant(0), ctx.Describe())});
  }

  void Compute(KernelContext& ctx) const override {
    const OutputSpec* prepared = ctx.prepared_output(0);
    const bool known = prepared && prepared->is_tensor();
    // A size read at run time: its errors are the data's (they name the node).
    const int64_t size = known ? prepared->shape[0] : ReadSize(ctx.required_input(0), ctx.Describe());
    Tensor& y = known ? ctx.Output(0) : ctx.Output(0, out_, {size});
    const double n_total = static_cast<double>(periodic_ ? size : size - 1);
    Dispatch(NumericTypes{}, out_, ctx, [&](auto tag) {
      using T = decltype(tag);
      T* o = y.data<T>();
      for (int64_t i = 0; i < size; ++i) {
        double w = 1.0;
        if (n_total > 0) {
          const double t = 2.0 * M_PI * static_cast<double>(i) / n_total;
          w = c_.a0 - c_.a1 * std::cos(t) + c_.a2 * std::cos(2.0 * t);
        }
        o[i] = T(static_cast<Acc<T>>(w));
      }
    });
  }

 private:
  // The window's length from `size`'s data; throws InvalidArgumentError naming `what` when it is negative.
  static int64_t ReadSize(const Tensor& t, const std::string& what) {
    const int64_t size = ReadScalarInt(t, what, "size");
    if (size < 0) throw InvalidArgumentError(what + ": size must be >= 0, got " + std::to_string(size));
    return size;
  }

  WindowCoeffs c_;
  bool periodic_;
  DataType out_ = DataType::kFloat;
};

class HannWindow : public WindowFunction {
 public:
  explicit HannWindow(const ir::Node& node) : WindowFunction(node, {0.5, 0.5, 0.0}) {}
};
class HammingWindow : public WindowFunction {
 public:
  explicit HammingWindow(const ir::Node& node) : WindowFunction(node, {25.0 / 46.0, 21.0 / 46.0, 0.0}) {}
};
class BlackmanWindow : public WindowFunction {
 public:
  explicit BlackmanWindow(const ir::Node& node) : WindowFunction(node, {0.42, 0.5, 0.08}) {}
};

}  // namespace

void RegisterWindowFunctionKernels(KernelRegistry& r) {
  const std::vector<DataType> size_types = {DataType::kInt32, DataType::kInt64};
  const std::vector<DataType> out_types = dtypes::Numeric();
  r.Add({.op = "HannWindow", .since = 17, .types = {{"T1", size_types}, {"T2", out_types}},
         .create = MakeKernel<HannWindow>, .host_inputs = {0}});
  r.Add({.op = "HammingWindow", .since = 17, .types = {{"T1", size_types}, {"T2", out_types}},
         .create = MakeKernel<HammingWindow>, .host_inputs = {0}});
  r.Add({.op = "BlackmanWindow", .since = 17, .types = {{"T1", size_types}, {"T2", out_types}},
         .create = MakeKernel<BlackmanWindow>, .host_inputs = {0}});
}

}  // namespace ferry::ref
