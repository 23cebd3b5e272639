// The importer is the trust boundary for model files (DESIGN.md): a malformed graph (a node reading its own
// output, a value defined twice), an invalid declared type, an opset Ferry does not know and an external data
// reference that is not a regular file inside the model's directory are each refused at import, with a
// ferry::Error naming the model, graph and node or value, whatever the graph would let the optimizer fold away.
#include <gtest/gtest.h>
#include <onnx/onnx_pb.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "ferry/error.h"
#include "ir/inline_functions.h"
#include "ir/onnx_export.h"
#include "ir/onnx_import.h"
#include "ir/tensor_proto.h"
#include "testing/fifo.h"
#include "testing/model_builder.h"

namespace ferry::ir {
namespace {

using ferry::testing::Fifo;
using ferry::testing::ModelBuilder;
namespace fs = std::filesystem;

std::unique_ptr<Model> Import(const ModelBuilder& b) {
  const std::string bytes = b.Bytes();
  return ImportModelFromBytes({reinterpret_cast<const uint8_t*>(bytes.data()), bytes.size()}, "", "test.onnx");
}

// Runs `fn`, expects a ferry::Error of `category` whose message contains every string in `needles`.
template <typename Fn>
void ExpectError(Fn&& fn, ErrorCategory category, const std::vector<std::string>& needles) {
  try {
    fn();
    ADD_FAILURE() << "expected a ferry::Error";
  } catch (const Error& e) {
    EXPECT_EQ(e.category(), category) << ErrorCategoryName(e.category()) << ": " << e.what();
    for (const auto& n : needles) EXPECT_NE(std::string(e.what()).find(n), std::string::npos) << e.what() << "\nmissing: " << n;
  }
}

void ExpectInvalid(const ModelBuilder& b, const std::vector<std::string>& needles) {
  ExpectError([&] { Import(b); }, ErrorCategory::kInvalidModel, needles);
}

ModelBuilder ReluWithOutputType(int32_t elem_type) {
  ModelBuilder b(17);
  b.Input("x", onnx::TensorProto::FLOAT, {2});
  b.Node("Relu", {"x"}, {"y"}, "relu");
  b.Output("y", elem_type, {2});
  return b;
}

onnx::NodeProto& AddNode(onnx::GraphProto& g, const std::string& op, const std::vector<std::string>& inputs,
                         const std::vector<std::string>& outputs, const std::string& name) {
  auto* n = g.add_node();
  n->set_op_type(op);
  n->set_name(name);
  for (const auto& i : inputs) n->add_input(i);
  for (const auto& o : outputs) n->add_output(o);
  return *n;
}

// ---- cycles and single assignment ----------------------------------------------------------------------------

// A node reading its own output is the shortest cycle: the Concat(output, v1) -> output ran and returned
// v1, Identity(y) -> y ran with "y: none", Size(y) -> y returned 1, Relu and Add failed with "required input 0 is
// missing". Every one is a cycle naming the node.
TEST(ImportCycles, NodeReadingItsOwnOutputIsACycle) {
  const std::vector<std::pair<std::string, std::vector<std::string>>> cases = {
      {"Identity", {"y"}}, {"Size", {"y"}}, {"Relu", {"y"}}, {"Add", {"x", "y"}}, {"Concat", {"y", "x"}}};
  for (const auto& [op, inputs] : cases) {
    SCOPED_TRACE(op);
    ModelBuilder b(17);
    b.Input("x", onnx::TensorProto::FLOAT, {2});
    auto& n = AddNode(b.graph(), op, inputs, {"y"}, "self");
    if (op == "Concat") ModelBuilder::IntAttr(n, "axis", 0);
    b.Output("y", op == "Size" ? onnx::TensorProto::INT64 : onnx::TensorProto::FLOAT, {});
    ExpectInvalid(b, {"test.onnx", "graph 'g'", "cycle", "node 'self' (" + op + ")", "'y'"});
  }
}

TEST(ImportCycles, NodeWhoseSubgraphReadsItsOutputIsACycle) {
  ModelBuilder b(17);
  b.Input("c", onnx::TensorProto::BOOL, {});
  b.Input("x", onnx::TensorProto::FLOAT, {2});
  auto& n = b.Node("If", {"c"}, {"y"}, "if1");
  for (const char* branch : {"then_branch", "else_branch"}) {
    auto* g = &ModelBuilder::GraphAttr(n, branch);
    // The then branch reads the If's own output "y" from the outer scope.
    AddNode(*g, "Identity", {std::string(branch) == "then_branch" ? "y" : "x"}, {std::string(branch) + "_out"},
            std::string(branch) + "_id");
    g->add_output()->set_name(std::string(branch) + "_out");
  }
  b.Output("y", onnx::TensorProto::FLOAT, {2});
  ExpectInvalid(b, {"cycle", "node 'if1' (If)", "'y'"});
}

TEST(ImportCycles, TwoNodeCycleIsStillACycle) {
  ModelBuilder b(17);
  b.Input("x", onnx::TensorProto::FLOAT, {2});
  b.Node("Add", {"x", "b"}, {"a"}, "first");
  b.Node("Relu", {"a"}, {"b"}, "second");
  b.Output("b", onnx::TensorProto::FLOAT, {2});
  ExpectInvalid(b, {"cycle"});
}

// ONNX's single static assignment: a node output may not reuse a graph input's or an initializer's name, and a
// value is produced once.
TEST(ImportCycles, ValuesAreAssignedOnce) {
  ModelBuilder input(17);
  input.Input("x", onnx::TensorProto::FLOAT, {2});
  input.Node("Relu", {"x"}, {"x"}, "over_input");
  input.Output("x", onnx::TensorProto::FLOAT, {2});
  ExpectInvalid(input, {"over_input", "'x'", "already defined"});

  ModelBuilder init(17);
  init.Input("x", onnx::TensorProto::FLOAT, {2});
  init.FloatInitializer("w", {2}, {1, 2});
  init.Node("Relu", {"x"}, {"w"}, "over_init");
  init.Output("w", onnx::TensorProto::FLOAT, {2});
  ExpectInvalid(init, {"over_init", "'w'", "already defined"});

  ModelBuilder twice(17);
  twice.Input("x", onnx::TensorProto::FLOAT, {2});
  twice.Node("Relu", {"x"}, {"y"}, "one");
  twice.Node("Neg", {"x"}, {"y"}, "two");
  twice.Output("y", onnx::TensorProto::FLOAT, {2});
  ExpectInvalid(twice, {"two", "'y'", "already defined"});

  ModelBuilder same_node(17);
  same_node.Input("x", onnx::TensorProto::FLOAT, {2});
  AddNode(same_node.graph(), "Split", {"x"}, {"y", "y"}, "split");
  same_node.Output("y", onnx::TensorProto::FLOAT, {1});
  ExpectInvalid(same_node, {"split", "'y'", "already defined"});
}

// ---- declared types ------------------------------------------------------------------------------------------

// The mutants: element type 0, -1 or 1000 on the output ran with exit 0.
TEST(ImportDeclaredTypes, OutputElementTypeMustBeAnOnnxType) {
  for (int32_t bad : {-1, 1000, 9999}) {
    SCOPED_TRACE(bad);
    ExpectInvalid(ReluWithOutputType(bad), {"graph output 'y'", std::to_string(bad), "not an ONNX data type"});
  }
  // UNDEFINED on the model's interface is no type at all (ONNX's checker requires one, ONNX Runtime matches no
  // tensor against it); so is a tensor type without elem_type.
  ExpectInvalid(ReluWithOutputType(onnx::TensorProto::UNDEFINED), {"graph output 'y'", "UNDEFINED"});
  ModelBuilder no_elem = ReluWithOutputType(onnx::TensorProto::FLOAT);
  no_elem.graph().mutable_output(0)->mutable_type()->mutable_tensor_type()->clear_elem_type();
  ExpectInvalid(no_elem, {"graph output 'y'", "UNDEFINED"});
  // An output with no type at all declares nothing: type inference fills it.
  ModelBuilder untyped = ReluWithOutputType(onnx::TensorProto::FLOAT);
  untyped.graph().mutable_output(0)->clear_type();
  EXPECT_NO_THROW(Import(untyped));
  EXPECT_NO_THROW(Import(ReluWithOutputType(onnx::TensorProto::FLOAT)));
}

TEST(ImportDeclaredTypes, InputAndValueInfoElementTypes) {
  ModelBuilder input(17);
  input.Input("x", 1000, {2});
  input.Node("Relu", {"x"}, {"y"}, "relu");
  input.Output("y", onnx::TensorProto::FLOAT, {2});
  ExpectInvalid(input, {"graph input 'x'", "1000"});

  ModelBuilder undefined_input(17);
  undefined_input.Input("x", onnx::TensorProto::UNDEFINED, {2});
  undefined_input.Node("Relu", {"x"}, {"y"}, "relu");
  undefined_input.Output("y", onnx::TensorProto::FLOAT, {2});
  ExpectInvalid(undefined_input, {"graph input 'x'", "UNDEFINED"});

  // value_info (and subgraph interfaces) may leave the element type UNDEFINED: unknown, not invalid.
  ModelBuilder vi = ReluWithOutputType(onnx::TensorProto::FLOAT);
  auto* info = vi.graph().add_value_info();
  info->set_name("y");
  info->mutable_type()->mutable_tensor_type()->set_elem_type(onnx::TensorProto::UNDEFINED);
  EXPECT_NO_THROW(Import(vi));
  info->mutable_type()->mutable_tensor_type()->set_elem_type(-7);
  ExpectInvalid(vi, {"value_info 'y'", "-7", "not an ONNX data type"});
  info->mutable_type()->mutable_sequence_type()->mutable_elem_type()->mutable_tensor_type()->set_elem_type(500);
  ExpectInvalid(vi, {"value_info 'y'", "500"});
}

TEST(ImportDeclaredTypes, SubgraphOutputsMayLeaveTheirElementTypeUndefined) {
  ModelBuilder b(17);
  b.Input("c", onnx::TensorProto::BOOL, {});
  b.Input("x", onnx::TensorProto::FLOAT, {2});
  auto& n = b.Node("If", {"c"}, {"y"}, "if1");
  for (const char* branch : {"then_branch", "else_branch"}) {
    auto* g = &ModelBuilder::GraphAttr(n, branch);
    AddNode(*g, "Neg", {"x"}, {std::string(branch) + "_out"}, std::string(branch) + "_neg");
    auto* out = g->add_output();
    out->set_name(std::string(branch) + "_out");
    out->mutable_type()->mutable_tensor_type()->set_elem_type(onnx::TensorProto::UNDEFINED);
  }
  b.Output("y", onnx::TensorProto::FLOAT, {2});
  EXPECT_NO_THROW(Import(b));
}

// An output that is a graph input or an initializer already has a type; a declaration that contradicts it is
// invalid (it used to overwrite the input's type, or be ignored for an initializer).
TEST(ImportDeclaredTypes, PassThroughOutputsMustMatchTheirValue) {
  ModelBuilder input(17);
  input.Input("x", onnx::TensorProto::FLOAT, {2});
  input.Output("x", onnx::TensorProto::INT64, {2});
  ExpectInvalid(input, {"graph output 'x'", "int64", "graph input 'x'", "float32"});

  ModelBuilder init(17);
  init.Input("x", onnx::TensorProto::FLOAT, {2});
  init.FloatInitializer("w", {2}, {1, 2});
  init.Output("w", onnx::TensorProto::BOOL, {2});
  ExpectInvalid(init, {"graph output 'w'", "bool", "initializer 'w'", "float32"});

  ModelBuilder same(17);
  same.Input("x", onnx::TensorProto::FLOAT, {2});
  same.Output("x", onnx::TensorProto::FLOAT, {2});
  EXPECT_NO_THROW(Import(same));

  // An input that names an initializer (IR < 4 style) must declare the initializer's type.
  ModelBuilder declared(17);
  declared.FloatInitializer("w", {2}, {1, 2});
  declared.Input("w", onnx::TensorProto::INT32, {2});
  declared.Node("Relu", {"w"}, {"y"}, "relu");
  declared.Output("y", onnx::TensorProto::FLOAT, {2});
  ExpectInvalid(declared, {"graph input 'w'", "int32", "float32"});
}

// What Ferry writes it reads back: a model output whose element type the IR does not know (a rewrite's output
// not inferred yet) is exported without a type, never as UNDEFINED.
TEST(ImportDeclaredTypes, ExportNeverDeclaresAnUndefinedElementType) {
  auto model = Import(ReluWithOutputType(onnx::TensorProto::FLOAT));
  model->graph->outputs()[0]->set_type(TypeInfo::Tensor(DataType::kUndefined, std::vector<Dim>{Dim::Static(2)}));
  const std::string bytes = ExportModelBytes(*model);
  EXPECT_NO_THROW(ImportModelFromBytes({reinterpret_cast<const uint8_t*>(bytes.data()), bytes.size()}));
}

TEST(ImportDeclaredTypes, GraphInputsNeedNames) {
  ModelBuilder b = ReluWithOutputType(onnx::TensorProto::FLOAT);
  b.Input("", onnx::TensorProto::FLOAT, {2});
  ExpectInvalid(b, {"a graph input has no name"});
}

// ---- opset imports -------------------------------------------------------------------------------------------

ModelBuilder ShapeModel(int64_t opset) {
  ModelBuilder b(opset);
  b.Input("x", onnx::TensorProto::FLOAT, {2, 3});
  b.Node("Shape", {"x"}, {"s"}, "shape");
  b.Output("s", onnx::TensorProto::INT64, {2});
  return b;
}

// The issue: opset 1000000 was refused for Relu but ran for Shape, which the optimizer folds away. The opset
// import itself is what is refused, at import, whatever the graph holds.
TEST(ImportOpsets, DefaultDomainOpsetMustBeOneFerryKnows) {
  ExpectError([] { Import(ShapeModel(1000000)); }, ErrorCategory::kUnsupported,
              {"test.onnx", "opset 1000000", "'ai.onnx'", "newer than Ferry knows"});
  ExpectError([] { Import(ShapeModel(29)); }, ErrorCategory::kUnsupported, {"opset 29", "newer than Ferry knows (28)"});
  for (int64_t bad : {0, -1}) {
    ExpectError([&] { Import(ShapeModel(bad)); }, ErrorCategory::kInvalidModel,
                {"'ai.onnx'", "version " + std::to_string(bad)});
  }
  EXPECT_NO_THROW(Import(ShapeModel(28)));
  EXPECT_NO_THROW(Import(ShapeModel(1)));
}

TEST(ImportOpsets, EveryModelOfIrVersion3OrNewerImportsAnOpset) {
  ModelBuilder b = ShapeModel(17);
  b.proto().clear_opset_import();
  ExpectInvalid(b, {"test.onnx", "imports no opset"});
  // IR version 1 and 2 predate opset imports: such a model is opset 1.
  b.proto().set_ir_version(2);
  auto model = Import(b);
  EXPECT_EQ(model->opsets.at(""), 1);
}

TEST(ImportOpsets, OneDomainImportedTwice) {
  ModelBuilder b = ShapeModel(17);
  auto* again = b.proto().add_opset_import();
  again->set_domain("ai.onnx");  // the default domain under its other name
  again->set_version(13);
  ExpectInvalid(b, {"'ai.onnx'", "imported twice", "17", "13"});
  again->set_version(17);  // the same version twice is only redundant
  EXPECT_EQ(Import(b)->opsets.at(""), 17);
}

// Plugins register ops in domains of their own (docs/plugins.md): an unknown domain is no import error, at any
// version from 1; a known one (ai.onnx.ml) is held to what Ferry knows.
TEST(ImportOpsets, CustomDomainsTakeAnyPositiveVersion) {
  ModelBuilder b = ShapeModel(17);
  auto* custom = b.proto().add_opset_import();
  custom->set_domain("com.example.plugin");
  custom->set_version(1000000);
  EXPECT_EQ(Import(b)->opsets.at("com.example.plugin"), 1000000);
  custom->set_version(0);
  ExpectInvalid(b, {"'com.example.plugin'", "version 0"});
  custom->set_domain("ai.onnx.ml");
  custom->set_version(99);
  ExpectError([&] { Import(b); }, ErrorCategory::kUnsupported, {"opset 99", "'ai.onnx.ml'", "newer than Ferry knows"});
}

TEST(ImportOpsets, FunctionOpsetsAreValidatedToo) {
  ModelBuilder b = ShapeModel(17);
  auto* f = b.proto().add_functions();
  f->set_name("F");
  f->set_domain("com.example");
  f->add_input("a");
  f->add_output("b");
  auto* relu = f->add_node();
  relu->set_op_type("Relu");
  relu->add_input("a");
  relu->add_output("b");
  auto* op = f->add_opset_import();
  op->set_domain("");
  op->set_version(-1);
  ExpectInvalid(b, {"function 'com.example::F'", "version -1"});
  op->set_version(1000000);
  ExpectError([&] { Import(b); }, ErrorCategory::kUnsupported, {"function 'com.example::F'", "opset 1000000"});
}

// ---- tensors -------------------------------------------------------------------------------------------------

TEST(ImportTensors, SparseStringTensorIsRefusedBeforeAllocating) {
  ModelBuilder b = ReluWithOutputType(onnx::TensorProto::FLOAT);
  auto* sp = b.graph().add_sparse_initializer();
  sp->add_dims(int64_t{1} << 40);
  sp->add_dims(int64_t{1} << 20);
  auto* values = sp->mutable_values();
  values->set_name("s");
  values->set_data_type(onnx::TensorProto::STRING);
  values->add_dims(1);
  values->add_string_data("a");
  auto* indices = sp->mutable_indices();
  indices->set_data_type(onnx::TensorProto::INT64);
  indices->add_dims(1);
  indices->add_int64_data(0);
  ExpectInvalid(b, {"initializer 's'", "sparse", "string"});
}

TEST(ImportTensors, TypedFieldsHoldExactlyTheElements) {
  onnx::TensorProto c;
  c.set_data_type(onnx::TensorProto::COMPLEX64);
  c.add_dims(1);
  for (float v : {1.f, 2.f, 3.f}) c.add_float_data(v);  // one complex number is two floats, not three
  ExpectError([&] { TensorFromProto(c, {}); }, ErrorCategory::kInvalidModel, {"float_data", "3", "needs 2"});
  c.mutable_float_data()->RemoveLast();
  EXPECT_EQ(TensorFromProto(c, {}).data<float>()[1], 2.0f);
}

TEST(ImportTensors, BoolElementsAreZeroOrOne) {
  onnx::TensorProto raw;
  raw.set_data_type(onnx::TensorProto::BOOL);
  raw.add_dims(3);
  raw.set_raw_data(std::string("\x00\x02\xff", 3));
  Tensor t = TensorFromProto(raw, {});
  EXPECT_EQ(t.data<uint8_t>()[0], 0);
  EXPECT_EQ(t.data<uint8_t>()[1], 1);
  EXPECT_EQ(t.data<uint8_t>()[2], 1);
  onnx::TensorProto typed;
  typed.set_data_type(onnx::TensorProto::BOOL);
  typed.add_dims(2);
  typed.add_int32_data(7);
  typed.add_int32_data(0);
  Tensor u = TensorFromProto(typed, {});
  EXPECT_EQ(u.data<uint8_t>()[0], 1);
  EXPECT_EQ(u.data<uint8_t>()[1], 0);
}

// ---- function inlining -----------------------------------------------------------------------------------------

// Function F0 calls F1 twice, F1 calls F2 twice, ...: a small file whose inlined graph has 2^40 nodes. Inlining
// stops at its node bound instead of exhausting memory.
TEST(ImportFunctions, NestedCallsThatMultiplyAreBounded) {
  ModelBuilder b(17);
  b.Input("x", onnx::TensorProto::FLOAT, {2});
  b.Node("F0", {"x"}, {"y"}, "call").set_domain("local");
  b.Output("y", onnx::TensorProto::FLOAT, {2});
  auto* local = b.proto().add_opset_import();
  local->set_domain("local");
  local->set_version(1);
  constexpr int kLevels = 40;
  for (int i = 0; i <= kLevels; ++i) {
    auto* f = b.proto().add_functions();
    f->set_name("F" + std::to_string(i));
    f->set_domain("local");
    f->add_input("a");
    f->add_output("b");
    auto* op = f->add_opset_import();
    op->set_domain(i == kLevels ? "" : "local");
    op->set_version(i == kLevels ? 17 : 1);
    for (int k = 0; k < (i == kLevels ? 1 : 2); ++k) {
      auto* n = f->add_node();
      n->set_op_type(i == kLevels ? "Relu" : "F" + std::to_string(i + 1));
      if (i != kLevels) n->set_domain("local");
      n->add_input(k == 0 ? "a" : "t");
      n->add_output(i == kLevels || k == 1 ? "b" : "t");
    }
  }
  auto model = Import(b);
  ExpectError([&] { InlineModelFunctions(*model); }, ErrorCategory::kResourceExhausted,
              {"test.onnx", "inlining", "1048576 nodes"});
}

TEST(ImportFunctions, RecursiveFunctionIsRefusedBeforeInlining) {
  ModelBuilder b(17);
  b.Input("x", onnx::TensorProto::FLOAT, {2});
  b.Node("F", {"x"}, {"y"}, "call").set_domain("local");
  b.Output("y", onnx::TensorProto::FLOAT, {2});
  auto* local = b.proto().add_opset_import();
  local->set_domain("local");
  local->set_version(1);
  auto* f = b.proto().add_functions();
  f->set_name("F");
  f->set_domain("local");
  f->add_input("a");
  f->add_output("b");
  auto* op = f->add_opset_import();
  op->set_domain("local");
  op->set_version(1);
  auto* n = f->add_node();
  n->set_op_type("F");
  n->set_domain("local");
  n->add_input("a");
  n->add_output("b");
  auto model = Import(b);
  ExpectError([&] { InlineModelFunctions(*model); }, ErrorCategory::kInvalidModel, {"function 'F' calls itself"});
}

// ---- files: the model and its external data ------------------------------------------------------------------

class ImportFiles : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::path(::testing::TempDir()) / ("ferry_import_files_" + std::to_string(::getpid()));
    fs::remove_all(dir_);
    fs::create_directories(dir_ / "model");
    std::vector<float> w(2048, 0.5f);
    std::ofstream(dir_ / "model" / "weights.bin", std::ios::binary)
        .write(reinterpret_cast<const char*>(w.data()), static_cast<std::streamsize>(w.size() * sizeof(float)));
  }
  void TearDown() override { fs::remove_all(dir_); }

