// The cpu BitShift kernels against ref, bit for bit: uint8..uint64, LEFT and RIGHT, shift amounts from 0 past the
// bit width, on every broadcast path (binary_elementwise_map_test_util.h) and every ISA variant, threads 1 and 2;
// known results; a bad direction and a shape mismatch named after the node.
#include "kernels/cpu/binary_elementwise_map_test_util.h"

namespace ferry::testing {
namespace {

struct Typed {
  DataType dt;
  const char* tag;
  int bits;
};
const Typed kTypes[] = {{DataType::kUint8, "u8", 8},
                        {DataType::kUint16, "u16", 16},
                        {DataType::kUint32, "u32", 32},
                        {DataType::kUint64, "u64", 64}};

// Shift amounts in [0, bits + 3] (the last ones shift everything out), and now and then the type's maximum.
Tensor Amounts(const Typed& type, const Shape& shape, std::mt19937& rng) {
  Tensor t = MapRandom(type.dt, shape, rng);
  auto fill = [&]<class T>(T* p) {
    for (int64_t i = 0; i < t.size(); ++i) {
      p[i] = EwPick(rng, 0, 15) ? static_cast<T>(EwPick(rng, 0, type.bits + 3)) : static_cast<T>(-1);
    }
  };
  if (type.dt == DataType::kUint8) fill(t.data<uint8_t>());
  if (type.dt == DataType::kUint16) fill(t.data<uint16_t>());
  if (type.dt == DataType::kUint32) fill(t.data<uint32_t>());
  if (type.dt == DataType::kUint64) fill(t.data<uint64_t>());
  return t;
}

TEST(CpuBitShift, MatchesRef) {
  std::mt19937 rng(91);
  for (const Typed& type : kTypes) {
    for (const char* direction : {"LEFT", "RIGHT"}) {
      for (const MapShapes& s : MapShapeCases(type.dt == DataType::kUint32)) {
        Tensor y = Amounts(type, s.b, rng);
        OpTest t{.op = "BitShift",
                 .opset = 11,
                 .inputs = {In("x", MapRandom(type.dt, s.a, rng)), EwPick(rng, 0, 2) ? In("y", y) : Const("y", y)},
                 .attributes = {Str("direction", direction)},
                 .rtol = 0,
                 .atol = 0,
                 .threads = static_cast<int>(EwPick(rng, 1, 2))};
        EXPECT_TRUE(MatchesRefOnEveryIsa(t, "cpu." + std::string(type.tag) + "_bit_shift", ".11"))
            << type.tag << " " << direction << " " << s.what;
      }
    }
  }
}

TEST(CpuBitShift, KnownValues) {
  const std::vector<uint8_t> x = {1, 0x81, 0xFF, 16};
  const std::vector<uint8_t> y = {7, 1, 8, 2};
  const uint8_t left[] = {0x80, 0x02, 0, 64}, right[] = {0, 0x40, 0, 4};
  for (const char* direction : {"LEFT", "RIGHT"}) {
    OpTest t{.op = "BitShift",
             .opset = 11,
             .inputs = {In("x", Tensor::FromVector<uint8_t>(DataType::kUint8, {4}, x)),
                        In("y", Tensor::FromVector<uint8_t>(DataType::kUint8, {4}, y))},
             .attributes = {Str("direction", direction)}};
    const auto out = EwSession(t, {"cpu"}, true, 1)->Run(Feeds(t));
    const uint8_t* want = std::string(direction) == "LEFT" ? left : right;
    for (int i = 0; i < 4; ++i) EXPECT_EQ(out[0].second.data<uint8_t>()[i], want[i]) << direction << " " << i;
  }
}

TEST(CpuBitShift, BadDirectionNamesTheNode) {
  OpTest t{.op = "BitShift",
           .opset = 11,
           .inputs = {In("x", Tensor::FromVector<uint8_t>(DataType::kUint8, {1}, {1})),
                      In("y", Tensor::FromVector<uint8_t>(DataType::kUint8, {1}, {1}))},
           .attributes = {Str("direction", "UP")}};
  try {
    EwSession(t, {"cpu"}, true, 1)->Run(Feeds(t));
    ADD_FAILURE() << "expected an InvalidModelError";
  } catch (const InvalidModelError& e) {
    EXPECT_NE(std::string(e.what()).find("BitShift direction must be"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("(BitShift)"), std::string::npos) << e.what();  // the node's description
  }
}

TEST(CpuBitShift, MismatchedShapesNameTheNode) {
  std::mt19937 rng(92);
  std::vector<NodeInput> decl = {{"x0", DataType::kUint16}, {"x1", DataType::kUint16}};
  auto session = OneNodeSession(
      "BitShift", decl, {"y"}, 11, [](onnx::NodeProto& n) { *n.add_attribute() = Str("direction", "LEFT"); },
      OnlyBackend("cpu", 1));
  try {
    session->Run({{"x0", MapRandom(DataType::kUint16, {2, 3}, rng)}, {"x1", MapRandom(DataType::kUint16, {4}, rng)}});
    ADD_FAILURE() << "expected an InvalidArgumentError";
  } catch (const InvalidArgumentError& e) {
    EXPECT_NE(std::string(e.what()).find("node 'n0' (BitShift)"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("[2,3] and [4] cannot be broadcast"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace ferry::testing
