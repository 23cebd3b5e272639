// cpu Resize / Upsample (float32) against ref: every mode x nearest_mode x coordinate_transformation_mode, 1-D to
// 3-D spatial data, up- and down-scaling, scales vs sizes, constant vs run-time scales, axes and
// keep_aspect_ratio_policy, older opsets, two threads; nearest bit for bit, linear / cubic within 1e-5. Antialias
// falls back to ref; a wrong scales length is a Prepare error naming the node.
#include <gtest/gtest.h>

#include <random>
#include <string>
#include <vector>

#include "testing/op_harness.h"

namespace ferry::testing {
namespace {

Tensor F32s(const std::vector<float>& v) {
  Tensor t(DataType::kFloat, {static_cast<int64_t>(v.size())});
  for (size_t i = 0; i < v.size(); ++i) t.data<float>()[i] = v[i];
  return t;
}

Tensor I64s(const std::vector<int64_t>& v) {
  Tensor t(DataType::kInt64, {static_cast<int64_t>(v.size())});
  for (size_t i = 0; i < v.size(); ++i) t.data<int64_t>()[i] = v[i];
  return t;
}

struct Mode {
  std::string mode, nearest;
  float cubic_a = -0.75f;
  int exclude_outside = 0;
};

const std::vector<Mode>& Modes() {
  static const std::vector<Mode> kModes = {
      {"nearest", "round_prefer_floor"}, {"nearest", "round_prefer_ceil"}, {"nearest", "floor"},
      {"nearest", "ceil"},               {"linear", ""},                   {"cubic", "", -0.75f, 0},
      {"cubic", "", -0.5f, 1},
  };
  return kModes;
}

// Resize-19 of x by `factors` on the spatial axes (N and C kept), with scales or sizes, constant or not.
OpTest ResizeTest(const Tensor& x, const std::vector<double>& factors, const Mode& m, const std::string& coord,
                  bool use_sizes, bool constant, int threads) {
  const int64_t rank = x.rank();
  std::vector<float> scales(static_cast<size_t>(rank), 1.0f), roi_start, roi_end;
  std::vector<int64_t> sizes(x.shape().begin(), x.shape().end());
  for (size_t i = 0; i < factors.size(); ++i) {
    const size_t a = static_cast<size_t>(rank) - factors.size() + i;
    scales[a] = static_cast<float>(factors[i]);
    sizes[a] = std::max<int64_t>(1, static_cast<int64_t>(static_cast<double>(x.dim(static_cast<int64_t>(a))) *
                                                         factors[i] + 0.5));
  }
  for (int64_t a = 0; a < rank; ++a) {
    const bool spatial = a >= 2;
    roi_start.push_back(spatial ? -0.1f * static_cast<float>(a - 1) : 0.0f);
    roi_end.push_back(spatial ? 0.7f + 0.25f * static_cast<float>(a - 1) : 1.0f);
  }
  roi_start.insert(roi_start.end(), roi_end.begin(), roi_end.end());
  auto in = [&](const std::string& name, Tensor t) { return constant ? Const(name, t) : In(name, t); };
  OpTest t{.op = "Resize", .opset = 19, .threads = threads};
  t.inputs = {In("x", x), coord == "tf_crop_and_resize" ? in("roi", F32s(roi_start)) : Omitted(),
              use_sizes ? Omitted() : in("scales", F32s(scales))};
  if (use_sizes) t.inputs.push_back(in("sizes", I64s(sizes)));
  t.attributes = {Str("mode", m.mode), Str("coordinate_transformation_mode", coord),
                  Float("cubic_coeff_a", m.cubic_a), Int("exclude_outside", m.exclude_outside),
                  Float("extrapolation_value", 7.5f)};
  if (!m.nearest.empty()) t.attributes.push_back(Str("nearest_mode", m.nearest));
  if (m.mode == "nearest") t.rtol = t.atol = 0;
  return t;
}

TEST(CpuResize, EveryModeAndCoordinateModeOn1To3SpatialAxes) {
  std::mt19937 rng(901);
  const std::vector<std::string> coords = {"half_pixel",   "half_pixel_symmetric", "pytorch_half_pixel",
                                           "align_corners", "asymmetric",          "tf_crop_and_resize"};
  const std::vector<std::vector<double>> up = {{2.0}, {2.0, 1.5}, {1.5, 2.0, 3.0}};
  const std::vector<std::vector<double>> down = {{0.5}, {0.6, 0.75}, {0.5, 0.7, 0.8}};
  const std::vector<Shape> shapes = {{2, 3, 11}, {1, 3, 7, 9}, {1, 2, 5, 6, 7}};
  int it = 0;
  for (size_t r = 0; r < shapes.size(); ++r) {
    const Tensor x = RandomTensor(DataType::kFloat, shapes[r], rng, -2, 2);
    for (const Mode& m : Modes()) {
      for (const std::string& coord : coords) {
        for (int dir = 0; dir < 2; ++dir) {
          const bool sizes = (it & 1) != 0;
          const int threads = 1 + ((it >> 1) & 1);
          ++it;
          EXPECT_TRUE(MatchesRef(ResizeTest(x, dir ? down[r] : up[r], m, coord, sizes, true, threads), "cpu"))
              << m.mode << " " << m.nearest << " " << coord << " rank " << shapes[r].size() << (dir ? " down" : " up")
              << (sizes ? " sizes" : " scales") << " a=" << m.cubic_a << " excl=" << m.exclude_outside;
        }
      }
    }
  }
}

TEST(CpuResize, RunTimeScalesAndSizes) {
  std::mt19937 rng(902);
  const Tensor x = RandomTensor(DataType::kFloat, {2, 3, 6, 5}, rng);
  for (const Mode& m : Modes()) {
    EXPECT_TRUE(MatchesRef(ResizeTest(x, {1.7, 0.8}, m, "half_pixel", false, false, 2), "cpu")) << m.mode;
    EXPECT_TRUE(MatchesRef(ResizeTest(x, {2.0, 2.0}, m, "tf_crop_and_resize", true, false, 1), "cpu")) << m.mode;
  }
}

TEST(CpuResize, LargeTwoTimesUpsamplingOnTwoThreads) {
  std::mt19937 rng(903);
  const Tensor x = RandomTensor(DataType::kFloat, {2, 16, 33, 47}, rng);
  for (const Mode& m : {Modes()[0], Modes()[4], Modes()[5]}) {
    for (const char* coord : {"half_pixel", "asymmetric", "align_corners"}) {
      EXPECT_TRUE(MatchesRef(ResizeTest(x, {2.0, 2.0}, m, coord, false, true, 2), "cpu")) << m.mode << " " << coord;
    }
  }
  // Resizing N and C too, and a 1-D tensor.
  EXPECT_TRUE(MatchesRef(ResizeTest(x, {1.5, 0.5, 2.0, 1.0}, Modes()[4], "half_pixel", false, true, 2), "cpu"));
  const Tensor v = RandomTensor(DataType::kFloat, {40}, rng);
  EXPECT_TRUE(MatchesRef(ResizeTest(v, {2.5}, Modes()[5], "half_pixel", false, true, 1), "cpu"));
}

TEST(CpuResize, AxesAndKeepAspectRatioPolicy) {
  std::mt19937 rng(904);
  const Tensor x = RandomTensor(DataType::kFloat, {1, 2, 6, 9}, rng);
  for (const std::string policy : {"stretch", "not_larger", "not_smaller"}) {
    for (const std::string mode : {"nearest", "linear"}) {
      OpTest t{.op = "Resize", .opset = 18};
      t.inputs = {In("x", x), Omitted(), Omitted(), Const("sizes", I64s({10, 12}))};
      t.attributes = {Str("mode", mode), Ints("axes", {2, -1}), Str("keep_aspect_ratio_policy", policy)};
      EXPECT_TRUE(MatchesRef(t, "cpu")) << policy << " " << mode;
    }
  }
  OpTest t{.op = "Resize", .opset = 18};
  t.inputs = {In("x", x), Omitted(), Const("scales", F32s({0.5f}))};
  t.attributes = {Str("mode", "cubic"), Ints("axes", {3})};
  EXPECT_TRUE(MatchesRef(t, "cpu"));
}

TEST(CpuResize, OlderOpsetsAndUpsample) {
  std::mt19937 rng(905);
  const Tensor x = RandomTensor(DataType::kFloat, {1, 2, 5, 7}, rng);
  for (const std::string mode : {"nearest", "linear"}) {
    for (const std::vector<float>& s : {std::vector<float>{1, 1, 2, 3}, std::vector<float>{1, 1, 0.6f, 0.5f}}) {
      OpTest r10{.op = "Resize", .opset = 10, .inputs = {In("x", x), Const("scales", F32s(s))},
                 .attributes = {Str("mode", mode)}};
      EXPECT_TRUE(MatchesRef(r10, "cpu")) << mode;
      OpTest u9{.op = "Upsample", .opset = 9, .inputs = {In("x", x), Const("scales", F32s(s))},
                .attributes = {Str("mode", mode)}};
      EXPECT_TRUE(MatchesRef(u9, "cpu")) << mode;
      OpTest u7{.op = "Upsample", .opset = 7, .inputs = {In("x", x)},
                .attributes = {Str("mode", mode), Floats("scales", s)}};
      EXPECT_TRUE(MatchesRef(u7, "cpu")) << mode;
    }
  }
  OpTest r11{.op = "Resize", .opset = 11};
  r11.inputs = {In("x", x), Const("roi", F32s({})), Const("scales", F32s({1, 1, 1.5f, 2.5f}))};
  r11.attributes = {Str("mode", "nearest"), Str("coordinate_transformation_mode", "tf_half_pixel_for_nn")};
  EXPECT_TRUE(MatchesRef(r11, "cpu"));
  OpTest r13{.op = "Resize", .opset = 13};
  r13.inputs = {In("x", x), Omitted(), Omitted(), Const("sizes", I64s({1, 2, 9, 4}))};
  r13.attributes = {Str("mode", "cubic"), Str("coordinate_transformation_mode", "pytorch_half_pixel")};
  EXPECT_TRUE(MatchesRef(r13, "cpu"));
}

TEST(CpuResize, AntialiasFallsBackToRef) {
  std::mt19937 rng(906);
  OpTest t{.op = "Resize", .opset = 18};
  t.inputs = {In("x", RandomTensor(DataType::kFloat, {1, 1, 8, 8}, rng)), Omitted(),
              Const("scales", F32s({1, 1, 0.5f, 0.5f}))};
  t.attributes = {Str("mode", "linear"), Int("antialias", 1)};
  ExpectRefusedAndFallsBack(t, "antialias");
}

TEST(CpuResize, WrongScalesLengthIsAPrepareErrorNamingTheNode) {
  std::mt19937 rng(907);
  const Tensor x = RandomTensor(DataType::kFloat, {1, 2, 4, 4}, rng);
  for (const std::string op : {"Resize", "Upsample"}) {
    // Unranked graph inputs: shape inference cannot check the count, so the kernel's Prepare (first run) does.
    std::vector<NodeInput> inputs = {{"x", DataType::kFloat}};
    if (op == "Resize") inputs.push_back({"", DataType::kUndefined});
    inputs.push_back({"scales", DataType::kFloat});
    auto session = OneNodeSession(op, inputs, {"y"}, op == "Resize" ? 13 : 9, nullptr, OnlyBackend("cpu", 1));
    try {
      session->Run({{"x", x}, {"scales", F32s({2, 2})}});
      ADD_FAILURE() << op << ": expected a Prepare error";
    } catch (const InvalidArgumentError& e) {
      EXPECT_NE(std::string(e.what()).find("'n0'"), std::string::npos) << e.what();
      EXPECT_NE(std::string(e.what()).find("scales"), std::string::npos) << e.what();
    }
  }
}

}  // namespace
}  // namespace ferry::testing
