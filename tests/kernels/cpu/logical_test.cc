// The cpu And/Or/Xor kernels against ref, bit for bit, on every broadcast path (binary_elementwise_map_test_util.h),
// threads 1 and 2, opsets 7 and 17; the full truth tables; a shape mismatch named after the node; opset 1 left to
// ref.
#include "kernels/cpu/binary_elementwise_map_test_util.h"

namespace ferry::testing {
namespace {

const char* const kOps[][2] = {{"And", "and"}, {"Or", "or"}, {"Xor", "xor"}};

TEST(CpuLogical, MatchesRef) {
  std::mt19937 rng(21);
  for (const auto& op : kOps) {
    for (const MapShapes& s : MapShapeCases()) {
      for (int threads : {1, 2}) {
        Tensor b = MapRandom(DataType::kBool, s.b, rng);
        OpTest t{.op = op[0],
                 .opset = EwPick(rng, 0, 1) ? 17 : 7,
                 .inputs = {In("a", MapRandom(DataType::kBool, s.a, rng)),
                            EwPick(rng, 0, 2) ? In("b", b) : Const("b", b)},
                 .rtol = 0,
                 .atol = 0,
                 .threads = threads};
        EXPECT_TRUE(MatchesRefWithKernel(t, "", "cpu.bool_" + std::string(op[1]) + ".7"))
            << op[0] << " " << s.what << ", threads " << threads;
      }
    }
  }
}

TEST(CpuLogical, TruthTables) {
  const bool a[] = {false, false, true, true}, b[] = {false, true, false, true};
  const bool want[3][4] = {{false, false, false, true}, {false, true, true, true}, {false, true, true, false}};
  for (int k = 0; k < 3; ++k) {
    Tensor ta(DataType::kBool, {4}), tb(DataType::kBool, {4});
    for (int i = 0; i < 4; ++i) {
      ta.data<bool>()[i] = a[i];
      tb.data<bool>()[i] = b[i];
    }
    OpTest t{.op = kOps[k][0], .inputs = {In("a", ta), In("b", tb)}};
    const auto out = EwSession(t, {"cpu"}, true, 1)->Run(Feeds(t));
    for (int i = 0; i < 4; ++i) EXPECT_EQ(out[0].second.data<bool>()[i], want[k][i]) << kOps[k][0] << " " << i;
  }
}

TEST(CpuLogical, MismatchedShapesNameTheNode) {
  std::mt19937 rng(22);
  ExpectBroadcastErrorNamesNode("Xor", 7, {MapRandom(DataType::kBool, {3}, rng), MapRandom(DataType::kBool, {2}, rng)},
                                "[3] and [2] cannot be broadcast");
}

TEST(CpuLogical, LegacyOpsetFallsBackToRef) {
  std::mt19937 rng(23);
  OpTest legacy{.op = "Or",
                .opset = 6,
                .inputs = {In("a", MapRandom(DataType::kBool, {2, 3}, rng)),
                           In("b", MapRandom(DataType::kBool, {2, 3}, rng))}};
  ExpectRefusedAndFallsBack(legacy, "not opset 6");
}

}  // namespace
}  // namespace ferry::testing
