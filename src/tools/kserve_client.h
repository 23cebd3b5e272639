// The client side of the KServe v2 (Open Inference) REST protocol, as `ferry bench --server` speaks it: the
// server URL, a model's metadata and config, infer request bodies (JSON tensors or the binary tensor data
// extension) and the check of an infer response. Only the wire protocol is known here, nothing of Ferry's server:
// the same client drives Triton or any KServe v2 server.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "ferry/dtype.h"
#include "ferry/session.h"
#include "tools/http_client.h"

namespace ferry::tools {

// KServe v2 data type names: "FP32" <-> kFloat, "INT64", "BOOL", "FP16", "BF16", "BYTES" (string), ...
std::optional<DataType> DataTypeFromKServeName(std::string_view name);
std::string KServeDataTypeName(DataType t);  // "" for a type the protocol has no name for

// What the server says about a model: GET /v2/models/NAME[/versions/V] (inputs and outputs, their datatypes and
// shapes, -1 for a dim of any size) and GET .../config (Triton's model configuration: max_batch_size).
struct KServeModelInfo {
  std::string name;
  std::vector<std::string> versions;
  std::vector<IoInfo> inputs;   // dims as the metadata gives them (-1: any size); has_shape always true
  std::vector<IoInfo> outputs;
  int64_t max_batch_size = -1;  // -1: no config (or it does not say); 0: no batch dim; > 0: dim 0 is the batch
};

// Parses the two JSON bodies (`config_json` may be absent: the server has no config endpoint). Throws
// InvalidArgumentError naming the field and the model for a body that is not a model's metadata.
KServeModelInfo ParseKServeModelInfo(std::string_view metadata_json, std::optional<std::string_view> config_json);

// An infer request for `inputs` asking for `outputs`: with `binary`, a JSON header (each input's
// parameters.binary_data_size, each output's parameters.binary_data true) followed by the tensors' raw bytes
// (little-endian, BOOL one byte per element; Content-Type application/octet-stream); otherwise every tensor as a
// flat JSON `data` array. Throws InvalidArgumentError for a value the protocol cannot carry (naming the input).
HttpRequestBody EncodeInferRequest(const std::vector<NamedValue>& inputs, const std::vector<std::string>& outputs,
                                   bool binary);

// Checks the body of a 200 infer response: the JSON (all of the body, or its first `header_length` bytes) has
// every output of `outputs`, each with a datatype and a shape whose element count matches its data (the length
// of a JSON `data` array, or binary_data_size = elements x element size), and the binary sizes add up to the
// rest of the body. Returns "" when it does, otherwise what is wrong (naming the output).
std::string CheckInferResponse(std::string_view body, std::optional<size_t> header_length,
                               const std::vector<IoInfo>& outputs);

// "HTTP 503: <the error body's message>" (KServe error bodies are {"error": "..."}; other bodies are quoted,
// cut at 200 characters).
std::string DescribeHttpError(int status, std::string_view body);

}  // namespace ferry::tools
