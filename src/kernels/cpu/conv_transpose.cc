// ConvTranspose on oneDNN (deconvolution_forward, float32, 1-D to 3-D). The output extent and pads follow the
// ONNX rules for pads, output_padding, output_shape and auto_pad (semantics::ResolveConvTranspose, as ref); oneDNN
// gets them as explicit pads: pad_l = the begin pad, pad_r = (what the strides and kernel reach) - pad_l - output
// extent. Where the output reaches past every input tap (output_padding beyond the end pad, or an output_shape
// larger than the natural extent) pad_r would be negative: the primitive then computes the covered part only, into
// a strided view of the output, and the rest holds the bias. Constant weights are reordered once per layout.
// Prepare checks the inputs, declares Y and builds the primitive for its input signature and the session's thread
// count (oneDNN fixes a primitive's parallel split at creation), kept as the signature's state with the scratch
// slots it needs; creation builds it already, packing the weights, when shapes are static.
// Activations go through the blocked layouts oneDNN picks (format_tag::any), as for Conv's spatial kernels.
// com.microsoft::ConvTransposeWithDynamicPads runs here when its Pads input (2; the bias is input 3) is a constant
// initializer or absent: the same kernel with those pads in place of the attribute (other Pads go to ref).
#include <algorithm>
#include <string>
#include <vector>

#include "kernels/cpu/conv_common.h"
#include "kernels/cpu/dnnl_util.h"
#include "kernels/kernel_def.h"
#include "kernels/ref/common.h"
#include "kernels/registry.h"
#include "semantics/window.h"

namespace ferry::cpu {
namespace {

using dnnl::memory;

// The resolved shapes of one ConvTranspose (X [N, C, in...], W [C, M/group, kernel...] -> Y [N, M, out...]), as
// semantics::ResolveConvTranspose gives them, plus oneDNN's view of them.
struct DeconvShape : semantics::ConvTransposeShape {
  std::vector<int64_t> covered;  // per dim: the output extent the primitive computes (<= out; the rest is bias)
  std::vector<int64_t> pad_r;    // oneDNN's pad_r for the covered extent (>= 0)
};

// What Prepare resolves for one input signature.
struct DeconvState {
  DeconvShape s;
  bool fill = false;  // some output positions no input tap reaches: they hold the bias
  int threads = 1;    // what the plan was built for and runs with
  // Null when Y is empty or no input tap reaches it (X or W empty, or an extent that covers nothing).
  std::shared_ptr<const ConvPlan> plan;
};

class ConvTranspose : public OpKernel {
 public:
  ConvTranspose(const ir::Node& node, const KernelOptions& options)
      : attrs_(AttrsOf(node)),
        group_(attrs_.group),
        what_(node.Describe()),
        weights_(ConstantInput(node, 1)),
        bias_input_(node.op_type() == "ConvTransposeWithDynamicPads" ? 3 : 2),
        has_bias_(node.input(static_cast<size_t>(bias_input_)) != nullptr) {
    packed_.ShareAs(weights_);  // other nodes reading this initializer share its packed copies
    // Static shapes: build the primitive (and pack the weights) now, for the session's thread count; Prepare takes
    // it when its signature matches. A shape error is Prepare's to report, naming the model and the input at fault.
    const auto x = StaticShape(node, 0), w = StaticShape(node, 1);
    if (x && w && x->size() >= 3 && x->size() <= 5 && ShapeElementCount(*x) > 0 && ShapeElementCount(*w) > 0) {
      try {
        const DeconvShape s = Resolve(*x, *w, what_);
        if (Covered(s)) {
          ScopedOmpThreads scope(options.threads);
          created_ = Build(*x, *w, s);
          created_x_ = *x;
          created_w_ = *w;
          created_threads_ = options.threads;
        }
      } catch (const InvalidArgumentError&) {  // Prepare reports it, with the inputs it is given
      }
    }
  }

  int64_t held_bytes() const override { return packed_.bytes(); }

