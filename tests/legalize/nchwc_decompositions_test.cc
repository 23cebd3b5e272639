// The decompositions of ONNX Runtime's com.microsoft.nchwc ops (group "nchwc-decompositions"; decompose_nchwc.cc)
// against the ops' ref kernels at both block sizes (FERRY_NCHWC_BLOCK sets the block the kernels and the rules
// read): random inputs over the attribute cases each rule handles, the decomposed graph run on ref, on cpu,ref and
// on a backend lacking the rules' ops (tolerance 1e-5); symbolic N, H, W (the Shape fallback); the rules' refusals;
// and a file ONNX Runtime itself writes at level `all` run with --legalize on a backend without the nchwc kernels.
#include <unistd.h>

#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <random>
#include <set>
#include <string>
#include <vector>

#include "legalize_test_util.h"
#include "testing/model_builder.h"

namespace ferry::legalize_test {
namespace {

constexpr const char* kNchwc = "com.microsoft.nchwc";

// Sets FERRY_NCHWC_BLOCK for the scope (kernels and rules read it when they are made).
class ScopedBlock {
 public:
  explicit ScopedBlock(const std::string& value) {
    if (const char* old = std::getenv("FERRY_NCHWC_BLOCK")) old_ = old, had_ = true;
    setenv("FERRY_NCHWC_BLOCK", value.c_str(), 1);
  }
  ~ScopedBlock() {
    if (had_) {
      setenv("FERRY_NCHWC_BLOCK", old_.c_str(), 1);
    } else {
      unsetenv("FERRY_NCHWC_BLOCK");
    }
  }

