// The client side of `ferry bench --server` (tools/kserve_client.h, http_client.h, bench_server.h): URLs, KServe
// datatype names, model metadata and config parsing, infer request bodies (binary and JSON), the checks of infer
// responses and error bodies, and the server runner and its reports on a made-up transport (batch from the
// metadata, max_batch_size, failed requests counted and reported). tests/e2e/bench_server_test.sh drives a real
// `ferry serve` over HTTP and gRPC.
#include "tools/kserve_client.h"

#include <gtest/gtest.h>

#include <atomic>
#include <cstring>
#include <nlohmann/json.hpp>

#include "ferry/error.h"
#include "tools/bench_report.h"
#include "tools/bench_server.h"
#include "tools/http_client.h"

namespace ferry::tools {
namespace {

using Json = nlohmann::json;

std::string ErrorOf(const std::function<void()>& f) {
  try {
    f();
  } catch (const InvalidArgumentError& e) {
    return e.what();
  }
  return "(no error)";
}

TEST(KServeClient, ParseHttpUrl) {
  HttpEndpoint e = ParseHttpUrl("http://127.0.0.1:8000");
  EXPECT_EQ(e.host, "127.0.0.1");
  EXPECT_EQ(e.port, "8000");
  e = ParseHttpUrl("localhost:9/");
  EXPECT_EQ(e.host, "localhost");
  EXPECT_EQ(e.port, "9");
  e = ParseHttpUrl("http://example.org");
  EXPECT_EQ(e.port, "80");
  e = ParseHttpUrl("http://[::1]:8000");
  EXPECT_EQ(e.host, "::1");
  EXPECT_EQ(e.port, "8000");
  EXPECT_NE(ErrorOf([] { ParseHttpUrl("https://h:1"); }).find("https is not supported"), std::string::npos);
  EXPECT_NE(ErrorOf([] { ParseHttpUrl("http://h:1/v2"); }).find("without a path"), std::string::npos);
  EXPECT_NE(ErrorOf([] { ParseHttpUrl("http://h:99999"); }).find("port '99999'"), std::string::npos);
  EXPECT_NE(ErrorOf([] { ParseHttpUrl("http://:80"); }).find("no host"), std::string::npos);
  EXPECT_NE(ErrorOf([] { ParseHttpUrl("ftp://h:1"); }).find("only http://"), std::string::npos);
}

TEST(KServeClient, DataTypeNames) {
  EXPECT_EQ(DataTypeFromKServeName("FP32"), DataType::kFloat);
  EXPECT_EQ(DataTypeFromKServeName("BF16"), DataType::kBFloat16);
  EXPECT_EQ(DataTypeFromKServeName("BYTES"), DataType::kString);
  EXPECT_FALSE(DataTypeFromKServeName("fp32"));
  EXPECT_EQ(KServeDataTypeName(DataType::kInt64), "INT64");
  EXPECT_EQ(KServeDataTypeName(DataType::kBool), "BOOL");
  EXPECT_EQ(KServeDataTypeName(DataType::kComplex64), "");
}

TEST(KServeClient, ModelInfoFromMetadataAndConfig) {
  const std::string meta =
      R"({"name":"cnn","versions":["1","2"],"platform":"onnxruntime_onnx",
          "inputs":[{"name":"input","datatype":"FP32","shape":[-1,3,32,32]}],
          "outputs":[{"name":"logits","datatype":"FP32","shape":[-1,10]}]})";
  KServeModelInfo info = ParseKServeModelInfo(meta, std::string(R"({"name":"cnn","max_batch_size":8})"));
  EXPECT_EQ(info.name, "cnn");
  EXPECT_EQ(info.versions, (std::vector<std::string>{"1", "2"}));
  ASSERT_EQ(info.inputs.size(), 1u);
  EXPECT_EQ(info.inputs[0].name, "input");
  EXPECT_EQ(info.inputs[0].dtype, DataType::kFloat);
  EXPECT_EQ(info.inputs[0].dims, (std::vector<int64_t>{-1, 3, 32, 32}));
  EXPECT_TRUE(info.inputs[0].has_shape);
  EXPECT_EQ(info.outputs[0].dims, (std::vector<int64_t>{-1, 10}));
  EXPECT_EQ(info.max_batch_size, 8);
  // Without a config (or one that does not say) the batch size limit is unknown.
  EXPECT_EQ(ParseKServeModelInfo(meta, std::nullopt).max_batch_size, -1);
  EXPECT_EQ(ParseKServeModelInfo(meta, std::string("{}")).max_batch_size, -1);

