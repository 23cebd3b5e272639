// The generated real models (exported at opset 17) converted to opsets 13, 18 and 21 (convert/opset_conversion.h,
// `ferry optimize --opset`): each converted model must still match PyTorch's outputs within the manifest's
// tolerance. Going to 13, LayerNormalization (the transformers) and HardSwish (SSDlite) are written out in older
// ops. Skips when the models are missing (see CMakeLists.txt here).
#include <gtest/gtest.h>

#include <cstdlib>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "convert/opset_conversion.h"
#include "ferry/error.h"
#include "ferry/session.h"
#include "ir/inline_functions.h"
#include "ir/onnx_export.h"
#include "ir/onnx_import.h"
#include "runtime/type_inference.h"
#include "tools/npy.h"
#include "tools/tensor_compare.h"

namespace ferry {
namespace {

std::string ModelsDir() {
  if (const char* v = std::getenv("FERRY_TEST_MODELS"); v && *v) return v;
  const char* build = std::getenv("FERRY_BUILD_DIR");
  return std::string(build && *build ? build : FERRY_BUILD_DIR) + "/test-models";
}

std::vector<std::string> Backends() {
  std::vector<std::string> out;
  const char* v = std::getenv("FERRY_TEST_BACKEND");
  std::string s = v && *v ? v : "cpu,ref";
  for (size_t start = 0; start <= s.size();) {
    size_t end = s.find(',', start);
    if (end == std::string::npos) end = s.size();
    if (end > start) out.push_back(s.substr(start, end - start));
    start = end + 1;
  }
  return out;
}

TEST(RealModelsOpsetConversion, ConvertedModelsMatchPyTorch) {
  const std::string dir = ModelsDir();
  std::ifstream in(dir + "/manifest.json");
  if (!in) GTEST_SKIP() << "no generated models in " << dir;
  const nlohmann::json manifest = nlohmann::json::parse(in);
  SessionOptions options;
  options.backends = Backends();
  options.optimization_level = 0;
  int checked = 0;
  for (const auto& m : manifest.at("models")) {
    const std::string mdir = dir + "/" + m.value("dir", m.at("name").get<std::string>());
    const std::string path = mdir + "/" + m.value("model", std::string("model.onnx"));
    std::vector<std::pair<std::string, Tensor>> feeds;
    for (const auto& i : m.at("inputs")) {
      feeds.emplace_back(i.at("name").get<std::string>(), tools::ReadNpy(mdir + "/" + i.at("file").get<std::string>()));
    }
    for (int64_t to : {13, 18, 21}) {
      SCOPED_TRACE(m.at("name").get<std::string>() + " -> opset " + std::to_string(to));
      auto model = ir::ImportModelFromFile(path);
      ir::InlineModelFunctions(*model);
      runtime::InferTypes(*model);
      try {
        convert::ConvertOpset(*model, to);
      } catch (const Error& e) {
        ADD_FAILURE() << e.what();
        continue;
      }
      runtime::InferTypes(*model);
      const std::string bytes = ir::ExportModelBytes(*model);
      auto session = Session::CreateFromBytes(
          std::span<const uint8_t>(reinterpret_cast<const uint8_t*>(bytes.data()), bytes.size()), options);
      const auto got = session->Run(feeds);
      const auto& outs = m.at("outputs");
      ASSERT_EQ(got.size(), outs.size());
      for (size_t k = 0; k < outs.size(); ++k) {
        const auto& tol = outs[k].contains("tolerance") ? outs[k].at("tolerance") : m.at("tolerance");
        const Tensor want = tools::ReadNpy(mdir + "/" + outs[k].at("file").get<std::string>());
        const std::string why =
            tools::CompareTensors(got[k].second, want, tools::Tolerance{tol.at("rtol").get<double>(),
                                                                        tol.at("atol").get<double>()});
        EXPECT_EQ(why, "") << "output " << got[k].first;
      }
      ++checked;
    }
  }
  std::cout << "[ converted ] " << checked << " model conversions match PyTorch\n";
}

}  // namespace
}  // namespace ferry
