// MatMulWeights after the session released its source (OpKernel::ReleaseConstantInput): the plain matrix a
// primitive without a packed implementation needs is rebuilt from the packed copy, bit for bit.
#include <gtest/gtest.h>

#include <cstring>
#include <random>

#include "kernels/cpu/matmul_util.h"

namespace ferry::cpu {
namespace {

TEST(CpuMatMulWeights, PlainAfterReleaseEqualsTheSource) {
  constexpr int64_t k = 300, n = 200;
  auto b = std::make_shared<Tensor>(DataType::kFloat, Shape{k, n});
  std::mt19937 rng(1);
  std::uniform_real_distribution<float> d(-1, 1);
  for (int64_t i = 0; i < b->size(); ++i) b->data<float>()[i] = d(rng);
  const Tensor original = b->Clone();
  MatMulWeights w(b, PlainDesc({k, n}, DataType::kFloat), PlainDesc({64, k}, DataType::kFloat),
                  PlainDesc({64, n}, DataType::kFloat), dnnl::memory::desc(), dnnl::primitive_attr(), "test");
  if (w.bytes() == 0) GTEST_SKIP() << "oneDNN keeps the plain layout for this problem on this CPU: nothing packed";
  EXPECT_FALSE(w.released());
  EXPECT_TRUE(w.ReleaseSource());
  b.reset();  // the session frees the initializer
  EXPECT_TRUE(w.Usable(Tensor::Wrap(DataType::kFloat, {k, n}, nullptr, nullptr)));
  const int64_t packed = w.bytes();
  const Tensor& plain = w.Plain();
  ASSERT_EQ(plain.shape(), original.shape());
  EXPECT_EQ(std::memcmp(plain.raw_data(), original.raw_data(), original.nbytes()), 0);
  EXPECT_EQ(&w.Plain(), &plain);  // made once
  EXPECT_EQ(w.bytes(), packed + static_cast<int64_t>(original.nbytes()));  // counted while it exists
}

}  // namespace
}  // namespace ferry::cpu
