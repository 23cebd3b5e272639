// The KServe v2 REST body codec under fuzzing (kserve_json_fuzzer.cc, kserve_binary_fuzzer.cc): one served config
// with every kind of input the codec decodes, and the decode -> validate -> encode path a request takes.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "fuzz_util.h"
#include "server/kserve_codec.h"

namespace ferry::fuzz {

// A batching model (max_batch_size 8) with a float input [-1, 4], an int64 [3], an optional string [-1], a bool
// [2] and an fp16 [2, 2]; its outputs mirror the inputs' types.
inline const server::ServeConfig& KServeFuzzConfig() {
  static const server::ServeConfig config = [] {
    server::ServeConfig c;
    c.name = "fuzz";
    c.max_batch_size = 8;
    c.inputs = {{"x", DataType::kFloat, {-1, 4}, false},
                {"ids", DataType::kInt64, {3}, false},
                {"text", DataType::kString, {-1}, true},
                {"mask", DataType::kBool, {2}, true},
                {"half", DataType::kFloat16, {2, 2}, true}};
    c.outputs = {{"y", DataType::kFloat, {-1, 4}, false}, {"labels", DataType::kString, {-1}, false}};
    return c;
  }();
  return config;
}

// A successful response whose outputs are `inputs`: what the encoders get to encode.
inline server::InferResponse EchoResponse(const std::vector<std::pair<std::string, Tensor>>& inputs) {
  server::InferResponse response;
  response.model_version = "1";
  response.outputs = inputs;
  return response;
}

// Decodes `body` as the HTTP route does; a request that decodes has its inputs encoded back as the response's
// outputs (JSON or binary as the request asked), so the encoder sees every tensor the decoder can produce.
inline void DecodeAndEncode(std::string_view body, std::optional<size_t> header_length) {
  try {
    server::DecodedInfer decoded = server::DecodeInferRequest(body, header_length, KServeFuzzConfig(), 64);
    (void)server::EncodeInferResponse(EchoResponse(decoded.request.inputs), "fuzz", decoded);
  } catch (const server::BadRequest&) {
  } catch (const ferry::Error&) {
  }
}

}  // namespace ferry::fuzz
