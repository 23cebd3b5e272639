#include "server/grpc_bench_client.h"

#include <grpcpp/grpcpp.h>

#include <chrono>

#include "ferry/error.h"
#include "src/server/grpc_service.grpc.pb.h"
#include "tools/kserve_client.h"

namespace ferry::server {
namespace {

using tools::BenchClient;
using tools::KServeModelInfo;

std::chrono::system_clock::time_point Deadline(double timeout_s) {
  return std::chrono::system_clock::now() +
         std::chrono::duration_cast<std::chrono::system_clock::duration>(std::chrono::duration<double>(timeout_s));
}

std::string StatusText(const grpc::Status& s) {
  static const char* const kNames[] = {"OK",        "CANCELLED",         "UNKNOWN",           "INVALID_ARGUMENT",
                                       "DEADLINE_EXCEEDED", "NOT_FOUND",  "ALREADY_EXISTS",    "PERMISSION_DENIED",
                                       "RESOURCE_EXHAUSTED", "FAILED_PRECONDITION", "ABORTED", "OUT_OF_RANGE",
                                       "UNIMPLEMENTED", "INTERNAL",   "UNAVAILABLE",       "DATA_LOSS",
                                       "UNAUTHENTICATED"};
  const int code = static_cast<int>(s.error_code());
  const std::string name = code >= 0 && code <= 16 ? kNames[code] : std::to_string(code);
  return "gRPC " + name + ": " + s.error_message();
}

// A channel of its own (no subchannel shared with other workers): one HTTP/2 connection per worker.
std::shared_ptr<grpc::Channel> OwnChannel(const std::string& target) {
  grpc::ChannelArguments args;
  args.SetInt(GRPC_ARG_USE_LOCAL_SUBCHANNEL_POOL, 1);
  args.SetMaxReceiveMessageSize(-1);
  args.SetMaxSendMessageSize(-1);
  return grpc::CreateCustomChannel(target, grpc::InsecureChannelCredentials(), args);
}

int64_t Elements(const google::protobuf::RepeatedField<int64_t>& shape) {
  int64_t n = 1;
  for (int64_t d : shape) {
    if (d < 0 || (d > 0 && n > INT64_MAX / d)) return -1;
    n *= d;
  }
  return n;
}

// Elements in the typed field of `c` that carries `dtype`; -1 when the type has no typed field.
int64_t TypedCount(const inference::InferTensorContents& c, DataType dtype) {
  switch (dtype) {
    case DataType::kBool: return c.bool_contents_size();
    case DataType::kInt8:
    case DataType::kInt16:
    case DataType::kInt32: return c.int_contents_size();
    case DataType::kInt64: return c.int64_contents_size();
    case DataType::kUint8:
    case DataType::kUint16:
    case DataType::kUint32: return c.uint_contents_size();
    case DataType::kUint64: return c.uint64_contents_size();
    case DataType::kFloat: return c.fp32_contents_size();
    case DataType::kDouble: return c.fp64_contents_size();
    case DataType::kString: return c.bytes_contents_size();
    default: return -1;
  }
}

class GrpcBenchClient : public BenchClient {
 public:
  GrpcBenchClient(const std::string& target, double timeout_s,
                  std::shared_ptr<const inference::ModelInferRequest> request,
                  std::shared_ptr<const std::vector<IoInfo>> outputs)
      : stub_(inference::GRPCInferenceService::NewStub(OwnChannel(target))),
        timeout_s_(timeout_s),
        request_(std::move(request)),
        outputs_(std::move(outputs)) {
    // Connect before the clock runs (a failure shows again, counted, on the first request).
    grpc::ClientContext ctx;
    ctx.set_deadline(Deadline(timeout_s_));
    inference::ServerLiveResponse live;
    (void)stub_->ServerLive(&ctx, inference::ServerLiveRequest(), &live);
  }

  std::string Request() override {
    grpc::ClientContext ctx;
    ctx.set_deadline(Deadline(timeout_s_));
    inference::ModelInferResponse response;
    const grpc::Status status = stub_->ModelInfer(&ctx, *request_, &response);
    if (!status.ok()) return StatusText(status);
    return CheckGrpcInferResponse(response, *outputs_);
  }

