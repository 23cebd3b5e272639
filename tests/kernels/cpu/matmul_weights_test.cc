// MatMulWeights: the layout a constant B is copied into (oneDNN's blocked one, or, where oneDNN's gemm takes it
// unblocked, rows padded to an odd number of cache lines), and, after the session released its source
// (OpKernel::ReleaseConstantInput), the plain matrix a primitive without a packed implementation needs, rebuilt
// from the packed copy bit for bit; and readers of one initializer sharing one copy.
#include <gtest/gtest.h>

#include <cstring>
#include <memory>
#include <random>
#include <vector>

#include "kernels/cpu/matmul_util.h"

namespace ferry::cpu {
namespace {

// True when oneDNN's matmul wants an unblocked K×N B for an M-row A on this CPU (its gemm-based implementation).
bool TakesUnblockedB(int64_t m, int64_t k, int64_t n) {
  const dnnl::memory::desc any({k, n}, dnnl::memory::data_type::f32, dnnl::memory::format_tag::any);
  const dnnl::matmul::primitive_desc pd(
      dnnl::matmul::desc(PlainDesc({m, k}, DataType::kFloat), any, PlainDesc({m, n}, DataType::kFloat)), Engine());
  return pd.weights_desc().data.format_desc.blocking.inner_nblks == 0;
}

// Weights for a random K×N B stored row-major or (transposed) as its N×K transpose, for an M-row A.
MatMulWeights MakeWeights(int64_t m, int64_t k, int64_t n, bool transposed) {
  auto b = std::make_shared<Tensor>(DataType::kFloat, transposed ? Shape{n, k} : Shape{k, n});
  for (int64_t i = 0; i < b->size(); ++i) b->data<float>()[i] = static_cast<float>(i % 7) - 3.0f;
  const dnnl::memory::desc plain({k, n}, dnnl::memory::data_type::f32,
                                 transposed ? dnnl::memory::dims{1, k} : dnnl::memory::dims{n, 1});
  return MatMulWeights(b, plain, PlainDesc({m, k}, DataType::kFloat), PlainDesc({m, n}, DataType::kFloat),
                       dnnl::memory::desc(), dnnl::primitive_attr(), "test");
}

TEST(CpuMatMulWeights, UnblockedLayoutsGetRowsOfAnOddNumberOfCacheLines) {
  if (!TakesUnblockedB(128, 768, 3072)) GTEST_SKIP() << "oneDNN packs B into a blocked layout on this CPU";
  struct Case {
    int64_t m, k, n;
    bool transposed;
    int64_t row_stride;  // of the copy; 0: no copy (the plain matrix serves)
  };
  const Case cases[] = {
      {128, 768, 3072, false, 3088},  // 192 lines, padded to 193
      {128, 768, 768, false, 784},    // 48 -> 49
      {128, 300, 1000, false, 1008},  // 62.5 -> 63 lines, already odd
      {64, 256, 144, false, 0},       // 9 lines: already odd and dense, nothing to gain
      {128, 96, 100, false, 0},       // too narrow to pad
      {64, 300, 100, true, 100},      // ... but made row-major
      {4, 2048, 1000, true, 0},       // a small M reads the transposed B best as it is
      {64, 2048, 1000, true, 1008},   // a larger one gets the row-major padded copy
  };
  for (const Case& c : cases) {
    const MatMulWeights w = MakeWeights(c.m, c.k, c.n, c.transposed);
    SCOPED_TRACE(std::to_string(c.m) + "x" + std::to_string(c.k) + "x" + std::to_string(c.n) +
                 (c.transposed ? " transposed" : ""));
    if (c.row_stride == 0) {
      EXPECT_FALSE(w.has_packed());
      EXPECT_EQ(w.bytes(), 0);
      continue;
    }
    ASSERT_TRUE(w.has_packed());
    const dnnl::memory::desc& d = w.desc();
    EXPECT_EQ(d.dims(), (dnnl::memory::dims{c.k, c.n}));
    EXPECT_EQ(d.data.format_desc.blocking.strides[0], c.row_stride);
    EXPECT_EQ(d.data.format_desc.blocking.strides[1], 1);
    EXPECT_EQ(w.bytes(), static_cast<int64_t>(d.get_size()));
    // The copy holds B's values (row-major here whatever the source's layout); its padding is zero.
    const float* p = static_cast<const float*>(w.memory().get_data_handle());
    for (int64_t r : {int64_t{0}, c.k / 2, c.k - 1}) {
      for (int64_t j = 0; j < c.n; ++j) {
        const int64_t src = c.transposed ? j * c.k + r : r * c.n + j;
        ASSERT_EQ(p[r * c.row_stride + j], static_cast<float>(src % 7) - 3.0f) << "row " << r << " col " << j;
      }
      if (r + 1 < c.k) {
        for (int64_t j = c.n; j < c.row_stride; ++j) ASSERT_EQ(p[r * c.row_stride + j], 0.0f) << "row " << r;
      }
    }
  }
}

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

// Kernels reading one initializer the same way (tied weights, an unrolled loop) share one packed copy, counted
// once; an equal matrix in another initializer gets its own; the copy outlives the kernel that made it.
TEST(CpuMatMulWeights, ReadersOfOneInitializerShareItsCopy) {
  constexpr int64_t m = 64, k = 300, n = 200;
  auto b = std::make_shared<Tensor>(DataType::kFloat, Shape{k, n});
  for (int64_t i = 0; i < b->size(); ++i) b->data<float>()[i] = static_cast<float>(i % 11) - 5.0f;
  auto twin = std::make_shared<Tensor>(b->Clone());
  auto make = [&](const std::shared_ptr<Tensor>& t) {
    return std::make_unique<MatMulWeights>(t, PlainDesc({k, n}, DataType::kFloat), PlainDesc({m, k}, DataType::kFloat),
                                           PlainDesc({m, n}, DataType::kFloat), dnnl::memory::desc(),
                                           dnnl::primitive_attr(), "test");
  };
  auto first = make(b);
  if (first->bytes() == 0) GTEST_SKIP() << "oneDNN keeps the plain layout for this problem on this CPU";
  auto second = make(b);
  auto other = make(twin);
  EXPECT_EQ(second->memory().get_data_handle(), first->memory().get_data_handle());
  EXPECT_EQ(second->bytes(), 0) << "a shared copy is counted for the kernel that made it";
  EXPECT_NE(other->memory().get_data_handle(), first->memory().get_data_handle());
  EXPECT_EQ(other->bytes(), first->bytes());
  const void* shared = first->memory().get_data_handle();
  const std::vector<char> contents(static_cast<const char*>(shared),
                                   static_cast<const char*>(shared) + first->desc().get_size());
  first.reset();
  ASSERT_EQ(second->memory().get_data_handle(), shared);
  EXPECT_EQ(std::memcmp(second->memory().get_data_handle(), contents.data(), contents.size()), 0);
  second.reset();
  EXPECT_GT(make(b)->bytes(), 0) << "no kernel held the copy: the next one packs again";
}

}  // namespace
}  // namespace ferry::cpu
