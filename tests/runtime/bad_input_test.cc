// Untrusted input never crashes Ferry: each bad input gives a ferry::Error of the right category whose message
// names the file, node or input, and the process stays usable.
#include <gtest/gtest.h>
#include <onnx/onnx_pb.h>

#include <filesystem>
#include <fstream>

#include "ferry/error.h"
#include "ferry/session.h"
#include "testing/fifo.h"
#include "testing/model_builder.h"

namespace ferry {
namespace {

using ferry::testing::ModelBuilder;
namespace fs = std::filesystem;

std::unique_ptr<Session> FromBytes(const std::string& bytes, const std::string& base_dir = "") {
  return Session::CreateFromBytes({reinterpret_cast<const uint8_t*>(bytes.data()), bytes.size()}, {}, base_dir);
}

ModelBuilder ReluModel() {
  ModelBuilder b(17);
  b.Input("x", onnx::TensorProto::FLOAT, {2, 3});
  b.Node("Relu", {"x"}, {"y"}, "relu");
  b.Output("y", onnx::TensorProto::FLOAT, {2, 3});
  return b;
}

// Runs `fn`, expects a ferry::Error of `category` whose message contains every string in `needles`.
template <typename Fn>
void ExpectError(Fn&& fn, ErrorCategory category, std::vector<std::string> needles) {
  try {
    fn();
    ADD_FAILURE() << "expected a ferry::Error";
  } catch (const Error& e) {
    EXPECT_EQ(e.category(), category) << ErrorCategoryName(e.category()) << ": " << e.what();
    for (const auto& n : needles) EXPECT_NE(std::string(e.what()).find(n), std::string::npos) << e.what() << "\nmissing: " << n;
  }
}

// After a failure the library must still work.
void ExpectStillUsable() {
  auto s = FromBytes(ReluModel().Bytes());
  Tensor x = Tensor::FromVector<float>(DataType::kFloat, {2, 3}, {-1, 2, -3, 4, -5, 6});
  auto out = s->Run({{"x", x}});
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(out[0].second.data<float>()[1], 2.0f);
  EXPECT_EQ(out[0].second.data<float>()[0], 0.0f);
}

TEST(BadInput, TruncatedProtobuf) {
  std::string bytes = ReluModel().Bytes();
  for (size_t cut : {bytes.size() / 2, bytes.size() - 1, size_t{3}}) {
    ExpectError([&] { FromBytes(bytes.substr(0, cut)); }, ErrorCategory::kInvalidModel, {"model"});
  }
  ExpectStillUsable();
}

TEST(BadInput, GarbageBytes) {
  std::string garbage = "\xff\xfe this is not a protobuf \x01\x02\x03";
  ExpectError([&] { FromBytes(garbage); }, ErrorCategory::kInvalidModel, {"model"});
  ExpectError([&] { FromBytes(std::string()); }, ErrorCategory::kInvalidModel, {"model"});
  ExpectStillUsable();
}

TEST(BadInput, MissingFile) {
  ExpectError([] { Session::Create("/nonexistent/dir/model.onnx"); }, ErrorCategory::kInvalidArgument,
              {"/nonexistent/dir/model.onnx", "no such file"});
  ExpectStillUsable();
}

TEST(BadInput, GarbageFileNamesThePath) {
  fs::path dir = fs::temp_directory_path() / "ferry_bad_input_file";
  fs::create_directories(dir);
  std::ofstream(dir / "garbage.onnx") << "garbage garbage garbage";
  ExpectError([&] { Session::Create((dir / "garbage.onnx").string()); }, ErrorCategory::kInvalidModel,
              {"garbage.onnx"});
  ExpectStillUsable();
}

TEST(BadInput, UnknownOp) {
  ModelBuilder b(17);
  b.Input("x", onnx::TensorProto::FLOAT, {2});
  b.Node("FrobnicateTensor", {"x"}, {"y"}, "mystery");
  b.Output("y", onnx::TensorProto::FLOAT, {2});
  ExpectError([&] { FromBytes(b.Bytes()); }, ErrorCategory::kInvalidModel, {"mystery", "FrobnicateTensor", "unknown op"});
  ExpectStillUsable();
}

TEST(BadInput, DanglingValue) {
  ModelBuilder b(17);
  b.Input("x", onnx::TensorProto::FLOAT, {2});
  b.Node("Add", {"x", "missing_weight"}, {"y"}, "add1");
  b.Output("y", onnx::TensorProto::FLOAT, {2});
  ExpectError([&] { FromBytes(b.Bytes()); }, ErrorCategory::kInvalidModel, {"add1", "missing_weight"});
  ModelBuilder c(17);
  c.Input("x", onnx::TensorProto::FLOAT, {2});
  c.Node("Relu", {"x"}, {"y"}, "relu");
  c.Output("not_produced", onnx::TensorProto::FLOAT, {2});
  ExpectError([&] { FromBytes(c.Bytes()); }, ErrorCategory::kInvalidModel, {"not_produced"});
  ExpectStillUsable();
}

TEST(BadInput, WrongInputsAtRun) {
  auto s = FromBytes(ReluModel().Bytes());
  Tensor good = Tensor::FromVector<float>(DataType::kFloat, {2, 3}, {1, 2, 3, 4, 5, 6});
  ExpectError([&] { s->Run({{"nope", good}}); }, ErrorCategory::kInvalidArgument, {"nope", "x"});
  ExpectError([&] { s->Run(std::vector<std::pair<std::string, Tensor>>{}); }, ErrorCategory::kInvalidArgument,
              {"x", "missing"});
  Tensor ints(DataType::kInt64, {2, 3});
  ExpectError([&] { s->Run({{"x", ints}}); }, ErrorCategory::kInvalidArgument, {"x", "float32", "int64"});
  Tensor rank3(DataType::kFloat, {2, 3, 1});
  ExpectError([&] { s->Run({{"x", rank3}}); }, ErrorCategory::kInvalidArgument, {"x", "rank 2", "[2,3,1]"});
  Tensor wrong_dim(DataType::kFloat, {2, 4});
  ExpectError([&] { s->Run({{"x", wrong_dim}}); }, ErrorCategory::kInvalidArgument, {"x", "dimension 1", "[2,4]"});
  // The session still runs correctly after the rejected calls.
  auto out = s->Run({{"x", good}});
  EXPECT_EQ(out[0].second.data<float>()[5], 6.0f);
}

TEST(BadInput, ShapeElementCountOverflow) {
  ModelBuilder b(17);
  b.Input("x", onnx::TensorProto::FLOAT, {2});
  auto* t = b.graph().add_initializer();
  t->set_name("huge");
  t->set_data_type(onnx::TensorProto::FLOAT);
  t->add_dims(int64_t{1} << 40);
  t->add_dims(int64_t{1} << 40);
  b.Node("Add", {"x", "huge"}, {"y"}, "add");
  b.Output("y", onnx::TensorProto::FLOAT, {2});
  ExpectError([&] { FromBytes(b.Bytes()); }, ErrorCategory::kInvalidModel, {"huge", "overflow"});
  ExpectError([] { Tensor(DataType::kFloat, {int64_t{1} << 62, 8}); }, ErrorCategory::kResourceExhausted, {"overflow"});
  // A shape computed at run time that overflows (ConstantOfShape of a huge shape) is an error, not a crash.
  ModelBuilder c(17);
  c.Input("shape", onnx::TensorProto::INT64, {2});
  c.Node("ConstantOfShape", {"shape"}, {"y"}, "fill");
  c.Output("y", onnx::TensorProto::FLOAT, {});
  auto s = FromBytes(c.Bytes());
  Tensor shape = Tensor::FromVector<int64_t>(DataType::kInt64, {2}, {int64_t{1} << 40, int64_t{1} << 40});
  try {
    s->Run({{"shape", shape}});
    ADD_FAILURE() << "expected an error";
  } catch (const Error& e) {
    EXPECT_TRUE(e.category() == ErrorCategory::kResourceExhausted || e.category() == ErrorCategory::kInvalidArgument)
        << e.what();
  }
  ExpectStillUsable();
}

// The issue: Concat(output, v1) -> output ran and returned v1, Identity(y) -> y ran with "y: none", Size(y) -> y
// returned 1. A node reading its own output is a cycle.
TEST(BadInput, SelfLoopIsACycle) {
  for (const char* op : {"Identity", "Size"}) {
    ModelBuilder b(17);
    b.Input("x", onnx::TensorProto::FLOAT, {2});
    b.Node(op, {"y"}, {"y"}, "self");
    b.Output("y", std::string(op) == "Size" ? onnx::TensorProto::INT64 : onnx::TensorProto::FLOAT, {});
    ExpectError([&] { FromBytes(b.Bytes()); }, ErrorCategory::kInvalidModel, {"cycle", "node 'self'", "'y'"});
  }
  ModelBuilder concat(17);
  concat.Input("v1", onnx::TensorProto::FLOAT, {2});
  ModelBuilder::IntAttr(concat.Node("Concat", {"output", "v1"}, {"output"}, "cat"), "axis", 0);
  concat.Output("output", onnx::TensorProto::FLOAT, {});
  ExpectError([&] { FromBytes(concat.Bytes()); }, ErrorCategory::kInvalidModel, {"cycle", "node 'cat' (Concat)"});
  ExpectStillUsable();
}

// The issue: an output declaring element type 0, -1, 1000 or another real type than the graph produces ran with
// exit 0. It is an InvalidModel error, as ONNX Runtime's type check gives; a declared shape that disagrees is not
// (ONNX Runtime warns), and the declared shape does not override the run's.
TEST(BadInput, DeclaredOutputTypeMustBeWhatTheGraphProduces) {
  auto relu_declaring = [](int32_t elem_type, std::initializer_list<int64_t> dims) {
    ModelBuilder b(17);
    b.Input("x", onnx::TensorProto::FLOAT, {2, 3});
    b.Node("Relu", {"x"}, {"y"}, "relu");
    b.Output("y", elem_type, dims);
    return b;
  };
  for (int32_t bad : {0, -1, 1000}) {
    ExpectError([&] { FromBytes(relu_declaring(bad, {2, 3}).Bytes()); }, ErrorCategory::kInvalidModel,
                {"graph output 'y'"});
  }
  for (int32_t other : {onnx::TensorProto::INT64, onnx::TensorProto::DOUBLE, onnx::TensorProto::FLOAT16}) {
    ExpectError([&] { FromBytes(relu_declaring(other, {2, 3}).Bytes()); }, ErrorCategory::kInvalidModel,
                {"graph output 'y'", "node 'relu' (Relu)", "float32"});
  }
  ModelBuilder cast(17);
  cast.Input("x", onnx::TensorProto::FLOAT, {2});
  ModelBuilder::IntAttr(cast.Node("Cast", {"x"}, {"y"}, "cast"), "to", onnx::TensorProto::INT32);
  cast.Output("y", onnx::TensorProto::FLOAT, {2});
  ExpectError([&] { FromBytes(cast.Bytes()); }, ErrorCategory::kInvalidModel, {"graph output 'y'", "int32"});
  // A shape that disagrees is only a warning (check lists it); the session runs and returns the real shape.
  auto s = FromBytes(relu_declaring(onnx::TensorProto::FLOAT, {2, 4}).Bytes());
  auto out = s->Run({{"x", Tensor(DataType::kFloat, {2, 3})}});
  EXPECT_EQ(out[0].second.shape(), (Shape{2, 3}));
  ExpectStillUsable();
}

// The issue: opset 1000000 (or -1) was refused for Relu but ran for Shape, which the optimizer folds away, and a
// model with no opset_import ran.
TEST(BadInput, OpsetImportsAreValidatedBeforeAnyPass) {
  auto shape_model = [](int64_t opset) {
    ModelBuilder b(opset);
    b.Input("x", onnx::TensorProto::FLOAT, {2, 3});
    b.Node("Shape", {"x"}, {"s"}, "shape");
    b.Output("s", onnx::TensorProto::INT64, {2});
    return b;
  };
  ExpectError([&] { FromBytes(shape_model(1000000).Bytes()); }, ErrorCategory::kUnsupported,
              {"opset 1000000", "newer than Ferry knows"});
  ExpectError([&] { FromBytes(shape_model(-1).Bytes()); }, ErrorCategory::kInvalidModel, {"version -1"});
  ModelBuilder none = shape_model(17);
  none.proto().clear_opset_import();
  ExpectError([&] { FromBytes(none.Bytes()); }, ErrorCategory::kInvalidModel, {"imports no opset"});
  ExpectStillUsable();
}

class ExternalDataTest : public ::testing::Test {
 protected:
  void SetUp() override {
    root_ = fs::temp_directory_path() / ("ferry_ext_" + std::to_string(::getpid()));
    fs::remove_all(root_);
    fs::create_directories(root_ / "model");
    float values[2] = {10, 20};
    std::ofstream(root_ / "secret.bin", std::ios::binary).write(reinterpret_cast<char*>(values), sizeof values);
    std::ofstream(root_ / "model" / "weights.bin", std::ios::binary).write(reinterpret_cast<char*>(values), sizeof values);
  }
  void TearDown() override { fs::remove_all(root_); }

