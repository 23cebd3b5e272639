// ONNX Runtime's com.microsoft.nchwc ops (schemas_com_microsoft_nchwc.cc), on the tensors ORT's NCHWc transformer
// writes (kernels/nchwc_layout.h: block b = the machine's, blocked tensors 4-D [N, Cp, H, W] stored
// [N, Cp/b, H, W, b], Cp a multiple of b). Float32, 2-D (rank 4) only, as ORT's kernels
// (onnxruntime/contrib_ops/cpu/nchwc_ops.cc). The reference: each op unblocks, computes with the ref loops and
// blocks again.
//
// ReorderInput(X) -> Y     X [N, C, H, W] (channels_last = 1: [N, H, W, C]) -> Y [N, Cp, H, W], Cp = C rounded up
//                          to b, the padding channels zero.
// ReorderOutput(X) -> Y    X [N, Cp, H, W] -> Y [N, channels, H, W] (channels_last = 1: [N, H, W, channels]); ORT's
//                          checks: 0 < channels <= Cp and Cp - channels < b.
// Conv(X, W, B?, Sum?) -> Y  Y = act(Conv(X, W_logical, B) + Sum): ONNX Conv's geometry (auto_pad, pads, strides,
//                          dilations, group), W in ORT's blocked layout (OIHWBo or OIHWBiBo: nchwc_layout.h), X
//                          blocked, or plain NCHW when ungrouped with C < b; Y [N, M, oh, ow] blocked, M = W[0] a
//                          multiple of b; Sum (the transformer's fused residual Add) has Y's shape and is added
//                          before the activation; `activation` / `activation_params` as ai.ferry's fused
//                          activation table (semantics/fused_activation.h: Relu, LeakyRelu, Clip, Sigmoid, Tanh,
//                          HardSigmoid, HardSwish, ...).
// MaxPool, AveragePool     ONNX's pools (kernel_shape, pads, strides, dilations, auto_pad, ceil_mode; AveragePool's
//                          count_include_pad; MaxPool's storage_order concerns only Indices, which has no output
//                          here) on every channel of a blocked X.
// GlobalMaxPool, GlobalAveragePool   over H x W per channel: Y [N, Cp, 1, 1].
// Upsample(X) -> Y         Y [N, Cp, H * sh, W * sw], integer `scales` [1, 1, sh, sw] (sh, sw >= 1). mode nearest
//                          (coordinate_transformation_mode asymmetric only): Y[oh, ow] = X[oh / sh, ow / sw]. mode
//                          linear: per output position the source coordinate s = o (scale 1), o / scale
//                          (asymmetric), max(0, (o + 0.5) / scale - 0.5) (half_pixel) or o * (in - 1) / (out - 1)
//                          (align_corners), in float; i0 = floor(s), i1 = min(i0 + 1, in - 1), f = s - i0; Y =
//                          (x00 (1-fy)(1-fx) + x01 (1-fy) fx) + (x10 fy (1-fx) + x11 fy fx), MLAS's
//                          MlasNchwcUpsampleLinear order.
#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include "kernels/kernel_def.h"
#include "kernels/nchwc_layout.h"
#include "kernels/ref/blocked_layout.h"
#include "kernels/ref/common.h"
#include "kernels/ref/conv_util.h"
#include "kernels/ref/fused_activation.h"
#include "kernels/ref/nchwc.h"
#include "kernels/ref/pool.h"
#include "kernels/registry.h"
#include "schemas/op_origin.h"

