// Conformance results: JSON, the docs/conformance.md summary, and the expected-failure ratchet.
#pragma once

#include <string>
#include <vector>

#include "tools/onnx_test_case.h"

namespace ferry::tools {

struct CaseResult {
  OnnxTestCase test;
  std::string status;  // "pass" or "fail"
  std::string reason;
  double seconds = 0;
  std::vector<std::string> ops;
};

void WriteConformanceJson(const std::string& path, const std::string& backends, const std::vector<CaseResult>& results);
// Deterministic summary (no timings): totals per category and a per-op table.
std::string ConformanceMarkdown(const std::string& backends, const std::vector<CaseResult>& results);
void WriteConformanceMarkdown(const std::string& path, const std::string& backends,
                              const std::vector<CaseResult>& results);

// Expected-failure list: one "category/name  # reason" per line; '#' starts a comment, blank lines ignored.
void WriteExpectedFailures(const std::string& path, const std::string& backends,
                           const std::vector<CaseResult>& results);

struct RatchetVerdict {
  std::vector<std::string> regressions;  // failed, not listed: "id: reason"
  std::vector<std::string> stale;        // listed, ran, passed
};
// Only cases present in `results` are judged, so a filtered run checks its subset.
RatchetVerdict CheckExpectedFailures(const std::string& path, const std::vector<CaseResult>& results);

}  // namespace ferry::tools
