// Unary activations and math, elementwise in float (float16 / bfloat16 loaded to float and rounded back):
// Relu, Sigmoid, Tanh, Exp, Log, Sqrt, Neg, Abs, Reciprocal, LeakyRelu, HardSigmoid, Erf, HardSwish, Gelu, Clip.
#include <cmath>
#include <limits>

#include "ferry/float16.h"
#include "kernels/cuda/cuda_common.h"
#include "kernels/cuda/device_types.cuh"

namespace ferry::cuda {
namespace {

enum class UnaryOp { kRelu, kSigmoid, kTanh, kExp, kLog, kSqrt, kNeg, kAbs, kReciprocal, kLeakyRelu, kHardSigmoid,
                     kErf, kHardSwish, kGelu, kGeluTanh, kClip };

struct UnaryParams {
  UnaryOp op = UnaryOp::kRelu;
  float a = 0, b = 0;  // LeakyRelu alpha; HardSigmoid alpha, beta; Clip min, max
};

__device__ __forceinline__ float Apply(const UnaryParams& p, float v) {
  switch (p.op) {
    case UnaryOp::kRelu: return v > 0.f ? v : (v != v ? v : 0.f);
    case UnaryOp::kSigmoid: return 1.f / (1.f + expf(-v));
    case UnaryOp::kTanh: return tanhf(v);
    case UnaryOp::kExp: return expf(v);
    case UnaryOp::kLog: return logf(v);
    case UnaryOp::kSqrt: return sqrtf(v);
    case UnaryOp::kNeg: return -v;
    case UnaryOp::kAbs: return fabsf(v);
    case UnaryOp::kReciprocal: return 1.f / v;
    case UnaryOp::kLeakyRelu: return v >= 0.f ? v : p.a * v;
    case UnaryOp::kHardSigmoid: return fmaxf(0.f, fminf(1.f, p.a * v + p.b));
    case UnaryOp::kErf: return erff(v);
    case UnaryOp::kHardSwish: return v * fmaxf(0.f, fminf(1.f, v / 6.f + 0.5f));
    case UnaryOp::kGelu: return 0.5f * v * (1.f + erff(v * 0.70710678118654752f));
    case UnaryOp::kGeluTanh: return 0.5f * v * (1.f + tanhf(0.79788456080286536f * (v + 0.044715f * v * v * v)));
    case UnaryOp::kClip: return v < p.a ? p.a : (v > p.b ? p.b : v);
  }
  return v;
}

template <typename T>
__global__ void UnaryKernel(const T* x, T* y, int64_t n, UnaryParams p) {
  FERRY_GRID_STRIDE(i, n) { Store(y, i, Apply(p, static_cast<float>(Load(x, i)))); }
}

UnaryOp OpOf(const ir::Node& n) {
  const std::string& op = n.op_type();
  if (op == "Relu") return UnaryOp::kRelu;
  if (op == "Sigmoid") return UnaryOp::kSigmoid;
  if (op == "Tanh") return UnaryOp::kTanh;
  if (op == "Exp") return UnaryOp::kExp;
  if (op == "Log") return UnaryOp::kLog;
  if (op == "Sqrt") return UnaryOp::kSqrt;
  if (op == "Neg") return UnaryOp::kNeg;
  if (op == "Abs") return UnaryOp::kAbs;
  if (op == "Reciprocal") return UnaryOp::kReciprocal;
  if (op == "LeakyRelu") return UnaryOp::kLeakyRelu;
  if (op == "HardSigmoid") return UnaryOp::kHardSigmoid;
  if (op == "Erf") return UnaryOp::kErf;
  if (op == "HardSwish") return UnaryOp::kHardSwish;
  if (op == "Clip") return UnaryOp::kClip;
  if (op == "Gelu") {
    const std::string approximate = n.GetString("approximate", "none");
    if (approximate == "tanh") return UnaryOp::kGeluTanh;
    if (approximate != "none") throw InvalidModelError(n.Describe() + ": unknown approximate='" + approximate + "'");
    return UnaryOp::kGelu;
  }
  throw InternalError(n.Describe() + ": not a unary op of the cuda backend");
}

// Checks a Clip bound given as a (host) input: a scalar of a float type.
void CheckBound(const PrepareContext& ctx, int i) {
  const InputSpec& t = ctx.input(i);
  if (!t.is_tensor()) return;
  if (ShapeElementCount(t.shape) != 1) {
    throw InvalidModelError(ctx.Describe() + ": Clip bounds must be scalars, got " + ctx.InputString(i));
  }
  if (t.dtype != DataType::kFloat && t.dtype != DataType::kFloat16 && t.dtype != DataType::kBFloat16) {
    throw UnsupportedError(ctx.Describe() + ": Clip bound of type " + std::string(DataTypeName(t.dtype)));
  }
}

// The value of a bound CheckBound accepted.
float BoundOf(const Tensor& t) {
  switch (t.dtype()) {
    case DataType::kFloat16: return static_cast<float>(t.data<Float16>()[0]);
    case DataType::kBFloat16: return static_cast<float>(t.data<BFloat16>()[0]);
    default: return t.data<float>()[0];
  }
}

class Unary final : public CudaKernel {
 public:
  Unary(const ir::Node& n, int device) : CudaKernel(n, device) {
    p_.op = OpOf(n);
    if (p_.op == UnaryOp::kLeakyRelu) p_.a = n.GetFloat("alpha", 0.01f);
    if (p_.op == UnaryOp::kHardSigmoid) {
      p_.a = n.GetFloat("alpha", 0.2f);
      p_.b = n.GetFloat("beta", 0.5f);
    }
    if (p_.op == UnaryOp::kClip) {
      clip_inputs_ = n.opset() >= 11;
      p_.a = n.GetFloat("min", -std::numeric_limits<float>::infinity());
      p_.b = n.GetFloat("max", std::numeric_limits<float>::infinity());
    }
  }

