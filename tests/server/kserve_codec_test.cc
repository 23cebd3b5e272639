// KServe v2 REST bodies: JSON and binary tensors in and out, and every bad-request message.
#include "server/kserve_codec.h"

#include <gtest/gtest.h>

#include <cstring>
#include <nlohmann/json.hpp>

namespace ferry::server {
namespace {

ServeConfig Config() {
  ServeConfig c;
  c.name = "m";
  c.max_batch_size = 4;
  c.inputs = {{"x", DataType::kFloat, {2}, false}, {"s", DataType::kString, {1}, true}};
  c.outputs = {{"y", DataType::kFloat, {2}, false}};
  return c;
}

std::string ErrorOf(const std::string& body, std::optional<size_t> header_length = std::nullopt) {
  try {
    DecodeInferRequest(body, header_length, Config(), 8);
  } catch (const BadRequest& e) {
    return e.what();
  }
  return "";
}

TEST(ServerKServeCodec, DecodesJsonTensors) {
  auto d = DecodeInferRequest(
      R"({"id":"r1","parameters":{"timeout":50},"inputs":[{"name":"x","datatype":"FP32","shape":[2,2],"data":[[1,2],[3,4.5]]},
          {"name":"s","datatype":"BYTES","shape":[2,1],"data":["a","bc"]}],"outputs":[{"name":"y","parameters":{"binary_data":true}}]})",
      std::nullopt, Config(), 8);
  EXPECT_EQ(d.request.id, "r1");
  EXPECT_EQ(d.request.timeout_us, 50u);
  EXPECT_EQ(d.request.batch_size, 2);
  ASSERT_EQ(d.request.inputs.size(), 2u);
  const Tensor& x = d.request.inputs[0].second;
  EXPECT_EQ(x.shape(), (Shape{2, 2}));
  EXPECT_FLOAT_EQ(x.data<float>()[3], 4.5f);
  EXPECT_EQ(d.request.inputs[1].second.strings()[1], "bc");
  EXPECT_EQ(d.binary_outputs.count("y"), 1u);
}

TEST(ServerKServeCodec, DecodesBinaryTensors) {
  const float values[4] = {1, 2, 3, 4};
  const std::string header =
      R"({"inputs":[{"name":"x","datatype":"FP32","shape":[2,2],"parameters":{"binary_data_size":16}}]})";
  std::string body = header + std::string(reinterpret_cast<const char*>(values), 16);
  auto d = DecodeInferRequest(body, header.size(), Config(), 8);
  EXPECT_FLOAT_EQ(d.request.inputs[0].second.data<float>()[2], 3.0f);
  EXPECT_EQ(ErrorOf(body + "xx", header.size()), "2 bytes of binary data after the inputs' binary_data_size");
  EXPECT_EQ(ErrorOf(header + "abc", header.size()),
            "input 'x': binary_data_size 16 runs past the body (3 bytes left)");
  EXPECT_EQ(ErrorOf(body), "input 'x' has binary_data_size but the request has no Inference-Header-Content-Length");
  EXPECT_EQ(ErrorOf("{\"inputs\": [").rfind("the request is not valid JSON: ", 0), 0u);
}