namespace ferry::ref {

void CheckNchwcTensor(const PrepareContext& ctx, int i, const char* name, int64_t block) {
  const InputSpec& x = ctx.tensor_input(i);
  if (x.dtype != DataType::kFloat) {
    throw InvalidArgumentError(ctx.Describe() + ": input " + name + " must be float32, got " + ctx.InputString(i));
  }
  if (x.shape.size() != 4) {
    throw InvalidArgumentError(ctx.Describe() + ": input " + name + " must be 4-D [N, C, H, W], got " +
                               ctx.InputString(i));
  }
  if (block > 0 && x.shape[1] % block != 0) {
    throw InvalidArgumentError(ctx.Describe() + ": input " + name + " (" + ctx.InputString(i) + ") has " +
                               std::to_string(x.shape[1]) + " channels, expected a multiple of the NCHWc block " +
                               std::to_string(block) + " (a blocked tensor; the block is this machine's: " +
                               "FERRY_NCHWC_BLOCK overrides it for a model written on another)");
  }
}

std::vector<float> NchwcFilterToPlain(const float* w, const Shape& shape, const NchwcConvLayout& l, int64_t block) {
  const int64_t m = shape[0], in = shape[1], kernel = shape[2] * shape[3];
  std::vector<float> plain(static_cast<size_t>(m * in * kernel));
  for (int64_t o = 0; o < m; ++o) {
    for (int64_t i = 0; i < in; ++i) {
      for (int64_t k = 0; k < kernel; ++k) {
        plain[static_cast<size_t>((o * in + i) * kernel + k)] = w[NchwcFilterIndex(l, block, in, kernel, o, i, k)];
      }
    }
  }
  return plain;
}

namespace {

int64_t Plane(const Shape& s) { return s[2] * s[3]; }

class NchwcReorderInput : public OpKernel {
 public:
  explicit NchwcReorderInput(const ir::Node& node)
      : block_(NchwcBlockSizeFor(node)), channels_last_(node.GetInt("channels_last", 0) != 0) {}

  void Prepare(PrepareContext& ctx) const override {
    CheckNchwcTensor(ctx, 0, "X", 0);
    const Shape& x = ctx.input(0).shape;
    const int64_t c = channels_last_ ? x[3] : x[1];
    const Shape y = channels_last_ ? Shape{x[0], NchwcPadded(c, block_), x[1], x[2]}
                                   : Shape{x[0], NchwcPadded(c, block_), x[2], x[3]};
    ctx.SetOutput(0, DataType::kFloat, y);
  }

  void Compute(KernelContext& ctx) const override {
    const Tensor& x = ctx.required_input(0);
    Tensor& y = ctx.Output(0);  // zeroed: the padding channels stay 0
    if (y.size() == 0) return;
    const int64_t n = y.dim(0), b = block_, plane = Plane(y.shape());
    const int64_t c = channels_last_ ? x.dim(3) : x.dim(1), blocks = y.dim(1) / b;
    const float* xp = x.data<float>();
    float* yp = y.data<float>();
    if (!channels_last_) {
      BlockChannels(xp, n, c, plane, b, yp, ctx.threads());
      return;
    }
    ParallelFor(ctx.threads(), n * plane, 1024, [&](int64_t begin, int64_t end) {
      for (int64_t q = begin; q < end; ++q) {  // q = image * plane + position
        const int64_t image = q / plane, s = q % plane;
        const float* src = xp + q * c;
        for (int64_t ch = 0; ch < c; ++ch) yp[((image * blocks + ch / b) * plane + s) * b + ch % b] = src[ch];
      }
    });
  }

 private:
  int64_t block_;
  bool channels_last_;
};

class NchwcReorderOutput : public OpKernel {
 public:
  explicit NchwcReorderOutput(const ir::Node& node)
      : block_(NchwcBlockSizeFor(node)),
        channels_(node.GetInt("channels", 0)),
        channels_last_(node.GetInt("channels_last", 0) != 0) {
    if (channels_ <= 0) {
      throw InvalidModelError(node.Describe() + ": attribute channels = " + std::to_string(channels_) +
                              ", expected > 0 (the logical channel count)");
    }
  }

  void Prepare(PrepareContext& ctx) const override {
    CheckNchwcTensor(ctx, 0, "X", block_);
    const Shape& x = ctx.input(0).shape;
    CheckNchwcChannels(ctx, x[1], channels_, block_);
    ctx.SetOutput(0, DataType::kFloat,
                  channels_last_ ? Shape{x[0], x[2], x[3], channels_} : Shape{x[0], channels_, x[2], x[3]});
  }

  void Compute(KernelContext& ctx) const override {
    const Tensor& x = ctx.required_input(0);
    Tensor& y = ctx.OutputUninitialized(0);  // every element written below
    if (y.size() == 0) return;
    const int64_t n = x.dim(0), b = block_, plane = Plane(x.shape()), c = channels_, blocks = x.dim(1) / b;
    const float* xp = x.data<float>();
    float* yp = y.data<float>();
    if (!channels_last_) {
      UnblockChannels(xp, n, c, plane, b, yp, ctx.threads());
      return;
    }
    ParallelFor(ctx.threads(), n * plane, 1024, [&](int64_t begin, int64_t end) {
      for (int64_t q = begin; q < end; ++q) {
        const int64_t image = q / plane, s = q % plane;
        float* dst = yp + q * c;
        for (int64_t ch = 0; ch < c; ++ch) dst[ch] = xp[((image * blocks + ch / b) * plane + s) * b + ch % b];
      }
    });
  }

