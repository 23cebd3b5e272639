// `ferry optimize` without --target (portable mode) on the generated real models: every pass whose output is
// Ferry's own op does nothing without a backend, so the optimized model holds standard ONNX ops only (every
// graph, subgraphs included) and imports back. Skips when the models are missing (see CMakeLists.txt here).
#include <gtest/gtest.h>

#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <iostream>
#include <set>
#include <string>

#include "ir/onnx_export.h"
#include "ir/onnx_import.h"
#include "tools/optimize.h"

namespace fs = std::filesystem;

namespace ferry {
namespace {

std::string TestModelsDir() {
  if (const char* v = std::getenv("FERRY_TEST_MODELS"); v && *v) return v;
  const char* build = std::getenv("FERRY_BUILD_DIR");
#ifdef FERRY_BUILD_DIR
  return std::string(build && *build ? build : FERRY_BUILD_DIR) + "/test-models";
#else
  return std::string(build && *build ? build : "build") + "/test-models";
#endif
}

void CollectDomains(const ir::Graph& g, std::set<std::string>& out) {
  for (const auto& n : g.nodes()) {
    out.insert(n->domain());
    for (const ir::Graph* sub : n->subgraphs()) CollectDomains(*sub, out);
  }
}

TEST(RealModelsOptimize, PortableOutputHoldsStandardOnnxOpsOnly) {
  const std::string dir = TestModelsDir();
  std::vector<fs::path> models;
  std::error_code ec;
  for (const auto& entry : fs::directory_iterator(dir, ec)) {
    if (fs::is_regular_file(entry.path() / "model.onnx")) models.push_back(entry.path() / "model.onnx");
  }
  if (models.empty()) GTEST_SKIP() << "no generated models in " << dir;
  std::sort(models.begin(), models.end());
  const std::set<std::string> standard{"", "ai.onnx", "ai.onnx.ml", "ai.onnx.preview.training"};
  const std::string out = ::testing::TempDir() + "/ferry_portable_" + std::to_string(::getpid()) + ".onnx";
  for (const fs::path& model : models) {
    SCOPED_TRACE(model.string());
    tools::OptimizeResult r = tools::OptimizeModelFile(model.string(), tools::OptimizeOptions{});
    std::set<std::string> domains;
    CollectDomains(*r.model->graph, domains);
    for (const std::string& d : domains) EXPECT_TRUE(standard.count(d)) << "domain '" << d << "'";
    for (const auto& [domain, version] : r.model->opsets) EXPECT_TRUE(standard.count(domain)) << domain;
    tools::WriteOptimizedModel(r, out);
    auto back = ir::ImportModelFromFile(out);
    EXPECT_EQ(back->graph->nodes().size(), r.model->graph->nodes().size());
    std::cout << model.parent_path().filename().string() << ": " << r.nodes_before << " -> " << r.nodes_after
              << " nodes, passes " << r.optimize_ms << " ms\n";
  }
  fs::remove(out, ec);
}

}  // namespace
}  // namespace ferry
