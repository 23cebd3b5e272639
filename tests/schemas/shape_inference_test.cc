// Static shape inference (src/schemas/shape_inference/, run by runtime::InferTypes): small graphs with symbolic
// dims, proven-invalid models, and a cross-check against libonnx's shape inference and against the output
// shapes recorded in the ONNX node tests.
#include <gtest/gtest.h>
#include <onnx/onnx_pb.h>
#include <onnx/shape_inference/implementation.h>

#include <algorithm>
#include <chrono>
#include <climits>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>

#include "ferry/error.h"
#include "ir/inline_functions.h"
#include "ir/onnx_import.h"
#include "runtime/type_inference.h"
#include "shape_inference_test_util.h"
#include "testing/model_builder.h"

namespace ferry {
namespace {

using ferry::testing::ModelBuilder;
using shape_inference_test::InputDims;
using shape_inference_test::Infer;
using shape_inference_test::Ints;
using shape_inference_test::TypeOf;
namespace fs = std::filesystem;

constexpr int32_t kF = onnx::TensorProto::FLOAT;
constexpr int32_t kI64 = onnx::TensorProto::INT64;

void Str(onnx::NodeProto& n, const std::string& name, const std::string& v) {
  auto* a = n.add_attribute();
  a->set_name(name);
  a->set_type(onnx::AttributeProto::STRING);
  a->set_s(v);
}

void Int64Init(ModelBuilder& b, const std::string& name, std::vector<int64_t> dims, std::vector<int64_t> values) {
  auto* t = b.graph().add_initializer();
  t->set_name(name);
  t->set_data_type(kI64);
  for (int64_t d : dims) t->add_dims(d);
  for (int64_t v : values) t->add_int64_data(v);
}

void FloatInit(ModelBuilder& b, const std::string& name, std::vector<int64_t> dims, std::vector<float> values = {}) {
  int64_t n = 1;
  for (int64_t d : dims) n *= d;
  if (values.empty()) values.assign(static_cast<size_t>(n), 0.5f);
  auto* t = b.graph().add_initializer();
  t->set_name(name);
  t->set_data_type(kF);
  for (int64_t d : dims) t->add_dims(d);
  for (float v : values) t->add_float_data(v);
}

TEST(ShapeInference, ConvPoolChainKeepsTheBatchSymbol) {
  ModelBuilder b(17);
  InputDims(b, "x", kF, {"N", "3", "224", "224"});
  FloatInit(b, "w", {64, 3, 7, 7});
  FloatInit(b, "fc", {1000, 64});
  auto& conv = b.Node("Conv", {"x", "w"}, {"c"}, "conv1");
  Ints(conv, "strides", {2, 2});
  Ints(conv, "pads", {3, 3, 3, 3});
  b.Node("Relu", {"c"}, {"r"});
  auto& pool = b.Node("MaxPool", {"r"}, {"p"});
  Ints(pool, "kernel_shape", {3, 3});
  Ints(pool, "strides", {2, 2});
  Ints(pool, "pads", {1, 1, 1, 1});
  b.Node("GlobalAveragePool", {"p"}, {"g"});
  b.Node("Flatten", {"g"}, {"f"});
  auto& gemm = b.Node("Gemm", {"f", "fc"}, {"y"});
  ModelBuilder::IntAttr(gemm, "transB", 1);
  auto m = Infer(b);
  EXPECT_EQ(TypeOf(*m, "c"), "float32[N,64,112,112]");
  EXPECT_EQ(TypeOf(*m, "r"), "float32[N,64,112,112]");
  EXPECT_EQ(TypeOf(*m, "p"), "float32[N,64,56,56]");
  EXPECT_EQ(TypeOf(*m, "g"), "float32[N,64,1,1]");
  EXPECT_EQ(TypeOf(*m, "f"), "float32[N,64]");
  EXPECT_EQ(TypeOf(*m, "y"), "float32[N,1000]");
}

TEST(ShapeInference, ConvAutoPadAndCeilMode) {
  ModelBuilder b(17);
  InputDims(b, "x", kF, {"1", "8", "15", "H"});
  FloatInit(b, "w", {4, 2, 3, 3});
  auto& conv = b.Node("Conv", {"x", "w"}, {"same"});
  Str(conv, "auto_pad", "SAME_UPPER");
  Ints(conv, "strides", {2, 1});
  ModelBuilder::IntAttr(conv, "group", 4);
  auto& pool = b.Node("AveragePool", {"x"}, {"ceil"});
  Ints(pool, "kernel_shape", {2, 1});
  Ints(pool, "strides", {2, 1});
  ModelBuilder::IntAttr(pool, "ceil_mode", 1);
  FloatInit(b, "wt", {8, 2, 3, 3});
  auto& t = b.Node("ConvTranspose", {"x", "wt"}, {"up"});
  Ints(t, "strides", {2, 2});
  auto m = Infer(b);
  EXPECT_EQ(TypeOf(*m, "same"), "float32[1,4,8,H]");
  EXPECT_EQ(TypeOf(*m, "ceil"), "float32[1,8,8,H]");
  EXPECT_EQ(TypeOf(*m, "up"), "float32[1,2,31,?]");
}

TEST(ShapeInference, BroadcastWithSymbols) {
  ModelBuilder b(17);
  InputDims(b, "a", kF, {"N", "1", "4"});
  InputDims(b, "b", kF, {"3", "1"});
  InputDims(b, "c", kF, {"M", "4"});
  InputDims(b, "d", kF, {"N", "4"});
  InputDims(b, "cond", onnx::TensorProto::BOOL, {"N", "1", "1"});
  b.Node("Add", {"a", "b"}, {"ab"});
  b.Node("Mul", {"c", "d"}, {"cd"});
  b.Node("Sub", {"d", "d"}, {"dd"});
  b.Node("Where", {"cond", "a", "b"}, {"w"});
  b.Node("Equal", {"a", "b"}, {"eq"});
  b.Node("Sum", {"a", "b", "d"}, {"s"});
  auto m = Infer(b);
  EXPECT_EQ(TypeOf(*m, "ab"), "float32[N,3,4]");
  EXPECT_EQ(TypeOf(*m, "cd"), "float32[?,4]");
  EXPECT_EQ(TypeOf(*m, "dd"), "float32[N,4]");
  EXPECT_EQ(TypeOf(*m, "w"), "float32[N,3,4]");
  EXPECT_EQ(TypeOf(*m, "eq"), "bool[N,3,4]");
  EXPECT_EQ(TypeOf(*m, "s"), "float32[N,3,4]");
}

TEST(ShapeInference, MatMulAndGemm) {
  ModelBuilder b(17);
  InputDims(b, "q", kF, {"B", "1", "S", "64"});
  InputDims(b, "k", kF, {"8", "64", "S"});
  InputDims(b, "v", kF, {"64"});
  InputDims(b, "a", kF, {"5", "M"});
  b.Node("MatMul", {"q", "k"}, {"qk"});
  b.Node("MatMul", {"q", "v"}, {"qv"});
  b.Node("MatMul", {"v", "k"}, {"vk"});
  auto& g = b.Node("Gemm", {"a", "a"}, {"aa"});
  ModelBuilder::IntAttr(g, "transA", 1);
  auto m = Infer(b);
  EXPECT_EQ(TypeOf(*m, "qk"), "float32[B,8,S,S]");
  EXPECT_EQ(TypeOf(*m, "qv"), "float32[B,1,S]");
  EXPECT_EQ(TypeOf(*m, "vk"), "float32[8,S]");
  EXPECT_EQ(TypeOf(*m, "aa"), "float32[M,M]");
}

// The pattern exporters emit for a dynamic batch: Shape -> Gather -> Unsqueeze -> Concat -> Reshape.
TEST(ShapeInference, ShapeComputationsArePropagated) {
  ModelBuilder b(17);
  InputDims(b, "x", kF, {"N", "12", "64"});
  Int64Init(b, "zero", {}, {0});
  Int64Init(b, "axes0", {1}, {0});
  Int64Init(b, "rest", {1}, {768});
  Int64Init(b, "neg", {3}, {-1, 3, 256});
  Int64Init(b, "copy", {2}, {0, -1});
  b.Node("Shape", {"x"}, {"shape"});
  b.Node("Gather", {"shape", "zero"}, {"n"});
  b.Node("Unsqueeze", {"n", "axes0"}, {"n1"});
  ModelBuilder::IntAttr(b.Node("Concat", {"n1", "rest"}, {"target"}), "axis", 0);
  b.Node("Reshape", {"x", "target"}, {"flat"});
  b.Node("Reshape", {"x", "neg"}, {"split"});
  b.Node("Reshape", {"x", "copy"}, {"copied"});
  b.Node("ConstantOfShape", {"shape"}, {"zeros"});
  b.Node("Size", {"x"}, {"size"});
  auto m = Infer(b);
  EXPECT_EQ(TypeOf(*m, "shape"), "int64[3]");
  EXPECT_EQ(TypeOf(*m, "n"), "int64[]");
  EXPECT_EQ(TypeOf(*m, "target"), "int64[2]");
  EXPECT_EQ(TypeOf(*m, "flat"), "float32[N,768]");
  EXPECT_EQ(TypeOf(*m, "split"), "float32[N,3,256]");
  EXPECT_EQ(TypeOf(*m, "copied"), "float32[N,768]");
  EXPECT_EQ(TypeOf(*m, "zeros"), "float32[N,12,64]");
  EXPECT_EQ(TypeOf(*m, "size"), "int64[]");
}

TEST(ShapeInference, TensorOps) {
  ModelBuilder b(17);
  InputDims(b, "x", kF, {"N", "6", "8"});
  InputDims(b, "y", kF, {"N", "2", "8"});
  InputDims(b, "idx", kI64, {"5", "3"});
  Int64Init(b, "axes1", {1}, {1});
  Int64Init(b, "starts", {2}, {1, 0});
  Int64Init(b, "ends", {2}, {-1, 100});
  Int64Init(b, "sl_axes", {2}, {1, 2});
  Int64Init(b, "steps", {2}, {2, 3});
  Int64Init(b, "pads", {6}, {0, 1, 2, 0, 1, 2});
  Int64Init(b, "reps", {3}, {1, 2, 3});
  Int64Init(b, "k", {1}, {4});
  Int64Init(b, "split", {2}, {2, 4});
  auto& cat = b.Node("Concat", {"x", "y"}, {"cat"});
  ModelBuilder::IntAttr(cat, "axis", 1);
  auto& tr = b.Node("Transpose", {"x"}, {"tr"});
  Ints(tr, "perm", {2, 0, 1});
  b.Node("Unsqueeze", {"x", "axes1"}, {"unsq"});
  b.Node("Squeeze", {"unsq", "axes1"}, {"sq"});
  b.Node("Slice", {"x", "starts", "ends", "sl_axes", "steps"}, {"sl"});
  b.Node("Pad", {"x", "pads"}, {"pad"});
  b.Node("Tile", {"x", "reps"}, {"tile"});
  auto& gather = b.Node("Gather", {"x", "idx"}, {"gat"});
  ModelBuilder::IntAttr(gather, "axis", 1);
  b.Node("TopK", {"x", "k"}, {"topv", "topi"});
  auto& sp = b.Node("Split", {"x", "split"}, {"s0", "s1"});
  ModelBuilder::IntAttr(sp, "axis", 1);
  auto& cast = b.Node("Cast", {"x"}, {"cast"});
  ModelBuilder::IntAttr(cast, "to", onnx::TensorProto::FLOAT16);
  auto& rm = b.Node("ReduceMean", {"x"}, {"rm"});
  Ints(rm, "axes", {-1});
  auto& rs = b.Node("ReduceSum", {"x", "axes1"}, {"rs"});
  ModelBuilder::IntAttr(rs, "keepdims", 0);
  b.Node("ArgMax", {"x"}, {"am"});
  b.Node("NonZero", {"x"}, {"nz"});
  auto m = Infer(b);
  EXPECT_EQ(TypeOf(*m, "cat"), "float32[N,8,8]");
  EXPECT_EQ(TypeOf(*m, "tr"), "float32[8,N,6]");
  EXPECT_EQ(TypeOf(*m, "unsq"), "float32[N,1,6,8]");
  EXPECT_EQ(TypeOf(*m, "sq"), "float32[N,6,8]");
  EXPECT_EQ(TypeOf(*m, "sl"), "float32[N,2,3]");
  EXPECT_EQ(TypeOf(*m, "pad"), "float32[N,8,12]");
  EXPECT_EQ(TypeOf(*m, "tile"), "float32[N,12,24]");
  EXPECT_EQ(TypeOf(*m, "gat"), "float32[N,5,3,8]");
  EXPECT_EQ(TypeOf(*m, "topv"), "float32[N,6,4]");
  EXPECT_EQ(TypeOf(*m, "topi"), "int64[N,6,4]");
  EXPECT_EQ(TypeOf(*m, "s0"), "float32[N,2,8]");
  EXPECT_EQ(TypeOf(*m, "s1"), "float32[N,4,8]");
  EXPECT_EQ(TypeOf(*m, "cast"), "float16[N,6,8]");
  EXPECT_EQ(TypeOf(*m, "rm"), "float32[N,6,1]");
  EXPECT_EQ(TypeOf(*m, "rs"), "float32[N,8]");
  EXPECT_EQ(TypeOf(*m, "am"), "int64[1,6,8]");
  EXPECT_EQ(TypeOf(*m, "nz"), "int64[3,?]");
}

TEST(ShapeInference, ConstantsRangeAndResize) {
  ModelBuilder b(17);
  InputDims(b, "x", kF, {"1", "3", "10", "20"});
  auto& c = b.Node("Constant", {}, {"limit"});
  auto* a = c.add_attribute();
  a->set_name("value");
  a->set_type(onnx::AttributeProto::TENSOR);
  a->mutable_t()->set_data_type(kI64);
  a->mutable_t()->add_int64_data(7);
  Int64Init(b, "start", {}, {1});
  Int64Init(b, "delta", {}, {2});
  FloatInit(b, "scales", {4}, {1.0f, 1.0f, 2.0f, 0.5f});
  b.Node("Range", {"start", "limit", "delta"}, {"r"});
  b.Node("Resize", {"x", "", "scales"}, {"resized"});
  auto m = Infer(b);
  EXPECT_EQ(TypeOf(*m, "limit"), "int64[]");
  EXPECT_EQ(TypeOf(*m, "r"), "int64[3]");
  EXPECT_EQ(TypeOf(*m, "resized"), "float32[1,3,20,10]");
}

TEST(ShapeInference, DeclaredShapesMergeWithInferred) {
  ModelBuilder b(17);
  InputDims(b, "x", kF, {"N", "4"});
  b.Node("Relu", {"x"}, {"y"});
  b.Node("Relu", {"y"}, {"z"});
  // value_info: y declared [?, 4] (inferred N fills it); z declared [2, ?] (declared static 2 wins).
  auto* vy = b.graph().add_value_info();
  vy->set_name("y");
  vy->mutable_type()->mutable_tensor_type()->set_elem_type(kF);
  vy->mutable_type()->mutable_tensor_type()->mutable_shape()->add_dim();
  vy->mutable_type()->mutable_tensor_type()->mutable_shape()->add_dim()->set_dim_value(4);
  auto* vz = b.graph().add_value_info();
  vz->set_name("z");
  vz->mutable_type()->mutable_tensor_type()->set_elem_type(kF);
  vz->mutable_type()->mutable_tensor_type()->mutable_shape()->add_dim()->set_dim_value(2);
  vz->mutable_type()->mutable_tensor_type()->mutable_shape()->add_dim();
  auto m = Infer(b);
  EXPECT_EQ(TypeOf(*m, "y"), "float32[N,4]");
  EXPECT_EQ(TypeOf(*m, "z"), "float32[2,4]");
}

TEST(ShapeInference, IfAndLoopBodies) {
  ModelBuilder b(17);
  InputDims(b, "x", kF, {"N", "4"});
  InputDims(b, "c", onnx::TensorProto::BOOL, {});
  auto branch = [](const std::string& name, const std::string& op) {
    onnx::GraphProto g;
    g.set_name(name);
    auto* n = g.add_node();
    n->set_op_type(op);
    n->add_input("x");
    n->add_output(name + "_out");
    g.add_output()->set_name(name + "_out");
    return g;
  };
  auto& iff = b.Node("If", {"c"}, {"picked"});
  for (auto [attr, op] : {std::pair{"then_branch", "Relu"}, std::pair{"else_branch", "Neg"}}) {
    auto* a = iff.add_attribute();
    a->set_name(attr);
    a->set_type(onnx::AttributeProto::GRAPH);
    *a->mutable_g() = branch(std::string(attr) + "_g", op);
  }
  auto m = Infer(b);
  EXPECT_EQ(TypeOf(*m, "picked"), "float32[N,4]");
}

// Runs `fn`, expects InvalidModelError whose message contains every needle.
template <typename Fn>
void ExpectInvalid(Fn&& fn, const std::vector<std::string>& needles) {
  try {
    fn();
    ADD_FAILURE() << "expected InvalidModelError";
  } catch (const InvalidModelError& e) {
    for (const auto& n : needles) {
      EXPECT_NE(std::string(e.what()).find(n), std::string::npos) << e.what() << "\nmissing: " << n;
    }
  }
}

TEST(ShapeInference, InvalidModelsAreRejectedNamingTheNode) {
  {
    ModelBuilder b(17);
    b.Input("a", kF, {2, 3});
    b.Input("b", kF, {4, 5});
    b.Node("MatMul", {"a", "b"}, {"y"}, "mm");
    ExpectInvalid([&] { Infer(b, "mm_model.onnx"); },
                  {"mm_model.onnx", "node 'mm'", "MatMul", "[2,3]", "[4,5]", "3", "4"});
  }
  {
    ModelBuilder b(17);
    b.Input("a", kF, {2, 3});
    b.Input("b", kF, {2, 4});
    b.Node("Add", {"a", "b"}, {"y"}, "add");
    ExpectInvalid([&] { Infer(b); }, {"node 'add'", "Add", "3 vs 4", "[2,3]", "[2,4]"});
  }
  {
    ModelBuilder b(17);
    b.Input("a", kF, {2, 3});
    b.Input("b", kF, {2, 3, 1});
    auto& cat = b.Node("Concat", {"a", "b"}, {"y"}, "cat");
    ModelBuilder::IntAttr(cat, "axis", 0);
    ExpectInvalid([&] { Infer(b); }, {"node 'cat'", "Concat", "rank", "[2,3]", "[2,3,1]"});
  }
  {
    ModelBuilder b(17);
    b.Input("x", kF, {1, 3, 8, 8});
    FloatInit(b, "w", {4, 2, 3, 3});
    b.Node("Conv", {"x", "w"}, {"y"}, "conv");
    ExpectInvalid([&] { Infer(b); }, {"node 'conv'", "Conv", "channels"});
  }
  {
    ModelBuilder b(17);
    b.Input("x", kF, {2, 3});
    Int64Init(b, "s", {1}, {7});
    b.Node("Reshape", {"x", "s"}, {"y"}, "rs");
    ExpectInvalid([&] { Infer(b); }, {"node 'rs'", "Reshape", "6 elements"});
  }
}

// MaxUnpool's pads hold a begin and an end per spatial dim, which is what the kernels require: shape inference used to
// zero-pad or cut any other length and call the model valid, so `ferry check` passed what `ferry run` refused.
TEST(ShapeInference, MaxUnpoolPadsMustHoldTwoValuesPerSpatialDim) {
  for (const std::vector<int64_t>& pads : {std::vector<int64_t>{1, 1}, std::vector<int64_t>{0, 0, 0, 0, 0, 0}}) {
    ModelBuilder b(17);
    b.Input("x", kF, {1, 1, 2, 2});
    b.Input("i", kI64, {1, 1, 2, 2});
    auto& mu = b.Node("MaxUnpool", {"x", "i"}, {"y"}, "unpool");
    Ints(mu, "kernel_shape", {2, 2});
    Ints(mu, "strides", {2, 2});
    Ints(mu, "pads", pads);
    ExpectInvalid([&] { Infer(b); }, {"node 'unpool'", "MaxUnpool", "attribute pads", "expected 4"});
  }
  ModelBuilder ok(17);
  ok.Input("x", kF, {1, 1, 2, 2});
  ok.Input("i", kI64, {1, 1, 2, 2});
  auto& mu = ok.Node("MaxUnpool", {"x", "i"}, {"y"}, "unpool");
  Ints(mu, "kernel_shape", {2, 2});
  Ints(mu, "strides", {2, 2});
  Ints(mu, "pads", {1, 0, 1, 0});
  EXPECT_EQ(TypeOf(*Infer(ok), "y"), "float32[1,1,2,4]");  // H: 4 - 1 - 1, W: 4 - 0 - 0
}

// Untrusted attribute and constant values at the int64 limits: inference either works, leaves dims unknown, or
// rejects the model; it never overflows or crashes (run under the sanitizer build to see UB).
TEST(ShapeInference, ExtremeValuesDoNotOverflow) {
  const int64_t big = INT64_MAX, small = INT64_MIN;
  for (int64_t v : {big, small, big - 1, small + 1, int64_t{0}, int64_t{-1}}) {
    ModelBuilder b(17);
    b.Input("x", kF, {1, 2, 9, 9});
    FloatInit(b, "w", {2, 2, 3, 3});
    Int64Init(b, "v1", {1}, {v});
    Int64Init(b, "v4", {4}, {v, v, v, v});
    Int64Init(b, "v8", {8}, {v, v, v, v, v, v, v, v});
    Int64Init(b, "one", {}, {1});
    Int64Init(b, "vs", {}, {v});
    auto& conv = b.Node("Conv", {"x", "w"}, {"c"});
    Ints(conv, "pads", {v, v, v, v});
    Ints(conv, "dilations", {v, v});
    ModelBuilder::IntAttr(conv, "group", v);
    auto& ct = b.Node("ConvTranspose", {"x", "w"}, {"ct"});
    Ints(ct, "pads", {v, v, v, v});
    Ints(ct, "output_padding", {v, v});
    auto& pool = b.Node("AveragePool", {"x"}, {"p"});
    Ints(pool, "kernel_shape", {v, 2});
    Ints(pool, "strides", {v, v});
    ModelBuilder::IntAttr(pool, "ceil_mode", 1);
    auto& mu = b.Node("MaxUnpool", {"x", "x"}, {"mu"});
    Ints(mu, "kernel_shape", {v, v});
    Ints(mu, "pads", {v, v, v, v});
    b.Node("Pad", {"x", "v8"}, {"pad"});
    b.Node("Slice", {"x", "v4", "v4", "", "v4"}, {"sl"});
    b.Node("Range", {"vs", "one", "vs"}, {"r1"});
    b.Node("Range", {"one", "vs", "one"}, {"r2"});
    b.Node("Tile", {"x", "v4"}, {"tile"});
    b.Node("Expand", {"x", "v4"}, {"ex"});
    b.Node("Reshape", {"x", "v4"}, {"rs"});
    b.Node("ConstantOfShape", {"v4"}, {"cos"});
    b.Node("TopK", {"x", "v1"}, {"tv", "ti"});
    b.Node("Resize", {"x", "", "", "v4"}, {"rz"});
    auto& sp = b.Node("Split", {"x", "v4"}, {"s0", "s1", "s2", "s3"});
    ModelBuilder::IntAttr(sp, "axis", 3);
    b.Node("Add", {"vs", "vs"}, {"add"});
    b.Node("Mul", {"vs", "vs"}, {"mul"});
    b.Node("Neg", {"vs"}, {"neg"});
    b.Node("Unsqueeze", {"vs", "v1"}, {"unsq"});
    // Each node alone, so that one rejection does not hide the others.
    const onnx::GraphProto all = b.graph();
    for (int i = 0; i < all.node_size(); ++i) {
      ModelBuilder one(17);
      *one.proto().mutable_graph() = all;
      one.graph().clear_node();
      *one.graph().add_node() = all.node(i);
      try {
        Infer(one);
      } catch (const InvalidModelError&) {
      }
    }
  }
}

// --- cross-check against libonnx and against the ONNX node tests' recorded outputs ---

std::string Env(const char* name, const std::string& def) {
  const char* v = std::getenv(name);
  return v && *v ? std::string(v) : def;
}

bool LoadProto(const fs::path& p, onnx::ModelProto& m) {
  std::ifstream f(p, std::ios::binary);
  return f && m.ParseFromIstream(&f);
}

int64_t DefaultOpset(const onnx::ModelProto& m) {
  for (const auto& o : m.opset_import()) {
    if (o.domain().empty() || o.domain() == "ai.onnx") return o.version();
  }
  return 0;
}

struct CrossCheck {
  int models = 0, onnx_failed = 0, ferry_failed = 0, compared_dims = 0, compared_outputs = 0, static_outputs = 0;
  int gaps = 0;         // values libonnx knows fully statically and Ferry does not
  int symbol_gaps = 0;  // dims where libonnx carries a model symbol and Ferry has none
  std::map<std::string, int> gap_ops;
  std::vector<std::string> disagreements, ferry_errors, output_mismatches, declared_conflicts;
};

// Compares Ferry's inferred type of `v` with libonnx's where both are tensors with static dims.
void CompareTensor(const std::string& where, const std::string& op, const ir::TypeInfo& ours,
                   const onnx::TypeProto& theirs, CrossCheck& cc) {
  if (theirs.value_case() != onnx::TypeProto::kTensorType) return;
  const auto& tt = theirs.tensor_type();
  bool onnx_static = tt.has_shape();
  for (int k = 0; onnx_static && k < tt.shape().dim_size(); ++k) onnx_static = tt.shape().dim(k).has_dim_value();
  if (onnx_static && !ours.has_static_shape()) {
    ++cc.gaps;
    ++cc.gap_ops[op];
    if (std::getenv("FERRY_SHAPE_INFERENCE_VERBOSE")) std::printf("  gap: %s: %s\n", where.c_str(), ours.ToString().c_str());
  }
  if (!ours.is_tensor()) return;
  if (ours.elem_type != DataType::kUndefined && tt.elem_type() != 0 &&
      static_cast<int32_t>(ours.elem_type) != tt.elem_type()) {
    cc.disagreements.push_back(where + ": element type " + ours.ToString() + " vs libonnx elem_type " +
                               std::to_string(tt.elem_type()));
  }
  if (!ours.shape || !tt.has_shape()) return;
  if (static_cast<int>(ours.shape->size()) != tt.shape().dim_size()) {
    cc.disagreements.push_back(where + ": rank of " + ours.ToString() + " vs libonnx rank " +
                               std::to_string(tt.shape().dim_size()));
    return;
  }
  for (int k = 0; k < tt.shape().dim_size(); ++k) {
    const auto& d = tt.shape().dim(k);
    const ir::Dim& o = (*ours.shape)[static_cast<size_t>(k)];
    if (d.has_dim_param() && d.dim_param().rfind("unk__", 0) != 0 && !o.is_static() && o.symbol != d.dim_param()) {
      ++cc.symbol_gaps;  // libonnx carries a model symbol that Ferry lost
      if (std::getenv("FERRY_SHAPE_INFERENCE_VERBOSE")) {
        std::printf("  symbol gap: %s: %s, libonnx has %s at dim %d\n", where.c_str(), ours.ToString().c_str(),
                    d.dim_param().c_str(), k);
      }
    }
    if (!d.has_dim_value() || !o.is_static()) continue;
    ++cc.compared_dims;
    if (d.dim_value() != o.value) {
      cc.disagreements.push_back(where + ": " + ours.ToString() + ", libonnx has " + std::to_string(d.dim_value()) +
                                 " at dim " + std::to_string(k));
    }
  }
}

// The producer (description, op type) of each value in the top graph, for messages.
std::map<std::string, std::pair<std::string, std::string>> Producers(const onnx::GraphProto& g) {
  std::map<std::string, std::pair<std::string, std::string>> out;
  for (int i = 0; i < g.node_size(); ++i) {
    const auto& n = g.node(i);
    for (const auto& o : n.output()) out[o] = {"node '" + n.name() + "' (" + n.op_type() + ")", n.op_type()};
  }
  return out;
}

// symbolic_batch: dim 0 of every graph input becomes the symbol "N" (the model as exported with a dynamic batch).
void CheckModel(const fs::path& path, bool with_libonnx, CrossCheck& cc, bool symbolic_batch = false) {
  onnx::ModelProto original;
  if (!LoadProto(path, original)) return;
  ++cc.models;
  // What the inference must find by itself: no value_info, graph outputs without shapes.
  onnx::ModelProto stripped = original;
  stripped.mutable_graph()->clear_value_info();
  for (auto& o : *stripped.mutable_graph()->mutable_output()) {
    if (o.type().has_tensor_type()) o.mutable_type()->mutable_tensor_type()->clear_shape();
  }
  if (symbolic_batch) {
    for (auto& i : *stripped.mutable_graph()->mutable_input()) {
      auto* tt = i.mutable_type()->mutable_tensor_type();
      if (tt->has_shape() && tt->shape().dim_size() > 0) tt->mutable_shape()->mutable_dim(0)->set_dim_param("N");
    }
  }
  std::unique_ptr<ir::Model> model;
  try {
    model = ir::ImportModelProto(stripped, path.string(), path.parent_path().string());
    ir::InlineModelFunctions(*model);
  } catch (const Error&) {
    return;  // not importable (external data missing, ...): not a shape-inference question
  }
  try {
    runtime::InferTypes(*model);
  } catch (const Error& e) {
    ++cc.ferry_failed;
    cc.ferry_errors.push_back(path.string() + ": " + e.what());
    return;
  }
  // The model as written: what it declares (value_info, outputs) must agree with what is inferred.
  try {
    auto declared = ir::ImportModelProto(original, path.string(), path.parent_path().string());
    ir::InlineModelFunctions(*declared);
    runtime::TypeInferenceReport report;
    runtime::InferTypes(*declared, &report);
    cc.declared_conflicts.insert(cc.declared_conflicts.end(), report.conflicts.begin(), report.conflicts.end());
  } catch (const Error& e) {
    cc.ferry_errors.push_back(path.string() + " (as declared): " + e.what());
  }
  const auto producers = Producers(original.graph());
  auto where = [&](const std::string& value) {
    auto it = producers.find(value);
    return path.parent_path().filename().string() + ": '" + value + "'" +
           (it != producers.end() ? " from " + it->second.first : std::string());
  };
  auto op_of = [&](const std::string& value) {
    auto it = producers.find(value);
    return it != producers.end() ? it->second.second : std::string("?");
  };
  // Against the outputs recorded with the test case.
  const fs::path data = path.parent_path() / "test_data_set_0";
  for (int k = 0; k < original.graph().output_size(); ++k) {
    const auto& o = original.graph().output(k);
    if (!o.type().has_tensor_type()) continue;
    onnx::TensorProto t;
    std::ifstream f(data / ("output_" + std::to_string(k) + ".pb"), std::ios::binary);
    if (!f || !t.ParseFromIstream(&f)) continue;
    const ir::Value* v = model->graph->FindValue(o.name());
    if (!v || !v->type().is_tensor() || !v->type().shape) continue;
    const auto& s = *v->type().shape;
    ++cc.compared_outputs;
    if (v->type().has_static_shape()) ++cc.static_outputs;
    else if (std::getenv("FERRY_SHAPE_INFERENCE_VERBOSE")) std::printf("  not static: %s %s\n", where(o.name()).c_str(), v->type().ToString().c_str());
    bool bad = static_cast<int>(s.size()) != t.dims_size();
    for (int d = 0; !bad && d < t.dims_size(); ++d) bad = s[static_cast<size_t>(d)].is_static() && s[static_cast<size_t>(d)].value != t.dims(d);
    if (bad) {
      std::string dims;
      for (int d = 0; d < t.dims_size(); ++d) dims += (d ? "," : "") + std::to_string(t.dims(d));
      cc.output_mismatches.push_back(where(o.name()) + ": inferred " + v->type().ToString() + ", recorded output [" +
                                     dims + "]");
    }
  }
  if (!with_libonnx) return;
  onnx::ModelProto theirs = stripped;
  try {
    onnx::shape_inference::InferShapes(theirs, onnx::OpSchemaRegistry::Instance(),
                                       onnx::ShapeInferenceOptions(false, 0, true));
  } catch (const std::exception&) {
    ++cc.onnx_failed;
    return;
  }
  auto compare = [&](const onnx::ValueInfoProto& vi) {
    const ir::Value* v = model->graph->FindValue(vi.name());
    if (v && vi.has_type()) CompareTensor(where(vi.name()), op_of(vi.name()), v->type(), vi.type(), cc);
  };
  for (const auto& vi : theirs.graph().value_info()) compare(vi);
  for (const auto& vi : theirs.graph().output()) compare(vi);
}

std::string Join(const std::vector<std::string>& v, size_t max = 40) {
  std::string s;
  for (size_t i = 0; i < v.size() && i < max; ++i) s += "  " + v[i] + "\n";
  if (v.size() > max) s += "  ... and " + std::to_string(v.size() - max) + " more\n";
  return s;
}

void Report(const char* what, const CrossCheck& cc) {
  std::printf("[%s] models %d, dims compared with libonnx %d, disagreements %zu, libonnx failed on %d, "
              "Ferry rejected %d, recorded outputs compared %d (fully static %d), mismatches %zu, conflicts with "
              "declared types %zu\n",
              what, cc.models, cc.compared_dims, cc.disagreements.size(), cc.onnx_failed, cc.ferry_failed,
              cc.compared_outputs, cc.static_outputs, cc.output_mismatches.size(), cc.declared_conflicts.size());
  std::string gaps;
  for (const auto& [op, n] : cc.gap_ops) gaps += " " + op + ":" + std::to_string(n);
  std::printf("[%s] values libonnx infers fully static and Ferry does not: %d (by producing op:%s); dims where "
              "libonnx keeps a model symbol and Ferry does not: %d\n",
              what, cc.gaps, gaps.c_str(), cc.symbol_gaps);
}

// Every test case folder (model.onnx + test_data_set_0) under `root`.
void CheckTestCases(const fs::path& root, const char* what) {
  std::vector<fs::path> models;
  for (const auto& e : fs::directory_iterator(root)) {
    if (fs::exists(e.path() / "model.onnx")) models.push_back(e.path() / "model.onnx");
  }
  std::sort(models.begin(), models.end());
  CrossCheck cc;
  for (const auto& p : models) {
    onnx::ModelProto m;
    if (!LoadProto(p, m)) continue;
    // libonnx 1.12 knows opsets <= 17 and IR <= 8; newer models are only checked against their recorded outputs.
    const bool old = DefaultOpset(m) <= 17 && m.ir_version() <= 8;
    CheckModel(p, old, cc);
  }
  Report(what, cc);
  EXPECT_TRUE(cc.disagreements.empty()) << "disagreements with libonnx:\n" << Join(cc.disagreements);
  EXPECT_TRUE(cc.ferry_errors.empty()) << "valid models rejected:\n" << Join(cc.ferry_errors);
  EXPECT_TRUE(cc.output_mismatches.empty()) << "inferred vs recorded output shapes:\n"
                                            << Join(cc.output_mismatches);
  EXPECT_TRUE(cc.declared_conflicts.empty()) << "inferred vs declared types:\n" << Join(cc.declared_conflicts);
}

TEST(ShapeInferenceCrossCheck, OnnxNodeTests) {
  const fs::path root = Env("FERRY_ONNX_NODE_TESTS", std::string(FERRY_SOURCE_DIR) + "/../shared/onnx-tests/node");
  if (!fs::is_directory(root)) GTEST_SKIP() << root << " not found";
  CheckTestCases(root, "onnx node tests");
}

// Debian's libonnx-testdata: the ONNX 1.12 node tests and the PyTorch-converted, PyTorch-operator and simple cases.
TEST(ShapeInferenceCrossCheck, LibonnxTestdata) {
  const fs::path root = "/usr/share/libonnx-testdata/data";
  if (!fs::is_directory(root)) GTEST_SKIP() << root << " not found";
  for (const char* category : {"node", "pytorch-converted", "pytorch-operator", "simple"}) {
    if (fs::is_directory(root / category)) CheckTestCases(root / category, category);
  }
}

fs::path TestModelsDir() { return Env("FERRY_TEST_MODELS", Env("FERRY_BUILD_DIR", FERRY_BUILD_DIR) + "/test-models"); }

TEST(ShapeInferenceCrossCheck, RealModels) {
  const fs::path root = TestModelsDir();
  if (!fs::is_directory(root)) GTEST_SKIP() << root << " not found (generate with ctest -R generate_test_models)";
  for (bool symbolic : {false, true}) {
    CrossCheck cc;
    for (const auto& e : fs::directory_iterator(root)) {
      const fs::path p = e.path() / "model.onnx";
      if (fs::exists(p)) CheckModel(p, true, cc, symbolic);
    }
    Report(symbolic ? "real models, symbolic batch" : "real models", cc);
    EXPECT_TRUE(cc.disagreements.empty()) << "disagreements with libonnx:\n" << Join(cc.disagreements);
    EXPECT_TRUE(cc.ferry_errors.empty()) << "valid models rejected:\n" << Join(cc.ferry_errors);
    EXPECT_TRUE(cc.declared_conflicts.empty()) << "inferred vs declared types:\n" << Join(cc.declared_conflicts);
  }
}

// Prints how long InferTypes takes on the transformer test models (no assertion on the time).
TEST(ShapeInferenceCrossCheck, TimeOnTransformerModels) {
  const fs::path root = TestModelsDir();
  bool any = false;
  for (const char* name : {"bert_encoder", "vit_b_16"}) {
    const fs::path p = root / name / "model.onnx";
    if (!fs::exists(p)) continue;
    any = true;
    double best = 1e30;
    runtime::TypeInferenceReport report;
    for (int rep = 0; rep < 5; ++rep) {
      auto model = ir::ImportModelFromFile(p.string());
      ir::InlineModelFunctions(*model);
      runtime::TypeInferenceReport r;
      auto t0 = std::chrono::steady_clock::now();
      runtime::InferTypes(*model, &r);
      auto t1 = std::chrono::steady_clock::now();
      best = std::min(best, std::chrono::duration<double, std::milli>(t1 - t0).count());
      report = r;
    }
    std::printf("[time] InferTypes on %s: %.3f ms (best of 5), %zu nodes, %zu with shape inference, %zu conflicts\n",
                name, best, report.nodes, report.nodes_inferred, report.conflicts.size());
    for (const auto& c : report.conflicts) std::printf("  conflict: %s\n", c.c_str());
  }
  if (!any) GTEST_SKIP() << "bert_encoder / vit_b_16 not found under " << root;
}

}  // namespace
}  // namespace ferry