 private:
  std::unique_ptr<inference::GRPCInferenceService::Stub> stub_;
  double timeout_s_;
  std::shared_ptr<const inference::ModelInferRequest> request_;
  std::shared_ptr<const std::vector<IoInfo>> outputs_;
};

class GrpcBenchTransport : public tools::KServeBenchTransport {
 public:
  explicit GrpcBenchTransport(const tools::ServerBenchOptions& o) : o_(o), target_(GrpcBenchTarget(o.url)) {}

  std::string Protocol() const override { return "grpc"; }

  KServeModelInfo FetchModelInfo() override {
    auto stub = inference::GRPCInferenceService::NewStub(OwnChannel(target_));
    inference::ModelMetadataRequest req;
    req.set_name(o_.model);
    req.set_version(o_.version);
    inference::ModelMetadataResponse meta;
    {
      grpc::ClientContext ctx;
      ctx.set_deadline(Deadline(o_.timeout_s));
      const grpc::Status s = stub->ModelMetadata(&ctx, req, &meta);
      if (s.error_code() == grpc::StatusCode::UNAVAILABLE || s.error_code() == grpc::StatusCode::DEADLINE_EXCEEDED) {
        throw InvalidArgumentError("--server " + o_.url + ": " + StatusText(s));
      }
      if (!s.ok()) throw InvalidArgumentError("--model '" + o_.model + "': ModelMetadata answered " + StatusText(s));
    }
    inference::ModelConfigRequest creq;
    creq.set_name(o_.model);
    creq.set_version(o_.version);
    inference::ModelConfigResponse config;
    grpc::ClientContext ctx;
    ctx.set_deadline(Deadline(o_.timeout_s));
    const bool have_config = stub->ModelConfig(&ctx, creq, &config).ok();
    return GrpcModelInfo(meta, have_config ? &config : nullptr);
  }

  tools::BenchClientFactory PrepareInfer(const std::vector<NamedValue>& inputs, const KServeModelInfo& info) override {
    std::vector<std::string> names;
    for (const IoInfo& o : info.outputs) names.push_back(o.name);
    auto request = std::make_shared<const inference::ModelInferRequest>(
        GrpcInferRequest(o_.model, o_.version, inputs, names));
    auto outputs = std::make_shared<const std::vector<IoInfo>>(info.outputs);
    return [target = target_, timeout = o_.timeout_s, request, outputs] {
      return std::make_unique<GrpcBenchClient>(target, timeout, request, outputs);
    };
  }

