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
// The axes of a reduction: the attribute, or the (host) axes input's values.
std::vector<int64_t> AxesOf(const Tensor* t) {
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

 struct Plan {
    bool identity = false;  // noop_with_empty_axes with no axes: the output is X
    ReducePlan reduce;
    Shape out;
  };

  // The reduction's plan for X's shape, when the axes are known before the run; else from the run's axes.
  void Prepare(PrepareContext& ctx) const override {
    const InputSpec& x = ctx.tensor_input(0);
    const bool from_input = axes_from_input_ && !global_pool_;
    if (from_input && ctx.has_input(1) && !ctx.constant(1)) return ctx.SetOutputDynamic(0);
    const Plan& p = ctx.EmplaceState(MakePlan(x.shape, from_input ? AxesOf(ctx.constant(1)) : axes_attr_,
                                              ctx.Describe()));
    ctx.SetOutput(0, x.dtype, p.out);
    if (p.identity) ctx.output(0).view_of = 0;
  }

 protected:
  void Launch(KernelContext& ctx, cudaStream_t stream) const override {
    const Tensor& x = ctx.required_input(0);
    const Plan* prepared = ctx.state_if_any<Plan>();
    // Axes known only now: errors about them are the data's.
    const Plan run = prepared ? Plan{} : MakePlan(x.shape(), AxesOf(ctx.input(1)), who());
    const Plan& plan = prepared ? *prepared : run;
    if (plan.identity) {
      ctx.SetOutput(0, *ctx.input_value(0));  // identity: share the buffer
      return;
    }
    const ReducePlan& p = plan.reduce;
    Tensor y = Output(ctx, 0, stream, x.dtype(), plan.out);
    if (p.outputs == 0) return;
    const int64_t blocks = (p.outputs + kWarpsPerBlock - 1) / kWarpsPerBlock;
    DispatchFloat(x.dtype(), who(), [&](auto t) {
      using T = decltype(t);
      ReduceKernel<T><<<static_cast<unsigned>(blocks), kWarpsPerBlock * 32, 0, stream>>>(x.data<T>(), y.data<T>(), p,
                                                                                           op_);
    });
  }

 private:
  Plan MakePlan(const Shape& x, std::vector<int64_t> axes, const std::string& who) const {
    const int64_t rank = static_cast<int64_t>(x.size());
    Plan plan;
    if (global_pool_) {
      if (rank < 3) throw InvalidModelError(who + ": input rank must be >= 3, got " + std::to_string(rank));
      axes.clear();
      for (int64_t i = 2; i < rank; ++i) axes.push_back(i);
    } else {
      if (axes.empty() && noop_with_empty_axes_) {
        plan.identity = true;
        plan.out = x;
        return plan;
      }
      if (axes.empty()) {
        for (int64_t i = 0; i < rank; ++i) axes.push_back(i);
      }
      axes = NormalizeAxes(axes, rank, who);
    }
    plan.reduce = PlanReduce(x, axes, who);
    plan.out = ReducedShape(x, axes, keepdims_);
    if (plan.reduce.outputs > 0 && plan.reduce.reduced == 0) {
      throw UnsupportedError(who + ": reducing an empty axis is not implemented on cuda");
    }
    if ((plan.reduce.outputs + kWarpsPerBlock - 1) / kWarpsPerBlock > 0x7fffffffLL) {
      throw UnsupportedError(who + ": too many outputs");
    }
    return plan;
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
