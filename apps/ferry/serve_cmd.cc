// ferry serve REPOSITORY: serve a Triton-style model repository over the KServe v2 protocol (docs/serve.md).
#include <cstdlib>
#include <iostream>
#include <sstream>
#ifdef __GLIBC__
#include <malloc.h>
#endif

#include "commands.h"
#include "session_flags.h"
#include "ferry/error.h"
#include "server/serve.h"

namespace ferry::cli {
namespace {

struct ServeArgs {
  std::string repository;
  std::string mode = "none";
  std::vector<std::string> load_models;
  int poll_secs = 15;
  std::string address = "127.0.0.1";
  int port = 8000;
  int grpc_port = 8001;
  bool no_grpc = false;
  int http_threads = 2;
  size_t max_body_bytes = 64u << 20;
  int max_json_depth = 64;
  int64_t default_max_batch_size = 4;
  size_t default_max_queue_size = 128;
  std::string backends = "cpu,ref";
  int threads = 0;
  int drain_secs = 30;
  bool keep_going = false;
  int malloc_arenas = 2;
};

// glibc gives each thread that allocates its own malloc arena (up to 8 per core), and memory freed into one
// arena is reused only by the threads that use it: with the HTTP, gRPC and instance threads of a server, freed
// session memory then lingers in arenas other threads will not touch (resident memory grew by 2-3 MiB over 20
// reloads with gRPC on, 0.2-0.4 MiB with two arenas; docs/serve.md). The process is ours, so we bound them,
// unless MALLOC_ARENA_MAX in the environment already says how many.
void BoundMallocArenas(int arenas) {
#ifdef __GLIBC__
  if (arenas > 0 && std::getenv("MALLOC_ARENA_MAX") == nullptr) mallopt(M_ARENA_MAX, arenas);
#else
  (void)arenas;
#endif
}

int Serve(const ServeArgs& a) {
  BoundMallocArenas(a.malloc_arenas);
  server::ServeOptions o;
  if (a.repository.empty()) throw InvalidArgumentError("give the model repository: ferry serve REPOSITORY");
  o.manager.repository = a.repository;
  o.manager.mode = a.mode == "explicit" ? server::ControlMode::kExplicit
                   : a.mode == "poll"   ? server::ControlMode::kPoll
                                        : server::ControlMode::kNone;
  if (!a.load_models.empty() && o.manager.mode != server::ControlMode::kExplicit) {
    throw InvalidArgumentError("--load-model needs --model-control-mode explicit");
  }
  o.manager.startup_models = a.load_models;
  o.manager.poll_seconds = a.poll_secs;
  o.manager.default_max_batch_size = a.default_max_batch_size;
  o.manager.default_max_queue_size = a.default_max_queue_size;
  o.manager.backends.clear();
  std::stringstream ss(a.backends);
  for (std::string b; std::getline(ss, b, ',');) {
    if (!b.empty()) o.manager.backends.push_back(b);
  }
  o.manager.threads = a.threads;
  o.http.address = a.address;
  o.http.port = static_cast<uint16_t>(a.port);
  o.http.io_threads = a.http_threads;
  o.http.max_body_bytes = a.max_body_bytes;
  o.grpc.address = a.address;
  o.grpc.port = static_cast<uint16_t>(a.grpc_port);
  o.grpc.max_message_bytes = a.max_body_bytes;
  o.grpc_enabled = !a.no_grpc;
  o.max_json_depth = a.max_json_depth;
  o.drain_timeout_s = a.drain_secs;
  o.keep_going = a.keep_going;
  return server::RunServer(o, std::cerr);
}

}  // namespace

Command AddServeCommand(CLI::App& app) {
  auto args = std::make_shared<ServeArgs>();
  CLI::App* cmd = app.add_subcommand(
      "serve", "serve a Triton-style model repository over HTTP and gRPC (KServe v2 protocol; docs/serve.md)");
  cmd->add_option("repository,--model-repository", args->repository,
                  "the model repository: REPO/MODEL/config.pbtxt and REPO/MODEL/VERSION/model.onnx");
  cmd->add_option("--model-control-mode", args->mode,
                  "none: load every model at start, no load/unload API; explicit: load --load-model models, "
                  "enable the load/unload API; poll: load every model and reload what changes on disk")
      ->check(CLI::IsMember({"none", "explicit", "poll"}));
  cmd->add_option("--load-model", args->load_models, "explicit mode: model to load at start (repeatable; * = all)");
  cmd->add_option("--repository-poll-secs", args->poll_secs, "poll mode: seconds between repository scans")
      ->check(CLI::Range(1, 86400));
  cmd->add_option("--address", args->address,
                  "address to listen on, HTTP and gRPC (default 127.0.0.1; 0.0.0.0 for all)");
  cmd->add_option("--http-port", args->port, "HTTP port (default 8000; 0 = any free port, printed at start)")
      ->check(CLI::Range(0, 65535));
  cmd->add_option("--grpc-port", args->grpc_port, "gRPC port (default 8001; 0 = any free port, printed at start)")
      ->check(CLI::Range(0, 65535));
  cmd->add_flag("--no-grpc", args->no_grpc, "serve HTTP only (no gRPC endpoint)");
  cmd->add_option("--http-threads", args->http_threads, "I/O threads for the HTTP connections (default 2)")
      ->check(CLI::Range(1, 64));
  cmd->add_option("--max-body-bytes", args->max_body_bytes, "largest request body (HTTP) or message (gRPC) accepted (default 64 MiB; 413 / RESOURCE_EXHAUSTED above)");
  cmd->add_option("--max-json-depth", args->max_json_depth, "deepest JSON nesting accepted (default 64)")
      ->check(CLI::Range(4, 1024));
  cmd->add_option("--default-max-batch-size", args->default_max_batch_size,
                  "max_batch_size given to models without config.pbtxt whose inputs have a dynamic first dim "
                  "(default 4; 0 = no batching)")
      ->check(CLI::Range(0, 4096));
  cmd->add_option("--default-max-queue-size", args->default_max_queue_size,
                  "queue bound for models whose config sets no max_queue_size (default 128; requests beyond get 503)")
      ->check(CLI::Range(1, 1000000));
  cmd->add_option("--backend,--backends", args->backends, "backends in priority order (default cpu,ref)");
  cmd->add_option("--threads", args->threads,
                  "intra-op threads per instance (default: cores / instances; 0 to 1024, 0 = the default)")
      ->check(ThreadCount());
  cmd->add_option("--drain-timeout-secs", args->drain_secs,
                  "on SIGTERM: how long to wait for requests in flight (default 30)")
      ->check(CLI::Range(0, 3600));
  cmd->add_option("--malloc-arenas", args->malloc_arenas,
                  "glibc malloc arenas for the process (default 2, so that memory freed by one thread is reused by "
                  "the others; 0 = glibc's default; MALLOC_ARENA_MAX in the environment wins)")
      ->check(CLI::Range(0, 1024));
  cmd->add_flag("--keep-going", args->keep_going, "keep serving when a model fails to load at start (default: exit 1)");
  return [args] { return Serve(*args); };
}

}  // namespace ferry::cli
