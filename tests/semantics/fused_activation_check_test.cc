// An ai.ferry fused op whose `activation` is not in the table (or has the wrong parameter count) is an invalid
// model at import (shape inference, what `ferry check` runs), with the message the ref kernel gives at creation:
// before, check reported such a model runnable (cpu refuses it, ref takes it) and only session creation failed.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "ferry/error.h"
#include "ir/onnx_import.h"
#include "runtime/type_inference.h"
#include "testing/op_harness.h"

namespace ferry::testing {
namespace {

Tensor Zeros(const Shape& shape) {
  const std::vector<float> zeros(static_cast<size_t>(ShapeElementCount(shape)));
  return Tensor::FromVector(DataType::kFloat, shape, zeros);
}

// The message of the InvalidModelError shape inference raises for `t`, or what happened instead.
std::string InferenceError(const OpTest& t) {
  const std::string bytes = OneNodeModel(t);
  try {
    auto model = ir::ImportModelFromBytes({reinterpret_cast<const uint8_t*>(bytes.data()), bytes.size()}, "", "m");
    runtime::InferTypes(*model);
  } catch (const InvalidModelError& e) {
    return e.what();
  } catch (const std::exception& e) {
    return std::string("another error: ") + e.what();
  }
  return "no error";
}

OpTest Fused(const std::string& op, const std::string& activation, const std::vector<float>& params) {
  OpTest t{.op = op, .domain = "ai.ferry", .opset = 1};
  if (op == "FusedConv") {
    t.inputs = {In("x", Zeros({1, 2, 4, 4})), Const("w", Zeros({3, 2, 1, 1}))};
  } else {
    t.inputs = {In("a", Zeros({2, 3})), In("b", Zeros({3, 4}))};
  }
  t.attributes = {Str("activation", activation), Floats("activation_params", params)};
  return t;
}

bool Contains(const std::string& s, const std::string& part) { return s.find(part) != std::string::npos; }

TEST(FusedActivationCheck, AnUnknownActivationIsAnInvalidModelAtImport) {
  for (const std::string op : {"FusedConv", "FusedMatMul"}) {
    const std::string msg = InferenceError(Fused(op, "Elu", {}));
    EXPECT_TRUE(Contains(msg, "node 'node'") && Contains(msg, "shape inference") &&
                Contains(msg, "unknown activation 'Elu' (expected \"\", Relu, LeakyRelu,"))
        << op << ": " << msg;
  }
}

TEST(FusedActivationCheck, AWrongParameterCountIsAnInvalidModelAtImport) {
  const std::string msg = InferenceError(Fused("FusedConv", "Clip", {0}));
  EXPECT_TRUE(Contains(msg, "activation 'Clip' takes 2 activation_params (or none for the defaults), got 1")) << msg;
}

TEST(FusedActivationCheck, TheTablesActivationsPass) {
  EXPECT_EQ(InferenceError(Fused("FusedConv", "HardSigmoid", {0.1f, 0.2f})), "no error");
  EXPECT_EQ(InferenceError(Fused("FusedMatMul", "", {})), "no error");
}

}  // namespace
}  // namespace ferry::testing
