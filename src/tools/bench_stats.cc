#include "tools/bench_stats.h"

#include <algorithm>
#include <cmath>
#include <cstdio>

#include "ferry/error.h"

namespace ferry::tools {

double PercentileNearestRank(std::span<const double> sorted, double p) {
  if (sorted.empty()) return 0;
  if (p <= 0) return sorted.front();
  const double rank = std::ceil(p / 100.0 * static_cast<double>(sorted.size()));
  const size_t index = rank < 1 ? 0 : static_cast<size_t>(rank) - 1;
  return sorted[std::min(index, sorted.size() - 1)];
}

std::string PercentileName(double p) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "p%g", p);
  return buf;
}

LatencyStats SummarizeLatencies(std::vector<double> samples, std::span<const double> percentiles) {
  LatencyStats s;
  s.count = samples.size();
  s.percentiles.assign(percentiles.size(), 0.0);
  if (samples.empty()) return s;
  std::sort(samples.begin(), samples.end());
  s.min = samples.front();
  s.max = samples.back();
  double sum = 0;
  for (double v : samples) sum += v;
  s.mean = sum / static_cast<double>(samples.size());
  if (samples.size() > 1) {
    double sq = 0;
    for (double v : samples) sq += (v - s.mean) * (v - s.mean);
    s.stddev = std::sqrt(sq / static_cast<double>(samples.size() - 1));
  }
  for (size_t i = 0; i < percentiles.size(); ++i) s.percentiles[i] = PercentileNearestRank(samples, percentiles[i]);
  return s;
}

std::optional<Knee> FindKnee(std::vector<CurvePoint> points, double threshold) {
  if (points.empty()) return std::nullopt;
  std::sort(points.begin(), points.end(), [](const CurvePoint& a, const CurvePoint& b) { return a.batch < b.batch; });
  for (size_t i = 1; i < points.size(); ++i) {
    if (points[i].batch == points[i - 1].batch) {
      throw InvalidArgumentError("knee: batch " + std::to_string(points[i].batch) + " appears twice in one sweep");
    }
  }
  Knee knee;
  knee.batch = points.front().batch;
  size_t knee_index = 0;
  size_t best = 0;  // index of the best throughput so far
  for (size_t i = 1; i < points.size(); ++i) {
    const double tp = points[i].throughput, base = points[best].throughput;
    const bool unbounded = base <= 0 && tp > 0;  // every smaller batch had zero throughput
    if (unbounded || (base > 0 && tp / base - 1 > threshold)) {
      knee.batch = points[i].batch;
      knee.reference_batch = points[best].batch;
      knee.gain = unbounded ? std::nullopt : std::optional<double>(tp / base - 1);
      knee_index = i;
    }
    if (tp > base) best = i;
  }
  knee.saturated = knee_index + 1 < points.size();
  return knee;
}

std::optional<CurvePoint> BestUnderLatency(std::span<const CurvePoint> points, double max_latency_ms) {
  std::optional<CurvePoint> best;
  for (const CurvePoint& p : points) {
    if (!(p.latency_ms <= max_latency_ms)) continue;
    if (!best || p.throughput > best->throughput || (p.throughput == best->throughput && p.batch < best->batch)) {
      best = p;
    }
  }
  return best;
}

}  // namespace ferry::tools
