// Custom-op plugins through the C ABI: the test plugins of tests/plugins/ (built into build/lib) loaded by a
// session and by `ferry check`; every bad-plugin case gives an InvalidArgumentError naming the plugin path (and
// the op where one is at fault) and leaves the process usable.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <thread>

#include "backends/backend.h"
#include "backends/plugin/plugin_loader.h"
#include "ferry/error.h"
#include "ferry/session.h"
#include "testing/model_builder.h"
#include "tools/check.h"
#include "tools/ops_matrix.h"

namespace ferry {
namespace {

using ferry::testing::ModelBuilder;

std::string Lib(const std::string& name) { return std::string(FERRY_BUILD_DIR) + "/lib/lib" + name + ".so"; }
const std::string kOps = "ferry_test_ops";

bool Contains(const std::string& s, const std::string& part) { return s.find(part) != std::string::npos; }

// One node of com.ferry.test::`op` on x (float32 or float16 [2,3]); the domain imported at `opset`.
std::string OneNodeModel(const std::string& op, int64_t opset = 1, int32_t dtype = onnx::TensorProto::FLOAT,
                         int64_t k = 0) {
  ModelBuilder b;
  auto* d = b.proto().add_opset_import();
  d->set_domain("com.ferry.test");
  d->set_version(opset);
  b.Input("x", dtype, {2, 3});
  auto* out = b.graph().add_output();
  out->set_name("y");
  out->mutable_type()->mutable_tensor_type()->set_elem_type(dtype);
  auto& n = b.Node(op, {"x"}, {"y"}, "n");
  n.set_domain("com.ferry.test");
  if (k != 0) ModelBuilder::IntAttr(n, "k", k);
  return b.Bytes();
}

std::unique_ptr<Session> Create(const std::string& bytes, std::vector<std::string> plugins = {Lib(kOps)}) {
  SessionOptions o;
  o.threads = 1;
  o.plugins = std::move(plugins);
  return Session::CreateFromBytes({reinterpret_cast<const uint8_t*>(bytes.data()), bytes.size()}, o);
}

Tensor X() {
  Tensor t(DataType::kFloat, {2, 3});
  for (int i = 0; i < 6; ++i) t.data<float>()[i] = static_cast<float>(i) - 2.5f;
  return t;
}

template <typename E>
std::string ErrorOf(const std::function<void()>& f) {
  try {
    f();
  } catch (const E& e) {
    return e.what();
  } catch (const std::exception& e) {
    return std::string("wrong exception type: ") + e.what();
  }
  return "no exception";
}

TEST(Plugin, RunsACustomOpPlacedAsNative) {
  auto s = Create(OneNodeModel("AddOne"));
  ASSERT_EQ(s->placement().nodes.size(), 1u);
  const NodePlacementInfo& n = s->placement().nodes[0];
  EXPECT_EQ(n.backend, kOps);
  EXPECT_EQ(n.kind, "native");
  EXPECT_EQ(n.reason, "custom op of plugin " + kOps);
  EXPECT_EQ(s->placement().backends, (std::vector<std::string>{"cpu", "ref", kOps}));  // appended
  auto out = s->Run({{"x", X()}});
  const Tensor& y = out[0].second;
  ASSERT_EQ(y.shape(), (Shape{2, 3}));
  for (int i = 0; i < 6; ++i) EXPECT_FLOAT_EQ(y.data<float>()[i], static_cast<float>(i) - 1.5f);
  // infer_shapes gave the output its shape before any run.
  EXPECT_EQ(s->outputs()[0].dims, (std::vector<int64_t>{2, 3}));
}

TEST(Plugin, ConcurrentRunsShareOneKernel) {
  auto s = Create(OneNodeModel("AddOne"));
  std::vector<std::thread> threads;
  std::atomic<int> ok{0};
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&] {
      for (int i = 0; i < 50; ++i) ok += s->Run({{"x", X()}})[0].second.data<float>()[5] == 3.5f;
    });
  }
  for (auto& t : threads) t.join();
  EXPECT_EQ(ok, 200);
}

