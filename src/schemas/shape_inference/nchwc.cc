// Shape inference for ONNX Runtime's NCHWc domain, com.microsoft.nchwc (schemas_com_microsoft_nchwc.cc), as its
// kernels (kernels/ref/nchwc.cc) shape their outputs. Every tensor is 4-D [N, C, H, W]; a blocked one has C padded
// to a multiple of the block b (semantics/nchwc_block.h: the machine's, or FERRY_NCHWC_BLOCK):
//   ReorderInput        [N, Cp, H, W], Cp = C rounded up to b (channels_last = 1: X is [N, H, W, C]); Cp is
//                       unknown when C is, or when FERRY_NCHWC_BLOCK is invalid (the kernel names that problem)
//   ReorderOutput       [N, channels, H, W] (channels_last = 1: [N, H, W, channels]); channels must be > 0
//   Conv                ONNX Conv's rule (X [N, C, H, W], W [M, C/group, kh, kw] -> [N, M, oh, ow]), X's C = W[1] *
//                       group checked first with the kernel's message; B [M] and Sum (Y's shape) checked against Y
//   MaxPool, AveragePool  ONNX's pool rule over the spatial dims, C kept
//   GlobalMaxPool, GlobalAveragePool  [N, C, 1, 1]
//   Upsample            [N, C, H * sh, W * sw] for scales [1, 1, sh, sw] (sh, sw >= 1)
// Only ReorderInput depends on the block; whether a blocked input's C is a multiple of it is left to the kernels,
// whose messages say how to run a file written for another block. What the inputs do not fix stays unknown.
#include <cstdint>
#include <string>
#include <vector>

#include "ferry/error.h"
#include "schemas/op_origin.h"
#include "schemas/schema.h"
#include "schemas/shape_inference/context.h"
#include "schemas/shape_inference/shape_inference.h"
#include "semantics/nchwc_block.h"

