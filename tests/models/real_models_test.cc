// End-to-end tests on real models: each model exported from PyTorch by scripts/gen_test_models.py runs through
// ferry::Session and its outputs are compared with PyTorch's. Only the public API (ferry/session.h) is used.
//
// Environment:
//   FERRY_TEST_MODELS   the generated models directory (default: $FERRY_BUILD_DIR/test-models); the tests skip
//                       when it (or its manifest.json) is missing
//   FERRY_TEST_BACKEND  comma-separated backend list for the Session (default: ref)
//   FERRY_TEST_OPT_LEVEL the graph optimization level (default: the session's default): ctest runs the cpu
//                       backend at every level, so each level's graph matches PyTorch within the model's tolerance
//   FERRY_SOURCE_DIR    the source tree, for models/quickstart_cnn.onnx (default: the configure-time path)
//
// One test per manifest entry is registered at startup (RealModels.<name>), so ctest's log and --gtest_filter show
// each model by name. Every test prints the session create / run times and, per output, the max abs error (also
// relative to the output's largest magnitude) and the max elementwise relative error over elements larger than atol.
#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <limits>
#include <memory>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include <nlohmann/json.hpp>

#include "ferry/float16.h"
#include "ferry/session.h"
#include "tools/npy.h"

namespace fs = std::filesystem;

namespace ferry {
namespace {

std::string Env(const char* name, const std::string& fallback) {
  const char* v = std::getenv(name);
  return v && *v ? std::string(v) : fallback;
}

std::string SourceDir() {
#ifdef FERRY_SOURCE_DIR
  return Env("FERRY_SOURCE_DIR", FERRY_SOURCE_DIR);
#else
  return Env("FERRY_SOURCE_DIR", ".");
#endif
}

std::string ModelsDir() {
#ifdef FERRY_BUILD_DIR
  std::string build = Env("FERRY_BUILD_DIR", FERRY_BUILD_DIR);
#else
  std::string build = Env("FERRY_BUILD_DIR", "build");
#endif
  return Env("FERRY_TEST_MODELS", build + "/test-models");
}

SessionOptions TestOptions() {
  SessionOptions options;
  options.backends.clear();
  std::stringstream list(Env("FERRY_TEST_BACKEND", "ref"));
  for (std::string b; std::getline(list, b, ',');) {
    if (!b.empty()) options.backends.push_back(b);
  }
  if (const std::string level = Env("FERRY_TEST_OPT_LEVEL", ""); !level.empty()) {
    options.optimization_level = std::stoi(level);
  }
  return options;
}

double Seconds(std::chrono::steady_clock::time_point since) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - since).count();
}

// ---- comparison ----

// Element i of a numeric tensor as double (NaN for types this test does not compare numerically).
double ElementAsDouble(const Tensor& t, int64_t i) {
  switch (t.dtype()) {
    case DataType::kFloat: return t.data<float>()[i];
    case DataType::kDouble: return t.data<double>()[i];
    case DataType::kFloat16: return static_cast<float>(t.data<Float16>()[i]);
    case DataType::kBFloat16: return static_cast<float>(t.data<BFloat16>()[i]);
    case DataType::kInt8: return t.data<int8_t>()[i];
    case DataType::kInt16: return t.data<int16_t>()[i];
    case DataType::kInt32: return t.data<int32_t>()[i];
    case DataType::kInt64: return static_cast<double>(t.data<int64_t>()[i]);
    case DataType::kUint8: return t.data<uint8_t>()[i];
    case DataType::kBool: return t.data<uint8_t>()[i] != 0;
    case DataType::kUint16: return t.data<uint16_t>()[i];
    case DataType::kUint32: return t.data<uint32_t>()[i];
    case DataType::kUint64: return static_cast<double>(t.data<uint64_t>()[i]);
    default: return std::numeric_limits<double>::quiet_NaN();
  }
}

struct Comparison {
  bool ok = true;
  std::string problem;  // shape/dtype mismatch, or the worst element
  double max_abs = 0;    // max |got - want|
  double max_rel = 0;    // max |got - want| / |want| over elements with |want| > atol (near-zero ones are atol's job)
  double max_want = 0;   // max |want|, so max_abs / max_want is the error relative to the output's scale
  int64_t mismatches = 0;
};

