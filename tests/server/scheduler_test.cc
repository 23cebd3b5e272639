// The scheduler on a real session: requests batched along dim 0 and split back, queue bound, timeouts,
// cancellation. The model is y = x + 1 on float[N,4].
#include "server/scheduler.h"

#include <gtest/gtest.h>

#include <future>

#include "testing/model_builder.h"

namespace ferry::server {
namespace {

std::unique_ptr<Session> AddOne() {
  testing::ModelBuilder b;
  b.InputSym("x", onnx::TensorProto::FLOAT, {-1, 4}, "N");
  auto* out = b.graph().add_output();
  out->set_name("y");
  auto* tt = out->mutable_type()->mutable_tensor_type();
  tt->set_elem_type(onnx::TensorProto::FLOAT);
  tt->mutable_shape()->add_dim()->set_dim_param("N");
  tt->mutable_shape()->add_dim()->set_dim_value(4);
  b.FloatInitializer("one", {1}, {1.0f});
  b.Node("Add", {"x", "one"}, {"y"});
  const std::string bytes = b.Bytes();
  return Session::CreateFromBytes({reinterpret_cast<const uint8_t*>(bytes.data()), bytes.size()});
}

SchedulerOptions Options(int delay_us, size_t queue = 16) {
  SchedulerOptions o;
  o.model = "add";
  o.version = "1";
  o.batch.dynamic = true;
  o.batch.max_batch_size = 8;
  o.batch.max_delay = std::chrono::microseconds(delay_us);
  o.max_queue_size = queue;
  o.outputs = {"y"};
  return o;
}

struct Client {
  std::promise<InferResponse> promise;
  InferRequest request;
  Client(float value, int64_t rows) {
    request.batch_size = rows;
    request.inputs.emplace_back("x", Tensor::FromVector<float>(DataType::kFloat, {rows, 4},
                                                               std::vector<float>(static_cast<size_t>(rows * 4), value)));
  }
  Scheduler::Submitted Submit(Scheduler& s) {
    InferCallback done = [this](InferResponse r) { promise.set_value(std::move(r)); };
    return s.Submit(request, done);
  }
};

std::unique_ptr<Scheduler> Make(SchedulerOptions o, std::shared_ptr<ModelStats> stats) {
  std::vector<std::unique_ptr<Session>> instances;
  instances.push_back(AddOne());
  return std::make_unique<Scheduler>(std::move(instances), std::move(o), std::move(stats));
}

TEST(ServerScheduler, BatchesRequestsAndSplitsTheOutputs) {
  auto stats = std::make_shared<ModelStats>("add", "1");
  auto s = Make(Options(200000), stats);  // waits up to 200 ms for a full batch of 8
  std::vector<std::unique_ptr<Client>> clients;
  for (int i = 0; i < 4; ++i) clients.push_back(std::make_unique<Client>(static_cast<float>(i * 10), 2));
  for (auto& c : clients) ASSERT_EQ(c->Submit(*s), Scheduler::Submitted::kQueued);
  for (int i = 0; i < 4; ++i) {
    InferResponse r = clients[static_cast<size_t>(i)]->promise.get_future().get();
    ASSERT_EQ(r.status, 200) << r.error;
    ASSERT_EQ(r.outputs.size(), 1u);
    EXPECT_EQ(r.outputs[0].second.shape(), (Shape{2, 4}));
    EXPECT_EQ(r.outputs[0].second.data<float>()[7], static_cast<float>(i * 10) + 1.0f);
  }
  const auto batches = stats->batch_stats();
  ASSERT_EQ(batches.size(), 1u);
  EXPECT_EQ(batches.begin()->first, 8);
  EXPECT_EQ(stats->execution_count.load(), 1u);
  EXPECT_EQ(stats->inference_count.load(), 8u);
}

TEST(ServerScheduler, RejectsWhenTheQueueIsFull) {
  auto stats = std::make_shared<ModelStats>("add", "1");
  auto s = Make(Options(300000, 2), stats);
  Client a(1, 1), b(2, 1), c(3, 1);
  EXPECT_EQ(a.Submit(*s), Scheduler::Submitted::kQueued);
  EXPECT_EQ(b.Submit(*s), Scheduler::Submitted::kQueued);
  EXPECT_EQ(c.Submit(*s), Scheduler::Submitted::kQueueFull);
  EXPECT_EQ(stats->failures[static_cast<int>(FailureReason::kRejected)].load(), 1u);
  s->Drain();  // runs the two queued without waiting for the delay
  EXPECT_EQ(a.promise.get_future().get().status, 200);
  EXPECT_EQ(b.promise.get_future().get().status, 200);
  EXPECT_EQ(c.Submit(*s), Scheduler::Submitted::kClosed);
}

TEST(ServerScheduler, TimesOutAndCancelsQueuedRequests) {
  auto stats = std::make_shared<ModelStats>("add", "1");
  auto o = Options(300000);
  o.default_timeout_us = 20000;
  auto s = Make(o, stats);
  Client late(1, 1), gone(2, 1);
  gone.request.timeout_us = 0;
  ASSERT_EQ(late.Submit(*s), Scheduler::Submitted::kQueued);
  InferResponse r = late.promise.get_future().get();
  EXPECT_EQ(r.status, 503);
  EXPECT_NE(r.error.find("request timed out after"), std::string::npos) << r.error;
  auto o2 = Options(300000);
  auto s2 = Make(o2, stats);
  const auto flag = gone.request.cancelled;  // shared with the transport; Submit moves the request
  ASSERT_EQ(gone.Submit(*s2), Scheduler::Submitted::kQueued);
  flag->store(true);
  r = gone.promise.get_future().get();
  EXPECT_EQ(r.reason, FailureReason::kCanceled);
  EXPECT_EQ(stats->failures[static_cast<int>(FailureReason::kCanceled)].load(), 1u);
}

TEST(ServerScheduler, ConcatAndSliceAlongTheBatchDim) {
  const Tensor a = Tensor::FromVector<int64_t>(DataType::kInt64, {1, 2}, {1, 2});
  const Tensor b = Tensor::FromVector<int64_t>(DataType::kInt64, {2, 2}, {3, 4, 5, 6});
  const Tensor c = ConcatBatch({&a, &b});
  EXPECT_EQ(c.shape(), (Shape{3, 2}));
  const Tensor s = SliceBatch(c, 1, 3);
  EXPECT_EQ(s.shape(), (Shape{2, 2}));
  EXPECT_EQ(s.data<int64_t>()[3], 6);
}

}  // namespace
}  // namespace ferry::server
