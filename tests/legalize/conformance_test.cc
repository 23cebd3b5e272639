// The ONNX node tests of every op a decomposition rewrites, run with --legalize on a backend that has none of those
// ops (legalize_bare): the decomposed graphs must reproduce the tests' expected outputs wherever the ref kernel
// does. Cases a rule refuses (half precision, nonpad_kv_seqlen, ...) are listed, not failed.
#include <algorithm>
#include <filesystem>
#include <map>

#include "ferry/error.h"
#include "legalize_test_util.h"
#include "tools/onnx_test_case.h"

namespace ferry::legalize_test {
namespace {

namespace fs = std::filesystem;

// "" when every data set of `c` matches on a session with `o`, else why not; throws for a session that cannot be
// created.
std::string RunCase(const tools::OnnxTestCase& c, const SessionOptions& o) {
  auto session = Session::Create(c.dir + "/model.onnx", o);
  std::vector<fs::path> sets;
  for (const auto& e : fs::directory_iterator(c.dir)) {
    if (e.is_directory() && e.path().filename().string().rfind("test_data_set_", 0) == 0) sets.push_back(e.path());
  }
  std::sort(sets.begin(), sets.end());
  const tools::Tolerance tol{1e-3, 1e-5};
  for (const auto& set : sets) {
    std::vector<NamedValue> inputs;
    const auto& in = session->inputs();
    for (size_t k = 0; k < in.size() && fs::exists(set / ("input_" + std::to_string(k) + ".pb")); ++k) {
      inputs.emplace_back(in[k].name, tools::LoadPbValue((set / ("input_" + std::to_string(k) + ".pb")).string(),
                                                         in[k].kind));
    }
    const auto results = session->RunValues(inputs);
    for (size_t k = 0; k < results.size() && fs::exists(set / ("output_" + std::to_string(k) + ".pb")); ++k) {
      const Value want =
          tools::LoadPbValue((set / ("output_" + std::to_string(k) + ".pb")).string(), session->outputs()[k].kind);
      const std::string why = tools::CompareValues(results[k].second, want, tol);
      if (!why.empty()) return set.filename().string() + " output '" + results[k].first + "': " + why;
    }
  }
  return "";
}

TEST(LegalizeConformance, OnnxNodeTestsRunLegalizedOnABareBackend) {
  const fs::path root = fs::path(FERRY_SOURCE_DIR) / ".." / "shared" / "onnx-tests" / "node";
  if (!fs::is_directory(root)) GTEST_SKIP() << "no ONNX node tests at " << root;
  EnsureBareBackend();
  const std::vector<std::string> prefixes = {
      "test_layer_normalization", "test_rms_normalization", "test_group_normalization", "test_gelu",
      "test_hardswish",           "test_mish",              "test_softplus",            "test_rotary_embedding",
      "test_attention"};
  SessionOptions ref;
  ref.backends = {"ref"};
  ref.threads = 1;
  SessionOptions bare = On({kBare}, true, false);
  bare.threads = 1;
  int passed = 0;
  std::map<std::string, std::string> refused;
  for (const tools::OnnxTestCase& c : tools::ListOnnxTestCases(root.string())) {
    const bool ours = std::any_of(prefixes.begin(), prefixes.end(), [&](const std::string& p) {
      return c.name.rfind(p, 0) == 0;
    });
    if (!ours || c.name.find("_expanded") != std::string::npos) continue;
    try {
      if (!RunCase(c, ref).empty()) continue;  // what ref itself does not reproduce is not the rules' to match
    } catch (const Error&) {
      continue;
    }
    std::string why;
    try {
      why = RunCase(c, bare);
    } catch (const UnsupportedError& e) {
      refused[c.name] = e.what();
      continue;
    } catch (const Error& e) {
      why = e.what();
    }
    EXPECT_EQ(why, "") << c.name;
    passed += why.empty();
  }
  for (const auto& [name, why] : refused) {
    std::cout << "  not legalized: " << name << ": " << why.substr(why.find("node '")) << "\n";
  }
  std::cout << "  " << passed << " ONNX node tests pass legalized, " << refused.size() << " not legalized\n";
  EXPECT_GE(passed, 40);
}

}  // namespace
}  // namespace ferry::legalize_test