  // Every check of the inputs, Y's shape, the primitive for these shapes and the scratch slots it runs with.
  void Prepare(PrepareContext& ctx) const override {
    const InputSpec& x = ctx.tensor_input(0);
    const InputSpec& w = ctx.tensor_input(1);
    const InputSpec* bias = ctx.has_input(bias_input_) ? &ctx.tensor_input(bias_input_) : nullptr;
    const std::string what = ctx.Describe();
    if (x.dtype != DataType::kFloat || w.dtype != DataType::kFloat) {
      throw InvalidArgumentError(what + ": X and W must be float32 on this kernel, got " + ctx.InputString(0) +
                                 " and " + ctx.InputString(1));
    }
    DeconvState st;
    try {
      st.s = Resolve(x.shape, w.shape, what);
    } catch (const InvalidArgumentError& e) {  // the geometry does not fit these inputs: name them
      throw InvalidArgumentError(std::string(e.what()) + " (" + ctx.InputString(0) + ", " + ctx.InputString(1) + ")");
    }
    const DeconvShape& s = st.s;
    if (bias && (bias->shape.size() != 1 || bias->shape[0] != s.out_channels || bias->dtype != x.dtype)) {
      throw InvalidArgumentError(what + ": bias B is " + ctx.InputString(bias_input_) + ", expected float32[" +
                                 std::to_string(s.out_channels) + "]");
    }
    if (bias == nullptr && has_bias_) throw InvalidArgumentError(what + ": bias B is declared but not given");
    if (x.shape.size() > 5) {
      throw UnsupportedError(what + ": X has rank " + std::to_string(x.shape.size()) + " (" + ctx.InputString(0) +
                             "); the cpu ConvTranspose kernel runs 1-D to 3-D (rank 3 to 5)");
    }
    ctx.SetOutput(0, x.dtype, s.y_shape);
    st.threads = ctx.threads();
    const bool nothing = ShapeElementCount(x.shape) == 0 || ShapeElementCount(w.shape) == 0 || !Covered(s);
    st.fill = nothing || s.covered != s.out;
    if (ShapeElementCount(s.y_shape) > 0 && !nothing) {
      st.plan = PlanFor(x.shape, w.shape, s, st.threads);
      AddConvWorkspace(*st.plan, ctx.workspace());
    }
    ctx.EmplaceState(std::move(st));
  }

  void Compute(KernelContext& ctx) const override {
    const DeconvState& p = ctx.state<DeconvState>();
    const DeconvShape& s = p.s;
    const Tensor& x = ctx.required_input(0);
    const Tensor& w = ctx.required_input(1);
    const Tensor* bias = ctx.input(bias_input_);
    Tensor& y = ctx.OutputUninitialized(0);  // every element written below
    if (y.size() == 0) return;
    const float* b = bias ? bias->data<float>() : nullptr;
    if (p.fill) {
      // Output positions no input tap reaches hold the bias.
      int64_t plane = 1;
      for (int64_t e : s.out) plane *= e;
      float* yp = y.data<float>();
      for (int64_t n = 0; n < s.batch; ++n) {
        for (int64_t m = 0; m < s.out_channels; ++m) {
          std::fill_n(yp + (n * s.out_channels + m) * plane, plane, b ? b[m] : 0.0f);
        }
      }
    }
    if (!p.plan) return;
    RunConvPlan(*p.plan, x.raw_data(), w.raw_data(), b, y.raw_data(), p.threads, what_);
  }

 private:
  // The attributes; for ConvTransposeWithDynamicPads with the constant Pads input as the pads (the predicate
  // sends any other Pads to ref).
  static semantics::ConvTransposeAttrs AttrsOf(const ir::Node& node) {
    semantics::ConvTransposeAttrs a = semantics::ConvTransposeAttrs::FromNode(node);
    if (node.op_type() != "ConvTransposeWithDynamicPads") return a;
    if (const auto pads = ConstantInput(node, 2)) {
      a.window.pads = ref::ReadInt64s(*pads, node.Describe() + ": input 'Pads'");
    }
    return a;
  }