  std::string WriteModel(const std::string& location,
                         const std::vector<std::pair<std::string, std::string>>& more = {}) {
    ModelBuilder b(17);
    b.Input("x", onnx::TensorProto::FLOAT, {2});
    auto* t = b.graph().add_initializer();
    t->set_name("w");
    t->set_data_type(onnx::TensorProto::FLOAT);
    t->add_dims(2);
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
    b.Output("y", onnx::TensorProto::FLOAT, {2});
    std::string path = (root_ / "model" / "model.onnx").string();
    std::ofstream(path, std::ios::binary) << b.Bytes();
    return path;
  }
  fs::path root_;
};

TEST_F(ExternalDataTest, InsideTheModelDirectoryWorks) {
  auto s = Session::Create(WriteModel("weights.bin"));
  auto out = s->Run({{"x", Tensor::FromVector<float>(DataType::kFloat, {2}, {1, 2})}});
  EXPECT_EQ(out[0].second.data<float>()[1], 22.0f);
}

TEST_F(ExternalDataTest, ParentDirectoryIsRejected) {
  ExpectError([&] { Session::Create(WriteModel("../secret.bin")); }, ErrorCategory::kInvalidModel,
              {"model.onnx", "'w'", "../secret.bin", ".."});
}

TEST_F(ExternalDataTest, AbsolutePathIsRejected) {
  ExpectError([&] { Session::Create(WriteModel((root_ / "secret.bin").string())); }, ErrorCategory::kInvalidModel,
              {"absolute"});
}

TEST_F(ExternalDataTest, SymlinkLeavingTheDirectoryIsRejected) {
  fs::create_symlink(root_ / "secret.bin", root_ / "model" / "link.bin");
  ExpectError([&] { Session::Create(WriteModel("link.bin")); }, ErrorCategory::kInvalidModel, {"link.bin", "leaves"});
  ExpectStillUsable();
}

TEST_F(ExternalDataTest, OffsetAndLengthMustBeWholeNumbers) {
  auto ok = Session::Create(WriteModel("weights.bin", {{"offset", "0"}, {"length", "8"}}));
  const auto out = ok->Run({{"x", Tensor::FromVector<float>(DataType::kFloat, {2}, {1, 2})}});
  EXPECT_EQ(out[0].second.data<float>()[0], 11.0f);  // 1 + the weights from offset 0: 10
  // A numeric prefix is not a number: "0x4" is not offset 0, "8 " is not length 8.
  for (const auto& [key, value] : std::vector<std::pair<std::string, std::string>>{
           {"offset", "0x4"}, {"length", "8 "}, {"offset", ""}, {"length", "99999999999999999999"}}) {
    ExpectError([&] { Session::Create(WriteModel("weights.bin", {{key, value}})); }, ErrorCategory::kInvalidModel,
                {"'w'", "'" + key + "'", "'" + value + "'"});
  }
  ExpectStillUsable();
}

// The hang: external data that is a FIFO blocked session creation forever. It is refused at once, naming
// the path, the initializer and what the file is.
TEST_F(ExternalDataTest, FifoIsRefusedWithoutBlocking) {
  testing::Fifo fifo((root_ / "model" / "pipe.bin").string());
  ExpectError([&] { Session::Create(WriteModel("pipe.bin")); }, ErrorCategory::kInvalidModel,
              {"model.onnx", "'w'", "pipe.bin", "is a FIFO, not a regular file"});
  EXPECT_FALSE(fifo.fired()) << "session creation blocked on the FIFO";
  ExpectStillUsable();
}

TEST_F(ExternalDataTest, MissingOrShortFileIsAnError) {
  ExpectError([&] { Session::Create(WriteModel("nothere.bin")); }, ErrorCategory::kInvalidModel, {"nothere.bin"});
  std::ofstream(root_ / "model" / "short.bin", std::ios::binary) << "abc";
  ExpectError([&] { Session::Create(WriteModel("short.bin")); }, ErrorCategory::kInvalidModel, {"'w'"});
}

}  // namespace
}  // namespace ferry
