// The cpu BitwiseAnd/Or/Xor/Not kernels against ref, bit for bit: every integer type (int8..int64, uint8..uint64)
// with its extremes, on every broadcast path (binary_elementwise_map_test_util.h) and every ISA variant, threads 1
// and 2; known results; a shape mismatch named after the node; a type cpu leaves to ref.
#include "kernels/cpu/binary_elementwise_map_test_util.h"

namespace ferry::testing {
namespace {

struct Typed {
  DataType dt;
  const char* tag;
};
const Typed kTypes[] = {{DataType::kInt8, "i8"},   {DataType::kInt16, "i16"},  {DataType::kInt32, "i32"},
                        {DataType::kInt64, "i64"}, {DataType::kUint8, "u8"},   {DataType::kUint16, "u16"},
                        {DataType::kUint32, "u32"}, {DataType::kUint64, "u64"}};

struct BinaryOp {
  const char* op;
  const char* lower;
};
const BinaryOp kOps[] = {{"BitwiseAnd", "bitwise_and"}, {"BitwiseOr", "bitwise_or"}, {"BitwiseXor", "bitwise_xor"}};

TEST(CpuBitwise, BinaryMatchesRef) {
  std::mt19937 rng(81);
  for (const Typed& type : kTypes) {
    for (const BinaryOp& op : kOps) {
      for (const MapShapes& s : MapShapeCases(type.dt == DataType::kInt32)) {
        Tensor b = MapRandom(type.dt, s.b, rng);
        OpTest t{.op = op.op,
                 .opset = 18,
                 .inputs = {In("a", MapRandom(type.dt, s.a, rng)), EwPick(rng, 0, 2) ? In("b", b) : Const("b", b)},
                 .rtol = 0,
                 .atol = 0,
                 .threads = static_cast<int>(EwPick(rng, 1, 2))};
        EXPECT_TRUE(MatchesRefOnEveryIsa(t, "cpu." + std::string(type.tag) + "_" + op.lower, ".18"))
            << op.op << " " << type.tag << " " << s.what;
      }
    }
  }
}

TEST(CpuBitwise, NotMatchesRef) {
  std::mt19937 rng(82);
  for (const Typed& type : kTypes) {
    for (const Shape& shape : {Shape{}, Shape{0, 3}, Shape{17}, Shape{3, 33}, Shape{70001}}) {
      for (int threads : {1, 2}) {
        OpTest t{.op = "BitwiseNot",
                 .opset = 18,
                 .inputs = {In("x", MapRandom(type.dt, shape, rng))},
                 .rtol = 0,
                 .atol = 0,
                 .threads = threads};
        EXPECT_TRUE(MatchesRefOnEveryIsa(t, "cpu." + std::string(type.tag) + "_bitwise_not", ".18"))
            << type.tag << " " << ShapeToString(shape) << ", threads " << threads;
      }
    }
  }
}

TEST(CpuBitwise, KnownValues) {
  const std::vector<uint8_t> a = {0xF0, 0xFF, 0x00, 0x5A};
  const std::vector<uint8_t> b = {0x3C, 0x0F, 0x00, 0xA5};
  const uint8_t want_and[] = {0x30, 0x0F, 0x00, 0x00}, want_or[] = {0xFC, 0xFF, 0x00, 0xFF};
  const uint8_t want_xor[] = {0xCC, 0xF0, 0x00, 0xFF}, want_not[] = {0x0F, 0x00, 0xFF, 0xA5};
  const std::pair<const char*, const uint8_t*> cases[] = {
      {"BitwiseAnd", want_and}, {"BitwiseOr", want_or}, {"BitwiseXor", want_xor}};
  for (const auto& [op, want] : cases) {
    OpTest t{.op = op,
             .opset = 18,
             .inputs = {In("a", Tensor::FromVector<uint8_t>(DataType::kUint8, {4}, a)),
                        In("b", Tensor::FromVector<uint8_t>(DataType::kUint8, {4}, b))}};
    const auto out = EwSession(t, {"cpu"}, true, 1)->Run(Feeds(t));
    for (int i = 0; i < 4; ++i) EXPECT_EQ(out[0].second.data<uint8_t>()[i], want[i]) << op << " " << i;
  }
  OpTest t{.op = "BitwiseNot", .opset = 18, .inputs = {In("x", Tensor::FromVector<uint8_t>(DataType::kUint8, {4}, a))}};
  const auto out = EwSession(t, {"cpu"}, true, 1)->Run(Feeds(t));
  for (int i = 0; i < 4; ++i) EXPECT_EQ(out[0].second.data<uint8_t>()[i], want_not[i]) << i;
}

TEST(CpuBitwise, MismatchedShapesNameTheNode) {
  std::mt19937 rng(83);
  ExpectBroadcastErrorNamesNode("BitwiseXor", 18,
                                {MapRandom(DataType::kInt16, {2, 3}, rng), MapRandom(DataType::kInt16, {4}, rng)},
                                "[2,3] and [4] cannot be broadcast");
}

}  // namespace
}  // namespace ferry::testing