  void Prepare(PrepareContext& ctx) const override {
    const InputSpec& x = ctx.tensor_input(0);
    if (clip_inputs_) {
      CheckBound(ctx, 1);
      CheckBound(ctx, 2);
    }
    ctx.SetOutput(0, x.dtype, x.shape);
  }

 protected:
  void Launch(KernelContext& ctx, cudaStream_t stream) const override {
    const Tensor& x = ctx.required_input(0);
    UnaryParams p = p_;
    if (clip_inputs_) {
      p.a = ctx.has_input(1) ? BoundOf(*ctx.input(1)) : -std::numeric_limits<float>::infinity();
      p.b = ctx.has_input(2) ? BoundOf(*ctx.input(2)) : std::numeric_limits<float>::infinity();
    }
    Tensor y = Output(ctx, 0, stream);
    const Launch1d l = LaunchFor(x.size());
    if (l.blocks == 0) return;
    DispatchFloat(x.dtype(), who(), [&](auto t) {
      using T = decltype(t);
      UnaryKernel<T><<<static_cast<unsigned>(l.blocks), l.threads, 0, stream>>>(x.data<T>(), y.data<T>(), x.size(), p);
    });
  }

 private:
  UnaryParams p_;
  bool clip_inputs_ = false;
};

}  // namespace

void AddUnaryElementwiseFactories(FactoryList& list) {
  for (const char* name : {"cuda.Relu.6", "cuda.Sigmoid.6", "cuda.Tanh.6", "cuda.Exp.6", "cuda.Log.6", "cuda.Sqrt.6",
                           "cuda.Neg.6", "cuda.Abs.6", "cuda.Reciprocal.6", "cuda.LeakyRelu.6", "cuda.HardSigmoid.6",
                           "cuda.Erf.9", "cuda.HardSwish.14", "cuda.Gelu.20", "cuda.Clip.6"}) {
    list.emplace_back(name, Make<Unary>());
  }
}

}  // namespace ferry::cuda
