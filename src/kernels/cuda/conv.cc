// Conv (2-D, NCHW, groups, dilations, symmetric pads) through cuDNN's convolution forward. The algorithm is chosen
// once per input shape from cuDNN's heuristics (cudnnGetConvolutionForwardAlgorithm_v7: no trial runs), the
// first whose workspace fits FERRY_CUDA_WORKSPACE (default 256 MiB); bias is added with cudnnAddTensor.
// float32 uses FMA math (no TF32) unless FERRY_CUDA_TF32=1; float16 / bfloat16 use tensor cores.
#include <map>
#include <mutex>

#include "kernels/cuda/cudnn_util.h"

namespace ferry::cuda {
namespace {

class FilterDesc {
 public:
  FilterDesc(cudnnDataType_t t, int k, int c, int h, int w, const std::string& who) {
    FERRY_CUDNN_CHECK(cudnnCreateFilterDescriptor(&d_), who);
    FERRY_CUDNN_CHECK(cudnnSetFilter4dDescriptor(d_, t, CUDNN_TENSOR_NCHW, k, c, h, w), who);
  }
  ~FilterDesc() { cudnnDestroyFilterDescriptor(d_); }
  FilterDesc(const FilterDesc&) = delete;
  FilterDesc& operator=(const FilterDesc&) = delete;
  cudnnFilterDescriptor_t get() const { return d_; }

 private:
  cudnnFilterDescriptor_t d_ = nullptr;
};

class ConvDesc {
 public:
  ConvDesc(const int pad[2], const int stride[2], const int dilation[2], int groups, cudnnMathType_t math,
           const std::string& who) {
    FERRY_CUDNN_CHECK(cudnnCreateConvolutionDescriptor(&d_), who);
    FERRY_CUDNN_CHECK(cudnnSetConvolution2dDescriptor(d_, pad[0], pad[1], stride[0], stride[1], dilation[0], dilation[1],
                                                      CUDNN_CROSS_CORRELATION, CUDNN_DATA_FLOAT),
                      who);
    FERRY_CUDNN_CHECK(cudnnSetConvolutionGroupCount(d_, groups), who);
    FERRY_CUDNN_CHECK(cudnnSetConvolutionMathType(d_, math), who);
  }
  ~ConvDesc() { cudnnDestroyConvolutionDescriptor(d_); }
  ConvDesc(const ConvDesc&) = delete;
  ConvDesc& operator=(const ConvDesc&) = delete;
  cudnnConvolutionDescriptor_t get() const { return d_; }

 private:
  cudnnConvolutionDescriptor_t d_ = nullptr;
};

int Int(int64_t v, const std::string& who) {
  if (v < 0 || v > 0x7fffffff) throw UnsupportedError(who + ": dim " + std::to_string(v) + " out of cuDNN's range");
  return static_cast<int>(v);
}

class Conv final : public CudaKernel {
 public:
  Conv(const ir::Node& n, int device) : CudaKernel(n, device) {
    const auto pads = n.GetInts("pads", {0, 0, 0, 0});
    const auto strides = n.GetInts("strides", {1, 1});
    const auto dilations = n.GetInts("dilations", {1, 1});
    if (pads.size() != 4 || strides.size() != 2 || dilations.size() != 2) {
      throw UnsupportedError(who() + ": only 2-D convolutions");
    }
    pad_[0] = static_cast<int>(pads[0]);
    pad_[1] = static_cast<int>(pads[1]);
    for (int i = 0; i < 2; ++i) {
      stride_[i] = static_cast<int>(strides[static_cast<size_t>(i)]);
      dilation_[i] = static_cast<int>(dilations[static_cast<size_t>(i)]);
    }
    groups_ = static_cast<int>(n.GetInt("group", 1));
  }

  // Every check of X, W and B, and Y's shape: [N, M, 1 + (H + 2·pad - dilated kernel) / stride, ...] (floor), the
  // size cuDNN's convolution forward writes.
  void Prepare(PrepareContext& ctx) const override {
    const std::string who = ctx.Describe();
    const InputSpec& x = ctx.tensor_input(0);
    const InputSpec& w = ctx.tensor_input(1);
    const InputSpec& bias = ctx.input(2);
    if (x.shape.size() != 4 || w.shape.size() != 4) {
      throw UnsupportedError(who + ": only 2-D (4-D NCHW) convolutions, got " + ctx.InputString(0) + " and " +
                             ctx.InputString(1));
    }
    if (w.dtype != x.dtype || (bias.is_tensor() && bias.dtype != x.dtype)) {
      throw InvalidModelError(who + ": inputs differ in type");
    }
    if (groups_ <= 0 || x.shape[1] != w.shape[1] * groups_ || w.shape[0] % groups_ != 0) {
      throw InvalidModelError(who + ": X " + ShapeToString(x.shape) + ", W " + ShapeToString(w.shape) +
                              " and group=" + std::to_string(groups_) + " do not fit");
    }
    CudnnType(x.dtype, who);
    for (const Shape* s : {&x.shape, &w.shape}) {
      for (int64_t d : *s) Int(d, who);
    }
    Shape y = {x.shape[0], w.shape[0], 0, 0};
    for (int i = 0; i < 2; ++i) {
      const int64_t window = (w.shape[static_cast<size_t>(2 + i)] - 1) * dilation_[i] + 1;
      const int64_t span = x.shape[static_cast<size_t>(2 + i)] + 2 * pad_[i] - window;
      if (span < 0 || stride_[i] <= 0 || dilation_[i] <= 0) {
        throw InvalidModelError(who + ": the kernel of " + ctx.InputString(1) + " does not fit " + ctx.InputString(0) +
                                " with pads " + std::to_string(pad_[i]) + " and dilation " +
                                std::to_string(dilation_[i]));
      }
      y[static_cast<size_t>(2 + i)] = 1 + span / stride_[i];
    }
    if (bias.is_tensor() && ShapeElementCount(bias.shape) != y[1]) {
      throw InvalidModelError(who + ": B must have M = " + std::to_string(y[1]) + " elements, got " +
                              ctx.InputString(2));
    }
    ctx.SetOutput(0, x.dtype, y);
  }