  static bool Covered(const DeconvShape& s) {
    return std::all_of(s.covered.begin(), s.covered.end(), [](int64_t e) { return e > 0; });
  }

  // The ONNX geometry (semantics::ResolveConvTranspose, as the ref kernel resolves it), plus oneDNN's view of it.
  DeconvShape Resolve(const Shape& x, const Shape& w, const std::string& what) const {
    DeconvShape s;
    static_cast<semantics::ConvTransposeShape&>(s) = semantics::ResolveConvTranspose(attrs_, x, w, what);
    const size_t rank = s.in.size();
    s.covered.assign(rank, 0);
    s.pad_r.assign(rank, 0);
    for (size_t d = 0; d < rank; ++d) {
      const int64_t eff = (s.kernel[d] - 1) * s.dilations[d] + 1;
      const int64_t reach = s.strides[d] * (s.in[d] - 1) + eff;  // what the input taps span, before any pad
      // oneDNN: out = reach - pad_l - pad_r. A negative pad_r means output beyond every tap: compute the
      // covered extent only.
      const int64_t pad_r = reach - s.pad_begin[d] - s.out[d];
      s.pad_r[d] = std::max<int64_t>(pad_r, 0);
      s.covered[d] = pad_r >= 0 ? s.out[d] : reach - s.pad_begin[d];
    }
    return s;
  }

  // The plan for X `x`, W `w` and `threads`: the one built at creation when it is for these, else a new one, built
  // for `threads` (oneDNN fixes a primitive's parallel split when it is created).
  std::shared_ptr<const ConvPlan> PlanFor(const Shape& x, const Shape& w, const DeconvShape& s, int threads) const {
    if (created_ && created_threads_ == threads && created_x_ == x && created_w_ == w) return created_;
    ScopedOmpThreads scope(threads);
    return Build(x, w, s);
  }

  // Call under ScopedOmpThreads for the thread count the plan will run with.
  std::shared_ptr<ConvPlan> Build(const Shape& x, const Shape& w, const DeconvShape& s) const {
    const int64_t cg = s.channels / group_, mg = w[1];
    int64_t ksize = 1;
    for (int64_t k : s.kernel) ksize *= k;
    // oneDNN's weights are [g,] OC/g, IC/g, k...; ONNX's W is [C, M/g, k...] = [g, C/g, M/g, k...] in memory.
    memory::dims wdims, wstrides;
    if (group_ > 1) {
      wdims = {group_, mg, cg};
      wstrides = {cg * mg * ksize, ksize, mg * ksize};
    } else {
      wdims = {mg, cg};
      wstrides = {ksize, mg * ksize};
    }
    int64_t stride = ksize;
    for (int64_t k : s.kernel) {
      stride /= k;
      wdims.push_back(k);
      wstrides.push_back(stride);
    }
    memory::dims strides(s.strides.begin(), s.strides.end()), dilates, pad_l(s.pad_begin.begin(), s.pad_begin.end()),
        pad_r(s.pad_r.begin(), s.pad_r.end());
    for (int64_t d : s.dilations) dilates.push_back(d - 1);

    auto plan = std::make_shared<ConvPlan>();
    plan->src_user = PlainDesc(x, DataType::kFloat);
    plan->weights_user = memory::desc(wdims, memory::data_type::f32, wstrides);
    // The covered part of Y: all of it, or a view with Y's strides.
    Shape covered{s.batch, s.out_channels};
    covered.insert(covered.end(), s.covered.begin(), s.covered.end());
    memory::dims y_strides(s.y_shape.size());
    int64_t step = 1;
    for (size_t i = s.y_shape.size(); i-- > 0;) {
      y_strides[i] = step;
      step *= s.y_shape[i];
    }
    plan->dst_user = memory::desc(Dims(covered), memory::data_type::f32, y_strides);
    plan->bias = has_bias_;
    const memory::desc src(Dims(x), memory::data_type::f32, memory::format_tag::any);
    const memory::desc dst(Dims(covered), memory::data_type::f32, memory::format_tag::any);
    const memory::desc weights(wdims, memory::data_type::f32, memory::format_tag::any);
    try {
      using df = dnnl::deconvolution_forward;
      const auto kind = dnnl::prop_kind::forward_inference;
      const auto alg = dnnl::algorithm::deconvolution_direct;
      const df::desc desc =
          has_bias_ ? df::desc(kind, alg, src, weights,
                               memory::desc({s.out_channels}, memory::data_type::f32, memory::format_tag::x), dst,
                               strides, dilates, pad_l, pad_r)
                    : df::desc(kind, alg, src, weights, dst, strides, dilates, pad_l, pad_r);
      const df::primitive_desc pd(desc, ScratchpadAttr(), Engine());
      FinishConvPlan(*plan, pd, df(pd), weights_.get(), &packed_, what_);
    } catch (const dnnl::error& e) {
      throw InternalError(what_ + ": oneDNN could not create the deconvolution: " + e.what());
    }
    return plan;
  }

