// The cpu Shrink kernels against ref, bit for bit: float32 and float64 with edge values (NaN, ±inf, ±0, values at
// ±lambd) and every integer type (through double, truncated back), default and given lambd/bias, on every ISA
// variant, threads 1 and 2, sizes across the threading threshold; known results.
#include "kernels/cpu/binary_elementwise_map_test_util.h"

namespace ferry::testing {
namespace {

struct Typed {
  DataType dt;
  const char* tag;
};
const Typed kTypes[] = {{DataType::kFloat, "f32"}, {DataType::kDouble, "f64"}, {DataType::kInt8, "i8"},
                        {DataType::kInt16, "i16"}, {DataType::kInt32, "i32"},  {DataType::kInt64, "i64"},
                        {DataType::kUint8, "u8"},  {DataType::kUint16, "u16"}, {DataType::kUint32, "u32"},
                        {DataType::kUint64, "u64"}};

TEST(CpuShrink, MatchesRef) {
  std::mt19937 rng(101);
  for (const Typed& type : kTypes) {
    for (const Shape& shape : {Shape{}, Shape{0}, Shape{17}, Shape{4, 33}, Shape{70001}}) {
      for (int attrs = 0; attrs < 3; ++attrs) {
        OpTest t{.op = "Shrink",
                 .opset = 9,
                 .inputs = {In("x", MapRandom(type.dt, shape, rng, -3, 3))},
                 .rtol = 0,
                 .atol = 0,
                 .threads = static_cast<int>(EwPick(rng, 1, 2))};
        if (attrs == 1) t.attributes = {Float("lambd", 1.5f), Float("bias", 1.5f)};
        if (attrs == 2) t.attributes = {Float("lambd", 0.0f), Float("bias", -2.25f)};
        EXPECT_TRUE(MatchesRefOnEveryIsa(t, "cpu." + std::string(type.tag) + "_shrink", ".9"))
            << type.tag << " " << ShapeToString(shape) << " attributes " << attrs;
      }
    }
  }
}

TEST(CpuShrink, KnownValues) {
  const float inf = std::numeric_limits<float>::infinity();
  OpTest t{.op = "Shrink",
           .opset = 9,
           .inputs = {In("x", Tensor::FromVector<float>(DataType::kFloat, {7}, {-2, -1, -0.5f, 0, 1, 3, -inf}))},
           .attributes = {Float("lambd", 1.0f), Float("bias", 0.5f)}};
  const auto out = EwSession(t, {"cpu"}, true, 1)->Run(Feeds(t));
  const float want[] = {-1.5f, 0, 0, 0, 0, 2.5f, -inf};  // ±lambd itself shrinks to 0
  for (int i = 0; i < 7; ++i) EXPECT_EQ(out[0].second.data<float>()[i], want[i]) << i;
}

}  // namespace
}  // namespace ferry::testing
