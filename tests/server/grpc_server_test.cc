// The KServe v2 gRPC transport end to end on loopback: a C++ client with the generated stub against an in-process
// server on a free port, sharing its model manager and InferenceService with the REST router (called in process
// for comparison). Every RPC; typed and raw inference matching the REST answer; bad inputs, unknown models, a
// full queue, a queue timeout, a cancelled call, a too-large message; HTTP and gRPC requests batched together;
// repository load/unload and their refusal. The models are y = x + 1 on [N,4] (float and int64).
#include "server/grpc_server.h"

#include <grpcpp/grpcpp.h>
#include <gtest/gtest.h>

#include <cstring>
#include <filesystem>
#include <fstream>
#include <future>
#include <limits>
#include <sstream>
#include <thread>

#include <nlohmann/json.hpp>

#include "server/grpc_bench_client.h"
#include "server/http_routes.h"
#include "src/server/grpc_service.grpc.pb.h"
#include "testing/model_builder.h"

namespace ferry::server {
namespace {

namespace fs = std::filesystem;
using inference::GRPCInferenceService;

std::string AddOneModel(int32_t elem_type) {
  testing::ModelBuilder b;
  b.InputSym("x", elem_type, {-1, 4}, "N");
  auto* out = b.graph().add_output();
  out->set_name("y");
  auto* tt = out->mutable_type()->mutable_tensor_type();
  tt->set_elem_type(elem_type);
  tt->mutable_shape()->add_dim()->set_dim_param("N");
  tt->mutable_shape()->add_dim()->set_dim_value(4);
  if (elem_type == onnx::TensorProto::FLOAT) b.FloatInitializer("one", {1}, {1.0f});
  else b.Int64Initializer("one", {1}, {1});
  b.Node("Add", {"x", "one"}, {"y"});
  return b.Bytes();
}

struct Server {
  fs::path repo;
  std::ostringstream log;
  std::shared_ptr<MetricsRegistry> metrics = std::make_shared<MetricsRegistry>();
  std::unique_ptr<ModelManager> manager;
  std::unique_ptr<InferenceService> service;
  std::unique_ptr<Router> router;
  std::unique_ptr<GrpcServer> grpc;
  std::unique_ptr<GRPCInferenceService::Stub> stub;

  Server() {
    repo = fs::path(::testing::TempDir()) / ("ferry_grpc_repo_" + std::to_string(::getpid()));
    fs::remove_all(repo);
    const auto model = [&](const std::string& name, int32_t elem_type, const std::string& config) {
      fs::create_directories(repo / name / "1");
      std::ofstream(repo / name / "1" / "model.onnx", std::ios::binary) << AddOneModel(elem_type);
      if (!config.empty()) std::ofstream(repo / name / "config.pbtxt") << config;
    };
    model("add", onnx::TensorProto::FLOAT, "max_batch_size: 8\n");
    model("add_i64", onnx::TensorProto::INT64, "max_batch_size: 8\n");
    // Runs only full batches of 2 (within 5 s): one HTTP and one gRPC request make one execution.
    model("pair", onnx::TensorProto::FLOAT, "max_batch_size: 2\ndynamic_batching { max_queue_delay_microseconds: 5000000 }\n");
    model("slow", onnx::TensorProto::FLOAT,
          "max_batch_size: 8\ndynamic_batching { max_queue_delay_microseconds: 300000 "
          "default_queue_policy { max_queue_size: 1 } }\n");
    model("timeout", onnx::TensorProto::FLOAT,
          "max_batch_size: 8\ndynamic_batching { max_queue_delay_microseconds: 1000000 "
          "default_queue_policy { default_timeout_microseconds: 20000 } }\n");
    model("cancel", onnx::TensorProto::FLOAT, "max_batch_size: 8\ndynamic_batching { max_queue_delay_microseconds: 400000 }\n");
    model("later", onnx::TensorProto::FLOAT, "max_batch_size: 8\n");
    {  // y = Identity(x) on BYTES [N, M]: for the probes of BYTES data and huge shapes
      testing::ModelBuilder b;
      b.InputSym("x", onnx::TensorProto::STRING, {-1, -1}, "N");
      auto* out = b.graph().add_output();
      out->set_name("y");
      auto* tt = out->mutable_type()->mutable_tensor_type();
      tt->set_elem_type(onnx::TensorProto::STRING);
      tt->mutable_shape()->add_dim()->set_dim_param("N");
      tt->mutable_shape()->add_dim()->set_dim_param("M");
      b.Node("Identity", {"x"}, {"y"});
      fs::create_directories(repo / "strs" / "1");
      std::ofstream(repo / "strs" / "1" / "model.onnx", std::ios::binary) << b.Bytes();
      std::ofstream(repo / "strs" / "config.pbtxt") << "max_batch_size: 8\n";
    }

    ManagerOptions mo;
    mo.repository = repo.string();
    mo.mode = ControlMode::kExplicit;
    mo.startup_models = {"add", "add_i64", "pair", "slow", "timeout", "cancel", "strs"};
    mo.threads = 1;
    manager = std::make_unique<ModelManager>(mo, metrics, log);
    EXPECT_EQ(manager->Start(), 0) << log.str();
    ServiceOptions so;
    so.model_control = true;
    service = std::make_unique<InferenceService>(*manager, metrics, so);
    router = std::make_unique<Router>(*service);
    GrpcOptions go;
    go.port = 0;
    grpc = std::make_unique<GrpcServer>(go, *service);
    const uint16_t port = grpc->Start();
    stub = GRPCInferenceService::NewStub(
        grpc::CreateChannel("127.0.0.1:" + std::to_string(port), grpc::InsecureChannelCredentials()));
  }
  ~Server() {
    grpc->Stop(1000);
    manager->Shutdown();
    fs::remove_all(repo);
  }

