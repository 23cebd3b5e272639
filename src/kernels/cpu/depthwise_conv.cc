// Depthwise Conv, ai.ferry FusedConv and com.microsoft FusedConv on plain (NC...) float32 tensors, 1-D to 3-D, as
// Ferry's own vectorized kernel (AVX-512F and AVX2+FMA variants, registered before oneDNN's): group = C, W
// [M, 1, k...] with M a multiple of C (channel multiplier M / C), any kernel size, stride, dilation and pads.
// oneDNN 2.6 runs such a convolution on plain tensors as one small GEMM per channel (`gemm:jit`), and the
// optimizer's blocked layout takes 2-D depthwise convolutions only (oneDNN has no jit kernel for a blocked 1-D or
// 3-D one): the k=31 depthwise Conv1d of a Conformer block took 0.18-0.20 ms there against ORT's 0.05
// (docs/performance.md, "Kernel design measurements", depthwise_conv.cc).
//
// Per (image, input channel) the channel's plane is copied once into the thread's conv scratchpad as *phase rows*:
// each input row (d, h), zero-padded along W by the pads, split into `stride_w` phases (phase r holds padded
// positions r, r + stride_w, r + 2 stride_w, ...), so that for every tap kw the inputs of consecutive outputs are
// consecutive floats: output o reads phase (kw * dilation_w) % stride_w at (kw * dilation_w) / stride_w + o. An
// output row is then kBlockRegs vector accumulators per block of outputs, one broadcast weight and one unaligned
// load per tap and vector, with no bounds checks (rows outside X along D and H are taps skipped; the padding along
// W reads the zeros). Bias, Z (FusedConv's sum input) and the fused activation (simd_kernels.inc's formulas, their
// accuracy stated there) are applied as the block is stored. Sums run in a fixed order: the same bits on any
// thread count; they differ from ref's by float rounding (another order).
#include <algorithm>
#include <memory>
#include <string>
#include <vector>

#include "core/parallel.h"
#include "kernels/cpu/conv_common.h"
#include "kernels/cpu/fused_activation.h"
#include "kernels/cpu/simd_common.h"
#include "kernels/kernel_def.h"
#include "kernels/registry.h"
#include "kernels/static_shape.h"
#include "schemas/schema.h"
#include "semantics/window.h"

namespace ferry::cpu {
namespace {

using Kind = semantics::FusedActivationKind;

constexpr int kBlockRegs = 4;      // vector accumulators per block of outputs
constexpr int64_t kMaxWidth = 16;  // floats per vector on the widest variant (AVX-512)

// One output row's inputs (see DwRow in depthwise_conv_kernels.inc).
struct DwRowArgs {
  const float* const* rows;     // [taps]: the phase rows of the (kd, kh) taps inside X
  const float* const* weights;  // [taps]: their kernel_w weights
  int64_t taps = 0, kernel_w = 0, out_w = 0;
  const int64_t* offsets;  // [kernel_w]: each kw's offset into a phase row group
  float bias = 0;
  const float* z = nullptr;  // Z's row, or null
  float* y = nullptr;
};

using DwRowFn = void (*)(const DwRowArgs&, const simd::UnaryParams&);

#pragma GCC push_options
#pragma GCC target("avx512f")
namespace avx512 {
using V = simd::F32x16;
#include "kernels/cpu/simd_kernels.inc"
// After the activation ops it uses:
#include "kernels/cpu/depthwise_conv_kernels.inc"
}  // namespace avx512
#pragma GCC pop_options

#pragma GCC push_options
#pragma GCC target("avx2,fma")
namespace avx2 {
using V = simd::F32x8;
#include "kernels/cpu/simd_kernels.inc"
// After the activation ops it uses:
#include "kernels/cpu/depthwise_conv_kernels.inc"
}  // namespace avx2
#pragma GCC pop_options

// The resolved window over three spatial dims (1-D and 2-D convolutions with leading extents of 1).
struct DwGeometry {
  int64_t batch = 0, channels = 0, mult = 1;
  int64_t in[3] = {1, 1, 1}, out[3] = {1, 1, 1}, kernel[3] = {1, 1, 1}, stride[3] = {1, 1, 1}, dilation[3] = {1, 1, 1},
          pad[3] = {0, 0, 0};
  int64_t row_len = 0;           // floats of one phase row
  std::vector<int64_t> offsets;  // [kernel_w]: phase * row_len + shift
  Shape y_shape;

