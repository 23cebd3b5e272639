#include "server/http_routes.h"

#include <google/protobuf/util/json_util.h>

#include <nlohmann/json.hpp>

#include "ferry/error.h"
#include "server/kserve_codec.h"
#include "server/inference_service.h"
#include "server/repository.h"

namespace ferry::server {
namespace {

using json = nlohmann::json;

// Text from a request (a name, a target, bytes quoted in a parse error) need not be UTF-8: dump() would throw
// (type_error 316) and the request go unanswered; invalid bytes become U+FFFD instead.
HttpReply JsonReply(int status, const json& j) {
  HttpReply r;
  r.status = status;
  r.body = j.dump(-1, ' ', false, json::error_handler_t::replace);
  return r;
}

// The transport's reply callback, called exactly once: a second call does nothing, and a path that drops the
// callback without calling it (an exception swallowed where nothing could answer) still answers, 500. The
// transport's callback must not throw (it only queues the answer); if it does, nothing more can be done.
class ReplyOnce {
 public:
  explicit ReplyOnce(std::function<void(HttpReply)> reply) : reply_(std::move(reply)) {}
  ~ReplyOnce() {
    if (!sent_) Send(ErrorReply(500, "internal error: the request was dropped without an answer"));
  }
  ReplyOnce(const ReplyOnce&) = delete;
  ReplyOnce& operator=(const ReplyOnce&) = delete;
  void Send(HttpReply reply) noexcept {
    if (sent_.exchange(true)) return;
    try {
      reply_(std::move(reply));
    } catch (...) {
    }
  }

