#include "server/inference_service.h"

#include "ferry/error.h"
#include "server/kserve_codec.h"
#include "server/repository.h"

namespace ferry::server {

InferenceService::InferenceService(ModelManager& manager, std::shared_ptr<MetricsRegistry> metrics,
                                   ServiceOptions options)
    : manager_(manager), metrics_(std::move(metrics)), options_(std::move(options)) {}

bool InferenceService::Ready() const { return !shutting_down_ && manager_.AllReady(); }

ModelTarget InferenceService::Find(const std::string& name, const std::string& version) const {
  ValidateModelName(name);
  const int64_t v = version.empty() ? 0 : ParseVersion(version);
  ModelTarget t;
  t.model = manager_.Find(name);
  if (!t.model && manager_.Loading(name)) {
    throw ServiceError(503, "model '" + name + "' is loading; it is served once /v2/models/" + name +
                                "/ready answers 200");
  }
  if (!t.model) throw ServiceError(404, "model '" + name + "' is not loaded");
  if (version.empty()) {
    t.served = t.model->Latest();
  } else if (auto it = t.model->versions.find(v); it != t.model->versions.end()) {
    t.served = it->second;
  } else {
    std::string loaded;
    for (const auto& [n, s] : t.model->versions) loaded += (loaded.empty() ? "" : ", ") + std::to_string(n);
    throw ServiceError(404, "model '" + name + "' has no version " + version + " loaded (loaded: " + loaded + ")");
  }
  return t;
}

bool InferenceService::ModelReady(const std::string& name, const std::string& version) const {
  try {
    Find(name, version);
    return true;
  } catch (const ServiceError&) {
    return false;
  }
}

void InferenceService::Infer(const std::string& name, const std::string& version, const Decode& decode,
                             std::shared_ptr<std::atomic<bool>> cancelled, InferCallback done) noexcept {
  const auto fail = [&](int status, FailureReason reason, const std::string& message) {
    try {
      done(InferResponse::Fail(status, reason, message));
    } catch (...) {  // the transport's callback must not throw; nothing more can be done here
    }
  };
  try {
    // A reload may close the version between lookup and submit: look up again (the new load is already in place).
    for (int attempt = 0; attempt < 4; ++attempt) {
      const ModelTarget target = Find(name, version);
      InferRequest request;
      try {
        request = decode(target.model->config);
      } catch (const BadRequest& e) {
        target.served->stats->RecordFailure(FailureReason::kOther, 0);
        return fail(400, FailureReason::kOther, "model '" + name + "': " + e.what());
      }
      request.cancelled = cancelled;
      switch (target.served->scheduler->Submit(request, done)) {
        case Scheduler::Submitted::kQueued: return;
        case Scheduler::Submitted::kQueueFull: {
          const auto& o = target.served->scheduler->options();
          return fail(503, FailureReason::kRejected,
                      "model '" + name + "' version " + o.version + ": the queue is full (" +
                          std::to_string(o.max_queue_size) +
                          " requests waiting; max_queue_size of dynamic_batching.default_queue_policy); retry later");
        }
        case Scheduler::Submitted::kClosed: continue;
      }
    }
    fail(503, FailureReason::kRejected, "model '" + name + "' is being unloaded");
  } catch (const ServiceError& e) {
    fail(e.status(), FailureReason::kOther, e.what());
  } catch (const InvalidArgumentError& e) {
    fail(400, FailureReason::kOther, e.what());
  } catch (const std::exception& e) {
    fail(500, FailureReason::kOther, std::string("internal error: ") + e.what());
  } catch (...) {
    fail(500, FailureReason::kOther, "internal error");
  }
}

void InferenceService::Control(const std::string& name, bool load, std::function<void(int, std::string)> done) {
  ValidateModelName(name);
  if (!options_.model_control) throw ServiceError(403, options_.control_refusal);
  auto answer = std::make_shared<std::function<void(int, std::string)>>(std::move(done));
  const bool scheduled = manager_.Schedule(name, [this, name, load, answer] {
    try {
      if (load) manager_.Load(name);
      else manager_.Unload(name);
      (*answer)(200, "");
    } catch (const InvalidArgumentError& e) {
      (*answer)(400, e.what());
    } catch (const std::exception& e) {
      (*answer)(400, std::string("failed to ") + (load ? "load" : "unload") + " model '" + name + "': " + e.what());
    }
  });
  if (!scheduled) throw ServiceError(503, "the server is shutting down");
}

std::vector<std::shared_ptr<ModelStats>> InferenceService::Stats(const std::string& name,
                                                                 const std::string& version) const {
  manager_.RefreshMemoryGauges();
  std::vector<std::shared_ptr<ModelStats>> out;
  if (name.empty()) {
    for (const auto& e : manager_.Index()) {
      for (int64_t v : e.versions) out.push_back(metrics_->Get(e.name, std::to_string(v)));
    }
    return out;
  }
  const ModelTarget t = Find(name, version);
  for (const auto& [v, s] : t.model->versions) {
    if (version.empty() || s == t.served) out.push_back(s->stats);
  }
  return out;
}

}  // namespace ferry::server
