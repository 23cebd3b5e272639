// config.pbtxt parsing: Triton's fields, errors naming file/line/field, warnings for ignored fields, auto-complete.
#include "server/model_config.h"

#include <gtest/gtest.h>

#include "ferry/error.h"

namespace ferry::server {
namespace {

std::string ErrorOf(const std::string& text, const std::string& model = "m") {
  try {
    std::vector<std::string> warnings;
    auto parsed = ParseModelConfig(text, "m/config.pbtxt", &warnings);
    ValidateModelConfig(parsed, model, &warnings);
  } catch (const InvalidModelError& e) {
    return e.what();
  }
  return "";
}

TEST(ServerModelConfig, ReadsTheTritonFieldsFerryApplies) {
  const std::string text = R"(name: "m"
platform: "onnxruntime_onnx"
max_batch_size: 8
input [ { name: "x" data_type: TYPE_FP32 format: FORMAT_NCHW dims: [ 3, -1 ] } ]
output [ { name: "y" data_type: TYPE_INT64 dims: [ 10 ] } ]
instance_group [ { count: 2 kind: KIND_CPU }, { count: 1 } ]
dynamic_batching {
  preferred_batch_size: [ 8, 4 ]
  max_queue_delay_microseconds: 500
  default_queue_policy { max_queue_size: 7 default_timeout_microseconds: 900 timeout_action: DELAY allow_timeout_override: true }
}
version_policy: { specific: { versions: [ 1, 3 ] } }
optimization { graph { level: -1 } }
parameters { key: "intra_op_thread_count" value: { string_value: "3" } }
)";
  std::vector<std::string> warnings;
  auto parsed = ParseModelConfig(text, "m/config.pbtxt", &warnings);
  const ServeConfig c = ValidateModelConfig(parsed, "m", &warnings);
  EXPECT_TRUE(warnings.empty()) << warnings.front();
  EXPECT_EQ(c.max_batch_size, 8);
  ASSERT_EQ(c.inputs.size(), 1u);
  EXPECT_EQ(c.inputs[0].dtype, DataType::kFloat);
  EXPECT_EQ(c.inputs[0].dims, (std::vector<int64_t>{3, -1}));
  EXPECT_EQ(c.outputs[0].dtype, DataType::kInt64);
  EXPECT_EQ(c.instance_count, 3);
  EXPECT_TRUE(c.dynamic_batching);
  EXPECT_EQ(c.preferred_batch_sizes, (std::vector<int64_t>{4, 8}));
  EXPECT_EQ(c.max_queue_delay_us, 500u);
  EXPECT_EQ(c.max_queue_size, 7u);
  EXPECT_EQ(c.default_timeout_us, 900u);
  EXPECT_TRUE(c.timeout_delay);
  EXPECT_TRUE(c.allow_timeout_override);
  EXPECT_EQ(c.version_policy, VersionPolicy::kSpecific);
  EXPECT_EQ(c.specific_versions, (std::vector<int64_t>{1, 3}));
  EXPECT_EQ(c.optimization_level, 1);
  EXPECT_EQ(c.threads, 3);
}

TEST(ServerModelConfig, WarnsWithTheLineOfEachIgnoredField) {
  std::vector<std::string> warnings;
  auto parsed = ParseModelConfig("name: \"m\"\n\nresponse_cache { enable: true }\n"
                                 "instance_group [ { count: 1 gpus: [ 0 ] } ]\n"
                                 "model_warmup [ { name: \"w\" batch_size: 1 } ]\n",
                                 "m/config.pbtxt", &warnings);
  ValidateModelConfig(parsed, "m", &warnings);
  ASSERT_EQ(warnings.size(), 2u);  // model_warmup is read (model_warmup.h)
  EXPECT_EQ(warnings[0], "m/config.pbtxt:4: instance_group[0].gpus is ignored by Ferry");
  EXPECT_EQ(warnings[1], "m/config.pbtxt:3: response_cache is ignored by Ferry");
}

TEST(ServerModelConfig, ErrorsNameFileLineAndField) {
  EXPECT_EQ(ErrorOf("name: \"m\"\nmax_batch_sizes: 4\n"),
            "m/config.pbtxt:2:16: Message type \"inference.ModelConfig\" has no field named \"max_batch_sizes\".");
  EXPECT_EQ(ErrorOf("input [ { name: \"x\" data_type: TYPE_FLOAT } ]"),
            "m/config.pbtxt:1:43: Unknown enumeration value of \"TYPE_FLOAT\" for field \"data_type\".");
  EXPECT_EQ(ErrorOf("max_batch_size: 8\ndynamic_batching {\n  preferred_batch_size: [ 4, 16 ]\n}\n"),
            "m/config.pbtxt:3: dynamic_batching.preferred_batch_size: 16 is outside 1..8 (max_batch_size)");
  EXPECT_EQ(ErrorOf("name: \"other\"\n"),
            "m/config.pbtxt:1: name: 'other' differs from the model's folder name 'm'");
  EXPECT_EQ(ErrorOf("\nplatform: \"tensorrt_plan\"\n"),
            "m/config.pbtxt:2: platform: 'tensorrt_plan': Ferry serves ONNX models (platform \"onnxruntime_onnx\")");
  EXPECT_EQ(ErrorOf("input [ { name: \"x\" data_type: TYPE_FP32 dims: [ 3, -2 ] } ]"),
            "m/config.pbtxt:1: input[0].dims: -2 is not a size (use -1 for any size)");
  EXPECT_EQ(ErrorOf("\n\nsequence_batching { }\n"),
            "m/config.pbtxt:3: sequence_batching: sequence batching is not supported by Ferry");
  EXPECT_EQ(ErrorOf("input [ { name: \"x\" data_type: TYPE_FP32 dims: [ 4 ] reshape: { shape: [ 2, 2 ] } } ]"),
            "m/config.pbtxt:1: input[0].reshape: reshape is not supported: give the model's own dims by Ferry");
  EXPECT_EQ(ErrorOf("version_policy: { latest: { num_versions: 0 } }"),
            "m/config.pbtxt:1: version_policy.latest.num_versions: must be at least 1");
  EXPECT_EQ(ErrorOf("optimization { graph { level: 5 } }"),
            "m/config.pbtxt:1: optimization.graph.level: 5 is not -1 (basic), 0 (all) or 1 (extended)");
  EXPECT_EQ(ErrorOf("default_model_filename: \"../x.onnx\""),
            "m/config.pbtxt:1: default_model_filename: '../x.onnx' must be a file name inside the version folder");
}

IoInfo Io(const std::string& name, DataType dtype, std::vector<int64_t> dims) {
  IoInfo io;
  io.name = name;
  io.dtype = dtype;
  io.has_shape = true;
  io.dims = std::move(dims);
  return io;
}

TEST(ServerModelConfig, AutoCompletesFromTheModel) {
  auto parsed = EmptyModelConfig("m");
  CompleteModelConfig(parsed, {Io("x", DataType::kFloat, {-1, 3, 8})}, {Io("y", DataType::kFloat, {-1, 2})}, 4,
                      "m/1/model.onnx");
  const ServeConfig c = ValidateModelConfig(parsed, "m", nullptr);
  EXPECT_EQ(c.max_batch_size, 4);
  EXPECT_TRUE(c.dynamic_batching);
  EXPECT_EQ(c.inputs[0].dims, (std::vector<int64_t>{3, 8}));
  EXPECT_EQ(c.outputs[0].dims, (std::vector<int64_t>{2}));

  auto fixed = EmptyModelConfig("m");  // a fixed first dim: no batching
  CompleteModelConfig(fixed, {Io("x", DataType::kFloat, {1, 3})}, {Io("y", DataType::kFloat, {1})}, 4, "m.onnx");
  EXPECT_EQ(ValidateModelConfig(fixed, "m", nullptr).max_batch_size, 0);
  EXPECT_EQ(ValidateModelConfig(fixed, "m", nullptr).inputs[0].dims, (std::vector<int64_t>{1, 3}));
}

TEST(ServerModelConfig, ChecksListedTensorsAgainstTheModel) {
  const auto error = [](const std::string& text, std::vector<IoInfo> ins) {
    auto parsed = ParseModelConfig(text, "m/config.pbtxt", nullptr);
    try {
      CompleteModelConfig(parsed, ins, {Io("y", DataType::kFloat, {-1, 2})}, 4, "m/1/model.onnx");
    } catch (const InvalidModelError& e) {
      return std::string(e.what());
    }
    return std::string();
  };
  EXPECT_EQ(error("max_batch_size: 2\ninput [ { name: \"x\"\n data_type: TYPE_INT32 dims: [ 3 ] } ]",
                  {Io("x", DataType::kFloat, {-1, 3})}),
            "m/config.pbtxt:3: input[0] 'x': data_type TYPE_INT32 does not match the model's float32 (TYPE_FP32)");
  EXPECT_EQ(error("max_batch_size: 2\ninput [ { name: \"z\" data_type: TYPE_FP32 dims: [ 3 ] } ]",
                  {Io("x", DataType::kFloat, {-1, 3})}),
            "m/config.pbtxt:2: input[0] 'z': the model m/1/model.onnx has no input of that name (it has: x)");
  EXPECT_EQ(error("max_batch_size: 2\ninput [ { name: \"x\" data_type: TYPE_FP32 dims: [ 4 ] } ]",
                  {Io("x", DataType::kFloat, {-1, 3})}),
            "m/config.pbtxt:2: input[0] 'x': dims [4] do not match the model's [-1,3] (whose first dim is the batch)");
  EXPECT_EQ(error("max_batch_size: 2\ninput [ { name: \"x\" data_type: TYPE_FP32 dims: [ 3 ] } ]",
                  {Io("x", DataType::kFloat, {1, 3})}),
            "m/config.pbtxt:1: max_batch_size 2 needs a dynamic first dim on input 'x', but the model has [1,3] (set "
            "max_batch_size: 0)");
}

}  // namespace
}  // namespace ferry::server
