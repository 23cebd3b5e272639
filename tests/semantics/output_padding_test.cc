// ConvTranspose's output_padding holds one value per spatial axis (ONNX; ONNX Runtime refuses any other length).
// Shape inference (what `ferry check` and session creation run) and the ref and cpu kernels used to disagree:
// shape inference zero-padded a short list and cut a long one, the kernels refused a short one and took the first
// half of one of twice the rank. Now every layer refuses both as an invalid model, with one message that names the
// node, the attribute, and expected vs got: at import when X's or W's rank is known, else when the kernel first
// sees X.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "ferry/error.h"
#include "testing/op_harness.h"

namespace ferry::testing {
namespace {

Tensor Ones(const Shape& shape) {
  const std::vector<float> ones(static_cast<size_t>(ShapeElementCount(shape)), 1.0f);
  return Tensor::FromVector(DataType::kFloat, shape, ones);
}

OpTest ConvTransposeWithOutputPadding(const std::vector<int64_t>& output_padding) {
  OpTest t{.op = "ConvTranspose"};
  t.inputs.push_back(In("x", Ones({1, 1, 3, 3})));
  t.inputs.push_back(Const("w", Ones({1, 2, 3, 3})));
  t.attributes.push_back(Ints("strides", {2, 2}));
  t.attributes.push_back(Ints("output_padding", output_padding));
  return t;
}

std::string Reason(const std::vector<int64_t>& v) {
  std::string list;
  for (size_t i = 0; i < v.size(); ++i) list += (i ? "," : "") + std::to_string(v[i]);
  return "attribute output_padding = [" + list + "] has " + std::to_string(v.size()) +
         " values, expected 2 (one per spatial dimension)";
}

// The message of the InvalidModelError `fn` throws, or a description of what happened instead.
template <typename Fn>
std::string InvalidModelMessage(Fn&& fn) {
  try {
    fn();
  } catch (const InvalidModelError& e) {
    return e.what();
  } catch (const std::exception& e) {
    return std::string("another error: ") + e.what();
  }
  return "no error";
}

bool Contains(const std::string& s, const std::string& part) { return s.find(part) != std::string::npos; }

TEST(ConvTransposeOutputPadding, AWrongLengthIsAnInvalidModelAtImportOnEveryBackend) {
  for (const std::vector<int64_t>& bad : {std::vector<int64_t>{1}, std::vector<int64_t>{1, 1, 1, 1}}) {
    const OpTest t = ConvTransposeWithOutputPadding(bad);
    for (const std::string backend : {"ref", "cpu"}) {
      const std::string msg = InvalidModelMessage([&] { SessionFor(OneNodeModel(t), {backend}, true, 1); });
      EXPECT_TRUE(Contains(msg, "node 'node'") && Contains(msg, "shape inference") && Contains(msg, Reason(bad)))
          << backend << ": " << msg;
    }
  }
}

TEST(ConvTransposeOutputPadding, AWrongLengthIsAnInvalidModelWhenTheKernelFirstSeesTheRank) {
  for (const std::vector<int64_t>& bad : {std::vector<int64_t>{1}, std::vector<int64_t>{1, 1, 1, 1}}) {
    for (const std::string backend : {"ref", "cpu"}) {
      // X and W declared by element type only: the rank is not known before the run.
      auto session = OneNodeSession(
          "ConvTranspose", {{"x", DataType::kFloat}, {"w", DataType::kFloat}}, {"y"}, 17,
          [&](onnx::NodeProto& n) {
            *n.add_attribute() = Ints("strides", {2, 2});
            *n.add_attribute() = Ints("output_padding", bad);
          },
          OnlyBackend(backend, 1));
      const std::string msg = InvalidModelMessage([&] {
        session->Run({{"x", Ones({1, 1, 3, 3})},
                      {"w", Ones({1, 2, 3, 3})}});
      });
      EXPECT_TRUE(Contains(msg, "node 'n0'") && Contains(msg, Reason(bad))) << backend << ": " << msg;
    }
  }
}

TEST(ConvTransposeOutputPadding, AConstantWeightGivesTheRankWhenXHasNone) {
  onnx::ModelProto m;
  ASSERT_TRUE(m.ParseFromString(OneNodeModel(ConvTransposeWithOutputPadding({1}))));
  m.mutable_graph()->mutable_input(0)->mutable_type()->mutable_tensor_type()->clear_shape();
  const std::string msg = InvalidModelMessage([&] { SessionFor(m.SerializeAsString(), {"ref"}, true, 1); });
  EXPECT_TRUE(Contains(msg, "shape inference") && Contains(msg, Reason({1}))) << msg;
}

TEST(ConvTransposeOutputPadding, OneValuePerAxisRunsAndMatchesTheInferredShape) {
  const OpTest t = ConvTransposeWithOutputPadding({1, 0});
  for (const std::string backend : {"ref", "cpu"}) {
    const auto outputs = RunOn(t, {backend}, true, 1);
    ASSERT_EQ(outputs.size(), 1u);
    EXPECT_EQ(outputs[0].second.shape(), (Shape{1, 2, 8, 7})) << backend;
  }
}

}  // namespace
}  // namespace ferry::testing
