// `ferry serve`: the model manager, the inference service and its HTTP and gRPC transports put together, run
// until SIGTERM/SIGINT.
#pragma once

#include <ostream>

#include "server/grpc_server.h"
#include "server/http_server.h"
#include "server/model_manager.h"

namespace ferry::server {

struct ServeOptions {
  ManagerOptions manager;
  HttpOptions http;
  GrpcOptions grpc;
  bool grpc_enabled = true;
  int max_json_depth = 64;
  int drain_timeout_s = 30;
  bool keep_going = false;  // keep serving when a model fails to load at startup (else exit 1, like Triton)
};

// Starts loading the repository's models, listens while they load ("ferry serve: listening (HTTP port P, gRPC
// port G on ADDRESS) while N model(s) load ..."; /v2/health/live answers at once, /v2/health/ready once every
// model is loaded), serves until SIGTERM or SIGINT, then drains: stops accepting, answers the requests in flight
// (at most drain_timeout_s), unloads the models. Once the startup loads are done it logs
// "ferry serve: gRPC on ADDRESS:PORT" then "ferry serve: HTTP on ADDRESS:PORT" (the lines scripts wait for before
// sending requests). A model that fails to load at startup makes it exit 1 at once, unless keep_going.
// Returns the exit code (0, or 1 when startup failed). Call from the main thread before other threads exist (it
// blocks SIGTERM/SIGINT to wait for them).
int RunServer(const ServeOptions& options, std::ostream& log);

}  // namespace ferry::server
