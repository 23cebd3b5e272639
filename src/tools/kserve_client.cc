#include "tools/kserve_client.h"

#include <array>
#include <cstring>
#include <nlohmann/json.hpp>

#include "ferry/error.h"
#include "ferry/float16.h"

namespace ferry::tools {
namespace {

using Json = nlohmann::json;

constexpr std::array<std::pair<std::string_view, DataType>, 14> kKServeTypes = {{
    {"BOOL", DataType::kBool},
    {"UINT8", DataType::kUint8},
    {"UINT16", DataType::kUint16},
    {"UINT32", DataType::kUint32},
    {"UINT64", DataType::kUint64},
    {"INT8", DataType::kInt8},
    {"INT16", DataType::kInt16},
    {"INT32", DataType::kInt32},
    {"INT64", DataType::kInt64},
    {"FP16", DataType::kFloat16},
    {"FP32", DataType::kFloat},
    {"FP64", DataType::kDouble},
    {"BYTES", DataType::kString},
    {"BF16", DataType::kBFloat16},
}};

// Elements of `shape`, or -1 when a dim is negative or the count overflows.
int64_t ElementCount(const std::vector<int64_t>& shape) {
  int64_t n = 1;
  for (int64_t d : shape) {
    if (d < 0 || (d > 0 && n > INT64_MAX / d)) return -1;
    n *= d;
  }
  return n;
}

std::vector<IoInfo> ParseTensors(const Json& j, const char* field, const std::string& model) {
  const std::string where = "model metadata of '" + model + "': ";
  if (!j.contains(field) || !j[field].is_array()) {
    throw InvalidArgumentError(where + "'" + field + "' is missing or not an array");
  }
  std::vector<IoInfo> out;
  for (const Json& t : j[field]) {
    IoInfo info;
    if (!t.is_object() || !t.contains("name") || !t["name"].is_string()) {
      throw InvalidArgumentError(where + "an entry of '" + field + "' has no name");
    }
    info.name = t["name"].get<std::string>();
    const std::string what = where + std::string(field) + " '" + info.name + "': ";
    if (!t.contains("datatype") || !t["datatype"].is_string()) throw InvalidArgumentError(what + "no datatype");
    const auto dtype = DataTypeFromKServeName(t["datatype"].get<std::string>());
    if (!dtype) throw InvalidArgumentError(what + "unknown datatype '" + t["datatype"].get<std::string>() + "'");
    info.dtype = *dtype;
    if (!t.contains("shape") || !t["shape"].is_array()) throw InvalidArgumentError(what + "no shape");
    for (const Json& d : t["shape"]) {
      if (!d.is_number_integer() || d.get<int64_t>() < -1) {
        throw InvalidArgumentError(what + "shape " + t["shape"].dump() + " has a dim that is not an integer >= -1");
      }
      info.dims.push_back(d.get<int64_t>());
      info.dim_names.emplace_back();
    }
    info.has_shape = true;
    out.push_back(std::move(info));
  }
  return out;
}

// A tensor's elements as a flat JSON array (numbers, or booleans for BOOL).
Json JsonData(const std::string& name, const Tensor& t) {
  Json data = Json::array();
  auto add = [&](auto* p) {
    for (int64_t i = 0; i < t.size(); ++i) data.push_back(p[i]);
  };
  switch (t.dtype()) {
    case DataType::kFloat: add(t.data<float>()); break;
    case DataType::kDouble: add(t.data<double>()); break;
    case DataType::kInt8: add(t.data<int8_t>()); break;
    case DataType::kInt16: add(t.data<int16_t>()); break;
    case DataType::kInt32: add(t.data<int32_t>()); break;
    case DataType::kInt64: add(t.data<int64_t>()); break;
    case DataType::kUint8: add(t.data<uint8_t>()); break;
    case DataType::kUint16: add(t.data<uint16_t>()); break;
    case DataType::kUint32: add(t.data<uint32_t>()); break;
    case DataType::kUint64: add(t.data<uint64_t>()); break;
    case DataType::kBool: add(t.data<bool>()); break;
    case DataType::kString: add(t.strings()); break;
    case DataType::kFloat16:
      for (int64_t i = 0; i < t.size(); ++i) data.push_back(Float16::ToFloat(t.data<uint16_t>()[i]));
      break;
    case DataType::kBFloat16:
      for (int64_t i = 0; i < t.size(); ++i) data.push_back(static_cast<float>(BFloat16::FromBits(t.data<uint16_t>()[i])));
      break;
    default:
      throw InvalidArgumentError("input '" + name + "': " + std::string(DataTypeName(t.dtype())) +
                                 " has no KServe v2 datatype");
  }
  return data;
}

}  // namespace

std::optional<DataType> DataTypeFromKServeName(std::string_view name) {
  for (const auto& [n, t] : kKServeTypes) {
    if (n == name) return t;
  }
  return std::nullopt;
}

std::string KServeDataTypeName(DataType t) {
  for (const auto& [n, type] : kKServeTypes) {
    if (type == t) return std::string(n);
  }
  return "";
}

KServeModelInfo ParseKServeModelInfo(std::string_view metadata_json, std::optional<std::string_view> config_json) {
  KServeModelInfo info;
  const Json m = Json::parse(metadata_json, nullptr, /*allow_exceptions=*/false);
  if (!m.is_object()) throw InvalidArgumentError("model metadata: the server's answer is not a JSON object");
  if (!m.contains("name") || !m["name"].is_string()) throw InvalidArgumentError("model metadata: no 'name'");
  info.name = m["name"].get<std::string>();
  if (m.contains("versions") && m["versions"].is_array()) {
    for (const Json& v : m["versions"]) {
      if (v.is_string()) info.versions.push_back(v.get<std::string>());
    }
  }
  info.inputs = ParseTensors(m, "inputs", info.name);
  info.outputs = ParseTensors(m, "outputs", info.name);
  if (config_json) {
    const Json c = Json::parse(*config_json, nullptr, /*allow_exceptions=*/false);
    if (!c.is_object()) {
      throw InvalidArgumentError("model config of '" + info.name + "': the server's answer is not a JSON object");
    }
    if (c.contains("max_batch_size")) {
      const Json& b = c["max_batch_size"];
      if (b.is_number_integer() && b.get<int64_t>() >= 0) {
        info.max_batch_size = b.get<int64_t>();
      } else {
        throw InvalidArgumentError("model config of '" + info.name + "': max_batch_size " + b.dump() +
                                   " is not an integer >= 0");
      }
    }
  }
  return info;
}

HttpRequestBody EncodeInferRequest(const std::vector<NamedValue>& inputs, const std::vector<std::string>& outputs,
                                   bool binary) {
  Json header{{"inputs", Json::array()}};
  std::string raw;
  for (const auto& [name, value] : inputs) {
    if (!value.is_tensor()) throw InvalidArgumentError("input '" + name + "': only tensors can be sent");
    const Tensor& t = value.tensor();
    const std::string dt = KServeDataTypeName(t.dtype());
    if (dt.empty()) {
      throw InvalidArgumentError("input '" + name + "': " + std::string(DataTypeName(t.dtype())) +
                                 " has no KServe v2 datatype");
    }
    Json in{{"name", name}, {"datatype", dt}, {"shape", t.shape()}};
    if (binary) {
      if (t.dtype() == DataType::kString) {
        throw InvalidArgumentError("input '" + name + "': BYTES tensors are sent as JSON here; use JSON tensors");
      }
      in["parameters"] = {{"binary_data_size", t.nbytes()}};
      raw.append(static_cast<const char*>(t.raw_data()), t.nbytes());
    } else {
      in["data"] = JsonData(name, t);
    }
    header["inputs"].push_back(std::move(in));
  }
  Json outs = Json::array();
  for (const std::string& o : outputs) outs.push_back({{"name", o}, {"parameters", {{"binary_data", binary}}}});
  header["outputs"] = std::move(outs);
  HttpRequestBody r;
  r.body = header.dump();
  if (binary) {
    r.header_length = r.body.size();
    r.body += raw;
    r.content_type = "application/octet-stream";
  }
  return r;
}

std::string CheckInferResponse(std::string_view body, std::optional<size_t> header_length,
                               const std::vector<IoInfo>& outputs) {
  if (header_length && *header_length > body.size()) {
    return "response: Inference-Header-Content-Length " + std::to_string(*header_length) + " exceeds the body (" +
           std::to_string(body.size()) + " bytes)";
  }
  const std::string_view json_text = header_length ? body.substr(0, *header_length) : body;
  const Json j = Json::parse(json_text, nullptr, /*allow_exceptions=*/false);
  if (!j.is_object() || !j.contains("outputs") || !j["outputs"].is_array()) {
    return "response: not a KServe infer response (no 'outputs' array)";
  }
  for (const IoInfo& expected : outputs) {
    const Json* found = nullptr;
    for (const Json& o : j["outputs"]) {
      if (o.is_object() && o.contains("name") && o["name"] == expected.name) found = &o;
    }
    const std::string what = "response: output '" + expected.name + "'";
    if (!found) return what + " is missing";
    const Json& o = *found;
    if (!o.contains("datatype") || !o["datatype"].is_string()) return what + " has no datatype";
    const auto dtype = DataTypeFromKServeName(o["datatype"].get<std::string>());
    if (!dtype) return what + ": unknown datatype " + o["datatype"].dump();
    std::vector<int64_t> shape;
    if (!o.contains("shape") || !o["shape"].is_array()) return what + " has no shape";
    for (const Json& d : o["shape"]) {
      if (!d.is_number_integer()) return what + ": shape " + o["shape"].dump() + " is not a list of integers";
      shape.push_back(d.get<int64_t>());
    }
    const int64_t elements = ElementCount(shape);
    if (elements < 0) return what + ": shape " + o["shape"].dump() + " is not a tensor shape";
    const bool is_binary = o.contains("parameters") && o["parameters"].is_object() &&
                           o["parameters"].contains("binary_data_size");
    if (is_binary) {
      const Json& n = o["parameters"]["binary_data_size"];
      if (!n.is_number_unsigned()) return what + ": binary_data_size is not a size";
      if (!header_length) return what + " has binary_data_size but the response has no Inference-Header-Content-Length";
      const size_t bytes = n.get<size_t>();
      if (*dtype != DataType::kString) {
        const size_t expected_bytes = static_cast<size_t>(elements) * static_cast<size_t>(DataTypeBits(*dtype) / 8);
        if (bytes != expected_bytes) {
          return what + ": binary_data_size " + std::to_string(bytes) + " but " + o["datatype"].get<std::string>() +
                 " " + o["shape"].dump() + " needs " + std::to_string(expected_bytes);
        }
      }
    } else {
      if (!o.contains("data") || !o["data"].is_array()) return what + " has neither data nor binary_data_size";
      if (static_cast<int64_t>(o["data"].size()) != elements) {
        return what + ": shape " + o["shape"].dump() + " has " + std::to_string(elements) + " elements but data has " +
               std::to_string(o["data"].size());
      }
    }
  }
  size_t binary_total = 0;  // over every output, asked for or not
  for (const Json& o : j["outputs"]) {
    if (o.is_object() && o.contains("parameters") && o["parameters"].is_object() &&
        o["parameters"].contains("binary_data_size") && o["parameters"]["binary_data_size"].is_number_unsigned()) {
      binary_total += o["parameters"]["binary_data_size"].get<size_t>();
    }
  }
  const size_t rest = header_length ? body.size() - *header_length : 0;
  if (binary_total != rest) {
    return "response: the outputs' binary_data_size add up to " + std::to_string(binary_total) + " bytes but " +
           std::to_string(rest) + " follow the JSON header";
  }
  return "";
}

std::string DescribeHttpError(int status, std::string_view body) {
  std::string message;
  const Json j = Json::parse(body, nullptr, /*allow_exceptions=*/false);
  if (j.is_object() && j.contains("error") && j["error"].is_string()) {
    message = j["error"].get<std::string>();
  } else {
    message = "'" + std::string(body.substr(0, 200)) + (body.size() > 200 ? "...'" : "'");
  }
  return "HTTP " + std::to_string(status) + ": " + message;
}

}  // namespace ferry::tools
