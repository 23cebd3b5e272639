// The arithmetic of `ferry bench`: latency statistics (nearest-rank percentiles, mean, sample standard deviation)
// and the two readings of a batch sweep, the knee and the best batch under a latency bound. Pure functions.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <vector>

namespace ferry::tools {

// The p-th percentile (0 < p <= 100) of `sorted` (ascending) by the nearest-rank definition: the value at rank
// ceil(p/100 * n) (1-based), so it is always one of the samples; p <= 0 gives the minimum. 0 for no samples.
double PercentileNearestRank(std::span<const double> sorted, double p);

// "p50", "p99.9": the name of a percentile in JSON keys, CSV headers and table columns.
std::string PercentileName(double p);

struct LatencyStats {
  size_t count = 0;
  double mean = 0;
  double stddev = 0;  // sample standard deviation (n - 1 in the denominator); 0 for fewer than two samples
  double min = 0, max = 0;
  std::vector<double> percentiles;  // one per requested percentile, in the order requested
};

// Statistics of `samples` (any order) at `percentiles` (each in (0, 100]). All zero for no samples.
LatencyStats SummarizeLatencies(std::vector<double> samples, std::span<const double> percentiles);

// One point of a batch sweep: a batch size, its throughput and the latency the bound is checked against.
struct CurvePoint {
  int64_t batch = 0;
  double throughput = 0;  // inferences per second
  double latency_ms = 0;  // the chosen percentile of the request latency
};

// The knee of a batch sweep. Points are taken in ascending batch order (one per batch). The gain of point i > 0
// is throughput(i) / max(throughput(0..i-1)) - 1: over the best smaller batch, so that a dip followed by a
// recovery does not count as a gain (on a monotone curve this is the gain over the previous step). The knee is
// the largest batch whose gain exceeds `threshold`; when no step does (or there is one point) it is the
// smallest batch: batching did not pay beyond it.
struct Knee {
  int64_t batch = 0;
  // The knee's gain over the best smaller batch; absent when the knee is the smallest batch, or when every
  // smaller batch had zero throughput (the gain is then unbounded and counts as exceeding the threshold).
  std::optional<double> gain;
  int64_t reference_batch = 0;  // the smaller batch with the best throughput, the gain's base (knee > smallest)
  // True when a larger batch was measured past the knee (none of them gaining more than the threshold): the
  // curve flattened inside the sweep. False when the knee is the largest batch measured: the throughput was
  // still growing at the end of the sweep, so the real knee may lie beyond it.
  bool saturated = false;
};
// No knee (nullopt) for no points. Throws InvalidArgumentError for a repeated batch.
std::optional<Knee> FindKnee(std::vector<CurvePoint> points, double threshold);

// The point with the highest throughput whose latency_ms is at most `max_latency_ms` (ties: the smaller batch);
// nullopt when none is.
std::optional<CurvePoint> BestUnderLatency(std::span<const CurvePoint> points, double max_latency_ms);

}  // namespace ferry::tools
