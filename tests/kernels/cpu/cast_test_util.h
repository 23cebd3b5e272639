// Inputs for the tests of the cpu Cast and CastLike kernels on the narrow types (float8, float4e2m1,
// int4/uint4/int2/uint2) and strings: values that exercise saturation, rounding ties, NaN/inf, wrapping of
// packed integers and string parsing, for any castable type.
#pragma once

#include <bit>
#include <cmath>
#include <limits>
#include <string>
#include <vector>

#include "core/float8.h"
#include "kernels/cpu/data_movement_test_util.h"

namespace ferry::testing::glue {

inline const std::vector<DataType>& NarrowCastTypes() {
  static const std::vector<DataType> types = {
      DataType::kFloat8E4M3FN, DataType::kFloat8E4M3FNUZ, DataType::kFloat8E5M2, DataType::kFloat8E5M2FNUZ,
      DataType::kFloat8E8M0,   DataType::kFloat4E2M1,     DataType::kInt4,       DataType::kUint4,
      DataType::kInt2,         DataType::kUint2};
  return types;
}

inline const std::vector<DataType>& StandardCastTypes() {
  static const std::vector<DataType> types = {
      DataType::kFloat, DataType::kDouble, DataType::kFloat16, DataType::kBFloat16, DataType::kInt8,
      DataType::kInt16, DataType::kInt32,  DataType::kInt64,   DataType::kUint8,    DataType::kUint16,
      DataType::kUint32, DataType::kUint64, DataType::kBool};
  return types;
}

// Values around the narrow types' limits and rounding points, NaN, infinities, -0, and ordinary values.
inline float NarrowEdgeFloat(std::mt19937& rng) {
  static const float kEdges[] = {
      std::numeric_limits<float>::quiet_NaN(), -std::numeric_limits<float>::quiet_NaN(),
      std::bit_cast<float>(0x7f800001u), std::numeric_limits<float>::infinity(),
      -std::numeric_limits<float>::infinity(), 0.0f, -0.0f, 448.0f, -448.0f, 464.0f, 464.1f, 480.0f, 500.0f,
      240.0f, 247.9f, 248.0f, 256.0f, 57344.0f, -57344.0f, 61440.0f, 61439.0f, 65536.0f, 1e10f, -1e10f, 6.0f,
      -6.0f, 5.0f, 7.0f, 0.25f, 0.75f, 1.25f, 2.5f, 3.5f, -3.5f, 0.5f, 1.5f, -1.5f, 0.001953125f, 0.0009765625f,
      0.00048828125f, 1.52587890625e-05f, 7.62939453125e-06f, 3.0517578125e-05f, 1e-7f, 1e-38f, 1e-40f,
      std::ldexp(1.0f, 127), std::ldexp(1.5f, 127), std::ldexp(1.0f, -127), std::ldexp(3.0f, -128),
      std::ldexp(1.0f, -126), 7.5f, 8.0f, -8.0f, -9.0f, 15.0f, 16.0f, -2.0f, 3.0f, -4.0f, 2.0f, 1.0f, -1.0f,
      std::numeric_limits<float>::max(), 3e9f, -3e9f, 1e20f};
  switch (Pick(rng, 0, 4)) {
    case 0:
    case 1: return kEdges[static_cast<size_t>(Pick(rng, 0, std::size(kEdges) - 1))];
    case 2: return std::bit_cast<float>(static_cast<uint32_t>(rng()));
    case 3: return std::uniform_real_distribution<float>(-600, 600)(rng);
    default: return static_cast<float>(Pick(rng, -20, 20)) * (Pick(rng, 0, 1) ? 1.0f : 0.125f);
  }
}

inline std::string NarrowEdgeString(std::mt19937& rng) {
  static const char* kWords[] = {"1.5",   "-3",    "INF",  "-inf", "+INF", "NaN",  "nan",   "1e-05", "3.9",
                                 "-0.0",  "1e40",  "300",  "-7",   "7",    "abc",  "",      "  12",  "true",
                                 "False", "0.125", "448",  "1e10", "-1e10", "65536", "2.5", "0.0078125"};
  if (Pick(rng, 0, 2) == 0) return std::to_string(Pick(rng, -40, 40));
  return kWords[static_cast<size_t>(Pick(rng, 0, std::size(kWords) - 1))];
}

// A tensor of any castable type: narrow codes at random (packed ones with clean padding bits), strings from
// NarrowEdgeString, floats from NarrowEdgeFloat, integers small (so wrapping into 4/2 bits shows) or random.
inline Tensor NarrowCastInput(DataType dt, const Shape& shape, std::mt19937& rng) {
  Tensor t(dt, shape);
  const int64_t n = t.size();
  if (dt == DataType::kString) {
    for (int64_t i = 0; i < n; ++i) t.strings()[i] = NarrowEdgeString(rng);
    return t;
  }
  auto* bytes = static_cast<uint8_t*>(t.raw_data());
  if (DataTypeBits(dt) < 8) {
    for (size_t b = 0; b < t.nbytes(); ++b) bytes[b] = 0;
    for (int64_t i = 0; i < n; ++i) {
      WriteSubByte(bytes, DataTypeBits(dt), i, static_cast<uint8_t>(Pick(rng, 0, (1 << DataTypeBits(dt)) - 1)));
    }
    return t;
  }
  for (int64_t i = 0; i < n; ++i) {
    switch (dt) {
      case DataType::kFloat: t.data<float>()[i] = NarrowEdgeFloat(rng); break;
      case DataType::kDouble: t.data<double>()[i] = static_cast<double>(NarrowEdgeFloat(rng)) * (1 + 1e-12); break;
      case DataType::kFloat16: t.data<Float16>()[i] = Float16(NarrowEdgeFloat(rng)); break;
      case DataType::kBFloat16: t.data<BFloat16>()[i] = BFloat16(NarrowEdgeFloat(rng)); break;
      case DataType::kBool: t.data<bool>()[i] = Pick(rng, 0, 1) != 0; break;
      default: {
        const int64_t w = DataTypeBits(dt) / 8;
        const bool small = IsInteger(dt) && Pick(rng, 0, 1) == 0;
        const int64_t v = small ? Pick(rng, IsSignedInteger(dt) ? -20 : 0, 20) : 0;
        for (int64_t b = 0; b < w; ++b) {
          bytes[i * w + b] = small ? static_cast<uint8_t>(static_cast<uint64_t>(v) >> (8 * b))
                                   : static_cast<uint8_t>(rng());
        }
      }
    }
  }
  return t;
}

inline onnx::AttributeProto Saturate(bool on) { return Int("saturate", on ? 1 : 0); }

// `t` (with a bad round_mode) fails on ref and on cpu alone with a model error naming round_mode.
inline void ExpectBadRoundModeRejected(const OpTest& t) {
  for (const std::string backend : {"ref", "cpu"}) {
    try {
      DataMovementSession(t, {backend}, true, 1)->Run(Feeds(t));
      ADD_FAILURE() << backend << ": expected an error";
    } catch (const Error& e) {
      EXPECT_EQ(e.category(), ErrorCategory::kInvalidModel) << backend << ": " << e.what();
      EXPECT_NE(std::string(e.what()).find("round_mode"), std::string::npos) << e.what();
    }
  }
}

}  // namespace ferry::testing::glue
