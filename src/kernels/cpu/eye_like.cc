// EyeLike: a 2-D tensor shaped like the input with ones on the k-th diagonal and zeros elsewhere, of the `dtype`
// attribute's type (the input's type when absent). Prepare encodes the type's one once (ref's conversion); Compute
// zeroes Y (all-zero bytes are zero in every type) and stores that word on the diagonal, by element size.
#include <algorithm>
#include <string>

#include "kernels/cpu/strided_copy.h"
#include "kernels/kernel_def.h"
#include "kernels/ref/common.h"
#include "kernels/registry.h"

namespace ferry::cpu {
namespace {

using EyeTypes = ref::TypeList<float, double, Float16, BFloat16, int8_t, int16_t, int32_t, int64_t, uint8_t, uint16_t,
                               uint32_t, uint64_t, bool>;

// The output type's one, as a one-element tensor.
struct EyeLikePlan {
  Tensor one;
};

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
    EyeLikePlan p{Tensor(dtype, {1})};
    ref::Dispatch(EyeTypes{}, dtype, ctx.Describe(), [&](auto tag) {  // a type Compute writes
      using T = decltype(tag);
      p.one.template data<T>()[0] = static_cast<T>(static_cast<ref::Acc<T>>(1));
    });
    ctx.EmplaceState(std::move(p));
    ctx.SetOutput(0, dtype, x.shape);
  }

  void Compute(KernelContext& ctx) const override {
    const EyeLikePlan& p = ctx.state<EyeLikePlan>();
    Tensor& y = ctx.Output(0);  // zeroed: only the diagonal is written
    const int64_t rows = y.dim(0), cols = y.dim(1);
    const int64_t k = std::clamp<int64_t>(k_, -rows, cols);
    DispatchWord(ElementBytes(y.dtype()), [&](auto tag) {
      using W = decltype(tag);
      W* out = static_cast<W*>(y.raw_data());
      const W one = static_cast<const W*>(p.one.raw_data())[0];
      for (int64_t i = std::max<int64_t>(0, -k); i < rows && i + k < cols; ++i) out[i * cols + i + k] = one;
    });
  }

 private:
  int64_t k_;
  DataType dtype_ = DataType::kUndefined;
};

}  // namespace

void RegisterEyeLikeKernels(KernelRegistry& r) {
  const auto types = dtypes::Concat(dtypes::Numeric(), {DataType::kBool});
  r.Add({.op = "EyeLike",
         .since = 9,
         .types = {{"T1", types}, {"T2", types}},
         .create = MakeKernel<EyeLike>,
         .name = "cpu.num_eye_like__diagonal.9"});
}

}  // namespace ferry::cpu
