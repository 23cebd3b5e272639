// Reference kernels on the element types the ONNX schemas allow beyond the common numeric ones (the dtypes
// RefCoverage.EveryDtypeTheSchemaAllows requires): complex Where / Col2Im / GridSample / Resize / Upsample /
// Unique, bool and string data movement in Col2Im and GridSample (and the predicates refusing interpolation on
// them), a bfloat16 GridSample-20 grid, float8e8m0 Quantize/DequantizeLinear scales, float8 QLinearMatMul-21 and
// integer Attention masks.
#include <gtest/gtest.h>
#include <onnx/onnx_pb.h>

#include <cmath>
#include <complex>
#include <functional>
#include <limits>
#include <string>
#include <vector>

#include "core/float8.h"
#include "ferry/float16.h"
#include "ferry/session.h"
#include "testing/op_harness.h"

namespace ferry {
namespace {

using C64 = std::complex<float>;
using C128 = std::complex<double>;
using Input = testing::NodeInput;

// A one-node model on the ref backend alone, outputs y0, y1, ...
std::unique_ptr<Session> OneNode(const std::string& op, const std::vector<Input>& inputs, int outputs, int opset,
                                 const std::function<void(onnx::NodeProto&)>& configure = {}) {
  std::vector<std::string> out;
  for (int i = 0; i < outputs; ++i) out.push_back("y" + std::to_string(i));
  return testing::OneNodeSession(op, inputs, out, opset, configure, testing::OnlyBackend("ref", 2));
}

void IntAttr(onnx::NodeProto& n, const std::string& name, int64_t v) { *n.add_attribute() = testing::Int(name, v); }
void IntsAttr(onnx::NodeProto& n, const std::string& name, const std::vector<int64_t>& v) {
  *n.add_attribute() = testing::Ints(name, v);
}
void StrAttr(onnx::NodeProto& n, const std::string& name, const std::string& v) {
  *n.add_attribute() = testing::Str(name, v);
}

template <typename T>
Tensor Make(DataType dt, Shape shape, const std::vector<T>& v) {
  return Tensor::FromVector<T>(dt, std::move(shape), v);
}
Tensor Ints(const std::vector<int64_t>& v) {
  return Make<int64_t>(DataType::kInt64, {static_cast<int64_t>(v.size())}, v);
}
Tensor Floats(Shape shape, const std::vector<float>& v) { return Make<float>(DataType::kFloat, std::move(shape), v); }
// A tensor of 8-bit codes (float8 types).
Tensor Codes(DataType dt, Shape shape, const std::vector<uint8_t>& v) { return Make<uint8_t>(dt, std::move(shape), v); }

std::vector<Tensor> RunNode(const Session& s, const std::vector<std::pair<std::string, Tensor>>& in) {
  std::vector<Tensor> out;
  for (auto& [name, t] : s.Run(in)) out.push_back(t);
  return out;
}

template <typename T>
std::vector<T> Values(const Tensor& t) {
  return std::vector<T>(t.data<T>(), t.data<T>() + t.size());
}
std::vector<std::string> Strings(const Tensor& t) {
  return std::vector<std::string>(t.strings(), t.strings() + t.size());
}

// The message of the ferry::Error `fn` throws ("" when it does not throw).
std::string ErrorOf(const std::function<void()>& fn) {
  try {
    fn();
  } catch (const Error& e) {
    return e.what();
  }
  return "";
}

TEST(DtypeCoverage, WhereSelectsComplex) {
  auto s = OneNode("Where", {{"c", DataType::kBool}, {"x", DataType::kComplex64}, {"y", DataType::kComplex64}}, 1, 16);
  Tensor c = Make<bool>(DataType::kBool, {2, 1}, {true, false});
  Tensor x = Make<C64>(DataType::kComplex64, {3}, {{1, 2}, {3, -4}, {5, 0.5f}});
  Tensor y = Make<C64>(DataType::kComplex64, {}, {{-7, 8}});
  Tensor out = RunNode(*s, {{"c", c}, {"x", x}, {"y", y}})[0];
  ASSERT_EQ(out.dtype(), DataType::kComplex64);
  ASSERT_EQ(out.shape(), (Shape{2, 3}));
  EXPECT_EQ(Values<C64>(out), (std::vector<C64>{{1, 2}, {3, -4}, {5, 0.5f}, {-7, 8}, {-7, 8}, {-7, 8}}));

  auto d = OneNode("Where", {{"c", DataType::kBool}, {"x", DataType::kComplex128}, {"y", DataType::kComplex128}}, 1, 9);
  Tensor xd = Make<C128>(DataType::kComplex128, {2}, {{1e300, -1}, {2, 3}});
  Tensor yd = Make<C128>(DataType::kComplex128, {2}, {{0, 0}, {-2, -3}});
  Tensor od = RunNode(*d, {{"c", Make<bool>(DataType::kBool, {2}, {false, true})}, {"x", xd}, {"y", yd}})[0];
  EXPECT_EQ(Values<C128>(od), (std::vector<C128>{{0, 0}, {2, 3}}));
}

// Col2Im of image [1, 4] from blocks [1, 2]: with stride 1 the 3 blocks overlap (pixel w sums tap t of block
// w - t); with stride 2 the 2 blocks tile the image.
TEST(DtypeCoverage, Col2ImSumsComplexOrsBoolAndMovesStrings) {
  const std::vector<Input> in = {{"x", DataType::kComplex64}, {"i", DataType::kInt64}, {"b", DataType::kInt64}};
  auto cs = OneNode("Col2Im", in, 1, 18);
  Tensor cx = Make<C64>(DataType::kComplex64, {1, 2, 3}, {{1, 1}, {2, 2}, {3, 3}, {10, -1}, {20, -2}, {30, -3}});
  Tensor cy = RunNode(*cs, {{"x", cx}, {"i", Ints({1, 4})}, {"b", Ints({1, 2})}})[0];
  ASSERT_EQ(cy.shape(), (Shape{1, 1, 1, 4}));
  EXPECT_EQ(Values<C64>(cy), (std::vector<C64>{{1, 1}, {12, 1}, {23, 1}, {30, -3}}));

  // bool: numpy's `+=` on a bool array (the ONNX reference) is a logical or.
  auto bs = OneNode("Col2Im", {{"x", DataType::kBool}, {"i", DataType::kInt64}, {"b", DataType::kInt64}}, 1, 18);
  Tensor bx = Make<bool>(DataType::kBool, {1, 2, 3}, {true, true, false, true, false, true});
  Tensor by = RunNode(*bs, {{"x", bx}, {"i", Ints({1, 4})}, {"b", Ints({1, 2})}})[0];
  EXPECT_EQ(Values<bool>(by), (std::vector<bool>{true, true, false, true}));

  // string: blocks that tile the image are moved; overlapping ones would need a sum.
  auto ss = OneNode("Col2Im", {{"x", DataType::kString}, {"i", DataType::kInt64}, {"b", DataType::kInt64}}, 1, 18,
                    [](onnx::NodeProto& n) { IntsAttr(n, "strides", {1, 2}); });
  Tensor sx = Make<std::string>(DataType::kString, {1, 2, 2}, {"a", "c", "b", "d"});
  Tensor sy = RunNode(*ss, {{"x", sx}, {"i", Ints({1, 4})}, {"b", Ints({1, 2})}})[0];
  EXPECT_EQ(Strings(sy), (std::vector<std::string>{"a", "b", "c", "d"}));
  // Padding that drops a block's taps is still only data movement: image [1, 3], pads 1 on the right.
  auto sp = OneNode("Col2Im", {{"x", DataType::kString}, {"i", DataType::kInt64}, {"b", DataType::kInt64}}, 1, 18,
                    [](onnx::NodeProto& n) {
                      IntsAttr(n, "strides", {1, 2});
                      IntsAttr(n, "pads", {0, 0, 0, 1});
                    });
  Tensor spy = RunNode(*sp, {{"x", sx}, {"i", Ints({1, 3})}, {"b", Ints({1, 2})}})[0];
  EXPECT_EQ(Strings(spy), (std::vector<std::string>{"a", "b", "c"}));

  auto so = OneNode("Col2Im", {{"x", DataType::kString}, {"i", DataType::kInt64}, {"b", DataType::kInt64}}, 1, 18);
  Tensor ox = Make<std::string>(DataType::kString, {1, 2, 3}, {"a", "b", "c", "d", "e", "f"});
  const std::string err = ErrorOf([&] { RunNode(*so, {{"x", ox}, {"i", Ints({1, 4})}, {"b", Ints({1, 2})}}); });
  EXPECT_NE(err.find("overlapping blocks"), std::string::npos) << err;

  // With constant image_shape and block_shape the predicate refuses the overlapping string case up front.
  testing::OpTest t{.op = "Col2Im",
                    .opset = 18,
                    .inputs = {testing::In("x", ox), testing::Const("i", Ints({1, 4})),
                               testing::Const("b", Ints({1, 2}))}};
  const std::string why = ErrorOf([&] { testing::SessionFor(testing::OneNodeModel(t), {"ref"}, true, 1); });
  EXPECT_NE(why.find("Col2Im: overlapping blocks would have to be summed, and tensor(string) has no sum"),
            std::string::npos)
      << why;
}

// GridSample over X [1, 1, 2, 2] at four points (align_corners): the corners (0,0), (1,1), (x=1, y=0), and one
// far outside (zeros padding).
TEST(DtypeCoverage, GridSampleNearestOnStringsAndBools) {
  const Tensor grid = Floats({1, 1, 4, 2}, {-1, -1, 1, 1, 1, -1, 3, 3});
  auto cfg = [](onnx::NodeProto& n) {
    StrAttr(n, "mode", "nearest");
    IntAttr(n, "align_corners", 1);
  };
  auto s = OneNode("GridSample", {{"x", DataType::kString}, {"g", DataType::kFloat}}, 1, 20, cfg);
  Tensor sx = Make<std::string>(DataType::kString, {1, 1, 2, 2}, {"a", "b", "c", "d"});
  Tensor sy = RunNode(*s, {{"x", sx}, {"g", grid}})[0];
  ASSERT_EQ(sy.shape(), (Shape{1, 1, 1, 4}));
  EXPECT_EQ(Strings(sy), (std::vector<std::string>{"a", "d", "b", ""}));

  auto b = OneNode("GridSample", {{"x", DataType::kBool}, {"g", DataType::kFloat}}, 1, 16, cfg);
  Tensor bx = Make<bool>(DataType::kBool, {1, 1, 2, 2}, {true, false, true, true});
  Tensor by = RunNode(*b, {{"x", bx}, {"g", grid}})[0];
  EXPECT_EQ(Values<bool>(by), (std::vector<bool>{true, true, false, false}));

  // The interpolating modes are refused for them, naming the mode and type (16's default mode is bilinear).
  const std::string lin = ErrorOf([&] {
    OneNode("GridSample", {{"x", DataType::kString}, {"g", DataType::kFloat}}, 1, 20,
            [](onnx::NodeProto& n) { StrAttr(n, "mode", "linear"); });
  });
  EXPECT_NE(lin.find("GridSample: mode=linear on tensor(string) is not defined; only nearest"), std::string::npos)
      << lin;
  const std::string bil =
      ErrorOf([&] { OneNode("GridSample", {{"x", DataType::kBool}, {"g", DataType::kFloat}}, 1, 16); });
  EXPECT_NE(bil.find("GridSample: mode=bilinear on tensor(bool) is not defined; only nearest"), std::string::npos)
      << bil;
}

TEST(DtypeCoverage, GridSampleInterpolatesComplexAndTakesABfloat16Grid) {
  // X [1, 1, 1, 2]; the grid point (0, 0) with align_corners lies halfway between the two pixels.
  auto cfg = [](onnx::NodeProto& n) { IntAttr(n, "align_corners", 1); };
  auto s = OneNode("GridSample", {{"x", DataType::kComplex128}, {"g", DataType::kFloat}}, 1, 20, cfg);
  Tensor x = Make<C128>(DataType::kComplex128, {1, 1, 1, 2}, {{1, 2}, {3, -4}});
  Tensor y = RunNode(*s, {{"x", x}, {"g", Floats({1, 1, 1, 2}, {0, 0})}})[0];
  ASSERT_EQ(y.dtype(), DataType::kComplex128);
  EXPECT_EQ(Values<C128>(y), (std::vector<C128>{{2, -1}}));

  // Cubic on complex64: the weights are real, so each part interpolates as a float image would.
  auto cubic = [](onnx::NodeProto& n) {
    IntAttr(n, "align_corners", 1);
    StrAttr(n, "mode", "cubic");
  };
  auto cc = OneNode("GridSample", {{"x", DataType::kComplex64}, {"g", DataType::kFloat}}, 1, 20, cubic);
  auto cf = OneNode("GridSample", {{"x", DataType::kFloat}, {"g", DataType::kFloat}}, 1, 20, cubic);
  const std::vector<float> re = {1, 4, -2, 8, 0.5f, 3, 7, -1, 2}, im = {0, -3, 5, 1, 2, -6, 4, 4, -1};
  std::vector<C64> xc;
  for (size_t i = 0; i < re.size(); ++i) xc.emplace_back(re[i], im[i]);
  const Tensor g = Floats({1, 2, 1, 2}, {0.3f, -0.2f, -0.7f, 0.9f});
  Tensor yc = RunNode(*cc, {{"x", Make<C64>(DataType::kComplex64, {1, 1, 3, 3}, xc)}, {"g", g}})[0];
  Tensor yr = RunNode(*cf, {{"x", Floats({1, 1, 3, 3}, re)}, {"g", g}})[0];
  Tensor yi = RunNode(*cf, {{"x", Floats({1, 1, 3, 3}, im)}, {"g", g}})[0];
  ASSERT_EQ(yc.size(), 2);
  for (int64_t i = 0; i < yc.size(); ++i) {
    EXPECT_NEAR(yc.data<C64>()[i].real(), yr.data<float>()[i], 1e-5) << i;
    EXPECT_NEAR(yc.data<C64>()[i].imag(), yi.data<float>()[i], 1e-5) << i;
  }

  // GridSample-20 takes a bfloat16 grid (16 does not).
  auto bf = OneNode("GridSample", {{"x", DataType::kFloat}, {"g", DataType::kBFloat16}}, 1, 20, cfg);
  Tensor gb = Make<BFloat16>(DataType::kBFloat16, {1, 1, 1, 2}, {BFloat16(0.0f), BFloat16(0.0f)});
  Tensor yb = RunNode(*bf, {{"x", Floats({1, 1, 1, 2}, {1, 3})}, {"g", gb}})[0];
  EXPECT_EQ(Values<float>(yb), (std::vector<float>{2}));
}

TEST(DtypeCoverage, ResizeAndUpsampleComplex) {
  // Linear, align_corners, [2] -> [4]: samples at 0, 1/3, 2/3, 1.
  auto s = OneNode("Resize", {{"x", DataType::kComplex64}, {"", DataType::kUndefined}, {"s", DataType::kFloat}}, 1, 13,
                   [](onnx::NodeProto& n) {
                     StrAttr(n, "mode", "linear");
                     StrAttr(n, "coordinate_transformation_mode", "align_corners");
                   });
  Tensor x = Make<C64>(DataType::kComplex64, {2}, {{1, 2}, {4, -1}});
  Tensor y = RunNode(*s, {{"x", x}, {"s", Floats({1}, {2})}})[0];
  ASSERT_EQ(y.shape(), (Shape{4}));
  const std::vector<C64> want = {{1, 2}, {2, 1}, {3, 0}, {4, -1}};
  for (size_t i = 0; i < want.size(); ++i) {
    EXPECT_NEAR(y.data<C64>()[i].real(), want[i].real(), 1e-6) << i;
    EXPECT_NEAR(y.data<C64>()[i].imag(), want[i].imag(), 1e-6) << i;
  }

  // tf_crop_and_resize outside the roi gives the (real) extrapolation value.
  auto e = OneNode("Resize", {{"x", DataType::kComplex128}, {"r", DataType::kFloat}, {"s", DataType::kFloat}}, 1, 11,
                   [](onnx::NodeProto& n) {
                     StrAttr(n, "mode", "linear");
                     StrAttr(n, "coordinate_transformation_mode", "tf_crop_and_resize");
                     *n.add_attribute() = testing::Float("extrapolation_value", 9);
                   });
  Tensor xe = Make<C128>(DataType::kComplex128, {2}, {{1, 2}, {4, -1}});
  Tensor ye = RunNode(*e, {{"x", xe}, {"r", Floats({2}, {0, 2})}, {"s", Floats({1}, {1.5f})}})[0];
  ASSERT_EQ(ye.shape(), (Shape{3}));
  EXPECT_EQ(Values<C128>(ye), (std::vector<C128>{{1, 2}, {4, -1}, {9, 0}}));

  // Upsample-9 nearest on complex128.
  auto u = OneNode("Upsample", {{"x", DataType::kComplex128}, {"s", DataType::kFloat}}, 1, 9);
  Tensor xu = Make<C128>(DataType::kComplex128, {1, 2}, {{1, -1}, {2, 5}});
  Tensor yu = RunNode(*u, {{"x", xu}, {"s", Floats({2}, {1, 2})}})[0];
  EXPECT_EQ(Values<C128>(yu), (std::vector<C128>{{1, -1}, {1, -1}, {2, 5}, {2, 5}}));

  // Linear on bool or string is refused by the predicates, naming mode and type.
  const std::string r = ErrorOf([&] {
    OneNode("Resize", {{"x", DataType::kBool}, {"", DataType::kUndefined}, {"s", DataType::kFloat}}, 1, 13,
            [](onnx::NodeProto& n) { StrAttr(n, "mode", "cubic"); });
  });
  EXPECT_NE(r.find("Resize: mode=cubic on tensor(bool) is not defined; only nearest"), std::string::npos) << r;
  const std::string up = ErrorOf([&] {
    OneNode("Upsample", {{"x", DataType::kString}, {"s", DataType::kFloat}}, 1, 9,
            [](onnx::NodeProto& n) { StrAttr(n, "mode", "linear"); });
  });
  EXPECT_NE(up.find("Upsample: mode=linear on tensor(string) is not defined; only nearest"), std::string::npos) << up;
}

TEST(DtypeCoverage, UniqueComplexSortsByRealThenImaginary) {
  const float nan = std::numeric_limits<float>::quiet_NaN();
  Tensor x = Make<C64>(DataType::kComplex64, {7}, {{2, 1}, {1, 5}, {2, 1}, {1, -1}, {nan, 0}, {2, 0}, {0, nan}});
  auto s = OneNode("Unique", {{"x", DataType::kComplex64}}, 4, 11);
  auto out = RunNode(*s, {{"x", x}});
  ASSERT_EQ(out[0].shape(), (Shape{5}));
  const std::vector<C64> y = Values<C64>(out[0]);
  EXPECT_EQ(std::vector<C64>(y.begin(), y.begin() + 4), (std::vector<C64>{{1, -1}, {1, 5}, {2, 0}, {2, 1}}));
  EXPECT_TRUE(std::isnan(y[4].real()));  // the NaNs form one group, represented by its first occurrence
  EXPECT_EQ(Values<int64_t>(out[1]), (std::vector<int64_t>{3, 1, 5, 0, 4}));
  EXPECT_EQ(Values<int64_t>(out[2]), (std::vector<int64_t>{3, 1, 3, 0, 4, 2, 4}));
  EXPECT_EQ(Values<int64_t>(out[3]), (std::vector<int64_t>{1, 1, 1, 2, 2}));

  auto u =
      OneNode("Unique", {{"x", DataType::kComplex128}}, 4, 11, [](onnx::NodeProto& n) { IntAttr(n, "sorted", 0); });
  Tensor xd = Make<C128>(DataType::kComplex128, {5}, {{2, 1}, {1, 5}, {2, 1}, {1, -1}, {2, 0}});
  auto ud = RunNode(*u, {{"x", xd}});
  EXPECT_EQ(Values<C128>(ud[0]), (std::vector<C128>{{2, 1}, {1, 5}, {1, -1}, {2, 0}}));
  EXPECT_EQ(Values<int64_t>(ud[1]), (std::vector<int64_t>{0, 1, 3, 4}));
  EXPECT_EQ(Values<int64_t>(ud[2]), (std::vector<int64_t>{0, 1, 0, 2, 3}));
  EXPECT_EQ(Values<int64_t>(ud[3]), (std::vector<int64_t>{2, 1, 1, 1}));
}

TEST(DtypeCoverage, QuantizeAndDequantizeWithFloat8E8M0Scales) {
  // Code 126 is 2^-1; code 130 is 2^3.
  const Tensor half = Codes(DataType::kFloat8E8M0, {}, {126});
  auto q = OneNode("QuantizeLinear", {{"x", DataType::kFloat}, {"s", DataType::kFloat8E8M0}, {"z", DataType::kInt8}},
                   1, 24);
  Tensor y = RunNode(*q, {{"x", Floats({5}, {1, 2, 3.25f, -300, 0.25f})},
                          {"s", half},
                          {"z", Make<int8_t>(DataType::kInt8, {}, {1})}})[0];
  ASSERT_EQ(y.dtype(), DataType::kInt8);
  // x / 0.5 = 2, 4, 6.5, -600, 0.5 -> round half to even, + 1, saturate.
  EXPECT_EQ(Values<int8_t>(y), (std::vector<int8_t>{3, 5, 7, -128, 1}));

  // Per-axis e8m0 scales into float8e4m3fn (opset 25).
  auto q8 = OneNode("QuantizeLinear",
                    {{"x", DataType::kFloat}, {"s", DataType::kFloat8E8M0}, {"z", DataType::kFloat8E4M3FN}}, 1, 25,
                    [](onnx::NodeProto& n) { IntAttr(n, "axis", 0); });
  Tensor y8 = RunNode(*q8, {{"x", Floats({2, 2}, {3, -5, 3, 960})},
                            {"s", Codes(DataType::kFloat8E8M0, {2}, {126, 130})},
                            {"z", Codes(DataType::kFloat8E4M3FN, {2}, {0, 0})}})[0];
  ASSERT_EQ(y8.dtype(), DataType::kFloat8E4M3FN);
  std::vector<float> got;
  for (uint8_t c : Values<uint8_t>(y8)) got.push_back(Float8E4M3FNToFloat(c));
  EXPECT_EQ(got, (std::vector<float>{6, -10, 0.375f, 120}));

  auto dq = OneNode("DequantizeLinear", {{"x", DataType::kInt8}, {"s", DataType::kFloat8E8M0}}, 1, 24,
                    [](onnx::NodeProto& n) { IntAttr(n, "output_dtype", static_cast<int>(DataType::kFloat16)); });
  Tensor d = RunNode(*dq, {{"x", Make<int8_t>(DataType::kInt8, {3}, {2, -3, 127})},
                           {"s", Codes(DataType::kFloat8E8M0, {}, {130})}})[0];
  ASSERT_EQ(d.dtype(), DataType::kFloat16);
  EXPECT_EQ(static_cast<float>(d.data<Float16>()[0]), 16.0f);
  EXPECT_EQ(static_cast<float>(d.data<Float16>()[1]), -24.0f);
  EXPECT_EQ(static_cast<float>(d.data<Float16>()[2]), 1016.0f);

  // Without output_dtype y would be float8e8m0, which T3 does not allow.
  const std::string why = ErrorOf([&] {
    auto s = OneNode("DequantizeLinear", {{"x", DataType::kInt8}, {"s", DataType::kFloat8E8M0}}, 1, 24);
    RunNode(*s, {{"x", Make<int8_t>(DataType::kInt8, {1}, {2})}, {"s", Codes(DataType::kFloat8E8M0, {}, {130})}});
  });
  EXPECT_NE(why.find("output_dtype"), std::string::npos) << why;
}

TEST(DtypeCoverage, QLinearMatMulFloat8) {
  auto s = OneNode("QLinearMatMul",
                   {{"a", DataType::kFloat8E4M3FN},
                    {"as", DataType::kFloat},
                    {"az", DataType::kFloat8E4M3FN},
                    {"b", DataType::kFloat8E4M3FN},
                    {"bs", DataType::kFloat},
                    {"bz", DataType::kFloat8E4M3FN},
                    {"ys", DataType::kFloat},
                    {"yz", DataType::kFloat8E4M3FN}},
                   1, 21);
  auto f8 = [](std::vector<double> v) {
    std::vector<uint8_t> c;
    for (double x : v) c.push_back(DoubleToFloat8E4M3FN(x));
    return c;
  };
  const Tensor zero = Codes(DataType::kFloat8E4M3FN, {}, f8({0}));
  // acc = [1.5, -2] . [[2, 448], [0.5, 448]] = [2, -224]; scale 1 * 2 / 0.5 = 4 -> [8, -896 -> saturated -448].
  Tensor y = RunNode(*s, {{"a", Codes(DataType::kFloat8E4M3FN, {1, 2}, f8({1.5, -2}))},
                          {"as", Floats({}, {1})},
                          {"az", zero},
                          {"b", Codes(DataType::kFloat8E4M3FN, {2, 2}, f8({2, 448, 0.5, 448}))},
                          {"bs", Floats({}, {2})},
                          {"bz", zero},
                          {"ys", Floats({}, {0.5f})},
                          {"yz", zero}})[0];
  ASSERT_EQ(y.dtype(), DataType::kFloat8E4M3FN);
  ASSERT_EQ(y.shape(), (Shape{1, 2}));
  EXPECT_EQ(Float8E4M3FNToFloat(y.data<uint8_t>()[0]), 8.0f);
  EXPECT_EQ(Float8E4M3FNToFloat(y.data<uint8_t>()[1]), -448.0f);

  // Mixed: uint8 A (zero point 1) times float8e5m2 B into uint8 y (zero point 10).
  auto m = OneNode("QLinearMatMul",
                   {{"a", DataType::kUint8},
                    {"as", DataType::kFloat},
                    {"az", DataType::kUint8},
                    {"b", DataType::kFloat8E5M2},
                    {"bs", DataType::kFloat},
                    {"bz", DataType::kFloat8E5M2},
                    {"ys", DataType::kFloat},
                    {"yz", DataType::kUint8}},
                   1, 21);
  const std::vector<uint8_t> b_codes = {DoubleToFloat8E5M2(1), DoubleToFloat8E5M2(0.5)};
  Tensor ym = RunNode(*m, {{"a", Make<uint8_t>(DataType::kUint8, {1, 2}, {3, 5})},
                           {"as", Floats({}, {1})},
                           {"az", Make<uint8_t>(DataType::kUint8, {}, {1})},
                           {"b", Codes(DataType::kFloat8E5M2, {2, 1}, b_codes)},
                           {"bs", Floats({}, {1})},
                           {"bz", Codes(DataType::kFloat8E5M2, {}, {0})},
                           {"ys", Floats({}, {1})},
                           {"yz", Make<uint8_t>(DataType::kUint8, {}, {10})}})[0];
  EXPECT_EQ(Values<uint8_t>(ym), (std::vector<uint8_t>{14}));  // (3-1)*1 + (5-1)*0.5 = 4, + 10
}

TEST(DtypeCoverage, AttentionIntegerMaskIsAdditive) {
  const std::vector<float> qv = {0.1f, 0.2f, -0.3f, 0.4f}, kv = {0.5f, -0.1f, 0.2f, 0.3f}, vv = {1, 2, 3, 4};
  std::vector<Tensor> ys;
  for (DataType mt : {DataType::kFloat, DataType::kInt64, DataType::kInt8}) {
    auto s = OneNode("Attention",
                     {{"q", DataType::kFloat}, {"k", DataType::kFloat}, {"v", DataType::kFloat}, {"m", mt}}, 1, 23);
    Tensor mask(mt, {2, 2});
    const std::vector<double> m = {0, -100, 1, 2};
    for (int64_t i = 0; i < 4; ++i) {
      if (mt == DataType::kFloat) mask.data<float>()[i] = static_cast<float>(m[static_cast<size_t>(i)]);
      if (mt == DataType::kInt64) mask.data<int64_t>()[i] = static_cast<int64_t>(m[static_cast<size_t>(i)]);
      if (mt == DataType::kInt8) mask.data<int8_t>()[i] = static_cast<int8_t>(m[static_cast<size_t>(i)]);
    }
    ys.push_back(RunNode(*s, {{"q", Floats({1, 1, 2, 2}, qv)},
                              {"k", Floats({1, 1, 2, 2}, kv)},
                              {"v", Floats({1, 1, 2, 2}, vv)},
                              {"m", mask}})[0]);
  }
  EXPECT_NEAR(ys[0].data<float>()[0], 1.0f, 1e-4);  // row 0 attends key 0 only (bias -100 on key 1)
  EXPECT_EQ(Values<float>(ys[1]), Values<float>(ys[0]));
  EXPECT_EQ(Values<float>(ys[2]), Values<float>(ys[0]));
}

}  // namespace
}  // namespace ferry
