// Softmax, LayerNormalization and BatchNormalization (inference): one block per row for the row-wise ops (float
// accumulation, block-wide reductions), one thread per element for BatchNormalization's per-channel affine map.
#include <cmath>

#include "kernels/cuda/cuda_common.h"
#include "kernels/cuda/device_types.cuh"

namespace ferry::cuda {
namespace {

constexpr int kRowThreads = 256;

// Block-wide sum / max of one value per thread (blockDim.x == kRowThreads); every thread gets the result.
template <bool Max>
__device__ float BlockReduce(float v) {
  __shared__ float partial[kRowThreads / 32];
  for (int o = 16; o > 0; o /= 2) {
    const float other = __shfl_xor_sync(0xffffffffu, v, o);
    v = Max ? fmaxf(v, other) : v + other;
  }
  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
  __syncthreads();  // `partial` may still be read by a previous call
  if (lane == 0) partial[warp] = v;
  __syncthreads();
  v = partial[0];
  for (int w = 1; w < kRowThreads / 32; ++w) v = Max ? fmaxf(v, partial[w]) : v + partial[w];
  return v;
}

// Softmax of row r: elements base + j * inner, j < n, with base = (r / inner) * n * inner + r % inner.
template <typename T>
__global__ void SoftmaxKernel(const T* x, T* y, int64_t n, int64_t inner) {
  const int64_t r = blockIdx.x;
  const int64_t base = (r / inner) * n * inner + r % inner;
  float m = -INFINITY;
  for (int64_t j = threadIdx.x; j < n; j += blockDim.x) m = fmaxf(m, Load(x, base + j * inner));
  m = BlockReduce<true>(m);
  float s = 0.f;
  for (int64_t j = threadIdx.x; j < n; j += blockDim.x) s += expf(Load(x, base + j * inner) - m);
  s = BlockReduce<false>(s);
  const float inv = 1.f / s;
  for (int64_t j = threadIdx.x; j < n; j += blockDim.x) Store(y, base + j * inner, expf(Load(x, base + j * inner) - m) * inv);
}

// LayerNormalization of one contiguous row of n elements; scale / bias have n elements (bias may be null).
template <typename T>
__global__ void LayerNormKernel(const T* x, const T* scale, const T* bias, T* y, int64_t n, float epsilon) {
  const int64_t base = static_cast<int64_t>(blockIdx.x) * n;
  float s = 0.f;
  for (int64_t j = threadIdx.x; j < n; j += blockDim.x) s += Load(x, base + j);
  const float mean = BlockReduce<false>(s) / static_cast<float>(n);
  float v = 0.f;
  for (int64_t j = threadIdx.x; j < n; j += blockDim.x) {
    const float d = Load(x, base + j) - mean;
    v += d * d;
  }
  const float inv = rsqrtf(BlockReduce<false>(v) / static_cast<float>(n) + epsilon);
  for (int64_t j = threadIdx.x; j < n; j += blockDim.x) {
    float o = (Load(x, base + j) - mean) * inv * Load(scale, j);
    if (bias) o += Load(bias, j);
    Store(y, base + j, o);
  }
}

// y = (x - mean[c]) / sqrt(var[c] + eps) * scale[c] + b[c] for x of shape (N, C, spatial...).
template <typename T, typename P>
__global__ void BatchNormKernel(const T* x, const P* scale, const P* b, const P* mean, const P* var, T* y, int64_t count,
                                int64_t channels, int64_t spatial, float epsilon) {
  FERRY_GRID_STRIDE(i, count) {
    const int64_t c = (i / spatial) % channels;
    const float k = Load(scale, c) * rsqrtf(Load(var, c) + epsilon);
    Store(y, i, (Load(x, i) - Load(mean, c)) * k + Load(b, c));
  }
}

class Softmax final : public CudaKernel {
 public:
  Softmax(const ir::Node& n, int device)
      : CudaKernel(n, device), axis_(n.GetInt("axis", n.opset() >= 13 ? -1 : 1)), opset_(n.opset()) {}

  void Prepare(PrepareContext& ctx) const override {
    const InputSpec& x = ctx.tensor_input(0);
    ctx.SetOutput(0, x.dtype, x.shape);
    if (ShapeElementCount(x.shape) == 0) return;
    const SoftmaxPlan& p = ctx.EmplaceState(PlanSoftmax(x.shape, axis_, opset_, ctx.Describe()));
    if (p.outer * p.inner > 0x7fffffffLL) throw UnsupportedError(ctx.Describe() + ": more than 2^31 rows");
  }

 protected:
  void Launch(KernelContext& ctx, cudaStream_t stream) const override {
    const Tensor& x = ctx.required_input(0);
    Tensor y = Output(ctx, 0, stream);
    if (x.size() == 0) return;
    const SoftmaxPlan& p = ctx.state<SoftmaxPlan>();
    const int64_t rows = p.outer * p.inner;
    DispatchFloat(x.dtype(), who(), [&](auto t) {
      using T = decltype(t);
      SoftmaxKernel<T><<<static_cast<unsigned>(rows), kRowThreads, 0, stream>>>(x.data<T>(), y.data<T>(), p.n, p.inner);
    });
  }

