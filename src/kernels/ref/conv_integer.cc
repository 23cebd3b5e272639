// ConvInteger: int32 convolution of (x - x_zero_point) with (w - w_zero_point), w_zero_point per tensor or per
// output channel. Also defines ConvInt32, the integer im2col + GEMM shared with QLinearConv.
#include <vector>

#include "kernels/kernel_def.h"
#include "kernels/ref/common.h"
#include "kernels/ref/conv_util.h"
#include "kernels/ref/gemm.h"
#include "kernels/ref/quant_util.h"
#include "kernels/registry.h"

namespace ferry::ref {

void ConvInt32(const int32_t* x, const int32_t* w, const ConvShape& s, int32_t* y, int threads) {
  const WindowGeometry& g = s.g;
  const int64_t cg = s.channels / s.group, mg = s.out_channels / s.group;
  const int64_t kdim = cg * g.kernel_size();
  const int64_t in_size = g.in_size(), out_size = g.out_size();
  std::vector<int32_t> col(static_cast<size_t>(kdim * out_size));
  for (int64_t n = 0; n < s.batch; ++n) {
    for (int64_t grp = 0; grp < s.group; ++grp) {
      const int32_t* xg = x + (n * s.channels + grp * cg) * in_size;
      const int32_t* wg = w + grp * mg * kdim;
      int32_t* yg = y + (n * s.out_channels + grp * mg) * out_size;
      Im2Col(xg, cg, g, col.data(), threads);
      // Rows of the output are independent: split them over the threads.
      ParallelFor(mg * kdim * out_size < (1 << 16) ? 1 : threads, mg, 1, [&](int64_t begin, int64_t end) {
        GemmSimple(false, false, end - begin, out_size, kdim, wg + begin * kdim, kdim, col.data(), out_size, true,
                   yg + begin * out_size, out_size);
      });
    }
  }
}

namespace {

// Checks a zero point: one value, or (when per_channel_size > 0) one value per output channel.
void CheckZeroPoint(const std::vector<int32_t>& zp, int64_t per_channel_size, const char* name,
                    const std::string& what) {
  const int64_t n = static_cast<int64_t>(zp.size());
  if (n == 1 || (per_channel_size > 0 && n == per_channel_size)) return;
  throw InvalidArgumentError(what + ": " + name + " has " + std::to_string(n) + " values, expected 1" +
                             (per_channel_size > 0 ? " or " + std::to_string(per_channel_size) : std::string()));
}

class ConvInteger : public OpKernel {
 public:
  explicit ConvInteger(const ir::Node& node)
      : attrs_(WindowAttrs::FromNode(node)), group_(node.GetInt("group", 1)) {}

  void Compute(KernelContext& ctx) const override {
    const std::string what = ctx.Describe();
    const Tensor& x = ctx.required_input(0);
    const Tensor& w = ctx.required_input(1);
    const ConvShape s = ResolveConv(attrs_, group_, x.shape(), w.shape(), what);
    const std::vector<int32_t> xzp = ReadZeroPoints(ctx.input(2), what + " x_zero_point");
    const std::vector<int32_t> wzp = ReadZeroPoints(ctx.input(3), what + " w_zero_point");
    CheckZeroPoint(xzp, 0, "x_zero_point", what);
    CheckZeroPoint(wzp, s.out_channels, "w_zero_point", what);
    std::vector<int32_t> xs = WidenInt8(x, what);
    std::vector<int32_t> ws = WidenInt8(w, what);
    for (int32_t& v : xs) v -= xzp[0];
    const int64_t per_m = s.out_channels ? w.size() / s.out_channels : 0;
    for (int64_t i = 0; i < w.size(); ++i) ws[static_cast<size_t>(i)] -= PerIndex(wzp, i / per_m);
    Tensor& y = ctx.Output(0, DataType::kInt32, s.y_shape);
    if (y.size() == 0) return;
    ConvInt32(xs.data(), ws.data(), s, y.data<int32_t>(), ctx.threads());
  }

 private:
  WindowAttrs attrs_;
  int64_t group_;
};

}  // namespace

void RegisterConvIntegerKernels(KernelRegistry& r) {
  r.Add({.op = "ConvInteger",
         .since = 10,
         .types = {{"T1", {DataType::kInt8, DataType::kUint8}},
                   {"T2", {DataType::kInt8, DataType::kUint8}},
                   {"T3", {DataType::kInt32}}},
         .create = MakeKernel<ConvInteger>});
}

}  // namespace ferry::ref
