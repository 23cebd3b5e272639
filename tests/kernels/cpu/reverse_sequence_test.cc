// The cpu ReverseSequence kernel against ref (bit for bit): batch_axis/time_axis in both orders, ranks 2..4,
// lengths 0 to the full time (int32 or int64, constant or a runtime input), 1-, 2-, 4- and 8-byte types and bool,
// threads 1/2 on large copies, empty inputs; errors (a length past the time axis, lengths of the wrong count,
// rank 1, bad axes); strings refused.
#include "kernels/cpu/conv_test_util.h"

namespace ferry::testing {
namespace {

OpTest MakeCase(Tensor x, int64_t batch_axis, DataType len_dt, std::mt19937& rng, bool constant_lens, int threads) {
  const int64_t batch = x.dim(batch_axis), time = x.dim(1 - batch_axis);
  Tensor lens(len_dt, {batch});
  for (int64_t b = 0; b < batch; ++b) {
    const int64_t l = Pick(rng, 0, time);
    if (len_dt == DataType::kInt64) {
      lens.data<int64_t>()[b] = l;
    } else {
      lens.data<int32_t>()[b] = static_cast<int32_t>(l);
    }
  }
  OpTest t{.op = "ReverseSequence",
           .opset = 10,
           .inputs = {In("x", std::move(x)), constant_lens ? Const("sequence_lens", lens) : In("sequence_lens", lens)},
           .attributes = {Int("batch_axis", batch_axis), Int("time_axis", 1 - batch_axis)},
           .threads = threads};
  t.rtol = 0, t.atol = 0;
  return t;
}

TEST(CpuReverseSequence, RandomConfigurationsMatchRef) {
  std::mt19937 rng(10);
  const DataType types[] = {DataType::kFloat, DataType::kInt8, DataType::kFloat16, DataType::kInt64, DataType::kBool};
  for (int i = 0; i < 80; ++i) {
    const int64_t rank = Pick(rng, 2, 4);
    Shape xs;
    for (int64_t d = 0; d < rank; ++d) xs.push_back(Pick(rng, 1, 7));
    const DataType len_dt = i % 3 ? DataType::kInt64 : DataType::kInt32;
    OpTest t = MakeCase(RandomTensor(types[i % 5], xs, rng, -50, 50), i % 2, len_dt, rng, i % 4 == 0, 1 + i % 2);
    EXPECT_TRUE(MatchesRef(t, "cpu")) << "case " << i << ": " << DescribeCase(t);
  }
}

TEST(CpuReverseSequence, LargeCopiesOnTwoThreadsMatchRef) {
  std::mt19937 rng(4);
  for (const Shape& xs : {Shape{64, 100, 300}, Shape{500, 300}, Shape{3000, 200}}) {
    for (int64_t batch_axis : {0, 1}) {
      OpTest t = MakeCase(RandomTensor(DataType::kFloat, xs, rng), batch_axis, DataType::kInt64, rng, false, 2);
      EXPECT_TRUE(MatchesRef(t, "cpu")) << DescribeCase(t);
    }
  }
}

TEST(CpuReverseSequence, EmptyInputs) {
  std::mt19937 rng(5);
  EXPECT_TRUE(MatchesRef(MakeCase(RandomTensor(DataType::kFloat, {0, 3}, rng), 1, DataType::kInt64, rng, false, 1),
                         "cpu"));
  EXPECT_TRUE(MatchesRef(MakeCase(RandomTensor(DataType::kFloat, {4, 3, 0}, rng), 0, DataType::kInt64, rng, false, 1),
                         "cpu"));
}

TEST(CpuReverseSequence, ErrorsNameTheNode) {
  std::mt19937 rng(6);
  OpTest too_long = MakeCase(RandomTensor(DataType::kFloat, {2, 3}, rng), 1, DataType::kInt64, rng, false, 1);
  too_long.inputs[1].value.data<int64_t>()[1] = 3;
  OpTest wrong_count = MakeCase(RandomTensor(DataType::kFloat, {2, 3}, rng), 1, DataType::kInt64, rng, false, 1);
  wrong_count.inputs[1].value = Tensor(DataType::kInt64, {2});
  OpTest bad_axes = MakeCase(RandomTensor(DataType::kFloat, {2, 3}, rng), 1, DataType::kInt64, rng, false, 1);
  bad_axes.attributes = {Int("batch_axis", 1), Int("time_axis", 1)};
  for (const OpTest& t : {too_long, wrong_count, bad_axes}) {
    try {
      RunOn(t, {"cpu"}, true, 1);
      ADD_FAILURE() << "expected an error: " << DescribeCase(t);
    } catch (const Error& e) {
      EXPECT_NE(std::string(e.what()).find("node"), std::string::npos) << e.what();
    }
  }
}

TEST(CpuReverseSequence, StringsFallBackToRef) {
  std::mt19937 rng(7);
  Tensor s(DataType::kString, {2, 2});
  for (int i = 0; i < 4; ++i) s.data<std::string>()[i] = "s" + std::to_string(i);
  ExpectRefusedAndFallsBack(MakeCase(s, 0, DataType::kInt64, rng, false, 1), "supports T in");
}

}  // namespace
}  // namespace ferry::testing
