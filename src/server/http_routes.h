// The KServe v2 REST endpoints, independent of the socket code (http_server.cc): a request in, exactly one reply
// out (possibly later, from an instance or control thread). Handlers never throw: every failure becomes a reply
// with a status and a KServe error body {"error": "..."}.
#pragma once

#include <atomic>
#include <functional>
#include <memory>
#include <optional>
#include <string>

#include "server/inference_service.h"

namespace ferry::server {

struct HttpRequest {
  std::string method;  // "GET", "POST", ...
  std::string target;  // path and query, e.g. "/v2/models/resnet/infer"
  std::string body;
  std::optional<size_t> header_length;  // Inference-Header-Content-Length
};

struct HttpReply {
  int status = 200;
  std::string content_type = "application/json";
  std::string body;
  std::optional<size_t> header_length;  // binary responses
  bool close_connection = false;        // the transport closes the connection after sending it
};

// Answers the REST form of the KServe v2 endpoints; what they do is the InferenceService's (shared with gRPC).
class Router {
 public:
  explicit Router(InferenceService& service);
  // Answers `request` by calling `reply` exactly once. `cancelled` is set by the transport when the client goes
  // away (a queued inference is then dropped).
  void Handle(const HttpRequest& request, std::shared_ptr<std::atomic<bool>> cancelled,
              std::function<void(HttpReply)> reply) noexcept;

 private:
  void Route(const HttpRequest& request, std::shared_ptr<std::atomic<bool>> cancelled,
             std::function<void(HttpReply)>& reply);
  void Infer(const std::string& model, const std::string& version, const HttpRequest& request,
             std::shared_ptr<std::atomic<bool>> cancelled, std::function<void(HttpReply)>& reply);

  InferenceService& service_;
};

HttpReply ErrorReply(int status, const std::string& message) noexcept;

}  // namespace ferry::server