  int64_t in_plane() const { return in[0] * in[1] * in[2]; }
  int64_t out_plane() const { return out[0] * out[1] * out[2]; }
  int64_t kernel_size() const { return kernel[0] * kernel[1] * kernel[2]; }
  // One input row's phase rows, then a plane's.
  int64_t row_group() const { return stride[2] * row_len; }
  int64_t scratch_floats() const { return in[0] * in[1] * row_group(); }
};

DwGeometry MakeGeometry(const semantics::ConvShape& cs) {
  DwGeometry g;
  g.batch = cs.batch;
  g.channels = cs.channels;
  g.mult = cs.out_channels / cs.channels;
  const size_t rank = cs.g.rank(), lead = 3 - rank;
  for (size_t i = 0; i < rank; ++i) {
    g.in[lead + i] = cs.g.in[i];
    g.out[lead + i] = cs.g.out[i];
    g.kernel[lead + i] = cs.g.kernel[i];
    g.stride[lead + i] = cs.g.strides[i];
    g.dilation[lead + i] = cs.g.dilations[i];
    g.pad[lead + i] = cs.g.pad_begin[i];
  }
  const int64_t block = kBlockRegs * kMaxWidth;
  const int64_t out_w = (g.out[2] + block - 1) / block * block;  // whole blocks are loaded
  const int64_t reach = (g.kernel[2] - 1) * g.dilation[2] / g.stride[2];
  g.row_len = out_w + reach + 1;
  for (int64_t kw = 0; kw < g.kernel[2]; ++kw) {
    const int64_t at = kw * g.dilation[2];
    g.offsets.push_back(at % g.stride[2] * g.row_len + at / g.stride[2]);
  }
  g.y_shape = cs.y_shape;
  return g;
}

// Copies channel plane x [in_d, in_h, in_w] into its phase rows (see the top of the file).
void FillPhaseRows(const DwGeometry& g, const float* x, float* rows) {
  const int64_t sw = g.stride[2], in_w = g.in[2], pad = g.pad[2];
  for (int64_t r = 0; r < g.in[0] * g.in[1]; ++r) {
    const float* src = x + r * in_w;
    float* dst = rows + r * g.row_group();
    for (int64_t phase = 0; phase < sw; ++phase) {
      float* p = dst + phase * g.row_len;
      for (int64_t j = 0; j < g.row_len; ++j) {
        const int64_t i = phase + j * sw - pad;
        p[j] = i >= 0 && i < in_w ? src[i] : 0.0f;
      }
    }
  }
}

enum class ConvKind { kConv, kFusedConv };

class DepthwiseConv final : public OpKernel {
 public:
  DepthwiseConv(const ir::Node& node, ConvKind op, simd::F32x16* /*avx512 tag*/) : DepthwiseConv(node, op) {
    row_ = avx512::DwRowFor(act_.kind);
  }
  DepthwiseConv(const ir::Node& node, ConvKind op, simd::F32x8* /*avx2 tag*/) : DepthwiseConv(node, op) {
    row_ = avx2::DwRowFor(act_.kind);
  }

  int64_t held_bytes() const override { return static_cast<int64_t>(w_.size() * sizeof(float)); }

  // A constant W is copied at creation (it is small: M * kernel floats): the session may free it.
  bool ReleaseConstantInput(size_t k) override { return k == 1 && copied_; }

  void Prepare(PrepareContext& ctx) const override {
    const std::string what = ctx.Describe();
    const InputSpec& x = ctx.tensor_input(0);
    if (x.dtype != DataType::kFloat)
      throw InvalidArgumentError(what + ": " + ctx.InputString(0) + ", expected float32");
    Shape w_shape = w_shape_;  // W's, copied at creation (the session may have released W)
    if (!copied_) {
      const InputSpec& w = ctx.tensor_input(1);
      if (w.dtype != DataType::kFloat) {
        throw InvalidArgumentError(what + ": " + ctx.InputString(1) + ", expected float32");
      }
      w_shape = w.shape;
    }
    const std::string w_string = "W " + ShapeToString(w_shape);
    semantics::ConvShape cs;
    try {
      cs = semantics::ResolveConv(attrs_, group_, x.shape, w_shape, what);
    } catch (const InvalidArgumentError& e) {
      throw InvalidArgumentError(std::string(e.what()) + " (" + ctx.InputString(0) + ", " + w_string + ")");
    }
    if (cs.channels != group_ || w_shape[1] != 1 || cs.out_channels % group_ != 0) {
      throw InvalidArgumentError(what + ": the depthwise kernel needs C = group = " + std::to_string(group_) +
                                 " and W [M, 1, ...] with M a multiple of C; got " + ctx.InputString(0) + ", " +
                                 w_string);
    }
    if (has_bias_) {
      const InputSpec& b = ctx.tensor_input(2);
      if (b.dtype != DataType::kFloat || b.shape != Shape{cs.out_channels}) {
        throw InvalidArgumentError(what + ": bias B is " + ctx.InputString(2) + ", expected float32[" +
                                   std::to_string(cs.out_channels) + "]");
      }
    }
    if (has_z_) {
      const InputSpec& z = ctx.tensor_input(3);
      if (z.dtype != DataType::kFloat || z.shape != cs.y_shape) {
        throw InvalidArgumentError(what + ": input Z is " + ctx.InputString(3) + ", expected Y's float32" +
                                   ShapeToString(cs.y_shape));
      }
      ctx.output(0).in_place_of = 3;  // each position of Z is read before Y's is written
    }
    ctx.SetOutput(0, DataType::kFloat, cs.y_shape);
    DwGeometry g = MakeGeometry(cs);
    if (ShapeElementCount(cs.y_shape) > 0) {
      ctx.workspace().Need("conv scratchpad", g.scratch_floats() * static_cast<int64_t>(sizeof(float)), ctx.threads());
    }
    ctx.EmplaceState(std::move(g));
  }

