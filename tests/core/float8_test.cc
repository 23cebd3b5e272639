// float8 / float4 / e8m0 / sub-byte conversions: exhaustive round trips, rounding, saturation and special values.
#include "core/float8.h"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>

namespace ferry {
namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();
constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

const DataType kFloat8Types[] = {DataType::kFloat8E4M3FN, DataType::kFloat8E4M3FNUZ, DataType::kFloat8E5M2,
                                 DataType::kFloat8E5M2FNUZ};

TEST(Float8, EveryCodeRoundTrips) {
  for (DataType t : kFloat8Types) {
    for (int c = 0; c < 256; ++c) {
      float v = SmallFloatToFloat(t, static_cast<uint8_t>(c));
      if (std::isnan(v)) continue;
      if (std::isinf(v)) {
        EXPECT_EQ(DoubleToSmallFloat(t, v, /*saturate=*/false), c) << DataTypeName(t);
        continue;
      }
      EXPECT_EQ(DoubleToSmallFloat(t, v, false), c) << DataTypeName(t) << " code " << c << " value " << v;
      EXPECT_EQ(DoubleToSmallFloat(t, v, true), c) << DataTypeName(t) << " code " << c << " value " << v;
    }
  }
  for (int c = 0; c < 16; ++c) EXPECT_EQ(DoubleToFloat4E2M1(Float4E2M1ToFloat(static_cast<uint8_t>(c))), c);
}

TEST(Float8, RangesAndSpecialValues) {
  EXPECT_EQ(Float8E4M3FNToFloat(0x7E), 448.0f);
  EXPECT_EQ(Float8E4M3FNUZToFloat(0x7F), 240.0f);
  EXPECT_EQ(Float8E5M2ToFloat(0x7B), 57344.0f);
  EXPECT_EQ(Float8E5M2FNUZToFloat(0x7F), 57344.0f);
  EXPECT_EQ(Float4E2M1ToFloat(0x7), 6.0f);
  EXPECT_TRUE(std::isnan(Float8E4M3FNToFloat(0x7F)));
  EXPECT_TRUE(std::isnan(Float8E4M3FNUZToFloat(0x80)));
  EXPECT_TRUE(std::isinf(Float8E5M2ToFloat(0x7C)));
  EXPECT_EQ(Float8E4M3FNToFloat(0x01), std::ldexp(1.0f, -9));  // smallest subnormal

  // Saturation (ONNX Cast saturate=1) vs overflow to inf/NaN (saturate=0).
  EXPECT_EQ(DoubleToFloat8E4M3FN(1e6, true), 0x7E);
  EXPECT_EQ(DoubleToFloat8E4M3FN(-kInf, true), 0xFE);
  EXPECT_EQ(DoubleToFloat8E4M3FN(1e6, false), 0x7F);
  EXPECT_EQ(DoubleToFloat8E4M3FN(-kInf, false), 0xFF);
  EXPECT_EQ(DoubleToFloat8E5M2(1e6, false), 0x7C);
  EXPECT_EQ(DoubleToFloat8E5M2(kInf, true), 0x7B);
  EXPECT_EQ(DoubleToFloat8E5M2FNUZ(-kInf, true), 0xFF);
  EXPECT_EQ(DoubleToFloat8E5M2FNUZ(-1e6, false), 0x80);
  EXPECT_EQ(DoubleToFloat8E4M3FNUZ(kNaN), 0x80);
  EXPECT_EQ(DoubleToFloat8E4M3FN(kNaN), 0x7F);
  EXPECT_EQ(DoubleToFloat8E5M2(kNaN), 0x7E);
  EXPECT_EQ(DoubleToFloat4E2M1(kNaN), 0x8);
  EXPECT_EQ(DoubleToFloat4E2M1(-kInf), 0xF);

  // No negative zero in the fnuz formats.
  EXPECT_EQ(DoubleToFloat8E4M3FNUZ(-1e-9), 0x00);
  EXPECT_EQ(DoubleToFloat8E4M3FN(-1e-9), 0x80);

  // Round to nearest even: 464 lies between 448 (even mantissa) and 480 (NaN pattern) -> 448; 17 -> 16 (e4m3).
  EXPECT_EQ(DoubleToFloat8E4M3FN(464, false), 0x7E);
  EXPECT_EQ(DoubleToFloat8E4M3FN(465, false), 0x7F);
  EXPECT_EQ(Float8E4M3FNToFloat(DoubleToFloat8E4M3FN(17)), 16.0f);
  EXPECT_EQ(Float8E4M3FNToFloat(DoubleToFloat8E4M3FN(19)), 20.0f);
  EXPECT_EQ(Float4E2M1ToFloat(DoubleToFloat4E2M1(0.25)), 0.0f);
  EXPECT_EQ(Float4E2M1ToFloat(DoubleToFloat4E2M1(-3.5)), -4.0f);
  EXPECT_EQ(Float4E2M1ToFloat(DoubleToFloat4E2M1(2.5)), 2.0f);
}

TEST(Float8, E8M0) {
  EXPECT_EQ(DoubleToFloat8E8M0(0.0), 0x00);
  EXPECT_EQ(DoubleToFloat8E8M0(1.0), 0x7F);
  EXPECT_EQ(DoubleToFloat8E8M0(0.124), 0x7C);
  EXPECT_EQ(DoubleToFloat8E8M0(1.1, true, E8M0Rounding::kUp), 0x80);
  EXPECT_EQ(DoubleToFloat8E8M0(1.9, true, E8M0Rounding::kDown), 0x7F);
  EXPECT_EQ(DoubleToFloat8E8M0(1.4, true, E8M0Rounding::kNearest), 0x7F);
  EXPECT_EQ(DoubleToFloat8E8M0(1.5, true, E8M0Rounding::kNearest), 0x80);
  EXPECT_EQ(DoubleToFloat8E8M0(-4.0), 0x81);  // sign ignored
  EXPECT_EQ(DoubleToFloat8E8M0(kInf, true), 0xFE);
  EXPECT_EQ(DoubleToFloat8E8M0(kInf, false), 0xFF);
  EXPECT_EQ(DoubleToFloat8E8M0(kNaN), 0xFF);
  EXPECT_EQ(Float8E8M0ToFloat(0x00), std::ldexp(1.0f, -127));
  EXPECT_EQ(Float8E8M0ToFloat(0x82), 8.0f);
  EXPECT_TRUE(std::isnan(Float8E8M0ToFloat(0xFF)));
  E8M0Rounding r;
  EXPECT_TRUE(ParseE8M0Rounding("nearest", &r));
  EXPECT_EQ(r, E8M0Rounding::kNearest);
  EXPECT_FALSE(ParseE8M0Rounding("UP", &r));
}

TEST(Float8, SubBytePacking) {
  uint8_t buf[2] = {0, 0};
  WriteSubByte(buf, 4, 0, IntToSubByte(DataType::kInt4, -9));  // wraps to 7
  WriteSubByte(buf, 4, 1, IntToSubByte(DataType::kInt4, -8));
  EXPECT_EQ(buf[0], 0x87);
  EXPECT_EQ(SubByteToInt(DataType::kInt4, ReadSubByte(buf, 4, 0)), 7);
  EXPECT_EQ(SubByteToInt(DataType::kInt4, ReadSubByte(buf, 4, 1)), -8);
  EXPECT_EQ(SubByteToInt(DataType::kUint4, ReadSubByte(buf, 4, 1)), 8);
  uint8_t b2[1] = {0};
  for (int i = 0; i < 4; ++i) WriteSubByte(b2, 2, i, IntToSubByte(DataType::kInt2, i - 2));
  EXPECT_EQ(b2[0], 0x4E);  // -2,-1,0,1 -> 10 11 00 01, low bits first
  for (int i = 0; i < 4; ++i) EXPECT_EQ(SubByteToInt(DataType::kInt2, ReadSubByte(b2, 2, i)), i - 2);
  EXPECT_EQ(SubByteToInt(DataType::kUint2, ReadSubByte(b2, 2, 0)), 2);
}

}  // namespace
}  // namespace ferry