 private:
  int64_t block_, channels_;
  bool channels_last_;
};

class NchwcConv : public OpKernel {
 public:
  explicit NchwcConv(const ir::Node& node)
      : attrs_(WindowAttrs::FromNode(node)),
        group_(node.GetInt("group", 1)),
        act_(FusedActivation::FromNode(node)),
        block_(NchwcBlockSizeFor(node)) {
    if (group_ < 1) throw InvalidModelError(node.Describe() + ": group must be >= 1, got " + std::to_string(group_));
  }

  void Prepare(PrepareContext& ctx) const override {
    const std::string what = ctx.Describe();
    CheckNchwcTensor(ctx, 0, "X", 0);
    CheckNchwcTensor(ctx, 1, "W", 0);
    const Shape& x = ctx.input(0).shape;
    const Shape& w = ctx.input(1).shape;
    Plan p;
    if (const std::string why = NchwcConvLayoutOf(w, group_, block_, &p.layout); !why.empty()) {
      throw InvalidArgumentError(what + ": " + ctx.InputString(1) + ": " + why);
    }
    CheckNchwcConvInput(ctx, p.layout, group_, block_);
    p.cs = ResolveConv(attrs_, group_, x, w, what);
    const InputSpec& bias = ctx.input(2);
    if (bias.is_tensor() && (bias.dtype != DataType::kFloat || bias.shape != Shape{p.cs.out_channels})) {
      throw InvalidArgumentError(what + ": input B is " + ctx.InputString(2) + ", expected float32[" +
                                 std::to_string(p.cs.out_channels) + "]");
    }
    const InputSpec& sum = ctx.input(3);
    if (sum.is_tensor() && (sum.dtype != DataType::kFloat || sum.shape != p.cs.y_shape)) {
      throw InvalidArgumentError(what + ": input Sum is " + ctx.InputString(3) + ", expected Y's float32" +
                                 ShapeToString(p.cs.y_shape));
    }
    if (const Tensor* wc = ctx.constant(1)) p.plain_w = NchwcFilterToPlain(wc->data<float>(), w, p.layout, block_);
    AddConvF32Workspace(p.cs, ctx.threads(), ctx.workspace());
    ctx.SetOutput(0, DataType::kFloat, p.cs.y_shape);
    ctx.EmplaceState(std::move(p));
  }

  void Compute(KernelContext& ctx) const override {
    const Plan& p = ctx.state<Plan>();
    const ConvShape& cs = p.cs;
    const Tensor& x = ctx.required_input(0);
    const Tensor& w = ctx.required_input(1);
    const Tensor* bias = ctx.input(2);
    const Tensor* sum = ctx.input(3);
    Tensor& y = ctx.OutputUninitialized(0);  // every element written below (M is a multiple of the block)
    if (y.size() == 0) return;
    const int threads = ctx.threads();
    const int64_t batch = cs.batch, m = cs.out_channels, out_size = cs.g.out_size();
    const int64_t count = batch * m * out_size;
    std::vector<float> xs;
    const float* xp = x.data<float>();
    if (!p.layout.plain_input) {
      xs.resize(static_cast<size_t>(x.size()));
      UnblockChannels(xp, batch, cs.channels, cs.g.in_size(), block_, xs.data(), threads);
      xp = xs.data();
    }
    std::vector<float> unpacked;
    const float* wp = p.plain_w.data();
    if (p.plain_w.empty()) {
      unpacked = NchwcFilterToPlain(w.data<float>(), w.shape(), p.layout, block_);
      wp = unpacked.data();
    }
    // Y plain: the bias, += Conv, + Sum, then the activation; blocked at the end.
    std::vector<float> ys(static_cast<size_t>(count), 0.0f);
    if (bias) {
      const float* bp = bias->data<float>();
      for (int64_t n = 0; n < batch; ++n) {
        for (int64_t c = 0; c < m; ++c) std::fill_n(ys.data() + (n * m + c) * out_size, out_size, bp[c]);
      }
    }
    if (cs.channels > 0 && cs.g.in_size() > 0) ConvF32(xp, wp, cs, ys.data(), threads);
    if (sum) {
      std::vector<float> ss(static_cast<size_t>(count));
      UnblockChannels(sum->data<float>(), batch, m, out_size, block_, ss.data(), threads);
      for (int64_t i = 0; i < count; ++i) ys[static_cast<size_t>(i)] += ss[static_cast<size_t>(i)];
    }
    act_.Apply(ys.data(), count, threads);
    BlockChannels(ys.data(), batch, m, out_size, block_, y.data<float>(), threads);
  }