// Passes when every element satisfies |got - want| <= atol + rtol * |want| (numpy.allclose), NaN matching NaN.
Comparison Compare(const Tensor& got, const Tensor& want, double atol, double rtol) {
  Comparison c;
  if (got.shape() != want.shape()) {
    c.ok = false;
    c.problem = "shape " + ShapeToString(got.shape()) + ", expected " + ShapeToString(want.shape());
    return c;
  }
  // The one allowed dtype difference: .npy has no bfloat16, so an expected bfloat16 output is stored as float32.
  bool widened = got.dtype() == DataType::kBFloat16 && want.dtype() == DataType::kFloat;
  if (got.dtype() != want.dtype() && !widened) {
    c.ok = false;
    c.problem = "dtype " + std::string(DataTypeName(got.dtype())) + ", expected " +
                std::string(DataTypeName(want.dtype()));
    return c;
  }
  if (got.dtype() == DataType::kString) {
    for (int64_t i = 0; i < got.size(); ++i) {
      if (got.strings()[i] != want.strings()[i]) {
        if (c.mismatches++ == 0) c.problem = "element " + std::to_string(i) + ": '" + got.strings()[i] + "' vs '" +
                                             want.strings()[i] + "'";
        c.ok = false;
      }
    }
    return c;
  }
  double worst_excess = -1;
  for (int64_t i = 0; i < got.size(); ++i) {
    double g = ElementAsDouble(got, i), w = ElementAsDouble(want, i);
    if (std::isnan(g) && std::isnan(w)) continue;
    double diff = std::abs(g - w);
    if (std::isnan(diff)) diff = std::numeric_limits<double>::infinity();  // NaN vs number, or inf - inf
    if (g == w) diff = 0;                                                   // equal infinities
    c.max_abs = std::max(c.max_abs, diff);
    if (std::isfinite(w)) c.max_want = std::max(c.max_want, std::abs(w));
    if (std::abs(w) > atol && std::abs(w) > 0) c.max_rel = std::max(c.max_rel, diff / std::abs(w));
    double allowed = atol + rtol * std::abs(w);
    if (!(diff <= allowed)) {
      ++c.mismatches;
      c.ok = false;
      if (diff - allowed > worst_excess) {
        worst_excess = diff - allowed;
        std::ostringstream s;
        s.precision(9);
        s << "worst element " << i << ": got " << g << ", expected " << w << " (|diff| " << diff << " > " << allowed
          << ")";
        c.problem = s.str();
      }
    }
  }
  return c;
}

// ---- the manifest ----

struct IoSpec {
  std::string name;
  std::string file;
  double atol = 0, rtol = 0;  // outputs only
};

struct ModelSpec {
  std::string name;
  std::string dir;
  std::string model;
  std::vector<IoSpec> inputs, outputs;
  double atol = 0, rtol = 0;
  std::string why;
};

std::vector<ModelSpec> LoadManifest(const std::string& models_dir) {
  std::string path = models_dir + "/manifest.json";
  std::ifstream in(path);
  if (!in) return {};
  nlohmann::json j = nlohmann::json::parse(in);
  std::vector<ModelSpec> specs;
  for (const auto& m : j.at("models")) {
    ModelSpec s;
    s.name = m.at("name").get<std::string>();
    s.dir = models_dir + "/" + m.value("dir", s.name);
    s.model = s.dir + "/" + m.value("model", std::string("model.onnx"));
    const auto& tol = m.at("tolerance");
    s.atol = tol.at("atol").get<double>();
    s.rtol = tol.at("rtol").get<double>();
    s.why = tol.value("why", std::string());
    for (const auto& i : m.at("inputs")) {
      s.inputs.push_back({i.at("name").get<std::string>(), s.dir + "/" + i.at("file").get<std::string>()});
    }
    for (const auto& o : m.at("outputs")) {
      IoSpec io{o.at("name").get<std::string>(), s.dir + "/" + o.at("file").get<std::string>(), s.atol, s.rtol};
      if (o.contains("tolerance")) {
        io.atol = o["tolerance"].at("atol").get<double>();
        io.rtol = o["tolerance"].at("rtol").get<double>();
      }
      s.outputs.push_back(io);
    }
    specs.push_back(std::move(s));
  }
  return specs;
}

