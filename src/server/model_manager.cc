#include "server/model_manager.h"

#include <malloc.h>

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <set>

#include "ferry/error.h"
#include "server/model_warmup.h"
#include "server/repository.h"

namespace ferry::server {
namespace fs = std::filesystem;

ModelManager::ModelManager(ManagerOptions options, std::shared_ptr<MetricsRegistry> metrics, std::ostream& log)
    : options_(std::move(options)), metrics_(std::move(metrics)), log_(log) {
  next_poll_ = std::chrono::steady_clock::now() + std::chrono::seconds(options_.poll_seconds);
  for (int i = 0; i < std::max(1, options_.load_threads); ++i) load_threads_.emplace_back([this] { LoadThread(); });
}

ModelManager::~ModelManager() { Shutdown(); }

void ModelManager::Log(const std::string& line) {
  std::lock_guard lock(log_mutex_);
  log_ << "ferry serve: " << line << std::endl;
}

std::shared_ptr<LoadedModel> ModelManager::Build(const std::string& name) {
  const auto started = std::chrono::steady_clock::now();
  ModelSource src = ReadModelSource(options_.repository, name);
  auto model = std::make_shared<LoadedModel>();
  model->name = name;
  model->fingerprint = ModelFingerprint(options_.repository, name);
  model->warnings = src.warnings;
  const ServeConfig policy = ValidateModelConfig(src.config, name, nullptr);
  const std::vector<int64_t> versions = SelectVersions(policy, src.available_versions, src.dir);
  const auto model_path = [&](int64_t v) {
    return (fs::path(src.dir) / std::to_string(v) / policy.model_filename).string();
  };
  for (int64_t v : versions) {
    std::error_code ec;
    if (!fs::is_regular_file(model_path(v), ec)) {
      throw InvalidModelError("model '" + name + "' version " + std::to_string(v) + ": " + model_path(v) +
                              " is missing");
    }
  }
  SessionOptions so;
  so.backends = options_.backends;
  so.optimization_level = policy.optimization_level;
  const int count = policy.instance_count;
  const int threads = policy.threads > 0 ? policy.threads : options_.threads;
  so.threads = threads > 0 ? threads
                           : (count > 1 ? std::max(1, static_cast<int>(std::thread::hardware_concurrency()) / count) : 0);
  // A count the server derived (not one the config or --threads set) adapts to a busy host as the default does.
  if (threads <= 0) so.adapt_threads = SessionOptions::ThreadAdaptation::kOn;
  // The config is completed from (and checked against) the newest version; every version is checked against it.
  std::map<int64_t, std::vector<std::unique_ptr<Session>>> sessions;
  for (auto it = versions.rbegin(); it != versions.rend(); ++it) {
    auto first = Session::Create(model_path(*it), so);
    ParsedConfig check = src.config;
    CompleteModelConfig(check, first->inputs(), first->outputs(), options_.default_max_batch_size, model_path(*it));
    if (it == versions.rbegin()) src.config = std::move(check);
    sessions[*it].push_back(std::move(first));
  }
  model->config = ValidateModelConfig(src.config, name, &model->warnings);
  model->proto = src.config.proto;
  model->proto.set_name(name);
  if (model->proto.platform().empty() && model->proto.backend().empty()) model->proto.set_platform("onnxruntime_onnx");
  if (model->proto.instance_group_size() == 0) {
    auto* g = model->proto.add_instance_group();
    g->set_count(model->config.instance_count);
    g->set_kind(inference::ModelInstanceGroup::KIND_CPU);
  }
  const ServeConfig& c = model->config;
  const std::vector<WarmupSample> warmups = ValidateWarmups(src.config, c);
  const bool static_dims = std::all_of(c.inputs.begin(), c.inputs.end(), [](const TensorSpec& s) {
    return std::all_of(s.dims.begin(), s.dims.end(), [](int64_t d) { return d >= 0; });
  });
  for (int64_t v : versions) {
    auto& list = sessions[v];
    while (static_cast<int>(list.size()) < count) list.push_back(Session::Create(model_path(v), so));
    if (!warmups.empty()) {
      // The config's samples: each must run on every instance (as in Triton).
      for (size_t i = 0; i < warmups.size(); ++i) {
        const std::string what = "model '" + name + "' version " + std::to_string(v) + ": model_warmup[" +
                                 std::to_string(i) + "] '" + warmups[i].name + "'";
        std::vector<std::pair<std::string, Tensor>> inputs;
        try {
          inputs = WarmupTensors(warmups[i], c, src.dir);
        } catch (const Error& e) {
          throw InvalidModelError(what + ": " + e.what());
        }
        for (auto& session : list) {
          for (uint32_t k = 0; k < warmups[i].count; ++k) {
            try {
              session->Run(inputs);
            } catch (const std::exception& e) {
              throw InvalidModelError(what + " failed: " + e.what());
            }
          }
        }
      }
    } else if (static_dims) {
      // Without model_warmup: one run of zeros at batch 1 on every instance, when the config's dims are all
      // known. Zeros need not be a valid input (a Resize's scales must be positive): a failure is a warning.
      std::vector<std::pair<std::string, Tensor>> inputs;
      for (const auto& s : c.inputs) {
        Shape shape = s.dims;
        if (c.max_batch_size > 0) shape.insert(shape.begin(), 1);
        inputs.emplace_back(s.name, Tensor(s.dtype, shape));
      }
      for (auto& session : list) {
        try {
          session->Run(inputs);
        } catch (const std::exception& e) {
          model->warnings.push_back("model '" + name + "' version " + std::to_string(v) +
                                    ": the warm-up run with zeros failed, so it serves without a warm-up (give "
                                    "model_warmup in config.pbtxt to warm it up with valid inputs): " + e.what());
          break;
        }
      }
    }
    SchedulerOptions opts;
    opts.model = name;
    opts.version = std::to_string(v);
    opts.batch.dynamic = c.dynamic_batching;
    opts.batch.max_batch_size = c.max_batch_size;
    opts.batch.preferred = c.preferred_batch_sizes;
    opts.batch.max_delay = std::chrono::microseconds(c.max_queue_delay_us);
    opts.max_queue_size = c.max_queue_size > 0 ? c.max_queue_size : options_.default_max_queue_size;
    opts.default_timeout_us = c.default_timeout_us;
    opts.timeout_delay = c.timeout_delay;
    opts.allow_timeout_override = c.allow_timeout_override;
    for (const auto& o : c.outputs) opts.outputs.push_back(o.name);
    auto served = std::make_shared<ServedVersion>();
    served->version = v;
    served->path = model_path(v);
    served->stats = metrics_->Get(name, opts.version);
    served->scheduler = std::make_unique<Scheduler>(std::move(list), std::move(opts), served->stats);
    model->versions[v] = std::move(served);
  }
  const double ms =
      std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - started).count();
  std::string vs, ws;
  for (int64_t v : versions) vs += (vs.empty() ? "" : ",") + std::to_string(v);
  for (const auto& w : warmups) ws += (ws.empty() ? ", warm-up '" : ", '") + w.name + "'";
  Log("model '" + name + "' version " + vs + " ready: " + std::to_string(count) + " instance(s), max_batch_size " +
      std::to_string(c.max_batch_size) + (c.dynamic_batching ? ", dynamic batching" : "") + ", level " +
      std::to_string(c.optimization_level) + (src.config.path.empty() ? ", auto-completed config" : "") + ws +
      " (" + std::to_string(static_cast<int64_t>(ms)) + " ms)");
  return model;
}