 private:
  std::function<void(HttpReply)> reply_;
  std::atomic<bool> sent_{false};
};

std::vector<std::string> SplitPath(const std::string& target) {
  std::string path = target.substr(0, target.find('?'));
  std::vector<std::string> parts;
  size_t at = 0;
  while (at <= path.size()) {
    const size_t next = path.find('/', at);
    const std::string part = path.substr(at, next == std::string::npos ? std::string::npos : next - at);
    if (!part.empty()) parts.push_back(part);
    if (next == std::string::npos) break;
    at = next + 1;
  }
  return parts;
}

json TensorsMetadata(const std::vector<TensorSpec>& specs, int64_t max_batch_size) {
  json a = json::array();
  for (const auto& s : specs) {
    std::vector<int64_t> shape = s.dims;
    if (max_batch_size > 0) shape.insert(shape.begin(), -1);
    a.push_back({{"name", s.name}, {"datatype", KServeDataType(s.dtype)}, {"shape", shape}});
  }
  return a;
}

// proto3 JSON prints int64 fields as strings; Triton's config endpoint prints numbers.
void NumbersFromStrings(json& j) {
  if (j.is_object() || j.is_array()) {
    for (auto& e : j) NumbersFromStrings(e);
  } else if (j.is_string()) {
    const auto& s = j.get_ref<const std::string&>();
    const bool number = !s.empty() && s.size() < 19 &&
                        std::all_of(s.begin() + (s[0] == '-' ? 1 : 0), s.end(), [](char c) { return c >= '0' && c <= '9'; }) &&
                        s != "-";
    if (number) j = std::stoll(s);
  }
}

json ConfigJson(const inference::ModelConfig& proto) {
  std::string text;
  google::protobuf::util::JsonPrintOptions opts;
  opts.preserve_proto_field_names = true;
  opts.always_print_primitive_fields = true;
  if (!google::protobuf::util::MessageToJsonString(proto, &text, opts).ok()) return json::object();
  json j = json::parse(text, nullptr, false);
  // Only numeric fields (dims, versions, microseconds...) are converted: names stay strings.
  for (auto* list : {&j["input"], &j["output"]}) {
    for (auto& t : *list) NumbersFromStrings(t["dims"]);
  }
  if (j.contains("version_policy")) NumbersFromStrings(j["version_policy"]);
  if (j.contains("dynamic_batching")) NumbersFromStrings(j["dynamic_batching"]);
  return j;
}

}  // namespace

HttpReply ErrorReply(int status, const std::string& message) noexcept {
  try {
    return JsonReply(status, {{"error", message}});
  } catch (...) {  // out of memory: a fixed body
    HttpReply r;
    r.status = 500;
    r.body = R"({"error":"internal error"})";
    return r;
  }
}

Router::Router(InferenceService& service) : service_(service) {}

void Router::Handle(const HttpRequest& request, std::shared_ptr<std::atomic<bool>> cancelled,
                    std::function<void(HttpReply)> transport_reply) noexcept {
  // `reply` is moved into an asynchronous path (inference, model control) or called here; never both. Whatever
  // happens, the transport hears exactly once (ReplyOnce).
  std::function<void(HttpReply)> reply;
  try {
    auto once = std::make_shared<ReplyOnce>(std::move(transport_reply));
    reply = [once](HttpReply r) { once->Send(std::move(r)); };
  } catch (...) {
    return;  // out of memory before anything could be queued
  }
  try {
    Route(request, std::move(cancelled), reply);
  } catch (const ServiceError& e) {
    if (reply) reply(ErrorReply(e.status(), e.what()));
  } catch (const BadRequest& e) {
    if (reply) reply(ErrorReply(400, e.what()));
  } catch (const InvalidArgumentError& e) {
    if (reply) reply(ErrorReply(400, e.what()));
  } catch (const std::exception& e) {
    if (reply) reply(ErrorReply(500, std::string("internal error: ") + e.what()));
  } catch (...) {
    if (reply) reply(ErrorReply(500, "internal error"));
  }
}

void Router::Route(const HttpRequest& req, std::shared_ptr<std::atomic<bool>> cancelled,
                   std::function<void(HttpReply)>& reply) {
  const auto p = SplitPath(req.target);
  const bool get = req.method == "GET", post = req.method == "POST";
  const auto send = [&](HttpReply r) {
    auto f = std::move(reply);
    reply = nullptr;
    f(std::move(r));
  };
  const auto method_not_allowed = [&](const char* want) {
    send(ErrorReply(405, "method " + req.method + " not allowed for " + req.target + " (use " + want + ")"));
  };
  const auto stats_reply = [&](const std::string& name, const std::string& version) {
    json a = json::array();
    for (const auto& s : service_.Stats(name, version)) a.push_back(StatsJson(*s));
    send(JsonReply(200, {{"model_stats", a}}));
  };
  if (p.size() == 1 && p[0] == "metrics") {
    if (!get) return method_not_allowed("GET");
    service_.manager().RefreshMemoryGauges();
    HttpReply r;
    r.content_type = "text/plain; version=0.0.4; charset=utf-8";
    r.body = RenderPrometheus(service_.metrics());
    return send(std::move(r));
  }
  if (p.empty() || p[0] != "v2") return send(ErrorReply(404, "no endpoint " + req.target));
  if (p.size() == 1) {
    if (!get) return method_not_allowed("GET");
    return send(JsonReply(200, {{"name", "ferry"},
                                {"version", "0.1.0"},
                                {"extensions",
                                 {"binary_tensor_data", "model_repository", "statistics", "model_configuration"}}}));
  }
  if (p[1] == "health" && p.size() == 3 && (p[2] == "live" || p[2] == "ready")) {
    if (!get) return method_not_allowed("GET");
    if (p[2] == "live") return send(JsonReply(200, {{"live", true}}));
    const bool ready = service_.Ready();
    return send(JsonReply(ready ? 200 : 503, {{"ready", ready}}));
  }
  if (p[1] == "repository") {
    if (!post) return method_not_allowed("POST");
    if (p.size() == 3 && p[2] == "index") {
      json a = json::array();
      for (const auto& e : service_.Index()) {
        if (e.versions.empty()) {
          a.push_back({{"name", e.name}, {"state", e.state}, {"reason", e.reason}});
        }
        for (int64_t v : e.versions) {
          a.push_back({{"name", e.name}, {"version", std::to_string(v)}, {"state", e.state}, {"reason", e.reason}});
        }
      }
      return send(JsonReply(200, a));
    }
    if (p.size() == 5 && p[2] == "models" && (p[4] == "load" || p[4] == "unload")) {
      const std::string name = p[3];
      ValidateModelName(name);
      if (!service_.options().model_control) return send(ErrorReply(403, service_.options().control_refusal));
      if (!req.body.empty()) {
        CheckJsonDepth(req.body, service_.options().max_json_depth);
        const json body = json::parse(req.body, nullptr, false);
        if (body.is_discarded() || !body.is_object()) throw BadRequest("the request body must be a JSON object");
        if (body.contains("parameters") && body["parameters"].is_object() && !body["parameters"].empty()) {
          throw BadRequest("load parameters (config or file overrides) are not supported by Ferry: write the model "
                           "into the repository, then load it");
        }
      }
      // A copy of `reply` (ReplyOnce: one answer between them): when Control throws, the catch answers.
      service_.Control(name, p[4] == "load", [done = reply](int status, const std::string& error) {
        done(status == 200 ? JsonReply(200, json::object()) : ErrorReply(status, error));
      });
      reply = nullptr;
      return;
    }
    return send(ErrorReply(404, "no endpoint " + req.target));
  }
  if (p[1] != "models") return send(ErrorReply(404, "no endpoint " + req.target));
  if (p.size() == 3 && p[2] == "stats") {
    if (!get) return method_not_allowed("GET");
    return stats_reply("", "");
  }
  // /v2/models/NAME[/versions/V][/ACTION]
  if (p.size() < 3) return send(ErrorReply(404, "no endpoint " + req.target));
  const std::string name = p[2];
  ValidateModelName(name);
  size_t at = 3;
  std::string version;
  if (p.size() >= 5 && p[3] == "versions") {
    version = p[4];
    ParseVersion(version);
    at = 5;
  }
  if (p.size() > at + 1) return send(ErrorReply(404, "no endpoint " + req.target));
  const std::string action = p.size() == at + 1 ? p[at] : "";
  if (action == "ready") {
    if (!get) return method_not_allowed("GET");
    const bool ready = service_.ModelReady(name, version);
    return send(JsonReply(ready ? 200 : 400, {{"name", name}, {"ready", ready}}));
  }
  const ModelTarget target = service_.Find(name, version);  // 404 when not loaded
  const auto& model = *target.model;
  if (action == "infer") {
    if (!post) return method_not_allowed("POST");
    return Infer(name, version, req, std::move(cancelled), reply);
  }
  if (action.empty()) {
    if (!get) return method_not_allowed("GET");
    json versions = json::array();
    if (!version.empty()) versions.push_back(version);
    else for (const auto& [v, s] : model.versions) versions.push_back(std::to_string(v));
    return send(JsonReply(200, {{"name", name},
                                {"versions", versions},
                                {"platform", "onnxruntime_onnx"},
                                {"inputs", TensorsMetadata(model.config.inputs, model.config.max_batch_size)},
                                {"outputs", TensorsMetadata(model.config.outputs, model.config.max_batch_size)}}));
  }
  if (action == "config") {
    if (!get) return method_not_allowed("GET");
    return send(JsonReply(200, ConfigJson(model.proto)));
  }
  if (action == "stats") {
    if (!get) return method_not_allowed("GET");
    return stats_reply(name, version);
  }
  return send(ErrorReply(404, "no endpoint " + req.target));
}

void Router::Infer(const std::string& name, const std::string& version, const HttpRequest& req,
                   std::shared_ptr<std::atomic<bool>> cancelled, std::function<void(HttpReply)>& reply) {
  auto decoded = std::make_shared<DecodedInfer>();
  const auto decode = [&](const ServeConfig& config) {
    *decoded = DecodeInferRequest(req.body, req.header_length, config, service_.options().max_json_depth);
    InferRequest request = std::move(decoded->request);
    decoded->request.id = request.id;
    return request;
  };
  service_.Infer(name, version, decode, std::move(cancelled),
                 [decoded, name, reply = std::exchange(reply, nullptr)](InferResponse r) {
                   if (r.status != 200) return reply(ErrorReply(r.status, r.error));
                   HttpReply out;
                   try {
                     EncodedInfer enc = EncodeInferResponse(r, name, *decoded);
                     out.body = std::move(enc.body);
                     out.header_length = enc.header_length;
                     if (enc.header_length) out.content_type = "application/octet-stream";
                   } catch (const std::exception& e) {
                     out = ErrorReply(500, std::string("internal error: encoding the response: ") + e.what());
                   }
                   reply(std::move(out));
                 });
}

}  // namespace ferry::server
