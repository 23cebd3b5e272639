// One inference request and its response, as the transports hand them to the scheduler (decoded and checked
// against the model's config: names, data types and shapes are known to be right).
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "ferry/tensor.h"

namespace ferry::server {

using Clock = std::chrono::steady_clock;

struct InferRequest {
  std::string id;
  std::vector<std::pair<std::string, Tensor>> inputs;
  std::vector<std::string> outputs;  // requested outputs by name; empty: all of the config's outputs
  int64_t batch_size = 1;            // dim 0 of every input when the model batches; else 1
  uint64_t timeout_us = 0;           // the request's own timeout (0: the model's default)
  // Set by the transport when the client goes away: a request still queued is then dropped.
  std::shared_ptr<std::atomic<bool>> cancelled = std::make_shared<std::atomic<bool>>(false);
};

// Why a request failed, as Triton's nv_inference_request_failure reason label names it.
enum class FailureReason { kNone, kRejected, kCanceled, kBackend, kOther };
const char* FailureReasonName(FailureReason reason);

struct InferResponse {
  int status = 200;  // HTTP status: 200, 400 (bad request), 404, 503 (queue full, timed out, unloading), 500
  FailureReason reason = FailureReason::kNone;
  std::string error;  // the message when status != 200
  bool timed_out = false;  // 503 because the request waited past its timeout (gRPC: DEADLINE_EXCEEDED)
  std::string model_version;
  std::vector<std::pair<std::string, Tensor>> outputs;

  static InferResponse Fail(int status, FailureReason reason, std::string message) {
    InferResponse r;
    r.status = status;
    r.reason = reason;
    r.error = std::move(message);
    return r;
  }
};

using InferCallback = std::function<void(InferResponse)>;

}  // namespace ferry::server
