#include "server/serve.h"

#include <pthread.h>
#include <signal.h>

#include <ctime>
#include <thread>

#include "ferry/error.h"
#include "server/inference_service.h"

namespace ferry::server {

int RunServer(const ServeOptions& options, std::ostream& log) {
  // Every thread started from here inherits the blocked signals; this thread waits for them with sigwait.
  sigset_t signals;
  sigemptyset(&signals);
  sigaddset(&signals, SIGTERM);
  sigaddset(&signals, SIGINT);
  pthread_sigmask(SIG_BLOCK, &signals, nullptr);

  auto metrics = std::make_shared<MetricsRegistry>();
  ModelManager manager(options.manager, metrics, log);
  ServiceOptions so;
  so.max_json_depth = options.max_json_depth;
  so.model_control = options.manager.mode == ControlMode::kExplicit;
  so.control_refusal = options.manager.mode == ControlMode::kPoll
                           ? "model control is disabled in poll mode: change the repository instead"
                           : "model control is disabled: start with --model-control-mode explicit";
  InferenceService service(manager, metrics, so);
  Router router(service);
  // The models load on the manager's load threads while the transports listen: health answers at once (live;
  // ready once the models are loaded), and a model that loads slowly delays no other. (A repository that cannot
  // be listed fails here, before anything listens.)
  manager.StartLoading();
  std::unique_ptr<GrpcServer> grpc;
  uint16_t grpc_port = 0;
  if (options.grpc_enabled) {
    grpc = std::make_unique<GrpcServer>(options.grpc, service);
    grpc_port = grpc->Start();
  }
  HttpServer http(options.http, router);
  const uint16_t port = http.Start();
  log << "ferry serve: listening (HTTP port " << port;
  if (grpc) log << ", gRPC port " << grpc_port;
  log << " on " << options.http.address << ") while " << manager.Startup().models
      << " model(s) load; /v2/health/ready answers 200 once they have" << std::endl;

  // Waits for SIGTERM/SIGINT, or for a failed startup load without --keep-going (exit 1, as Triton). Once the
  // startup loads are done, the lines scripts wait for: "gRPC on ..." and "HTTP on ...".
  bool announced = false;
  int sig = 0;
  while (sig <= 0) {
    const timespec tick{0, 50'000'000};
    sig = sigtimedwait(&signals, nullptr, &tick);
    if (sig > 0) break;
    const auto startup = manager.Startup();
    if (startup.failed > 0 && !options.keep_going) {
      log << "ferry serve: " << startup.failed << " model(s) failed to load; exiting (--keep-going serves the others)"
          << std::endl;
      service.SetShuttingDown();
      if (grpc) grpc->Stop(0);
      http.Stop(0);
      manager.Shutdown();
      return 1;
    }
    if (!announced && startup.done == startup.models) {
      announced = true;
      if (grpc) log << "ferry serve: gRPC on " << options.grpc.address << ":" << grpc_port << std::endl;
      log << "ferry serve: HTTP on " << options.http.address << ":" << port << std::endl;
    }
  }
  log << "ferry serve: " << (sig == SIGTERM ? "SIGTERM" : "SIGINT")
      << ": draining (no new connections; answering requests in flight)" << std::endl;
  service.SetShuttingDown();
  // Both transports drain at once, while the models keep serving what is queued.
  int grpc_left = 0;
  std::thread grpc_stop;
  if (grpc) grpc_stop = std::thread([&] { grpc_left = grpc->Stop(options.drain_timeout_s * 1000); });
  const int left = http.Stop(options.drain_timeout_s * 1000);
  if (grpc_stop.joinable()) grpc_stop.join();
  manager.Shutdown();
  if (left > 0) log << "ferry serve: " << left << " request(s) still in flight after the drain timeout" << std::endl;
  if (grpc_left > 0) {
    log << "ferry serve: " << grpc_left << " gRPC call(s) cancelled at the drain timeout" << std::endl;
  }
  log << "ferry serve: stopped" << std::endl;
  return 0;
}

}  // namespace ferry::server