  void Compute(KernelContext& ctx) const override {
    const DwGeometry& g = ctx.state<DwGeometry>();
    const Tensor& x = ctx.required_input(0);
    const Tensor* bias = has_bias_ ? ctx.input(2) : nullptr;
    const Tensor* z = has_z_ ? ctx.input(3) : nullptr;
    Tensor* reused = z ? ctx.ReuseInput(3, 0, DataType::kFloat, g.y_shape) : nullptr;
    Tensor& y = reused ? *reused : ctx.OutputUninitialized(0);  // every element written below
    if (y.size() == 0) return;
    const float* px = x.data<float>();
    const float* pw = copied_ ? w_.data() : ctx.required_input(1).data<float>();
    const float* pb = bias ? bias->data<float>() : nullptr;
    const float* pz = reused ? y.data<float>() : z ? z->data<float>() : nullptr;
    float* py = y.data<float>();
    const int64_t planes = g.batch * g.channels;
    const int64_t work = std::max<int64_t>(1, g.out_plane() * g.mult * g.kernel_size());
    const int64_t grain = std::max<int64_t>(1, (int64_t{1} << 15) / work);
    const int64_t max_taps = g.kernel[0] * g.kernel[1];
    ParallelFor(ctx.threads(), planes, grain, [&](int64_t p0, int64_t p1) {
      float* rows = static_cast<float*>(ConvScratchpad(static_cast<size_t>(g.scratch_floats()) * sizeof(float)));
      std::vector<const float*> tap_rows(static_cast<size_t>(max_taps)), tap_weights(static_cast<size_t>(max_taps));
      for (int64_t plane = p0; plane < p1; ++plane) {
        const int64_t n = plane / g.channels, c = plane % g.channels;
        FillPhaseRows(g, px + plane * g.in_plane(), rows);
        for (int64_t k = 0; k < g.mult; ++k) {
          const int64_t m = c * g.mult + k;
          const float* wm = pw + m * g.kernel_size();
          const int64_t out_offset = (n * g.channels * g.mult + m) * g.out_plane();
          for (int64_t od = 0; od < g.out[0]; ++od) {
            for (int64_t oh = 0; oh < g.out[1]; ++oh) {
              int64_t taps = 0;
              for (int64_t kd = 0; kd < g.kernel[0]; ++kd) {
                const int64_t id = od * g.stride[0] - g.pad[0] + kd * g.dilation[0];
                if (id < 0 || id >= g.in[0]) continue;
                for (int64_t kh = 0; kh < g.kernel[1]; ++kh) {
                  const int64_t ih = oh * g.stride[1] - g.pad[1] + kh * g.dilation[1];
                  if (ih < 0 || ih >= g.in[1]) continue;
                  tap_rows[static_cast<size_t>(taps)] = rows + (id * g.in[1] + ih) * g.row_group();
                  tap_weights[static_cast<size_t>(taps)] = wm + (kd * g.kernel[1] + kh) * g.kernel[2];
                  ++taps;
                }
              }
              const int64_t row_offset = out_offset + (od * g.out[1] + oh) * g.out[2];
              const DwRowArgs args{.rows = tap_rows.data(),
                                   .weights = tap_weights.data(),
                                   .taps = taps,
                                   .kernel_w = g.kernel[2],
                                   .out_w = g.out[2],
                                   .offsets = g.offsets.data(),
                                   .bias = pb ? pb[m] : 0.0f,
                                   .z = pz ? pz + row_offset : nullptr,
                                   .y = py + row_offset};
              row_(args, params_);
            }
          }
        }
      }
    });
  }

