// Prometheus text for the model stats: Triton's counter names, ferry_ histograms, label escaping.
#include "server/metrics.h"

#include <gtest/gtest.h>

namespace ferry::server {
namespace {

bool Has(const std::string& text, const std::string& line) { return text.find(line + "\n") != std::string::npos; }

TEST(ServerMetrics, HistogramIsCumulative) {
  Histogram h({1, 2, 4});
  for (double v : {0.5, 1.0, 3.0, 9.0}) h.Observe(v);
  const auto s = h.Read();
  EXPECT_EQ(s.cumulative, (std::vector<uint64_t>{2, 2, 3, 4}));
  EXPECT_EQ(s.count, 4u);
  EXPECT_DOUBLE_EQ(s.sum, 13.5);
}

TEST(ServerMetrics, RendersTritonCountersAndFerryHistograms) {
  MetricsRegistry registry;
  auto s = registry.Get("res\"net", "1");
  s->success.Add(3000);
  s->inference_count += 4;
  s->RecordBatch(4, 1000, 2000, 3000);
  s->RecordFailure(FailureReason::kRejected, 0);
  s->request_us.Observe(120);
  s->memory_bytes = 1234;
  const std::string text = RenderPrometheus(registry);
  const std::string l = "model=\"res\\\"net\",version=\"1\"";
  EXPECT_TRUE(Has(text, "# TYPE nv_inference_request_success counter")) << text;
  EXPECT_TRUE(Has(text, "nv_inference_request_success{" + l + "} 1"));
  EXPECT_TRUE(Has(text, "nv_inference_request_failure{" + l + ",reason=\"REJECTED\"} 1"));
  EXPECT_TRUE(Has(text, "nv_inference_request_failure{" + l + ",reason=\"BACKEND\"} 0"));
  EXPECT_TRUE(Has(text, "nv_inference_count{" + l + "} 4"));
  EXPECT_TRUE(Has(text, "nv_inference_exec_count{" + l + "} 1"));
  EXPECT_TRUE(Has(text, "nv_inference_compute_infer_duration_us{" + l + "} 2"));
  EXPECT_TRUE(Has(text, "nv_inference_pending_request_count{" + l + "} 0"));
  EXPECT_TRUE(Has(text, "# TYPE ferry_batch_size histogram"));
  EXPECT_TRUE(Has(text, "ferry_batch_size_bucket{" + l + ",le=\"2\"} 0"));
  EXPECT_TRUE(Has(text, "ferry_batch_size_bucket{" + l + ",le=\"4\"} 1"));
  EXPECT_TRUE(Has(text, "ferry_batch_size_bucket{" + l + ",le=\"+Inf\"} 1"));
  EXPECT_TRUE(Has(text, "ferry_request_duration_us_bucket{" + l + ",le=\"250\"} 1"));
  EXPECT_TRUE(Has(text, "ferry_request_duration_us_count{" + l + "} 1"));
  EXPECT_TRUE(Has(text, "ferry_model_memory_bytes{" + l + "} 1234"));
  EXPECT_NE(text.find("ferry_process_resident_memory_bytes "), std::string::npos);
  const auto j = StatsJson(*s);
  EXPECT_EQ(j["batch_stats"][0]["batch_size"], 4);
  EXPECT_EQ(j["inference_stats"]["fail"]["count"], 1);
}

}  // namespace
}  // namespace ferry::server
