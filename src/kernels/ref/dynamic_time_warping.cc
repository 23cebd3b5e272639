// com.microsoft::DynamicTimeWarping: the optimal alignment path through a cost matrix ([rows, cols] or
// [1, rows, cols], float), as ONNX Runtime computes it (Whisper's word timestamps). cost[i][j] = input[i][j] +
// the least of the diagonal, upper and left predecessors (cost[0][0] = 0, the borders +inf), ties going to the
// left predecessor unless the diagonal or upper one is strictly least; the path is traced back from (rows, cols)
// and returned as int32 [2, len]: row indices, then column indices, from (0, 0) on.
#include <limits>
#include <string>
#include <utility>
#include <vector>

#include "kernels/kernel_def.h"
#include "kernels/ref/common.h"
#include "kernels/registry.h"

namespace ferry::ref {
namespace {

class DynamicTimeWarping : public OpKernel {
 public:
  explicit DynamicTimeWarping(const ir::Node&) {}

  void Prepare(PrepareContext& ctx) const override {
    const InputSpec& x = ctx.tensor_input(0);
    if (!(x.shape.size() == 2 || (x.shape.size() == 3 && x.shape[0] == 1))) {
      throw InvalidArgumentError(ctx.Describe() + ": input must be [rows, cols] or [1, rows, cols], got " +
                                 ctx.InputString(0));
    }
    ctx.SetOutputDynamic(0);  // the path's length is the data's
  }

  void Compute(KernelContext& ctx) const override {
    const Tensor& x = ctx.required_input(0);
    const auto rows = static_cast<size_t>(x.dim(x.rank() - 2)), cols = static_cast<size_t>(x.dim(x.rank() - 1));
    const float* in = x.data<float>();
    const float inf = std::numeric_limits<float>::infinity();
    std::vector<float> cost((rows + 1) * (cols + 1), inf);
    std::vector<int8_t> trace((rows + 1) * (cols + 1), -1);
    auto at = [&](size_t i, size_t j) { return i * (cols + 1) + j; };
    cost[0] = 0;
    for (size_t j = 1; j <= cols; ++j) {
      for (size_t i = 1; i <= rows; ++i) {
        const float c0 = cost[at(i - 1, j - 1)], c1 = cost[at(i - 1, j)], c2 = cost[at(i, j - 1)];
        float c = c2;
        int8_t t = 2;
        if (c0 < c1 && c0 < c2) {
          c = c0;
          t = 0;
        } else if (c1 < c0 && c1 < c2) {
          c = c1;
          t = 1;
        }
        cost[at(i, j)] = c + in[(i - 1) * cols + j - 1];
        trace[at(i, j)] = t;
      }
    }
    std::vector<std::pair<int32_t, int32_t>> path;
    for (size_t i = rows, j = cols; i > 0 && j > 0;) {
      path.emplace_back(static_cast<int32_t>(i - 1), static_cast<int32_t>(j - 1));
      const int8_t t = trace[at(i, j)];
      if (t == 0 || t == 1) --i;
      if (t == 0 || t == 2) --j;
    }
    const auto len = static_cast<int64_t>(path.size());
    int32_t* out = ctx.Output(0, DataType::kInt32, {2, len}).data<int32_t>();
    for (int64_t k = 0; k < len; ++k) {
      out[k] = path[static_cast<size_t>(len - 1 - k)].first;
      out[len + k] = path[static_cast<size_t>(len - 1 - k)].second;
    }
  }
};

}  // namespace

void RegisterDynamicTimeWarpingKernels(KernelRegistry& r) {
  r.Add({.op = "DynamicTimeWarping",
         .domain = "com.microsoft",
         .since = 1,
         .types = {{"F", {DataType::kFloat}}},
         .create = MakeKernel<DynamicTimeWarping>});
}

}  // namespace ferry::ref
