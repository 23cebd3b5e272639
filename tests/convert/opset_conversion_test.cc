// The opset converter (src/convert/): each adapter up and down on a tiny model (the IR before/after, numerical
// equivalence with the original through Session on the ref backend, a round trip), the generic rule, and errors
// naming each node that cannot be expressed.
#include "convert/opset_conversion.h"

#include <gtest/gtest.h>

#include "convert/adapter.h"
#include "ferry/error.h"
#include "passes/pass_test_util.h"
#include "schemas/schema.h"
#include "tools/optimize.h"

namespace ferry {
namespace {

using pass_test::Import;
using pass_test::IntsAttr;
using pass_test::kF;
using pass_test::OpList;
using testing::ModelBuilder;

constexpr int32_t kI64 = onnx::TensorProto::INT64;

void StringAttr(onnx::NodeProto& n, const std::string& name, const std::string& v) {
  auto* a = n.add_attribute();
  a->set_name(name);
  a->set_type(onnx::AttributeProto::STRING);
  a->set_s(v);
}

void FloatAttr(onnx::NodeProto& n, const std::string& name, float v) { pass_test::FloatAttr(n, name, v); }

[[maybe_unused]] void FloatsAttr(onnx::NodeProto& n, const std::string& name, std::vector<float> v) {
  auto* a = n.add_attribute();
  a->set_name(name);
  a->set_type(onnx::AttributeProto::FLOATS);
  for (float x : v) a->add_floats(x);
}

// The model converted to `to` (types inferred before and after, as `ferry optimize --opset` does).
std::unique_ptr<ir::Model> Converted(const std::string& bytes, int64_t to, convert::OpsetConversion* report = nullptr) {
  auto model = Import(bytes);
  auto r = convert::ConvertOpset(*model, to);
  runtime::InferTypes(*model);
  if (report) *report = r;
  return model;
}

std::string ConvertedBytes(const std::string& bytes, int64_t to) { return ir::ExportModelBytes(*Converted(bytes, to)); }

// The nodes of the top graph, one per line: "Op(in, in) -> out {attrs}" without the opset comments.
std::string Nodes(const ir::Model& m) {
  std::string dump = ir::DumpGraph(*m.graph);
  std::string out;
  size_t pos = 0;
  while (pos < dump.size()) {
    size_t end = dump.find('\n', pos);
    if (end == std::string::npos) end = dump.size();
    std::string line = dump.substr(pos, end - pos);
    pos = end + 1;
    if (line.find(" = initializer") != std::string::npos || line.find("graph ") == 0 || line == "}") continue;
    if (size_t hash = line.find("   #"); hash != std::string::npos) line = line.substr(0, hash);
    while (!line.empty() && line.front() == ' ') line.erase(line.begin());
    while (!line.empty() && line.back() == ' ') line.pop_back();
    out += line + "\n";
  }
  return out;
}

// Runs both models on the ref backend on the same random inputs and compares every output.
void ExpectSameOutputs(const std::string& a, const std::string& b, double tol = 1e-5) {
  const auto feeds = pass_test::RandomFeeds(a);
  SessionOptions o;
  o.threads = 1;
  o.backends = {"ref"};
  o.optimization_level = 0;
  auto session = [&](const std::string& bytes) {
    return Session::CreateFromBytes(
        std::span<const uint8_t>(reinterpret_cast<const uint8_t*>(bytes.data()), bytes.size()), o);
  };
  const auto want = session(a)->Run(feeds);
  const auto got = session(b)->Run(feeds);
  ASSERT_EQ(want.size(), got.size());
  for (size_t i = 0; i < want.size(); ++i) {
    EXPECT_EQ(got[i].first, want[i].first);
    EXPECT_TRUE(testing::TensorsClose(got[i].second, want[i].second, tol, tol)) << "output " << want[i].first;
  }
}

// Converts to `to`, checks outputs, converts back to `from` and checks again (the round trip).
void ExpectRoundTrip(const std::string& bytes, int64_t from, int64_t to) {
  const std::string there = ConvertedBytes(bytes, to);
  ExpectSameOutputs(bytes, there);
  const std::string back = ConvertedBytes(there, from);
  ExpectSameOutputs(bytes, back);
  EXPECT_EQ(Import(back)->opsets.at(""), from);
}

std::string ErrorOf(const std::string& bytes, int64_t to) {
  auto model = Import(bytes);
  try {
    convert::ConvertOpset(*model, to);
  } catch (const InvalidArgumentError& e) {
    return e.what();
  }
  return "";
}

// ---- Reduce* -----------------------------------------------------------------------------------------------

std::string ReduceModel(int64_t opset, const std::string& op, bool axes_input) {
  ModelBuilder b(opset);
  b.Input("x", kF, {2, 3, 4});
  if (axes_input) {
    b.Int64Initializer("axes", {2}, {0, -1});
    b.Node(op, {"x", "axes"}, {"y"}, "reduce");
  } else {
    IntsAttr(b.Node(op, {"x"}, {"y"}, "reduce"), "axes", {0, -1});
  }
  b.Output("y", kF, {});
  return b.Bytes();
}

TEST(OpsetConversionReduce, AxesAttributeBecomesInputAt18) {
  const std::string bytes = ReduceModel(17, "ReduceMean", false);
  convert::OpsetConversion report;
  auto m = Converted(bytes, 18, &report);
  EXPECT_EQ(Nodes(*m), "%y = ReduceMean(%x, %reduce_axes)\n");
  EXPECT_EQ(m->opsets.at(""), 18);
  EXPECT_EQ(report.from, 17);
  EXPECT_EQ(report.by_adapter.at("reduce-axes"), 1);
  EXPECT_EQ(convert::FormatOpsetConversion(report), "opset 17 -> 18: 1 of 1 nodes rewritten (reduce-axes 1)");
  ExpectRoundTrip(bytes, 17, 18);
}

TEST(OpsetConversionReduce, AxesInputBecomesAttributeBelow18And13) {
  auto m = Converted(ReduceModel(18, "ReduceMax", true), 17);
  EXPECT_EQ(Nodes(*m), "%y = ReduceMax(%x) {axes=[0,-1]}\n");
  EXPECT_TRUE(m->graph->initializers().empty());  // the axes initializer nothing reads any more is gone
  ExpectRoundTrip(ReduceModel(18, "ReduceMax", true), 18, 17);
  ExpectRoundTrip(ReduceModel(13, "ReduceSum", true), 13, 12);
  // Below 11 the negative axis is made non-negative (the rank is known).
  EXPECT_EQ(Nodes(*Converted(ReduceModel(13, "ReduceSum", true), 10)), "%y = ReduceSum(%x) {axes=[0,2]}\n");
  ExpectRoundTrip(ReduceModel(18, "ReduceL2", true), 18, 9);
}

TEST(OpsetConversionReduce, NonConstantAxesCannotGoDown) {
  ModelBuilder b(18);
  b.Input("x", kF, {2, 3});
  b.Input("axes", kI64, {1});
  b.Node("ReduceSum", {"x", "axes"}, {"s"}, "sum");
  b.Node("ReduceProd", {"x", "axes"}, {"p"}, "prod");
  b.Node("Relu", {"x"}, {"r"}, "relu");
  b.Output("s", kF, {});
  b.Output("p", kF, {});
  b.Output("r", kF, {});
  const std::string err = ErrorOf(b.Bytes(), 12);
  EXPECT_NE(err.find("cannot convert from opset 18 to 12: 2 nodes cannot be expressed"), std::string::npos) << err;
  EXPECT_NE(err.find("node 'sum' (ReduceSum): cannot be expressed in opset 12: its axes come from a non-constant "
                     "input ('axes')"),
            std::string::npos)
      << err;
  EXPECT_NE(err.find("node 'prod' (ReduceProd): cannot be expressed in opset 12"), std::string::npos) << err;
  EXPECT_EQ(err.find("relu"), std::string::npos) << err;
  // Nothing was converted.
  auto model = Import(b.Bytes());
  const std::string before = ir::DumpModel(*model);
  EXPECT_THROW(convert::ConvertOpset(*model, 12), InvalidArgumentError);
  EXPECT_EQ(ir::DumpModel(*model), before);
}

TEST(OpsetConversionReduce, NoopWithEmptyAxesHasNoOldForm) {
  ModelBuilder b(18);
  b.Input("x", kF, {2, 3});
  ModelBuilder::IntAttr(b.Node("ReduceMean", {"x"}, {"y"}, "mean"), "noop_with_empty_axes", 1);
  b.Output("y", kF, {});
  EXPECT_NE(ErrorOf(b.Bytes(), 17).find("noop_with_empty_axes=1"), std::string::npos);
}

// ---- Split / Squeeze / Unsqueeze ---------------------------------------------------------------------------

TEST(OpsetConversionSplit, SplitAttributeAndNumOutputs) {
  ModelBuilder b(11);
  b.Input("x", kF, {2, 6});
  auto& s = b.Node("Split", {"x"}, {"a", "b"}, "split");
  IntsAttr(s, "split", {2, 4});
  ModelBuilder::IntAttr(s, "axis", 1);
  auto& n = b.Node("Split", {"x"}, {"c", "d", "e"}, "thirds");
  ModelBuilder::IntAttr(n, "axis", 1);
  for (const char* o : {"a", "b", "c", "d", "e"}) b.Output(o, kF, {});
  const std::string bytes = b.Bytes();
  auto m = Converted(bytes, 18);
  EXPECT_EQ(Nodes(*m),
            "%a, %b = Split(%x, %split_split) {axis=1}\n"
            "%c, %d, %e = Split(%x) {axis=1, num_outputs=3}\n");
  ExpectRoundTrip(bytes, 11, 18);
  ExpectRoundTrip(bytes, 11, 13);
}

TEST(OpsetConversionSplit, UnevenNumOutputsBecomesSplitSizes) {
  ModelBuilder b(18);
  b.Input("x", kF, {7, 2});
  ModelBuilder::IntAttr(b.Node("Split", {"x"}, {"a", "b", "c"}, "split"), "num_outputs", 3);
  for (const char* o : {"a", "b", "c"}) b.Output(o, kF, {});
  auto m = Converted(b.Bytes(), 13);
  EXPECT_EQ(Nodes(*m), "%a, %b, %c = Split(%x, %split_split)\n");
  EXPECT_EQ(*convert::ConstantInts(m->graph->FindValue("split_split")), (std::vector<int64_t>{3, 3, 1}));
  ExpectRoundTrip(b.Bytes(), 18, 13);
  ExpectSameOutputs(b.Bytes(), ConvertedBytes(b.Bytes(), 11));
}

TEST(OpsetConversionSqueeze, AxesAttributeAndInput) {
  ModelBuilder b(12);
  b.Input("x", kF, {1, 3, 1});
  IntsAttr(b.Node("Squeeze", {"x"}, {"s"}, "squeeze"), "axes", {-1});
  IntsAttr(b.Node("Unsqueeze", {"s"}, {"u"}, "unsqueeze"), "axes", {0, 3});
  b.Output("u", kF, {});
  const std::string bytes = b.Bytes();
  auto m = Converted(bytes, 13);
  EXPECT_EQ(Nodes(*m),
            "%s = Squeeze(%x, %squeeze_axes)\n"
            "%u = Unsqueeze(%s, %unsqueeze_axes)\n");
  ExpectRoundTrip(bytes, 12, 13);
  ExpectRoundTrip(bytes, 12, 21);
  EXPECT_EQ(Nodes(*Converted(bytes, 10)),
            "%s = Squeeze(%x) {axes=[2]}\n"
            "%u = Unsqueeze(%s) {axes=[0,3]}\n");
}

// ---- Pad ---------------------------------------------------------------------------------------------------

TEST(OpsetConversionPad, AttributesBecomeInputsAndBack) {
  ModelBuilder b(10);
  b.Input("x", kF, {2, 3});
  auto& n = b.Node("Pad", {"x"}, {"y"}, "pad");
  IntsAttr(n, "pads", {0, 1, 1, 2});
  FloatAttr(n, "value", 1.5f);
  b.Output("y", kF, {});
  auto m = Converted(b.Bytes(), 11);
  EXPECT_EQ(Nodes(*m), "%y = Pad(%x, %pad_pads, %pad_value)\n");
  ExpectRoundTrip(b.Bytes(), 10, 11);
  ExpectRoundTrip(b.Bytes(), 10, 19);
}

TEST(OpsetConversionPad, AxesInputExpandsGoingDownAndWrapCannot) {
  ModelBuilder b(18);
  b.Input("x", kF, {2, 3, 4});
  b.Int64Initializer("pads", {4}, {1, 2, 0, 1});
  b.Int64Initializer("axes", {2}, {-1, 0});
  b.Node("Pad", {"x", "pads", "", "axes"}, {"y"}, "pad");
  b.Output("y", kF, {});
  auto m = Converted(b.Bytes(), 17);
  EXPECT_EQ(Nodes(*m), "%y = Pad(%x, %pad_pads)\n");
  EXPECT_EQ(*convert::ConstantInts(m->graph->FindValue("pad_pads")), (std::vector<int64_t>{2, 0, 1, 1, 0, 0}));
  ExpectSameOutputs(b.Bytes(), ConvertedBytes(b.Bytes(), 17));
  ExpectSameOutputs(b.Bytes(), ConvertedBytes(b.Bytes(), 7));

  ModelBuilder w(19);
  w.Input("x", kF, {2, 3});
  w.Int64Initializer("pads", {4}, {1, 1, 1, 1});
  StringAttr(w.Node("Pad", {"x", "pads"}, {"y"}, "wrap"), "mode", "wrap");
  w.Output("y", kF, {});
  EXPECT_NE(ErrorOf(w.Bytes(), 18)
                .find("node 'wrap' (Pad): cannot be expressed in opset 18: mode 'wrap' exists from "
                      "opset 19 only"),
            std::string::npos);
}

// ---- Clip / Dropout / BatchNormalization -----------------------------------------------------------------------

TEST(OpsetConversionClip, BoundsAttributesBecomeInputs) {
  ModelBuilder b(10);
  b.Input("x", kF, {4, 5});
  auto& n = b.Node("Clip", {"x"}, {"y"}, "clip");
  FloatAttr(n, "min", -0.25f);
  FloatAttr(n, "max", 0.5f);
  FloatAttr(b.Node("Clip", {"y"}, {"z"}, "lower_only"), "min", 0.0f);
  b.Output("z", kF, {});
  auto m = Converted(b.Bytes(), 11);
  EXPECT_EQ(Nodes(*m),
            "%y = Clip(%x, %clip_min, %clip_max)\n"
            "%z = Clip(%y, %lower_only_min)\n");
  ExpectRoundTrip(b.Bytes(), 10, 11);
  ExpectRoundTrip(b.Bytes(), 10, 13);

  ModelBuilder d(13);
  d.Input("x", kF, {4, 5});
  d.Input("lo", kF, {});
  d.Node("Clip", {"x", "lo"}, {"y"}, "dynamic");
  d.Output("y", kF, {});
  EXPECT_NE(ErrorOf(d.Bytes(), 10)
                .find("node 'dynamic' (Clip): cannot be expressed in opset 10: min ('lo') is not a "
                      "constant float scalar"),
            std::string::npos);
}

TEST(OpsetConversionDropout, RatioAttributeAndTrainingMode) {
  ModelBuilder b(11);
  b.Input("x", kF, {3, 4});
  FloatAttr(b.Node("Dropout", {"x"}, {"y"}, "drop"), "ratio", 0.25f);
  b.Output("y", kF, {});
  auto m = Converted(b.Bytes(), 12);
  EXPECT_EQ(Nodes(*m), "%y = Dropout(%x, %drop_ratio)\n");
  ExpectRoundTrip(b.Bytes(), 11, 12);
  ExpectRoundTrip(b.Bytes(), 11, 22);

  ModelBuilder t(13);
  t.Input("x", kF, {3, 4});
  t.Input("training", onnx::TensorProto::BOOL, {});
  t.Node("Dropout", {"x", "", "training"}, {"y"}, "train");
  t.Output("y", kF, {});
  EXPECT_NE(ErrorOf(t.Bytes(), 11).find("training_mode ('training') may be true"), std::string::npos);
}

TEST(OpsetConversionBatchNorm, TrainingModeAndOutputs) {
  ModelBuilder b(9);
  b.Input("x", kF, {2, 3, 4});
  b.FloatInitializer("s", {3}, {1.0f, 0.5f, 2.0f});
  b.FloatInitializer("bias", {3}, {0.1f, 0.2f, 0.3f});
  b.FloatInitializer("mean", {3}, {0.0f, 0.1f, -0.1f});
  b.FloatInitializer("var", {3}, {1.0f, 0.5f, 0.25f});
  b.Node("BatchNormalization", {"x", "s", "bias", "mean", "var"}, {"y"}, "bn");
  b.Output("y", kF, {});
  ExpectRoundTrip(b.Bytes(), 9, 15);
  EXPECT_EQ(Nodes(*Converted(b.Bytes(), 15)), "%y = BatchNormalization(%x, %s, %bias, %mean, %var)\n");

  ModelBuilder t(15);
  t.Input("x", kF, {2, 3, 4});
  for (const char* w : {"s", "bias", "mean", "var"}) t.FloatInitializer(w, {3}, {1.0f, 1.0f, 1.0f});
  ModelBuilder::IntAttr(t.Node("BatchNormalization", {"x", "s", "bias", "mean", "var"}, {"y", "rm", "rv"}, "bn"),
                        "training_mode", 1);
  t.Output("y", kF, {});
  t.Output("rm", kF, {});
  EXPECT_NE(ErrorOf(t.Bytes(), 13).find("training_mode=1 has no BatchNormalization-9 equivalent"), std::string::npos)
      << ErrorOf(t.Bytes(), 13);
}

// ---- Softmax family ------------------------------------------------------------------------------------------

std::string SoftmaxModel(int64_t opset, const std::string& op, std::optional<int64_t> axis,
                         std::initializer_list<int64_t> dims = {2, 3, 4}) {
  ModelBuilder b(opset);
  b.Input("x", kF, dims);
  auto& n = b.Node(op, {"x"}, {"y"}, "sm");
  if (axis) ModelBuilder::IntAttr(n, "axis", *axis);
  b.Output("y", kF, {});
  return b.Bytes();
}

TEST(OpsetConversionSoftmax, LastAxisCrossesAsIs) {
  auto m = Converted(SoftmaxModel(12, "Softmax", 2), 13);
  EXPECT_EQ(Nodes(*m), "%y = Softmax(%x) {axis=-1}\n");
  EXPECT_EQ(Nodes(*Converted(SoftmaxModel(13, "Softmax", std::nullopt), 12)), "%y = Softmax(%x) {axis=2}\n");
  ExpectRoundTrip(SoftmaxModel(12, "LogSoftmax", -1), 12, 13);
}

TEST(OpsetConversionSoftmax, CoercedAxisIsWrappedGoingUp) {
  // Softmax-12 over axis 1 of [2,3,4] normalizes over the 12 values of each row of the [2,12] view.
  for (const char* op : {"Softmax", "LogSoftmax", "Hardmax"}) {
    const std::string bytes = SoftmaxModel(11, op, std::nullopt);
    auto m = Converted(bytes, 13);
    EXPECT_EQ(Nodes(*m), "%y_2d = Flatten(%x) {axis=1}\n%y_2d_out = " + std::string(op) +
                             "(%y_2d) {axis=-1}\n%y = Reshape(%y_2d_out, %sm_shape)\n")
        << op;
    ExpectSameOutputs(bytes, ir::ExportModelBytes(*m));
  }
  // Unknown dims: the shape comes from a Shape node.
  ModelBuilder b(12);
  b.InputSym("x", kF, {-1, 3, 4}, "N");
  b.Node("Softmax", {"x"}, {"y"}, "sm");
  b.Output("y", kF, {});
  EXPECT_EQ(OpList(*Converted(b.Bytes(), 18)), "Flatten Softmax Shape Reshape");
}

TEST(OpsetConversionSoftmax, SingleAxisIsTransposedGoingDown) {
  for (const char* op : {"Softmax", "LogSoftmax", "Hardmax"}) {
    const std::string bytes = SoftmaxModel(13, op, 1);
    auto m = Converted(bytes, 12);
    EXPECT_EQ(Nodes(*m), "%x_t = Transpose(%x) {perm=[0,2,1]}\n%y_t = " + std::string(op) +
                             "(%x_t) {axis=2}\n%y = Transpose(%y_t) {perm=[0,2,1]}\n")
        << op;
    ExpectSameOutputs(bytes, ir::ExportModelBytes(*m));
    ExpectRoundTrip(bytes, 13, 9);
  }
  ModelBuilder b(13);
  b.Input("x", kF, {});
  ModelBuilder::IntAttr(b.Node("Softmax", {"x"}, {"y"}, "unranked"), "axis", 0);
  b.Output("y", kF, {});
  auto bytes = b.Bytes();
  bytes = [&] {
    onnx::ModelProto p;
    p.ParseFromString(bytes);
    p.mutable_graph()->mutable_input(0)->mutable_type()->mutable_tensor_type()->clear_shape();
    return p.SerializeAsString();
  }();
  EXPECT_NE(ErrorOf(bytes, 12).find("node 'unranked' (Softmax): cannot be expressed in opset 12: axis 0 of an input "
                                    "of unknown rank"),
            std::string::npos)
      << ErrorOf(bytes, 12);
}

// ---- Resize / Upsample ----------------------------------------------------------------------------------------

std::string UpsampleModel(int64_t opset, const std::string& mode, std::vector<float> scales) {
  ModelBuilder b(opset);
  b.Input("x", kF, {1, 2, 3, 4});
  auto& n = opset >= 9 ? b.Node("Upsample", {"x", "scales"}, {"y"}, "up") : b.Node("Upsample", {"x"}, {"y"}, "up");
  if (opset >= 9) {
    b.FloatInitializer("scales", {4}, scales);
  } else {
    FloatsAttr(n, "scales", scales);
  }
  StringAttr(n, "mode", mode);
  b.Output("y", kF, {});
  return b.Bytes();
}

TEST(OpsetConversionResize, UpsampleBecomesResizeAllTheWayUp) {
  const std::string bytes = UpsampleModel(7, "nearest", {1, 1, 2, 3});
  auto m = Converted(bytes, 19);
  EXPECT_EQ(Nodes(*m),
            "%y = Resize(%x, _, %up_scales) {mode=\"nearest\", coordinate_transformation_mode=\"asymmetric\", "
            "nearest_mode=\"floor\"}\n");
  ExpectSameOutputs(bytes, ir::ExportModelBytes(*m));
  ExpectRoundTrip(bytes, 7, 19);
  ExpectRoundTrip(UpsampleModel(9, "linear", {1, 1, 2, 1.5f}), 9, 13);
  ExpectRoundTrip(UpsampleModel(9, "nearest", {1, 1, 2, 2}), 9, 10);
}

TEST(OpsetConversionResize, Resize13WithSizesGoesDownAsScales) {
  ModelBuilder b(13);
  b.Input("x", kF, {1, 1, 4, 4});
  b.Int64Initializer("sizes", {4}, {1, 1, 8, 2});
  auto& n = b.Node("Resize", {"x", "", "", "sizes"}, {"y"}, "resize");
  StringAttr(n, "coordinate_transformation_mode", "asymmetric");
  StringAttr(n, "mode", "linear");
  b.Output("y", kF, {});
  auto m = Converted(b.Bytes(), 10);
  EXPECT_EQ(Nodes(*m), "%y = Resize(%x, %resize_scales_2) {mode=\"linear\"}\n");
  ExpectSameOutputs(b.Bytes(), ir::ExportModelBytes(*m));
  EXPECT_EQ(Nodes(*Converted(b.Bytes(), 11)),
            "%y = Resize(%x, %resize_roi, %resize_scales, %sizes) {coordinate_transformation_mode=\"asymmetric\", "
            "mode=\"linear\"}\n");
  ExpectRoundTrip(b.Bytes(), 13, 11);
  ExpectRoundTrip(b.Bytes(), 13, 19);
}

TEST(OpsetConversionResize, WhatOlderResizesCannotSay) {
  ModelBuilder b(19);
  b.Input("x", kF, {1, 1, 4, 4});
  b.FloatInitializer("scales", {2}, {2, 2});
  auto& a = b.Node("Resize", {"x", "", "scales"}, {"y"}, "axes_resize");
  IntsAttr(a, "axes", {2, 3});
  StringAttr(a, "mode", "cubic");
  auto& c = b.Node("Resize", {"x", "", "scales"}, {"z"}, "antialiased");
  IntsAttr(c, "axes", {-2, -1});
  ModelBuilder::IntAttr(c, "antialias", 1);
  StringAttr(c, "mode", "linear");
  auto& d = b.Node("Resize", {"y", "", "scales"}, {"w"}, "symmetric");
  IntsAttr(d, "axes", {2, 3});
  StringAttr(d, "coordinate_transformation_mode", "half_pixel_symmetric");
  b.Output("z", kF, {});
  b.Output("w", kF, {});
  const std::string err = ErrorOf(b.Bytes(), 17);
  EXPECT_NE(err.find("2 nodes cannot be expressed"), std::string::npos) << err;
  EXPECT_NE(err.find("node 'antialiased' (Resize): cannot be expressed in opset 17: antialias=1 exists from opset 18 "
                     "only"),
            std::string::npos)
      << err;
  EXPECT_NE(err.find("node 'symmetric' (Resize): cannot be expressed in opset 17: coordinate_transformation_mode "
                     "'half_pixel_symmetric' exists from opset 19 only"),
            std::string::npos)
      << err;
  // axes with constant scales expand to every axis; cubic goes down to 11 but not 10.
  ModelBuilder ok(18);
  ok.Input("x", kF, {1, 1, 4, 4});
  ok.FloatInitializer("scales", {2}, {2, 0.5f});
  auto& e = ok.Node("Resize", {"x", "", "scales"}, {"y"}, "cubic");
  IntsAttr(e, "axes", {2, 3});
  StringAttr(e, "mode", "cubic");
  ok.Output("y", kF, {});
  ExpectSameOutputs(ok.Bytes(), ConvertedBytes(ok.Bytes(), 11));
  EXPECT_NE(ErrorOf(ok.Bytes(), 10).find("mode 'cubic' does not exist in Resize-10"), std::string::npos)
      << ErrorOf(ok.Bytes(), 10);
}

// ---- decompositions going below the op's first opset ---------------------------------------------------------

TEST(OpsetConversionDecompose, LayerNormalizationBelow17) {
  ModelBuilder b(17);
  b.Input("x", kF, {2, 3, 8});
  b.FloatInitializer("g", {8}, {1, 2, 0.5f, 1, 1, 1, 3, 1});
  b.FloatInitializer("bias", {8}, {0, 0.1f, 0, 0, 0.2f, 0, 0, 0});
  auto& n = b.Node("LayerNormalization", {"x", "g", "bias"}, {"y", "mean"}, "ln");
  FloatAttr(n, "epsilon", 1e-3f);
  b.Output("y", kF, {});
  b.Output("mean", kF, {});
  const std::string bytes = b.Bytes();
  convert::OpsetConversion report;
  auto m = Converted(bytes, 13, &report);
  // The legalization decomposition (legalize/decompose_layer_normalization.cc), Mean its ReduceMean.
  EXPECT_EQ(OpList(*m), "ReduceMean Sub Mul ReduceMean Add Sqrt Div Mul Add");
  EXPECT_EQ(report.by_adapter.at("layer-norm-decompose"), 1);
  EXPECT_EQ(report.nodes_added, 9);
  ExpectSameOutputs(bytes, ir::ExportModelBytes(*m), 1e-5);
  ExpectSameOutputs(bytes, ConvertedBytes(bytes, 18), 1e-5);  // the ReduceMeans go on to 18 with axes inputs
  // axis 1 of a rank-3 input reduces [1, 2]; below 11 the helpers' axes stay non-negative.
  ModelBuilder c(17);
  c.Input("x", kF, {2, 3, 4});
  c.FloatInitializer("g", {3, 4}, std::vector<float>(12, 1.5f));
  ModelBuilder::IntAttr(c.Node("LayerNormalization", {"x", "g"}, {"y"}, "ln"), "axis", 1);
  c.Output("y", kF, {});
  ExpectSameOutputs(c.Bytes(), ConvertedBytes(c.Bytes(), 9), 1e-5);
}

TEST(OpsetConversionDecompose, ActivationsBelowTheirOpset) {
  ModelBuilder b(20);
  b.Input("x", kF, {3, 7});
  b.Node("HardSwish", {"x"}, {"h"}, "hswish");
  b.Node("Mish", {"h"}, {"m"}, "mish");
  b.Node("Gelu", {"m"}, {"g"}, "gelu");
  StringAttr(b.Node("Gelu", {"g"}, {"t"}, "gelu_tanh"), "approximate", "tanh");
  b.Output("t", kF, {});
  const std::string bytes = b.Bytes();
  auto m = Converted(bytes, 13);
  // The legalization decompositions (legalize/decompose_hard_swish.cc, _mish.cc, _gelu.cc).
  EXPECT_EQ(OpList(*m), "Mul Add Clip Mul Clip Exp Add Mul Add Div Mul Mul Mul Erf Add Mul Mul Mul Mul Mul Add Mul "
                        "Tanh Add Mul");
  ExpectSameOutputs(bytes, ir::ExportModelBytes(*m), 1e-5);
  // Going up nothing is decomposed.
  EXPECT_EQ(OpList(*Converted(bytes, 22)), "HardSwish Mish Gelu Gelu");
}

// ---- smaller adapters ----------------------------------------------------------------------------------------

TEST(OpsetConversionMisc, GemmWithoutCGetsAZeroBelow11) {
  ModelBuilder b(13);
  b.Input("a", kF, {2, 3});
  b.FloatInitializer("w", {3, 4}, std::vector<float>(12, 0.25f));
  b.Node("Gemm", {"a", "w"}, {"y"}, "gemm");
  b.Output("y", kF, {});
  auto m = Converted(b.Bytes(), 9);
  EXPECT_EQ(Nodes(*m), "%y = Gemm(%a, %w, %gemm_c)\n");
  ExpectSameOutputs(b.Bytes(), ir::ExportModelBytes(*m));
}

TEST(OpsetConversionMisc, VariadicBroadcastOnlyGoesDownWithEqualShapes) {
  ModelBuilder b(13);
  b.Input("x", kF, {2, 3});
  b.Input("y", kF, {2, 3});
  b.Input("z", kF, {1, 3});
  b.Node("Max", {"x", "y"}, {"same"}, "max_same");
  b.Node("Sum", {"x", "z"}, {"bcast"}, "sum_bcast");
  b.Output("same", kF, {});
  b.Output("bcast", kF, {});
  const std::string err = ErrorOf(b.Bytes(), 7);
  EXPECT_NE(err.find("1 node cannot be expressed"), std::string::npos) << err;
  EXPECT_NE(err.find("node 'sum_bcast' (Sum): cannot be expressed in opset 7: inputs 'x' and 'z' may broadcast"),
            std::string::npos)
      << err;
}

TEST(OpsetConversionMisc, ConstantReshapeShapeCastLike) {
  ModelBuilder b(15);
  b.Input("x", kF, {2, 3, 4});
  auto& c = b.Node("Constant", {}, {"shape"}, "const");
  auto* a = c.add_attribute();
  a->set_name("value_ints");
  a->set_type(onnx::AttributeProto::INTS);
  for (int64_t v : {4, 6}) a->add_ints(v);
  ModelBuilder::IntAttr(b.Node("Reshape", {"x", "shape"}, {"r"}, "reshape"), "allowzero", 1);
  auto& s = b.Node("Shape", {"r"}, {"dims"}, "shape_of");
  ModelBuilder::IntAttr(s, "start", 1);
  b.Node("CastLike", {"dims", "x"}, {"dims_f"}, "castlike");
  b.Output("r", kF, {});
  b.Output("dims_f", kF, {});
  const std::string bytes = b.Bytes();
  auto m = Converted(bytes, 11);
  EXPECT_EQ(OpList(*m), "Constant Reshape Shape Slice Cast");
  ExpectSameOutputs(bytes, ir::ExportModelBytes(*m));
  ExpectSameOutputs(bytes, ConvertedBytes(bytes, 9));
}

TEST(OpsetConversionMisc, SliceAndTopKAttributesBecomeInputs) {
  ModelBuilder b(9);
  b.Input("x", kF, {4, 6});
  auto& s = b.Node("Slice", {"x"}, {"s"}, "slice");
  IntsAttr(s, "starts", {1, 0});
  IntsAttr(s, "ends", {3, 100});
  IntsAttr(s, "axes", {0, 1});
  ModelBuilder::IntAttr(b.Node("TopK", {"s"}, {"v", "i"}, "topk"), "k", 2);
  b.Output("v", kF, {});
  b.Output("i", kI64, {});
  const std::string bytes = b.Bytes();
  auto m = Converted(bytes, 13);
  EXPECT_EQ(Nodes(*m),
            "%s = Slice(%x, %slice_starts, %slice_ends, %slice_axes)\n"
            "%v, %i = TopK(%s, %topk_k)\n");
  ExpectRoundTrip(bytes, 9, 13);
}

TEST(OpsetConversionMisc, ScatterBecomesScatterElements) {
  ModelBuilder b(9);
  b.Input("x", kF, {3, 3});
  b.Int64Initializer("idx", {1, 3}, {2, 0, 1});
  b.FloatInitializer("upd", {1, 3}, {7, 8, 9});
  b.Node("Scatter", {"x", "idx", "upd"}, {"y"}, "scatter");
  b.Output("y", kF, {});
  auto m = Converted(b.Bytes(), 16);
  EXPECT_EQ(OpList(*m), "ScatterElements");
  ExpectRoundTrip(b.Bytes(), 9, 16);
}

TEST(OpsetConversionMisc, GroupNormalizationScalePerGroupAndPerChannel) {
  ModelBuilder b(18);
  b.Input("x", kF, {2, 4, 3});
  b.FloatInitializer("s", {2}, {1.5f, 0.5f});
  b.FloatInitializer("bias", {2}, {0.1f, -0.2f});
  ModelBuilder::IntAttr(b.Node("GroupNormalization", {"x", "s", "bias"}, {"y"}, "gn"), "num_groups", 2);
  b.Output("y", kF, {});
  auto m = Converted(b.Bytes(), 21);
  EXPECT_EQ(*convert::ConstantFloats(m->graph->FindValue("gn_scale")), (std::vector<double>{1.5, 1.5, 0.5, 0.5}));
  ExpectRoundTrip(b.Bytes(), 18, 21);
}

// ---- the generic rule ----------------------------------------------------------------------------------------

TEST(OpsetConversionGeneric, TypesAndOpsTheTargetLacks) {
  ModelBuilder b(17);
  b.Input("x", kF, {2, 3});
  b.Input("e", onnx::TensorProto::INT32, {});
  b.Input("i", onnx::TensorProto::INT32, {2, 3});
  b.Node("Pow", {"x", "e"}, {"p"}, "pow_int_exponent");  // Pow-7's exponent is a float
  b.Node("Relu", {"i"}, {"r"}, "relu_int");              // Relu-6 is float only (int since 14)
  b.Node("CumSum", {"x", "e"}, {"c"}, "cumsum");         // CumSum exists from 11
  b.Node("Abs", {"x"}, {"a"}, "abs");                    // fine
  for (const char* o : {"p", "r", "c", "a"}) b.Output(o, o[0] == 'r' ? onnx::TensorProto::INT32 : kF, {});
  const std::string err = ErrorOf(b.Bytes(), 10);
  EXPECT_NE(err.find("3 nodes cannot be expressed"), std::string::npos) << err;
  EXPECT_NE(err.find("node 'pow_int_exponent' (Pow): cannot be expressed in opset 10: input 'e' is int32, which Pow-7 "
                     "does not accept"),
            std::string::npos)
      << err;
  EXPECT_NE(err.find("node 'relu_int' (Relu): cannot be expressed in opset 10: input 'i' is int32, which Relu-13 does "
                     "not accept"),
            std::string::npos)
      << err;
  EXPECT_NE(err.find("node 'cumsum' (CumSum): cannot be expressed in opset 10: CumSum does not exist before opset 11"),
            std::string::npos)
      << err;
  // Up, all of them convert, and attribute defaults that are the old behaviour stay implicit.
  auto m = Converted(b.Bytes(), 21);
  EXPECT_EQ(m->opsets.at(""), 21);
  EXPECT_GE(m->ir_version, 10);
  for (const auto& n : m->graph->nodes()) EXPECT_EQ(n->opset(), 21) << n->Describe();
}

TEST(OpsetConversionGeneric, DroppedAttributesMustHoldTheirDefault) {
  ModelBuilder b(13);
  b.Input("x", kF, {2, 3});
  ModelBuilder::IntAttr(b.Node("ArgMax", {"x"}, {"a"}, "argmax_first"), "select_last_index", 0);
  ModelBuilder::IntAttr(b.Node("ArgMax", {"x"}, {"l"}, "argmax_last"), "select_last_index", 1);
  b.Output("a", kI64, {});
  b.Output("l", kI64, {});
  const std::string err = ErrorOf(b.Bytes(), 11);
  EXPECT_NE(err.find("node 'argmax_last' (ArgMax): cannot be expressed in opset 11: attribute select_last_index=1 "
                     "has no equivalent in ArgMax-11"),
            std::string::npos)
      << err;
  EXPECT_EQ(err.find("argmax_first"), std::string::npos) << err;
}

TEST(OpsetConversionGeneric, SubgraphsAndNegativeIndices) {
  // An If whose branches hold a ReduceSum and a Gather: both are converted inside the subgraphs.
  ModelBuilder b(13);
  b.Input("cond", onnx::TensorProto::BOOL, {});
  b.Input("x", kF, {3, 4});
  b.Int64Initializer("axes", {1}, {1});
  b.Int64Initializer("idx", {2}, {-1, 0});
  auto& n = b.Node("If", {"cond"}, {"y"}, "if");
  auto branch = [&](const char* name, bool reduce) {
    auto* a = n.add_attribute();
    a->set_name(name);
    a->set_type(onnx::AttributeProto::GRAPH);
    auto* g = a->mutable_g();
    g->set_name(name);
    auto* node = g->add_node();
    node->set_name(std::string(name) + "_op");
    node->set_op_type(reduce ? "ReduceSum" : "Gather");
    node->add_input("x");
    node->add_input(reduce ? "axes" : "idx");
    node->add_output(std::string(name) + "_out");
    if (!reduce) {
      auto* ax = node->add_attribute();
      ax->set_name("axis");
      ax->set_type(onnx::AttributeProto::INT);
      ax->set_i(1);
    }
    auto* o = g->add_output();
    o->set_name(std::string(name) + "_out");
    o->mutable_type()->mutable_tensor_type()->set_elem_type(kF);
  };
  branch("then_branch", true);
  branch("else_branch", false);
  b.Output("y", kF, {});
  const std::string bytes = b.Bytes();
  const std::string err = ErrorOf(bytes, 10);
  EXPECT_NE(err.find("node 'else_branch_op' (Gather): cannot be expressed in opset 10: its constant indices are "
                     "negative"),
            std::string::npos)
      << err;
  auto m = Converted(bytes, 12);
  const ir::Graph* then = m->graph->nodes()[0]->GetGraph("then_branch");
  ASSERT_NE(then, nullptr);
  EXPECT_EQ(then->nodes()[0]->GetInts("axes"), (std::vector<int64_t>{1}));
  EXPECT_EQ(then->nodes()[0]->opset(), 12);
  ExpectRoundTrip(bytes, 13, 12);
  ExpectRoundTrip(bytes, 13, 18);
}

TEST(OpsetConversionGeneric, TargetsOutsideTheRangeAreRejected) {
  auto model = Import(ReduceModel(17, "ReduceMean", false));
  EXPECT_THROW(convert::ConvertOpset(*model, 6), InvalidArgumentError);
  EXPECT_THROW(convert::ConvertOpset(*model, schemas::SchemaRegistry::Get().MaxOpset("") + 1), InvalidArgumentError);
  const auto r = convert::ConvertOpset(*model, 17);
  EXPECT_EQ(r.nodes_changed, 0);
  EXPECT_EQ(convert::FormatOpsetConversion(r), "opset 17 -> 17: 0 of 1 nodes rewritten");
}

TEST(OpsetConversionGeneric, InputsSharingATypeVariableMustAgree) {
  ModelBuilder b(15);
  b.Input("x", kF, {2, 3});
  b.Input("e", onnx::TensorProto::DOUBLE, {});
  b.Node("Pow", {"x", "e"}, {"p"}, "pow");  // Pow-15: X and Y may differ; Pow-7: both are T
  b.Output("p", kF, {});
  const std::string err = ErrorOf(b.Bytes(), 11);
  EXPECT_NE(err.find("node 'pow' (Pow): cannot be expressed in opset 11: inputs 'x' (float32) and 'e' (float64) must "
                     "have one type in Pow-7"),
            std::string::npos)
      << err;
}

TEST(OpsetConversionGeneric, ConvertingAgainChangesNothing) {
  ModelBuilder b(17);
  b.Input("x", kF, {2, 3, 8});
  b.FloatInitializer("g", {8}, std::vector<float>(8, 1.0f));
  b.Node("LayerNormalization", {"x", "g"}, {"y"}, "ln");
  IntsAttr(b.Node("ReduceMean", {"y"}, {"m"}, "mean"), "axes", {1});
  b.Output("m", kF, {});
  auto m = Converted(b.Bytes(), 13);
  const std::string once = ir::DumpModel(*m);
  const auto again = convert::ConvertOpset(*m, 13);
  EXPECT_EQ(again.nodes_changed, 0);
  EXPECT_EQ(again.nodes_added, 0);
  EXPECT_EQ(ir::DumpModel(*m), once);
}

TEST(OpsetConversionGeneric, ModelLocalFunctionsAreConvertedToo) {
  ModelBuilder b(13);
  b.Input("x", kF, {2, 3});
  auto& call = b.Node("SumRows", {"x"}, {"y"}, "call");
  call.set_domain("local");
  auto* op = b.proto().add_opset_import();
  op->set_domain("local");
  op->set_version(1);
  auto* f = b.proto().add_functions();
  f->set_name("SumRows");
  f->set_domain("local");
  f->add_input("in");
  f->add_output("out");
  auto* fo = f->add_opset_import();
  fo->set_domain("");
  fo->set_version(13);
  auto* c = f->add_node();
  c->set_op_type("Constant");
  c->add_output("axes");
  auto* v = c->add_attribute();
  v->set_name("value_ints");
  v->set_type(onnx::AttributeProto::INTS);
  v->add_ints(1);
  auto* r = f->add_node();
  r->set_op_type("ReduceSum");
  r->add_input("in");
  r->add_input("axes");
  r->add_output("out");
  b.Output("y", kF, {});
  const std::string bytes = b.Bytes();
  auto m = Import(bytes);
  convert::ConvertOpset(*m, 12);
  ASSERT_EQ(m->functions.size(), 1u);
  EXPECT_EQ(m->functions[0].opsets.at(""), 12);
  bool found = false;
  for (const auto& n : m->functions[0].body->nodes()) {
    if (n->op_type() == "ReduceSum") {
      found = true;
      EXPECT_EQ(n->GetInts("axes"), (std::vector<int64_t>{1}));
      EXPECT_EQ(n->num_inputs(), 1u);
    }
  }
  EXPECT_TRUE(found);
  ExpectSameOutputs(bytes, ir::ExportModelBytes(*m));
}

TEST(OpsetConversionMisc, RenamedModesAndMovedAttributes) {
  // GridSample's modes were renamed at 20; RoiAlign's coordinates became an attribute at 16.
  ModelBuilder g(16);
  g.Input("x", kF, {1, 2, 4, 5});
  g.Input("grid", kF, {1, 3, 3, 2});
  StringAttr(g.Node("GridSample", {"x", "grid"}, {"y"}, "sample"), "mode", "bicubic");
  g.Output("y", kF, {});
  auto m = Converted(g.Bytes(), 20);
  EXPECT_EQ(Nodes(*m), "%y = GridSample(%x, %grid) {mode=\"cubic\"}\n");
  ExpectRoundTrip(g.Bytes(), 16, 20);

  ModelBuilder r(10);
  r.Input("x", kF, {1, 2, 6, 6});
  r.FloatInitializer("rois", {2, 4}, {0, 0, 3, 3, 1, 1, 5, 4});
  r.Int64Initializer("batch", {2}, {0, 0});
  auto& n = r.Node("RoiAlign", {"x", "rois", "batch"}, {"y"}, "roi");
  ModelBuilder::IntAttr(n, "output_height", 2);
  ModelBuilder::IntAttr(n, "output_width", 2);
  r.Output("y", kF, {});
  EXPECT_EQ(Nodes(*Converted(r.Bytes(), 16)),
            "%y = RoiAlign(%x, %rois, %batch) {output_height=2, output_width=2, "
            "coordinate_transformation_mode=\"output_half_pixel\"}\n");
  ExpectRoundTrip(r.Bytes(), 10, 16);

  // MaxPool's Indices and per-axis quantization scales have no older form.
  ModelBuilder p(13);
  p.Input("x", kF, {1, 1, 4, 4});
  p.Input("q", onnx::TensorProto::UINT8, {1, 2, 2});
  IntsAttr(p.Node("MaxPool", {"x"}, {"y", "idx"}, "pool"), "kernel_shape", {2, 2});
  p.FloatInitializer("scale", {2}, {0.5f, 0.25f});
  ModelBuilder::IntAttr(p.Node("DequantizeLinear", {"q", "scale"}, {"dq"}, "dequant"), "axis", 1);
  p.Output("y", kF, {});
  p.Output("idx", kI64, {});
  p.Output("dq", kF, {});
  const std::string err = ErrorOf(p.Bytes(), 7);
  EXPECT_NE(err.find("node 'pool' (MaxPool): cannot be expressed in opset 7: its Indices output is used"),
            std::string::npos)
      << err;
  EXPECT_NE(err.find("node 'dequant' (DequantizeLinear): cannot be expressed in opset 7: "), std::string::npos) << err;
  EXPECT_NE(ErrorOf(p.Bytes(), 12)
                .find("node 'dequant' (DequantizeLinear): cannot be expressed in opset 12: its "
                      "scale may be per-axis"),
            std::string::npos);
}

TEST(OpsetConversionMisc, DftAxisAttributeAndInput) {
  ModelBuilder b(17);
  b.Input("x", kF, {2, 8, 1});
  b.Node("DFT", {"x"}, {"y"}, "dft");
  b.Output("y", kF, {});
  auto m = Converted(b.Bytes(), 20);
  EXPECT_EQ(Nodes(*m), "%y = DFT(%x, _, %dft_axis)\n");
  ExpectRoundTrip(b.Bytes(), 17, 20);
}

TEST(OpsetConversionGeneric, IrVersionFollowsTheOpset) {
  auto m = Import(ReduceModel(17, "ReduceMean", false));  // IR 8
  convert::ConvertOpset(*m, 13);
  EXPECT_EQ(m->ir_version, 7);  // ONNX 1.8's IR, which runtimes of opset 13 load
  convert::ConvertOpset(*m, 21);
  EXPECT_EQ(m->ir_version, 10);
}

TEST(OpsetConversionTool, OptimizeConvertsBeforeThePasses) {
  const std::string path = testing::WriteTempFile(ReduceModel(17, "ReduceMean", false), "reduce.onnx");
  tools::OptimizeOptions options;
  options.level = 1;
  options.opset = 18;
  const tools::OptimizeResult r = tools::OptimizeModelFile(path, options);
  ASSERT_TRUE(r.conversion.has_value());
  EXPECT_EQ(r.model->opsets.at(""), 18);
  EXPECT_NE(tools::FormatOptimizeText(r).find("  opset 17 -> 18: 1 of 1 nodes rewritten (reduce-axes 1)\n"),
            std::string::npos)
      << tools::FormatOptimizeText(r);
  EXPECT_NE(tools::FormatOptimizeJson(r).find("\"opset_conversion\""), std::string::npos);
  options.opset = 3;
  EXPECT_THROW(tools::ValidateOptimizeOptions(options), InvalidArgumentError);
}

}  // namespace
}  // namespace ferry