 protected:
  void Launch(KernelContext& ctx, cudaStream_t stream) const override {
    const Tensor& x = ctx.required_input(0);
    const Tensor& w = ctx.required_input(1);
    const Tensor* bias = ctx.input(2);
    const cudnnDataType_t t = CudnnType(x.dtype(), who());
    const cudnnMathType_t math = x.dtype() != DataType::kFloat ? CUDNN_TENSOR_OP_MATH
                                 : Tf32Enabled()                ? CUDNN_DEFAULT_MATH
                                                                : CUDNN_FMA_MATH;
    TensorDesc xd(t, Int(x.dim(0), who()), Int(x.dim(1), who()), Int(x.dim(2), who()), Int(x.dim(3), who()), who());
    FilterDesc wd(t, Int(w.dim(0), who()), Int(w.dim(1), who()), Int(w.dim(2), who()), Int(w.dim(3), who()), who());
    ConvDesc cd(pad_, stride_, dilation_, groups_, math, who());
    Tensor y = Output(ctx, 0, stream);
    if (y.size() == 0) return;
    const int oc = Int(y.dim(1), who());
    TensorDesc yd(t, Int(y.dim(0), who()), oc, Int(y.dim(2), who()), Int(y.dim(3), who()), who());
    cudnnHandle_t h = CudnnHandle(device(), stream, who());
    const Choice choice = Choose(h, xd, wd, cd, yd, x.shape());
    std::shared_ptr<void> workspace = DeviceBuffer(device(), stream, choice.workspace);
    const float one = 1.f, zero = 0.f;
    FERRY_CUDNN_CHECK(cudnnConvolutionForward(h, &one, xd.get(), x.raw_data(), wd.get(), w.raw_data(), cd.get(),
                                              choice.algo, workspace.get(), choice.workspace, &zero, yd.get(),
                                              y.raw_data()),
                      who());
    if (bias) {
      TensorDesc bd(t, 1, oc, 1, 1, who());
      FERRY_CUDNN_CHECK(cudnnAddTensor(h, &one, bd.get(), bias->raw_data(), &one, yd.get(), y.raw_data()), who());
    }
  }

 private:
  struct Choice {
    cudnnConvolutionFwdAlgo_t algo = CUDNN_CONVOLUTION_FWD_ALGO_IMPLICIT_GEMM;
    size_t workspace = 0;
  };

  // The algorithm for this input shape: cuDNN's heuristic order, the first that fits the workspace limit.
  Choice Choose(cudnnHandle_t h, const TensorDesc& xd, const FilterDesc& wd, const ConvDesc& cd, const TensorDesc& yd,
                const Shape& shape) const {
    {
      std::lock_guard lock(mu_);
      auto it = chosen_.find(shape);
      if (it != chosen_.end()) return it->second;
    }
    cudnnConvolutionFwdAlgoPerf_t perf[CUDNN_CONVOLUTION_FWD_ALGO_COUNT];
    int returned = 0;
    FERRY_CUDNN_CHECK(cudnnGetConvolutionForwardAlgorithm_v7(h, xd.get(), wd.get(), cd.get(), yd.get(),
                                                             CUDNN_CONVOLUTION_FWD_ALGO_COUNT, &returned, perf),
                      who());
    const size_t limit = CudnnWorkspaceLimit();
    Choice c;
    bool found = false;
    for (int i = 0; i < returned && !found; ++i) {
      if (perf[i].status != CUDNN_STATUS_SUCCESS || perf[i].memory > limit) continue;
      c.algo = perf[i].algo;
      c.workspace = perf[i].memory;
      found = true;
    }
    if (!found) {
      throw UnsupportedError(who() + ": no cuDNN convolution algorithm fits the workspace limit of " +
                             std::to_string(limit) + " bytes (FERRY_CUDA_WORKSPACE)");
    }
    std::lock_guard lock(mu_);
    chosen_.emplace(shape, c);
    return c;
  }

  int pad_[2] = {0, 0}, stride_[2] = {1, 1}, dilation_[2] = {1, 1};
  int groups_ = 1;
  mutable std::mutex mu_;
  mutable std::map<Shape, Choice> chosen_;
};

}  // namespace

void AddConvFactories(FactoryList& list) { list.emplace_back("cuda.Conv.1", Make<Conv>()); }

}  // namespace ferry::cuda
