// The KServe v2 gRPC transport (grpc_service.proto, Triton-compatible) on gRPC's callback API: no thread per
// connection or per call; handlers queue work and return, and inference answers from the scheduler's instance
// threads. Everything behind the transport is the InferenceService shared with HTTP: the same models, queues
// (requests from both transports batch together), statistics, metrics and error messages. A client that cancels
// its call (or whose deadline passes) cancels its queued request.
#pragma once

#include <cstdint>
#include <memory>
#include <string>

#include <grpcpp/support/status.h>

#include "server/infer_request.h"
#include "server/inference_service.h"

namespace ferry::server {

struct GrpcOptions {
  std::string address = "127.0.0.1";
  uint16_t port = 8001;                    // 0: any free port (Start returns it)
  size_t max_message_bytes = 64u << 20;    // larger requests get RESOURCE_EXHAUSTED
};

// The gRPC status for a service failure given as an HTTP status: 400 INVALID_ARGUMENT, 403 PERMISSION_DENIED,
// 404 NOT_FOUND, 413 RESOURCE_EXHAUSTED, 499 CANCELLED, 503 UNAVAILABLE (DEADLINE_EXCEEDED when the request timed
// out in the queue), 500 INTERNAL.
grpc::StatusCode GrpcCode(int http_status, bool timed_out = false);

class GrpcServer {
 public:
  GrpcServer(GrpcOptions options, InferenceService& service);
  ~GrpcServer();  // Stop(0)
  GrpcServer(const GrpcServer&) = delete;
  GrpcServer& operator=(const GrpcServer&) = delete;

  // Binds and starts serving; returns the port. Throws InvalidArgumentError when the address cannot be bound.
  uint16_t Start();
  // Stops accepting calls, lets the calls in flight finish (at most `drain_ms`; later ones are cancelled, which
  // drops them from their queue) and returns the number of calls that were cancelled so (0: drained). Idempotent.
  int Stop(int drain_ms);

  struct Impl;

 private:
  std::unique_ptr<Impl> impl_;
};

}  // namespace ferry::server
