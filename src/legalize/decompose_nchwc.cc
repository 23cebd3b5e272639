// ONNX Runtime's NCHWc ops (com.microsoft.nchwc, group "nchwc-decompositions"; kernels/nchwc_layout.h has the
// layouts) into ONNX primitives, so that an ORT-written file runs on backends without the nchwc kernels. The block
// b is the one the kernels would use (semantics/nchwc_block.h: the machine's, or FERRY_NCHWC_BLOCK), read when the
// rule is built. A blocked tensor [N, Cp, H, W] (Cp a multiple of b) holds the data of [N, Cp/b, H, W, b], so:
//   unblock(x)  = Reshape [N, Cp/b, H*W, b], Transpose [0, 1, 3, 2], Reshape [N, Cp, H, W]   (plain NCHW)
//   block(p)    = Reshape [N, Cp/b, b, H*W], Transpose [0, 1, 3, 2], Reshape [N, Cp, H, W]   (its inverse)
// with the dims as constants when the shapes are static, else 0 / -1 and a Shape of the value (only Cp must be
// static). The rules:
//   ReorderInput(X)    (channels_last: Transpose [0, 3, 1, 2]), Pad the channels with zeros to Cp, block
//   ReorderOutput(X)   unblock, Slice the channels [0, channels) (channels_last: then Transpose [0, 2, 3, 1])
//   Conv(X, W, B, Sum) unblock X (unless X is plain NCHW: ungrouped with C < b), ONNX Conv with W unblocked into a
//                      new initializer (W must be constant), Add unblock(Sum), the fused activation
//                      (BuildFusedActivation, the table the kernels read), block
//   MaxPool, AveragePool  unblock, the ONNX pool with the node's window attributes, block
//   GlobalMaxPool, GlobalAveragePool  unblock, the ONNX pool ([N, Cp, 1, 1]: blocked and plain are the same data)
//   Upsample(X)        unblock, Resize by scales [1, 1, sh, sw] (nearest: asymmetric, nearest_mode floor, i.e.
//                      X[o / s]; linear: the node's coordinate_transformation_mode), block
#include <string>
#include <vector>

#include "kernels/nchwc_layout.h"
#include "kernels/ref/nchwc.h"
#include "legalize/decompose_util.h"
#include "schemas/op_origin.h"
#include "semantics/nchwc_block.h"