 private:
  std::string old_;
  bool had_ = false;
};

OpTest Nchwc(std::string op, std::vector<testing::OpInput> in, std::vector<onnx::AttributeProto> attrs = {}) {
  OpTest t;
  t.op = std::move(op);
  t.domain = kNchwc;
  t.opset = 1;
  t.inputs = std::move(in);
  t.attributes = std::move(attrs);
  t.rtol = 1e-5;
  t.atol = 1e-5;
  return t;
}

std::string Refusal(const OpTest& t, int64_t opset) {
  auto model = Import(WithOnnxImport(testing::OneNodeModel(t), opset));
  const legalize::Choice c = legalize::ChooseDecomposition(*model->graph->nodes().front(), opset);
  return c.decomposition ? "" : c.reason;
}

// Every form of every op at block b: the reorders with and without padding channels, each conv layout ORT's
// transformer writes (plain input, blocked, depthwise, grouped) with B, Sum and activations, the pools' window
// attributes, and Upsample's modes.
std::vector<OpTest> Cases(int64_t b, std::mt19937& rng) {
  const auto r = [&](Shape s) { return testing::RandomTensor(DataType::kFloat, std::move(s), rng); };
  const int64_t c = 2 * b;
  return {
      Nchwc("ReorderInput", {In("x", r({2, b + 4, 3, 5}))}),
      Nchwc("ReorderInput", {In("x", r({1, c, 3, 5}))}),
      Nchwc("ReorderInput", {In("x", r({2, 3, 5, b + 4}))}, {Int("channels_last", 1)}),
      Nchwc("ReorderOutput", {In("x", r({2, c, 3, 5}))}, {Int("channels", c - 3)}),
      Nchwc("ReorderOutput", {In("x", r({1, c, 3, 5}))}, {Int("channels", c)}),
      Nchwc("ReorderOutput", {In("x", r({2, c, 3, 5}))}, {Int("channels", c - 1), Int("channels_last", 1)}),
      Nchwc("Conv", {In("x", r({2, c, 9, 11})), Const("w", r({c, c, 3, 3})), Const("b", r({c}))},
            {Ints("pads", {1, 1, 1, 1}), Ints("strides", {2, 2}), Str("activation", "HardSwish")}),
      Nchwc("Conv",
            {In("x", r({1, 3, 10, 10})), Const("w", r({c, 3, 3, 3})), testing::Omitted(), In("sum", r({1, c, 8, 8}))},
            {Str("activation", "LeakyRelu"), testing::Floats("activation_params", {0.2f})}),
      Nchwc("Conv", {In("x", r({1, c, 7, 7})), Const("w", r({c, 1, 3, 3})), Const("b", r({c}))},
            {Int("group", c), Ints("pads", {1, 1, 1, 1}), Ints("dilations", {2, 2}), Str("activation", "Clip"),
             testing::Floats("activation_params", {0, 6})}),
      Nchwc("Conv", {In("x", r({1, c, 6, 6})), Const("w", r({c, b, 1, 1}))}, {Int("group", 2)}),
      Nchwc("Conv",
            {In("x", r({1, b, 5, 5})), Const("w", r({b, b, 3, 3})), Const("b", r({b})), In("sum", r({1, b, 5, 5}))},
            {Str("auto_pad", "SAME_UPPER"), Str("activation", "Sigmoid")}),
      Nchwc("MaxPool", {In("x", r({1, c, 9, 9}))},
            {Ints("kernel_shape", {3, 3}), Ints("strides", {2, 2}), Int("ceil_mode", 1)}),
      Nchwc("MaxPool", {In("x", r({2, b, 8, 7}))},
            {Ints("kernel_shape", {2, 2}), Ints("pads", {1, 1, 1, 1}), Ints("dilations", {2, 2})}),
      Nchwc("AveragePool", {In("x", r({1, c, 9, 9}))},
            {Ints("kernel_shape", {3, 3}), Ints("pads", {1, 1, 1, 1}), Int("count_include_pad", 1)}),
      Nchwc("AveragePool", {In("x", r({1, c, 9, 9}))},
            {Ints("kernel_shape", {2, 2}), Ints("pads", {1, 1, 0, 0}), Ints("strides", {2, 2})}),
      Nchwc("GlobalMaxPool", {In("x", r({2, c, 5, 3}))}),
      Nchwc("GlobalAveragePool", {In("x", r({2, c, 5, 3}))}),
      Nchwc("Upsample", {In("x", r({1, c, 3, 4}))}, {Ints("scales", {1, 1, 2, 3})}),
      Nchwc("Upsample", {In("x", r({1, b, 3, 4}))}, {Ints("scales", {1, 1, 4, 2}), Str("mode", "linear")}),
      Nchwc("Upsample", {In("x", r({1, c, 3, 4}))},
            {Ints("scales", {1, 1, 4, 2}), Str("mode", "linear"), Str("coordinate_transformation_mode", "half_pixel")}),
      Nchwc("Upsample", {In("x", r({2, b, 3, 4}))},
            {Ints("scales", {1, 1, 3, 1}), Str("mode", "linear"),
             Str("coordinate_transformation_mode", "align_corners")}),
  };
}

TEST(LegalizeNchwc, EveryOpMatchesItsRefKernelForBothBlocks) {
  for (const int64_t b : {8, 16}) {
    ScopedBlock block(std::to_string(b));
    std::mt19937 rng(static_cast<uint32_t>(27 + b));
    for (const OpTest& t : Cases(b, rng)) {
      std::string ops;
      EXPECT_TRUE(DecompositionMatches(t, 17, &ops)) << t.op << ", block " << b;
      EXPECT_EQ(ops.find("nchwc"), std::string::npos) << ops;
    }
  }
}

TEST(LegalizeNchwc, TheLayoutsAreReshapeTransposeReshape) {
  ScopedBlock block("8");
  std::mt19937 rng(3);
  const auto r = [&](Shape s) { return testing::RandomTensor(DataType::kFloat, std::move(s), rng); };
  std::string ops;
  ASSERT_TRUE(DecompositionMatches(Nchwc("ReorderInput", {In("x", r({1, 3, 2, 2}))}), 17, &ops));
  EXPECT_EQ(ops, "Pad Reshape Transpose Reshape");
  ASSERT_TRUE(DecompositionMatches(Nchwc("ReorderOutput", {In("x", r({1, 8, 2, 2}))}, {Int("channels", 3)}), 17, &ops));
  EXPECT_EQ(ops, "Reshape Transpose Reshape Slice");
  ASSERT_TRUE(DecompositionMatches(
      Nchwc("Conv",
            {In("x", r({1, 8, 2, 2})), Const("w", r({8, 8, 1, 1})), testing::Omitted(), In("sum", r({1, 8, 2, 2}))},
            {Str("activation", "Relu")}),
      17, &ops));
  EXPECT_EQ(ops, "Reshape Transpose Reshape Conv Reshape Transpose Reshape Add Relu Reshape Transpose Reshape");
  ASSERT_TRUE(DecompositionMatches(Nchwc("GlobalAveragePool", {In("x", r({1, 8, 2, 2}))}), 17, &ops));
  EXPECT_EQ(ops, "Reshape Transpose Reshape GlobalAveragePool");
  // Opset 11: Resize takes an (empty) roi input.
  ASSERT_TRUE(DecompositionMatches(Nchwc("Upsample", {In("x", r({1, 8, 2, 2}))}, {Ints("scales", {1, 1, 2, 2})}), 11));
}

// The one-node model of `t` with dims N, H, W of its graph inputs made symbolic: the rules use Shape there.
TEST(LegalizeNchwc, SymbolicBatchAndSpatialDims) {
  EnsureBareBackend();
  for (const int64_t b : {8, 16}) {
    ScopedBlock block(std::to_string(b));
    std::mt19937 rng(static_cast<uint32_t>(5 + b));
    const auto r = [&](Shape s) { return testing::RandomTensor(DataType::kFloat, std::move(s), rng); };
    const std::vector<OpTest> cases = {
        Nchwc("ReorderInput", {In("x", r({2, 3, 4, 5}))}),
        Nchwc("ReorderOutput", {In("x", r({2, b, 4, 5}))}, {Int("channels", b - 2)}),
        Nchwc("Conv", {In("x", r({2, b, 5, 6})), Const("w", r({b, b, 3, 3})), Const("b", r({b}))},
              {Ints("pads", {1, 1, 1, 1}), Str("activation", "Relu")}),
        Nchwc("MaxPool", {In("x", r({2, b, 6, 5}))}, {Ints("kernel_shape", {2, 2}), Ints("strides", {2, 2})}),
        Nchwc("Upsample", {In("x", r({2, b, 3, 2}))}, {Ints("scales", {1, 1, 2, 2}), Str("mode", "linear")}),
    };
    for (const OpTest& t : cases) {
      onnx::ModelProto m;
      m.ParseFromString(WithOnnxImport(testing::OneNodeModel(t), 17));
      auto* shape = m.mutable_graph()->mutable_input(0)->mutable_type()->mutable_tensor_type()->mutable_shape();
      for (int d : {0, 2, 3}) shape->mutable_dim(d)->set_dim_param(std::string("NCHW").substr(d, 1));
      const std::string bytes = m.SerializeAsString();
      std::string ops;
      const std::string decomposed = Decomposed(bytes, nullptr, &ops);
      ASSERT_FALSE(decomposed.empty()) << t.op;
      EXPECT_NE(ops.find("Shape"), std::string::npos) << t.op << ": " << ops;
      const auto feeds = testing::Feeds(t);
      const auto want = SessionOf(bytes, On({"ref"}))->Run(feeds);
      const auto got = SessionOf(decomposed, On({std::string(kBare)}, true, false))->Run(feeds);
      ASSERT_EQ(got.size(), 1u);
      EXPECT_TRUE(testing::TensorsClose(got[0].second, want[0].second, 1e-5, 1e-5)) << t.op << ", block " << b;
    }
  }
}

TEST(LegalizeNchwc, RefusalsSayWhy) {
  ScopedBlock block("8");
  std::mt19937 rng(9);
  const auto r = [&](Shape s) { return testing::RandomTensor(DataType::kFloat, std::move(s), rng); };
  EXPECT_EQ(Refusal(Nchwc("Conv", {In("x", r({1, 8, 4, 4})), In("w", r({8, 8, 1, 1}))}), 17),
            "com.microsoft.nchwc::Conv: W is not a constant float32 4-D tensor (its blocked layout is unpacked when "
            "built)");
  EXPECT_EQ(Refusal(Nchwc("Conv", {In("x", r({1, 3, 4, 4})), Const("w", r({12, 3, 1, 1}))}), 17),
            "com.microsoft.nchwc::Conv: W has shape [12,3,1,1]: M = 12 is not a multiple of the NCHWc block 8");
  EXPECT_EQ(
      Refusal(Nchwc("Conv", {In("x", r({1, 8, 4, 4})), Const("w", r({8, 8, 1, 1}))}, {Str("activation", "Foo")}), 17),
      "Conv: activation 'Foo' is unknown");
  EXPECT_EQ(Refusal(Nchwc("MaxPool", {In("x", r({1, 12, 4, 4}))}, {Ints("kernel_shape", {2, 2})}), 17),
            "com.microsoft.nchwc::MaxPool: X has 12 channels, not a multiple of the NCHWc block 8");
  EXPECT_EQ(Refusal(Nchwc("AveragePool", {In("x", r({1, 8, 6, 6}))},
                          {Ints("kernel_shape", {2, 2}), Ints("dilations", {2, 2})}),
                    17),
            "com.microsoft.nchwc::AveragePool: dilations need ai.onnx opset 19, the model has 17");
  EXPECT_EQ(Refusal(Nchwc("Upsample", {In("x", r({1, 8, 2, 2}))}, {Ints("scales", {1, 1, 2, 2})}), 10),
            "com.microsoft.nchwc::Upsample: Resize's coordinate_transformation_mode needs ai.onnx opset 11, the model "
            "has 10");
  EXPECT_EQ(Refusal(Nchwc("ReorderOutput", {In("x", r({1, 16, 2, 2}))}, {Int("channels", 3)}), 17),
            "com.microsoft.nchwc::ReorderOutput: X has 16 channels, expected 3 rounded up to the NCHWc block 8");
  const OpTest pool = Nchwc("GlobalMaxPool", {In("x", r({1, 8, 2, 2}))});
  ScopedBlock bad("7");
  EXPECT_EQ(Refusal(pool, 17),
            "com.microsoft.nchwc::GlobalMaxPool: FERRY_NCHWC_BLOCK = '7': expected 8 or 16 (the NCHWc block size of "
            "the machine that wrote the model)");
}

// ---- a file ONNX Runtime writes, legalized ----

// ref less the nchwc domain: --legalize must rewrite every nchwc node to run there at all.
constexpr const char* kNoNchwc = "legalize_no_nchwc";

// A small CNN with every pattern ORT's NCHWc transformer rewrites: a plain-input first conv with Relu, MaxPool,
// a residual Add + Relu (Sum), a depthwise conv with Clip, AveragePool, a nearest Resize (Upsample) read by a conv
// of 24 output channels (padded to the block, ReorderOutput channels = 24) and by GlobalAveragePool; and a second input
// of 20 channels (ReorderInput, padded) through a conv and GlobalMaxPool.
std::string SmallCnn(std::vector<std::pair<std::string, Tensor>>* feeds) {
  std::mt19937 rng(2027);
  testing::ModelBuilder m(17);
  m.Input("x", onnx::TensorProto::FLOAT, {1, 3, 32, 30});
  int count = 0;
  const auto init = [&](Shape s, double scale) {
    const std::string name = "w" + std::to_string(count++);
    const Tensor t = testing::RandomTensor(DataType::kFloat, s, rng, -scale, scale);
    ir::TensorToProto(t, name, m.graph().add_initializer());
    return name;
  };
  const auto conv = [&](const std::string& x, const std::string& y, int64_t cin, int64_t cout, int64_t k, int64_t group,
                        int64_t stride) {
    auto& n = m.Node(
        "Conv", {x, init({cout, cin / group, k, k}, 1.0 / std::sqrt(double(cin / group * k * k))), init({cout}, 0.1)},
        {y});
    n.add_attribute()->CopyFrom(Ints("pads", {k / 2, k / 2, k / 2, k / 2}));
    n.add_attribute()->CopyFrom(Ints("strides", {stride, stride}));
    n.add_attribute()->CopyFrom(Int("group", group));
  };
  conv("x", "c1", 3, 16, 3, 1, 2);
  m.Node("Relu", {"c1"}, {"r1"});
  auto& mp = m.Node("MaxPool", {"r1"}, {"p1"});
  mp.add_attribute()->CopyFrom(Ints("kernel_shape", {3, 3}));
  mp.add_attribute()->CopyFrom(Ints("strides", {2, 2}));
  mp.add_attribute()->CopyFrom(Ints("pads", {1, 1, 1, 1}));
  conv("p1", "c2", 16, 32, 3, 1, 1);
  m.Node("Relu", {"c2"}, {"r2"});
  conv("r2", "c3", 32, 32, 3, 1, 1);
  m.Node("Add", {"c3", "r2"}, {"a3"});
  m.Node("Relu", {"a3"}, {"r3"});
  conv("r3", "c4", 32, 32, 3, 32, 1);
  m.FloatInitializer("lo", {}, {0.0f});
  m.FloatInitializer("hi", {}, {6.0f});
  m.Node("Clip", {"c4", "lo", "hi"}, {"r4"});
  auto& ap = m.Node("AveragePool", {"r4"}, {"p4"});
  ap.add_attribute()->CopyFrom(Ints("kernel_shape", {2, 2}));
  ap.add_attribute()->CopyFrom(Ints("strides", {2, 2}));
  m.FloatInitializer("roi", {0}, {});
  m.FloatInitializer("scales", {4}, {1, 1, 2, 2});
  auto& up = m.Node("Resize", {"p4", "roi", "scales"}, {"u4"});
  up.add_attribute()->CopyFrom(Str("mode", "nearest"));
  up.add_attribute()->CopyFrom(Str("coordinate_transformation_mode", "asymmetric"));
  up.add_attribute()->CopyFrom(Str("nearest_mode", "floor"));
  conv("u4", "c5", 32, 24, 1, 1, 1);
  m.Node("GlobalAveragePool", {"u4"}, {"g5"});
  // A second input of 20 channels (>= the block: reordered, and padded), conv, GlobalMaxPool.
  m.Input("z", onnx::TensorProto::FLOAT, {1, 20, 6, 7});
  conv("z", "c6", 20, 16, 3, 1, 1);
  m.Node("GlobalMaxPool", {"c6"}, {"g6"});
  for (const char* out : {"r3", "c5", "g5", "g6"}) m.graph().add_output()->set_name(out);
  feeds->emplace_back("x", testing::RandomTensor(DataType::kFloat, {1, 3, 32, 30}, rng));
  feeds->emplace_back("z", testing::RandomTensor(DataType::kFloat, {1, 20, 6, 7}, rng));
  return m.Bytes();
}

// `model` optimized by ONNX Runtime (onnxruntime-node of bench/ort) at level `all` and saved; "" where it is not
// installed.
std::string OrtWrittenAll(const std::string& model) {
  const std::string ort = std::string(FERRY_SOURCE_DIR) + "/bench/ort/node_modules/onnxruntime-node";
  if (!std::filesystem::is_directory(ort) || std::system("command -v node > /dev/null 2>&1") != 0) return "";
  const std::filesystem::path dir = std::filesystem::temp_directory_path() /
                                    ("ferry_nchwc_" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  const std::string src = (dir / "model.onnx").string(), out = (dir / "model_all.onnx").string();
  const std::string js = (dir / "write.js").string();
  std::ofstream(src, std::ios::binary) << model;
  std::ofstream(js) << "const [ortPath, src, out] = process.argv.slice(2);\n"
                       "require(ortPath).InferenceSession.create(src, {graphOptimizationLevel: 'all', "
                       "optimizedModelFilePath: out, intraOpNumThreads: 1})\n"
                       "  .catch(e => { console.error(e.message); process.exit(1); });\n";
  const int rc = std::system(("node " + js + " " + ort + " " + src + " " + out).c_str());
  std::string bytes;
  if (rc == 0) {
    std::ifstream in(out, std::ios::binary);
    bytes.assign(std::istreambuf_iterator<char>(in), {});
  }
  std::filesystem::remove_all(dir);
  EXPECT_EQ(rc, 0) << "ONNX Runtime could not write the optimized model";
  return bytes;
}

std::set<std::string> NchwcOps(const std::string& bytes) {
  onnx::ModelProto m;
  m.ParseFromString(bytes);
  std::set<std::string> ops;
  for (const auto& n : m.graph().node()) {
    if (n.domain() == kNchwc) ops.insert(n.op_type());
  }
  return ops;
}

// The ORT-written `bytes` legalized on the backend without nchwc kernels against the file on cpu,ref (the nchwc
// kernels) and against the original model.
void ExpectLegalizedMatches(const std::string& bytes, const std::string& original,
                            const std::vector<std::pair<std::string, Tensor>>& feeds, double tol) {
  EnsureRefWithout(kNoNchwc, kNchwc, {});
  EXPECT_THROW(SessionOf(bytes, On({kNoNchwc}, false, false)), std::exception);
  const auto legalized = SessionOf(bytes, On({kNoNchwc}, true, false));
  int64_t convs = 0;
  for (const NodePlacementInfo& n : legalized->placement().nodes) {
    EXPECT_NE(n.domain, kNchwc) << n.name;
    convs += n.op == "Conv";
  }
  EXPECT_GT(convs, 0);
  const auto got = legalized->Run(feeds);
  for (const std::string* want_model : {&bytes, &original}) {
    if (want_model->empty()) continue;
    SessionOptions o;
    o.threads = 1;
    const auto want = Session::CreateFromBytes(
                          {reinterpret_cast<const uint8_t*>(want_model->data()), want_model->size()}, o)
                          ->Run(feeds);
    ASSERT_EQ(got.size(), want.size());
    for (size_t i = 0; i < want.size(); ++i) {
      EXPECT_EQ(got[i].first, want[i].first);
      EXPECT_TRUE(testing::TensorsClose(got[i].second, want[i].second, tol, tol))
          << "output " << want[i].first << (want_model == &bytes ? " (the file on cpu,ref)" : " (the original)");
    }
  }
}

TEST(LegalizeNchwc, AnOrtWrittenFileRunsWithoutTheNchwcKernels) {
  ScopedBlock machine("");  // the file is written for this machine's block: no override
  std::vector<std::pair<std::string, Tensor>> feeds;
  const std::string original = SmallCnn(&feeds);
  const std::string written = OrtWrittenAll(original);
  if (written.empty()) GTEST_SKIP() << "onnxruntime-node is not installed in bench/ort (bench/compare_ort.sh)";
  const std::set<std::string> ops = NchwcOps(written);
  std::string wrote;
  for (const std::string& op : ops) wrote += " " + op;
  for (const char* op : {"ReorderInput", "ReorderOutput", "Conv", "MaxPool", "AveragePool", "Upsample",
                         "GlobalAveragePool", "GlobalMaxPool"}) {
    EXPECT_TRUE(ops.count(op)) << "ONNX Runtime wrote no nchwc " << op << " (it wrote" << wrote << ")";
  }
  ExpectLegalizedMatches(written, original, feeds, 1e-4);
}

}  // namespace
}  // namespace ferry::legalize_test