std::string Fmt(double v) {
  char buf[32];
  std::snprintf(buf, sizeof(buf), "%.3g", v);
  return buf;
}

// ---- the per-model test ----

class RealModelTest : public testing::Test {
 public:
  explicit RealModelTest(ModelSpec spec) : spec_(std::move(spec)) {}

  void TestBody() override {
    std::vector<NamedValue> feed;
    for (const auto& in : spec_.inputs) feed.emplace_back(in.name, Value(tools::ReadNpy(in.file)));

    auto t0 = std::chrono::steady_clock::now();
    std::unique_ptr<Session> session;
    try {
      session = Session::Create(spec_.model, TestOptions());
    } catch (const Error& e) {
      FAIL() << spec_.name << ": Session::Create failed [" << ErrorCategoryName(e.category()) << "]: " << e.what();
    }
    double create_s = Seconds(t0);

    t0 = std::chrono::steady_clock::now();
    std::vector<NamedValue> results;
    try {
      results = session->RunValues(feed);
    } catch (const Error& e) {
      FAIL() << spec_.name << ": Run failed [" << ErrorCategoryName(e.category()) << "]: " << e.what();
    }
    double run_s = Seconds(t0);
    std::cout << "[ model    ] " << spec_.name << ": create " << Fmt(create_s) << " s, run " << Fmt(run_s)
              << " s (backends " << Env("FERRY_TEST_BACKEND", "ref") << ", level "
              << Env("FERRY_TEST_OPT_LEVEL", "default") << ")\n";

    for (const auto& out : spec_.outputs) {
      auto it = std::find_if(results.begin(), results.end(), [&](const NamedValue& r) { return r.first == out.name; });
      if (it == results.end()) {
        ADD_FAILURE() << spec_.name << ": output '" << out.name << "' missing from the results";
        continue;
      }
      if (!it->second.is_tensor()) {
        ADD_FAILURE() << spec_.name << ": output '" << out.name << "' is not a tensor";
        continue;
      }
      Tensor want = tools::ReadNpy(out.file);
      Comparison c = Compare(it->second.tensor(), want, out.atol, out.rtol);
      std::cout << "[ model    ]   " << out.name << " " << ShapeToString(want.shape()) << ": max abs err "
                << Fmt(c.max_abs) << " (" << Fmt(c.max_want > 0 ? c.max_abs / c.max_want : 0) << " of max |want| "
                << Fmt(c.max_want) << "), max rel err " << Fmt(c.max_rel) << " (atol " << Fmt(out.atol) << ", rtol "
                << Fmt(out.rtol) << ") " << (c.ok ? "ok" : "FAIL") << "\n";
      EXPECT_TRUE(c.ok) << spec_.name << ": output '" << out.name << "': " << c.problem << "; " << c.mismatches
                        << " of " << want.size() << " elements outside tolerance (atol " << out.atol << ", rtol "
                        << out.rtol << ": " << spec_.why << ")";
    }
    std::cout.flush();
  }

 private:
  ModelSpec spec_;
};

void RegisterModelTests() {
  std::string dir = ModelsDir();
  std::vector<ModelSpec> specs;
  std::string problem;
  if (!fs::exists(dir + "/manifest.json")) {
    problem = "no generated models at " + dir + " (run /usr/bin/python3 scripts/gen_test_models.py " + dir +
              ", or set FERRY_TEST_MODELS)";
  } else {
    try {
      specs = LoadManifest(dir);
      if (specs.empty()) problem = dir + "/manifest.json lists no models";
    } catch (const std::exception& e) {
      problem = dir + "/manifest.json: " + e.what();
    }
  }
  if (specs.empty()) {
    testing::RegisterTest("RealModels", "GeneratedModels", nullptr, nullptr, __FILE__, __LINE__,
                          [problem]() -> testing::Test* {
                            struct Skip : testing::Test {
                              std::string why;
                              explicit Skip(std::string w) : why(std::move(w)) {}
                              void TestBody() override { GTEST_SKIP() << why; }
                            };
                            return new Skip(problem);
                          });
    return;
  }
  for (const auto& spec : specs) {
    testing::RegisterTest("RealModels", spec.name.c_str(), nullptr, nullptr, __FILE__, __LINE__,
                          [spec]() -> testing::Test* { return new RealModelTest(spec); });
  }
}

