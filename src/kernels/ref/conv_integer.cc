// ConvInteger: int32 convolution of (x - x_zero_point) with (w - w_zero_point), w_zero_point per tensor or per
// output channel. Also defines ConvInt32, the integer im2col + GEMM shared with QLinearConv.
#include <string>
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

// Checks a zero point's size n: one value, or (when per_channel_size > 0) one value per output channel.
void CheckZeroPoint(int64_t n, int64_t per_channel_size, const char* name, const std::string& what) {
  if (n == 1 || (per_channel_size > 0 && n == per_channel_size)) return;
  throw InvalidArgumentError(what + ": " + name + " has " + std::to_string(n) + " values, expected 1" +
                             (per_channel_size > 0 ? " or " + std::to_string(per_channel_size) : std::string()));
}

// A zero point's values (int8, uint8 or int32: Prepare checked), {0} when absent.
std::vector<int32_t> ZeroPoints(const Tensor* t) {
  if (!t) return {0};
  std::vector<int32_t> out(static_cast<size_t>(t->size()));
  for (int64_t i = 0; i < t->size(); ++i) {
    switch (t->dtype()) {
      case DataType::kInt8: out[static_cast<size_t>(i)] = t->data<int8_t>()[i]; break;
      case DataType::kUint8: out[static_cast<size_t>(i)] = t->data<uint8_t>()[i]; break;
      default: out[static_cast<size_t>(i)] = t->data<int32_t>()[i]; break;
    }
  }
  return out;
}

// An int8 or uint8 tensor (Prepare checked) widened to int32.
std::vector<int32_t> Widen(const Tensor& t) {
  std::vector<int32_t> out(static_cast<size_t>(t.size()));
  if (t.dtype() == DataType::kInt8) {
    for (int64_t i = 0; i < t.size(); ++i) out[static_cast<size_t>(i)] = t.data<int8_t>()[i];
  } else {
    for (int64_t i = 0; i < t.size(); ++i) out[static_cast<size_t>(i)] = t.data<uint8_t>()[i];
  }
  return out;
}

class ConvInteger : public OpKernel {
 public:
  explicit ConvInteger(const ir::Node& node)
      : attrs_(WindowAttrs::FromNode(node)), group_(node.GetInt("group", 1)) {}

  // The geometry, the zero points' types and sizes, and X's and W's types.
  void Prepare(PrepareContext& ctx) const override {
    const std::string what = ctx.Describe();
    const InputSpec& x = ctx.tensor_input(0);
    const InputSpec& w = ctx.tensor_input(1);
    const ConvShape& s = ctx.EmplaceState(ResolveConv(attrs_, group_, x.shape, w.shape, what));
    for (int i : {2, 3}) {
      if (!ctx.has_input(i)) continue;
      const InputSpec& zp = ctx.tensor_input(i);
      const char* name = i == 2 ? "x_zero_point" : "w_zero_point";
      if (zp.dtype != DataType::kInt8 && zp.dtype != DataType::kUint8 && zp.dtype != DataType::kInt32) {
        throw UnsupportedError(what + " " + name + ": zero point of type " + std::string(DataTypeName(zp.dtype)) +
                               " is not supported");
      }
    }
    const int64_t x_zp = ctx.has_input(2) ? ShapeElementCount(ctx.input(2).shape) : 1;
    const int64_t w_zp = ctx.has_input(3) ? ShapeElementCount(ctx.input(3).shape) : 1;
    CheckZeroPoint(x_zp, 0, "x_zero_point", what);
    CheckZeroPoint(w_zp, s.out_channels, "w_zero_point", what);
    for (const InputSpec* t : {&x, &w}) {
      if (t->dtype != DataType::kInt8 && t->dtype != DataType::kUint8) {
        throw UnsupportedError(what + ": data type " + std::string(DataTypeName(t->dtype)) +
                               " is not supported (int8 or uint8 expected)");
      }
    }
    ctx.SetOutput(0, DataType::kInt32, s.y_shape);
  }

  void Compute(KernelContext& ctx) const override {
    const Tensor& x = ctx.required_input(0);
    const Tensor& w = ctx.required_input(1);
    const ConvShape& s = ctx.state<ConvShape>();
    const std::vector<int32_t> xzp = ZeroPoints(ctx.input(2));
    const std::vector<int32_t> wzp = ZeroPoints(ctx.input(3));
    std::vector<int32_t> xs = Widen(x);
    std::vector<int32_t> ws = Widen(w);
    for (int32_t& v : xs) v -= xzp[0];
    const int64_t per_m = s.out_channels ? w.size() / s.out_channels : 0;
    for (int64_t i = 0; i < w.size(); ++i) ws[static_cast<size_t>(i)] -= PerIndex(wzp, i / per_m);
    Tensor& y = ctx.Output(0);
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
