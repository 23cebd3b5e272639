// Text and JSON renderings of `ferry compare`'s reports.
#pragma once

#include <nlohmann/json.hpp>
#include <string>

#include "tools/compare.h"
#include "tools/compare_bisect.h"
#include "tools/compare_layerwise.h"
#include "tools/compare_ops.h"

namespace ferry::tools {

nlohmann::json StatsJson(const ErrorStats& s);
nlohmann::json OutputReportJson(const OutputReport& r);
nlohmann::json LayerwiseJson(const LayerwiseReport& r);
nlohmann::json BisectJson(const BisectResult& r);
nlohmann::json OpsJson(const OpsReport& r);

// A table of the outputs: max abs/rel and mean abs error, cosine, worst element, NaN/Inf counts, result.
std::string FormatOutputReport(const OutputReport& r);
// The first divergence (node, op, its inputs' errors, introduced or inherited) and a short error table.
std::string FormatLayerwise(const LayerwiseReport& r);
std::string FormatBisect(const BisectResult& r, const CompareConfig& a,
                         const CompareConfig& b);
std::string FormatOps(const OpsReport& r);

// "|a-b| <= 0.0001 + 0.001*|b|"
std::string ToleranceText(const CompareTolerance& t);

}  // namespace ferry::tools