TEST(Plugin, LoadingTwiceGivesTheSameBackend) {
  const Backend& a = LoadPlugin(Lib(kOps));
  const Backend& b = LoadPlugin(std::filesystem::path(Lib(kOps)).parent_path().string() + "/../lib/lib" + kOps + ".so");
  EXPECT_EQ(&a, &b);
  EXPECT_EQ(FindBackend(kOps), &a);
  EXPECT_TRUE(a.is_plugin());
}

TEST(Plugin, ComputeErrorNamesPluginNodeAndOpAndTheSessionStaysUsable) {
  auto s = Create(OneNodeModel("FailCompute"));
  for (int i = 0; i < 2; ++i) {
    const std::string e = ErrorOf<InvalidArgumentError>([&] { s->Run({{"x", X()}}); });
    EXPECT_TRUE(Contains(e, "node 'n' (com.ferry.test::FailCompute)")) << e;
    EXPECT_TRUE(Contains(e, Lib(kOps))) << e;
    EXPECT_TRUE(Contains(e, "compute failed (FERRY_INVALID_ARGUMENT): FailCompute always fails: input has 6 elements"))
        << e;
  }
  EXPECT_NO_THROW(Create(OneNodeModel("AddOne"))->Run({{"x", X()}}));
}

TEST(Plugin, CreateErrorFailsSessionCreation) {
  const std::string e = ErrorOf<InvalidArgumentError>([&] { Create(OneNodeModel("FailCreate")); });
  EXPECT_TRUE(Contains(e, "create failed (FERRY_INVALID_ARGUMENT): attribute 'k' must be positive, got 0")) << e;
  EXPECT_TRUE(Contains(e, "com.ferry.test::FailCreate")) << e;
  // With a valid attribute, create succeeds and the state is destroyed with the session (LSan checks that).
  auto s = Create(OneNodeModel("FailCreate", 1, onnx::TensorProto::FLOAT, 3));
  EXPECT_FLOAT_EQ(s->Run({{"x", X()}})[0].second.data<float>()[0], -2.5f);
}

TEST(Plugin, DtypeAndVersionMismatchesSayExactlyWhat) {
  // float32 into an op the plugin has for float16 only: kernel layer, both type lists named.
  std::string e = ErrorOf<UnsupportedError>([&] { Create(OneNodeModel("Fp16Only")); });
  EXPECT_TRUE(Contains(e, "input 'x' has type float32")) << e;
  EXPECT_TRUE(Contains(e, "T in {float16}")) << e;
  EXPECT_TRUE(Contains(e, kOps)) << e;
  EXPECT_NO_THROW(Create(OneNodeModel("Fp16Only", 1, onnx::TensorProto::FLOAT16)));

  // Versioned exists for opsets 2-3 of com.ferry.test.
  e = ErrorOf<InvalidModelError>([&] { Create(OneNodeModel("Versioned", 1)); });
  EXPECT_TRUE(Contains(e, "its first version is 2")) << e;
  EXPECT_NO_THROW(Create(OneNodeModel("Versioned", 3)));
  e = ErrorOf<UnsupportedError>([&] { Create(OneNodeModel("Versioned", 4)); });
  EXPECT_TRUE(Contains(e, "implements Versioned for opsets 2-3, not opset 4")) << e;

  // An attribute the op does not declare: graph layer.
  {
    ModelBuilder b;
    auto* d = b.proto().add_opset_import();
    d->set_domain("com.ferry.test");
    d->set_version(1);
    b.Input("x", onnx::TensorProto::FLOAT, {2}).Output("y", onnx::TensorProto::FLOAT, {2});
    auto& n = b.Node("AddOne", {"x"}, {"y"}, "n");
    n.set_domain("com.ferry.test");
    ModelBuilder::IntAttr(n, "foo", 1);
    e = ErrorOf<InvalidModelError>([&] { Create(b.Bytes()); });
    EXPECT_TRUE(Contains(e, "unknown attribute 'foo'")) << e;
  }

  // An op name the plugin does not have: graph layer.
  e = ErrorOf<InvalidModelError>([&] { Create(OneNodeModel("AddTwo")); });
  EXPECT_TRUE(Contains(e, "unknown op com.ferry.test::AddTwo")) << e;
}