  // A model whose initializer 'w' of `elements` floats lives in external data at `location`.
  std::string WriteModel(const std::string& location, int64_t elements = 2,
                         const std::vector<std::pair<std::string, std::string>>& more = {},
                         const std::string& file = "model.onnx") {
    ModelBuilder b(17);
    b.Input("x", onnx::TensorProto::FLOAT, {elements});
    auto* t = b.graph().add_initializer();
    t->set_name("w");
    t->set_data_type(onnx::TensorProto::FLOAT);
    t->add_dims(elements);
    t->set_data_location(onnx::TensorProto::EXTERNAL);
    auto* kv = t->add_external_data();
    kv->set_key("location");
    kv->set_value(location);
    for (const auto& [key, value] : more) {
      auto* e = t->add_external_data();
      e->set_key(key);
      e->set_value(value);
    }
    b.Node("Add", {"x", "w"}, {"y"}, "add");
    b.Output("y", onnx::TensorProto::FLOAT, {elements});
    const std::string path = (dir_ / "model" / file).string();
    std::ofstream(path, std::ios::binary) << b.Bytes();
    return path;
  }

  static ImportOptions WithoutWeights() {
    ImportOptions o;
    o.load_initializer_data = false;  // what `ferry check` does
    return o;
  }

  fs::path dir_;
};