namespace ferry::legalize {
namespace {

std::string Qualified(const ir::Node& n) { return std::string(schemas::kMsNchwcDomain) + "::" + n.op_type(); }

// The block, or why it is not known (a bad FERRY_NCHWC_BLOCK).
std::string BlockOrWhy(const ir::Node& n, int64_t* block) {
  try {
    *block = semantics::NchwcBlockSize();
    return "";
  } catch (const Error& e) {
    return Qualified(n) + ": " + e.what();
  }
}

// The checks every rule makes: X float32 and 4-D, ai.onnx opset >= 5 (Reshape's shape input).
std::string RefuseCommon(const ir::Node& n, int64_t opset) {
  if (ElementType(n.input(0)) != DataType::kFloat) return Qualified(n) + ": X's element type is unknown or not float";
  if (RankOrMinusOne(n.input(0)) != 4) return Qualified(n) + ": X's rank is unknown or not 4";
  if (opset < 5) {
    return Qualified(n) + ": Reshape's shape input needs ai.onnx opset 5, the model has " + std::to_string(opset);
  }
  return "";
}

// A blocked input's channel count: static and a multiple of the block, else why not.
std::string BlockedChannels(const ir::Node& n, size_t i, const char* name, int64_t block, int64_t* c) {
  *c = DimOrMinusOne(n.input(i), 1);
  if (*c < 0) return Qualified(n) + ": " + name + "'s channel count (dim 1) is unknown";
  if (*c % block != 0) {
    return Qualified(n) + ": " + name + " has " + std::to_string(*c) + " channels, not a multiple of the NCHWc block " +
           std::to_string(block);
  }
  return "";
}

// The shape of `like` as an int64 tensor when it is static, else Shape(v) (v has the same shape).
ir::Value* ShapeOf(Builder& b, const ir::Value* like, ir::Value* v) {
  if (const std::optional<Shape> s = ir::KnownStaticShape(like)) return b.Int64s(*s);
  return b.Op("Shape", {v}, {}, DataType::kInt64);
}

// The first Reshape of block / unblock: [N, cp/b, x, y] with x y = H*W, b (unblock) or b, H*W (block).
std::vector<int64_t> SplitChannels(const ir::Value* like, int64_t cp, int64_t block, bool unblock) {
  const std::optional<Shape> s = ir::KnownStaticShape(like);
  const int64_t n = s ? (*s)[0] : 0, plane = s ? (*s)[2] * (*s)[3] : -1;
  return unblock ? std::vector<int64_t>{n, cp / block, plane, block}
                 : std::vector<int64_t>{n, cp / block, block, plane};
}

// Blocked x [N, cp, H, W] -> plain NCHW.
ir::Value* Unblock(Builder& b, ir::Value* x, int64_t cp, int64_t block) {
  ir::Value* t = b.Transpose(b.Reshape(x, SplitChannels(x, cp, block, true)), {0, 1, 3, 2});
  return b.Op("Reshape", {t, ShapeOf(b, x, x)});
}

// Plain p [N, cp, H, W] -> blocked; `like` is a value of p's shape whose type may know it (p's may not).
ir::Value* BlockOf(Builder& b, ir::Value* p, const ir::Value* like, int64_t cp, int64_t block) {
  ir::Value* t = b.Transpose(b.Reshape(p, SplitChannels(like, cp, block, false)), {0, 1, 3, 2});
  return b.Op("Reshape", {t, ShapeOf(b, like, p)});
}

// ---- ReorderInput, ReorderOutput ----

std::string RefuseReorderInput(const ir::Node& n, int64_t opset) {
  if (std::string why = RefuseCommon(n, opset); !why.empty()) return why;
  int64_t block = 0;
  if (std::string why = BlockOrWhy(n, &block); !why.empty()) return why;
  if (DimOrMinusOne(n.input(0), n.GetInt("channels_last", 0) != 0 ? 3 : 1) < 0) {
    return Qualified(n) + ": X's channel count is unknown";
  }
  return "";
}

void BuildReorderInput(Builder& b) {
  const ir::Node& n = b.node();
  const int64_t block = semantics::NchwcBlockSize();
  const bool channels_last = n.GetInt("channels_last", 0) != 0;
  const int64_t c = DimOrMinusOne(n.input(0), channels_last ? 3 : 1), cp = NchwcPadded(c, block);
  ir::Value* x = channels_last ? b.Transpose(b.input(0), {0, 3, 1, 2}) : b.input(0);
  if (cp != c) {
    std::vector<int64_t> pads(8, 0);
    pads[5] = cp - c;  // the end of axis 1
    x = b.opset() >= 11 ? b.Op("Pad", {x, b.Int64s(pads)}) : b.Op("Pad", {x}, {IntsAttr("pads", pads)});
  }
  b.SetOutput(0, BlockOf(b, x, n.output(0), cp, block));
}

std::string RefuseReorderOutput(const ir::Node& n, int64_t opset) {
  if (std::string why = RefuseCommon(n, opset); !why.empty()) return why;
  int64_t block = 0;
  if (std::string why = BlockOrWhy(n, &block); !why.empty()) return why;
  const int64_t channels = n.GetInt("channels", 0);
  if (channels <= 0) return Qualified(n) + ": channels = " + std::to_string(channels) + ", expected > 0";
  const int64_t c = DimOrMinusOne(n.input(0), 1);
  if (c >= 0 && c != NchwcPadded(channels, block)) {
    return Qualified(n) + ": X has " + std::to_string(c) + " channels, expected " + std::to_string(channels) +
           " rounded up to the NCHWc block " + std::to_string(block);
  }
  return "";
}

void BuildReorderOutput(Builder& b) {
  const ir::Node& n = b.node();
  const int64_t block = semantics::NchwcBlockSize();
  const int64_t channels = n.GetInt("channels", 0), cp = NchwcPadded(channels, block);
  ir::Value* y = Unblock(b, b.input(0), cp, block);
  if (channels != cp) y = b.Slice(y, 0, channels, 1);
  if (n.GetInt("channels_last", 0) != 0) y = b.Transpose(y, {0, 2, 3, 1});
  b.SetOutput(0, y);
}

// ---- Conv ----

// W's tensor when it is a constant float32 [M, I, kh, kw], else nullptr.
const Tensor* ConstantFilter(const ir::Node& n) {
  const ir::Value* w = n.input(1);
  if (!w || !w->owner()) return nullptr;
  const Tensor* t = ir::ConstantTensor(*w->owner(), w);
  return t && t->dtype() == DataType::kFloat && t->shape().size() == 4 ? t : nullptr;
}

std::string RefuseConv(const ir::Node& n, int64_t opset) {
  if (std::string why = RefuseCommon(n, opset); !why.empty()) return why;
  int64_t block = 0;
  if (std::string why = BlockOrWhy(n, &block); !why.empty()) return why;
  const Tensor* w = ConstantFilter(n);
  if (!w) return Qualified(n) + ": W is not a constant float32 4-D tensor (its blocked layout is unpacked when built)";
  const int64_t group = n.GetInt("group", 1);
  NchwcConvLayout layout;
  if (std::string why = NchwcConvLayoutOf(w->shape(), group, block, &layout); !why.empty()) {
    return Qualified(n) + ": W has shape " + ShapeToString(w->shape()) + ": " + why;
  }
  const int64_t c = DimOrMinusOne(n.input(0), 1);
  if (c >= 0 && c != w->shape()[1] * group) {
    return Qualified(n) + ": X has " + std::to_string(c) +
           " channels, expected W[1] * group = " + std::to_string(w->shape()[1] * group);
  }
  if (n.input(3) && RankOrMinusOne(n.input(3)) != 4) return Qualified(n) + ": Sum's rank is unknown or not 4";
  return RefuseFusedActivation(n, opset);
}

void BuildConv(Builder& b) {
  const ir::Node& n = b.node();
  const int64_t block = semantics::NchwcBlockSize();
  const Tensor& w = *ConstantFilter(n);
  const int64_t group = n.GetInt("group", 1), m = w.shape()[0], c = w.shape()[1] * group;
  NchwcConvLayout layout;
  NchwcConvLayoutOf(w.shape(), group, block, &layout);
  ir::Value* x = layout.plain_input ? b.input(0) : Unblock(b, b.input(0), c, block);
  ir::Value* plain_w = b.AddInitializer(
      b.prefix() + "W", Tensor::FromVector(DataType::kFloat, w.shape(),
                                           ref::NchwcFilterToPlain(w.data<float>(), w.shape(), layout, block)));
  std::vector<ir::Attribute> attrs;
  for (const ir::Attribute& a : n.attributes()) {
    if (a.name != "activation" && a.name != "activation_params") attrs.push_back(a);
  }
  std::vector<ir::Value*> in = {x, plain_w};
  if (b.input(2)) in.push_back(b.input(2));
  ir::Value* y = b.Op("Conv", std::move(in), std::move(attrs));
  if (b.input(3)) y = b.Add(y, Unblock(b, b.input(3), m, block));
  b.SetOutput(0, BlockOf(b, BuildFusedActivation(b, y), n.output(0), m, block));
}

// ---- the pools ----

bool IsGlobal(const ir::Node& n) { return n.op_type() == "GlobalMaxPool" || n.op_type() == "GlobalAveragePool"; }

bool AllOnes(const std::vector<int64_t>& v) {
  for (int64_t x : v) {
    if (x != 1) return false;
  }
  return true;
}

std::string RefusePool(const ir::Node& n, int64_t opset) {
  if (std::string why = RefuseCommon(n, opset); !why.empty()) return why;
  int64_t block = 0, c = 0;
  if (std::string why = BlockOrWhy(n, &block); !why.empty()) return why;
  if (std::string why = BlockedChannels(n, 0, "X", block, &c); !why.empty()) return why;
  if (IsGlobal(n)) return "";
  const bool max = n.op_type() == "MaxPool";
  if (n.GetInt("ceil_mode", 0) != 0 && opset < 10) {
    return Qualified(n) + ": ceil_mode needs ai.onnx opset 10, the model has " + std::to_string(opset);
  }
  const std::vector<int64_t> dilations = n.GetInts("dilations");
  if (!AllOnes(dilations) && opset < (max ? 10 : 19)) {
    return Qualified(n) + ": dilations need ai.onnx opset " + (max ? "10" : "19") + ", the model has " +
           std::to_string(opset);
  }
  if (!max && n.GetInt("count_include_pad", 0) != 0 && opset < 7) {
    return Qualified(n) + ": count_include_pad needs ai.onnx opset 7, the model has " + std::to_string(opset);
  }
  return "";
}

void BuildPool(Builder& b) {
  const ir::Node& n = b.node();
  const int64_t block = semantics::NchwcBlockSize(), c = DimOrMinusOne(n.input(0), 1);
  ir::Value* x = Unblock(b, b.input(0), c, block);
  if (IsGlobal(n)) {
    b.SetOutput(0, b.Op(n.op_type(), {x}));  // [N, C, 1, 1]: the blocked layout is the plain one
    return;
  }
  const bool max = n.op_type() == "MaxPool";
  // The window attributes; ceil_mode, dilations and count_include_pad only when not their defaults (0, 1, 0), so
  // that an opset without them takes the node (RefusePool checked the others). storage_order concerns Indices only.
  std::vector<ir::Attribute> attrs;
  for (const ir::Attribute& a : n.attributes()) {
    const bool window = a.name == "auto_pad" || a.name == "kernel_shape" || a.name == "pads" || a.name == "strides";
    const bool set = (a.name == "ceil_mode" && a.i != 0) || (a.name == "dilations" && !AllOnes(a.ints)) ||
                     (!max && a.name == "count_include_pad" && a.i != 0);
    if (window || set) attrs.push_back(a);
  }
  b.SetOutput(0, BlockOf(b, b.Op(n.op_type(), {x}, std::move(attrs)), n.output(0), c, block));
}

// ---- Upsample ----

std::string RefuseUpsample(const ir::Node& n, int64_t opset) {
  if (std::string why = RefuseCommon(n, opset); !why.empty()) return why;
  int64_t block = 0, c = 0;
  if (std::string why = BlockOrWhy(n, &block); !why.empty()) return why;
  if (std::string why = BlockedChannels(n, 0, "X", block, &c); !why.empty()) return why;
  try {
    ref::NchwcUpsampleAttrs::FromNode(n);
  } catch (const Error& e) {
    return Qualified(n) + ": " + e.what();
  }
  if (opset < 11) {
    return Qualified(n) + ": Resize's coordinate_transformation_mode needs ai.onnx opset 11, the model has " +
           std::to_string(opset);
  }
  return "";
}

void BuildUpsample(Builder& b) {
  const ir::Node& n = b.node();
  const int64_t block = semantics::NchwcBlockSize(), c = DimOrMinusOne(n.input(0), 1);
  const std::vector<int64_t> s = n.GetInts("scales");
  const bool linear = n.GetString("mode", "nearest") == "linear";
  ir::Value* x = Unblock(b, b.input(0), c, block);
  ir::Value* roi = b.opset() >= 13 ? nullptr : b.AddFloats(b.prefix() + "roi", {});
  ir::Value* scales = b.AddFloats(b.prefix() + "scales",
                                  {1.0f, 1.0f, static_cast<float>(s[2]), static_cast<float>(s[3])});
  std::vector<ir::Attribute> attrs = {StringAttr("mode", linear ? "linear" : "nearest")};
  if (linear) {
    attrs.push_back(
        StringAttr("coordinate_transformation_mode", n.GetString("coordinate_transformation_mode", "asymmetric")));
  } else {
    attrs.push_back(StringAttr("coordinate_transformation_mode", "asymmetric"));
    attrs.push_back(StringAttr("nearest_mode", "floor"));
  }
  ir::Value* y = b.Op("Resize", {x, roi, scales}, std::move(attrs));
  b.SetOutput(0, BlockOf(b, y, n.output(0), c, block));
}

}  // namespace

void AddNchwcDecompositions(std::vector<Decomposition>& list) {
  const std::string d(schemas::kMsNchwcDomain), q = d + "::";
  const std::string unblock = "Reshape, Transpose, Reshape", block = "Reshape, Transpose, Reshape";
  list.push_back({d, "ReorderInput", 1, INT64_MAX, q + "ReorderInput -> (Transpose), Pad, " + block, RefuseReorderInput,
                  BuildReorderInput});
  list.push_back({d, "ReorderOutput", 1, INT64_MAX, q + "ReorderOutput -> " + unblock + ", Slice, (Transpose)",
                  RefuseReorderOutput, BuildReorderOutput});
  list.push_back({d, "Conv", 1, INT64_MAX, q + "Conv -> " + unblock + ", Conv, (Add), (activation), " + block,
                  RefuseConv, BuildConv});
  for (const char* op : {"MaxPool", "AveragePool"}) {
    list.push_back({d, op, 1, INT64_MAX, q + op + " -> " + unblock + ", " + op + ", " + block, RefusePool, BuildPool});
  }
  for (const char* op : {"GlobalMaxPool", "GlobalAveragePool"}) {
    list.push_back({d, op, 1, INT64_MAX, q + op + " -> " + unblock + ", " + op, RefusePool, BuildPool});
  }
  list.push_back({d, "Upsample", 1, INT64_MAX, q + "Upsample -> " + unblock + ", Resize, " + block, RefuseUpsample,
                  BuildUpsample});
}

}  // namespace ferry::legalize
