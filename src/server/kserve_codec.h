// The KServe v2 (Open Inference Protocol) REST inference body: JSON tensors and the binary tensor data extension
// (a JSON header of `Inference-Header-Content-Length` bytes, then the tensors' raw bytes). Decoding validates a
// request completely against the model's config: names, data types, shapes and data sizes.
#pragma once

#include <cstdint>
#include <optional>
#include <set>
#include <string>
#include <string_view>

#include "ferry/dtype.h"
#include "server/infer_request.h"
#include "server/model_config.h"

namespace ferry::server {

// "FP32", "INT64", "BYTES", ... <-> Ferry data types (BYTES is Ferry's string). nullopt / "" when there is none.
std::optional<DataType> DataTypeFromKServe(std::string_view name);
std::string KServeDataType(DataType t);

// Thrown for a request the client got wrong; `what()` is the message for the KServe error body (HTTP 400).
class BadRequest : public std::runtime_error {
 public:
  explicit BadRequest(const std::string& m) : std::runtime_error(m) {}
};

// Fails with BadRequest when JSON text nests arrays/objects deeper than `max_depth` (before parsing it).
void CheckJsonDepth(std::string_view json, int max_depth);

struct DecodedInfer {
  InferRequest request;
  bool binary_output_default = false;  // parameters.binary_data_output
  std::set<std::string> binary_outputs, json_outputs;  // per-output parameters.binary_data true / false
};

// Decodes an infer request body. `header_length`: the Inference-Header-Content-Length header (nullopt: the body
// is all JSON). Throws BadRequest naming the input and what was expected vs received.
DecodedInfer DecodeInferRequest(std::string_view body, std::optional<size_t> header_length,
                                const ServeConfig& config, int max_json_depth);

// Checks one input's name, data type and shape against the config (before its data is read); BadRequest naming
// the input and what was expected vs received.
void CheckInput(const std::string& name, DataType dtype, const Shape& shape, const ServeConfig& config);

// Checks tensors already decoded (the gRPC path) against the config, and sets request.batch_size; BadRequest.
void ValidateInferInputs(InferRequest& request, const ServeConfig& config);

struct EncodedInfer {
  std::string body;
  std::optional<size_t> header_length;  // set when binary data follows the JSON header
};

// Encodes a successful response: each output in JSON, or as binary data when asked for.
EncodedInfer EncodeInferResponse(const InferResponse& response, const std::string& model_name,
                                 const DecodedInfer& request);

}  // namespace ferry::server
