// Conformance results: JSON, the docs/conformance.md summary, and the expected-failure ratchet.
#pragma once

#include <map>
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
  int opset = 0;  // the model's default-domain opset (0: none or unreadable)
};

void WriteConformanceJson(const std::string& path, const std::string& backends, const std::vector<CaseResult>& results);
// The expected-failure list at `path`: case id -> its reason (the text after '#'). Throws InvalidArgumentError
// naming the path when it cannot be read.
std::map<std::string, std::string> ReadExpectedFailures(const std::string& path);

// Deterministic summary (no timings): totals per category, per opset band of the case's model, and per op, then
// every failing case with its reason — the reason from `reasons` (the expected-failure list) when it has one,
// else the run's failure message.
std::string ConformanceMarkdown(const std::string& backends, const std::vector<CaseResult>& results,
                                const std::map<std::string, std::string>& reasons = {});
void WriteConformanceMarkdown(const std::string& path, const std::string& backends,
                              const std::vector<CaseResult>& results,
                              const std::map<std::string, std::string>& reasons = {});

// Expected-failure list: one "category/name  # reason" per line; '#' starts a comment, blank lines ignored.
// Rewriting a list keeps the reason already written for a case that still fails (reasons are edited by hand to
// say why a case cannot pass); a newly failing case gets the run's failure message.
void WriteExpectedFailures(const std::string& path, const std::string& backends,
                           const std::vector<CaseResult>& results);

struct RatchetVerdict {
  std::vector<std::string> regressions;  // failed, not listed: "id: reason"
  std::vector<std::string> stale;        // listed, ran, passed
};
// Only cases present in `results` are judged, so a filtered run checks its subset.
RatchetVerdict CheckExpectedFailures(const std::string& path, const std::vector<CaseResult>& results);

}  // namespace ferry::tools
