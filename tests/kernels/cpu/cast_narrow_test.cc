// cpu Cast against ref, bit for bit, on every pair with a float8 (e4m3fn, e4m3fnuz, e5m2, e5m2fnuz, e8m0),
// float4e2m1, int4/uint4/int2/uint2 or string side: the AVX-512, AVX2 and scalar variants, saturate on and off,
// every e8m0 round_mode, NaN/inf and limit values, packed tensors of odd lengths (padding bits compared too),
// 2 threads on large tensors, the byte-sized sources' every code.
#include "kernels/cpu/cast_test_util.h"

namespace ferry::testing::glue {
namespace {

const Variant kVariants[] = {{"avx512f", "cpu.any_cast__avx512.1"},
                             {"avx2,f16c", "cpu.any_cast__avx2.1"},
                             {"none", "cpu.any_cast__scalar.1"}};

OpTest CastTo(const Tensor& x, DataType to, int threads, std::vector<onnx::AttributeProto> extra = {}) {
  extra.push_back(Int("to", static_cast<int64_t>(to)));
  return {.op = "Cast", .opset = 25, .inputs = {In("x", x)}, .attributes = std::move(extra), .threads = threads};
}

std::vector<DataType> EveryCastType() {
  std::vector<DataType> all = StandardCastTypes();
  all.insert(all.end(), NarrowCastTypes().begin(), NarrowCastTypes().end());
  all.push_back(DataType::kString);
  return all;
}

bool Narrow(DataType t) {
  return t == DataType::kString ||
         std::find(NarrowCastTypes().begin(), NarrowCastTypes().end(), t) != NarrowCastTypes().end();
}

TEST(CpuCastNarrow, EveryPairEveryVariantMatchesRef) {
  std::mt19937 rng(801);
  int pairs = 0;
  for (DataType from : EveryCastType()) {
    for (DataType to : EveryCastType()) {
      if (from == to || (!Narrow(from) && !Narrow(to))) continue;
      ++pairs;
      const int64_t n = Pick(rng, 1, 71);
      const Tensor x = NarrowCastInput(from, {n}, rng);
      const bool saturate = Pick(rng, 0, 1) != 0;
      for (const Variant& v : kVariants) {
        if (!HostHas(v)) continue;
        EXPECT_TRUE(BitExactOnCpu(CastTo(x, to, 1, {Saturate(saturate)}), v.isa, v.kernel))
            << DataTypeName(from) << " -> " << DataTypeName(to) << " n=" << n << " saturate=" << saturate << " "
            << v.kernel;
      }
    }
  }
  EXPECT_EQ(pairs, 24 * 23 - 13 * 12);
}

TEST(CpuCastNarrow, Float8SaturateOnAndOffWithEdgeValues) {
  std::mt19937 rng(802);
  const DataType float8s[] = {DataType::kFloat8E4M3FN, DataType::kFloat8E4M3FNUZ, DataType::kFloat8E5M2,
                              DataType::kFloat8E5M2FNUZ, DataType::kFloat8E8M0, DataType::kFloat4E2M1};
  for (DataType from : {DataType::kFloat, DataType::kDouble, DataType::kFloat16, DataType::kBFloat16,
                        DataType::kInt32, DataType::kString}) {
    const Tensor x = NarrowCastInput(from, {4, 37}, rng);
    for (DataType to : float8s) {
      for (bool saturate : {true, false}) {
        EXPECT_TRUE(BitExactOnCpu(CastTo(x, to, 1, {Saturate(saturate)})))
            << DataTypeName(from) << " -> " << DataTypeName(to) << " saturate=" << saturate;
      }
    }
  }
}

TEST(CpuCastNarrow, E8M0RoundModes) {
  std::mt19937 rng(803);
  for (DataType from : {DataType::kFloat, DataType::kFloat16, DataType::kDouble}) {
    const Tensor x = NarrowCastInput(from, {97}, rng);
    for (const char* mode : {"up", "down", "nearest"}) {
      for (bool saturate : {true, false}) {
        EXPECT_TRUE(BitExactOnCpu(CastTo(x, DataType::kFloat8E8M0, 1, {Saturate(saturate), Str("round_mode", mode)})))
            << DataTypeName(from) << " round_mode=" << mode << " saturate=" << saturate;
      }
    }
  }
}

TEST(CpuCastNarrow, EveryCodeOfByteSizedSources) {
  // The table path: all 256 codes of each 8-bit source to every non-string target.
  Tensor codes(DataType::kUint8, {256});
  for (int c = 0; c < 256; ++c) codes.data<uint8_t>()[c] = static_cast<uint8_t>(c);
  for (DataType from : {DataType::kFloat8E4M3FN, DataType::kFloat8E4M3FNUZ, DataType::kFloat8E5M2,
                        DataType::kFloat8E5M2FNUZ, DataType::kFloat8E8M0, DataType::kInt8, DataType::kUint8}) {
    Tensor x(from, {256});
    std::memcpy(x.raw_data(), codes.raw_data(), 256);
    for (DataType to : EveryCastType()) {
      if (to == from || (!Narrow(from) && !Narrow(to))) continue;
      EXPECT_TRUE(BitExactOnCpu(CastTo(x, to, 1))) << DataTypeName(from) << " -> " << DataTypeName(to);
    }
  }
}

TEST(CpuCastNarrow, PackedOddLengthsAndShapes) {
  std::mt19937 rng(804);
  const DataType packed[] = {DataType::kInt4, DataType::kUint4, DataType::kInt2, DataType::kUint2,
                             DataType::kFloat4E2M1};
  const Shape shapes[] = {{1}, {2}, {3}, {5}, {7}, {9}, {31}, {33}, {3, 5}, {2, 3, 7}, {0}, {4, 0}};
  for (const Shape& shape : shapes) {
    for (DataType p : packed) {
      for (DataType other : {DataType::kFloat, DataType::kInt8, DataType::kFloat16, DataType::kUint64,
                             DataType::kFloat8E5M2, DataType::kInt4, DataType::kUint2, DataType::kString}) {
        if (other == p) continue;
        EXPECT_TRUE(BitExactOnCpu(CastTo(NarrowCastInput(p, shape, rng), other, 1)))
            << DataTypeName(p) << " -> " << DataTypeName(other) << ShapeToString(shape);
        EXPECT_TRUE(BitExactOnCpu(CastTo(NarrowCastInput(other, shape, rng), p, 1)))
            << DataTypeName(other) << " -> " << DataTypeName(p) << ShapeToString(shape);
      }
    }
  }
}

TEST(CpuCastNarrow, LargeTensorsOnTwoThreads) {
  // 301 x 999 elements: odd, so a packed tensor's last byte is half used; chunks split on byte boundaries.
  std::mt19937 rng(805);
  const std::pair<DataType, DataType> pairs[] = {
      {DataType::kFloat, DataType::kInt4},          {DataType::kFloat, DataType::kUint2},
      {DataType::kFloat, DataType::kFloat4E2M1},    {DataType::kInt4, DataType::kFloat},
      {DataType::kUint2, DataType::kInt8},          {DataType::kFloat4E2M1, DataType::kFloat16},
      {DataType::kInt4, DataType::kUint2},          {DataType::kFloat8E4M3FN, DataType::kFloat},
      {DataType::kFloat8E5M2, DataType::kInt4},     {DataType::kFloat, DataType::kFloat8E5M2},
      {DataType::kFloat16, DataType::kFloat8E4M3FNUZ}, {DataType::kInt32, DataType::kString},
      {DataType::kString, DataType::kFloat},        {DataType::kFloat8E8M0, DataType::kDouble}};
  for (auto [from, to] : pairs) {
    const Tensor x = NarrowCastInput(from, {301, 999}, rng);
    for (const Variant& v : kVariants) {
      if (!HostHas(v)) continue;
      EXPECT_TRUE(BitExactOnCpu(CastTo(x, to, 2, {Saturate(Pick(rng, 0, 1) != 0)}), v.isa, v.kernel))
          << DataTypeName(from) << " -> " << DataTypeName(to) << " " << v.kernel;
    }
  }
}

TEST(CpuCastNarrow, SameNarrowTypeSharesTheBuffer) {
  std::mt19937 rng(806);
  for (DataType t : {DataType::kInt4, DataType::kFloat8E4M3FN, DataType::kString}) {
    const Tensor x = NarrowCastInput(t, {7}, rng);
    EXPECT_TRUE(BitExactOnCpu(CastTo(x, t, 1)));
    auto out = DataMovementSession(CastTo(x, t, 1), {"cpu"}, true, 1)->Run({{"x", x}});
    EXPECT_EQ(out.at(0).second.raw_data(), x.raw_data()) << DataTypeName(t);
  }
}

TEST(CpuCastNarrow, BadRoundModeIsAModelErrorAsOnRef) {
  std::mt19937 rng(807);
  const OpTest t = CastTo(NarrowCastInput(DataType::kFloat, {3}, rng), DataType::kFloat8E8M0, 1,
                          {Str("round_mode", "sideways")});
  ExpectBadRoundModeRejected(t);
}

}  // namespace
}  // namespace ferry::testing::glue
