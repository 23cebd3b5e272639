// The gRPC transport of `ferry bench --server --protocol grpc` (server/grpc_bench_client.h): the target, the model
// metadata conversion, the infer request (raw contents) and the response checks. tests/e2e/bench_server_test.sh
// runs it against a real `ferry serve`.
#include "server/grpc_bench_client.h"

#include <gtest/gtest.h>

#include <cstring>

#include "ferry/error.h"

namespace ferry::server {
namespace {

std::string ErrorOf(const std::function<void()>& f) {
  try {
    f();
  } catch (const InvalidArgumentError& e) {
    return e.what();
  }
  return "(no error)";
}

TEST(GrpcBenchClient, Target) {
  EXPECT_EQ(GrpcBenchTarget("127.0.0.1:8001"), "127.0.0.1:8001");
  EXPECT_EQ(GrpcBenchTarget("grpc://localhost:9"), "localhost:9");
  EXPECT_EQ(GrpcBenchTarget("[::1]:8001"), "[::1]:8001");
  EXPECT_NE(ErrorOf([] { GrpcBenchTarget("http://h:8001"); }).find("with --protocol grpc give HOST:PORT"),
            std::string::npos);
  EXPECT_NE(ErrorOf([] { GrpcBenchTarget("localhost"); }).find("give the gRPC port"), std::string::npos);
  EXPECT_NE(ErrorOf([] { GrpcBenchTarget("h:0"); }).find("port '0'"), std::string::npos);
}

TEST(GrpcBenchClient, ModelInfo) {
  inference::ModelMetadataResponse meta;
  meta.set_name("cnn");
  meta.add_versions("1");
  auto* in = meta.add_inputs();
  in->set_name("input");
  in->set_datatype("FP32");
  for (int64_t d : {-1, 3, 32, 32}) in->add_shape(d);
  auto* out = meta.add_outputs();
  out->set_name("logits");
  out->set_datatype("FP32");
  for (int64_t d : {-1, 10}) out->add_shape(d);
  inference::ModelConfigResponse config;
  config.mutable_config()->set_max_batch_size(8);
  tools::KServeModelInfo info = GrpcModelInfo(meta, &config);
  EXPECT_EQ(info.name, "cnn");
  ASSERT_EQ(info.inputs.size(), 1u);
  EXPECT_EQ(info.inputs[0].dims, (std::vector<int64_t>{-1, 3, 32, 32}));
  EXPECT_EQ(info.inputs[0].dtype, DataType::kFloat);
  EXPECT_EQ(info.outputs[0].name, "logits");
  EXPECT_EQ(info.max_batch_size, 8);
  EXPECT_EQ(GrpcModelInfo(meta, nullptr).max_batch_size, -1);
  meta.mutable_inputs(0)->set_datatype("FP128");
  EXPECT_NE(ErrorOf([&] { GrpcModelInfo(meta, nullptr); }).find("inputs 'input': unknown datatype 'FP128'"),
            std::string::npos);
}

TEST(GrpcBenchClient, InferRequestCarriesRawContents) {
  std::vector<NamedValue> inputs;
  inputs.emplace_back("x", Value(Tensor::FromVector<float>(DataType::kFloat, {1, 2}, {0.5f, 2})));
  const inference::ModelInferRequest r = GrpcInferRequest("cnn", "2", inputs, {"y"});
  EXPECT_EQ(r.model_name(), "cnn");
  EXPECT_EQ(r.model_version(), "2");
  ASSERT_EQ(r.inputs_size(), 1);
  EXPECT_EQ(r.inputs(0).datatype(), "FP32");
  EXPECT_EQ(r.inputs(0).shape_size(), 2);
  EXPECT_FALSE(r.inputs(0).has_contents());
  ASSERT_EQ(r.raw_input_contents_size(), 1);
  ASSERT_EQ(r.raw_input_contents(0).size(), 8u);
  float second = 0;
  std::memcpy(&second, r.raw_input_contents(0).data() + 4, 4);
  EXPECT_EQ(second, 2.0f);
  ASSERT_EQ(r.outputs_size(), 1);
  EXPECT_EQ(r.outputs(0).name(), "y");
}

TEST(GrpcBenchClient, ResponseChecks) {
  IoInfo y;
  y.name = "y";
  y.dtype = DataType::kFloat;
  const std::vector<IoInfo> outputs = {y};
  inference::ModelInferResponse r;
  auto* o = r.add_outputs();
  o->set_name("y");
  o->set_datatype("FP32");
  o->add_shape(2);
  o->add_shape(3);
  r.add_raw_output_contents(std::string(24, '\0'));
  EXPECT_EQ(CheckGrpcInferResponse(r, outputs), "");
  r.set_raw_output_contents(0, std::string(20, '\0'));
  EXPECT_NE(CheckGrpcInferResponse(r, outputs).find("20 bytes of raw contents but FP32 with 6 elements needs 24"),
            std::string::npos);
  r.clear_raw_output_contents();
  for (int i = 0; i < 6; ++i) o->mutable_contents()->add_fp32_contents(1);
  EXPECT_EQ(CheckGrpcInferResponse(r, outputs), "");
  o->mutable_contents()->add_fp32_contents(1);
  EXPECT_NE(CheckGrpcInferResponse(r, outputs).find("6 elements in the shape but 7 in the contents"), std::string::npos);
  o->set_name("z");
  EXPECT_NE(CheckGrpcInferResponse(r, outputs).find("output 'y' is missing"), std::string::npos);
}

}  // namespace
}  // namespace ferry::server
