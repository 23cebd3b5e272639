// cpu Cast against ref, bit for bit: every pair of the 13 supported types, with edge values (NaN payloads,
// signalling NaNs, infinities, -0, denormals, float16 rounding ties and overflow, values beyond int32/int64),
// sizes around the SIMD widths, the AVX-512, AVX2+F16C and scalar variants, 2 threads on large tensors, the
// opset-1 type-name attribute, same-type casts sharing the buffer, and a first look at the narrow targets.
#include <bit>
#include <limits>

#include "kernels/cpu/data_movement_test_util.h"

namespace ferry::testing::glue {
namespace {

const Variant kVariants[] = {{"avx512f", "cpu.any_cast__avx512.1"},
                             {"avx2,f16c", "cpu.any_cast__avx2.1"},
                             {"none", "cpu.any_cast__scalar.1"}};

const DataType kTypes[] = {DataType::kFloat, DataType::kDouble, DataType::kFloat16, DataType::kBFloat16,
                           DataType::kInt8,  DataType::kInt16,  DataType::kInt32,   DataType::kInt64,
                           DataType::kUint8, DataType::kUint16, DataType::kUint32,  DataType::kUint64,
                           DataType::kBool};

float RandomFloat(std::mt19937& rng) {
  static const float kEdges[] = {
      std::numeric_limits<float>::quiet_NaN(), -std::numeric_limits<float>::quiet_NaN(),
      std::bit_cast<float>(0x7f800001u),  // signalling NaN, low payload
      std::bit_cast<float>(0xffa00000u),  // signalling NaN, high payload
      std::bit_cast<float>(0x7fc01234u),  // quiet NaN with payload
      std::numeric_limits<float>::infinity(), -std::numeric_limits<float>::infinity(), 0.0f, -0.0f, 1e-40f,
      -1e-45f, std::numeric_limits<float>::min(), 65504.0f, 65519.99f, 65520.0f, -65520.0f, 5.96e-8f, 2.98e-8f,
      2.9802322e-08f, 1.0009765625f, 1.00048828125f, 2147483520.0f, 2147483648.0f, -2147483648.0f, -2147483904.0f,
      3e9f, -3e9f, 4294967296.0f, 9.2233715e18f, 9.223372e18f, -9.223372e18f, 1.8446743e19f, 1e20f, -1e20f, 2.5f,
      -2.5f, 0.5f, -0.5f, 0.99999994f, 255.9f, 256.0f, -1.5f, 127.5f, -128.5f, 32767.7f, 65535.9f, -32769.0f,
      3.3895314e38f, std::numeric_limits<float>::max(), -std::numeric_limits<float>::max()};
  switch (Pick(rng, 0, 3)) {
    case 0: return kEdges[static_cast<size_t>(Pick(rng, 0, std::size(kEdges) - 1))];
    case 1: return std::bit_cast<float>(static_cast<uint32_t>(rng()));
    case 2: return std::uniform_real_distribution<float>(-300, 300)(rng);
    default: return std::uniform_real_distribution<float>(-2, 2)(rng);
  }
}

Tensor CastInput(DataType dt, const Shape& shape, std::mt19937& rng) {
  Tensor t(dt, shape);
  for (int64_t i = 0; i < t.size(); ++i) {
    if (dt == DataType::kFloat) {
      t.data<float>()[i] = RandomFloat(rng);
    } else if (dt == DataType::kDouble) {
      t.data<double>()[i] = Pick(rng, 0, 4) == 0 ? std::bit_cast<double>(static_cast<uint64_t>(rng()) << 32 | rng())
                                                 : static_cast<double>(RandomFloat(rng)) * (1 + 1e-9);
    } else if (dt == DataType::kBool) {
      t.data<bool>()[i] = Pick(rng, 0, 1);
    } else {
      auto* p = static_cast<uint8_t*>(t.raw_data());
      const int64_t bytes = DataTypeBits(dt) / 8;
      for (int64_t b = 0; b < bytes; ++b) p[i * bytes + b] = static_cast<uint8_t>(rng());
      // Small integers too, so narrowing casts see values that fit.
      if (IsInteger(dt) && Pick(rng, 0, 2) == 0) {
        for (int64_t b = 1; b < bytes; ++b) p[i * bytes + b] = IsSignedInteger(dt) && (p[i * bytes] & 0x80) ? 0xff : 0;
      }
    }
  }
  return t;
}

OpTest CastTest(const Tensor& x, DataType to, int threads, int64_t opset = 19) {
  return {.op = "Cast",
          .opset = opset,
          .inputs = {In("x", x)},
          .attributes = {Int("to", static_cast<int64_t>(to))},
          .threads = threads};
}

TEST(CpuCast, EveryPairEveryVariantMatchesRefBitForBit) {
  std::mt19937 rng(701);
  for (DataType from : kTypes) {
    for (DataType to : kTypes) {
      if (from == to) continue;
      const int64_t n = Pick(rng, 1, 70);
      const Tensor x = CastInput(from, {n}, rng);
      for (const Variant& v : kVariants) {
        if (!HostHas(v)) continue;
        EXPECT_TRUE(BitExactOnCpu(CastTest(x, to, 1), v.isa, v.kernel))
            << DataTypeName(from) << " -> " << DataTypeName(to) << " n=" << n << " " << v.kernel;
      }
    }
  }
}

TEST(CpuCast, Float32PairsRandomShapes) {
  // The SIMD pairs, many sizes and ranks, edge values in every vector position.
  std::mt19937 rng(702);
  const std::pair<DataType, DataType> pairs[] = {
      {DataType::kFloat, DataType::kFloat16}, {DataType::kFloat16, DataType::kFloat},
      {DataType::kFloat, DataType::kBFloat16}, {DataType::kFloat, DataType::kInt32},
      {DataType::kInt32, DataType::kFloat},   {DataType::kFloat, DataType::kUint8},
      {DataType::kFloat, DataType::kInt8},    {DataType::kUint8, DataType::kFloat},
      {DataType::kInt8, DataType::kFloat},    {DataType::kFloat, DataType::kBool},
      {DataType::kBool, DataType::kFloat},    {DataType::kFloat, DataType::kInt64},
      {DataType::kInt64, DataType::kFloat}};
  for (int it = 0; it < 40; ++it) {
    const auto [from, to] = pairs[static_cast<size_t>(it) % std::size(pairs)];
    const Shape shape = RandomShape(rng, Pick(rng, 0, 3), it % 11 == 0 ? 0 : 1, 17);
    const Tensor x = CastInput(from, shape, rng);
    const int threads = static_cast<int>(Pick(rng, 1, 2));
    for (const Variant& v : kVariants) {
      if (!HostHas(v)) continue;
      EXPECT_TRUE(BitExactOnCpu(CastTest(x, to, threads, Pick(rng, 0, 1) ? 13 : 21), v.isa, v.kernel))
          << DataTypeName(from) << " -> " << DataTypeName(to) << ShapeToString(shape) << " " << v.kernel;
    }
  }
}

TEST(CpuCast, EveryFloat16BitPatternRoundTrips) {
  // All 65536 float16 values to float32 and back, exhaustively (NaN payloads included).
  Tensor h(DataType::kFloat16, {65536});
  for (int64_t i = 0; i < 65536; ++i) h.data<Float16>()[i] = Float16::FromBits(static_cast<uint16_t>(i));
  Tensor b(DataType::kBFloat16, {65536});
  for (int64_t i = 0; i < 65536; ++i) b.data<BFloat16>()[i] = BFloat16::FromBits(static_cast<uint16_t>(i));
  for (const Variant& v : kVariants) {
    if (!HostHas(v)) continue;
    EXPECT_TRUE(BitExactOnCpu(CastTest(h, DataType::kFloat, 1), v.isa, v.kernel)) << v.kernel;
    EXPECT_TRUE(BitExactOnCpu(CastTest(b, DataType::kFloat, 1), v.isa, v.kernel)) << v.kernel;
  }
}

TEST(CpuCast, LargeTensorsOnTwoThreads) {
  std::mt19937 rng(703);
  for (auto [from, to] : {std::pair{DataType::kFloat, DataType::kFloat16}, {DataType::kFloat16, DataType::kFloat},
                          {DataType::kFloat, DataType::kInt64}, {DataType::kInt64, DataType::kInt32},
                          {DataType::kFloat, DataType::kBool}}) {
    const Tensor x = CastInput(from, {300, 1001}, rng);
    for (const Variant& v : kVariants) {
      if (!HostHas(v)) continue;
      EXPECT_TRUE(BitExactOnCpu(CastTest(x, to, 2), v.isa, v.kernel)) << DataTypeName(from) << " -> "
                                                                       << DataTypeName(to);
    }
  }
}

TEST(CpuCast, TypeNameAttributeOfOpset1AndSameTypeShares) {
  std::mt19937 rng(704);
  OpTest t{.op = "Cast", .opset = 1, .inputs = {In("x", CastInput(DataType::kFloat, {33}, rng))},
           .attributes = {Str("to", "FLOAT16")}};
  EXPECT_TRUE(BitExactOnCpu(t));
  const Tensor x = CastInput(DataType::kInt64, {5}, rng);
  EXPECT_TRUE(BitExactOnCpu(CastTest(x, DataType::kInt64, 1)));
  auto out = DataMovementSession(CastTest(x, DataType::kInt64, 1), {"cpu"}, true, 1)->Run({{"x", x}});
  EXPECT_EQ(out.at(0).second.raw_data(), x.raw_data());
  EXPECT_TRUE(BitExactOnCpu(CastTest(CastInput(DataType::kFloat, {0, 4}, rng), DataType::kFloat16, 1)));
}

TEST(CpuCast, FormerlyRefusedTargetsRunOnCpu) {
  // float8, int4 and string sides now run on cpu (cast_narrow_test.cc tests them in depth).
  std::mt19937 rng(705);
  const Tensor x = CastInput(DataType::kFloat, {9}, rng);
  EXPECT_TRUE(BitExactOnCpu(CastTest(x, DataType::kFloat8E4M3FN, 1), "none", "cpu.any_cast__scalar.1"));
  EXPECT_TRUE(BitExactOnCpu(CastTest(x, DataType::kInt4, 1, 21), "none", "cpu.any_cast__scalar.1"));
  EXPECT_TRUE(BitExactOnCpu(CastTest(CastInput(DataType::kInt32, {4}, rng), DataType::kString, 1)));
  Tensor s(DataType::kString, {2});
  s.strings()[0] = "1.5";
  s.strings()[1] = "-3";
  EXPECT_TRUE(BitExactOnCpu(CastTest(s, DataType::kFloat, 1)));
}

}  // namespace
}  // namespace ferry::testing::glue