 private:
  tools::ServerBenchOptions o_;
  std::string target_;
};

}  // namespace

std::string GrpcBenchTarget(const std::string& url) {
  std::string rest = url;
  if (rest.rfind("grpc://", 0) == 0) rest = rest.substr(7);
  if (rest.find("://") != std::string::npos) {
    throw InvalidArgumentError("--server '" + url + "': with --protocol grpc give HOST:PORT (or grpc://HOST:PORT)");
  }
  // The same host and port rules as HTTP URLs.
  const tools::HttpEndpoint ep = tools::ParseHttpUrl(rest);
  if (rest.find(':') == std::string::npos) {
    throw InvalidArgumentError("--server '" + url + "': give the gRPC port (HOST:PORT; ferry serve's default is 8001)");
  }
  return (ep.host.find(':') != std::string::npos ? "[" + ep.host + "]" : ep.host) + ":" + ep.port;
}

KServeModelInfo GrpcModelInfo(const inference::ModelMetadataResponse& metadata,
                              const inference::ModelConfigResponse* config) {
  KServeModelInfo info;
  info.name = metadata.name();
  for (const std::string& v : metadata.versions()) info.versions.push_back(v);
  auto convert = [&](const auto& tensors, const char* what) {
    std::vector<IoInfo> out;
    for (const auto& t : tensors) {
      IoInfo io;
      io.name = t.name();
      const auto dtype = tools::DataTypeFromKServeName(t.datatype());
      if (!dtype) {
        throw InvalidArgumentError("model metadata of '" + info.name + "': " + what + " '" + io.name +
                                   "': unknown datatype '" + t.datatype() + "'");
      }
      io.dtype = *dtype;
      for (int64_t d : t.shape()) {
        if (d < -1) {
          throw InvalidArgumentError("model metadata of '" + info.name + "': " + what + " '" + io.name +
                                     "': dim " + std::to_string(d) + " is below -1");
        }
        io.dims.push_back(d);
        io.dim_names.emplace_back();
      }
      io.has_shape = true;
      out.push_back(std::move(io));
    }
    return out;
  };
  info.inputs = convert(metadata.inputs(), "inputs");
  info.outputs = convert(metadata.outputs(), "outputs");
  if (config && config->has_config()) info.max_batch_size = config->config().max_batch_size();
  return info;
}

inference::ModelInferRequest GrpcInferRequest(const std::string& model, const std::string& version,
                                              const std::vector<NamedValue>& inputs,
                                              const std::vector<std::string>& outputs) {
  inference::ModelInferRequest req;
  req.set_model_name(model);
  req.set_model_version(version);
  for (const auto& [name, value] : inputs) {
    if (!value.is_tensor()) throw InvalidArgumentError("input '" + name + "': only tensors can be sent");
    const Tensor& t = value.tensor();
    const std::string dt = tools::KServeDataTypeName(t.dtype());
    if (dt.empty() || t.dtype() == DataType::kString) {
      throw InvalidArgumentError("input '" + name + "': " + std::string(DataTypeName(t.dtype())) +
                                 " cannot be sent as raw contents");
    }
    auto* in = req.add_inputs();
    in->set_name(name);
    in->set_datatype(dt);
    for (int64_t d : t.shape()) in->add_shape(d);
    req.add_raw_input_contents(static_cast<const char*>(t.raw_data()), t.nbytes());
  }
  for (const std::string& o : outputs) req.add_outputs()->set_name(o);
  return req;
}

std::string CheckGrpcInferResponse(const inference::ModelInferResponse& response,
                                   const std::vector<IoInfo>& outputs) {
  const bool raw = response.raw_output_contents_size() > 0;
  if (raw && response.raw_output_contents_size() != response.outputs_size()) {
    return "response: " + std::to_string(response.raw_output_contents_size()) + " raw_output_contents for " +
           std::to_string(response.outputs_size()) + " outputs";
  }
  for (const IoInfo& expected : outputs) {
    int index = -1;
    for (int i = 0; i < response.outputs_size(); ++i) {
      if (response.outputs(i).name() == expected.name) index = i;
    }
    const std::string what = "response: output '" + expected.name + "'";
    if (index < 0) return what + " is missing";
    const auto& o = response.outputs(index);
    const auto dtype = tools::DataTypeFromKServeName(o.datatype());
    if (!dtype) return what + ": unknown datatype '" + o.datatype() + "'";
    const int64_t elements = Elements(o.shape());
    if (elements < 0) return what + ": the shape has a negative dim";
    if (raw) {
      if (*dtype == DataType::kString) continue;  // length-prefixed elements: no fixed size
      const size_t bytes = response.raw_output_contents(index).size();
      const size_t need = static_cast<size_t>(elements) * static_cast<size_t>(DataTypeBits(*dtype) / 8);
      if (bytes != need) {
        return what + ": " + std::to_string(bytes) + " bytes of raw contents but " + o.datatype() + " with " +
               std::to_string(elements) + " elements needs " + std::to_string(need);
      }
    } else {
      const int64_t n = TypedCount(o.contents(), *dtype);
      if (n != elements) {
        return what + ": " + std::to_string(elements) + " elements in the shape but " + std::to_string(n) +
               " in the contents";
      }
    }
  }
  return "";
}

std::unique_ptr<tools::KServeBenchTransport> MakeGrpcBenchTransport(const tools::ServerBenchOptions& options) {
  return std::make_unique<GrpcBenchTransport>(options);
}

}  // namespace ferry::server