 private:
  int64_t axis_, opset_;
};

class LayerNorm final : public CudaKernel {
 public:
  LayerNorm(const ir::Node& n, int device)
      : CudaKernel(n, device), axis_(n.GetInt("axis", -1)), epsilon_(n.GetFloat("epsilon", 1e-5f)) {}

  struct Rows {
    int64_t rows = 1, n = 1;  // rows normalized, and the elements of each
  };

  void Prepare(PrepareContext& ctx) const override {
    const InputSpec& x = ctx.tensor_input(0);
    const InputSpec& scale = ctx.tensor_input(1);
    const InputSpec& bias = ctx.input(2);
    const int64_t rank = static_cast<int64_t>(x.shape.size());
    const int64_t axis = axis_ < 0 ? axis_ + rank : axis_;
    if (axis < 0 || axis >= rank) {
      throw InvalidModelError(ctx.Describe() + ": axis " + std::to_string(axis_) + " out of range for " +
                              ctx.InputString(0));
    }
    Rows& r = ctx.EmplaceState(Rows{});
    for (int64_t i = 0; i < rank; ++i) (i < axis ? r.rows : r.n) *= x.shape[static_cast<size_t>(i)];
    if (ShapeElementCount(scale.shape) != r.n || (bias.is_tensor() && ShapeElementCount(bias.shape) != r.n) ||
        scale.dtype != x.dtype || (bias.is_tensor() && bias.dtype != x.dtype)) {
      throw UnsupportedError(ctx.Describe() + ": Scale and B must have the normalized shape's " + std::to_string(r.n) +
                             " elements and X's type (broadcast scale/bias not implemented)");
    }
    if (r.rows > 0x7fffffffLL) throw UnsupportedError(ctx.Describe() + ": more than 2^31 rows");
    ctx.SetOutput(0, x.dtype, x.shape);
  }

 protected:
  void Launch(KernelContext& ctx, cudaStream_t stream) const override {
    const Tensor& x = ctx.required_input(0);
    const Tensor& scale = ctx.required_input(1);
    const Tensor* bias = ctx.input(2);
    const int64_t rows = ctx.state<Rows>().rows, n = ctx.state<Rows>().n;
    Tensor y = Output(ctx, 0, stream);
    if (x.size() == 0) return;
    DispatchFloat(x.dtype(), who(), [&](auto t) {
      using T = decltype(t);
      LayerNormKernel<T><<<static_cast<unsigned>(rows), kRowThreads, 0, stream>>>(
          x.data<T>(), scale.data<T>(), bias ? bias->data<T>() : nullptr, y.data<T>(), n, epsilon_);
    });
  }

 private:
  int64_t axis_;
  float epsilon_;
};

class BatchNorm final : public CudaKernel {
 public:
  BatchNorm(const ir::Node& n, int device) : CudaKernel(n, device), epsilon_(n.GetFloat("epsilon", 1e-5f)) {}

  void Prepare(PrepareContext& ctx) const override {
    const InputSpec& x = ctx.tensor_input(0);
    if (x.shape.size() < 2) {
      throw InvalidModelError(ctx.Describe() + ": X must have rank >= 2, got " + ctx.InputString(0));
    }
    const int64_t channels = x.shape[1];
    for (int k = 1; k <= 4; ++k) {
      const InputSpec& p = ctx.tensor_input(k);
      if (ShapeElementCount(p.shape) != channels || p.dtype != ctx.input(1).dtype) {
        throw InvalidModelError(ctx.Describe() + ": scale, B, mean and var must have C = " + std::to_string(channels) +
                                " elements of one type, got " + ctx.InputString(k));
      }
    }
    ctx.SetOutput(0, x.dtype, x.shape);
  }

 protected:
  void Launch(KernelContext& ctx, cudaStream_t stream) const override {
    const Tensor& x = ctx.required_input(0);
    const Tensor* params[4];
    for (int k = 0; k < 4; ++k) params[k] = &ctx.required_input(k + 1);
    const int64_t channels = x.dim(1);
    Tensor y = Output(ctx, 0, stream);
    const Launch1d l = LaunchFor(x.size());
    if (l.blocks == 0) return;
    const int64_t spatial = channels == 0 ? 1 : x.size() / (x.dim(0) * channels);
    DispatchFloat(x.dtype(), who(), [&](auto t) {
      using T = decltype(t);
      DispatchFloat(params[0]->dtype(), who(), [&](auto u) {
        using P = decltype(u);
        BatchNormKernel<T, P><<<static_cast<unsigned>(l.blocks), l.threads, 0, stream>>>(
            x.data<T>(), params[0]->data<P>(), params[1]->data<P>(), params[2]->data<P>(), params[3]->data<P>(),
            y.data<T>(), x.size(), channels, spatial, epsilon_);
      });
    });
  }

 private:
  float epsilon_;
};

}  // namespace

void AddNormalizationFactories(FactoryList& list) {
  list.emplace_back("cuda.Softmax.1", Make<Softmax>());
  list.emplace_back("cuda.LayerNormalization.17", Make<LayerNorm>());
  list.emplace_back("cuda.BatchNormalization.9", Make<BatchNorm>());
}

}  // namespace ferry::cuda
