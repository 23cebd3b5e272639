// The models being served: loading from the repository (config, versions, instances, warm-up), atomic switch
// on reload, unloading with memory returned, and the model control modes (none / explicit / poll). Loads run on
// a few load threads, never on a transport's thread: models load in parallel (a slow or failing model delays no
// other), one model's loads and unloads run in the order they were asked for.
#pragma once

#include <chrono>
#include <condition_variable>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <ostream>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "server/metrics.h"
#include "server/model_config.h"
#include "server/scheduler.h"

namespace ferry::server {

enum class ControlMode { kNone, kExplicit, kPoll };

struct ManagerOptions {
  std::string repository;
  ControlMode mode = ControlMode::kNone;
  std::vector<std::string> startup_models;  // explicit mode: loaded at start ("*": all)
  int poll_seconds = 15;
  int64_t default_max_batch_size = 4;       // auto-complete, for models whose inputs all have a dynamic dim 0
  size_t default_max_queue_size = 128;      // when a config gives no max_queue_size
  std::vector<std::string> backends = {"cpu", "ref"};
  int threads = 0;                          // intra-op threads per instance (0: cores / instances)
  int load_threads = 4;                     // models loaded at once (Triton's --model-load-thread-count: 4)
};

struct ServedVersion {
  int64_t version = 0;
  std::string path;
  std::unique_ptr<Scheduler> scheduler;
  std::shared_ptr<ModelStats> stats;
};

// One loaded model: immutable once published; a reload publishes a new one.
struct LoadedModel {
  std::string name;
  ServeConfig config;
  inference::ModelConfig proto;  // as completed from the model (the config endpoint shows it)
  std::vector<std::string> warnings;
  std::map<int64_t, std::shared_ptr<ServedVersion>> versions;
  std::string fingerprint;
  std::shared_ptr<ServedVersion> Latest() const { return versions.rbegin()->second; }
};

struct ModelIndexEntry {
  std::string name;
  std::vector<int64_t> versions;  // loaded versions
  std::string state;              // "READY", "LOADING" (not served yet) or "UNAVAILABLE"
  std::string reason;             // why it is unavailable
};

class ModelManager {
 public:
  ModelManager(ManagerOptions options, std::shared_ptr<MetricsRegistry> metrics, std::ostream& log);
  ~ModelManager();  // Shutdown()
  ModelManager(const ModelManager&) = delete;
  ModelManager& operator=(const ModelManager&) = delete;

  // Begins loading the models the mode asks for (none / poll: all; explicit: startup_models) on the load
  // threads and returns at once; Startup() says how far it got. Each failure is logged with its reason. Throws
  // InvalidArgumentError when the repository cannot be listed.
  void StartLoading();
  struct StartupProgress {
    int models = 0;  // startup loads asked for
    int done = 0;    // finished, loaded or failed
    int failed = 0;
  };
  StartupProgress Startup() const;
  // StartLoading(), then waits for every startup load. Returns the number of models that failed to load.
  int Start();
  // Loads (or reloads) a model: the new version is loaded and warmed up first, then switched in atomically; the
  // old one finishes its in-flight requests and is freed. On failure the old one keeps serving. Throws
  // ferry::Error with the reason. Blocks; serialized with the other loads and unloads of the same model (other
  // models load at the same time).
  void Load(const std::string& name);
  // Stops serving a model: no new requests, queued ones finish, memory is returned. InvalidArgumentError when
  // the model is not loaded.
  void Unload(const std::string& name);
  // Runs `task` on a load thread (loads must not block the transports' I/O threads), after the tasks scheduled
  // earlier for the same `model`; tasks of different models run at the same time, load_threads at most. A task
  // still queued at Shutdown is dropped (destroyed, not run). False (and not run) once Shutdown has begun.
  bool Schedule(const std::string& model, std::function<void()> task);
  // One poll-mode pass: schedules loads of new or changed models and unloads of removed ones (a model with a
  // task queued or running is left for the next pass).
  void PollOnce();
  // Stops polling and the load threads (a load in progress finishes first), drains and frees every model.
  void Shutdown();

  std::shared_ptr<const LoadedModel> Find(const std::string& name) const;
  std::vector<ModelIndexEntry> Index() const;  // every model in the repository or loaded
  // Every model asked for is loaded: the startup loads are done, none failed (and was not loaded since), and no
  // model that is not served yet is loading.
  bool AllReady() const;
  bool Loading(const std::string& name) const;  // a load of a model not served yet is in progress
  void RefreshMemoryGauges();
  const ManagerOptions& options() const { return options_; }

 private:
  struct Task {
    std::string model;  // "" for a repository-wide task (a poll pass)
    std::function<void()> run;
  };

  std::shared_ptr<LoadedModel> Build(const std::string& name);
  void Log(const std::string& line);
  void LoadThread();
  void PollLoad(const std::string& name, const std::string& fingerprint);
  std::mutex& ModelMutex(const std::string& name);
  static void Retire(std::shared_ptr<LoadedModel> model);

  ManagerOptions options_;
  std::shared_ptr<MetricsRegistry> metrics_;
  std::ostream& log_;
  std::mutex log_mutex_;

  mutable std::mutex mutex_;  // models_, failures_, loading_, poll_failed_, model_mutexes_, startup_
  std::map<std::string, std::shared_ptr<LoadedModel>> models_;
  std::map<std::string, std::string> failures_;  // model -> why its last load failed / it was unloaded
  std::map<std::string, int> loading_;           // model -> loads in progress
  std::map<std::string, std::unique_ptr<std::mutex>> model_mutexes_;  // one load or unload of a model at a time
  std::map<std::string, std::string> poll_failed_;  // poll mode: model -> fingerprint its failed load had
  StartupProgress startup_;
  std::condition_variable startup_cv_;

  std::mutex control_mutex_;  // tasks_, busy_, stopping_, next_poll_
  std::condition_variable control_cv_;
  std::deque<Task> tasks_;
  std::set<std::string> busy_;  // models with a task running
  bool stopping_ = false;
  std::chrono::steady_clock::time_point next_poll_;
  std::vector<std::thread> load_threads_;
};

}  // namespace ferry::server
