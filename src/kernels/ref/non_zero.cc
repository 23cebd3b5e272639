// NonZero: the coordinates of the non-zero elements, as int64 [rank, count] in row-major order (a scalar is
// treated as 1-D). Floats compare by value (-0.0 is zero), strings are non-zero when not empty, complex values
// when either part is.
#include <complex>

#include "kernels/kernel_def.h"
#include "kernels/ref/common.h"
#include "kernels/ref/copy_util.h"
#include "kernels/registry.h"

namespace ferry::ref {
namespace {

template <typename T>
bool IsNonZero(const T& v) {
  if constexpr (std::is_same_v<T, std::string>) {
    return !v.empty();
  } else if constexpr (std::is_same_v<T, bool>) {
    return v;
  } else {
    return static_cast<Acc<T>>(v) != static_cast<Acc<T>>(0);
  }
}

class NonZero : public OpKernel {
 public:
  explicit NonZero(const ir::Node&) {}

  // The count of non-zero elements is data: the output is dynamic.
  void Prepare(PrepareContext& ctx) const override {
    ctx.tensor_input(0);  // a tensor: throws naming the node otherwise
    ctx.SetOutputDynamic(0);
  }

  void Compute(KernelContext& ctx) const override {
    const Tensor& x = ctx.required_input(0);
    const int64_t n = x.size();
    std::vector<bool> nz(static_cast<size_t>(n));
    if (x.dtype() == DataType::kComplex64 || x.dtype() == DataType::kComplex128) {
      for (int64_t i = 0; i < n; ++i) {
        nz[static_cast<size_t>(i)] = x.dtype() == DataType::kComplex64
                                         ? x.data<std::complex<float>>()[i] != std::complex<float>(0, 0)
                                         : x.data<std::complex<double>>()[i] != std::complex<double>(0, 0);
      }
    } else {
      Dispatch(AllTypes{}, x.dtype(), ctx, [&](auto tag) {
        using T = decltype(tag);
        const T* p = x.data<T>();
        for (int64_t i = 0; i < n; ++i) nz[static_cast<size_t>(i)] = IsNonZero(p[i]);
      });
    }
    int64_t count = 0;
    for (bool b : nz) count += b;
    const Shape shape = x.rank() == 0 ? Shape{1} : x.shape();
    const int64_t rank = static_cast<int64_t>(shape.size());
    Tensor& y = ctx.Output(0, DataType::kInt64, {rank, count});
    int64_t* out = y.data<int64_t>();
    std::vector<int64_t> idx(static_cast<size_t>(rank), 0);
    int64_t c = 0;
    for (int64_t i = 0; i < n; ++i) {
      if (nz[static_cast<size_t>(i)]) {
        for (int64_t d = 0; d < rank; ++d) out[d * count + c] = idx[static_cast<size_t>(d)];
        ++c;
      }
      for (int64_t d = rank - 1; d >= 0; --d) {
        if (++idx[static_cast<size_t>(d)] < shape[static_cast<size_t>(d)]) break;
        idx[static_cast<size_t>(d)] = 0;
      }
    }
  }
};

}  // namespace

void RegisterNonZeroKernels(KernelRegistry& r) {
  r.Add({.op = "NonZero",
         .since = 9,
         .types = {{"T", dtypes::Concat(dtypes::Numeric(),
                                        {DataType::kBool, DataType::kString, DataType::kComplex64,
                                         DataType::kComplex128})}},
         .create = MakeKernel<NonZero>});
}

}  // namespace ferry::ref
