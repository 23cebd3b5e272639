// model_warmup samples (server/model_warmup.h) checked against a completed config, with messages naming the file,
// line, sample and input; and the tensors they make: zeros, seeded random values in range, a data file repeated
// over the batch.
#include "server/model_warmup.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

#include "ferry/error.h"

namespace ferry::server {
namespace {

namespace fs = std::filesystem;

// The served config: x FP32 [-1, 2] (batching, max_batch_size 4), an optional s BYTES [1].
ServeConfig Served(int64_t max_batch_size = 4) {
  ServeConfig c;
  c.name = "m";
  c.max_batch_size = max_batch_size;
  c.inputs = {{"x", DataType::kFloat, {-1, 2}, false}, {"s", DataType::kString, {1}, true}};
  c.outputs = {{"y", DataType::kFloat, {-1, 2}, false}};
  return c;
}

std::vector<WarmupSample> Validate(const std::string& warmup, int64_t max_batch_size = 4) {
  std::vector<std::string> warnings;
  return ValidateWarmups(ParseModelConfig(warmup, "m/config.pbtxt", &warnings), Served(max_batch_size));
}

std::string ErrorOf(const std::string& warmup, int64_t max_batch_size = 4) {
  try {
    Validate(warmup, max_batch_size);
  } catch (const InvalidModelError& e) {
    return e.what();
  }
  return "";
}

std::string Sample(const std::string& fields, const std::string& x) {
  return "model_warmup [ { " + fields + " inputs { key: \"x\" value: { " + x + " } } } ]";
}

TEST(ServerModelWarmup, ReadsTheSamples) {
  const auto w = Validate(Sample("name: \"w\" batch_size: 3 count: 2",
                                 "data_type: TYPE_FP32 dims: [ 5, 2 ] random_data: true"));
  ASSERT_EQ(w.size(), 1u);
  EXPECT_EQ(w[0].name, "w");
  EXPECT_EQ(w[0].batch_size, 3);
  EXPECT_EQ(w[0].count, 2u);
  ASSERT_EQ(w[0].inputs.size(), 1u);  // the optional input left out
  EXPECT_EQ(w[0].inputs[0].name, "x");
  EXPECT_EQ(w[0].inputs[0].dims, (std::vector<int64_t>{5, 2}));
  EXPECT_EQ(w[0].inputs[0].data, WarmupInput::Data::kRandom);
  EXPECT_EQ(Validate(Sample("name: \"w\" batch_size: 1", "data_type: TYPE_FP32 dims: [ 1, 2 ] zero_data: true"))[0]
                .count,
            1u);  // count 0: once
}

TEST(ServerModelWarmup, ErrorsNameTheLineSampleAndInput) {
  const std::string x = "data_type: TYPE_FP32 dims: [ 1, 2 ] zero_data: true";
  EXPECT_EQ(ErrorOf(Sample("batch_size: 1", x)), "m/config.pbtxt:1: model_warmup[0].name: missing");
  EXPECT_EQ(ErrorOf(Sample("name: \"w\" batch_size: 5", x)),
            "m/config.pbtxt:1: model_warmup[0] 'w': batch_size 5 is outside 1..4 (max_batch_size)");
  EXPECT_EQ(ErrorOf(Sample("name: \"w\"", x)),
            "m/config.pbtxt:1: model_warmup[0] 'w': batch_size 0 is outside 1..4 (max_batch_size)");
  EXPECT_EQ(ErrorOf(Sample("name: \"w\" batch_size: 2", "data_type: TYPE_FP32 dims: [ 2 ] zero_data: true"), 0),
            "m/config.pbtxt:1: model_warmup[0] 'w': batch_size 2 must be 1: the model does not batch "
            "(max_batch_size 0)");
  EXPECT_EQ(ErrorOf(Sample("name: \"w\" batch_size: 1 count: 1001", x)),
            "m/config.pbtxt:1: model_warmup[0] 'w': count 1001 is over 1000");
  EXPECT_EQ(ErrorOf(Sample("name: \"w\" batch_size: 1", "data_type: TYPE_INT64 dims: [ 1, 2 ] zero_data: true")),
            "m/config.pbtxt:1: model_warmup[0] 'w': input 'x': data_type TYPE_INT64 does not match the model's "
            "TYPE_FP32");
  EXPECT_EQ(ErrorOf(Sample("name: \"w\" batch_size: 1", "data_type: TYPE_FP32 dims: [ 1, 3 ] zero_data: true")),
            "m/config.pbtxt:1: model_warmup[0] 'w': input 'x': dims [1,3] do not match the model's [-1,2] (-1: any "
            "size; without the batch dim)");
  EXPECT_EQ(ErrorOf(Sample("name: \"w\" batch_size: 1", "data_type: TYPE_FP32 dims: [ 2 ] zero_data: true")),
            "m/config.pbtxt:1: model_warmup[0] 'w': input 'x': dims [2] do not match the model's [-1,2] (-1: any "
            "size; without the batch dim)");
  EXPECT_EQ(ErrorOf(Sample("name: \"w\" batch_size: 4", "data_type: TYPE_FP32 dims: [ 67108864, 2 ] zero_data: true")),
            "m/config.pbtxt:1: model_warmup[0] 'w': input 'x': dims are too large for a warm-up (at most 2^28 "
            "elements with the batch)");
  EXPECT_EQ(ErrorOf(Sample("name: \"w\" batch_size: 1", "data_type: TYPE_FP32 dims: [ 1, 2 ]")),
            "m/config.pbtxt:1: model_warmup[0] 'w': input 'x': give zero_data, random_data or input_data_file");
  for (const char* file : {"../x.bin", "/etc/passwd", "a/../../x", ""}) {
    EXPECT_EQ(ErrorOf(Sample("name: \"w\" batch_size: 1", std::string("data_type: TYPE_FP32 dims: [ 1, 2 ] "
                                                                      "input_data_file: \"") + file + "\"")),
              std::string("m/config.pbtxt:1: model_warmup[0] 'w': input 'x': input_data_file '") + file +
                  "' must be a file name inside the model's warmup/ folder");
  }
  EXPECT_EQ(ErrorOf("model_warmup [ { name: \"w\" batch_size: 1 } ]"),
            "m/config.pbtxt:1: model_warmup[0] 'w': no data for input 'x' (TYPE_FP32 [-1,2])");
  EXPECT_EQ(ErrorOf("model_warmup [ { name: \"w\" batch_size: 1 inputs { key: \"q\" value: { } } } ]"),
            "m/config.pbtxt:1: model_warmup[0] 'w': 'q' is not an input of the model (inputs: x, s)");
}

TEST(ServerModelWarmup, TensorsHoldZerosRandomValuesOrTheFileRepeatedOverTheBatch) {
  const fs::path dir = fs::path(::testing::TempDir()) / ("ferry_warmup_" + std::to_string(::getpid()));
  fs::create_directories(dir / "warmup");
  const float row[2] = {1.5f, -2};
  std::ofstream(dir / "warmup" / "x.bin", std::ios::binary).write(reinterpret_cast<const char*>(row), 8);
  const std::string strings = std::string("\x02\0\0\0ab", 6);
  std::ofstream(dir / "warmup" / "s.bin", std::ios::binary) << strings;
  const auto w = Validate("model_warmup [ { name: \"w\" batch_size: 3 inputs [\n"
                          "  { key: \"x\" value: { data_type: TYPE_FP32 dims: [ 1, 2 ] input_data_file: \"x.bin\" } },\n"
                          "  { key: \"s\" value: { data_type: TYPE_STRING dims: [ 1 ] input_data_file: \"s.bin\" } } ] },\n"
                          "  { name: \"r\" batch_size: 2 inputs { key: \"x\" value: { data_type: TYPE_FP32 dims: [ 50, 2 ] "
                          "random_data: true } } } ]");
  const auto t = WarmupTensors(w[0], Served(), dir.string());
  ASSERT_EQ(t.size(), 2u);
  EXPECT_EQ(t[0].second.shape(), (Shape{3, 1, 2}));
  for (int i = 0; i < 3; ++i) {
    EXPECT_EQ(t[0].second.data<float>()[2 * i], 1.5f);
    EXPECT_EQ(t[0].second.data<float>()[2 * i + 1], -2.0f);
    EXPECT_EQ(t[1].second.strings()[i], "ab");
  }
  const auto r = WarmupTensors(w[1], Served(), dir.string());
  ASSERT_EQ(r[0].second.shape(), (Shape{2, 50, 2}));
  bool varied = false;
  for (int i = 0; i < 200; ++i) {
    const float v = r[0].second.data<float>()[i];
    EXPECT_TRUE(v >= 0 && v < 1) << v;
    varied = varied || v != r[0].second.data<float>()[0];
  }
  EXPECT_TRUE(varied);
  EXPECT_EQ(r[0].second.data<float>()[0], r[0].second.data<float>()[100]);  // the sample repeated
  EXPECT_EQ(WarmupTensors(w[1], Served(), dir.string())[0].second.data<float>()[7], r[0].second.data<float>()[7]);
  // A string file with bytes left over.
  std::ofstream(dir / "warmup" / "s.bin", std::ios::binary) << strings << "z";
  try {
    WarmupTensors(w[0], Served(), dir.string());
    ADD_FAILURE() << "no error";
  } catch (const InvalidModelError& e) {
    EXPECT_STREQ(e.what(), "input 's': warmup/s.bin has 1 bytes after its 1 elements");
  }
  fs::remove_all(dir);
}

}  // namespace
}  // namespace ferry::server
