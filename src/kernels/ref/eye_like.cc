// EyeLike: a 2-D tensor shaped like the input with ones on the k-th diagonal and zeros elsewhere, of the
// `dtype` attribute's type (the input's type when absent).
#include <algorithm>

#include "kernels/kernel_def.h"
#include "kernels/ref/common.h"
#include "kernels/ref/copy_util.h"
#include "kernels/registry.h"

namespace ferry::ref {
namespace {

using EyeTypes =
    TypeList<float, double, Float16, BFloat16, int8_t, int16_t, int32_t, int64_t, uint8_t, uint16_t, uint32_t, uint64_t,
             bool>;

class EyeLike : public OpKernel {
 public:
  explicit EyeLike(const ir::Node& node) : k_(node.GetInt("k", 0)) {
    if (node.has_attr("dtype")) {
      const int64_t v = node.GetInt("dtype", 0);
      if (!IsKnownDataType(static_cast<int32_t>(v)) || v > kMaxDataTypeValue) {
        throw InvalidModelError(node.Describe() + ": attribute 'dtype' " + std::to_string(v) + " is not a data type");
      }
      dtype_ = static_cast<DataType>(v);
    }
  }

  void Prepare(PrepareContext& ctx) const override {
    const InputSpec& x = ctx.tensor_input(0);
    if (x.shape.size() != 2) {
      throw InvalidArgumentError(ctx.Describe() + ": input must be 2-D, got " + ctx.InputString(0));
    }
    const DataType dtype = dtype_ == DataType::kUndefined ? x.dtype : dtype_;
    Dispatch(EyeTypes{}, dtype, ctx.Describe(), [](auto) {});  // a type Compute writes
    ctx.SetOutput(0, dtype, x.shape);
  }

  void Compute(KernelContext& ctx) const override {
    Tensor& y = ctx.Output(0);  // zeroed: only the diagonal is written
    const DataType dtype = y.dtype();
    const int64_t rows = y.dim(0), cols = y.dim(1);
    Dispatch(EyeTypes{}, dtype, ctx, [&](auto tag) {
      using T = decltype(tag);
      T* out = y.data<T>();
      const int64_t k = std::clamp<int64_t>(k_, -rows, cols);
      for (int64_t i = std::max<int64_t>(0, -k); i < rows && i + k < cols; ++i) {
        out[i * cols + i + k] = static_cast<T>(static_cast<Acc<T>>(1));
      }
    });
  }

 private:
  int64_t k_;
  DataType dtype_ = DataType::kUndefined;
};

}  // namespace

void RegisterEyeLikeKernels(KernelRegistry& r) {
  const auto types = dtypes::Concat(dtypes::Numeric(), {DataType::kBool});
  r.Add({.op = "EyeLike", .since = 9, .types = {{"T1", types}, {"T2", types}}, .create = MakeKernel<EyeLike>});
}

}  // namespace ferry::ref
