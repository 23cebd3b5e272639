#include "server/kserve_codec.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstring>
#include <limits>

#include "ferry/float16.h"

namespace ferry::server {
namespace {

using json = nlohmann::json;

constexpr uint64_t kMaxElements = uint64_t{1} << 40;  // per input tensor, and per dim

const std::pair<const char*, DataType> kTypes[] = {
    {"BOOL", DataType::kBool},     {"UINT8", DataType::kUint8},     {"UINT16", DataType::kUint16},
    {"UINT32", DataType::kUint32}, {"UINT64", DataType::kUint64},   {"INT8", DataType::kInt8},
    {"INT16", DataType::kInt16},   {"INT32", DataType::kInt32},     {"INT64", DataType::kInt64},
    {"FP16", DataType::kFloat16},  {"FP32", DataType::kFloat},      {"FP64", DataType::kDouble},
    {"BYTES", DataType::kString},  {"BF16", DataType::kBFloat16},
};

std::string DimsText(const std::vector<int64_t>& dims) {
  std::string s = "[";
  for (size_t i = 0; i < dims.size(); ++i) s += (i ? "," : "") + std::to_string(dims[i]);
  return s + "]";
}

uint16_t Bf16FromFloat(float f) {
  uint32_t x = std::bit_cast<uint32_t>(f);
  if ((x & 0x7fffffffu) > 0x7f800000u) return static_cast<uint16_t>((x >> 16) | 0x40u);  // quiet NaN
  x += 0x7fffu + ((x >> 16) & 1u);
  return static_cast<uint16_t>(x >> 16);
}
float Bf16ToFloat(uint16_t b) { return std::bit_cast<float>(static_cast<uint32_t>(b) << 16); }

// JSON text of a request's value for a message: dump() with invalid UTF-8 replaced, never a throw.
std::string Text(const json& j) { return j.dump(-1, ' ', false, json::error_handler_t::replace); }

// Flattens nested JSON arrays (row-major) into `out`.
void Flatten(const json& j, std::vector<const json*>& out) {
  if (j.is_array()) {
    for (const auto& e : j) Flatten(e, out);
  } else {
    out.push_back(&j);
  }
}

template <typename T>
void FillIntegers(Tensor& t, const std::vector<const json*>& values, const std::string& input, const char* type) {
  T* dst = t.data<T>();
  for (size_t i = 0; i < values.size(); ++i) {
    const json& v = *values[i];
    bool ok = false;
    if (v.is_number_unsigned()) {
      const auto u = v.get<uint64_t>();
      ok = u <= static_cast<uint64_t>(std::numeric_limits<T>::max());
      if (ok) dst[i] = static_cast<T>(u);
    } else if (v.is_number_integer()) {
      const auto s = v.get<int64_t>();
      ok = s >= static_cast<int64_t>(std::numeric_limits<T>::min()) &&
           (s < 0 || static_cast<uint64_t>(s) <= static_cast<uint64_t>(std::numeric_limits<T>::max()));
      if (ok) dst[i] = static_cast<T>(s);
    }
    if (!ok) {
      throw BadRequest("input '" + input + "': element " + std::to_string(i) + " (" + Text(v) +
                       ") is not a " + type + " integer");
    }
  }
}

template <typename T, typename Convert>
void FillFloats(Tensor& t, const std::vector<const json*>& values, const std::string& input, Convert convert) {
  T* dst = t.data<T>();
  for (size_t i = 0; i < values.size(); ++i) {
    if (!values[i]->is_number()) {
      throw BadRequest("input '" + input + "': element " + std::to_string(i) + " (" + Text(*values[i]) +
                       ") is not a number");
    }
    dst[i] = convert(values[i]->get<double>());
  }
}

void FillFromJson(Tensor& t, const std::vector<const json*>& values, const std::string& input) {
  switch (t.dtype()) {
    case DataType::kBool: {
      auto* dst = t.data<bool>();
      for (size_t i = 0; i < values.size(); ++i) {
        if (!values[i]->is_boolean()) {
          throw BadRequest("input '" + input + "': element " + std::to_string(i) + " (" + Text(*values[i]) +
                           ") is not true or false");
        }
        dst[i] = values[i]->get<bool>();
      }
      return;
    }
    case DataType::kUint8: return FillIntegers<uint8_t>(t, values, input, "UINT8");
    case DataType::kUint16: return FillIntegers<uint16_t>(t, values, input, "UINT16");
    case DataType::kUint32: return FillIntegers<uint32_t>(t, values, input, "UINT32");
    case DataType::kUint64: return FillIntegers<uint64_t>(t, values, input, "UINT64");
    case DataType::kInt8: return FillIntegers<int8_t>(t, values, input, "INT8");
    case DataType::kInt16: return FillIntegers<int16_t>(t, values, input, "INT16");
    case DataType::kInt32: return FillIntegers<int32_t>(t, values, input, "INT32");
    case DataType::kInt64: return FillIntegers<int64_t>(t, values, input, "INT64");
    case DataType::kFloat: return FillFloats<float>(t, values, input, [](double d) { return static_cast<float>(d); });
    case DataType::kDouble: return FillFloats<double>(t, values, input, [](double d) { return d; });
    case DataType::kFloat16:
      return FillFloats<uint16_t>(t, values, input, [](double d) { return Float16::FromFloat(static_cast<float>(d)); });
    case DataType::kBFloat16:
      return FillFloats<uint16_t>(t, values, input, [](double d) { return Bf16FromFloat(static_cast<float>(d)); });
    case DataType::kString: {
      for (size_t i = 0; i < values.size(); ++i) {
        if (!values[i]->is_string()) {
          throw BadRequest("input '" + input + "': element " + std::to_string(i) + " (" + Text(*values[i]) +
                           ") is not a string (BYTES)");
        }
        t.strings()[i] = values[i]->get<std::string>();
      }
      return;
    }
    default: throw BadRequest("input '" + input + "': data type not supported");
  }
}

void FillFromBinary(Tensor& t, std::string_view bytes, const std::string& input) {
  if (t.dtype() == DataType::kString) {
    size_t at = 0;
    for (int64_t i = 0; i < t.size(); ++i) {
      if (bytes.size() - at < 4) {
        throw BadRequest("input '" + input + "': binary BYTES data ends before element " + std::to_string(i));
      }
      uint32_t len = 0;
      std::memcpy(&len, bytes.data() + at, 4);  // little-endian, as the protocol states (x86 / arm64 hosts)
      at += 4;
      if (bytes.size() - at < len) {
        throw BadRequest("input '" + input + "': binary BYTES element " + std::to_string(i) + " claims " +
                         std::to_string(len) + " bytes but " + std::to_string(bytes.size() - at) + " remain");
      }
      t.strings()[i] = std::string(bytes.substr(at, len));
      at += len;
    }
    if (at != bytes.size()) {
      throw BadRequest("input '" + input + "': binary BYTES data has " + std::to_string(bytes.size() - at) +
                       " bytes after its " + std::to_string(t.size()) + " elements");
    }
    return;
  }
  if (bytes.size() != t.nbytes()) {
    throw BadRequest("input '" + input + "': binary_data_size is " + std::to_string(bytes.size()) + " bytes but " +
                     KServeDataType(t.dtype()) + " " + DimsText(t.shape()) + " needs " + std::to_string(t.nbytes()));
  }
  if (!bytes.empty()) std::memcpy(t.raw_data(), bytes.data(), bytes.size());
}

json ToJsonData(const Tensor& t) {
  json a = json::array();
  const int64_t n = t.size();
  switch (t.dtype()) {
    case DataType::kBool: for (int64_t i = 0; i < n; ++i) a.push_back(t.data<bool>()[i]); break;
    case DataType::kUint8: for (int64_t i = 0; i < n; ++i) a.push_back(t.data<uint8_t>()[i]); break;
    case DataType::kUint16: for (int64_t i = 0; i < n; ++i) a.push_back(t.data<uint16_t>()[i]); break;
    case DataType::kUint32: for (int64_t i = 0; i < n; ++i) a.push_back(t.data<uint32_t>()[i]); break;
    case DataType::kUint64: for (int64_t i = 0; i < n; ++i) a.push_back(t.data<uint64_t>()[i]); break;
    case DataType::kInt8: for (int64_t i = 0; i < n; ++i) a.push_back(t.data<int8_t>()[i]); break;
    case DataType::kInt16: for (int64_t i = 0; i < n; ++i) a.push_back(t.data<int16_t>()[i]); break;
    case DataType::kInt32: for (int64_t i = 0; i < n; ++i) a.push_back(t.data<int32_t>()[i]); break;
    case DataType::kInt64: for (int64_t i = 0; i < n; ++i) a.push_back(t.data<int64_t>()[i]); break;
    case DataType::kFloat: for (int64_t i = 0; i < n; ++i) a.push_back(t.data<float>()[i]); break;
    case DataType::kDouble: for (int64_t i = 0; i < n; ++i) a.push_back(t.data<double>()[i]); break;
    case DataType::kFloat16:
      for (int64_t i = 0; i < n; ++i) a.push_back(Float16::ToFloat(t.data<uint16_t>()[i]));
      break;
    case DataType::kBFloat16:
      for (int64_t i = 0; i < n; ++i) a.push_back(Bf16ToFloat(t.data<uint16_t>()[i]));
      break;
    case DataType::kString: for (int64_t i = 0; i < n; ++i) a.push_back(t.strings()[i]); break;
    default: break;
  }
  return a;
}

void AppendBinary(const Tensor& t, std::string* out) {
  if (t.dtype() == DataType::kString) {
    for (int64_t i = 0; i < t.size(); ++i) {
      const auto len = static_cast<uint32_t>(t.strings()[i].size());
      out->append(reinterpret_cast<const char*>(&len), 4);
      out->append(t.strings()[i]);
    }
    return;
  }
  out->append(static_cast<const char*>(t.raw_data()), t.nbytes());
}

size_t BinarySize(const Tensor& t) {
  if (t.dtype() != DataType::kString) return t.nbytes();
  size_t n = 0;
  for (int64_t i = 0; i < t.size(); ++i) n += 4 + t.strings()[i].size();
  return n;
}

bool BoolParameter(const json& params, const char* key, const std::string& where) {
  if (!params.is_object() || !params.contains(key)) return false;
  if (!params[key].is_boolean()) throw BadRequest(where + "parameter '" + key + "' must be true or false");
  return params[key].get<bool>();
}

}  // namespace

std::optional<DataType> DataTypeFromKServe(std::string_view name) {
  for (const auto& [n, t] : kTypes) {
    if (name == n) return t;
  }
  return std::nullopt;
}

std::string KServeDataType(DataType t) {
  for (const auto& [n, d] : kTypes) {
    if (d == t) return n;
  }
  return "";
}

void CheckJsonDepth(std::string_view text, int max_depth) {
  int depth = 0;
  bool in_string = false, escape = false;
  for (char c : text) {
    if (in_string) {
      if (escape) escape = false;
      else if (c == '\\') escape = true;
      else if (c == '"') in_string = false;
      continue;
    }
    if (c == '"') in_string = true;
    else if (c == '[' || c == '{') {
      if (++depth > max_depth) {
        throw BadRequest("JSON nests deeper than " + std::to_string(max_depth) + " levels");
      }
    } else if (c == ']' || c == '}') {
      --depth;
    }
  }
}

void CheckInput(const std::string& name, DataType dtype, const Shape& got, const ServeConfig& config) {
  const bool batching = config.max_batch_size > 0;
  auto it = std::find_if(config.inputs.begin(), config.inputs.end(), [&](const TensorSpec& s) { return s.name == name; });
  if (it == config.inputs.end()) {
    std::string names;
    for (const auto& s : config.inputs) names += (names.empty() ? "" : ", ") + s.name;
    throw BadRequest("unexpected input '" + name + "': model '" + config.name + "' has inputs " + names);
  }
  if (dtype != it->dtype) {
    throw BadRequest("input '" + name + "': datatype " + KServeDataType(dtype) + " does not match the model's " +
                     KServeDataType(it->dtype));
  }
  std::vector<int64_t> want = it->dims;
  if (batching) want.insert(want.begin(), -1);
  bool ok = got.size() == want.size();
  for (size_t d = 0; ok && d < got.size(); ++d) ok = want[d] < 0 || want[d] == got[d];
  if (!ok) {
    throw BadRequest("input '" + name + "': shape " + DimsText(got) + " does not match the model's " +
                     DimsText(want) + (batching ? " (-1: any size; the first dim is the batch)" : " (-1: any size)"));
  }
  if (batching && (got[0] < 1 || got[0] > config.max_batch_size)) {
    throw BadRequest("input '" + name + "': batch size " + std::to_string(got[0]) + " is outside 1.." +
                     std::to_string(config.max_batch_size) + " (max_batch_size)");
  }
}

void ValidateInferInputs(InferRequest& request, const ServeConfig& config) {
  const bool batching = config.max_batch_size > 0;
  int64_t batch = -1;
  std::set<std::string> seen;
  for (const auto& [name, t] : request.inputs) {
    CheckInput(name, t.dtype(), t.shape(), config);
    if (!seen.insert(name).second) throw BadRequest("input '" + name + "' is given twice");
    const auto& got = t.shape();
    if (batching) {
      if (batch >= 0 && got[0] != batch) {
        throw BadRequest("input '" + name + "': batch size " + std::to_string(got[0]) +
                         " differs from the other inputs' " + std::to_string(batch));
      }
      batch = got[0];
    }
  }
  for (const auto& s : config.inputs) {
    if (!s.optional && !seen.count(s.name)) {
      throw BadRequest("missing input '" + s.name + "' (" + KServeDataType(s.dtype) + " " +
                       DimsText(batching ? [&] { auto d = s.dims; d.insert(d.begin(), -1); return d; }() : s.dims) +
                       ")");
    }
  }
  std::set<std::string> requested;
  for (const auto& name : request.outputs) {
    if (!requested.insert(name).second) throw BadRequest("output '" + name + "' is requested more than once");
    if (std::none_of(config.outputs.begin(), config.outputs.end(), [&](const TensorSpec& s) { return s.name == name; })) {
      std::string names;
      for (const auto& s : config.outputs) names += (names.empty() ? "" : ", ") + s.name;
      throw BadRequest("unknown output '" + name + "': model '" + config.name + "' has outputs " + names);
    }
  }
  request.batch_size = batching ? std::max<int64_t>(batch, 1) : 1;
}

DecodedInfer DecodeInferRequest(std::string_view body, std::optional<size_t> header_length, const ServeConfig& config,
                                int max_json_depth) {
  if (header_length && *header_length > body.size()) {
    throw BadRequest("Inference-Header-Content-Length is " + std::to_string(*header_length) + " but the body has " +
                     std::to_string(body.size()) + " bytes");
  }
  const std::string_view header = header_length ? body.substr(0, *header_length) : body;
  std::string_view binary = header_length ? body.substr(*header_length) : std::string_view();
  CheckJsonDepth(header, max_json_depth);
  json j;
  try {
    j = json::parse(header.begin(), header.end());
  } catch (const json::exception& e) {
    throw BadRequest(std::string("the request is not valid JSON: ") + e.what());
  }
  if (!j.is_object()) throw BadRequest("the request must be a JSON object");
  DecodedInfer out;
  if (j.contains("id")) {
    if (!j["id"].is_string()) throw BadRequest("'id' must be a string");
    out.request.id = j["id"].get<std::string>();
  }
  if (j.contains("parameters")) {
    const json& p = j["parameters"];
    if (!p.is_object()) throw BadRequest("'parameters' must be an object");
    out.binary_output_default = BoolParameter(p, "binary_data_output", "");
    if (p.contains("timeout")) {
      if (!p["timeout"].is_number_unsigned()) throw BadRequest("parameter 'timeout' must be microseconds (an integer >= 0)");
      out.request.timeout_us = p["timeout"].get<uint64_t>();
    }
  }
  if (!j.contains("inputs") || !j["inputs"].is_array()) throw BadRequest("'inputs' must be an array");
  size_t binary_at = 0;
  for (const json& in : j["inputs"]) {
    if (!in.is_object()) throw BadRequest("each of 'inputs' must be an object");
    if (!in.contains("name") || !in["name"].is_string()) throw BadRequest("an input has no 'name'");
    const std::string name = in["name"].get<std::string>();
    if (!in.contains("datatype") || !in["datatype"].is_string()) throw BadRequest("input '" + name + "': no 'datatype'");
    const std::string dt = in["datatype"].get<std::string>();
    const auto dtype = DataTypeFromKServe(dt);
    if (!dtype) throw BadRequest("input '" + name + "': unknown datatype '" + dt + "'");
    if (!in.contains("shape") || !in["shape"].is_array()) throw BadRequest("input '" + name + "': no 'shape' array");
    Shape shape;
    int64_t count = 1;
    for (const json& d : in["shape"]) {
      if (!d.is_number_unsigned()) throw BadRequest("input '" + name + "': shape " + Text(in["shape"]) +
                                                    " must hold non-negative integers");
      // Every dim, and their product, at most 2^40 (a dim after a 0 too: kernels multiply dims).
      const uint64_t n = d.get<uint64_t>();
      if (n > kMaxElements || (n != 0 && count > static_cast<int64_t>(kMaxElements / n))) {
        throw BadRequest("input '" + name + "': shape " + Text(in["shape"]) + " is too large (at most 2^40 elements)");
      }
      shape.push_back(static_cast<int64_t>(n));
      count *= static_cast<int64_t>(n);
    }
    const bool has_binary = in.contains("parameters") && in["parameters"].is_object() &&
                            in["parameters"].contains("binary_data_size");
    if (has_binary == in.contains("data")) {
      throw BadRequest("input '" + name + "': give either 'data' or parameters.binary_data_size");
    }
    // Check the name, dtype, shape and data size before allocating anything.
    CheckInput(name, *dtype, shape, config);
    if (has_binary) {
      if (!header_length) {
        throw BadRequest("input '" + name + "' has binary_data_size but the request has no Inference-Header-Content-Length");
      }
      const json& size = in["parameters"]["binary_data_size"];
      if (!size.is_number_unsigned()) throw BadRequest("input '" + name + "': binary_data_size must be an integer");
      const uint64_t n = size.get<uint64_t>();
      if (n > binary.size() - binary_at) {
        throw BadRequest("input '" + name + "': binary_data_size " + std::to_string(n) + " runs past the body (" +
                         std::to_string(binary.size() - binary_at) + " bytes left)");
      }
      const bool fits = *dtype == DataType::kString
                            ? static_cast<uint64_t>(count) <= n / 4
                            : static_cast<uint64_t>(count) * static_cast<uint64_t>(DataTypeBits(*dtype) / 8) == n;
      if (!fits) {
        throw BadRequest("input '" + name + "': binary_data_size is " + std::to_string(n) + " bytes but " + dt + " " +
                         DimsText(shape) + " needs " +
                         (*dtype == DataType::kString
                              ? "4 bytes of length per element"
                              : std::to_string(count * (DataTypeBits(*dtype) / 8)) + " bytes"));
      }
      Tensor t(*dtype, shape);
      FillFromBinary(t, binary.substr(binary_at, n), name);
      binary_at += n;
      out.request.inputs.emplace_back(name, std::move(t));
      continue;
    }
    std::vector<const json*> values;
    Flatten(in["data"], values);
    if (static_cast<int64_t>(values.size()) != count) {
      throw BadRequest("input '" + name + "': shape " + DimsText(shape) + " has " + std::to_string(count) +
                       " elements but data has " + std::to_string(values.size()));
    }
    Tensor t(*dtype, shape);
    FillFromJson(t, values, name);
    out.request.inputs.emplace_back(name, std::move(t));
  }
  if (binary_at != binary.size()) {
    throw BadRequest(std::to_string(binary.size() - binary_at) + " bytes of binary data after the inputs' binary_data_size");
  }
  if (j.contains("outputs")) {
    if (!j["outputs"].is_array()) throw BadRequest("'outputs' must be an array");
    for (const json& o : j["outputs"]) {
      if (!o.is_object() || !o.contains("name") || !o["name"].is_string()) throw BadRequest("an output has no 'name'");
      const std::string name = o["name"].get<std::string>();
      out.request.outputs.push_back(name);
      if (o.contains("parameters") && o["parameters"].is_object() && o["parameters"].contains("binary_data")) {
        (BoolParameter(o["parameters"], "binary_data", "output '" + name + "': ") ? out.binary_outputs
                                                                                  : out.json_outputs)
            .insert(name);
      }
    }
  }
  ValidateInferInputs(out.request, config);
  return out;
}

EncodedInfer EncodeInferResponse(const InferResponse& response, const std::string& model_name,
                                 const DecodedInfer& request) {
  json j;
  j["model_name"] = model_name;
  j["model_version"] = response.model_version;
  if (!request.request.id.empty()) j["id"] = request.request.id;
  j["outputs"] = json::array();
  std::string binary;
  for (const auto& [name, t] : response.outputs) {
    json o;
    o["name"] = name;
    o["datatype"] = KServeDataType(t.dtype());
    o["shape"] = t.shape();
    const bool as_binary =
        request.binary_outputs.count(name) || (request.binary_output_default && !request.json_outputs.count(name));
    if (as_binary) {
      o["parameters"] = {{"binary_data_size", BinarySize(t)}};
      AppendBinary(t, &binary);
    } else {
      o["data"] = ToJsonData(t);
    }
    j["outputs"].push_back(std::move(o));
  }
  EncodedInfer out;
  out.body = Text(j);  // a BYTES output need not be UTF-8 (binary_data returns it unchanged)
  if (!binary.empty() || request.binary_output_default || !request.binary_outputs.empty()) {
    out.header_length = out.body.size();
    out.body += binary;
  }
  return out;
}

}  // namespace ferry::server
