// cpu's plumbing kernels (ref's kernels registered under cpu names: src/kernels/cpu/plumbing.cc) run with no
// fallback and give ref's results: Shape with and without start/end, Size, on every kind of element type. Control
// flow, sequences and optionals run on cpu alone in the conformance suite (conformance_cpu_only: test_if*,
// test_loop*, test_scan*, test_sequence_*, test_optional_*). Also: the registry's opset refusal names each
// supported range once, not once per ISA or dtype variant.
#include "kernels/cpu/data_movement_test_util.h"

namespace ferry::testing::glue {
namespace {

TEST(CpuPlumbing, ShapeAndSizeMatchRefOnCpuAlone) {
  std::mt19937 rng(2401);
  for (DataType dt : {DataType::kFloat, DataType::kInt64, DataType::kUint8, DataType::kBool}) {
    const Tensor x = RandomBits(dt, {2, 3, 0, 5}, rng);
    const Tensor y = RandomBits(dt, {4, 1, 6}, rng);
    EXPECT_TRUE(MatchesRef({.op = "Shape", .opset = 13, .inputs = {In("x", y)}}, "cpu"));
    EXPECT_TRUE(MatchesRef({.op = "Shape", .opset = 13, .inputs = {In("x", x)}}, "cpu"));
    EXPECT_TRUE(MatchesRef({.op = "Shape", .opset = 15, .inputs = {In("x", x)},
                            .attributes = {Int("start", 1), Int("end", -1)}}, "cpu"));
    EXPECT_TRUE(MatchesRef({.op = "Shape", .opset = 21, .inputs = {In("x", y)}, .attributes = {Int("start", -2)}},
                           "cpu"));
    EXPECT_TRUE(MatchesRef({.op = "Size", .opset = 13, .inputs = {In("x", x)}}, "cpu"));
    EXPECT_TRUE(MatchesRef({.op = "Size", .opset = 21, .inputs = {In("x", y)}}, "cpu"));
  }
}

TEST(CpuPlumbing, ShapeOfADynamicTensorRunsOnACpuKernel) {
  // A Shape the optimizer cannot fold (its input is NonZero's output, whose length only the run knows).
  std::mt19937 rng(2403);
  OpTest t{.op = "NonZero", .opset = 13, .inputs = {In("x", RandomBits(DataType::kFloat, {3, 4}, rng))}};
  std::string bytes = OneNodeModel(t);
  onnx::ModelProto m;
  ASSERT_TRUE(m.ParseFromString(bytes));
  auto* g = m.mutable_graph();
  const std::string nz = g->output(0).name();
  auto* shape = g->add_node();
  shape->set_op_type("Shape");
  shape->set_name("shape_of_nonzero");
  shape->add_input(nz);
  shape->add_output("shape_out");
  auto* out = g->add_output();
  out->set_name("shape_out");
  out->mutable_type()->mutable_tensor_type()->set_elem_type(onnx::TensorProto::INT64);
  bytes = m.SerializeAsString();
  auto session = SessionFor(bytes, {"cpu"}, true, 1);
  bool found = false;
  for (const auto& n : session->placement().nodes) {
    if (n.op != "Shape") continue;
    found = true;
    EXPECT_EQ(n.backend, "cpu");
    EXPECT_EQ(n.kind, "native");
  }
  EXPECT_TRUE(found) << "the Shape node was folded away; the test needs a dynamic input";
  const auto got = session->Run(Feeds(t));
  const auto want = SessionFor(bytes, {"ref"}, true, 1)->Run(Feeds(t));
  ASSERT_EQ(got.size(), 2u);
  EXPECT_TRUE(SameBits(got[1].second, want[1].second));
}

TEST(CpuPlumbing, OpsetRefusalNamesEachRangeOnce) {
  std::mt19937 rng(2402);
  // PRelu has AVX-512, AVX2 and scalar variants of one version range on cpu.
  OpTest t{.op = "PRelu", .opset = 6,
           .inputs = {In("x", RandomBits(DataType::kFloat, {2, 3}, rng)),
                      In("slope", RandomBits(DataType::kFloat, {2, 3}, rng))}};
  ExpectRefusedAndFallsBack(t, "implements PRelu for opsets 7-, not opset 6");
}

}  // namespace
}  // namespace ferry::testing::glue
