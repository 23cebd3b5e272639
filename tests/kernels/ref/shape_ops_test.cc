// Reference kernels for tensor/shape manipulation, beyond the ONNX node tests: dtype coverage (string, bool,
// float16, sub-byte packed), the strided-copy fast paths against naive loops, and error reporting on bad indices.
#include <gtest/gtest.h>
#include <onnx/onnx_pb.h>

#include <cstring>
#include <functional>
#include <numeric>
#include <random>

#include "ferry/float16.h"
#include "ferry/session.h"
#include "testing/op_harness.h"

namespace ferry {
namespace {

using Input = testing::NodeInput;

// A one-node model on the ref backend alone (these are ref kernel tests), outputs y0, y1, ...
std::unique_ptr<Session> OneNode(const std::string& op, const std::vector<Input>& inputs, int outputs, int opset,
                                 const std::function<void(onnx::NodeProto&)>& configure = {}) {
  std::vector<std::string> out;
  for (int i = 0; i < outputs; ++i) out.push_back("y" + std::to_string(i));
  return testing::OneNodeSession(op, inputs, out, opset, configure, testing::OnlyBackend("ref", 2));
}

void IntsAttr(onnx::NodeProto& n, const std::string& name, const std::vector<int64_t>& v) {
  auto* a = n.add_attribute();
  a->set_name(name);
  a->set_type(onnx::AttributeProto::INTS);
  for (int64_t x : v) a->add_ints(x);
}
void IntAttr(onnx::NodeProto& n, const std::string& name, int64_t v) {
  auto* a = n.add_attribute();
  a->set_name(name);
  a->set_type(onnx::AttributeProto::INT);
  a->set_i(v);
}
void StringAttr(onnx::NodeProto& n, const std::string& name, const std::string& v) {
  auto* a = n.add_attribute();
  a->set_name(name);
  a->set_type(onnx::AttributeProto::STRING);
  a->set_s(v);
}

Tensor Ints(std::vector<int64_t> v) {
  return Tensor::FromVector<int64_t>(DataType::kInt64, {static_cast<int64_t>(v.size())}, v);
}

std::vector<Tensor> RunNode(const Session& s, const std::vector<std::pair<std::string, Tensor>>& in) {
  std::vector<Tensor> out;
  for (auto& [name, t] : s.Run(in)) out.push_back(t);
  return out;
}

// Reads element i of a packed 4-bit tensor.
int Nibble(const Tensor& t, int64_t i) { return (t.data<uint8_t>()[i / 2] >> ((i % 2) * 4)) & 0xf; }

TEST(ShapeOps, TransposeMatchesNaiveForAllPaths) {
  std::mt19937 rng(7);
  struct Case {
    Shape shape;
    std::vector<int64_t> perm;
  };
  // Block rows, tiled 2-D transposes (attention's K^T, NCHW<->NHWC) and odd sizes.
  const std::vector<Case> cases = {{{2, 37, 3, 16}, {0, 2, 1, 3}}, {{2, 3, 37, 19}, {0, 1, 3, 2}},
                                   {{1, 5, 33, 70}, {0, 2, 3, 1}}, {{4, 6, 5}, {2, 0, 1}},
                                   {{65, 129}, {1, 0}},             {{3, 1, 4, 1, 5}, {4, 3, 2, 1, 0}}};
  for (DataType dt : {DataType::kFloat, DataType::kUint8, DataType::kFloat16, DataType::kDouble}) {
    for (const auto& c : cases) {
      auto s = OneNode("Transpose", {{"x", dt}}, 1, 21, [&](onnx::NodeProto& n) { IntsAttr(n, "perm", c.perm); });
      Tensor x(dt, c.shape);
      for (size_t b = 0; b < x.nbytes(); ++b) static_cast<uint8_t*>(x.raw_data())[b] = static_cast<uint8_t>(rng());
      Tensor y = RunNode(*s, {{"x", x}})[0];
      const size_t es = static_cast<size_t>(DataTypeBits(dt) / 8), rank = c.shape.size();
      Shape out_shape(rank);
      for (size_t k = 0; k < rank; ++k) out_shape[k] = c.shape[static_cast<size_t>(c.perm[k])];
      ASSERT_EQ(y.shape(), out_shape);
      std::vector<int64_t> in_strides(rank, 1), idx(rank, 0);
      for (size_t k = rank - 1; k-- > 0;) in_strides[k] = in_strides[k + 1] * c.shape[k + 1];
      for (int64_t o = 0; o < y.size(); ++o) {
        int64_t src = 0;
        for (size_t k = 0; k < rank; ++k) src += idx[k] * in_strides[static_cast<size_t>(c.perm[k])];
        ASSERT_EQ(0, std::memcmp(static_cast<const uint8_t*>(y.raw_data()) + static_cast<size_t>(o) * es,
                                 static_cast<const uint8_t*>(x.raw_data()) + static_cast<size_t>(src) * es, es))
            << DataTypeName(dt) << " " << ShapeToString(c.shape) << " at " << o;
        for (size_t k = rank; k-- > 0;) {
          if (++idx[k] < out_shape[k]) break;
          idx[k] = 0;
        }
      }
    }
  }
}

TEST(ShapeOps, TransposeInt4MovesNibbles) {
  auto s = OneNode("Transpose", {{"x", DataType::kInt4}}, 1, 21);
  Tensor x(DataType::kInt4, {3, 5});
  for (int64_t i = 0; i < 15; ++i) {
    x.data<uint8_t>()[i / 2] = static_cast<uint8_t>(x.data<uint8_t>()[i / 2] | ((i & 0xf) << ((i % 2) * 4)));
  }
  Tensor y = RunNode(*s, {{"x", x}})[0];
  ASSERT_EQ(y.shape(), (Shape{5, 3}));
  for (int64_t r = 0; r < 5; ++r) {
    for (int64_t c = 0; c < 3; ++c) EXPECT_EQ(Nibble(y, r * 3 + c), Nibble(x, c * 5 + r));
  }
}

TEST(ShapeOps, SliceStringsWithNegativeStep) {
  auto s = OneNode("Slice", {{"x", DataType::kString}, {"s", DataType::kInt64}, {"e", DataType::kInt64},
                             {"a", DataType::kInt64}, {"st", DataType::kInt64}},
                   1, 13);
  Tensor x = Tensor::FromVector<std::string>(DataType::kString, {2, 4},
                                             {"a", "b", "c", "d", "e", "f", "g", "h"});
  Tensor y = RunNode(*s, {{"x", x}, {"s", Ints({-1})}, {"e", Ints({INT64_MIN})}, {"a", Ints({1})}, {"st", Ints({-2})}})[0];
  ASSERT_EQ(y.shape(), (Shape{2, 2}));
  EXPECT_EQ(y.strings()[0], "d");
  EXPECT_EQ(y.strings()[1], "b");
  EXPECT_EQ(y.strings()[2], "h");
  EXPECT_EQ(y.strings()[3], "f");
}

TEST(ShapeOps, GatherOutOfRangeNamesNodeAndInput) {
  auto s = OneNode("Gather", {{"x", DataType::kFloat}, {"i", DataType::kInt64}}, 1, 13);
  Tensor x(DataType::kFloat, {3, 2});
  try {
    RunNode(*s, {{"x", x}, {"i", Ints({0, 3})}});
    FAIL() << "expected an error";
  } catch (const Error& e) {
    EXPECT_EQ(e.category(), ErrorCategory::kInvalidArgument);
    EXPECT_NE(std::string(e.what()).find("n0"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("'indices'"), std::string::npos) << e.what();
  }
  Tensor y = RunNode(*s, {{"x", x}, {"i", Ints({-1, 0})}})[0];
  EXPECT_EQ(y.shape(), (Shape{2, 2}));
}

TEST(ShapeOps, ScatterAndGatherNDRejectBadIndices) {
  auto se = OneNode("ScatterElements", {{"x", DataType::kFloat}, {"i", DataType::kInt64}, {"u", DataType::kFloat}},
                    1, 18);
  Tensor x(DataType::kFloat, {4});
  Tensor u(DataType::kFloat, {1});
  EXPECT_THROW(RunNode(*se, {{"x", x}, {"i", Ints({4})}, {"u", u}}), InvalidArgumentError);
  EXPECT_THROW(RunNode(*se, {{"x", x}, {"i", Ints({-5})}, {"u", u}}), InvalidArgumentError);
  auto gnd = OneNode("GatherND", {{"x", DataType::kFloat}, {"i", DataType::kInt64}}, 1, 13);
  EXPECT_THROW(RunNode(*gnd, {{"x", x}, {"i", Tensor::FromVector<int64_t>(DataType::kInt64, {1, 1}, {9})}}),
               InvalidArgumentError);
  auto snd = OneNode("ScatterND", {{"x", DataType::kFloat}, {"i", DataType::kInt64}, {"u", DataType::kFloat}}, 1, 18);
  EXPECT_THROW(RunNode(*snd, {{"x", x}, {"i", Tensor::FromVector<int64_t>(DataType::kInt64, {1, 1}, {-9})}, {"u", u}}),
               InvalidArgumentError);
}

TEST(ShapeOps, ScatterElementsAddOnFloat16) {
  auto s = OneNode("ScatterElements", {{"x", DataType::kFloat16}, {"i", DataType::kInt64}, {"u", DataType::kFloat16}},
                   1, 18, [](onnx::NodeProto& n) { StringAttr(n, "reduction", "add"); });
  Tensor x(DataType::kFloat16, {3});
  Tensor u(DataType::kFloat16, {3});
  for (int i = 0; i < 3; ++i) {
    x.data<Float16>()[i] = Float16(1.0f);
    u.data<Float16>()[i] = Float16(0.5f * static_cast<float>(i + 1));
  }
  Tensor y = RunNode(*s, {{"x", x}, {"i", Ints({2, 2, 0})}, {"u", u}})[0];
  EXPECT_EQ(static_cast<float>(y.data<Float16>()[0]), 2.5f);
  EXPECT_EQ(static_cast<float>(y.data<Float16>()[1]), 1.0f);
  EXPECT_EQ(static_cast<float>(y.data<Float16>()[2]), 2.5f);
}

TEST(ShapeOps, ReshapeZeroAndInferred) {
  auto s = OneNode("Reshape", {{"x", DataType::kBool}, {"s", DataType::kInt64}}, 1, 14);
  Tensor x(DataType::kBool, {2, 3, 4});
  EXPECT_EQ(RunNode(*s, {{"x", x}, {"s", Ints({0, -1})}})[0].shape(), (Shape{2, 12}));
  EXPECT_THROW(RunNode(*s, {{"x", x}, {"s", Ints({-1, -1})}}), InvalidArgumentError);
  EXPECT_THROW(RunNode(*s, {{"x", x}, {"s", Ints({5, -1})}}), InvalidArgumentError);
  auto z = OneNode("Reshape", {{"x", DataType::kFloat}, {"s", DataType::kInt64}}, 1, 14,
                   [](onnx::NodeProto& n) { IntAttr(n, "allowzero", 1); });
  EXPECT_EQ(RunNode(*z, {{"x", Tensor(DataType::kFloat, {0, 3})}, {"s", Ints({3, 0})}})[0].shape(), (Shape{3, 0}));
}

TEST(ShapeOps, PadModesOnInt8AndUint4) {
  const std::vector<std::pair<std::string, std::vector<int8_t>>> expect = {
      {"constant", {9, 9, 1, 2, 3, 9}},
      {"edge", {1, 1, 1, 2, 3, 3}},
      {"reflect", {3, 2, 1, 2, 3, 2}},
      {"wrap", {2, 3, 1, 2, 3, 1}},
  };
  for (const auto& [mode, want] : expect) {
    auto s = OneNode("Pad", {{"x", DataType::kInt8}, {"p", DataType::kInt64}, {"v", DataType::kInt8}}, 1, 21,
                     [&](onnx::NodeProto& n) { StringAttr(n, "mode", mode); });
    Tensor x = Tensor::FromVector<int8_t>(DataType::kInt8, {3}, {1, 2, 3});
    Tensor v = Tensor::FromVector<int8_t>(DataType::kInt8, {}, {9});
    Tensor y = RunNode(*s, {{"x", x}, {"p", Ints({2, 1})}, {"v", v}})[0];
    ASSERT_EQ(y.shape(), (Shape{6})) << mode;
    for (int i = 0; i < 6; ++i) EXPECT_EQ(y.data<int8_t>()[i], want[static_cast<size_t>(i)]) << mode << " " << i;
  }
  auto s = OneNode("Pad", {{"x", DataType::kUint4}, {"p", DataType::kInt64}}, 1, 21,
                   [](onnx::NodeProto& n) { StringAttr(n, "mode", "reflect"); });
  Tensor x(DataType::kUint4, {3});
  x.data<uint8_t>()[0] = 0x21;  // [1, 2, 3]
  x.data<uint8_t>()[1] = 0x03;
  Tensor y = RunNode(*s, {{"x", x}, {"p", Ints({2, 1})}})[0];
  const int want[6] = {3, 2, 1, 2, 3, 2};
  for (int i = 0; i < 6; ++i) EXPECT_EQ(Nibble(y, i), want[i]) << i;
}

TEST(ShapeOps, ConcatStringsAndSplitUneven) {
  auto c = OneNode("Concat", {{"a", DataType::kString}, {"b", DataType::kString}}, 1, 13,
                   [](onnx::NodeProto& n) { IntAttr(n, "axis", -1); });
  Tensor a = Tensor::FromVector<std::string>(DataType::kString, {2, 1}, {"a", "c"});
  Tensor b = Tensor::FromVector<std::string>(DataType::kString, {2, 2}, {"b1", "b2", "d1", "d2"});
  Tensor y = RunNode(*c, {{"a", a}, {"b", b}})[0];
  ASSERT_EQ(y.shape(), (Shape{2, 3}));
  const char* want[6] = {"a", "b1", "b2", "c", "d1", "d2"};
  for (int i = 0; i < 6; ++i) EXPECT_EQ(y.strings()[i], want[i]);

  auto s = OneNode("Split", {{"x", DataType::kInt64}}, 3, 18, [](onnx::NodeProto& n) { IntAttr(n, "num_outputs", 3); });
  auto parts = RunNode(*s, {{"x", Ints({1, 2, 3, 4, 5, 6, 7})}});
  ASSERT_EQ(parts.size(), 3u);
  EXPECT_EQ(parts[0].shape(), (Shape{3}));
  EXPECT_EQ(parts[2].shape(), (Shape{1}));
  EXPECT_EQ(parts[2].data<int64_t>()[0], 7);
}

TEST(ShapeOps, ExpandAndTileBool) {
  auto e = OneNode("Expand", {{"x", DataType::kBool}, {"s", DataType::kInt64}}, 1, 13);
  Tensor x = Tensor::FromVector<bool>(DataType::kBool, {2, 1}, {true, false});
  Tensor y = RunNode(*e, {{"x", x}, {"s", Ints({3, 1, 2})}})[0];
  ASSERT_EQ(y.shape(), (Shape{3, 2, 2}));
  for (int64_t i = 0; i < y.size(); ++i) EXPECT_EQ(y.data<bool>()[i], (i / 2) % 2 == 0) << i;
  auto t = OneNode("Tile", {{"x", DataType::kBool}, {"r", DataType::kInt64}}, 1, 13);
  Tensor z = RunNode(*t, {{"x", x}, {"r", Ints({2, 3})}})[0];
  ASSERT_EQ(z.shape(), (Shape{4, 3}));
  for (int64_t i = 0; i < z.size(); ++i) EXPECT_EQ(z.data<bool>()[i], (i / 3) % 2 == 0) << i;
}

TEST(ShapeOps, UniqueStringsAndRangeFloat16) {
  auto u = OneNode("Unique", {{"x", DataType::kString}}, 4, 11);
  Tensor x = Tensor::FromVector<std::string>(DataType::kString, {5}, {"b", "a", "b", "c", "a"});
  auto out = RunNode(*u, {{"x", x}});
  ASSERT_EQ(out[0].shape(), (Shape{3}));
  EXPECT_EQ(out[0].strings()[0], "a");
  EXPECT_EQ(out[0].strings()[2], "c");
  EXPECT_EQ(out[1].data<int64_t>()[0], 1);  // first "a"
  EXPECT_EQ(out[2].data<int64_t>()[0], 1);  // "b" -> unique index 1
  EXPECT_EQ(out[3].data<int64_t>()[0], 2);  // two "a"

  auto r = OneNode("Range", {{"s", DataType::kFloat16}, {"l", DataType::kFloat16}, {"d", DataType::kFloat16}}, 1, 27);
  auto h = [](float f) { return Tensor::FromVector<Float16>(DataType::kFloat16, {}, {Float16(f)}); };
  Tensor y = RunNode(*r, {{"s", h(1)}, {"l", h(2)}, {"d", h(0.25f)}})[0];
  ASSERT_EQ(y.shape(), (Shape{4}));
  EXPECT_EQ(static_cast<float>(y.data<Float16>()[3]), 1.75f);
}

TEST(ShapeOps, DepthToSpaceInvertsSpaceToDepth) {
  auto s2d = OneNode("SpaceToDepth", {{"x", DataType::kFloat}}, 1, 13,
                     [](onnx::NodeProto& n) { IntAttr(n, "blocksize", 2); });
  auto d2s = OneNode("DepthToSpace", {{"x", DataType::kFloat}}, 1, 13,
                     [](onnx::NodeProto& n) { IntAttr(n, "blocksize", 2); });
  Tensor x(DataType::kFloat, {2, 3, 4, 6});
  std::iota(x.data<float>(), x.data<float>() + x.size(), 0.0f);
  Tensor mid = RunNode(*s2d, {{"x", x}})[0];
  ASSERT_EQ(mid.shape(), (Shape{2, 12, 2, 3}));
  Tensor back = RunNode(*d2s, {{"x", mid}})[0];
  ASSERT_EQ(back.shape(), x.shape());
  for (int64_t i = 0; i < x.size(); ++i) ASSERT_EQ(back.data<float>()[i], x.data<float>()[i]) << i;
}

}  // namespace
}  // namespace ferry