namespace ferry::schemas {
namespace {

// The ONNX rules these ops reuse (nn.cc), looked up once when the inference functions are registered.
InferenceFn onnx_conv = nullptr;
InferenceFn onnx_max_pool = nullptr;
InferenceFn onnx_average_pool = nullptr;

std::string IntsString(const std::vector<int64_t>& v) {
  std::string s = "[";
  for (size_t i = 0; i < v.size(); ++i) s += (i ? "," : "") + std::to_string(v[i]);
  return s + "]";
}

// For a channel count that contradicts W: blocked tensors have their channels padded to the block of the machine
// that wrote the file, so a file written for another block fails here.
std::string BlockHint() {
  try {
    return " (blocked tensors have their channels padded to the NCHWc block, here " +
           std::to_string(semantics::NchwcBlockSize()) +
           ": FERRY_NCHWC_BLOCK=8 or 16 sets it for a model written on another machine)";
  } catch (const InvalidArgumentError& e) {
    return std::string(" (") + e.what() + ")";
  }
}

// Input i's dims when known; Fails when its rank is known and not 4.
const Dims* Input4D(InferenceContext& ctx, size_t i, const char* name) {
  const Dims* d = ctx.has_input(i) ? ctx.input_shape(i) : nullptr;
  if (d && d->size() != 4) {
    ctx.Fail(std::string("input ") + name + " " + ctx.InputString(i) +
             " must be 4-D (ONNX Runtime's NCHWc ops are 2-D)");
  }
  return d;
}

void ReorderInput(InferenceContext& ctx) {
  const Dims* x = Input4D(ctx, 0, "X");
  if (!x) return;
  const bool channels_last = ctx.attr_int("channels_last", 0) != 0;
  const ir::Dim& c = channels_last ? (*x)[3] : (*x)[1];
  ir::Dim cp = UnknownDim();
  if (c.is_static()) {
    try {
      const int64_t b = semantics::NchwcBlockSize();
      if (const auto padded = CheckedAdd(c.value, b - 1)) cp = ir::Dim::Static(*padded / b * b);
    } catch (const InvalidArgumentError&) {
      // A bad FERRY_NCHWC_BLOCK: the kernel refuses the node, naming it.
    }
  }
  ctx.SetOutputShape(0, channels_last ? Dims{(*x)[0], cp, (*x)[1], (*x)[2]} : Dims{(*x)[0], cp, (*x)[2], (*x)[3]});
}

void ReorderOutput(InferenceContext& ctx) {
  const int64_t channels = ctx.attr_int("channels", 0);
  if (channels <= 0) {
    ctx.Fail("attribute channels = " + std::to_string(channels) + ", expected > 0 (the logical channel count)");
  }
  const Dims* x = Input4D(ctx, 0, "X");
  if (!x) return;
  const ir::Dim c = ir::Dim::Static(channels);
  ctx.SetOutputShape(0, ctx.attr_int("channels_last", 0) != 0 ? Dims{(*x)[0], (*x)[2], (*x)[3], c}
                                                              : Dims{(*x)[0], c, (*x)[2], (*x)[3]});
}

// Y's dims merged with Sum's (the transformer's fused residual Add has Y's shape); Fails on a static conflict.
void MergeSum(InferenceContext& ctx) {
  const Dims* sum = Input4D(ctx, 3, "Sum");
  if (!sum) return;
  const ir::TypeInfo& y = ctx.output(0);
  Dims merged = *sum;
  if (const Dims* known = y.is_tensor() && y.shape && y.shape->size() == 4 ? &*y.shape : nullptr) {
    for (size_t d = 0; d < 4; ++d) {
      bool conflict = false;
      merged[d] = MergeDim((*known)[d], (*sum)[d], &conflict);
      if (conflict) {
        ctx.Fail("input Sum " + ctx.InputString(3) + " does not have Y's shape " + DimsToString(*known));
      }
    }
  }
  ctx.SetOutputShape(0, std::move(merged));
}

void Conv(InferenceContext& ctx) {
  const Dims* x = Input4D(ctx, 0, "X");
  const Dims* w = Input4D(ctx, 1, "W");
  const int64_t group = ctx.attr_int("group", 1);
  if (group < 1) ctx.Fail("attribute group = " + std::to_string(group) + " must be >= 1");
  if (x && w && (*x)[1].is_static() && (*w)[1].is_static()) {
    const auto c = CheckedMul((*w)[1].value, group);
    if (!c || *c != (*x)[1].value) {
      ctx.Fail("input X " + ctx.InputString(0) + " has " + std::to_string((*x)[1].value) +
               " channels, expected W[1] * group = " + (c ? std::to_string(*c) : std::string("(overflow)")) + " for " +
               ctx.InputString(1) + " with group " + std::to_string(group) + BlockHint());
    }
  }
  if (ctx.has_input(2)) {
    const Dims* bias = ctx.input_shape(2);
    if (bias && (bias->size() != 1 ||
                 (w && (*w)[0].is_static() && (*bias)[0].is_static() && (*bias)[0].value != (*w)[0].value))) {
      ctx.Fail("input B " + ctx.InputString(2) + " must be 1-D [M] with M = W[0] (W " + ctx.InputString(1) + ")");
    }
  }
  onnx_conv(ctx);
  if (ctx.has_input(3)) MergeSum(ctx);
}

template <InferenceFn* kOnnx>
void Pool(InferenceContext& ctx) {
  Input4D(ctx, 0, "X");
  (*kOnnx)(ctx);
}

void GlobalPool(InferenceContext& ctx) {
  const Dims* x = Input4D(ctx, 0, "X");
  if (x) ctx.SetOutputShape(0, {(*x)[0], (*x)[1], ir::Dim::Static(1), ir::Dim::Static(1)});
}

void Upsample(InferenceContext& ctx) {
  const std::vector<int64_t> scales = ctx.attr_ints("scales");
  if (scales.size() != 4 || scales[0] != 1 || scales[1] != 1 || scales[2] < 1 || scales[3] < 1) {
    ctx.Fail("attribute scales = " + IntsString(scales) + ", expected [1, 1, sh, sw] with sh, sw >= 1");
  }
  const Dims* x = Input4D(ctx, 0, "X");
  if (x) ctx.SetOutputShape(0, {(*x)[0], (*x)[1], MulDim((*x)[2], scales[2]), MulDim((*x)[3], scales[3])});
}

InferenceFn OnnxRule(const SchemaRegistry& r, const char* op) {
  const OpSchema* s = r.Find("", op, 11);
  if (!s || !s->infer) throw InternalError(std::string("nchwc shape inference: no ONNX rule for ") + op);
  return s->infer;
}

}  // namespace

void RegisterNchwcShapeInference(SchemaRegistry& r) {
  onnx_conv = OnnxRule(r, "Conv");
  onnx_max_pool = OnnxRule(r, "MaxPool");
  onnx_average_pool = OnnxRule(r, "AveragePool");
  const std::string d(kMsNchwcDomain);
  r.SetInference(d, "ReorderInput", 1, ReorderInput);
  r.SetInference(d, "ReorderOutput", 1, ReorderOutput);
  r.SetInference(d, "Conv", 1, Conv);
  r.SetInference(d, "MaxPool", 1, Pool<&onnx_max_pool>);
  r.SetInference(d, "AveragePool", 1, Pool<&onnx_average_pool>);
  r.SetInference(d, "GlobalMaxPool", 1, GlobalPool);
  r.SetInference(d, "GlobalAveragePool", 1, GlobalPool);
  r.SetInference(d, "Upsample", 1, Upsample);
}

}  // namespace ferry::schemas
