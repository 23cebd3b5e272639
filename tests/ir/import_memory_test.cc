// Importing large models from files: models over protobuf's old 64 MiB stream limit parse, every kind of
// tensor data (initializers, sparse initializers, subgraph initializers, tensor attributes in graphs and in
// function bodies) round-trips exactly although the import frees each TensorProto's data once it is converted,
// a caller's ModelProto is left untouched, and the import does not hold the file's bytes, the proto's weights
// and Ferry's weights all at once (issue 8).
#include <gtest/gtest.h>
#include <malloc.h>
#include <onnx/onnx_pb.h>

#include <cstdint>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "ferry/error.h"
#include "ir/dump.h"
#include "ir/onnx_export.h"
#include "ir/onnx_import.h"
#include "testing/model_builder.h"

namespace ferry::ir {
namespace {

using ferry::testing::ModelBuilder;
using ferry::testing::WriteTempFile;

constexpr int kBigTensors = 17;
constexpr int64_t kBigElements = int64_t{1} << 20;  // 4 MiB of float each: 68 MiB in all

// Bit patterns that are not all plain numbers (NaNs, denormals, negative zero): compared byte for byte.
std::string BigRawData(int k) {
  std::string raw(static_cast<size_t>(kBigElements) * 4, '\0');
  uint32_t x = 0x9E3779B9u * static_cast<uint32_t>(k + 1);
  for (size_t i = 0; i < raw.size(); i += 4) {
    x = x * 1664525u + 1013904223u;
    std::memcpy(&raw[i], &x, 4);
  }
  return raw;
}

std::string BigName(int k) { return "big" + std::to_string(k); }

onnx::TensorProto* AddTensorAttr(onnx::NodeProto& n, const std::string& name) {
  auto* a = n.add_attribute();
  a->set_name(name);
  a->set_type(onnx::AttributeProto::TENSOR);
  return a->mutable_t();
}

// A model over 64 MiB whose weights are spread over every place a tensor can be.
ModelBuilder BigModel() {
  ModelBuilder b(17);
  auto* op = b.proto().add_opset_import();
  op->set_domain("local");
  op->set_version(1);
  b.Input("x", onnx::TensorProto::FLOAT, {kBigElements});
  std::string prev = "x";
  for (int k = 0; k < kBigTensors; ++k) {
    auto* t = b.graph().add_initializer();
    t->set_name(BigName(k));
    t->set_data_type(onnx::TensorProto::FLOAT);
    t->add_dims(kBigElements);
    t->set_raw_data(BigRawData(k));
    std::string out = "sum" + std::to_string(k);
    b.Node("Add", {prev, BigName(k)}, {out});
    prev = out;
  }
  b.FloatInitializer("small", {3}, {1.5f, -2.0f, 0.25f});
  b.Int64Initializer("ints", {2}, {int64_t{1} << 40, -7});
  // Sparse initializer: a 2x3 tensor with two values.
  auto* sp = b.graph().add_sparse_initializer();
  sp->add_dims(2);
  sp->add_dims(3);
  sp->mutable_values()->set_name("sparse");
  sp->mutable_values()->set_data_type(onnx::TensorProto::FLOAT);
  sp->mutable_values()->add_dims(2);
  sp->mutable_values()->add_float_data(7.0f);
  sp->mutable_values()->add_float_data(-8.0f);
  sp->mutable_indices()->set_data_type(onnx::TensorProto::INT64);
  sp->mutable_indices()->add_dims(2);
  sp->mutable_indices()->add_int64_data(1);
  sp->mutable_indices()->add_int64_data(5);
  // Constant node with a raw_data tensor attribute.
  auto& c = b.Node("Constant", {}, {"c"}, "const");
  auto* ct = AddTensorAttr(c, "value");
  ct->set_data_type(onnx::TensorProto::FLOAT);
  ct->add_dims(2);
  const float cv[2] = {3.0f, -0.5f};
  ct->set_raw_data(std::string(reinterpret_cast<const char*>(cv), sizeof(cv)));
  // If whose branches hold an initializer each.
  b.Input("cond", onnx::TensorProto::BOOL, {});
  auto& n = b.Node("If", {"cond"}, {"branch_out"}, "if");
  for (const char* branch : {"then_branch", "else_branch"}) {
    auto* a = n.add_attribute();
    a->set_name(branch);
    a->set_type(onnx::AttributeProto::GRAPH);
    auto* g = a->mutable_g();
    g->set_name(branch);
    auto* init = g->add_initializer();
    init->set_name(std::string(branch) + "_w");
    init->set_data_type(onnx::TensorProto::FLOAT);
    init->add_dims(2);
    init->add_float_data(std::string(branch) == "then_branch" ? 11.0f : 12.0f);
    init->add_float_data(13.0f);
    auto* node = g->add_node();
    node->set_op_type("Add");
    node->add_input("c");  // outer-scope value
    node->add_input(init->name());
    node->add_output(std::string(branch) + "_out");
    auto* out = g->add_output();
    out->set_name(std::string(branch) + "_out");
    out->mutable_type()->mutable_tensor_type()->set_elem_type(onnx::TensorProto::FLOAT);
  }
  // A function whose body holds a Constant.
  auto* f = b.proto().add_functions();
  f->set_domain("local");
  f->set_name("AddConst");
  f->add_input("a");
  f->add_output("r");
  auto* fop = f->add_opset_import();
  fop->set_domain("");
  fop->set_version(17);
  auto* fc = f->add_node();
  fc->set_op_type("Constant");
  fc->add_output("k");
  auto* fct = AddTensorAttr(*fc, "value");
  fct->set_data_type(onnx::TensorProto::INT32);
  fct->add_dims(3);
  for (int32_t v : {4, -5, 6}) fct->add_int32_data(v);
  auto* fa = f->add_node();
  fa->set_op_type("Add");
  fa->add_input("a");
  fa->add_input("k");
  fa->add_output("r");
  b.Node("AddConst", {prev}, {"y"}, "fn").set_domain("local");
  b.Output("y", onnx::TensorProto::FLOAT, {kBigElements});
  return b;
}

template <typename T>
std::vector<T> Values(const Tensor& t) {
  return std::vector<T>(t.data<T>(), t.data<T>() + t.size());
}

const Tensor& Init(const Graph& g, const std::string& name) {
  const Value* v = g.FindValue(name);
  EXPECT_NE(v, nullptr) << name;
  EXPECT_TRUE(v && v->is_initializer()) << name;
  return *v->initializer();
}

void ExpectBigModel(const Model& model) {
  const Graph& g = *model.graph;
  for (int k = 0; k < kBigTensors; ++k) {
    const Tensor& t = Init(g, BigName(k));
    ASSERT_EQ(t.shape(), Shape{kBigElements});
    const std::string raw = BigRawData(k);
    ASSERT_EQ(t.nbytes(), raw.size());
    EXPECT_EQ(std::memcmp(t.raw_data(), raw.data(), raw.size()), 0) << BigName(k);
  }
  EXPECT_EQ(Values<float>(Init(g, "small")), (std::vector<float>{1.5f, -2.0f, 0.25f}));
  EXPECT_EQ(Values<int64_t>(Init(g, "ints")), (std::vector<int64_t>{int64_t{1} << 40, -7}));
  EXPECT_EQ(Values<float>(Init(g, "sparse")), (std::vector<float>{0, 7, 0, 0, 0, -8}));
  const Node* c = nullptr;
  const Node* iff = nullptr;
  for (const auto& n : g.nodes()) {
    if (n->name() == "const") c = n.get();
    if (n->name() == "if") iff = n.get();
  }
  ASSERT_NE(c, nullptr);
  ASSERT_NE(c->GetTensor("value"), nullptr);
  EXPECT_EQ(Values<float>(*c->GetTensor("value")), (std::vector<float>{3.0f, -0.5f}));
  ASSERT_NE(iff, nullptr);
  for (const char* branch : {"then_branch", "else_branch"}) {
    const Graph* sub = iff->GetGraph(branch);
    ASSERT_NE(sub, nullptr);
    EXPECT_EQ(Values<float>(Init(*sub, std::string(branch) + "_w")),
              (std::vector<float>{std::string(branch) == "then_branch" ? 11.0f : 12.0f, 13.0f}));
  }
  ASSERT_EQ(model.functions.size(), 1u);
  const Graph& body = *model.functions[0].body;
  ASSERT_FALSE(body.nodes().empty());
  const Tensor* k = nullptr;
  for (const auto& n : body.nodes()) {
    if (n->op_type() == "Constant") k = n->GetTensor("value");
  }
  ASSERT_NE(k, nullptr);
  EXPECT_EQ(Values<int32_t>(*k), (std::vector<int32_t>{4, -5, 6}));
}

class ImportMemory : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    bytes_ = new std::string(BigModel().Bytes());
  }
  static void TearDownTestSuite() {
    delete bytes_;
    bytes_ = nullptr;
  }
  static const std::string& bytes() { return *bytes_; }
  static std::string* bytes_;
};
std::string* ImportMemory::bytes_ = nullptr;

