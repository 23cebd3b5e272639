// Building small ONNX models in tests, directly as ModelProto (no Python needed).
#pragma once

#include <gtest/gtest.h>
#include <onnx/onnx_pb.h>
#include <unistd.h>

#include <fstream>
#include <initializer_list>
#include <string>
#include <vector>

namespace ferry::testing {

// Writes `bytes` to a temporary file and returns its path: unique per process and test, since ctest runs the
// tests of one file as parallel processes (two writing one path let a reader see a half-written model).
inline std::string WriteTempFile(const std::string& bytes, const std::string& name) {
  const auto* test = ::testing::UnitTest::GetInstance()->current_test_info();
  const std::string path = ::testing::TempDir() + "/ferry_" + std::to_string(::getpid()) + "_" +
                           (test ? std::string(test->test_suite_name()) + "_" + test->name() + "_" : std::string()) +
                           name;
  std::ofstream(path, std::ios::binary) << bytes;
  return path;
}

class ModelBuilder {
 public:
  explicit ModelBuilder(int64_t opset = 17, int64_t ir_version = 8) {
    proto_.set_ir_version(ir_version);
    proto_.set_producer_name("ferry-tests");
    auto* op = proto_.add_opset_import();
    op->set_domain("");
    op->set_version(opset);
    proto_.mutable_graph()->set_name("g");
  }
  onnx::ModelProto& proto() { return proto_; }
  onnx::GraphProto& graph() { return *proto_.mutable_graph(); }

  ModelBuilder& Input(const std::string& name, int32_t elem_type, std::initializer_list<int64_t> dims) {
    SetType(graph().add_input(), name, elem_type, dims);
    return *this;
  }
  // dims: -1 becomes a symbolic dim named `sym`.
  ModelBuilder& InputSym(const std::string& name, int32_t elem_type, std::vector<int64_t> dims, const std::string& sym) {
    auto* vi = graph().add_input();
    vi->set_name(name);
    auto* tt = vi->mutable_type()->mutable_tensor_type();
    tt->set_elem_type(elem_type);
    for (int64_t d : dims) {
      auto* dp = tt->mutable_shape()->add_dim();
      if (d < 0) dp->set_dim_param(sym);
      else dp->set_dim_value(d);
    }
    return *this;
  }
  ModelBuilder& Output(const std::string& name, int32_t elem_type, std::initializer_list<int64_t> dims) {
    SetType(graph().add_output(), name, elem_type, dims);
    return *this;
  }
  onnx::NodeProto& Node(const std::string& op, std::initializer_list<std::string> inputs,
                        std::initializer_list<std::string> outputs, const std::string& name = "") {
    auto* n = graph().add_node();
    n->set_op_type(op);
    n->set_name(name.empty() ? op + "_" + std::to_string(graph().node_size()) : name);
    for (const auto& i : inputs) n->add_input(i);
    for (const auto& o : outputs) n->add_output(o);
    return *n;
  }
  ModelBuilder& FloatInitializer(const std::string& name, std::initializer_list<int64_t> dims, std::vector<float> values) {
    auto* t = graph().add_initializer();
    t->set_name(name);
    t->set_data_type(onnx::TensorProto::FLOAT);
    for (int64_t d : dims) t->add_dims(d);
    for (float v : values) t->add_float_data(v);
    return *this;
  }
  ModelBuilder& Int64Initializer(const std::string& name, std::initializer_list<int64_t> dims,
                                 std::vector<int64_t> values) {
    auto* t = graph().add_initializer();
    t->set_name(name);
    t->set_data_type(onnx::TensorProto::INT64);
    for (int64_t d : dims) t->add_dims(d);
    for (int64_t v : values) t->add_int64_data(v);
    return *this;
  }
  std::string Bytes() const { return proto_.SerializeAsString(); }

  static void IntAttr(onnx::NodeProto& n, const std::string& name, int64_t v) {
    auto* a = n.add_attribute();
    a->set_name(name);
    a->set_type(onnx::AttributeProto::INT);
    a->set_i(v);
  }
  // A graph attribute (If's then_branch, Loop's body) named `name`, its graph named `name` too.
  static onnx::GraphProto& GraphAttr(onnx::NodeProto& n, const std::string& name) {
    auto* a = n.add_attribute();
    a->set_name(name);
    a->set_type(onnx::AttributeProto::GRAPH);
    auto* g = a->mutable_g();
    g->set_name(name);
    return *g;
  }

 private:
  static void SetType(onnx::ValueInfoProto* vi, const std::string& name, int32_t elem_type,
                      std::initializer_list<int64_t> dims) {
    vi->set_name(name);
    auto* tt = vi->mutable_type()->mutable_tensor_type();
    tt->set_elem_type(elem_type);
    for (int64_t d : dims) tt->mutable_shape()->add_dim()->set_dim_value(d);
  }
  onnx::ModelProto proto_;
};

}  // namespace ferry::testing