  EXPECT_NE(ErrorOf([] { ParseKServeModelInfo("not json", std::nullopt); }).find("not a JSON object"),
            std::string::npos);
  EXPECT_NE(ErrorOf([] { ParseKServeModelInfo(R"({"name":"m","outputs":[]})", std::nullopt); }).find("'inputs'"),
            std::string::npos);
  const std::string bad_type =
      ErrorOf([] { ParseKServeModelInfo(R"({"name":"m","inputs":[{"name":"x","datatype":"FP8","shape":[1]}],
                                            "outputs":[]})", std::nullopt); });
  EXPECT_NE(bad_type.find("inputs 'x': unknown datatype 'FP8'"), std::string::npos) << bad_type;
  const std::string bad_dim =
      ErrorOf([] { ParseKServeModelInfo(R"({"name":"m","inputs":[{"name":"x","datatype":"FP32","shape":[-2]}],
                                            "outputs":[]})", std::nullopt); });
  EXPECT_NE(bad_dim.find("not an integer >= -1"), std::string::npos) << bad_dim;
  EXPECT_NE(ErrorOf([&] { ParseKServeModelInfo(meta, std::string(R"({"max_batch_size":"x"})")); })
                .find("max_batch_size"),
            std::string::npos);
}

std::vector<NamedValue> TwoInputs() {
  std::vector<NamedValue> in;
  in.emplace_back("x", Value(Tensor::FromVector<float>(DataType::kFloat, {2, 2}, {1.5f, -2, 3, 4})));
  in.emplace_back("mask", Value(Tensor::FromVector<int64_t>(DataType::kInt64, {1, 3}, {7, 8, 9})));
  return in;
}

TEST(KServeClient, EncodeBinaryRequest) {
  const HttpRequestBody b = EncodeInferRequest(TwoInputs(), {"y"}, true);
  ASSERT_TRUE(b.header_length);
  EXPECT_EQ(b.content_type, "application/octet-stream");
  const Json h = Json::parse(b.body.substr(0, *b.header_length));
  EXPECT_EQ(h["inputs"][0]["name"], "x");
  EXPECT_EQ(h["inputs"][0]["datatype"], "FP32");
  EXPECT_EQ(h["inputs"][0]["shape"], Json({2, 2}));
  EXPECT_EQ(h["inputs"][0]["parameters"]["binary_data_size"], 16);
  EXPECT_EQ(h["inputs"][1]["datatype"], "INT64");
  EXPECT_EQ(h["inputs"][1]["parameters"]["binary_data_size"], 24);
  EXPECT_FALSE(h["inputs"][0].contains("data"));
  EXPECT_EQ(h["outputs"], Json::parse(R"([{"name":"y","parameters":{"binary_data":true}}])"));
  ASSERT_EQ(b.body.size(), *b.header_length + 16 + 24);
  float first = 0;
  std::memcpy(&first, b.body.data() + *b.header_length, 4);
  EXPECT_EQ(first, 1.5f);
  int64_t last = 0;
  std::memcpy(&last, b.body.data() + b.body.size() - 8, 8);
  EXPECT_EQ(last, 9);
}

TEST(KServeClient, EncodeJsonRequest) {
  const HttpRequestBody b = EncodeInferRequest(TwoInputs(), {"y"}, false);
  EXPECT_FALSE(b.header_length);
  EXPECT_EQ(b.content_type, "application/json");
  const Json h = Json::parse(b.body);
  EXPECT_EQ(h["inputs"][0]["data"], Json({1.5, -2.0, 3.0, 4.0}));
  EXPECT_EQ(h["inputs"][1]["data"], Json({7, 8, 9}));
  EXPECT_FALSE(h["inputs"][0].contains("parameters"));
  EXPECT_EQ(h["outputs"][0]["parameters"]["binary_data"], false);
  std::vector<NamedValue> bools;
  bools.emplace_back("b", Value(Tensor::FromVector<bool>(DataType::kBool, {2}, {true, false})));
  EXPECT_EQ(Json::parse(EncodeInferRequest(bools, {}, false).body)["inputs"][0]["data"], Json({true, false}));
  std::vector<NamedValue> complex;
  complex.emplace_back("c", Value(Tensor(DataType::kComplex64, {1})));
  EXPECT_NE(ErrorOf([&] { EncodeInferRequest(complex, {}, true); }).find("input 'c'"), std::string::npos);
}

std::vector<IoInfo> Outputs() {
  IoInfo y;
  y.name = "y";
  y.dtype = DataType::kFloat;
  y.dims = {-1, 2};
  y.has_shape = true;
  return {y};
}

// A binary response with `header` as JSON and `bytes` raw bytes after it.
std::pair<std::string, size_t> BinaryResponse(const std::string& header, size_t bytes) {
  return {header + std::string(bytes, '\0'), header.size()};
}

TEST(KServeClient, CheckInferResponse) {
  const auto outputs = Outputs();
  auto [ok, ok_len] = BinaryResponse(
      R"({"model_name":"m","outputs":[{"name":"y","datatype":"FP32","shape":[3,2],"parameters":{"binary_data_size":24}}]})",
      24);
  EXPECT_EQ(CheckInferResponse(ok, ok_len, outputs), "");
  EXPECT_EQ(CheckInferResponse(R"({"outputs":[{"name":"y","datatype":"FP32","shape":[1,2],"data":[1,2]}]})",
                               std::nullopt, outputs),
            "");

  auto [short_body, short_len] = BinaryResponse(
      R"({"outputs":[{"name":"y","datatype":"FP32","shape":[3,2],"parameters":{"binary_data_size":24}}]})", 20);
  EXPECT_NE(CheckInferResponse(short_body, short_len, outputs).find("add up to 24 bytes but 20 follow"),
            std::string::npos);
  auto [wrong_size, ws_len] = BinaryResponse(
      R"({"outputs":[{"name":"y","datatype":"FP32","shape":[3,2],"parameters":{"binary_data_size":12}}]})", 12);
  EXPECT_NE(CheckInferResponse(wrong_size, ws_len, outputs).find("output 'y': binary_data_size 12 but FP32 [3,2] needs 24"),
            std::string::npos);
  EXPECT_NE(CheckInferResponse(R"({"outputs":[{"name":"z","datatype":"FP32","shape":[1],"data":[1]}]})", std::nullopt,
                               outputs)
                .find("output 'y' is missing"),
            std::string::npos);
  EXPECT_NE(CheckInferResponse(R"({"outputs":[{"name":"y","datatype":"FP32","shape":[1,2],"data":[1]}]})",
                               std::nullopt, outputs)
                .find("has 2 elements but data has 1"),
            std::string::npos);
  EXPECT_NE(CheckInferResponse("<html>", std::nullopt, outputs).find("not a KServe infer response"), std::string::npos);
  EXPECT_NE(CheckInferResponse("{}", size_t{10}, outputs).find("exceeds the body"), std::string::npos);
  EXPECT_NE(CheckInferResponse(
                R"({"outputs":[{"name":"y","datatype":"FP32","shape":[1,2],"parameters":{"binary_data_size":8}}]})",
                std::nullopt, outputs)
                .find("no Inference-Header-Content-Length"),
            std::string::npos);
}

TEST(KServeClient, DescribeHttpError) {
  EXPECT_EQ(DescribeHttpError(503, R"({"error":"the queue is full"})"), "HTTP 503: the queue is full");
  EXPECT_EQ(DescribeHttpError(502, "Bad Gateway"), "HTTP 502: 'Bad Gateway'");
  EXPECT_EQ(DescribeHttpError(500, std::string(300, 'x')).size(), std::string("HTTP 500: ''...").size() + 200);
}

TEST(KServeClient, ModelPathIsEncoded) {
  EXPECT_EQ(KServeModelPath("cnn", ""), "/v2/models/cnn");
  EXPECT_EQ(KServeModelPath("a b/c", "2"), "/v2/models/a%20b%2Fc/versions/2");
}

// A transport that answers from memory: the metadata given, and clients that fail every `fail_every`-th request.
class FakeTransport : public KServeBenchTransport {
 public:
  KServeModelInfo info;
  int fail_every = 0;
  std::vector<std::vector<int64_t>> shapes_sent;  // of the first input, per prepared request
  std::atomic<int> requests{0};

  std::string Protocol() const override { return "fake"; }
  KServeModelInfo FetchModelInfo() override { return info; }
  BenchClientFactory PrepareInfer(const std::vector<NamedValue>& inputs, const KServeModelInfo&) override {
    shapes_sent.push_back(inputs.front().second.tensor().shape());
    return [this] {
      struct Client : BenchClient {
        FakeTransport* t;
        explicit Client(FakeTransport* t) : t(t) {}
        std::string Request() override {
          const int n = ++t->requests;
          return t->fail_every > 0 && n % t->fail_every == 0 ? "HTTP 503: the queue is full" : "";
        }
      };
      return std::make_unique<Client>(this);
    };
  }
};

KServeModelInfo CnnInfo(int64_t max_batch_size) {
  KServeModelInfo info;
  info.name = "cnn";
  IoInfo in;
  in.name = "input";
  in.dtype = DataType::kFloat;
  in.dims = {-1, 3, 4, 4};
  in.dim_names.resize(4);
  in.has_shape = true;
  info.inputs = {in};
  info.outputs = Outputs();
  info.max_batch_size = max_batch_size;
  return info;
}

TEST(BenchServer, SweepsTakeTheBatchFromTheMetadataAndCountErrors) {
  FakeTransport t;
  t.info = CnnInfo(8);
  t.fail_every = 4;
  ServerBenchOptions o;
  o.url = "http://127.0.0.1:1";
  o.model = "cnn";
  o.sweep.batches = {1, 4};
  o.sweep.concurrency = {1, 2};
  o.sweep.warmup = 0;
  o.sweep.iterations = 8;
  BenchRun run = RunServerBench(o, t);
  EXPECT_EQ(t.shapes_sent, (std::vector<std::vector<int64_t>>{{1, 3, 4, 4}, {4, 3, 4, 4}}));
  ASSERT_EQ(run.results.size(), 4u);
  ASSERT_TRUE(run.server);
  EXPECT_EQ(run.server->protocol, "fake");
  EXPECT_EQ(run.server->max_batch_size, 8);
  int64_t errors = 0;
  for (const BenchResult& r : run.results) {
    EXPECT_EQ(r.requests + r.errors, 8);  // --iterations counts failed requests too
    EXPECT_EQ(r.latency.count, static_cast<size_t>(r.requests));
    EXPECT_EQ(r.inferences, r.requests * r.config.batch);
    if (r.errors) {
      EXPECT_EQ(r.first_error, "HTTP 503: the queue is full");
    }
    errors += r.errors;
  }
  EXPECT_EQ(errors, 8);  // every 4th of 32
  EXPECT_EQ(BenchErrorCount(run), 8);

  BenchReport report;
  report.options = o.sweep;
  report.run = run;
  AnalyzeBench(report);
  const std::string table = FormatBenchTable(report);
  EXPECT_NE(table.find("model cnn at http://127.0.0.1:1 (fake, binary tensors, max_batch_size 8)"), std::string::npos)
      << table;
  EXPECT_NE(table.find("batch  conc  p50 ms"), std::string::npos) << table;
  EXPECT_EQ(table.find("threads"), std::string::npos) << table;
  EXPECT_NE(table.find("errors (batch 1, concurrency 1): 2 of 8 measured requests failed; the first: HTTP 503"),
            std::string::npos)
      << table;
  EXPECT_NE(table.find("knee (concurrency 1): batch"), std::string::npos) << table;
  const Json j = Json::parse(FormatBenchJson(report));
  EXPECT_EQ(j["errors"], 8);
  EXPECT_EQ(j["server"]["url"], "http://127.0.0.1:1");
  EXPECT_EQ(j["server"]["max_batch_size"], 8);
  EXPECT_TRUE(j["configurations"][0]["threads"].is_null());
  EXPECT_TRUE(j["configurations"][0]["memory"].is_null());
  EXPECT_EQ(j["configurations"][0]["errors"], 2);
  const std::string csv = FormatBenchCsv(report);
  EXPECT_NE(csv.find(",errors\n1,,1,6,6,"), std::string::npos) << csv;
}

TEST(BenchServer, BatchesTheModelCannotTakeFailBeforeAnyRequest) {
  FakeTransport t;
  t.info = CnnInfo(4);
  ServerBenchOptions o;
  o.model = "cnn";
  o.sweep.batches = {1, 8};
  o.sweep.iterations = 1;
  const std::string e = ErrorOf([&] { RunServerBench(o, t); });
  EXPECT_NE(e.find("--batch 8: model 'cnn' takes batches of at most 4 (max_batch_size of its config)"),
            std::string::npos)
      << e;
  EXPECT_EQ(t.requests.load(), 0);
  // max_batch_size 0 and a fixed dim 0 (no batch dim): the model fixes the batch, which runs at its own shape.
  t.info = CnnInfo(0);
  t.info.inputs[0].dims[0] = 1;
  o.sweep.batches = {2, 4};
  const BenchRun fixed = RunServerBench(o, t);
  ASSERT_EQ(fixed.results.size(), 1u);
  EXPECT_EQ(fixed.results[0].config.batch, 1);
  EXPECT_EQ(t.shapes_sent.back(), std::vector<int64_t>({1, 3, 4, 4}));
  EXPECT_EQ(fixed.fixed_batch, "no input has a symbolic dim 0 (input: 1x3x4x4)");
  t.info = CnnInfo(8);
  t.info.inputs[0].dtype = DataType::kString;
  o.sweep.batches = {1};
  EXPECT_NE(ErrorOf([&] { RunServerBench(o, t); }).find("input 'input' is BYTES"), std::string::npos);
  o.model = "";
  EXPECT_NE(ErrorOf([&] { RunServerBench(o, t); }).find("--model NAME"), std::string::npos);
}

}  // namespace
}  // namespace ferry::tools