// The hang: external data that is a FIFO blocked `ferry run` and `ferry check` forever.
TEST_F(ImportFiles, ExternalDataThatIsAFifoIsRefusedWithoutBlocking) {
  Fifo fifo((dir_ / "model" / "pipe.bin").string());
  for (int64_t elements : {int64_t{2}, int64_t{2048}}) {  // loaded at once, and skipped by check
    for (bool load : {true, false}) {
      SCOPED_TRACE(std::to_string(elements) + (load ? " loaded" : " without weights"));
      const std::string path = WriteModel("pipe.bin", elements);
      ExpectError([&] { ImportModelFromFile(path, load ? ImportOptions{} : WithoutWeights()); },
                  ErrorCategory::kInvalidModel,
                  {"model.onnx", "initializer 'w'", "pipe.bin", "is a FIFO, not a regular file"});
    }
  }
  EXPECT_FALSE(fifo.fired()) << "the importer blocked on the FIFO";
}

TEST_F(ImportFiles, ModelFileThatIsAFifoIsRefusedWithoutBlocking) {
  Fifo fifo((dir_ / "model.onnx").string());
  ExpectError([&] { ImportModelFromFile(fifo.path()); }, ErrorCategory::kInvalidArgument,
              {"model.onnx", "is a FIFO, not a regular file"});
  ExpectError([&] { ImportModelFromFile(fifo.path(), WithoutWeights()); }, ErrorCategory::kInvalidArgument,
              {"is a FIFO"});
  EXPECT_FALSE(fifo.fired()) << "the importer blocked on the FIFO";
  ExpectError([&] { ImportModelFromFile((dir_ / "model").string()); }, ErrorCategory::kInvalidArgument,
              {"is a directory, not a regular file"});
  ExpectError([&] { ImportModelFromFile((dir_ / "nothing.onnx").string()); }, ErrorCategory::kInvalidArgument,
              {"nothing.onnx", "no such file"});
}

