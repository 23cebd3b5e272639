// The models being served: loading from the repository (config, versions, instances, warm-up), atomic switch
// on reload, unloading with memory returned, and the model control modes (none / explicit / poll).
#pragma once

#include <condition_variable>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <ostream>
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
  std::string state;              // "READY" or "UNAVAILABLE"
  std::string reason;             // why it is unavailable
};

class ModelManager {
 public:
  ModelManager(ManagerOptions options, std::shared_ptr<MetricsRegistry> metrics, std::ostream& log);
  ~ModelManager();  // Shutdown()
  ModelManager(const ModelManager&) = delete;
  ModelManager& operator=(const ModelManager&) = delete;

  // Loads the models the mode asks for (none / poll: all; explicit: startup_models) and starts polling. Returns
  // the number of models that failed to load (each is logged with its reason).
  int Start();
  // Loads (or reloads) a model: the new version is loaded and warmed up first, then switched in atomically; the
  // old one finishes its in-flight requests and is freed. On failure the old one keeps serving. Throws
  // ferry::Error with the reason. Blocks; serialized with other loads and unloads.
  void Load(const std::string& name);
  // Stops serving a model: no new requests, queued ones finish, memory is returned. InvalidArgumentError when
  // the model is not loaded.
  void Unload(const std::string& name);
  // Runs `task` on the control thread (loads must not block the transports' I/O threads).
  void RunOnControlThread(std::function<void()> task);
  // One poll-mode pass: loads new or changed models, unloads removed ones.
  void PollOnce();
  // Stops polling and the control thread, drains and frees every model.
  void Shutdown();

  std::shared_ptr<const LoadedModel> Find(const std::string& name) const;
  std::vector<ModelIndexEntry> Index() const;  // every model in the repository or loaded
  bool AllReady() const;                       // every model asked for is loaded
  void RefreshMemoryGauges();
  const ManagerOptions& options() const { return options_; }

 private:
  std::shared_ptr<LoadedModel> Build(const std::string& name);
  void Log(const std::string& line);
  void ControlLoop();
  static void Retire(std::shared_ptr<LoadedModel> model);

  ManagerOptions options_;
  std::shared_ptr<MetricsRegistry> metrics_;
  std::ostream& log_;
  std::mutex log_mutex_;

  mutable std::mutex mutex_;  // models_, failures_, poll_failed_
  std::map<std::string, std::shared_ptr<LoadedModel>> models_;
  std::map<std::string, std::string> failures_;  // model -> why its last load failed / it was unloaded
  std::mutex load_mutex_;                         // one load or unload at a time
  std::map<std::string, std::string> poll_failed_;  // poll mode: model -> fingerprint its failed load had

  std::mutex control_mutex_;
  std::condition_variable control_cv_;
  std::deque<std::function<void()>> control_tasks_;
  bool stopping_ = false;
  std::thread control_thread_;
};

}  // namespace ferry::server
