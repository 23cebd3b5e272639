// Conv on oneDNN (convolution_forward, float32, 1-D to 3-D). Geometry — auto_pad, pads, strides, dilations,
// kernel_shape, group — is resolved exactly as the ref kernel does (ref::ResolveConv) and handed to oneDNN as
// explicit pads and (dilation - 1). Constant weights are reordered once into the layout the primitive prefers;
// primitive and packed weights are cached per input-shape signature and thread count (oneDNN fixes a primitive's
// parallel split at creation), and built at creation, for the default thread count, when shapes are static.
//
// Activation layout (measured on ResNet-50's convolutions, batch 1, 1 thread, AVX-512 host, oneDNN 2.6):
// reordering NCHW activations to the blocked layout oneDNN picks (format_tag::any) and back, per call, beats
// plain NCHW src/dst for every spatial kernel and strided 1x1 (3x3: ~1.7-2.0 ms vs 3.0-3.9 ms; MobileNet-V2 depthwise:
// 4-8x), while plain NCHW (oneDNN's GEMM path) wins for stride-1 unpadded 1x1 convolutions on large planes
// (56x56 and 28x28: 0.75-2.15 ms vs 1.1-2.5 ms with reorders); from 14x14 down the blocked path ties or wins.
// Over the whole network: blocked+reorders 78 ms, plain 94 ms, this mix 72 ms. So: plain src/dst for group-1
// pointwise stride-1 unpadded convolutions with at least 256 output positions, blocked (any) otherwise.
#include <algorithm>
#include <string>
#include <vector>

#include "kernels/cpu/conv_common.h"
#include "kernels/cpu/dnnl_util.h"
#include "kernels/kernel_def.h"
#include "kernels/ref/conv_util.h"
#include "kernels/registry.h"

namespace ferry::cpu {
namespace {

using dnnl::memory;

// See the measurements at the top of the file.
bool PreferPlainActivations(const ref::ConvShape& cs) {
  if (cs.group != 1) return false;
  for (size_t d = 0; d < cs.g.rank(); ++d) {
    if (cs.g.kernel[d] != 1 || cs.g.strides[d] != 1 || cs.g.pad_begin[d] != 0 || cs.g.pad_end[d] != 0) return false;
  }
  return cs.g.out_size() >= 256;
}

void FillBias(const float* bias, int64_t batch, int64_t channels, int64_t plane, float* y) {
  for (int64_t n = 0; n < batch; ++n) {
    for (int64_t m = 0; m < channels; ++m) {
      std::fill_n(y + (n * channels + m) * plane, plane, bias ? bias[m] : 0.0f);
    }
  }
}

class Conv : public OpKernel {
 public:
  explicit Conv(const ir::Node& node)
      : attrs_(ref::WindowAttrs::FromNode(node)),
        group_(node.GetInt("group", 1)),
        what_(node.Describe()),
        weights_(ConstantInput(node, 1)),
        has_bias_(node.input(2) != nullptr) {
    if (group_ < 1) throw InvalidModelError(what_ + ": group must be >= 1, got " + std::to_string(group_));
    // Static shapes: build the primitive (and pack the weights) now, for the default thread count. A shape error
    // is left for Compute to report with the inputs it is given, as the ref kernel does.
    const auto x = StaticShape(node, 0), w = StaticShape(node, 1);
    if (x && w && x->size() >= 3 && x->size() <= 5 && ShapeElementCount(*x) > 0 && ShapeElementCount(*w) > 0) {
      try {
        Plan(*x, *w, DefaultThreads());
      } catch (const InvalidArgumentError&) {
      }
    }
  }

  void Compute(KernelContext& ctx) const override {
    const Tensor& x = ctx.required_input(0);
    const Tensor& w = ctx.required_input(1);
    const Tensor* bias = ctx.input(2);
    const std::string what = ctx.Describe();
    if (x.dtype() != DataType::kFloat || w.dtype() != DataType::kFloat) {
      throw InvalidArgumentError(what + ": X and W must be float32 on this kernel, got " +
                                 std::string(DataTypeName(x.dtype())) + " and " + std::string(DataTypeName(w.dtype())));
    }
    const ref::ConvShape cs = ref::ResolveConv(attrs_, group_, x.shape(), w.shape(), what);
    if (bias && (bias->rank() != 1 || bias->dim(0) != cs.out_channels || bias->dtype() != x.dtype())) {
      throw InvalidArgumentError(what + ": bias B has shape " + ShapeToString(bias->shape()) + ", expected [" +
                                 std::to_string(cs.out_channels) + "] of X's type");
    }
    if (bias == nullptr && has_bias_) throw InvalidArgumentError(what + ": bias B is declared but not given");
    if (x.rank() > 5) {
      throw UnsupportedError(what + ": X has rank " + std::to_string(x.rank()) +
                             "; the cpu Conv kernel runs 1-D to 3-D convolutions (rank 3 to 5)");
    }
    Tensor& y = ctx.OutputUninitialized(0, x.dtype(), cs.y_shape);  // every element written below
    if (y.size() == 0) return;
    const float* b = bias ? bias->data<float>() : nullptr;
    if (x.size() == 0 || w.size() == 0) {  // no input channels or an empty input plane: every tap reads zeros
      FillBias(b, cs.batch, cs.out_channels, cs.g.out_size(), y.data<float>());
      return;
    }
    const auto plan = Plan(x.shape(), w.shape(), ctx.threads());
    RunConvPlan(*plan, x.raw_data(), w.raw_data(), b, y.raw_data(), ctx.threads(), what);
  }

