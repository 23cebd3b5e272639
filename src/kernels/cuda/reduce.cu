// ReduceMean, ReduceSum, ReduceMax over any axes, and GlobalAveragePool / GlobalMaxPool (a reduction over the
// spatial dims): one warp per output element walks its reduced elements through the plan of cuda_shapes.h,
// accumulating in float.
#include <cmath>

#include "kernels/cuda/cuda_common.h"
#include "kernels/cuda/device_types.cuh"

namespace ferry::cuda {
namespace {

enum class ReduceOp { kSum, kMean, kMax };
constexpr int kWarpsPerBlock = 8;

template <typename T>
__global__ void ReduceKernel(const T* x, T* y, ReducePlan p, ReduceOp op) {
  const int64_t out = static_cast<int64_t>(blockIdx.x) * kWarpsPerBlock + threadIdx.x / 32;
  const int lane = threadIdx.x % 32;
  if (out >= p.outputs) return;
  int64_t base = 0, rest = out;
  for (int d = p.kept_rank - 1; d >= 0; --d) {
    const int64_t q = rest / p.kept_dims[d];
    base += (rest - q * p.kept_dims[d]) * p.kept_strides[d];
    rest = q;
  }
  float acc = op == ReduceOp::kMax ? -INFINITY : 0.f;
  bool nan = false;
  for (int64_t r = lane; r < p.reduced; r += 32) {
    int64_t off = base, k = r;
    for (int d = p.red_rank - 1; d >= 0; --d) {
      const int64_t q = k / p.red_dims[d];
      off += (k - q * p.red_dims[d]) * p.red_strides[d];
      k = q;
    }
    const float v = Load(x, off);
    if (op == ReduceOp::kMax) {
      nan = nan || v != v;
      acc = fmaxf(acc, v);
    } else {
      acc += v;
    }
  }
  for (int o = 16; o > 0; o /= 2) {
    const float other = __shfl_xor_sync(0xffffffffu, acc, o);
    acc = op == ReduceOp::kMax ? fmaxf(acc, other) : acc + other;
    nan = __any_sync(0xffffffffu, nan);
  }
  if (lane != 0) return;
  if (op == ReduceOp::kMean) acc /= static_cast<float>(p.reduced);
  if (nan) acc = NAN;
  Store(y, out, acc);
}

ReduceOp OpOf(const ir::Node& n) {
  const std::string& op = n.op_type();
  if (op == "ReduceSum") return ReduceOp::kSum;
  if (op == "ReduceMean" || op == "GlobalAveragePool") return ReduceOp::kMean;
  if (op == "ReduceMax" || op == "GlobalMaxPool") return ReduceOp::kMax;
  throw InternalError(n.Describe() + ": not a reduction of the cuda backend");
}

// Axes from input 1 (host) when the op's opset takes them as an input, else from the attribute.
std::vector<int64_t> ReadAxes(const KernelContext& ctx, bool from_input, const std::vector<int64_t>& attr) {
  if (!from_input) return attr;
  const Tensor* t = ctx.input(1);
  if (!t || t->size() == 0) return {};
  std::vector<int64_t> axes(static_cast<size_t>(t->size()));
  for (int64_t i = 0; i < t->size(); ++i) {
    axes[static_cast<size_t>(i)] = t->dtype() == DataType::kInt32 ? t->data<int32_t>()[i] : t->data<int64_t>()[i];
  }
  return axes;
}

class Reduce final : public CudaKernel {
 public:
  Reduce(const ir::Node& n, int device) : CudaKernel(n, device), op_(OpOf(n)) {
    global_pool_ = n.op_type().starts_with("Global");
    keepdims_ = global_pool_ || n.GetInt("keepdims", 1) != 0;
    noop_with_empty_axes_ = n.GetInt("noop_with_empty_axes", 0) != 0;
    axes_from_input_ = n.op_type() == "ReduceSum" ? n.opset() >= 13 : n.opset() >= 18;
    axes_attr_ = n.GetInts("axes");
  }

 protected:
  void Launch(KernelContext& ctx, cudaStream_t stream) const override {
    const Tensor& x = ctx.required_input(0);
    std::vector<int64_t> axes;
    if (global_pool_) {
      if (x.rank() < 3) throw InvalidModelError(who() + ": input rank must be >= 3, got " + std::to_string(x.rank()));
      for (int64_t i = 2; i < x.rank(); ++i) axes.push_back(i);
    } else {
      axes = ReadAxes(ctx, axes_from_input_ && !global_pool_, axes_attr_);
      if (axes.empty() && noop_with_empty_axes_) {
        ctx.SetOutput(0, *ctx.input_value(0));  // identity: share the buffer
        return;
      }
      if (axes.empty()) {
        for (int64_t i = 0; i < x.rank(); ++i) axes.push_back(i);
      }
      axes = NormalizeAxes(axes, x.rank(), who());
    }
    const ReducePlan p = PlanReduce(x.shape(), axes, who());
    Tensor y = Output(ctx, 0, stream, x.dtype(), ReducedShape(x.shape(), axes, keepdims_));
    if (p.outputs == 0) return;
    if (p.reduced == 0) {
      throw UnsupportedError(who() + ": reducing an empty axis is not implemented on cuda");
    }
    const int64_t blocks = (p.outputs + kWarpsPerBlock - 1) / kWarpsPerBlock;
    if (blocks > 0x7fffffffLL) throw UnsupportedError(who() + ": too many outputs");
    DispatchFloat(x.dtype(), who(), [&](auto t) {
      using T = decltype(t);
      ReduceKernel<T><<<static_cast<unsigned>(blocks), kWarpsPerBlock * 32, 0, stream>>>(x.data<T>(), y.data<T>(), p, op_);
    });
  }

 private:
  ReduceOp op_;
  bool global_pool_ = false, keepdims_ = true, noop_with_empty_axes_ = false, axes_from_input_ = false;
  std::vector<int64_t> axes_attr_;
};

}  // namespace

void AddReduceFactories(FactoryList& list) {
  for (const char* name : {"cuda.ReduceMean.13", "cuda.ReduceSum.13", "cuda.ReduceMax.13", "cuda.GlobalAveragePool.1",
                           "cuda.GlobalMaxPool.1"}) {
    list.emplace_back(name, Make<Reduce>());
  }
}

}  // namespace ferry::cuda