TEST(ServerKServeCodec, NamesTheInputAndExpectedVersusReceived) {
  EXPECT_EQ(ErrorOf(R"({"inputs":[{"name":"z","datatype":"FP32","shape":[1,2],"data":[1,2]}]})"),
            "unexpected input 'z': model 'm' has inputs x, s");
  EXPECT_EQ(ErrorOf(R"({"inputs":[{"name":"x","datatype":"INT32","shape":[1,2],"data":[1,2]}]})"),
            "input 'x': datatype INT32 does not match the model's FP32");
  EXPECT_EQ(ErrorOf(R"({"inputs":[{"name":"x","datatype":"FP32","shape":[1,3],"data":[1,2,3]}]})"),
            "input 'x': shape [1,3] does not match the model's [-1,2] (-1: any size; the first dim is the batch)");
  EXPECT_EQ(ErrorOf(R"({"inputs":[{"name":"x","datatype":"FP32","shape":[5,2],"data":[1,2,3,4,5,6,7,8,9,0]}]})"),
            "input 'x': batch size 5 is outside 1..4 (max_batch_size)");
  EXPECT_EQ(ErrorOf(R"({"inputs":[{"name":"x","datatype":"FP32","shape":[1,2],"data":[1]}]})"),
            "input 'x': shape [1,2] has 2 elements but data has 1");
  EXPECT_EQ(ErrorOf(R"({"inputs":[{"name":"x","datatype":"FP32","shape":[1,2],"data":[1,"a"]}]})"),
            "input 'x': element 1 (\"a\") is not a number");
  EXPECT_EQ(ErrorOf(R"({"inputs":[{"name":"s","datatype":"BYTES","shape":[1,1],"data":["a"]}]})"),
            "missing input 'x' (FP32 [-1,2])");
  EXPECT_EQ(ErrorOf(R"({"inputs":[{"name":"x","datatype":"FP32","shape":[1,2],"data":[1,2]}],"outputs":[{"name":"q"}]})"),
            "unknown output 'q': model 'm' has outputs y");
  EXPECT_EQ(ErrorOf(R"({"inputs":[{"name":"x","datatype":"FP32","shape":[1,2],"data":[[[[[[[[[1]]]]]]]]]}]})"),
            "JSON nests deeper than 8 levels");
  EXPECT_EQ(ErrorOf(R"({"inputs":[{"name":"x","datatype":"F32","shape":[1,2],"data":[1,2]}]})"),
            "input 'x': unknown datatype 'F32'");
}

TEST(ServerKServeCodec, EncodesJsonAndBinaryOutputs) {
  InferResponse r;
  r.model_version = "3";
  r.outputs.emplace_back("y", Tensor::FromVector<float>(DataType::kFloat, {1, 2}, {0.5f, -1.0f}));
  DecodedInfer json_req;
  json_req.request.id = "q";
  auto e = EncodeInferResponse(r, "m", json_req);
  EXPECT_FALSE(e.header_length);
  EXPECT_EQ(e.body, R"({"id":"q","model_name":"m","model_version":"3","outputs":[{"data":[0.5,-1.0],"datatype":"FP32","name":"y","shape":[1,2]}]})");
  DecodedInfer bin_req;
  bin_req.binary_output_default = true;
  e = EncodeInferResponse(r, "m", bin_req);
  ASSERT_TRUE(e.header_length);
  EXPECT_EQ(e.body.size(), *e.header_length + 8);
  float back[2];
  std::memcpy(back, e.body.data() + *e.header_length, 8);
  EXPECT_EQ(back[1], -1.0f);
  EXPECT_NE(e.body.substr(0, *e.header_length).find("\"binary_data_size\":8"), std::string::npos);
}


// Triton refuses an output asked for twice; answering it twice makes the response ambiguous.
TEST(ServerKServeCodec, AnOutputRequestedTwiceIsRefused) {
  EXPECT_EQ(ErrorOf(R"({"inputs":[{"name":"x","datatype":"FP32","shape":[1,2],"data":[1,2]}],)"
                    R"("outputs":[{"name":"y"},{"name":"y","parameters":{"binary_data":true}}]})"),
            "output 'y' is requested more than once");
}

// Huge dims are refused before anything is allocated, and never silently shrunk.
TEST(ServerKServeCodec, HugeShapesAreRefused) {
  EXPECT_EQ(ErrorOf(R"({"inputs":[{"name":"x","datatype":"FP32","shape":[1,18446744073709551615],"data":[1]}]})"),
            "input 'x': shape [1,18446744073709551615] is too large (at most 2^40 elements)");
  EXPECT_EQ(ErrorOf(R"({"inputs":[{"name":"x","datatype":"FP32","shape":[0,1099511627777],"data":[]}]})"),
            "input 'x': shape [0,1099511627777] is too large (at most 2^40 elements)");
}

// A BYTES output that is not UTF-8 still makes valid JSON (the bad bytes replaced); binary output keeps them.
TEST(ServerKServeCodec, BytesOutputThatIsNotUtf8EncodesToValidJson) {
  InferResponse r;
  Tensor s(DataType::kString, {1});
  s.strings()[0] = "a\xff\xfe";
  r.outputs.emplace_back("s", std::move(s));
  DecodedInfer req;
  const auto e = EncodeInferResponse(r, "m", req);
  EXPECT_EQ(nlohmann::json::parse(e.body)["outputs"][0]["data"][0], "a\xef\xbf\xbd\xef\xbf\xbd");
}

}  // namespace
}  // namespace ferry::server
