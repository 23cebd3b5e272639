#include "tools/bench_server.h"

#include <cctype>
#include <chrono>
#include <memory>

#include "ferry/error.h"
#include "tools/bench_runner.h"
#include "tools/http_client.h"
#include "tools/kserve_client.h"

namespace ferry::tools {
namespace {

std::string PercentEncode(const std::string& s) {
  static const char* hex = "0123456789ABCDEF";
  std::string out;
  for (unsigned char c : s) {
    if (std::isalnum(c) || c == '-' || c == '_' || c == '.' || c == '~') {
      out += static_cast<char>(c);
    } else {
      out += '%';
      out += hex[c >> 4];
      out += hex[c & 15];
    }
  }
  return out;
}

// One HTTP worker: its own keep-alive connection; the configuration's request (shared, read only).
class HttpBenchClient : public BenchClient {
 public:
  HttpBenchClient(const HttpEndpoint& endpoint, double timeout_s, std::shared_ptr<const HttpRequestBody> body,
                  std::string target, std::shared_ptr<const std::vector<IoInfo>> outputs)
      : connection_(endpoint, timeout_s), body_(std::move(body)), target_(std::move(target)), outputs_(std::move(outputs)) {
    // Connect before the clock runs: the first request of a worker should not pay for the TCP handshake. A
    // failure here shows again, counted, on the first request.
    try {
      connection_.Get("/v2/health/live");
    } catch (const HttpConnection::TransportError&) {
    }
  }

  std::string Request() override {
    HttpResponse r;
    try {
      r = connection_.Post(target_, *body_);
    } catch (const HttpConnection::TransportError& e) {
      return e.what();
    }
    if (r.status != 200) return DescribeHttpError(r.status, r.body);
    return CheckInferResponse(r.body, r.header_length, *outputs_);
  }

 private:
  HttpConnection connection_;
  std::shared_ptr<const HttpRequestBody> body_;
  std::string target_;
  std::shared_ptr<const std::vector<IoInfo>> outputs_;
};

class HttpBenchTransport : public KServeBenchTransport {
 public:
  explicit HttpBenchTransport(const ServerBenchOptions& o) : o_(o), endpoint_(ParseHttpUrl(o.url)) {}

  std::string Protocol() const override { return "http"; }

  KServeModelInfo FetchModelInfo() override {
    HttpConnection c(endpoint_, o_.timeout_s);
    const std::string path = KServeModelPath(o_.model, o_.version);
    HttpResponse meta;
    try {
      meta = c.Get(path);
    } catch (const HttpConnection::TransportError& e) {
      throw InvalidArgumentError("--server " + o_.url + ": " + e.what());
    }
    if (meta.status != 200) {
      throw InvalidArgumentError("--model '" + o_.model + "': GET " + path + " on " + o_.url + " answered " +
                                 DescribeHttpError(meta.status, meta.body));
    }
    std::optional<std::string> config;
    try {
      HttpResponse r = c.Get(path + "/config");
      if (r.status == 200) config = std::move(r.body);
    } catch (const HttpConnection::TransportError&) {
      // No config: the batch dim is then taken from the metadata alone.
    }
    return ParseKServeModelInfo(meta.body, config);
  }

  BenchClientFactory PrepareInfer(const std::vector<NamedValue>& inputs, const KServeModelInfo& info) override {
    std::vector<std::string> names;
    for (const IoInfo& o : info.outputs) names.push_back(o.name);
    auto body = std::make_shared<const HttpRequestBody>(EncodeInferRequest(inputs, names, o_.binary));
    auto outputs = std::make_shared<const std::vector<IoInfo>>(info.outputs);
    const std::string target = KServeModelPath(o_.model, o_.version) + "/infer";
    return [endpoint = endpoint_, timeout = o_.timeout_s, body, target, outputs] {
      return std::make_unique<HttpBenchClient>(endpoint, timeout, body, target, outputs);
    };
  }

 private:
  ServerBenchOptions o_;
  HttpEndpoint endpoint_;
};

}  // namespace

std::string KServeModelPath(const std::string& model, const std::string& version) {
  std::string path = "/v2/models/" + PercentEncode(model);
  if (!version.empty()) path += "/versions/" + PercentEncode(version);
  return path;
}

std::unique_ptr<KServeBenchTransport> MakeHttpBenchTransport(const ServerBenchOptions& options) {
  return std::make_unique<HttpBenchTransport>(options);
}

BenchRun RunServerBench(const ServerBenchOptions& options, KServeBenchTransport& transport,
                        const std::function<void(const BenchProgress&)>& progress) {
  const BenchOptions& sweep = options.sweep;
  ValidateBenchSweep(sweep);
  if (options.model.empty()) throw InvalidArgumentError("--server needs --model NAME (the model's name on the server)");
  const KServeModelInfo info = transport.FetchModelInfo();
  for (const IoInfo& i : info.inputs) {
    if (i.dtype == DataType::kString) {
      throw InvalidArgumentError("--model '" + options.model + "': input '" + i.name +
                                 "' is BYTES; ferry bench --server makes random numeric tensors only");
    }
  }

  BenchRun run;
  BenchServerInfo server;
  server.url = options.url;
  server.model = options.model;
  server.version = options.version;
  server.protocol = transport.Protocol();
  server.tensors = options.binary ? "binary" : "json";
  server.max_batch_size = info.max_batch_size;
  run.server = server;

  // Every batch's request first, so that a batch the model cannot take fails before anything runs. The metadata's
  // shapes decide the batches: the requested ones, or the one a model without a batch dim fixes.
  const BatchSweep batches = PlanBatchSweep(info.inputs, sweep.inputs.shapes, sweep.batches);
  run.fixed_batch = batches.fixed;
  std::vector<BenchClientFactory> requests;
  for (int64_t b : batches.batches) {
    if (info.max_batch_size > 0 && b > info.max_batch_size) {
      throw InvalidArgumentError("--batch " + std::to_string(b) + ": model '" + options.model +
                                 "' takes batches of at most " + std::to_string(info.max_batch_size) +
                                 " (max_batch_size of its config)");
    }
    InputSpec spec = sweep.inputs;
    spec.files.clear();
    spec.batch.reset();
    spec.shapes = BatchedInputShapes(info.inputs, sweep.inputs.shapes, b);
    spec.random = true;
    requests.push_back(transport.PrepareInfer(BuildInputs(info.inputs, spec), info));
  }
  const size_t total = batches.batches.size() * sweep.concurrency.size();
  const auto started = std::chrono::steady_clock::now();
  size_t index = 0;
  for (size_t bi = 0; bi < batches.batches.size(); ++bi) {
    for (int concurrency : sweep.concurrency) {
      BenchResult r;
      r.config = {batches.batches[bi], 0, concurrency};
      std::vector<std::unique_ptr<BenchClient>> clients;
      for (int i = 0; i < concurrency; ++i) clients.push_back(requests[bi]());
      BenchProgress p;
      p.index = index;
      p.total = total;
      MeasureBenchConfig(clients, sweep, r, p, started, progress);
      run.results.push_back(std::move(r));
      ++index;
    }
  }
  return run;
}

}  // namespace ferry::tools