void ModelManager::Retire(std::shared_ptr<LoadedModel> model) {
  if (!model) return;
  for (auto& [v, served] : model->versions) served->scheduler->Drain();
  std::vector<std::shared_ptr<ModelStats>> stats;
  for (auto& [v, served] : model->versions) stats.push_back(served->stats);
  model.reset();  // frees the sessions unless a transport still holds the model for a moment
  for (auto& s : stats) s->memory_bytes.store(0);
  malloc_trim(0);
}

std::mutex& ModelManager::ModelMutex(const std::string& name) {
  std::lock_guard lock(mutex_);
  auto& m = model_mutexes_[name];
  if (!m) m = std::make_unique<std::mutex>();
  return *m;
}

void ModelManager::Load(const std::string& name) {
  std::lock_guard serial(ModelMutex(name));
  {
    std::lock_guard lock(mutex_);
    ++loading_[name];
  }
  struct Done {
    ModelManager& m;
    const std::string& name;
    ~Done() {
      std::lock_guard lock(m.mutex_);
      if (--m.loading_[name] == 0) m.loading_.erase(name);
    }
  } done{*this, name};
  std::shared_ptr<LoadedModel> model;
  try {
    model = Build(name);
  } catch (const Error& e) {
    {
      std::lock_guard lock(mutex_);
      if (!models_.count(name)) failures_[name] = e.what();
    }
    Log("model '" + name + "' failed to load: " + e.what());
    throw;
  } catch (const std::exception& e) {
    std::lock_guard lock(mutex_);
    if (!models_.count(name)) failures_[name] = e.what();
    throw InternalError("model '" + name + "': " + e.what());
  }
  for (const auto& w : model->warnings) Log("warning: " + w);
  std::shared_ptr<LoadedModel> old;
  {
    std::lock_guard lock(mutex_);
    old = std::exchange(models_[name], model);
    failures_.erase(name);
  }
  if (old) {
    Retire(std::move(old));
    Log("model '" + name + "': previous load drained and freed");
  }
  RefreshMemoryGauges();
}