TEST_F(ImportMemory, FileOver64MiBRoundTripsExactly) {
  ASSERT_GT(bytes().size(), size_t{64} << 20);
  const std::string path = WriteTempFile(bytes(), "big.onnx");
  ASSERT_EQ(std::filesystem::file_size(path), bytes().size());
  auto model = ImportModelFromFile(path);
  ExpectBigModel(*model);
  std::filesystem::remove(path);
}

TEST_F(ImportMemory, BytesRoundTripExactly) {
  auto model = ImportModelFromBytes({reinterpret_cast<const uint8_t*>(bytes().data()), bytes().size()}, "", "big.onnx");
  ExpectBigModel(*model);
}

TEST_F(ImportMemory, ExportRoundTripKeepsTheWeights) {
  const std::string path = WriteTempFile(bytes(), "big.onnx");
  auto model = ImportModelFromFile(path);
  std::filesystem::remove(path);
  const std::string exported = ExportModelBytes(*model);
  auto again = ImportModelFromBytes({reinterpret_cast<const uint8_t*>(exported.data()), exported.size()}, "",
                                    "exported.onnx");
  ExpectBigModel(*again);
  EXPECT_EQ(DumpModel(*model), DumpModel(*again));
}

TEST_F(ImportMemory, CallersProtoIsLeftWhole) {
  onnx::ModelProto proto;
  ASSERT_TRUE(proto.ParseFromString(bytes()));
  auto model = ImportModelProto(proto, "big.onnx", "");
  ExpectBigModel(*model);
  EXPECT_EQ(proto.SerializeAsString(), bytes());  // nothing freed from a proto the import does not own
  auto again = ImportModelProto(proto, "big.onnx", "");
  ExpectBigModel(*again);
}

