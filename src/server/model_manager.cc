#include "server/model_manager.h"

#include <malloc.h>

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <set>

#include "ferry/error.h"
#include "server/repository.h"

namespace ferry::server {
namespace fs = std::filesystem;

ModelManager::ModelManager(ManagerOptions options, std::shared_ptr<MetricsRegistry> metrics, std::ostream& log)
    : options_(std::move(options)), metrics_(std::move(metrics)), log_(log) {
  control_thread_ = std::thread([this] { ControlLoop(); });
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
  for (int64_t v : versions) {
    auto& list = sessions[v];
    while (static_cast<int>(list.size()) < count) list.push_back(Session::Create(model_path(v), so));
    // Warm-up: one run of zeros at batch 1 on every instance, when the config's dims are all known.
    const bool static_dims = std::all_of(c.inputs.begin(), c.inputs.end(), [](const TensorSpec& s) {
      return std::all_of(s.dims.begin(), s.dims.end(), [](int64_t d) { return d >= 0; });
    });
    if (static_dims) {
      std::vector<std::pair<std::string, Tensor>> inputs;
      for (const auto& s : c.inputs) {
        Shape shape = s.dims;
        if (c.max_batch_size > 0) shape.insert(shape.begin(), 1);
        inputs.emplace_back(s.name, Tensor(s.dtype, shape));
      }
      for (auto& session : list) {
        try {
          session->Run(inputs);
        } catch (const Error& e) {
          throw InvalidModelError("model '" + name + "' version " + std::to_string(v) +
                                  ": warm-up run with zeros failed: " + e.what());
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
  std::string vs;
  for (int64_t v : versions) vs += (vs.empty() ? "" : ",") + std::to_string(v);
  Log("model '" + name + "' version " + vs + " ready: " + std::to_string(count) + " instance(s), max_batch_size " +
      std::to_string(c.max_batch_size) + (c.dynamic_batching ? ", dynamic batching" : "") + ", level " +
      std::to_string(c.optimization_level) + (src.config.path.empty() ? ", auto-completed config" : "") +
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

void ModelManager::Load(const std::string& name) {
  std::lock_guard serial(load_mutex_);
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
  std::lock_guard serial(load_mutex_);
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

void ModelManager::RunOnControlThread(std::function<void()> task) {
  {
    std::lock_guard lock(control_mutex_);
    if (stopping_) return;
    control_tasks_.push_back(std::move(task));
  }
  control_cv_.notify_one();
}

void ModelManager::ControlLoop() {
  auto next_poll = std::chrono::steady_clock::now() + std::chrono::seconds(options_.poll_seconds);
  std::unique_lock lock(control_mutex_);
  while (!stopping_) {
    if (control_tasks_.empty()) {
      if (options_.mode == ControlMode::kPoll) {
        control_cv_.wait_until(lock, next_poll);
      } else {
        control_cv_.wait(lock);
      }
    }
    if (stopping_) break;
    std::function<void()> task;
    if (!control_tasks_.empty()) {
      task = std::move(control_tasks_.front());
      control_tasks_.pop_front();
    } else if (options_.mode == ControlMode::kPoll && std::chrono::steady_clock::now() >= next_poll) {
      task = [this] { PollOnce(); };
      next_poll = std::chrono::steady_clock::now() + std::chrono::seconds(options_.poll_seconds);
    }
    if (!task) continue;
    lock.unlock();
    try {
      task();
    } catch (const std::exception& e) {
      Log(std::string("control task failed: ") + e.what());
    }
    lock.lock();
  }
}

void ModelManager::PollOnce() {
  std::vector<std::string> names;
  try {
    names = ListModels(options_.repository);
  } catch (const Error& e) {
    Log(std::string("poll: ") + e.what());
    return;
  }
  const std::set<std::string> present(names.begin(), names.end());
  std::vector<std::string> loaded;
  {
    std::lock_guard lock(mutex_);
    for (const auto& [n, m] : models_) loaded.push_back(n);
  }
  for (const auto& n : loaded) {
    if (!present.count(n)) {
      try {
        Unload(n);
      } catch (const Error&) {
      }
    }
  }
  for (const auto& n : names) {
    const std::string fp = ModelFingerprint(options_.repository, n);
    std::string current;
    bool failed = false;
    {
      std::lock_guard lock(mutex_);
      if (auto it = models_.find(n); it != models_.end()) current = it->second->fingerprint;
      failed = failures_.count(n) > 0;
    }
    if (fp == current) continue;
    {
      std::lock_guard lock(mutex_);
      if (failed && poll_failed_[n] == fp) continue;  // unchanged since its load failed
    }
    bool ok = true;
    try {
      Load(n);
    } catch (const std::exception&) {
      ok = false;
    }
    std::lock_guard lock(mutex_);
    if (ok) poll_failed_.erase(n);
    else poll_failed_[n] = fp;
  }
}

void ModelManager::Shutdown() {
  {
    std::lock_guard lock(control_mutex_);
    stopping_ = true;
  }
  control_cv_.notify_all();
  if (control_thread_.joinable()) control_thread_.join();
  std::map<std::string, std::shared_ptr<LoadedModel>> models;
  {
    std::lock_guard lock(mutex_);
    models.swap(models_);
  }
  for (auto& [n, m] : models) Retire(std::move(m));
}

int ModelManager::Start() {
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
  int failed = 0;
  for (const auto& n : names) {
    try {
      Load(n);
    } catch (const std::exception&) {
      ++failed;
      std::lock_guard lock(mutex_);
      if (options_.mode == ControlMode::kPoll) poll_failed_[n] = ModelFingerprint(options_.repository, n);
    }
  }
  return failed;
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
  for (const auto& [n, why] : failures_) {
    if (why != "unloaded") return false;
  }
  return true;
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