// The issue: `ferry check` (no weights) called external data at /etc/passwd or /dev/zero runnable, which run
// refuses. Each reference a session's load refuses, the weightless load refuses too, with the same message.
TEST_F(ImportFiles, WithoutWeightsExternalDataIsValidatedAsALoadWould) {
  fs::create_symlink("/dev/zero", dir_ / "model" / "zero.bin");
  std::ofstream(dir_ / "model" / "short.bin", std::ios::binary) << "abc";
  const std::vector<std::pair<std::string, std::vector<std::pair<std::string, std::string>>>> bad = {
      {"/etc/passwd", {}},
      {"../weights.bin", {}},
      {"zero.bin", {}},
      {"missing.bin", {}},
      {"short.bin", {}},
      {"weights.bin", {{"offset", "9000"}}},
      {"weights.bin", {{"offset", "4"}}},           // 8188 bytes left, 8192 needed
      {"weights.bin", {{"length", "100"}}},         // not the tensor's size
      {"weights.bin", {{"offset", "-4"}}},
  };
  for (const auto& [location, more] : bad) {
    SCOPED_TRACE(location + (more.empty() ? "" : " " + more[0].first + "=" + more[0].second));
    const std::string path = WriteModel(location, 2048, more);
    std::string loaded;
    try {
      ImportModelFromFile(path);
      ADD_FAILURE() << "a session's load accepted it";
    } catch (const InvalidModelError& e) {
      loaded = e.what();
    }
    ExpectError([&] { ImportModelFromFile(path, WithoutWeights()); }, ErrorCategory::kInvalidModel,
                {"initializer 'w'", loaded.substr(loaded.find("initializer 'w'"))});
  }
  const std::string good = WriteModel("weights.bin", 2048, {{"offset", "0"}, {"length", "8192"}});
  ImportStats stats;
  EXPECT_NO_THROW(ImportModelFromFile(good, WithoutWeights(), &stats));
  EXPECT_EQ(stats.initializers_skipped, 1);
}

// Failed imports leave no descriptor open.
TEST_F(ImportFiles, FailuresLeakNoFileDescriptors) {
  Fifo fifo((dir_ / "model" / "pipe.bin").string());
  std::ofstream(dir_ / "model" / "short.bin", std::ios::binary) << "abc";
  auto open_fds = [] {
    size_t n = 0;
    for ([[maybe_unused]] const auto& e : fs::directory_iterator("/proc/self/fd")) ++n;
    return n;
  };
  const std::string fifo_model = WriteModel("pipe.bin");
  const std::string short_model = WriteModel("short.bin", 2, {}, "short.onnx");
  const size_t before = open_fds();
  for (int i = 0; i < 20; ++i) {
    EXPECT_THROW(ImportModelFromFile(fifo_model), InvalidModelError);
    EXPECT_THROW(ImportModelFromFile(short_model), InvalidModelError);
    EXPECT_THROW(ImportModelFromFile(fifo.path()), InvalidArgumentError);
  }
  EXPECT_EQ(open_fds(), before);
  EXPECT_FALSE(fifo.fired());
}

}  // namespace
}  // namespace ferry::ir
