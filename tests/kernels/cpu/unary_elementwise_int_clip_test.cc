// The cpu Clip kernels on integers (opset 12+, unary_elementwise.cc) against ref, bit for bit: every integer type
// (int8..int64, uint8..uint64) with its extremes, each bound given or omitted (the type's lowest/highest), min
// above max, on every ISA variant, threads 1 and 2, sizes across the threading threshold; known results; a
// non-scalar bound named after the node.
#include "kernels/cpu/binary_elementwise_map_test_util.h"

namespace ferry::testing {
namespace {

struct Typed {
  DataType dt;
  const char* tag;
};
const Typed kTypes[] = {{DataType::kInt8, "i8"},    {DataType::kInt16, "i16"},  {DataType::kInt32, "i32"},
                        {DataType::kInt64, "i64"},  {DataType::kUint8, "u8"},   {DataType::kUint16, "u16"},
                        {DataType::kUint32, "u32"}, {DataType::kUint64, "u64"}};

TEST(CpuIntClip, MatchesRef) {
  std::mt19937 rng(121);
  for (const Typed& type : kTypes) {
    for (const Shape& shape : {Shape{}, Shape{0, 2}, Shape{17}, Shape{5, 33}, Shape{70001}}) {
      for (int bounds = 0; bounds < 4; ++bounds) {  // bit 0: min given, bit 1: max given
        OpTest t{.op = "Clip",
                 .opset = EwPick(rng, 0, 1) ? 12 : 13,
                 .inputs = {In("x", MapRandom(type.dt, shape, rng))},
                 .rtol = 0,
                 .atol = 0,
                 .threads = static_cast<int>(EwPick(rng, 1, 2))};
        if (bounds & 1) {
          t.inputs.push_back(In("min", MapRandom(type.dt, {}, rng)));
        } else if (bounds & 2) {
          t.inputs.push_back(Omitted());
        }
        if (bounds & 2) t.inputs.push_back(EwPick(rng, 0, 1) ? In("max", MapRandom(type.dt, {}, rng))
                                                             : Const("max", MapRandom(type.dt, {}, rng)));
        EXPECT_TRUE(MatchesRefOnEveryIsa(t, "cpu." + std::string(type.tag) + "_clip", ".12"))
            << type.tag << " " << ShapeToString(shape) << " bounds " << bounds;
      }
    }
  }
}

TEST(CpuIntClip, KnownValues) {
  // int8: [-128, -5, 0, 7, 127] clipped to [-5, 6]; then min 3 above max 1: every element is max.
  const std::vector<int8_t> x = {-128, -5, 0, 7, 127};
  auto run = [&](int8_t lo, int8_t hi) {
    OpTest t{.op = "Clip",
             .opset = 13,
             .inputs = {In("x", Tensor::FromVector<int8_t>(DataType::kInt8, {5}, x)),
                        In("min", Tensor::FromVector<int8_t>(DataType::kInt8, {}, {lo})),
                        In("max", Tensor::FromVector<int8_t>(DataType::kInt8, {}, {hi}))}};
    return EwSession(t, {"cpu"}, true, 1)->Run(Feeds(t))[0].second;
  };
  const Tensor a = run(-5, 6), b = run(3, 1);
  const int8_t want[] = {-5, -5, 0, 6, 6};
  for (int i = 0; i < 5; ++i) {
    EXPECT_EQ(a.data<int8_t>()[i], want[i]) << i;
    EXPECT_EQ(b.data<int8_t>()[i], 1) << i;
  }
}

TEST(CpuIntClip, NonScalarBoundNamesTheNode) {
  std::mt19937 rng(122);
  std::vector<NodeInput> decl = {{"x", DataType::kInt32}, {"min", DataType::kInt32}};
  auto session = OneNodeSession("Clip", decl, {"y"}, 13, nullptr, OnlyBackend("cpu", 1));
  try {
    session->Run({{"x", MapRandom(DataType::kInt32, {3}, rng)},
                  {"min", Tensor::FromVector<int32_t>(DataType::kInt32, {2}, {0, 1})}});
    ADD_FAILURE() << "expected an InvalidArgumentError";
  } catch (const InvalidArgumentError& e) {
    EXPECT_NE(std::string(e.what()).find("node 'n0' (Clip)"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("[2]"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("expected a int32 scalar"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace ferry::testing