  // The REST answer, through the same router the HTTP transport uses.
  std::pair<int, std::string> Http(const std::string& method, const std::string& target, const std::string& body) {
    std::promise<HttpReply> reply;
    HttpRequest request{method, target, body, std::nullopt};
    router->Handle(request, std::make_shared<std::atomic<bool>>(false),
                   [&](HttpReply r) { reply.set_value(std::move(r)); });
    HttpReply r = reply.get_future().get();
    return {r.status, r.body};
  }
};

class ServerGrpc : public ::testing::Test {
 public:
  static void SetUpTestSuite() { server = new Server(); }
  static void TearDownTestSuite() {
    delete server;
    server = nullptr;
  }
  static Server* server;
};
Server* ServerGrpc::server = nullptr;

Server& Use() { return *ServerGrpc::server; }

inference::ModelInferRequest FloatRequest(const std::string& model, const std::vector<float>& values, bool raw) {
  inference::ModelInferRequest q;
  q.set_model_name(model);
  q.set_id("req-1");
  auto* in = q.add_inputs();
  in->set_name("x");
  in->set_datatype("FP32");
  in->add_shape(static_cast<int64_t>(values.size() / 4));
  in->add_shape(4);
  if (raw) q.add_raw_input_contents(std::string(reinterpret_cast<const char*>(values.data()), values.size() * 4));
  else for (float v : values) in->mutable_contents()->add_fp32_contents(v);
  return q;
}

std::vector<float> Floats(const inference::ModelInferResponse& r) {
  if (r.raw_output_contents_size() > 0) {
    const std::string& b = r.raw_output_contents(0);
    std::vector<float> v(b.size() / 4);
    std::memcpy(v.data(), b.data(), b.size());
    return v;
  }
  const auto& c = r.outputs(0).contents().fp32_contents();
  return {c.begin(), c.end()};
}

grpc::Status Infer(const inference::ModelInferRequest& q, inference::ModelInferResponse* r, int deadline_ms = 10000) {
  grpc::ClientContext ctx;
  ctx.set_deadline(std::chrono::system_clock::now() + std::chrono::milliseconds(deadline_ms));
  return Use().stub->ModelInfer(&ctx, q, r);
}

const std::vector<float> kInput = {1, 2, 3, 4, -1, -2, -3, -4.5f};

TEST_F(ServerGrpc, HealthMetadataAndConfig) {
  auto& s = *Use().stub;
  {
    grpc::ClientContext ctx;
    inference::ServerLiveResponse r;
    ASSERT_TRUE(s.ServerLive(&ctx, {}, &r).ok());
    EXPECT_TRUE(r.live());
  }
  {
    grpc::ClientContext ctx;
    inference::ServerReadyResponse r;
    ASSERT_TRUE(s.ServerReady(&ctx, {}, &r).ok());
    EXPECT_TRUE(r.ready());
  }
  {
    grpc::ClientContext ctx;
    inference::ServerMetadataResponse r;
    ASSERT_TRUE(s.ServerMetadata(&ctx, {}, &r).ok());
    EXPECT_EQ(r.name(), "ferry");
    EXPECT_EQ(r.extensions_size(), 4);
  }
  for (const auto& [name, ready] : {std::pair{"add", true}, std::pair{"nope", false}, std::pair{"later", false}}) {
    grpc::ClientContext ctx;
    inference::ModelReadyRequest q;
    q.set_name(name);
    inference::ModelReadyResponse r;
    ASSERT_TRUE(s.ModelReady(&ctx, q, &r).ok());
    EXPECT_EQ(r.ready(), ready) << name;
  }
  {
    grpc::ClientContext ctx;
    inference::ModelMetadataRequest q;
    q.set_name("add");
    inference::ModelMetadataResponse r;
    ASSERT_TRUE(s.ModelMetadata(&ctx, q, &r).ok());
    EXPECT_EQ(r.platform(), "onnxruntime_onnx");
    ASSERT_EQ(r.versions_size(), 1);
    EXPECT_EQ(r.versions(0), "1");
    ASSERT_EQ(r.inputs_size(), 1);
    EXPECT_EQ(r.inputs(0).name(), "x");
    EXPECT_EQ(r.inputs(0).datatype(), "FP32");
    EXPECT_EQ(std::vector<int64_t>(r.inputs(0).shape().begin(), r.inputs(0).shape().end()),
              (std::vector<int64_t>{-1, 4}));
    EXPECT_EQ(r.outputs(0).name(), "y");
  }
  {
    grpc::ClientContext ctx;
    inference::ModelConfigRequest q;
    q.set_name("slow");
    inference::ModelConfigResponse r;
    ASSERT_TRUE(s.ModelConfig(&ctx, q, &r).ok());
    EXPECT_EQ(r.config().max_batch_size(), 8);
    EXPECT_EQ(r.config().dynamic_batching().default_queue_policy().max_queue_size(), 1);
    ASSERT_EQ(r.config().input_size(), 1);
    EXPECT_EQ(r.config().input(0).data_type(), inference::TYPE_FP32);
  }
  for (const char* rpc : {"metadata", "config"}) {
    grpc::ClientContext ctx;
    grpc::Status st;
    if (std::string(rpc) == "metadata") {
      inference::ModelMetadataRequest q;
      q.set_name("nope");
      inference::ModelMetadataResponse r;
      st = s.ModelMetadata(&ctx, q, &r);
    } else {
      inference::ModelConfigRequest q;
      q.set_name("add");
      q.set_version("7");
      inference::ModelConfigResponse r;
      st = s.ModelConfig(&ctx, q, &r);
    }
    EXPECT_EQ(st.error_code(), grpc::StatusCode::NOT_FOUND) << rpc;
  }
  grpc::ClientContext ctx;
  inference::ModelConfigRequest q;
  q.set_name("../etc");
  inference::ModelConfigResponse r;
  EXPECT_EQ(s.ModelConfig(&ctx, q, &r).error_code(), grpc::StatusCode::INVALID_ARGUMENT);
}

TEST_F(ServerGrpc, TypedAndRawInferMatchRest) {
  nlohmann::json body = {{"inputs", {{{"name", "x"}, {"datatype", "FP32"}, {"shape", {2, 4}}, {"data", kInput}}}}};
  const auto [status, text] = Use().Http("POST", "/v2/models/add/infer", body.dump());
  ASSERT_EQ(status, 200) << text;
  const auto rest = nlohmann::json::parse(text)["outputs"][0]["data"].get<std::vector<float>>();
  ASSERT_EQ(rest.size(), 8u);
  EXPECT_FLOAT_EQ(rest[7], -3.5f);
  for (bool raw : {false, true}) {
    inference::ModelInferResponse r;
    const grpc::Status st = Infer(FloatRequest("add", kInput, raw), &r);
    ASSERT_TRUE(st.ok()) << st.error_message();
    EXPECT_EQ(r.model_name(), "add");
    EXPECT_EQ(r.model_version(), "1");
    EXPECT_EQ(r.id(), "req-1");
    ASSERT_EQ(r.outputs_size(), 1);
    EXPECT_EQ(r.outputs(0).name(), "y");
    EXPECT_EQ(r.outputs(0).datatype(), "FP32");
    EXPECT_EQ(std::vector<int64_t>(r.outputs(0).shape().begin(), r.outputs(0).shape().end()),
              (std::vector<int64_t>{2, 4}));
    // Raw in, raw out (as Triton answers); typed in, typed out.
    EXPECT_EQ(r.raw_output_contents_size(), raw ? 1 : 0);
    EXPECT_EQ(Floats(r), rest) << (raw ? "raw" : "typed");
  }
}

TEST_F(ServerGrpc, TypedInt64Contents) {
  inference::ModelInferRequest q;
  q.set_model_name("add_i64");
  auto* in = q.add_inputs();
  in->set_name("x");
  in->set_datatype("INT64");
  in->add_shape(1);
  in->add_shape(4);
  for (int64_t v : {int64_t{1} << 40, int64_t{-7}, int64_t{0}, int64_t{3}}) in->mutable_contents()->add_int64_contents(v);
  inference::ModelInferResponse r;
  const grpc::Status st = Infer(q, &r);
  ASSERT_TRUE(st.ok()) << st.error_message();
  const auto& c = r.outputs(0).contents().int64_contents();
  EXPECT_EQ(std::vector<int64_t>(c.begin(), c.end()), (std::vector<int64_t>{(int64_t{1} << 40) + 1, -6, 1, 4}));

  in->mutable_contents()->clear_int64_contents();
  for (int v : {1, 2, 3, 4}) in->mutable_contents()->add_int_contents(v);
  const grpc::Status wrong_field = Infer(q, &r);
  EXPECT_EQ(wrong_field.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_EQ(wrong_field.error_message(),
            "model 'add_i64': input 'x': INT64 data goes in contents.int64_contents, not in int_contents");
}

TEST_F(ServerGrpc, BadInputsAreInvalidArgumentWithTheRestMessages) {
  struct Case {
    std::function<void(inference::ModelInferRequest&)> edit;
    std::string message;
  };
  const std::vector<Case> cases = {
      {[](auto& q) { q.mutable_inputs(0)->set_name("z"); }, "model 'add': unexpected input 'z': model 'add' has inputs x"},
      {[](auto& q) { q.mutable_inputs(0)->set_datatype("FP64"); },
       "model 'add': input 'x': datatype FP64 does not match the model's FP32"},
      {[](auto& q) { q.mutable_inputs(0)->set_shape(1, 5); },
       "model 'add': input 'x': shape [2,5] does not match the model's [-1,4] (-1: any size; the first dim is the batch)"},
      {[](auto& q) { q.mutable_inputs(0)->set_shape(0, 9); },
       "model 'add': input 'x': batch size 9 is outside 1..8 (max_batch_size)"},
      {[](auto& q) { q.mutable_inputs(0)->mutable_contents()->mutable_fp32_contents()->RemoveLast(); },
       "model 'add': input 'x': shape [2,4] has 8 elements but contents.fp32_contents has 7"},
      {[](auto& q) { q.mutable_inputs(0)->set_datatype("FLOAT"); }, "model 'add': input 'x': unknown datatype 'FLOAT'"},
  };
  for (const auto& c : cases) {
    auto q = FloatRequest("add", kInput, false);
    c.edit(q);
    inference::ModelInferResponse r;
    const grpc::Status st = Infer(q, &r);
    EXPECT_EQ(st.error_code(), grpc::StatusCode::INVALID_ARGUMENT) << c.message;
    EXPECT_EQ(st.error_message(), c.message);
  }
  // The REST path words the same request the same way.
  nlohmann::json body = {{"inputs", {{{"name", "x"}, {"datatype", "FP64"}, {"shape", {2, 4}}, {"data", kInput}}}}};
  const auto [status, text] = Use().Http("POST", "/v2/models/add/infer", body.dump());
  EXPECT_EQ(status, 400);
  EXPECT_EQ(nlohmann::json::parse(text)["error"], cases[1].message);

  auto raw = FloatRequest("add", kInput, true);
  raw.mutable_raw_input_contents(0)->resize(30);
  inference::ModelInferResponse r;
  const grpc::Status st = Infer(raw, &r);
  EXPECT_EQ(st.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_EQ(st.error_message(), "model 'add': input 'x': raw_input_contents has 30 bytes but FP32 [2,4] needs 32");
}

TEST_F(ServerGrpc, UnknownModelIsNotFound) {
  inference::ModelInferResponse r;
  grpc::Status st = Infer(FloatRequest("nope", kInput, true), &r);
  EXPECT_EQ(st.error_code(), grpc::StatusCode::NOT_FOUND);
  EXPECT_EQ(st.error_message(), "model 'nope' is not loaded");
  auto q = FloatRequest("add", kInput, true);
  q.set_model_version("3");
  st = Infer(q, &r);
  EXPECT_EQ(st.error_code(), grpc::StatusCode::NOT_FOUND);
  EXPECT_EQ(st.error_message(), "model 'add' has no version 3 loaded (loaded: 1)");
}

TEST_F(ServerGrpc, FullQueueIsUnavailableAndTimeoutIsDeadlineExceeded) {
  // `slow` holds one request for 300 ms; a second one finds its queue (max_queue_size 1) full.
  auto first = std::async(std::launch::async, [] {
    inference::ModelInferResponse r;
    return Infer(FloatRequest("slow", kInput, true), &r);
  });
  std::this_thread::sleep_for(std::chrono::milliseconds(100));
  inference::ModelInferResponse r;
  const grpc::Status full = Infer(FloatRequest("slow", kInput, true), &r);
  EXPECT_EQ(full.error_code(), grpc::StatusCode::UNAVAILABLE);
  EXPECT_NE(full.error_message().find("model 'slow' version 1: the queue is full (1 requests waiting"),
            std::string::npos)
      << full.error_message();
  EXPECT_TRUE(first.get().ok());

  const grpc::Status timeout = Infer(FloatRequest("timeout", kInput, true), &r);
  EXPECT_EQ(timeout.error_code(), grpc::StatusCode::DEADLINE_EXCEEDED);
  EXPECT_NE(timeout.error_message().find("request timed out after"), std::string::npos) << timeout.error_message();
}

TEST_F(ServerGrpc, ACancelledCallDropsItsQueuedRequest) {
  // `cancel` waits 400 ms for a batch; the client gives up after 100 ms, so the request never runs.
  auto stats = Use().metrics->Get("cancel", "1");
  inference::ModelInferResponse r;
  const grpc::Status st = Infer(FloatRequest("cancel", kInput, true), &r, 100);
  EXPECT_EQ(st.error_code(), grpc::StatusCode::DEADLINE_EXCEEDED);
  for (int i = 0; i < 100 && stats->pending.load() > 0; ++i) std::this_thread::sleep_for(std::chrono::milliseconds(20));
  EXPECT_EQ(stats->pending.load(), 0);
  EXPECT_EQ(stats->failures[static_cast<int>(FailureReason::kCanceled)].load(), 1u);
  EXPECT_EQ(stats->execution_count.load(), 0u);
}

TEST_F(ServerGrpc, HttpAndGrpcRequestsBatchTogether) {
  // `pair` runs only full batches of 2: one request from each transport.
  auto grpc_call = std::async(std::launch::async, [] {
    inference::ModelInferResponse r;
    const grpc::Status st = Infer(FloatRequest("pair", {1, 1, 1, 1}, true), &r);
    return st.ok() ? Floats(r) : std::vector<float>{};
  });
  nlohmann::json body = {{"inputs", {{{"name", "x"}, {"datatype", "FP32"}, {"shape", {1, 4}}, {"data", {5, 5, 5, 5}}}}}};
  const auto [status, text] = Use().Http("POST", "/v2/models/pair/infer", body.dump());
  ASSERT_EQ(status, 200) << text;
  EXPECT_EQ(nlohmann::json::parse(text)["outputs"][0]["data"].get<std::vector<float>>(), std::vector<float>(4, 6));
  EXPECT_EQ(grpc_call.get(), std::vector<float>(4, 2));

  grpc::ClientContext ctx;
  inference::ModelStatisticsRequest q;
  q.set_name("pair");
  inference::ModelStatisticsResponse r;
  ASSERT_TRUE(Use().stub->ModelStatistics(&ctx, q, &r).ok());
  ASSERT_EQ(r.model_stats_size(), 1);
  const auto& m = r.model_stats(0);
  EXPECT_EQ(m.name(), "pair");
  EXPECT_EQ(m.version(), "1");
  EXPECT_EQ(m.inference_count(), 2u);
  EXPECT_EQ(m.execution_count(), 1u);
  EXPECT_EQ(m.inference_stats().success().count(), 2u);
  ASSERT_EQ(m.batch_stats_size(), 1);
  EXPECT_EQ(m.batch_stats(0).batch_size(), 2u);
  EXPECT_EQ(m.batch_stats(0).compute_infer().count(), 1u);
  ASSERT_EQ(m.memory_usage_size(), 1);
  EXPECT_GT(m.memory_usage(0).byte_size(), 0u);
}

TEST_F(ServerGrpc, RepositoryIndexLoadAndUnload) {
  auto& s = *Use().stub;
  const auto index = [&](bool ready) {
    grpc::ClientContext ctx;
    inference::RepositoryIndexRequest q;
    q.set_ready(ready);
    inference::RepositoryIndexResponse r;
    EXPECT_TRUE(s.RepositoryIndex(&ctx, q, &r).ok());
    std::map<std::string, std::string> states;
    for (const auto& m : r.models()) states[m.name()] = m.state();
    return states;
  };
  auto all = index(false);
  EXPECT_EQ(all.size(), 8u);
  EXPECT_EQ(all["later"], "UNAVAILABLE");
  EXPECT_EQ(index(true).count("later"), 0u);

  const auto control = [&](const std::string& name, bool load) {
    grpc::ClientContext ctx;
    if (load) {
      inference::RepositoryModelLoadRequest q;
      q.set_model_name(name);
      inference::RepositoryModelLoadResponse r;
      return s.RepositoryModelLoad(&ctx, q, &r);
    }
    inference::RepositoryModelUnloadRequest q;
    q.set_model_name(name);
    inference::RepositoryModelUnloadResponse r;
    return s.RepositoryModelUnload(&ctx, q, &r);
  };
  ASSERT_TRUE(control("later", true).ok());
  EXPECT_EQ(index(true).count("later"), 1u);
  inference::ModelInferResponse r;
  EXPECT_TRUE(Infer(FloatRequest("later", kInput, true), &r).ok());
  ASSERT_TRUE(control("later", false).ok());
  EXPECT_EQ(Infer(FloatRequest("later", kInput, true), &r).error_code(), grpc::StatusCode::NOT_FOUND);
  const grpc::Status again = control("later", false);
  EXPECT_EQ(again.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_EQ(again.error_message(), "model 'later' is not loaded");
  const grpc::Status missing = control("absent", true);
  EXPECT_EQ(missing.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_NE(missing.error_message().find("absent"), std::string::npos) << missing.error_message();

  grpc::ClientContext ctx;
  inference::RepositoryModelLoadRequest q;
  q.set_model_name("later");
  (*q.mutable_parameters())["config"].set_string_param("{}");
  inference::RepositoryModelLoadResponse lr;
  EXPECT_EQ(s.RepositoryModelLoad(&ctx, q, &lr).error_code(), grpc::StatusCode::INVALID_ARGUMENT);
}

TEST_F(ServerGrpc, ControlRefusedUnlessExplicitAndMessageSizeLimited) {
  // A second transport on the same models, with model control off and a 1 KiB message limit.
  Server& server = Use();
  ServiceOptions so;
  so.control_refusal = "model control is disabled: start with --model-control-mode explicit";
  InferenceService service(*server.manager, server.metrics, so);
  GrpcOptions go;
  go.port = 0;
  go.max_message_bytes = 1024;
  GrpcServer grpc(go, service);
  auto stub = GRPCInferenceService::NewStub(
      grpc::CreateChannel("127.0.0.1:" + std::to_string(grpc.Start()), grpc::InsecureChannelCredentials()));
  {
    grpc::ClientContext ctx;
    inference::RepositoryModelLoadRequest q;
    q.set_model_name("later");
    inference::RepositoryModelLoadResponse r;
    const grpc::Status st = stub->RepositoryModelLoad(&ctx, q, &r);
    EXPECT_EQ(st.error_code(), grpc::StatusCode::PERMISSION_DENIED);
    EXPECT_EQ(st.error_message(), so.control_refusal);
  }
  {
    grpc::ClientContext ctx;
    inference::ModelInferResponse r;
    EXPECT_TRUE(stub->ModelInfer(&ctx, FloatRequest("add", kInput, true), &r).ok());
  }
  grpc::ClientContext ctx;
  inference::ModelInferResponse r;
  const grpc::Status st = stub->ModelInfer(&ctx, FloatRequest("add", std::vector<float>(8 * 4 * 10, 1.0f), true), &r);
  EXPECT_EQ(st.error_code(), grpc::StatusCode::RESOURCE_EXHAUSTED);
  EXPECT_EQ(grpc.Stop(1000), 0);
}

TEST(ServerGrpcStatus, CodesForServiceFailures) {
  EXPECT_EQ(GrpcCode(400), grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_EQ(GrpcCode(403), grpc::StatusCode::PERMISSION_DENIED);
  EXPECT_EQ(GrpcCode(404), grpc::StatusCode::NOT_FOUND);
  EXPECT_EQ(GrpcCode(413), grpc::StatusCode::RESOURCE_EXHAUSTED);
  EXPECT_EQ(GrpcCode(499), grpc::StatusCode::CANCELLED);
  EXPECT_EQ(GrpcCode(503), grpc::StatusCode::UNAVAILABLE);
  EXPECT_EQ(GrpcCode(503, true), grpc::StatusCode::DEADLINE_EXCEEDED);
  EXPECT_EQ(GrpcCode(500), grpc::StatusCode::INTERNAL);
}


// Malformed messages, built with the bench's request builder (GrpcInferRequest) and then broken: each is
// answered (never a hang: a call that is not answered within its deadline fails here as DEADLINE_EXCEEDED) with
// INVALID_ARGUMENT and a message naming what is wrong, before anything of the claimed size is allocated.
TEST_F(ServerGrpc, MalformedMessagesAreAnsweredInvalidArgument) {
  const auto add_request = [] {
    std::vector<NamedValue> inputs;
    inputs.emplace_back("x", Value(Tensor::FromVector<float>(DataType::kFloat, {2, 4}, kInput)));
    return GrpcInferRequest("add", "", inputs, {"y"});
  };
  const auto strs_request = [](int64_t columns, const std::string& raw) {
    inference::ModelInferRequest q;
    q.set_model_name("strs");
    auto* in = q.add_inputs();
    in->set_name("x");
    in->set_datatype("BYTES");
    in->add_shape(1);
    in->add_shape(columns);
    q.add_raw_input_contents(raw);
    return q;
  };
  struct Case {
    std::string what;
    inference::ModelInferRequest request;
    std::string message;
  };
  std::vector<Case> cases;
  auto q = add_request();
  q.mutable_inputs(0)->set_datatype("FP99");
  cases.push_back({"bad dtype", q, "model 'add': input 'x': unknown datatype 'FP99'"});
  q = add_request();
  q.mutable_inputs(0)->set_datatype("BYTES");
  cases.push_back({"dtype of another input kind", q, "model 'add': input 'x': datatype BYTES does not match the model's FP32"});
  q = add_request();
  q.mutable_raw_input_contents(0)->append(4, '\0');
  cases.push_back({"raw contents longer than the shape",
                   q, "model 'add': input 'x': raw_input_contents has 36 bytes but FP32 [2,4] needs 32"});
  q = add_request();
  q.mutable_raw_input_contents(0)->clear();
  cases.push_back({"raw contents empty", q, "model 'add': input 'x': raw_input_contents has 0 bytes but FP32 [2,4] needs 32"});
  q = add_request();
  q.add_raw_input_contents("extra");
  cases.push_back({"more raw entries than inputs", q,
                   "model 'add': raw_input_contents has 2 entries but the request has 1 inputs (one entry per input, in order)"});
  q = add_request();
  q.add_outputs()->set_name("y");
  cases.push_back({"an output requested twice", q, "model 'add': output 'y' is requested more than once"});
  q = add_request();
  q.mutable_inputs(0)->set_shape(1, std::numeric_limits<int64_t>::max());
  cases.push_back({"huge dim", q, "model 'add': input 'x': shape [2,9223372036854775807] is too large (at most 2^40 elements)"});
  q = add_request();
  q.mutable_inputs(0)->set_shape(0, 0);
  q.mutable_inputs(0)->set_shape(1, int64_t{1} << 41);
  cases.push_back({"huge dim after a zero", q, "model 'add': input 'x': shape [0,2199023255552] is too large (at most 2^40 elements)"});
  // 2^39 BYTES elements claimed with 8 bytes of data: refused before 2^39 strings are allocated.
  cases.push_back({"BYTES count larger than the data", strs_request(int64_t{1} << 39, std::string(8, '\0')),
                   "model 'strs': input 'x': raw BYTES data has 8 bytes, too few for 549755813888 elements (4 bytes of "
                   "length each)"});
  std::string one(4, '\0');
  one[0] = '\x7f';  // element 0 claims 127 bytes; 0 remain
  cases.push_back({"BYTES length past the data", strs_request(1, one),
                   "model 'strs': input 'x': raw BYTES element 0 claims 127 bytes but 0 remain"});
  for (const auto& c : cases) {
    inference::ModelInferResponse r;
    const grpc::Status st = Infer(c.request, &r);
    EXPECT_EQ(st.error_code(), grpc::StatusCode::INVALID_ARGUMENT) << c.what << ": " << st.error_message();
    EXPECT_EQ(st.error_message(), c.message) << c.what;
  }
  // A good BYTES request still round-trips (the probes above left nothing behind).
  std::string two;
  for (const std::string e : {"ab", "\xff"}) {
    const auto len = static_cast<uint32_t>(e.size());
    two.append(reinterpret_cast<const char*>(&len), 4);
    two += e;
  }
  inference::ModelInferResponse r;
  const grpc::Status st = Infer(strs_request(2, two), &r);
  ASSERT_TRUE(st.ok()) << st.error_message();
  ASSERT_EQ(r.raw_output_contents_size(), 1);
  EXPECT_EQ(r.raw_output_contents(0), two);
}

// Strings that are not UTF-8 in a proto3 string field make the message unparsable: gRPC answers that call with
// an error of its own; the server keeps serving.
TEST_F(ServerGrpc, InvalidUtf8InAStringFieldIsAnswered) {
  auto q = FloatRequest("add", kInput, true);
  q.mutable_inputs(0)->set_name("x\xff");
  inference::ModelInferResponse r;
  grpc::Status st = Infer(q, &r);
  EXPECT_FALSE(st.ok());
  EXPECT_NE(st.error_code(), grpc::StatusCode::DEADLINE_EXCEEDED) << st.error_message();
  st = Infer(FloatRequest("add", kInput, true), &r);
  EXPECT_TRUE(st.ok()) << st.error_message();
}

}  // namespace
}  // namespace ferry::server