 private:
  // Keyed by shapes and thread count: oneDNN fixes a primitive's parallel split when it is created.
  std::shared_ptr<const ConvPlan> Plan(const Shape& x, const Shape& w, int threads) const {
    std::vector<int64_t> key(x.begin(), x.end());
    key.push_back(-1);
    key.insert(key.end(), w.begin(), w.end());
    key.push_back(threads);
    return cache_.Get(key, [&] {
      ScopedOmpThreads scope(threads);
      return Build(x, w);
    });
  }

  std::shared_ptr<ConvPlan> Build(const Shape& x, const Shape& w) const {
    const ref::ConvShape cs = ref::ResolveConv(attrs_, group_, x, w, what_);
    const ref::WindowGeometry& g = cs.g;
    // oneDNN's grouped weights are [g, M/g, C/g, k...]: the same buffer as ONNX's [M, C/g, k...].
    memory::dims wdims(w.begin(), w.end());
    if (group_ > 1) {
      wdims[0] = cs.out_channels / group_;
      wdims.insert(wdims.begin(), group_);
    }
    memory::dims strides(g.strides.begin(), g.strides.end()), dilates, pad_l(g.pad_begin.begin(), g.pad_begin.end()),
        pad_r(g.pad_end.begin(), g.pad_end.end());
    for (int64_t d : g.dilations) dilates.push_back(d - 1);

    auto plan = std::make_shared<ConvPlan>();
    plan->src_user = PlainDesc(x, DataType::kFloat);
    plan->dst_user = PlainDesc(cs.y_shape, DataType::kFloat);
    plan->weights_user = PlainDesc(Shape(wdims.begin(), wdims.end()), DataType::kFloat);
    plan->bias = has_bias_;
    const bool plain = PreferPlainActivations(cs);
    const memory::desc src =
        plain ? plan->src_user : memory::desc(Dims(x), memory::data_type::f32, memory::format_tag::any);
    const memory::desc dst =
        plain ? plan->dst_user : memory::desc(Dims(cs.y_shape), memory::data_type::f32, memory::format_tag::any);
    const memory::desc weights(wdims, memory::data_type::f32, memory::format_tag::any);
    try {
      using cf = dnnl::convolution_forward;
      const auto kind = dnnl::prop_kind::forward_inference;
      const auto alg = dnnl::algorithm::convolution_direct;
      const cf::desc desc =
          has_bias_ ? cf::desc(kind, alg, src, weights,
                               memory::desc({cs.out_channels}, memory::data_type::f32, memory::format_tag::x), dst,
                               strides, dilates, pad_l, pad_r)
                    : cf::desc(kind, alg, src, weights, dst, strides, dilates, pad_l, pad_r);
      const cf::primitive_desc pd(desc, ScratchpadAttr(), Engine());
      FinishConvPlan(*plan, pd, cf(pd), weights_.get(), &packed_, what_);
    } catch (const dnnl::error& e) {
      throw InternalError(what_ + ": oneDNN could not create the convolution: " + e.what());
    }
    return plan;
  }

  ref::WindowAttrs attrs_;
  int64_t group_;
  std::string what_;
  std::shared_ptr<const Tensor> weights_;  // constant W (packed into each plan), or null
  bool has_bias_;
  mutable PackedWeights packed_;
  ShapeCache<ConvPlan> cache_;
};

std::string ConvPredicate(const ir::Node& node) {
  // Conv-1 defines SAME_* as "output size = input size", which differs from opset 11's ceil(input / stride) once a
  // stride is > 1; at stride 1 both agree.
  const std::string pad = node.GetString("auto_pad", "NOTSET");
  if (node.opset() < 11 && (pad == "SAME_UPPER" || pad == "SAME_LOWER")) {
    for (int64_t s : node.GetInts("strides")) {
      if (s > 1) return "Conv-1: auto_pad=" + pad + " with strides > 1 is not implemented on cpu (opset < 11)";
    }
  }
  return "";
}

std::string ConvShapePredicate(const ir::Node& node) {
  int64_t rank = KnownRank(node, 0);
  if (rank < 0) rank = KnownRank(node, 1);
  if (rank > 5) {
    return "Conv: " + std::to_string(rank - 2) + "-D convolution (X of rank " + std::to_string(rank) +
           ") is not implemented on cpu (1-D to 3-D only)";
  }
  return "";
}

}  // namespace

void RegisterConvKernels(KernelRegistry& r) {
  r.Add({.op = "Conv",
         .since = 1,
         .types = {{"T", {DataType::kFloat}}},
         .create = MakeKernel<Conv>,
         .predicate = ConvPredicate,
         .shape_predicate = ConvShapePredicate,
         .isa = {},
         .name = "cpu.f32_conv__onednn.1",
         .constraints = "float32; 1-D to 3-D; opsets 1-10: no auto_pad=SAME_* with strides > 1"});
}

}  // namespace ferry::cpu
