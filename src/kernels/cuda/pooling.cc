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

 protected:
  void Launch(KernelContext& ctx, cudaStream_t stream) const override {
    const Tensor& x = ctx.required_input(0);
    if (x.rank() != 4) throw UnsupportedError(who() + ": only 4-D (NCHW) inputs");
    const cudnnDataType_t t = CudnnType(x.dtype(), who());
    auto dim = [&](int64_t v) {
      if (v > 0x7fffffff) throw UnsupportedError(who() + ": dim out of cuDNN's range");
      return static_cast<int>(v);
    };
    TensorDesc xd(t, dim(x.dim(0)), dim(x.dim(1)), dim(x.dim(2)), dim(x.dim(3)), who());
    cudnnPoolingDescriptor_t pd = nullptr;
    FERRY_CUDNN_CHECK(cudnnCreatePoolingDescriptor(&pd), who());
    std::unique_ptr<cudnnPoolingStruct, cudnnStatus_t (*)(cudnnPoolingDescriptor_t)> owned(pd, cudnnDestroyPoolingDescriptor);
    FERRY_CUDNN_CHECK(cudnnSetPooling2dDescriptor(pd, mode_, CUDNN_PROPAGATE_NAN, kernel_[0], kernel_[1], pad_[0], pad_[1],
                                                  stride_[0], stride_[1]),
                      who());
    int on = 0, oc = 0, oh = 0, ow = 0;
    FERRY_CUDNN_CHECK(cudnnGetPooling2dForwardOutputDim(pd, xd.get(), &on, &oc, &oh, &ow), who());
    Tensor y = Output(ctx, 0, stream, x.dtype(), {on, oc, oh, ow});
    if (y.size() == 0) return;
    TensorDesc yd(t, on, oc, oh, ow, who());
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