  semantics::ConvTransposeAttrs attrs_;
  int64_t group_;
  std::string what_;
  std::shared_ptr<const Tensor> weights_;  // constant W (packed into each plan), or null
  int bias_input_;                         // 2; 3 for ConvTransposeWithDynamicPads
  bool has_bias_;
  mutable PackedWeights packed_;  // internally locked: Prepare may run for two signatures at once
  // The plan built at creation (static shapes), for X created_x_, W created_w_ and created_threads_ threads; null
  // when none was.
  std::shared_ptr<const ConvPlan> created_;
  Shape created_x_, created_w_;
  int created_threads_ = 0;
};

std::string ConvTransposePredicate(const ir::Node& node) {
  // Opset 11 settled where SAME_* and output_shape put the odd pad; older opsets are left to ref.
  const std::string pad = node.GetString("auto_pad", "NOTSET");
  if (node.opset() < 11 && (pad == "SAME_UPPER" || pad == "SAME_LOWER")) {
    return "ConvTranspose-1: auto_pad=" + pad + " is not implemented on cpu (opset < 11)";
  }
  if (node.opset() < 11 && node.has_attr("output_shape")) {
    return "ConvTranspose-1: output_shape is not implemented on cpu (opset < 11)";
  }
  return "";
}

std::string ConvTransposeShapePredicate(const ir::Node& node) {
  int64_t rank = KnownRank(node, 0);
  if (rank < 0) rank = KnownRank(node, 1);
  if (rank > 5) {
    return "ConvTranspose: " + std::to_string(rank - 2) + "-D (X of rank " + std::to_string(rank) +
           ") is not implemented on cpu (1-D to 3-D only)";
  }
  return "";
}

}  // namespace

void RegisterConvTransposeKernels(KernelRegistry& r) {
  r.Add({.op = "ConvTranspose",
         .since = 1,
         .types = {{"T", {DataType::kFloat}}},
         .create = MakeKernel<ConvTranspose>,
         .predicate = ConvTransposePredicate,
         .shape_predicate = ConvTransposeShapePredicate,
         .isa = {},
         .name = "cpu.f32_conv_transpose__onednn.1",
         .constraints = "float32; 1-D to 3-D; opsets 1-10: no auto_pad=SAME_*, no output_shape",
         .library = "oneDNN"});
  r.Add({.op = "ConvTransposeWithDynamicPads",
         .domain = "com.microsoft",
         .since = 1,
         .types = {{"T", {DataType::kFloat}}},
         .create = MakeKernel<ConvTranspose>,
         .predicate = [](const ir::Node& node) -> std::string {
           return node.input(2) == nullptr || ConstantInput(node, 2)
                      ? ""
                      : "ConvTransposeWithDynamicPads: input Pads is not a constant initializer (the cpu kernel "
                        "builds its primitive for known pads)";
         },
         .shape_predicate = ConvTransposeShapePredicate,
         .isa = {},
         .name = "cpu.com.microsoft.f32_conv_transpose__onednn.1",
         .constraints = "float32; 1-D to 3-D; Pads a constant initializer",
         .library = "oneDNN"});
}

}  // namespace ferry::cpu
