// KernelContext::ReuseInput: an output may take over an input's buffer only when the executor says the input dies
// at this step and nothing else shares the buffer.
#include <gtest/gtest.h>

#include "ir/graph.h"
#include "kernels/kernel.h"

namespace ferry {
namespace {

struct Fixture {
  ir::Graph g;
  ir::Node* node;
  Fixture() {
    ir::Value* a = g.AddValue("a");
    ir::Value* y = g.AddValue("y");
    node = g.AddNode("n", "Identity", "", {a}, {y});
  }
};

TEST(KernelContextReuseInput, TakesAUniqueDyingBuffer) {
  Fixture f;
  Value in(Tensor::FromVector<float>(DataType::kFloat, {2, 3}, {1, 2, 3, 4, 5, 6}));
  const void* buffer = in.tensor().raw_data();
  const Value* ins[] = {&in};
  std::vector<Value> outs(1);
  const char reusable[] = {1};
  KernelContext ctx(*f.node, ins, outs, 1, nullptr, reusable);
  Tensor* y = ctx.ReuseInput(0, 0, DataType::kFloat, {3, 2});
  ASSERT_NE(y, nullptr);
  EXPECT_EQ(y->raw_data(), buffer);
  EXPECT_EQ(y->shape(), (Shape{3, 2}));
  EXPECT_EQ(y->data<float>()[5], 6.0f);  // the input's data
  EXPECT_EQ(outs[0].tensor().raw_data(), buffer);
}

TEST(KernelContextReuseInput, RefusesSharedOrLiveOrMismatchedBuffers) {
  Fixture f;
  Value in(Tensor::FromVector<float>(DataType::kFloat, {2, 3}, {1, 2, 3, 4, 5, 6}));
  const Value* ins[] = {&in};
  std::vector<Value> outs(1);
  {
    const char reusable[] = {0};  // the value is read later
    KernelContext ctx(*f.node, ins, outs, 1, nullptr, reusable);
    EXPECT_EQ(ctx.ReuseInput(0, 0, DataType::kFloat, {2, 3}), nullptr);
  }
  const char reusable[] = {1};
  KernelContext ctx(*f.node, ins, outs, 1, nullptr, reusable);
  EXPECT_EQ(ctx.ReuseInput(0, 0, DataType::kFloat, {4}), nullptr);           // other size
  EXPECT_EQ(ctx.ReuseInput(0, 0, DataType::kInt32, {2, 3}), nullptr);        // other dtype
  EXPECT_EQ(ctx.ReuseInput(1, 0, DataType::kFloat, {2, 3}), nullptr);        // no such input
  const Tensor alias = in.tensor().Reshaped({6});                            // a view shares the buffer
  EXPECT_EQ(ctx.ReuseInput(0, 0, DataType::kFloat, {2, 3}), nullptr);
  KernelContext none(*f.node, ins, outs, 1, nullptr);  // no reuse information: never
  EXPECT_EQ(none.ReuseInput(0, 0, DataType::kFloat, {2, 3}), nullptr);
}

}  // namespace
}  // namespace ferry
