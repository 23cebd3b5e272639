// The cpu MaxUnpool kernel against ref, bit for bit: 1-D/2-D/3-D, with kernel, strides and pads, on indices as
// MaxPool returns them (each plane addressing its own plane: the parallel scatter) and on indices that cross planes
// or repeat (the in-order scatter, last write wins); without output_shape, and with a constant or fed output_shape
// larger or smaller than the inferred shape (crop); an index out of range and inputs Prepare refuses.
#include "kernels/cpu/conv_test_util.h"

namespace ferry::testing {
namespace {

Tensor Int64Tensor(const Shape& s, const std::vector<int64_t>& v) {
  Tensor t(DataType::kInt64, s);
  std::copy(v.begin(), v.end(), t.data<int64_t>());
  return t;
}

// Indices into the inferred shape `inferred` for X of shape `xs`: within each plane when `local`, else anywhere
// (crossing planes, repeating).
Tensor RandomIndices(const Shape& xs, const Shape& inferred, bool local, std::mt19937& rng) {
  const int64_t planes = xs[0] * xs[1], in_plane = ShapeElementCount(xs) / planes;
  const int64_t out_plane = ShapeElementCount(inferred) / planes;
  std::vector<int64_t> v;
  for (int64_t p = 0; p < planes; ++p) {
    for (int64_t k = 0; k < in_plane; ++k) {
      v.push_back(local ? p * out_plane + Pick(rng, 0, out_plane - 1) : Pick(rng, 0, planes * out_plane - 1));
    }
  }
  return Int64Tensor(xs, v);
}

struct UnpoolCase {
  Shape x;
  std::vector<int64_t> kernel, strides, pads;
  Shape inferred;
};

OpTest UnpoolTest(const UnpoolCase& c, const Tensor& indices, std::mt19937& rng, int opset, int threads) {
  OpTest t{.op = "MaxUnpool",
           .opset = opset,
           .inputs = {In("x", RandomTensor(DataType::kFloat, c.x, rng)), In("i", indices)},
           .attributes = {Ints("kernel_shape", c.kernel)},
           .rtol = 0,
           .atol = 0,
           .threads = threads};
  if (!c.strides.empty()) t.attributes.push_back(Ints("strides", c.strides));
  if (!c.pads.empty()) t.attributes.push_back(Ints("pads", c.pads));
  return t;
}

const UnpoolCase kCases[] = {
    {{1, 2, 5}, {2}, {2}, {}, {1, 2, 10}},
    {{2, 3, 4, 4}, {2, 2}, {2, 2}, {}, {2, 3, 8, 8}},
    {{1, 64, 28, 28}, {3, 3}, {2, 2}, {1, 1, 1, 1}, {1, 64, 55, 55}},  // parallel: 50K elements
    {{1, 2, 2, 3, 3}, {2, 2, 2}, {2, 1, 2}, {0, 1, 0, 0, 0, 1}, {1, 2, 4, 3, 5}},
};

TEST(CpuMaxUnpool, InferredShapeMatchesRef) {
  std::mt19937 rng(11);
  for (const UnpoolCase& c : kCases) {
    for (bool local : {true, false}) {
      for (int opset : {9, 11}) {
        for (int threads : {1, 2}) {
          const OpTest t = UnpoolTest(c, RandomIndices(c.x, c.inferred, local, rng), rng, opset, threads);
          EXPECT_TRUE(MatchesRef(t, "cpu")) << ShapeToString(c.x) << " local=" << local << " opset " << opset;
        }
      }
    }
  }
}

TEST(CpuMaxUnpool, OutputShapeMatchesRef) {
  std::mt19937 rng(12);
  for (const UnpoolCase& c : kCases) {
    // Larger in every dim, smaller in the last spatial dim and in C (cropped), and the inferred shape itself.
    Shape larger = c.inferred, smaller = c.inferred;
    for (size_t d = 2; d < larger.size(); ++d) larger[d] += 1 + static_cast<int64_t>(d % 2);
    smaller.back() -= 1;
    smaller[1] = std::max<int64_t>(1, smaller[1] - 1);
    for (const Shape& y : {larger, smaller, c.inferred}) {
      for (bool constant : {true, false}) {
        OpTest t = UnpoolTest(c, RandomIndices(c.x, c.inferred, true, rng), rng, 11, 2);
        const Tensor shape = Int64Tensor({static_cast<int64_t>(y.size())}, y);
        t.inputs.push_back(constant ? Const("output_shape", shape) : In("output_shape", shape));
        EXPECT_TRUE(MatchesRef(t, "cpu")) << ShapeToString(c.x) << " -> " << ShapeToString(y)
                                          << (constant ? " constant" : " fed");
      }
    }
  }
}

TEST(CpuMaxUnpool, ErrorsNameTheNode) {
  std::mt19937 rng(13);
  const UnpoolCase& c = kCases[1];
  Tensor bad = RandomIndices(c.x, c.inferred, true, rng);
  bad.data<int64_t>()[5] = ShapeElementCount(c.inferred);  // one past the end
  try {
    RunOn(UnpoolTest(c, bad, rng, 11, 2), {"cpu"}, true, 2);
    ADD_FAILURE() << "expected an error for an index out of range";
  } catch (const InvalidArgumentError& e) {
    EXPECT_NE(std::string(e.what()).find("out of range"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("node 'node'"), std::string::npos) << e.what();
  }
  // I of another shape than X's.
  const OpTest wrong = UnpoolTest(c, Int64Tensor({2, 3, 4, 3}, std::vector<int64_t>(72, 0)), rng, 11, 1);
  try {
    RunOn(wrong, {"cpu"}, true, 1);
    ADD_FAILURE() << "expected an error for I of shape [2,3,4,3] with X [2,3,4,4]";
  } catch (const InvalidArgumentError& e) {
    EXPECT_NE(std::string(e.what()).find("X's shape"), std::string::npos) << e.what();
  }
  // A fed output_shape of the wrong rank.
  OpTest rank = UnpoolTest(c, RandomIndices(c.x, c.inferred, true, rng), rng, 11, 1);
  rank.inputs.push_back(In("output_shape", Int64Tensor({2}, {8, 8})));
  EXPECT_THROW(RunOn(rank, {"cpu"}, true, 1), InvalidArgumentError);
}

TEST(CpuMaxUnpool, OtherTypesFallBackToRef) {
  std::mt19937 rng(14);
  const UnpoolCase& c = kCases[0];
  OpTest t = UnpoolTest(c, RandomIndices(c.x, c.inferred, true, rng), rng, 11, 1);
  t.inputs[0] = In("x", RandomTensor(DataType::kDouble, c.x, rng));
  ExpectRefusedAndFallsBack(t, "supports T1 in {float32}");
}

}  // namespace
}  // namespace ferry::testing
