// BatchNormalization inference (float32, opsets 9-15) on oneDNN's batch_normalization_forward with the given
// statistics (use_global_stats) and separate scale and shift: Y = (X - mean) / sqrt(var + epsilon) · scale + B
// per channel. X [N, C, D1, ...] is viewed as [N, C, D1·D2·..., 1] (the layout oneDNN's plain-layout kernel
// takes for any rank); a rank-1 X is [N] with one channel. Training (training_mode=1, or an opset < 14 node that
// asks for the running statistics) is refused and falls back to ref.
#include <string>

#include "kernels/cpu/dnnl_scratchpad.h"
#include "kernels/cpu/dnnl_util.h"
#include "kernels/kernel_def.h"
#include "kernels/registry.h"

namespace ferry::cpu {
namespace {

struct BatchNormPrimitive {
  dnnl::batch_normalization_forward prim;
  dnnl::memory::desc scratch;
};

class BatchNormalization : public OpKernel {
 public:
  explicit BatchNormalization(const ir::Node& node) : epsilon_(node.GetFloat("epsilon", 1e-5f)) {}

  // The scratchpad of the primitive Compute runs at X's static shape (built now, as the first run would).
  void AddWorkspace(const ir::Node& node, int threads, Workspace& ws) const override {
    const auto x = StaticShape(node, 0);
    if (!x || x->empty() || ShapeElementCount(*x) == 0) return;
    NeedScratchpad(Primitive(View(*x), threads, node.Describe())->scratch, ws);
  }

  void Compute(KernelContext& ctx) const override {
    const Tensor& x = ctx.required_input(0);
    const std::string what = ctx.Describe();
    const char* names[] = {"X", "scale", "B", "input_mean", "input_var"};
    const Tensor* in[5];
    for (int i = 0; i < 5; ++i) {
      in[i] = &ctx.required_input(i);
      if (in[i]->dtype() != DataType::kFloat) {
        throw InvalidArgumentError(what + ": input '" + names[i] + "' must be float32, got " +
                                   std::string(DataTypeName(in[i]->dtype())));
      }
    }
    if (x.rank() < 1) throw InvalidArgumentError(what + ": input 'X' must have rank >= 1");
    const Shape view = View(x.shape());
    const int64_t channels = view[1];
    for (int i = 1; i < 5; ++i) {
      if (in[i]->size() != channels) {
        throw InvalidArgumentError(what + ": input '" + names[i] + "' has " + std::to_string(in[i]->size()) +
                                   " elements, expected C = " + std::to_string(channels));
      }
    }
    Tensor& y = ctx.OutputUninitialized(0, DataType::kFloat, x.shape());
    if (x.size() == 0) return;
    auto prim = Primitive(view, ctx.threads(), what);
    const dnnl::memory::desc data = PlainDesc(view, DataType::kFloat);
    const dnnl::memory::desc param = PlainDesc({channels}, DataType::kFloat);
    std::unordered_map<int, dnnl::memory> args{{DNNL_ARG_SRC, Wrap(x, data)},
                                               {DNNL_ARG_DST, Wrap(y, data)},
                                               {DNNL_ARG_SCALE, Wrap(*in[1], param)},
                                               {DNNL_ARG_SHIFT, Wrap(*in[2], param)},
                                               {DNNL_ARG_MEAN, Wrap(*in[3], param)},
                                               {DNNL_ARG_VARIANCE, Wrap(*in[4], param)}};
    AddScratchpad(args, prim->scratch);
    Execute(prim->prim, args, ctx.threads(), what);
  }

 private:
  // X as oneDNN sees it: [N, C, spatial, 1].
  static Shape View(const Shape& x) {
    const int64_t channels = x.size() > 1 ? x[1] : 1;
    const int64_t spatial = x.size() > 2 ? ShapeElementCount(std::span(x).subspan(2)) : 1;
    return {x[0], channels, spatial, 1};
  }

  // The primitive for this view, built on first use for `threads` (the split it will run with).
  std::shared_ptr<const BatchNormPrimitive> Primitive(const Shape& view, int threads, const std::string& what) const {
    return cache_.Get(view, [&] {
      const ScopedOmpThreads scope(threads);
      const auto flags = dnnl::normalization_flags::use_global_stats | dnnl::normalization_flags::use_scale |
                         dnnl::normalization_flags::use_shift;
      try {
        dnnl::batch_normalization_forward::desc d(dnnl::prop_kind::forward_inference,
                                                  PlainDesc(view, DataType::kFloat), epsilon_, flags);
        const dnnl::batch_normalization_forward::primitive_desc pd(d, WithUserScratchpad(), Engine());
        return std::make_shared<BatchNormPrimitive>(
            BatchNormPrimitive{dnnl::batch_normalization_forward(pd), pd.scratchpad_desc()});
      } catch (const dnnl::error& e) {
        throw InternalError(what + ": oneDNN batch normalization: " + e.what());
      }
    });
  }

  float epsilon_;
  ShapeCache<BatchNormPrimitive> cache_;
};

std::string InferenceOnly(const ir::Node& node) {
  if (node.opset() >= 14 && node.GetInt("training_mode", 0) != 0) {
    return "BatchNormalization: training_mode=1 is not implemented on cpu";
  }
  for (size_t i = 1; i < node.num_outputs(); ++i) {
    if (node.output(i) != nullptr) {
      return "BatchNormalization: output " + std::to_string(i) +
             " (running or saved statistics, training) is not implemented on cpu";
    }
  }
  return "";
}

// Static shapes: every parameter holds one value per channel (ref also accepts the legacy per-position form).
std::string ParamsPerChannel(const ir::Node& node) {
  const ir::Value* x = node.input(0);
  if (!x || !x->type().shape || x->type().shape->empty()) return "";
  const auto& xs = *x->type().shape;
  const ir::Dim c = xs.size() > 1 ? xs[1] : ir::Dim{1, ""};
  if (!c.is_static()) return "";
  for (size_t i = 1; i < 5; ++i) {
    const ir::Value* p = node.input(i);
    if (!p || !p->type().shape) continue;
    int64_t n = 1;
    for (const ir::Dim& d : *p->type().shape) {
      if (!d.is_static()) return "";
      n *= d.value;
    }
    if (n != c.value) {
      return "BatchNormalization: input '" + p->name() + "' has " + std::to_string(n) +
             " elements, not one per channel (" + std::to_string(c.value) + "); not implemented on cpu";
    }
  }
  return "";
}

}  // namespace

void RegisterBatchNormalizationKernels(KernelRegistry& r) {
  // 9: no more `spatial`; 14 adds training_mode and the type U; 15 splits it into T1, T2. Inference is the same.
  r.Add({.op = "BatchNormalization",
         .since = 9,
         .types = {{"T", {DataType::kFloat}},
                   {"T1", {DataType::kFloat}},
                   {"T2", {DataType::kFloat}},
                   {"U", {DataType::kFloat}}},
         .create = MakeKernel<BatchNormalization>,
         .predicate = InferenceOnly,
         .shape_predicate = ParamsPerChannel,
         .name = "cpu.f32_batchnormalization__onednn.9",
         .constraints = "inference only (training_mode=0, only Y requested); per-channel parameters"});
}

}  // namespace ferry::cpu
