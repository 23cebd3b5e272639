// Add, Sub, Mul, Div, Pow with multidirectional (numpy) broadcasting: float32 / float16 / bfloat16 computed in
// float, int32 / int64 in their own type (Div truncates, as C++ and `ref` do). Same-shape inputs take a plain
// elementwise path; others go through the broadcast index map (cuda_shapes.h).
#include <cmath>

#include "kernels/cuda/cuda_common.h"
#include "kernels/cuda/device_types.cuh"

namespace ferry::cuda {
namespace {

enum class BinaryOp { kAdd, kSub, kMul, kDiv, kPow };

template <typename C>
__device__ __forceinline__ C Apply(BinaryOp op, C a, C b) {
  switch (op) {
    case BinaryOp::kAdd: return a + b;
    case BinaryOp::kSub: return a - b;
    case BinaryOp::kMul: return a * b;
    case BinaryOp::kDiv: return a / b;
    case BinaryOp::kPow: return static_cast<C>(pow(static_cast<double>(a), static_cast<double>(b)));
  }
  return a;
}
template <>
__device__ __forceinline__ float Apply<float>(BinaryOp op, float a, float b) {
  switch (op) {
    case BinaryOp::kAdd: return a + b;
    case BinaryOp::kSub: return a - b;
    case BinaryOp::kMul: return a * b;
    case BinaryOp::kDiv: return a / b;
    case BinaryOp::kPow: return powf(a, b);
  }
  return a;
}

template <typename T>
__global__ void SameShapeKernel(const T* a, const T* b, T* y, int64_t n, BinaryOp op) {
  FERRY_GRID_STRIDE(i, n) { Store(y, i, Apply(op, Load(a, i), Load(b, i))); }
}

template <typename T>
__global__ void BroadcastKernel(const T* a, const T* b, T* y, IndexMap m, BinaryOp op) {
  FERRY_GRID_STRIDE(i, m.count) { Store(y, i, Apply(op, Load(a, MapOffset(m, 0, i)), Load(b, MapOffset(m, 1, i)))); }
}

BinaryOp OpOf(const ir::Node& n) {
  const std::string& op = n.op_type();
  if (op == "Add") return BinaryOp::kAdd;
  if (op == "Sub") return BinaryOp::kSub;
  if (op == "Mul") return BinaryOp::kMul;
  if (op == "Div") return BinaryOp::kDiv;
  if (op == "Pow") return BinaryOp::kPow;
  throw InternalError(n.Describe() + ": not a binary op of the cuda backend");
}

class Binary final : public CudaKernel {
 public:
  Binary(const ir::Node& n, int device) : CudaKernel(n, device), op_(OpOf(n)) {}

  // The broadcast's index map for these shapes.
  void Prepare(PrepareContext& ctx) const override {
    const InputSpec& a = ctx.tensor_input(0);
    const InputSpec& b = ctx.tensor_input(1);
    if (a.dtype != b.dtype) {
      throw InvalidModelError(ctx.Describe() + ": inputs of types " + std::string(DataTypeName(a.dtype)) + " and " +
                              std::string(DataTypeName(b.dtype)));
    }
    const Shape shapes[] = {a.shape, b.shape};
    ctx.EmplaceState(BroadcastMap(shapes, ctx.Describe()));
    ctx.SetOutput(0, a.dtype, BroadcastShape(shapes, ctx.Describe()));
  }

 protected:
  void Launch(KernelContext& ctx, cudaStream_t stream) const override {
    const Tensor& a = ctx.required_input(0);
    const Tensor& b = ctx.required_input(1);
    const IndexMap& m = ctx.state<IndexMap>();
    Tensor y = Output(ctx, 0, stream);
    const Launch1d l = LaunchFor(m.count);
    if (l.blocks == 0) return;
    const bool same = a.shape() == b.shape();
    DispatchFloatInt(a.dtype(), who(), [&](auto t) {
      using T = decltype(t);
      if (same) {
        SameShapeKernel<T><<<static_cast<unsigned>(l.blocks), l.threads, 0, stream>>>(a.data<T>(), b.data<T>(),
                                                                                       y.data<T>(), m.count, op_);
      } else {
        BroadcastKernel<T><<<static_cast<unsigned>(l.blocks), l.threads, 0, stream>>>(a.data<T>(), b.data<T>(),
                                                                                       y.data<T>(), m, op_);
      }
    });
  }

 private:
  BinaryOp op_;
};

}  // namespace

void AddBinaryElementwiseFactories(FactoryList& list) {
  for (const char* name : {"cuda.Add.7", "cuda.Sub.7", "cuda.Mul.7", "cuda.Div.7", "cuda.Pow.7"}) {
    list.emplace_back(name, Make<Binary>());
  }
}

}  // namespace ferry::cuda