// ---- concurrency on the quick-start CNN shipped in the repo ----

TEST(RealModelsConcurrency, FourThreadsOneSessionMatchSingleThreadedBitwise) {
  std::string model = SourceDir() + "/models/quickstart_cnn.onnx";
  if (!fs::exists(model)) GTEST_SKIP() << model << " not found (set FERRY_SOURCE_DIR)";
  std::unique_ptr<Session> session;
  try {
    session = Session::Create(model, TestOptions());
  } catch (const Error& e) {
    FAIL() << "Session::Create failed: " << e.what();
  }
  ASSERT_EQ(session->inputs().size(), 1u);
  const std::string input_name = session->inputs()[0].name;

  // The shipped input, checked against PyTorch, plus scaled variants so each thread computes something different
  // (a cross-thread mix-up of buffers would then show).
  Tensor base = tools::ReadNpy(SourceDir() + "/models/quickstart_cnn_input.npy");
  Tensor expected = tools::ReadNpy(SourceDir() + "/models/quickstart_cnn_expected.npy");
  constexpr int kThreads = 4;
  constexpr int kRunsPerThread = 6;
  std::vector<Tensor> inputs;
  for (int k = 0; k < kThreads; ++k) {
    Tensor x = base.Clone();
    for (int64_t i = 0; i < x.size(); ++i) x.data<float>()[i] *= 1.0f + 0.25f * static_cast<float>(k);
    inputs.push_back(x);
  }
  std::vector<Tensor> reference;
  for (const Tensor& x : inputs) {
    auto out = session->Run(std::vector<std::pair<std::string, Tensor>>{{input_name, x}});
    ASSERT_EQ(out.size(), 1u);
    reference.push_back(out[0].second);
  }
  Comparison vs_torch = Compare(reference[0], expected, 1e-4, 1e-4);
  std::cout << "[ model    ] quickstart_cnn vs PyTorch: max abs err " << Fmt(vs_torch.max_abs) << ", max rel err "
            << Fmt(vs_torch.max_rel) << "\n";
  EXPECT_TRUE(vs_torch.ok) << vs_torch.problem;

  std::atomic<int> failures{0};
  std::vector<std::string> errors(kThreads);
  std::vector<std::thread> threads;
  for (int k = 0; k < kThreads; ++k) {
    threads.emplace_back([&, k]() {
      try {
        for (int r = 0; r < kRunsPerThread; ++r) {
          int which = (k + r) % kThreads;  // threads run different inputs at the same time
          auto out = session->Run(std::vector<std::pair<std::string, Tensor>>{{input_name, inputs[which]}});
          const Tensor& got = out.at(0).second;
          const Tensor& want = reference[which];
          if (got.shape() != want.shape() || got.dtype() != want.dtype() ||
              std::memcmp(got.raw_data(), want.raw_data(), want.nbytes()) != 0) {
            errors[k] = "run " + std::to_string(r) + " on input " + std::to_string(which) +
                        " differs from the single-threaded result";
            ++failures;
            return;
          }
        }
      } catch (const std::exception& e) {
        errors[k] = e.what();
        ++failures;
      }
    });
  }
  for (auto& t : threads) t.join();
  for (int k = 0; k < kThreads; ++k) EXPECT_TRUE(errors[k].empty()) << "thread " << k << ": " << errors[k];
  EXPECT_EQ(failures.load(), 0);
}

}  // namespace
}  // namespace ferry

int main(int argc, char** argv) {
  testing::InitGoogleTest(&argc, argv);
  ferry::RegisterModelTests();
  return RUN_ALL_TESTS();
}
