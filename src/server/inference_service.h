// The KServe v2 endpoints' logic that does not depend on the transport, shared by HTTP (http_routes.h) and gRPC
// (grpc_server.h): model and version lookup, inference submission to the model's scheduler (so requests from both
// transports batch together), readiness, statistics and repository control. A failure is an HTTP status and a
// message, the same for both transports (gRPC maps the status to its codes).
#pragma once

#include <atomic>
#include <functional>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include "server/infer_request.h"
#include "server/metrics.h"
#include "server/model_manager.h"

namespace ferry::server {

struct ServiceOptions {
  int max_json_depth = 64;
  bool model_control = false;   // repository load/unload allowed (--model-control-mode explicit)
  std::string control_refusal;  // the message when it is not
};

// A request refused by the service: the HTTP status (403, 404, ...) and the message for the client.
class ServiceError : public std::runtime_error {
 public:
  ServiceError(int status, const std::string& message) : std::runtime_error(message), status_(status) {}
  int status() const { return status_; }

 private:
  int status_;
};

struct ModelTarget {
  std::shared_ptr<const LoadedModel> model;
  std::shared_ptr<ServedVersion> served;  // the version asked for, or the latest
};

class InferenceService {
 public:
  InferenceService(ModelManager& manager, std::shared_ptr<MetricsRegistry> metrics, ServiceOptions options);

  // Every model asked for is loaded, and shutdown has not started.
  bool Ready() const;
  void SetShuttingDown() { shutting_down_ = true; }

  // The model and version ("": the latest). Throws InvalidArgumentError for an invalid name or version (400),
  // ServiceError 503 while the model is loading (not served yet), 404 when the model or that version is not
  // loaded.
  ModelTarget Find(const std::string& name, const std::string& version) const;
  // Whether that model version is loaded (InvalidArgumentError for an invalid name or version).
  bool ModelReady(const std::string& name, const std::string& version) const;

  // Turns the transport's request into an InferRequest checked against the model's config; throws BadRequest.
  using Decode = std::function<InferRequest(const ServeConfig&)>;
  // Decodes and queues an inference on the model's scheduler. `done` is called exactly once: here for a request
  // refused at once (404, 400, 503 queue full), else later from an instance thread. A reload between lookup and
  // submission is retried on the new load. Never throws.
  void Infer(const std::string& name, const std::string& version, const Decode& decode,
             std::shared_ptr<std::atomic<bool>> cancelled, InferCallback done) noexcept;

  // Loads (or reloads) / unloads a model on a load thread; `done(status, error)` is called exactly once
  // (200 and "" on success), unless it throws: InvalidArgumentError for an invalid name, ServiceError 403 when
  // model control is off, 503 once shutdown has begun.
  void Control(const std::string& name, bool load, std::function<void(int, std::string)> done);

  std::vector<ModelIndexEntry> Index() const { return manager_.Index(); }
  // The loaded versions' stats: every model's (name ""), or one model's, all versions or one (ServiceError 404).
  std::vector<std::shared_ptr<ModelStats>> Stats(const std::string& name, const std::string& version) const;

  ModelManager& manager() { return manager_; }
  MetricsRegistry& metrics() { return *metrics_; }
  const ServiceOptions& options() const { return options_; }

 private:
  ModelManager& manager_;
  std::shared_ptr<MetricsRegistry> metrics_;
  ServiceOptions options_;
  std::atomic<bool> shutting_down_{false};
};

}  // namespace ferry::server
