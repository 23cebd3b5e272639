// cpu Einsum (GEMM lowering) against ref, float32 and float64: matrix products with every operand layout (in place, transposed,
// packed), batched attention-style equations, broadcasting ellipses and size-1 dims, diagonals and labels summed in
// one operand only, outer and elementwise products, one-input transposes/diagonals/sums, implicit outputs, empty
// tensors and empty sums, 1 and 2 threads; three inputs fall back to ref; bad shapes give ref's error.
#include "kernels/cpu/data_movement_test_util.h"

namespace ferry::testing::glue {
namespace {

struct EinsumCase {
  std::string equation;
  std::vector<Shape> shapes;
};

OpTest EinsumTest(const EinsumCase& c, std::mt19937& rng, int threads, DataType dt = DataType::kFloat) {
  OpTest t{.op = "Einsum", .opset = 12, .attributes = {Str("equation", c.equation)}, .threads = threads};
  for (size_t i = 0; i < c.shapes.size(); ++i) {
    t.inputs.push_back(In("x" + std::to_string(i), RandomTensor(dt, c.shapes[i], rng)));
  }
  t.rtol = 1e-4;
  t.atol = 1e-5;
  return t;
}

TEST(CpuEinsum, TwoInputEquationsMatchRef) {
  std::mt19937 rng(1212);
  const std::vector<EinsumCase> cases = {
      {"ij,jk->ik", {{7, 5}, {5, 9}}},            // both in place
      {"ij,kj->ik", {{7, 5}, {9, 5}}},            // B transposed
      {"ji,jk->ik", {{5, 7}, {5, 9}}},            // A transposed
      {"ij,jk->ki", {{7, 5}, {5, 9}}},            // output scattered
      {"bij,bjk->bik", {{8, 6, 5}, {8, 5, 4}}},   // batched, in place
      {"bhqd,bhkd->bhqk", {{2, 3, 7, 8}, {2, 3, 6, 8}}},
      {"bhqk,bhkd->bhqd", {{2, 3, 7, 6}, {2, 3, 6, 8}}},
      {"bqhd,bkhd->bhqk", {{2, 7, 3, 8}, {2, 6, 3, 8}}},  // strided batch, packed
      {"i,i->", {{17}, {17}}},                    // dot
      {"i,j->ij", {{6}, {5}}},                    // outer product (no K)
      {"ij,ij->ij", {{4, 5}, {4, 5}}},            // elementwise (batch only)
      {"ij,j->i", {{6, 9}, {9}}},
      {"...ij,...jk->...ik", {{2, 1, 3, 4}, {5, 4, 6}}},  // ellipsis broadcast
      {"ik,kj->ij", {{3, 1}, {4, 5}}},            // k broadcast in A: summed in B only
      {"ii,ij->j", {{5, 5}, {5, 3}}},             // diagonal of A, packed
      {"ijk,jl->il", {{3, 4, 5}, {4, 6}}},        // k summed in A only
      {"ij,jk", {{3, 4}, {4, 2}}},                // implicit output
  };
  for (const EinsumCase& c : cases) {
    for (int threads : {1, 2}) {
      EXPECT_TRUE(MatchesRef(EinsumTest(c, rng, threads), "cpu")) << c.equation << " threads " << threads;
    }
  }
}

TEST(CpuEinsum, OneInputEquationsMatchRef) {
  std::mt19937 rng(1213);
  const std::vector<EinsumCase> cases = {
      {"ij->ji", {{5, 7}}}, {"ii->i", {{6, 6}}},   {"ij->", {{4, 9}}},      {"bij->bji", {{3, 4, 5}}},
      {"ijk->ki", {{3, 4, 5}}}, {"...ii->...i", {{2, 3, 3}}}, {"ij", {{3, 2}}}, {"i->i", {{0}}},
  };
  for (const EinsumCase& c : cases) {
    for (int threads : {1, 2}) {
      EXPECT_TRUE(MatchesRef(EinsumTest(c, rng, threads), "cpu")) << c.equation << " threads " << threads;
    }
  }
}

TEST(CpuEinsum, Float64MatchesRef) {
  std::mt19937 rng(1218);
  for (const EinsumCase& c : std::vector<EinsumCase>{{"ij,kj->ik", {{7, 5}, {9, 5}}},
                                                     {"ji,jk->ik", {{5, 7}, {5, 9}}},
                                                     {"bij,bjk->bik", {{3, 6, 5}, {3, 5, 4}}},
                                                     {"ii->i", {{4, 4}}},
                                                     {"ij->", {{3, 5}}}}) {
    for (int threads : {1, 2}) {
      EXPECT_TRUE(MatchesRef(EinsumTest(c, rng, threads, DataType::kDouble), "cpu")) << c.equation;
    }
  }
}

TEST(CpuEinsum, EmptyTensorsAndEmptySums) {
  std::mt19937 rng(1214);
  for (const EinsumCase& c : std::vector<EinsumCase>{{"ij,jk->ik", {{3, 0}, {0, 4}}},   // empty sum: zeros
                                                     {"ij,jk->ik", {{0, 5}, {5, 4}}},   // empty output
                                                     {"ij->i", {{3, 0}}}}) {
    EXPECT_TRUE(MatchesRef(EinsumTest(c, rng, 1), "cpu")) << c.equation;
  }
}

TEST(CpuEinsum, LargeBatchesSplitOverThreads) {
  std::mt19937 rng(1215);
  const EinsumCase c{"bhqd,bhkd->bhqk", {{1, 12, 64, 32}, {1, 12, 64, 32}}};
  EXPECT_TRUE(MatchesRef(EinsumTest(c, rng, 2), "cpu"));
  const EinsumCase big{"ij,jk->ik", {{96, 200}, {200, 130}}};  // one batch: the GEMM gets the threads
  EXPECT_TRUE(MatchesRef(EinsumTest(big, rng, 2), "cpu"));
}

TEST(CpuEinsum, ThreeInputsFallBackToRef) {
  std::mt19937 rng(1216);
  ExpectRefusedAndFallsBack(EinsumTest({"ij,jk,kl->il", {{2, 3}, {3, 4}, {4, 5}}}, rng, 1),
                            "Einsum: 3 inputs are not implemented on cpu");
}

TEST(CpuEinsum, BadShapesGiveRefsError) {
  std::mt19937 rng(1217);
  ExpectSameErrorAsRef(EinsumTest({"ij,jk->ik", {{2, 3}, {4, 5}}}, rng, 1), ErrorCategory::kInvalidArgument);
}

}  // namespace
}  // namespace ferry::testing::glue