void ModelManager::Unload(const std::string& name) {
  std::lock_guard serial(ModelMutex(name));
  std::shared_ptr<LoadedModel> old;
  {
    std::lock_guard lock(mutex_);
    auto it = models_.find(name);
    if (it == models_.end()) throw InvalidArgumentError("model '" + name + "' is not loaded");
    old = std::move(it->second);
    models_.erase(it);
    failures_[name] = "unloaded";
  }
  Retire(std::move(old));
  Log("model '" + name + "' unloaded");
}

bool ModelManager::Schedule(const std::string& model, std::function<void()> task) {
  {
    std::lock_guard lock(control_mutex_);
    if (stopping_) return false;
    tasks_.push_back({model, std::move(task)});
  }
  control_cv_.notify_all();
  return true;
}

// Each load thread runs the first queued task whose model has no task running (so one model's tasks keep their
// order) and, in poll mode, queues a poll pass every poll_seconds.
void ModelManager::LoadThread() {
  std::unique_lock lock(control_mutex_);
  while (!stopping_) {
    auto it = std::find_if(tasks_.begin(), tasks_.end(), [&](const Task& t) { return !busy_.count(t.model); });
    if (it == tasks_.end()) {
      if (options_.mode != ControlMode::kPoll) {
        control_cv_.wait(lock);
      } else if (std::chrono::steady_clock::now() >= next_poll_) {
        tasks_.push_back({"", [this] { PollOnce(); }});
        next_poll_ = std::chrono::steady_clock::now() + std::chrono::seconds(options_.poll_seconds);
      } else {
        control_cv_.wait_until(lock, next_poll_);
      }
      continue;
    }
    Task task = std::move(*it);
    tasks_.erase(it);
    busy_.insert(task.model);
    lock.unlock();
    try {
      task.run();
    } catch (const std::exception& e) {
      Log(std::string("control task failed: ") + e.what());
    } catch (...) {
      Log("control task failed");
    }
    task.run = nullptr;  // what it holds goes before the next task may start
    lock.lock();
    busy_.erase(task.model);
    control_cv_.notify_all();  // a task of the same model may run now
  }
}

void ModelManager::PollLoad(const std::string& name, const std::string& fingerprint) {
  bool ok = true;
  try {
    Load(name);
  } catch (const std::exception&) {
    ok = false;
  }
  std::lock_guard lock(mutex_);
  if (ok) poll_failed_.erase(name);
  else poll_failed_[name] = fingerprint;
}

void ModelManager::PollOnce() {
  std::vector<std::string> names;
  try {
    names = ListModels(options_.repository);
  } catch (const Error& e) {
    Log(std::string("poll: ") + e.what());
    return;
  }
  std::set<std::string> pending;  // models with a task queued or running: left for the next pass
  {
    std::lock_guard lock(control_mutex_);
    pending = busy_;
    for (const auto& t : tasks_) pending.insert(t.model);
  }
  const std::set<std::string> present(names.begin(), names.end());
  std::vector<std::string> loaded;
  {
    std::lock_guard lock(mutex_);
    for (const auto& [n, m] : models_) loaded.push_back(n);
  }
  for (const auto& n : loaded) {
    if (!present.count(n) && !pending.count(n)) {
      Schedule(n, [this, n] {
        try {
          Unload(n);
        } catch (const Error&) {
        }
      });
    }
  }
  for (const auto& n : names) {
    if (pending.count(n)) continue;
    const std::string fp = ModelFingerprint(options_.repository, n);
    {
      std::lock_guard lock(mutex_);
      const auto it = models_.find(n);
      if (it != models_.end() && it->second->fingerprint == fp) continue;
      if (failures_.count(n) && poll_failed_.count(n) && poll_failed_[n] == fp) continue;  // unchanged since it failed
    }
    Schedule(n, [this, n, fp] { PollLoad(n, fp); });
  }
}

