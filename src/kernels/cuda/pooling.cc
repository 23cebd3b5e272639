// MaxPool and AveragePool (2-D, NCHW, symmetric pads, floor output size) through cuDNN's pooling forward; NaN
// propagates through MaxPool. AveragePool counts padding only with count_include_pad=1, as ONNX says.
#include "kernels/cuda/cudnn_util.h"

namespace ferry::cuda {
namespace {

class Pool final : public CudaKernel {
 public:
  Pool(const ir::Node& n, int device) : CudaKernel(n, device) {
    const bool max = n.op_type() == "MaxPool";
    mode_ = max ? CUDNN_POOLING_MAX
                : (n.GetInt("count_include_pad", 0) != 0 ? CUDNN_POOLING_AVERAGE_COUNT_INCLUDE_PADDING
                                                         : CUDNN_POOLING_AVERAGE_COUNT_EXCLUDE_PADDING);
    const auto kernel = n.GetInts("kernel_shape");
    const auto pads = n.GetInts("pads", {0, 0, 0, 0});
    const auto strides = n.GetInts("strides", {1, 1});
    if (kernel.size() != 2 || pads.size() != 4 || strides.size() != 2) {
      throw UnsupportedError(who() + ": only 2-D pooling");
    }
    for (int i = 0; i < 2; ++i) {
      kernel_[i] = static_cast<int>(kernel[static_cast<size_t>(i)]);
      pad_[i] = static_cast<int>(pads[static_cast<size_t>(i)]);
      stride_[i] = static_cast<int>(strides[static_cast<size_t>(i)]);
    }
  }

  // X must be 4-D with dims in cuDNN's int range; Y is [N, C, 1 + (H + 2·pad - kernel) / stride, ...] (floor), the
  // size cuDNN's pooling forward writes.
  void Prepare(PrepareContext& ctx) const override {
    const InputSpec& x = ctx.tensor_input(0);
    if (x.shape.size() != 4) {
      throw UnsupportedError(ctx.Describe() + ": only 4-D (NCHW) inputs, got " + ctx.InputString(0));
    }
    CudnnType(x.dtype, ctx.Describe());
    for (int64_t d : x.shape) {
      if (d > 0x7fffffff) {
        throw UnsupportedError(ctx.Describe() + ": dim out of cuDNN's range in " + ctx.InputString(0));
      }
    }
    Shape y = {x.shape[0], x.shape[1], 0, 0};
    for (int i = 0; i < 2; ++i) {
      const int64_t span = x.shape[static_cast<size_t>(2 + i)] + 2 * pad_[i] - kernel_[i];
      if (span < 0 || stride_[i] <= 0) {
        throw InvalidModelError(ctx.Describe() + ": the " + std::to_string(kernel_[i]) + "-wide window does not fit " +
                                ctx.InputString(0) + " with pads " + std::to_string(pad_[i]));
      }
      y[static_cast<size_t>(2 + i)] = 1 + span / stride_[i];
    }
    ctx.SetOutput(0, x.dtype, y);
  }

 protected:
  void Launch(KernelContext& ctx, cudaStream_t stream) const override {
    const Tensor& x = ctx.required_input(0);
    const cudnnDataType_t t = CudnnType(x.dtype(), who());
    auto dim = [](int64_t v) { return static_cast<int>(v); };  // in range: Prepare checked
    TensorDesc xd(t, dim(x.dim(0)), dim(x.dim(1)), dim(x.dim(2)), dim(x.dim(3)), who());
    cudnnPoolingDescriptor_t pd = nullptr;
    FERRY_CUDNN_CHECK(cudnnCreatePoolingDescriptor(&pd), who());
    std::unique_ptr<cudnnPoolingStruct, cudnnStatus_t (*)(cudnnPoolingDescriptor_t)> owned(pd, cudnnDestroyPoolingDescriptor);
    FERRY_CUDNN_CHECK(cudnnSetPooling2dDescriptor(pd, mode_, CUDNN_PROPAGATE_NAN, kernel_[0], kernel_[1], pad_[0], pad_[1],
                                                  stride_[0], stride_[1]),
                      who());
    Tensor y = Output(ctx, 0, stream);
    if (y.size() == 0) return;
    TensorDesc yd(t, dim(y.dim(0)), dim(y.dim(1)), dim(y.dim(2)), dim(y.dim(3)), who());
    const float one = 1.f, zero = 0.f;
    FERRY_CUDNN_CHECK(cudnnPoolingForward(CudnnHandle(device(), stream, who()), pd, &one, xd.get(), x.raw_data(), &zero,
                                          yd.get(), y.raw_data()),
                      who());
  }

 private:
  cudnnPoolingMode_t mode_;
  int kernel_[2] = {1, 1}, pad_[2] = {0, 0}, stride_[2] = {1, 1};
};

}  // namespace

void AddPoolingFactories(FactoryList& list) {
  list.emplace_back("cuda.MaxPool.1", Make<Pool>());
  list.emplace_back("cuda.AveragePool.1", Make<Pool>());
}

}  // namespace ferry::cuda
