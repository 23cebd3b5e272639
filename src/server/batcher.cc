#include "server/batcher.h"

#include <algorithm>

namespace ferry::server {

const char* FailureReasonName(FailureReason reason) {
  switch (reason) {
    case FailureReason::kNone: return "";
    case FailureReason::kRejected: return "REJECTED";
    case FailureReason::kCanceled: return "CANCELED";
    case FailureReason::kBackend: return "BACKEND";
    case FailureReason::kOther: return "OTHER";
  }
  return "OTHER";
}

BatchDecision DecideBatch(std::span<const QueuedView> queue, const BatchPolicy& policy, Clock::time_point now) {
  BatchDecision d;
  if (queue.empty()) return d;
  if (!policy.dynamic || policy.max_batch_size <= 1) {
    d.take = 1;
    return d;
  }
  // The prefix that can form one batch, and the batch size after each of its requests.
  std::vector<int64_t> sums;
  int64_t total = 0;
  bool blocked = false;  // a queued request cannot join: run what there is
  for (const auto& q : queue) {
    if (q.shape_key != queue.front().shape_key || total + q.batch_size > policy.max_batch_size) {
      blocked = true;
      break;
    }
    total += q.batch_size;
    sums.push_back(total);
  }
  if (sums.empty()) {  // the oldest alone exceeds max_batch_size (the transports refuse such requests)
    d.take = 1;
    return d;
  }
  const auto deadline = queue.front().arrival + policy.max_delay;
  const bool expired = now >= deadline;
  const int64_t largest_preferred = policy.preferred.empty() ? 0 : policy.preferred.back();
  const bool full = total >= policy.max_batch_size || (largest_preferred > 0 && total >= largest_preferred);
  if (!(full || blocked || expired)) {
    d.wait_until = deadline;
    return d;
  }
  d.take = sums.size();
  if (!expired && !policy.preferred.empty()) {
    // Cut at the largest preferred size the prefix reached exactly.
    for (size_t i = sums.size(); i-- > 0;) {
      if (std::binary_search(policy.preferred.begin(), policy.preferred.end(), sums[i])) {
        d.take = i + 1;
        break;
      }
    }
  }
  return d;
}

}  // namespace ferry::server
