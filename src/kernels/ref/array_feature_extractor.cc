// ArrayFeatureExtractor (ai.onnx.ml opset 1): selects elements of the last axis of X at the given indices.
// Output X.shape[:-1] + [len(Y)]; a 1-D X gives [1, len(Y)] (as in ONNX Runtime and the ONNX reference).
#include <cstring>

#include "kernels/kernel_def.h"
#include "kernels/ref/common.h"
#include "kernels/registry.h"

namespace ferry::ref {
namespace {

class ArrayFeatureExtractor : public OpKernel {
 public:
  explicit ArrayFeatureExtractor(const ir::Node&) {}
  void Prepare(PrepareContext& ctx) const override {
    const InputSpec& x = ctx.tensor_input(0);
    const InputSpec& idx = ctx.tensor_input(1);
    if (idx.dtype != DataType::kInt64) {
      throw InvalidArgumentError(ctx.Describe() + ": indices must be int64, got " + ctx.InputString(1));
    }
    if (x.shape.empty()) {
      throw InvalidArgumentError(ctx.Describe() + ": X must have rank >= 1, got " + ctx.InputString(0));
    }
    Shape ys = x.shape.size() == 1 ? Shape{1} : Shape(x.shape.begin(), x.shape.end() - 1);
    ys.push_back(ShapeElementCount(idx.shape));
    ctx.SetOutput(0, x.dtype, std::move(ys));
  }
  void Compute(KernelContext& ctx) const override {
    const Tensor& x = ctx.required_input(0);
    const Tensor& idx_t = ctx.required_input(1);
    const int64_t n = x.dim(x.rank() - 1);
    const int64_t k = idx_t.size();
    const int64_t* idx = idx_t.data<int64_t>();
    for (int64_t j = 0; j < k; ++j)
      if (idx[j] < 0 || idx[j] >= n)
        throw InvalidArgumentError(ctx.Describe() + ": index " + std::to_string(idx[j]) + " is out of range [0, " +
                                   std::to_string(n) + ")");
    Tensor& y = ctx.Output(0);
    const int64_t rows = n == 0 ? 0 : x.size() / n;
    if (x.dtype() == DataType::kString) {
      for (int64_t r = 0; r < rows; ++r)
        for (int64_t j = 0; j < k; ++j) y.strings()[r * k + j] = x.strings()[r * n + idx[j]];
      return;
    }
    const size_t es = static_cast<size_t>(DataTypeBits(x.dtype()) / 8);
    const auto* in = static_cast<const unsigned char*>(x.raw_data());
    auto* out = static_cast<unsigned char*>(y.raw_data());
    for (int64_t r = 0; r < rows; ++r)
      for (int64_t j = 0; j < k; ++j)
        std::memcpy(out + static_cast<size_t>(r * k + j) * es, in + static_cast<size_t>(r * n + idx[j]) * es, es);
  }
};

}  // namespace

void RegisterArrayFeatureExtractorKernels(KernelRegistry& r) {
  r.Add({.op = "ArrayFeatureExtractor",
         .domain = "ai.onnx.ml",
         .since = 1,
         .types = {{"T", {DataType::kFloat, DataType::kDouble, DataType::kInt64, DataType::kInt32, DataType::kString}}},
         .create = MakeKernel<ArrayFeatureExtractor>});
}

}  // namespace ferry::ref