TEST(Plugin, WithoutThePluginTheRemedyNamesPluginFlag) {
  const std::string path = ::testing::TempDir() + "/ferry_plugin_remedy.onnx";
  std::ofstream(path, std::ios::binary) << OneNodeModel("Correlate", 1);
  tools::CheckReport r = tools::CheckModel(path, {});
  ASSERT_EQ(r.nodes.size(), 1u);
  EXPECT_EQ(r.nodes[0].verdict, tools::Verdict::kUnsupported);
  EXPECT_EQ(r.nodes[0].layer, FailureLayer::kGraph);
  EXPECT_TRUE(Contains(r.nodes[0].remedy, "--plugin")) << r.nodes[0].remedy;
  const std::string e = ErrorOf<InvalidModelError>([&] { Session::Create(path); });
  EXPECT_TRUE(Contains(e, "--plugin PATH")) << e;
}

TEST(Plugin, CheckAndOpsSeeThePlugin) {
  const std::string path = ::testing::TempDir() + "/ferry_plugin_check.onnx";
  std::ofstream(path, std::ios::binary) << OneNodeModel("AddOne");
  tools::CheckOptions o;
  o.plugins = {Lib(kOps)};
  tools::CheckReport r = tools::CheckModel(path, o);
  ASSERT_EQ(r.nodes.size(), 1u);
  EXPECT_EQ(r.nodes[0].verdict, tools::Verdict::kNative);
  EXPECT_EQ(r.nodes[0].backend, kOps);
  EXPECT_EQ(r.backends, (std::vector<std::string>{"cpu", "ref", kOps}));

  tools::OpsFilter filter;
  filter.backend = kOps;
  filter.domain = "com.ferry.test";
  tools::OpsMatrix m = tools::BuildOpsMatrix(filter);
  std::vector<std::string> ops;
  for (const auto& e : m.ops) {
    ops.push_back(e.op);
    ASSERT_EQ(e.support.size(), 1u);
    EXPECT_TRUE(e.support[0].complete) << e.op;
  }
  EXPECT_EQ(ops, (std::vector<std::string>{"AddOne", "FailCompute", "FailCreate", "Fp16Only", "Versioned"}));
}

// ---- bad plugins -------------------------------------------------------------------------------------------

TEST(Plugin, BadPluginsGiveClearErrorsAndRegisterNothing) {
  const std::string text = ::testing::TempDir() + "/libferry_not_a_library.so";
  std::ofstream(text) << "this is not an ELF file\n";
  struct Case {
    std::string path;
    std::vector<std::string> parts;
  };
  const std::vector<Case> cases = {
      {::testing::TempDir() + "/libferry_missing.so", {"no such file"}},
      {::testing::TempDir(), {"not a regular file"}},
      {text, {"could not be loaded as a shared library"}},
      {Lib("ferry_test_bad_abi"), {"built for Ferry plugin ABI 999", "this Ferry speaks ABI 1", "rebuild"}},
      {Lib("ferry_test_no_init"), {"does not export FerryPluginInit"}},
      {Lib("ferry_test_duplicate_op"), {"op com.ferry.test::Twice versions 1+ is registered twice"}},
      {Lib("ferry_test_init_fails"), {"FerryPluginInit returned status 5"}},
  };
  for (const Case& c : cases) {
    const std::string e = ErrorOf<InvalidArgumentError>([&] { LoadPlugin(c.path); });
    EXPECT_TRUE(Contains(e, "plugin '" + c.path + "'")) << e;
    for (const auto& part : c.parts) EXPECT_TRUE(Contains(e, part)) << c.path << ": " << e;
    // The same error through a session, and nothing registered.
    SessionOptions o;
    o.plugins = {c.path};
    const std::string bytes = OneNodeModel("Twice");
    EXPECT_THROW(Session::CreateFromBytes({reinterpret_cast<const uint8_t*>(bytes.data()), bytes.size()}, o),
                 InvalidArgumentError);
  }
  EXPECT_EQ(FindBackend("ferry_test_duplicate_op"), nullptr);
  EXPECT_EQ(FindBackend("ferry_test_bad_abi"), nullptr);
  // A good plugin still loads afterwards.
  EXPECT_NO_THROW(Create(OneNodeModel("AddOne"))->Run({{"x", X()}}));
}

}  // namespace
}  // namespace ferry
