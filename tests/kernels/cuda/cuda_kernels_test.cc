// Every `cuda` kernel against `ref` through the cross-backend harness (fallback forbidden, so the cuda kernel
// really ran), in float32 and, where the kernel computes in them, float16 / bfloat16. Needs a GPU: the suites are
// named CudaDevice* (ctest label `gpu`, tests/CMakeLists.txt) and skip themselves without one.
#include <gtest/gtest.h>

#include <cstdlib>
#include <random>

#include "backends/cuda/cuda_backend.h"
#include "testing/op_harness.h"

namespace ferry {
namespace {

using testing::Const;
using testing::Float;
using testing::In;
using testing::Int;
using testing::Ints;
using testing::MatchesRef;
using testing::OpTest;
using testing::RandomTensor;
using testing::Str;

const char* NoDevice() {
  static const std::string why = static_cast<const CudaBackend*>(FindBackend("cuda"))->Unavailable();
  return why.empty() ? nullptr : why.c_str();
}

class CudaDevice : public ::testing::Test {
 protected:
  void SetUp() override {
    if (const char* why = NoDevice()) GTEST_SKIP() << "no GPU: " << why;
  }
  Tensor R(DataType dt, Shape shape, double lo = -1, double hi = 1) { return RandomTensor(dt, std::move(shape), rng_, lo, hi); }
  std::mt19937 rng_{7};
};

Tensor I64(Shape shape, std::vector<int64_t> v) { return Tensor::FromVector<int64_t>(DataType::kInt64, std::move(shape), v); }

// Tolerances: float32 kernels compute in float; float16 / bfloat16 round their output once (and products in
// matmuls and convolutions accumulate in float).
void Tol(OpTest& t, DataType dt, double f32_rtol = 1e-5, double f32_atol = 1e-6) {
  if (dt == DataType::kFloat16) t.rtol = t.atol = 1e-2;
  else if (dt == DataType::kBFloat16) t.rtol = t.atol = 2e-2;
  else {
    t.rtol = f32_rtol;
    t.atol = f32_atol;
  }
}

TEST_F(CudaDevice, UnaryActivations) {
  struct Case {
    const char* op;
    int opset;
    double lo, hi;
    std::vector<onnx::AttributeProto> attrs;
  };
  const std::vector<Case> cases = {
      {"Relu", 14, -2, 2, {}},         {"Sigmoid", 13, -6, 6, {}},   {"Tanh", 13, -3, 3, {}},
      {"Exp", 13, -3, 3, {}},          {"Log", 13, 0.1, 5, {}},      {"Sqrt", 13, 0, 4, {}},
      {"Neg", 13, -2, 2, {}},          {"Abs", 13, -2, 2, {}},       {"Reciprocal", 13, 0.5, 3, {}},
      {"LeakyRelu", 16, -2, 2, {Float("alpha", 0.1f)}},             {"HardSigmoid", 6, -4, 4, {}},
      {"Erf", 13, -2, 2, {}},          {"HardSwish", 14, -4, 4, {}}, {"Gelu", 20, -3, 3, {}},
      {"Gelu", 20, -3, 3, {Str("approximate", "tanh")}},
  };
  for (const Case& c : cases) {
    for (DataType dt : {DataType::kFloat, DataType::kFloat16, DataType::kBFloat16}) {
      OpTest t{.op = c.op, .opset = c.opset, .inputs = {In("x", R(dt, {3, 67}, c.lo, c.hi))}, .attributes = c.attrs};
      Tol(t, dt, 1e-5, 1e-6);
      EXPECT_TRUE(MatchesRef(t, "cuda")) << c.op << " " << DataTypeName(dt);
    }
  }
}

TEST_F(CudaDevice, ClipWithAttributesAndInputs) {
  OpTest old{.op = "Clip", .opset = 6, .inputs = {In("x", R(DataType::kFloat, {100}, -3, 3))},
             .attributes = {Float("min", -1), Float("max", 0.5f)}};
  EXPECT_TRUE(MatchesRef(old, "cuda"));
  OpTest t{.op = "Clip", .opset = 13,
           .inputs = {In("x", R(DataType::kFloat, {100}, -3, 3)), Const("lo", Tensor::FromVector<float>(DataType::kFloat, {}, {-0.5f})),
                      Const("hi", Tensor::FromVector<float>(DataType::kFloat, {}, {6.f}))}};
  EXPECT_TRUE(MatchesRef(t, "cuda"));
}

TEST_F(CudaDevice, BinaryBroadcast) {
  for (const char* op : {"Add", "Sub", "Mul", "Div"}) {
    for (DataType dt : {DataType::kFloat, DataType::kFloat16, DataType::kBFloat16}) {
      OpTest t{.op = op, .opset = 14, .inputs = {In("a", R(dt, {2, 3, 5})), In("b", R(dt, {3, 1}, 0.5, 2))}};
      Tol(t, dt);
      EXPECT_TRUE(MatchesRef(t, "cuda")) << op << " " << DataTypeName(dt);
    }
    OpTest same{.op = op, .opset = 14, .inputs = {In("a", R(DataType::kFloat, {1000})), In("b", R(DataType::kFloat, {1000}, 0.5, 2))}};
    EXPECT_TRUE(MatchesRef(same, "cuda")) << op;
    OpTest ints{.op = op, .opset = 14, .inputs = {In("a", R(DataType::kInt64, {4, 3}, -50, 50)), In("b", R(DataType::kInt64, {3}, 1, 9))}};
    EXPECT_TRUE(MatchesRef(ints, "cuda")) << op << " int64";
    OpTest i32{.op = op, .opset = 14, .inputs = {In("a", R(DataType::kInt32, {4, 3}, -50, 50)), In("b", R(DataType::kInt32, {1}, 1, 9))}};
    EXPECT_TRUE(MatchesRef(i32, "cuda")) << op << " int32";
  }
  OpTest pow{.op = "Pow", .opset = 15, .inputs = {In("a", R(DataType::kFloat, {4, 5}, 0.1, 3)), In("b", R(DataType::kFloat, {5}, -2, 2))}};
  pow.rtol = 1e-5;
  EXPECT_TRUE(MatchesRef(pow, "cuda"));
  OpTest empty{.op = "Add", .opset = 14, .inputs = {In("a", R(DataType::kFloat, {0, 3})), In("b", R(DataType::kFloat, {3}))}};
  EXPECT_TRUE(MatchesRef(empty, "cuda"));
}

TEST_F(CudaDevice, WhereAndCast) {
  OpTest where{.op = "Where", .opset = 16,
               .inputs = {In("c", R(DataType::kBool, {3, 1})), In("x", R(DataType::kFloat, {3, 4})), In("y", R(DataType::kFloat, {4}))}};
  EXPECT_TRUE(MatchesRef(where, "cuda"));
  OpTest wi{.op = "Where", .opset = 16,
            .inputs = {In("c", R(DataType::kBool, {5})), In("x", R(DataType::kInt64, {5}, -9, 9)), In("y", R(DataType::kInt64, {1}, -9, 9))}};
  EXPECT_TRUE(MatchesRef(wi, "cuda"));
  const std::vector<std::pair<DataType, DataType>> casts = {
      {DataType::kFloat, DataType::kFloat16}, {DataType::kFloat, DataType::kBFloat16}, {DataType::kFloat16, DataType::kFloat},
      {DataType::kInt64, DataType::kFloat},   {DataType::kFloat, DataType::kInt32},    {DataType::kInt32, DataType::kInt64},
      {DataType::kBool, DataType::kFloat},    {DataType::kFloat, DataType::kBool},     {DataType::kUint8, DataType::kFloat}};
  for (auto [from, to] : casts) {
    OpTest t{.op = "Cast", .opset = 19, .inputs = {In("x", R(from, {7, 9}, -20, 20))}, .attributes = {Int("to", static_cast<int64_t>(to))}};
    if (from == DataType::kUint8) t.inputs[0].value = R(from, {7, 9}, 0, 200);
    EXPECT_TRUE(MatchesRef(t, "cuda")) << DataTypeName(from) << " -> " << DataTypeName(to);
  }
}

TEST_F(CudaDevice, SoftmaxLayerNormBatchNorm) {
  for (DataType dt : {DataType::kFloat, DataType::kFloat16, DataType::kBFloat16}) {
    OpTest last{.op = "Softmax", .opset = 13, .inputs = {In("x", R(dt, {4, 3, 300}, -5, 5))}};
    Tol(last, dt);
    EXPECT_TRUE(MatchesRef(last, "cuda")) << DataTypeName(dt);
    OpTest ln{.op = "LayerNormalization", .opset = 17,
              .inputs = {In("x", R(dt, {6, 768})), Const("s", R(dt, {768})), Const("b", R(dt, {768}))},
              .attributes = {Float("epsilon", 1e-5f)}};
    Tol(ln, dt, 1e-4, 1e-5);
    EXPECT_TRUE(MatchesRef(ln, "cuda")) << DataTypeName(dt);
  }
  OpTest middle{.op = "Softmax", .opset = 13, .inputs = {In("x", R(DataType::kFloat, {2, 5, 7}, -5, 5))}, .attributes = {Int("axis", 1)}};
  EXPECT_TRUE(MatchesRef(middle, "cuda"));
  OpTest flat{.op = "Softmax", .opset = 11, .inputs = {In("x", R(DataType::kFloat, {2, 5, 7}, -5, 5))}, .attributes = {Int("axis", 1)}};
  EXPECT_TRUE(MatchesRef(flat, "cuda"));
  OpTest ln3{.op = "LayerNormalization", .opset = 17,
             .inputs = {In("x", R(DataType::kFloat, {2, 3, 4, 5})), Const("s", R(DataType::kFloat, {4, 5}))},
             .attributes = {Int("axis", 2)}};
  ln3.rtol = 1e-4;
  ln3.atol = 1e-5;
  EXPECT_TRUE(MatchesRef(ln3, "cuda"));
  OpTest bn{.op = "BatchNormalization", .opset = 15,
            .inputs = {In("x", R(DataType::kFloat, {2, 3, 5, 5})), Const("s", R(DataType::kFloat, {3})), Const("b", R(DataType::kFloat, {3})),
                       Const("m", R(DataType::kFloat, {3})), Const("v", R(DataType::kFloat, {3}, 0.5, 2))}};
  bn.rtol = 1e-5;
  bn.atol = 1e-5;
  EXPECT_TRUE(MatchesRef(bn, "cuda"));
}

TEST_F(CudaDevice, Reductions) {
  for (const char* op : {"ReduceMean", "ReduceSum", "ReduceMax"}) {
    const int opset = std::string(op) == "ReduceSum" ? 13 : 18;
    for (std::vector<int64_t> axes : {std::vector<int64_t>{1}, {0, 2}, {-1}, {0, 1, 2}}) {
      for (int keep : {0, 1}) {
        OpTest t{.op = op, .opset = opset,
                 .inputs = {In("x", R(DataType::kFloat, {3, 40, 50})), Const("axes", I64({static_cast<int64_t>(axes.size())}, axes))},
                 .attributes = {Int("keepdims", keep)}};
        t.rtol = 1e-4;
        t.atol = 1e-4;
        EXPECT_TRUE(MatchesRef(t, "cuda")) << op << " axes " << axes.size() << " keepdims " << keep;
      }
    }
    OpTest all{.op = op, .opset = opset, .inputs = {In("x", R(DataType::kFloat16, {8, 9}))}};
    Tol(all, DataType::kFloat16);
    EXPECT_TRUE(MatchesRef(all, "cuda")) << op << " float16, every axis";
  }
  OpTest old{.op = "ReduceMean", .opset = 13, .inputs = {In("x", R(DataType::kFloat, {4, 6}))}, .attributes = {Ints("axes", {1})}};
  old.rtol = 1e-5;
  EXPECT_TRUE(MatchesRef(old, "cuda"));
  for (const char* op : {"GlobalAveragePool", "GlobalMaxPool"}) {
    OpTest t{.op = op, .opset = 1, .inputs = {In("x", R(DataType::kFloat, {2, 64, 7, 7}))}};
    t.rtol = 1e-5;
    EXPECT_TRUE(MatchesRef(t, "cuda")) << op;
  }
}

TEST_F(CudaDevice, DataMovement) {
  OpTest tr{.op = "Transpose", .opset = 13, .inputs = {In("x", R(DataType::kFloat, {2, 3, 4, 5}))}, .attributes = {Ints("perm", {0, 2, 1, 3})}};
  EXPECT_TRUE(MatchesRef(tr, "cuda"));
  OpTest tr16{.op = "Transpose", .opset = 13, .inputs = {In("x", R(DataType::kFloat16, {7, 9}))}};
  EXPECT_TRUE(MatchesRef(tr16, "cuda"));
  OpTest sl{.op = "Slice", .opset = 13,
            .inputs = {In("x", R(DataType::kFloat, {5, 6, 7})), Const("s", I64({2}, {1, -1})), Const("e", I64({2}, {100, -100})),
                       Const("a", I64({2}, {0, 2})), Const("st", I64({2}, {2, -3}))}};
  EXPECT_TRUE(MatchesRef(sl, "cuda"));
  OpTest ga{.op = "Gather", .opset = 13,
            .inputs = {In("x", R(DataType::kFloat, {10, 8})), Const("i", I64({2, 3}, {0, 9, -1, 3, 3, -10}))}};
  EXPECT_TRUE(MatchesRef(ga, "cuda"));
  OpTest ga1{.op = "Gather", .opset = 13,
             .inputs = {In("x", R(DataType::kInt64, {4, 5, 6}, -9, 9)), In("i", I64({4}, {4, 0, -5, 2}))}, .attributes = {Int("axis", 1)}};
  EXPECT_TRUE(MatchesRef(ga1, "cuda"));
  OpTest bad{.op = "Gather", .opset = 13, .inputs = {In("x", R(DataType::kFloat, {3, 2})), In("i", I64({1}, {3}))}};
  EXPECT_THROW(testing::RunOn(bad, {"cuda"}, true, 1), Error);
  OpTest cat{.op = "Concat", .opset = 13,
             .inputs = {In("a", R(DataType::kFloat, {2, 3, 4})), In("b", R(DataType::kFloat, {2, 1, 4})), In("c", R(DataType::kFloat, {2, 0, 4}))},
             .attributes = {Int("axis", 1)}};
  EXPECT_TRUE(MatchesRef(cat, "cuda"));
  OpTest cat0{.op = "Concat", .opset = 13, .inputs = {In("a", R(DataType::kInt64, {2, 3}, -9, 9)), In("b", R(DataType::kInt64, {1, 3}, -9, 9))},
              .attributes = {Int("axis", 0)}};
  EXPECT_TRUE(MatchesRef(cat0, "cuda"));
}

TEST_F(CudaDevice, Views) {
  OpTest rs{.op = "Reshape", .opset = 14, .inputs = {In("x", R(DataType::kFloat, {2, 3, 4})), Const("s", I64({2}, {0, -1}))}};
  EXPECT_TRUE(MatchesRef(rs, "cuda"));
  OpTest fl{.op = "Flatten", .opset = 13, .inputs = {In("x", R(DataType::kFloat, {2, 3, 4}))}, .attributes = {Int("axis", 2)}};
  EXPECT_TRUE(MatchesRef(fl, "cuda"));
  OpTest sq{.op = "Squeeze", .opset = 13, .inputs = {In("x", R(DataType::kFloat, {1, 3, 1})), Const("a", I64({1}, {0}))}};
  EXPECT_TRUE(MatchesRef(sq, "cuda"));
  OpTest sq11{.op = "Squeeze", .opset = 11, .inputs = {In("x", R(DataType::kFloat, {1, 3, 1}))}};
  EXPECT_TRUE(MatchesRef(sq11, "cuda"));
  OpTest us{.op = "Unsqueeze", .opset = 13, .inputs = {In("x", R(DataType::kFloat, {3, 4})), Const("a", I64({2}, {0, 3}))}};
  EXPECT_TRUE(MatchesRef(us, "cuda"));
  OpTest id{.op = "Identity", .opset = 16, .inputs = {In("x", R(DataType::kBFloat16, {5}))}};
  EXPECT_TRUE(MatchesRef(id, "cuda"));
}

TEST_F(CudaDevice, MatMulAndGemm) {
  const std::vector<std::pair<Shape, Shape>> shapes = {
      {{64, 32}, {32, 48}}, {{3, 17, 9}, {3, 9, 5}}, {{2, 1, 4, 6}, {1, 3, 6, 5}}, {{6}, {6, 4}}, {{2, 3, 6}, {6}}, {{4, 7, 8}, {8, 3}}};
  for (const auto& [sa, sb] : shapes) {
    for (DataType dt : {DataType::kFloat, DataType::kFloat16, DataType::kBFloat16}) {
      OpTest t{.op = "MatMul", .opset = 13, .inputs = {In("a", R(dt, sa)), In("b", R(dt, sb))}};
      Tol(t, dt, 1e-4, 1e-4);
      if (dt != DataType::kFloat) t.rtol = t.atol = 3e-2;
      EXPECT_TRUE(MatchesRef(t, "cuda")) << ShapeToString(sa) << " x " << ShapeToString(sb) << " " << DataTypeName(dt);
    }
  }
  for (int ta : {0, 1}) {
    for (int tb : {0, 1}) {
      OpTest g{.op = "Gemm", .opset = 13,
               .inputs = {In("a", R(DataType::kFloat, ta ? Shape{7, 5} : Shape{5, 7})),
                          Const("b", R(DataType::kFloat, tb ? Shape{9, 7} : Shape{7, 9})), Const("c", R(DataType::kFloat, {9}))},
               .attributes = {Int("transA", ta), Int("transB", tb), Float("alpha", 0.5f), Float("beta", 2.f)}};
      g.rtol = g.atol = 1e-4;
      EXPECT_TRUE(MatchesRef(g, "cuda")) << "transA " << ta << " transB " << tb;
    }
  }
  OpTest noc{.op = "Gemm", .opset = 13, .inputs = {In("a", R(DataType::kFloat16, {4, 8})), Const("b", R(DataType::kFloat16, {8, 3}))}};
  noc.rtol = noc.atol = 3e-2;
  EXPECT_TRUE(MatchesRef(noc, "cuda"));
}

TEST_F(CudaDevice, ConvAndPooling) {
  struct Case {
    Shape x, w;
    std::vector<onnx::AttributeProto> attrs;
    bool bias;
  };
  const std::vector<Case> cases = {
      {{1, 3, 16, 16}, {8, 3, 3, 3}, {Ints("pads", {1, 1, 1, 1})}, true},
      {{2, 8, 15, 15}, {8, 1, 3, 3}, {Ints("pads", {1, 1, 1, 1}), Int("group", 8), Ints("strides", {2, 2})}, true},
      {{1, 4, 12, 12}, {6, 2, 3, 3}, {Int("group", 2), Ints("dilations", {2, 2})}, false},
      {{1, 16, 7, 7}, {32, 16, 1, 1}, {}, true}};
  for (const Case& c : cases) {
    for (DataType dt : {DataType::kFloat, DataType::kFloat16}) {
      OpTest t{.op = "Conv", .opset = 11, .inputs = {In("x", R(dt, c.x)), Const("w", R(dt, c.w))}, .attributes = c.attrs};
      if (c.bias) t.inputs.push_back(Const("b", R(dt, {c.w[0]})));
      t.rtol = t.atol = dt == DataType::kFloat ? 1e-4 : 3e-2;
      EXPECT_TRUE(MatchesRef(t, "cuda")) << ShapeToString(c.x) << " * " << ShapeToString(c.w) << " " << DataTypeName(dt);
    }
  }
  OpTest mp{.op = "MaxPool", .opset = 12, .inputs = {In("x", R(DataType::kFloat, {2, 3, 11, 11}))},
            .attributes = {Ints("kernel_shape", {3, 3}), Ints("strides", {2, 2}), Ints("pads", {1, 1, 1, 1})}};
  EXPECT_TRUE(MatchesRef(mp, "cuda"));
  for (int include : {0, 1}) {
    OpTest ap{.op = "AveragePool", .opset = 19, .inputs = {In("x", R(DataType::kFloat, {1, 4, 9, 9}))},
              .attributes = {Ints("kernel_shape", {3, 3}), Ints("pads", {1, 1, 1, 1}), Int("count_include_pad", include)}};
    ap.rtol = 1e-5;
    EXPECT_TRUE(MatchesRef(ap, "cuda")) << "count_include_pad " << include;
  }
}

// A real model end to end: the quickstart CNN on cuda,cpu matches ref within float32 tolerance.
TEST_F(CudaDevice, QuickstartModelMatchesRef) {
  const char* src = std::getenv("FERRY_SOURCE_DIR");
  const std::string path = std::string(src ? src : FERRY_SOURCE_DIR) + "/models/quickstart_cnn.onnx";
  SessionOptions cuda_options;
  cuda_options.backends = {"cuda", "cpu"};
  SessionOptions ref_options;
  ref_options.backends = {"ref"};
  auto on_cuda = Session::Create(path, cuda_options);
  auto on_ref = Session::Create(path, ref_options);
  size_t native = 0;
  for (const auto& n : on_cuda->placement().nodes) native += n.backend == "cuda";
  EXPECT_GT(native, 0u);
  const auto& input = on_ref->inputs().at(0);
  Shape shape;
  for (int64_t d : input.dims) shape.push_back(d < 0 ? 1 : d);
  const Tensor x = R(DataType::kFloat, shape);
  const auto got = on_cuda->Run({{input.name, x}});
  const auto want = on_ref->Run({{input.name, x}});
  ASSERT_EQ(got.size(), want.size());
  for (size_t i = 0; i < got.size(); ++i) EXPECT_TRUE(testing::TensorsClose(got[i].second, want[i].second, 1e-3, 1e-4));
}

}  // namespace
}  // namespace ferry