TEST_F(ImportMemory, WithoutDataFromFile) {
  const std::string path = WriteTempFile(bytes(), "big.onnx");
  ImportOptions options;
  options.load_initializer_data = false;
  ImportStats stats;
  auto model = ImportModelFromFile(path, options, &stats);
  std::filesystem::remove(path);
  EXPECT_EQ(stats.initializers_skipped, kBigTensors);
  EXPECT_EQ(stats.bytes_skipped, kBigTensors * kBigElements * 4);
  const Value* v = model->graph->FindValue(BigName(0));
  ASSERT_NE(v, nullptr);
  EXPECT_FALSE(v->is_initializer());
  EXPECT_EQ(v->type().ToString(), "float32[" + std::to_string(kBigElements) + "]");
  EXPECT_EQ(Values<float>(Init(*model->graph, "small")), (std::vector<float>{1.5f, -2.0f, 0.25f}));
}

TEST_F(ImportMemory, TruncatedFileNamesThePath) {
  for (size_t cut : {bytes().size() / 2, bytes().size() - 1}) {
    const std::string path = WriteTempFile(bytes().substr(0, cut), "truncated.onnx");
    try {
      ImportModelFromFile(path);
      ADD_FAILURE() << "expected InvalidModelError";
    } catch (const InvalidModelError& e) {
      EXPECT_NE(std::string(e.what()).find(path), std::string::npos) << e.what();
      EXPECT_NE(std::string(e.what()).find("not a valid ONNX model"), std::string::npos) << e.what();
    }
    std::filesystem::remove(path);
  }
}

TEST_F(ImportMemory, EmptyFileIsNotAModel) {
  const std::string path = WriteTempFile("", "empty.onnx");
  try {
    ImportModelFromFile(path);
    ADD_FAILURE() << "expected InvalidModelError";
  } catch (const InvalidModelError& e) {
    EXPECT_NE(std::string(e.what()).find("no ir_version"), std::string::npos) << e.what();
  }
  std::filesystem::remove(path);
}

int64_t StatusKb(const std::string& field) {
  std::ifstream in("/proc/self/status");
  std::string line;
  while (std::getline(in, line)) {
    if (line.rfind(field + ":", 0) == 0) return std::stoll(line.substr(field.size() + 1));
  }
  return -1;
}

// Peak RSS of an import above the RSS before it: about one copy of the weights (the proto's, freed tensor by
// tensor as Ferry's copies are made), where reading the file into a buffer and converting with the proto whole
// took three.
TEST_F(ImportMemory, PeakIsAboutOneCopyOfTheWeights) {
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
  GTEST_SKIP() << "sanitizer allocators keep freed memory";
#endif
  const std::string path = WriteTempFile(bytes(), "big.onnx");
  ::malloc_trim(0);
  if (!std::ofstream("/proc/self/clear_refs").write("5", 1)) GTEST_SKIP() << "cannot reset the peak RSS";
  const int64_t before = StatusKb("VmRSS");
  if (before < 0 || StatusKb("VmHWM") > before + 1024) GTEST_SKIP() << "no VmRSS/VmHWM, or the reset failed";
  auto model = ImportModelFromFile(path);
  const int64_t peak_mib = (StatusKb("VmHWM") - before) / 1024;
  std::filesystem::remove(path);
  const int64_t weights_mib = kBigTensors * kBigElements * 4 >> 20;  // 68
  EXPECT_GE(peak_mib, weights_mib - 4);  // the model itself is resident
  EXPECT_LT(peak_mib, weights_mib * 3 / 2) << "peak RSS of the import " << peak_mib << " MiB, weights " << weights_mib
                                          << " MiB";
  ExpectBigModel(*model);
}

}  // namespace
}  // namespace ferry::ir