 private:
  struct Plan {
    NchwcConvLayout layout;
    ConvShape cs;
    std::vector<float> plain_w;  // W as ONNX's [M, C/group, kh, kw] when known before the run; else unpacked per run
  };

  WindowAttrs attrs_;
  int64_t group_;
  FusedActivation act_;
  int64_t block_;
};

enum class PoolKind { kMax, kAverage, kGlobalMax, kGlobalAverage };

PoolKind PoolKindOf(const std::string& op) {
  if (op == "MaxPool") return PoolKind::kMax;
  if (op == "AveragePool") return PoolKind::kAverage;
  if (op == "GlobalMaxPool") return PoolKind::kGlobalMax;
  return PoolKind::kGlobalAverage;
}

class NchwcPool : public OpKernel {
 public:
  explicit NchwcPool(const ir::Node& node)
      : kind_(PoolKindOf(node.op_type())),
        block_(NchwcBlockSizeFor(node)),
        attrs_(global() ? WindowAttrs{} : WindowAttrs::FromNode(node)),
        ceil_mode_(node.GetInt("ceil_mode", 0) != 0),
        count_include_pad_(node.GetInt("count_include_pad", 0) != 0) {
    if (!global() && attrs_.kernel_shape.size() != 2) {
      throw InvalidModelError(node.Describe() + ": kernel_shape must have 2 dims (a 2-D pool), got " +
                              std::to_string(attrs_.kernel_shape.size()));
    }
  }

  void Prepare(PrepareContext& ctx) const override {
    CheckNchwcTensor(ctx, 0, "X", block_);
    const Shape& x = ctx.input(0).shape;
    Plan p;
    Shape y{x[0], x[1], 1, 1};
    if (!global()) {
      p.g = ResolveWindow(attrs_, std::span<const int64_t>(x).subspan(2), attrs_.kernel_shape, ceil_mode_,
                          ctx.Describe() + ": " + ctx.InputString(0));
      y[2] = p.g.out[0];
      y[3] = p.g.out[1];
    }
    ctx.SetOutput(0, DataType::kFloat, y);
    ctx.EmplaceState(std::move(p));
  }

  void Compute(KernelContext& ctx) const override {
    const Plan& p = ctx.state<Plan>();
    const Tensor& x = ctx.required_input(0);
    Tensor& y = ctx.OutputUninitialized(0);
    if (y.size() == 0) return;
    const int64_t n = x.dim(0), c = x.dim(1), in = Plane(x.shape()), out = Plane(y.shape());
    const int threads = ctx.threads();
    std::vector<float> xs(static_cast<size_t>(x.size())), ys(static_cast<size_t>(y.size()));
    UnblockChannels(x.data<float>(), n, c, in, block_, xs.data(), threads);
    switch (kind_) {
      case PoolKind::kMax: MaxPoolF32(xs.data(), n * c, p.g, ys.data(), threads); break;
      case PoolKind::kAverage: AveragePoolF32(xs.data(), n * c, p.g, count_include_pad_, ys.data(), threads); break;
      case PoolKind::kGlobalMax: GlobalMaxPoolF32(xs.data(), n * c, in, ys.data(), threads); break;
      case PoolKind::kGlobalAverage: GlobalAveragePoolF32(xs.data(), n * c, in, ys.data(), threads); break;
    }
    BlockChannels(ys.data(), n, c, out, block_, y.data<float>(), threads);
  }

 private:
  struct Plan {
    WindowGeometry g;  // unused by the global pools
  };

  bool global() const { return kind_ == PoolKind::kGlobalMax || kind_ == PoolKind::kGlobalAverage; }