void ModelManager::Shutdown() {
  {
    std::lock_guard lock(control_mutex_);
    stopping_ = true;
  }
  control_cv_.notify_all();
  for (auto& t : load_threads_) t.join();
  load_threads_.clear();
  {
    std::lock_guard lock(control_mutex_);
    tasks_.clear();
  }
  std::map<std::string, std::shared_ptr<LoadedModel>> models;
  {
    std::lock_guard lock(mutex_);
    models.swap(models_);
  }
  for (auto& [n, m] : models) Retire(std::move(m));
}

void ModelManager::StartLoading() {
  std::vector<std::string> names;
  if (options_.mode == ControlMode::kExplicit) {
    const bool all = std::find(options_.startup_models.begin(), options_.startup_models.end(), "*") !=
                     options_.startup_models.end();
    names = all ? ListModels(options_.repository) : options_.startup_models;
  } else {
    std::vector<std::string> skipped;
    names = ListModels(options_.repository, &skipped);
    for (const auto& s : skipped) Log("repository entry skipped: " + s);
  }
  for (const auto& n : names) {
    std::lock_guard lock(mutex_);  // counted before the load can finish
    const bool scheduled = Schedule(n, [this, n] {
      bool ok = true;
      try {
        Load(n);
      } catch (const std::exception&) {
        ok = false;
      }
      const bool poll = options_.mode == ControlMode::kPoll;
      const std::string fp = !ok && poll ? ModelFingerprint(options_.repository, n) : "";
      {
        std::lock_guard lock(mutex_);
        if (!ok && poll) poll_failed_[n] = fp;
        ++startup_.done;
        if (!ok) ++startup_.failed;
      }
      startup_cv_.notify_all();
    });
    if (scheduled) ++startup_.models;
  }
}

ModelManager::StartupProgress ModelManager::Startup() const {
  std::lock_guard lock(mutex_);
  return startup_;
}

int ModelManager::Start() {
  StartLoading();
  std::unique_lock lock(mutex_);
  startup_cv_.wait(lock, [&] { return startup_.done >= startup_.models; });
  return startup_.failed;
}

std::shared_ptr<const LoadedModel> ModelManager::Find(const std::string& name) const {
  std::lock_guard lock(mutex_);
  auto it = models_.find(name);
  return it == models_.end() ? nullptr : it->second;
}

std::vector<ModelIndexEntry> ModelManager::Index() const {
  std::map<std::string, ModelIndexEntry> entries;
  try {
    for (const auto& n : ListModels(options_.repository)) entries[n] = {n, {}, "UNAVAILABLE", "not loaded"};
  } catch (const Error&) {
  }
  std::lock_guard lock(mutex_);
  for (const auto& [n, why] : failures_) entries[n] = {n, {}, "UNAVAILABLE", why};
  for (const auto& [n, count] : loading_) entries[n] = {n, {}, "LOADING", ""};
  for (const auto& [n, m] : models_) {
    ModelIndexEntry e{n, {}, "READY", ""};
    for (const auto& [v, s] : m->versions) e.versions.push_back(v);
    entries[n] = e;
  }
  std::vector<ModelIndexEntry> out;
  for (auto& [n, e] : entries) out.push_back(std::move(e));
  return out;
}

bool ModelManager::AllReady() const {
  std::lock_guard lock(mutex_);
  if (startup_.done < startup_.models) return false;
  for (const auto& [n, why] : failures_) {
    if (why != "unloaded") return false;
  }
  for (const auto& [n, count] : loading_) {
    if (!models_.count(n)) return false;
  }
  return true;
}

bool ModelManager::Loading(const std::string& name) const {
  std::lock_guard lock(mutex_);
  return loading_.count(name) && !models_.count(name);
}

void ModelManager::RefreshMemoryGauges() {
  std::vector<std::shared_ptr<LoadedModel>> models;
  {
    std::lock_guard lock(mutex_);
    for (const auto& [n, m] : models_) models.push_back(m);
  }
  for (const auto& m : models) {
    for (const auto& [v, s] : m->versions) s->stats->memory_bytes.store(s->scheduler->MemoryBytes());
  }
}

}  // namespace ferry::server