 private:
  DepthwiseConv(const ir::Node& node, ConvKind op)
      : attrs_(semantics::WindowAttrs::FromNode(node)),
        group_(node.GetInt("group", 1)),
        has_bias_(node.input(2) != nullptr),
        has_z_(op == ConvKind::kFusedConv && node.input(3) != nullptr) {
    if (op == ConvKind::kFusedConv) FusedActivation::Parse(node, &act_);  // the predicate accepted it
    params_.alpha = act_.alpha;
    params_.beta = act_.beta;
    params_.lo = act_.alpha;
    params_.hi = act_.beta;
    if (const std::shared_ptr<const Tensor> w = ConstantInput(node, 1); w && w->dtype() == DataType::kFloat) {
      w_.assign(w->data<float>(), w->data<float>() + w->size());
      w_shape_ = w->shape();
      copied_ = true;
    }
  }

  semantics::WindowAttrs attrs_;
  int64_t group_;
  bool has_bias_, has_z_;
  FusedActivation act_;
  simd::UnaryParams params_;
  DwRowFn row_ = nullptr;
  std::vector<float> w_;  // a constant W's copy (copied_), else empty: W is read from the input each run
  Shape w_shape_;
  bool copied_ = false;
};

// From the attributes and W's static shape: a depthwise convolution (group > 1, W [M, 1, k...] with M a multiple
// of group, 1-D to 3-D) and, for FusedConv, an activation the table runs.
std::string DepthwisePredicate(const ir::Node& node, ConvKind op) {
  const std::string no = node.op_type() + " (depthwise kernel): ";
  if (op == ConvKind::kFusedConv) {
    FusedActivation act;
    if (std::string reason = FusedActivation::Parse(node, &act); !reason.empty()) return reason;
  }
  const int64_t group = node.GetInt("group", 1);
  if (group < 2) return no + "not a grouped convolution";
  const auto w = StaticShape(node, 1);
  if (!w) return no + "W's shape is not known before the run";
  if (w->size() < 3 || w->size() > 5) return no + "W of rank " + std::to_string(w->size()) + " (1-D to 3-D only)";
  if ((*w)[1] != 1 || (*w)[0] % group != 0) {
    return no + "W " + ShapeToString(*w) + " with group " + std::to_string(group) +
           " is not depthwise ([M, 1, ...] with M a multiple of group)";
  }
  // Conv-1 defines SAME_* as "output size = input size", which differs from opset 11's once a stride is > 1
  // (ResolveConv follows opset 11); oneDNN's kernel refuses it too, so ref runs it.
  const std::string pad = node.GetString("auto_pad", "NOTSET");
  if (op == ConvKind::kConv && node.opset() < 11 && (pad == "SAME_UPPER" || pad == "SAME_LOWER")) {
    for (int64_t s : node.GetInts("strides")) {
      if (s > 1) return no + "Conv-1: auto_pad=" + pad + " with strides > 1 (opset < 11)";
    }
  }
  return "";
}

}  // namespace

void RegisterDepthwiseConvKernels(KernelRegistry& r) {
  const std::string constraints =
      "float32; depthwise: group = C, W [M, 1, k...] (M a multiple of C; W's shape static), 1-D to 3-D";
  struct Entry {
    const char* op;
    std::string domain;
    ConvKind kind;
    const char* name;
  };
  const Entry entries[] = {
      {"Conv", "", ConvKind::kConv, "depthwise_conv"},
      {"FusedConv", std::string(schemas::kFerryDomain), ConvKind::kFusedConv, "fused_depthwise_conv"},
      {"FusedConv", "com.microsoft", ConvKind::kFusedConv, "ms_fused_depthwise_conv"}};
  for (const Entry& e : entries) {
    const ConvKind kind = e.kind;
    auto predicate = [kind](const ir::Node& node) { return DepthwisePredicate(node, kind); };
    r.Add({.op = e.op,
           .domain = e.domain,
           .since = 1,
           .types = {{"T", {DataType::kFloat}}},
           .create = [kind](const ir::Node& node, const KernelOptions&) -> std::unique_ptr<OpKernel> {
             return std::make_unique<DepthwiseConv>(node, kind, static_cast<simd::F32x16*>(nullptr));
           },
           .predicate = predicate,
           .isa = {Isa::kAvx512f},
           .name = std::string("cpu.f32_") + e.name + "__avx512.1",
           .constraints = constraints});
    r.Add({.op = e.op,
           .domain = e.domain,
           .since = 1,
           .types = {{"T", {DataType::kFloat}}},
           .create = [kind](const ir::Node& node, const KernelOptions&) -> std::unique_ptr<OpKernel> {
             return std::make_unique<DepthwiseConv>(node, kind, static_cast<simd::F32x8*>(nullptr));
           },
           .predicate = predicate,
           .isa = {Isa::kAvx2, Isa::kFma},
           .name = std::string("cpu.f32_") + e.name + "__avx2.1",
           .constraints = constraints});
  }
}

}  // namespace ferry::cpu