  PoolKind kind_;
  int64_t block_;
  WindowAttrs attrs_;
  bool ceil_mode_, count_include_pad_;
};

}  // namespace

// --- Upsample ---

NchwcUpsampleAttrs NchwcUpsampleAttrs::FromNode(const ir::Node& node) {
  NchwcUpsampleAttrs a;
  const std::vector<int64_t> scales = node.GetInts("scales");
  if (scales.size() != 4 || scales[0] != 1 || scales[1] != 1 || scales[2] < 1 || scales[3] < 1) {
    throw InvalidModelError(node.Describe() + ": attribute scales = " + IntsToString(scales) +
                            ", expected [1, 1, sh, sw] with sh, sw >= 1");
  }
  a.scale_h = scales[2];
  a.scale_w = scales[3];
  const std::string mode = node.GetString("mode", "nearest");
  if (mode != "nearest" && mode != "linear") {
    throw InvalidModelError(node.Describe() + ": mode '" + mode + "' is not nearest or linear");
  }
  a.linear = mode == "linear";
  const std::string ctm = node.GetString("coordinate_transformation_mode", "asymmetric");
  if (ctm == "asymmetric") {
    a.transform = Transform::kAsymmetric;
  } else if (ctm == "align_corners") {
    a.transform = Transform::kAlignCorners;
  } else if (ctm == "half_pixel") {
    a.transform = Transform::kHalfPixel;
  } else {
    throw InvalidModelError(node.Describe() + ": coordinate_transformation_mode '" + ctm +
                            "' is not asymmetric, align_corners or half_pixel");
  }
  if (!a.linear && a.transform != Transform::kAsymmetric) {
    throw InvalidModelError(node.Describe() +
                            ": mode nearest takes coordinate_transformation_mode asymmetric only, got '" + ctm + "'");
  }
  return a;
}

std::vector<float> NchwcUpsampleAttrs::Coordinates(int64_t in, int64_t out, int64_t scale) const {
  std::vector<float> s(static_cast<size_t>(out));
  for (int64_t o = 0; o < out; ++o) {
    const float fo = static_cast<float>(o);
    float v = fo;
    if (scale != 1) {
      switch (transform) {
        case Transform::kAlignCorners: v = fo * static_cast<float>(in - 1) / static_cast<float>(out - 1); break;
        case Transform::kHalfPixel: v = std::max(0.0f, (fo + 0.5f) / static_cast<float>(scale) - 0.5f); break;
        case Transform::kAsymmetric: v = fo / static_cast<float>(scale); break;
      }
    }
    s[static_cast<size_t>(o)] = v;
  }
  return s;
}

namespace {

class NchwcUpsample : public OpKernel {
 public:
  explicit NchwcUpsample(const ir::Node& node)
      : attrs_(NchwcUpsampleAttrs::FromNode(node)), block_(NchwcBlockSizeFor(node)) {}

  void Prepare(PrepareContext& ctx) const override {
    CheckNchwcTensor(ctx, 0, "X", block_);
    const Shape& x = ctx.input(0).shape;
    Shape y = x;
    if (__builtin_mul_overflow(x[2], attrs_.scale_h, &y[2]) || __builtin_mul_overflow(x[3], attrs_.scale_w, &y[3])) {
      throw InvalidArgumentError(ctx.Describe() + ": " + ctx.InputString(0) + " upsampled overflows int64");
    }
    Plan p;
    if (attrs_.linear) {
      p.ys = attrs_.Coordinates(x[2], y[2], attrs_.scale_h);
      p.xs = attrs_.Coordinates(x[3], y[3], attrs_.scale_w);
    }
    ctx.SetOutput(0, DataType::kFloat, std::move(y));
    ctx.EmplaceState(std::move(p));
  }

  void Compute(KernelContext& ctx) const override {
    const Plan& p = ctx.state<Plan>();
    const Tensor& x = ctx.required_input(0);
    Tensor& y = ctx.OutputUninitialized(0);
    if (y.size() == 0) return;
    const int64_t b = block_, in_h = x.dim(2), in_w = x.dim(3), out_h = y.dim(2), out_w = y.dim(3);
    const int64_t planes = x.dim(0) * x.dim(1) / b;  // blocked planes of in_h x in_w x b
    const float* xp = x.data<float>();
    float* yp = y.data<float>();
    const int64_t rows = planes * out_h;
    ParallelFor(ctx.threads(), rows, std::max<int64_t>(1, 4096 / std::max<int64_t>(out_w * b, 1)),
                [&](int64_t begin, int64_t end) {
                  for (int64_t r = begin; r < end; ++r) {
                    const int64_t q = r / out_h, oh = r % out_h;
                    const float* plane = xp + q * in_h * in_w * b;
                    float* row = yp + r * out_w * b;
                    if (attrs_.linear) {
                      LinearRow(plane, in_h, in_w, out_w, p.ys[static_cast<size_t>(oh)], p.xs.data(), b, row);
                    } else {
                      const float* src = plane + (oh / attrs_.scale_h) * in_w * b;
                      for (int64_t ow = 0; ow < out_w; ++ow) {
                        std::copy_n(src + (ow / attrs_.scale_w) * b, b, row + ow * b);
                      }
                    }
                  }
                });
  }

