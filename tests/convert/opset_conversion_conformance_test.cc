// The ONNX node tests of the ops the opset converter has adapters for (reductions, Split, Squeeze, Unsqueeze, Pad,
// Resize, Clip, Softmax & co., LayerNormalization, ...), converted to other opsets: every converted model must still
// reproduce the test's expected outputs on the ref backend (where the original does). Conversions the converter
// refuses (a non-constant axes input going below 18, antialias below 18, ...) are counted, not failed: the refusal
// message must name the node.
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <map>

#include "convert/opset_conversion.h"
#include "ferry/error.h"
#include "ferry/session.h"
#include "ir/onnx_export.h"
#include "ir/onnx_import.h"
#include "runtime/type_inference.h"
#include "tools/onnx_test_case.h"

namespace ferry {
namespace {

namespace fs = std::filesystem;

// "" when every data set of the case matches on `session`, else why not.
std::string RunCase(const tools::OnnxTestCase& c, const Session& session) {
  std::vector<fs::path> sets;
  for (const auto& e : fs::directory_iterator(c.dir)) {
    if (e.is_directory() && e.path().filename().string().rfind("test_data_set_", 0) == 0) sets.push_back(e.path());
  }
  std::sort(sets.begin(), sets.end());
  const tools::Tolerance tol{1e-3, 1e-5};
  for (const auto& set : sets) {
    std::vector<NamedValue> inputs;
    const auto& in = session.inputs();
    for (size_t k = 0; k < in.size() && fs::exists(set / ("input_" + std::to_string(k) + ".pb")); ++k) {
      inputs.emplace_back(in[k].name,
                          tools::LoadPbValue((set / ("input_" + std::to_string(k) + ".pb")).string(), in[k].kind));
    }
    const auto results = session.RunValues(inputs);
    for (size_t k = 0; k < results.size() && fs::exists(set / ("output_" + std::to_string(k) + ".pb")); ++k) {
      const Value want =
          tools::LoadPbValue((set / ("output_" + std::to_string(k) + ".pb")).string(), session.outputs()[k].kind);
      const std::string why = tools::CompareValues(results[k].second, want, tol);
      if (!why.empty()) return set.filename().string() + " output '" + results[k].first + "': " + why;
    }
  }
  return "";
}

SessionOptions RefOptions() {
  SessionOptions o;
  o.backends = {"ref"};
  o.threads = 1;
  o.optimization_level = 0;
  return o;
}

TEST(OpsetConversionConformance, ConvertedNodeTestsKeepTheirOutputs) {
  const fs::path root = fs::path(FERRY_SOURCE_DIR) / ".." / "shared" / "onnx-tests" / "node";
  if (!fs::is_directory(root)) GTEST_SKIP() << "no ONNX node tests at " << root;
  const std::vector<std::string> prefixes = {
      "test_reduce_",      "test_split",      "test_squeeze",     "test_unsqueeze", "test_pad",
      "test_constant_pad", "test_edge_pad",   "test_reflect_pad", "test_wrap_pad",  "test_resize_",
      "test_clip",         "test_softmax",    "test_logsoftmax",  "test_hardmax",   "test_upsample",
      "test_layer_norm",   "test_gelu",       "test_hardswish",   "test_mish",      "test_dropout",
      "test_batchnorm",    "test_group_norm", "test_slice",       "test_top_k",     "test_scatter"};
  int converted = 0, cases = 0;
  std::map<int64_t, int> refused_by_target;
  for (const tools::OnnxTestCase& c : tools::ListOnnxTestCases(root.string())) {
    const bool ours =
        std::any_of(prefixes.begin(), prefixes.end(), [&](const std::string& p) { return c.name.rfind(p, 0) == 0; });
    if (!ours) continue;
    std::unique_ptr<ir::Model> original;
    try {
      if (!RunCase(c, *Session::Create(c.dir + "/model.onnx", RefOptions())).empty()) continue;
      original = ir::ImportModelFromFile(c.dir + "/model.onnx");
    } catch (const Error&) {
      continue;  // what ref itself does not reproduce is not the converter's to match
    }
    ++cases;
    const int64_t from = original->opsets.count("") ? original->opsets.at("") : 0;
    for (int64_t to : {11, 13, 18, 21}) {
      if (to == from) continue;
      auto model = ir::ImportModelFromFile(c.dir + "/model.onnx");
      runtime::InferTypes(*model);
      try {
        convert::ConvertOpset(*model, to);
      } catch (const InvalidArgumentError& e) {
        ++refused_by_target[to];
        EXPECT_NE(std::string(e.what()).find("cannot be expressed in opset " + std::to_string(to)), std::string::npos)
            << c.name << " -> " << to << ": " << e.what();
        continue;
      }
      runtime::InferTypes(*model);
      const std::string bytes = ir::ExportModelBytes(*model);
      std::string why;
      try {
        auto session = Session::CreateFromBytes(
            std::span<const uint8_t>(reinterpret_cast<const uint8_t*>(bytes.data()), bytes.size()), RefOptions());
        why = RunCase(c, *session);
      } catch (const Error& e) {
        why = e.what();
      }
      EXPECT_EQ(why, "") << c.name << " converted from opset " << from << " to " << to;
      converted += why.empty();
    }
  }
  std::cout << "[ converted ] " << converted << " conversions of " << cases << " node tests reproduce the expected "
            << "outputs; refused:";
  for (const auto& [to, n] : refused_by_target) std::cout << " " << n << " to opset " << to << ";";
  std::cout << "\n";
  EXPECT_GT(converted, 300);
}

}  // namespace
}  // namespace ferry
