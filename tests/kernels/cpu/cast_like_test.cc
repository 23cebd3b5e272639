// cpu CastLike against ref, bit for bit: standard and narrow pairs on every ISA variant at opsets 15, 19, 21 and
// 25, saturate on and off, round_mode for e8m0, 2 threads on a large tensor, the target's values never read (an
// empty `like` tensor), the same type sharing input 0's buffer, and a bad round_mode as a model error.
#include "kernels/cpu/cast_test_util.h"

namespace ferry::testing::glue {
namespace {

const Variant kVariants[] = {{"avx512f", "cpu.any_cast_like__avx512.15"},
                             {"avx2,f16c", "cpu.any_cast_like__avx2.15"},
                             {"none", "cpu.any_cast_like__scalar.15"}};

OpTest CastLikeTest(const Tensor& x, DataType to, int64_t opset, int threads = 1,
                    std::vector<onnx::AttributeProto> attributes = {}, const Shape& like_shape = {1}) {
  Tensor like(to, like_shape);
  if (to == DataType::kString) {
    for (int64_t i = 0; i < like.size(); ++i) like.strings()[i] = "x";
  } else if (like.nbytes() > 0) {
    std::memset(like.raw_data(), 0, like.nbytes());
  }
  return {.op = "CastLike",
          .opset = opset,
          .inputs = {In("x", x), In("like", like)},
          .attributes = std::move(attributes),
          .threads = threads};
}

TEST(CpuCastLike, PairsEveryVariantMatchesRef) {
  std::mt19937 rng(901);
  std::vector<DataType> types = StandardCastTypes();
  types.insert(types.end(), NarrowCastTypes().begin(), NarrowCastTypes().end());
  types.push_back(DataType::kString);
  for (DataType from : types) {
    for (int k = 0; k < 6; ++k) {
      const DataType to = types[static_cast<size_t>(Pick(rng, 0, static_cast<int64_t>(types.size()) - 1))];
      const int64_t n = Pick(rng, 1, 45);
      const Tensor x = NarrowCastInput(from, {n}, rng);
      for (const Variant& v : kVariants) {
        if (!HostHas(v)) continue;
        EXPECT_TRUE(BitExactOnCpu(CastLikeTest(x, to, 25, 1, {Saturate(Pick(rng, 0, 1) != 0)}), v.isa, v.kernel))
            << DataTypeName(from) << " -> " << DataTypeName(to) << " n=" << n << " " << v.kernel;
      }
    }
  }
}

TEST(CpuCastLike, OlderOpsetsAndTheirTypes) {
  std::mt19937 rng(902);
  const Tensor f = NarrowCastInput(DataType::kFloat, {2, 33}, rng);
  EXPECT_TRUE(BitExactOnCpu(CastLikeTest(f, DataType::kFloat16, 15)));
  EXPECT_TRUE(BitExactOnCpu(CastLikeTest(f, DataType::kString, 15)));
  EXPECT_TRUE(BitExactOnCpu(CastLikeTest(NarrowCastInput(DataType::kString, {9}, rng), DataType::kDouble, 15)));
  for (bool saturate : {true, false}) {
    EXPECT_TRUE(BitExactOnCpu(CastLikeTest(f, DataType::kFloat8E4M3FN, 19, 1, {Saturate(saturate)})));
    EXPECT_TRUE(BitExactOnCpu(CastLikeTest(f, DataType::kFloat8E5M2FNUZ, 19, 1, {Saturate(saturate)})));
  }
  EXPECT_TRUE(BitExactOnCpu(CastLikeTest(f, DataType::kInt4, 21)));
  EXPECT_TRUE(BitExactOnCpu(CastLikeTest(NarrowCastInput(DataType::kUint4, {2, 33}, rng), DataType::kFloat, 21)));
  for (const char* mode : {"up", "down", "nearest"}) {
    EXPECT_TRUE(BitExactOnCpu(CastLikeTest(f, DataType::kFloat8E8M0, 25, 1, {Str("round_mode", mode)}))) << mode;
  }
}

TEST(CpuCastLike, LargeTensorOnTwoThreadsAndEmptyLike) {
  std::mt19937 rng(903);
  const Tensor x = NarrowCastInput(DataType::kFloat, {301, 999}, rng);
  for (DataType to : {DataType::kFloat16, DataType::kInt4, DataType::kFloat8E4M3FN}) {
    for (const Variant& v : kVariants) {
      if (!HostHas(v)) continue;
      EXPECT_TRUE(BitExactOnCpu(CastLikeTest(x, to, 25, 2, {}, {0}), v.isa, v.kernel)) << DataTypeName(to);
    }
  }
}

TEST(CpuCastLike, SameTypeSharesTheBuffer) {
  std::mt19937 rng(904);
  const Tensor x = NarrowCastInput(DataType::kInt64, {5}, rng);
  const OpTest t = CastLikeTest(x, DataType::kInt64, 21);
  EXPECT_TRUE(BitExactOnCpu(t));
  auto out = DataMovementSession(t, {"cpu"}, true, 1)->Run({{"x", x}, {"like", t.inputs[1].value}});
  EXPECT_EQ(out.at(0).second.raw_data(), x.raw_data());
}

TEST(CpuCastLike, BadRoundModeIsAModelErrorAsOnRef) {
  std::mt19937 rng(905);
  const OpTest t = CastLikeTest(NarrowCastInput(DataType::kFloat, {3}, rng), DataType::kFloat8E8M0, 25, 1,
                                {Str("round_mode", "toward_zero")});
  ExpectBadRoundModeRejected(t);
}

}  // namespace
}  // namespace ferry::testing::glue