 private:
  struct Plan {
    std::vector<float> ys, xs;  // linear: the source coordinate of each output row and column
  };

  // One output row of the bilinear upsample (the formula at the top of the file).
  static void LinearRow(const float* plane, int64_t in_h, int64_t in_w, int64_t out_w, float sy, const float* sx,
                        int64_t b, float* row) {
    const int64_t y0 = static_cast<int64_t>(sy), y1 = std::min(y0 + 1, in_h - 1);
    const float fy = sy - static_cast<float>(y0), gy = 1.0f - fy;
    const float* r0 = plane + y0 * in_w * b;
    const float* r1 = plane + y1 * in_w * b;
    for (int64_t ow = 0; ow < out_w; ++ow) {
      const float s = sx[ow];
      const int64_t x0 = static_cast<int64_t>(s), x1 = std::min(x0 + 1, in_w - 1);
      const float fx = s - static_cast<float>(x0), gx = 1.0f - fx;
      const float w00 = gy * gx, w01 = gy * fx, w10 = fy * gx, w11 = fy * fx;
      const float* a = r0 + x0 * b;
      const float* c = r0 + x1 * b;
      const float* d = r1 + x0 * b;
      const float* e = r1 + x1 * b;
      float* out = row + ow * b;
      for (int64_t l = 0; l < b; ++l) out[l] = (w00 * a[l] + w01 * c[l]) + (w10 * d[l] + w11 * e[l]);
    }
  }

  NchwcUpsampleAttrs attrs_;
  int64_t block_;
};

}  // namespace

void CheckNchwcChannels(const PrepareContext& ctx, int64_t padded, int64_t channels, int64_t block) {
  if (channels > padded || padded - channels >= block) {
    throw InvalidArgumentError(ctx.Describe() + ": input X (" + ctx.InputString(0) + ") has " + std::to_string(padded) +
                               " channels, expected " + std::to_string(channels) + " rounded up to the NCHWc block " +
                               std::to_string(block) + " (" + std::to_string(NchwcPadded(channels, block)) + ")");
  }
}

void CheckNchwcConvInput(const PrepareContext& ctx, const NchwcConvLayout& l, int64_t group, int64_t block) {
  const Shape& x = ctx.input(0).shape;
  const Shape& w = ctx.input(1).shape;
  const int64_t c = w[1] * group;
  if (l.plain_input ? x[1] != c : (x[1] != c || x[1] % block != 0)) {
    throw InvalidArgumentError(
        ctx.Describe() + ": input X (" + ctx.InputString(0) + ") has " + std::to_string(x[1]) +
        " channels, expected W[1] * group = " + std::to_string(c) +
        (l.plain_input ? " (a plain NCHW X, fewer channels than the NCHWc block " + std::to_string(block) + ")"
                       : std::string(" (blocked by ") + std::to_string(block) + ")") +
        " for " + ctx.InputString(1));
  }
}

void RegisterNchwcUpsampleKernels(KernelRegistry& r) {
  r.Add({.op = "Upsample",
         .domain = std::string(schemas::kMsNchwcDomain),
         .since = 1,
         .types = {{"T", {DataType::kFloat}}},
         .create = MakeKernel<NchwcUpsample>,
         .constraints = "float32; 2-D; integer scales; nearest (asymmetric) or linear"});
}

void RegisterNchwcKernels(KernelRegistry& r) {
  const std::string d(schemas::kMsNchwcDomain);
  const std::vector<TypeConstraintDef> t = {{"T", {DataType::kFloat}}};
  r.Add({.op = "ReorderInput", .domain = d, .since = 1, .types = t, .create = MakeKernel<NchwcReorderInput>});
  r.Add({.op = "ReorderOutput", .domain = d, .since = 1, .types = t, .create = MakeKernel<NchwcReorderOutput>});
  r.Add({.op = "Conv", .domain = d, .since = 1, .types = t, .create = MakeKernel<NchwcConv>});
  for (const char* op : {"MaxPool", "AveragePool", "GlobalMaxPool", "GlobalAveragePool"}) {
    r.Add({.op = op, .domain = d, .since = 1, .types = t, .create = MakeKernel<NchwcPool>});
  }
  RegisterNchwcUpsampleKernels(r);
}

}  // namespace ferry::ref
