#include "server/grpc_codec.h"

#include <cstring>
#include <limits>
#include <type_traits>

#include "server/kserve_codec.h"

namespace ferry::server {
namespace {

using Contents = inference::InferTensorContents;

constexpr int64_t kMaxElements = int64_t{1} << 40;  // per input tensor, and per dim

std::string DimsText(const Shape& dims) {
  std::string s = "[";
  for (size_t i = 0; i < dims.size(); ++i) s += (i ? "," : "") + std::to_string(dims[i]);
  return s + "]";
}

// The typed field a data type travels in (nullptr: none, it must be raw: FP16, BF16).
const char* ContentsField(DataType t) {
  switch (t) {
    case DataType::kBool: return "bool_contents";
    case DataType::kInt8: case DataType::kInt16: case DataType::kInt32: return "int_contents";
    case DataType::kInt64: return "int64_contents";
    case DataType::kUint8: case DataType::kUint16: case DataType::kUint32: return "uint_contents";
    case DataType::kUint64: return "uint64_contents";
    case DataType::kFloat: return "fp32_contents";
    case DataType::kDouble: return "fp64_contents";
    case DataType::kString: return "bytes_contents";
    default: return nullptr;
  }
}

// Element counts of every typed field, by name.
std::vector<std::pair<const char*, int>> FieldSizes(const Contents& c) {
  return {{"bool_contents", c.bool_contents_size()},   {"int_contents", c.int_contents_size()},
          {"int64_contents", c.int64_contents_size()}, {"uint_contents", c.uint_contents_size()},
          {"uint64_contents", c.uint64_contents_size()}, {"fp32_contents", c.fp32_contents_size()},
          {"fp64_contents", c.fp64_contents_size()},   {"bytes_contents", c.bytes_contents_size()}};
}

template <typename T, typename Src>
void CopyChecked(Tensor& t, const Src& src, const std::string& input, const char* type) {
  T* dst = t.data<T>();
  for (int i = 0; i < src.size(); ++i) {
    const auto v = src.Get(i);  // int32 for signed T, uint32 for unsigned T
    bool out_of_range = v > static_cast<decltype(v)>(std::numeric_limits<T>::max());
    if constexpr (std::is_signed_v<T>) out_of_range = out_of_range || v < std::numeric_limits<T>::min();
    if (out_of_range) {
      throw BadRequest("input '" + input + "': element " + std::to_string(i) + " (" + std::to_string(v) +
                       ") is not a " + type + " integer");
    }
    dst[i] = static_cast<T>(v);
  }
}

template <typename T, typename Src>
void Copy(Tensor& t, const Src& src) {
  T* dst = t.data<T>();
  for (int i = 0; i < src.size(); ++i) dst[i] = static_cast<T>(src.Get(i));
}

Tensor FromTyped(DataType dtype, const Shape& shape, int64_t count, const Contents& c, const std::string& input,
                 const std::string& type_name) {
  const char* field = ContentsField(dtype);
  if (!field) {
    throw BadRequest("input '" + input + "': " + type_name +
                     " has no typed contents field; send its bytes in raw_input_contents");
  }
  for (const auto& [name, n] : FieldSizes(c)) {
    if (n > 0 && std::strcmp(name, field) != 0) {
      throw BadRequest("input '" + input + "': " + type_name + " data goes in contents." + field + ", not in " +
                       name);
    }
    if (std::strcmp(name, field) == 0 && n != count) {
      throw BadRequest("input '" + input + "': shape " + DimsText(shape) + " has " + std::to_string(count) +
                       " elements but contents." + field + " has " + std::to_string(n));
    }
  }
  Tensor t(dtype, shape);
  switch (dtype) {
    case DataType::kBool: Copy<bool>(t, c.bool_contents()); break;
    case DataType::kInt8: CopyChecked<int8_t>(t, c.int_contents(), input, "INT8"); break;
    case DataType::kInt16: CopyChecked<int16_t>(t, c.int_contents(), input, "INT16"); break;
    case DataType::kInt32: Copy<int32_t>(t, c.int_contents()); break;
    case DataType::kInt64: Copy<int64_t>(t, c.int64_contents()); break;
    case DataType::kUint8: CopyChecked<uint8_t>(t, c.uint_contents(), input, "UINT8"); break;
    case DataType::kUint16: CopyChecked<uint16_t>(t, c.uint_contents(), input, "UINT16"); break;
    case DataType::kUint32: Copy<uint32_t>(t, c.uint_contents()); break;
    case DataType::kUint64: Copy<uint64_t>(t, c.uint64_contents()); break;
    case DataType::kFloat: Copy<float>(t, c.fp32_contents()); break;
    case DataType::kDouble: Copy<double>(t, c.fp64_contents()); break;
    case DataType::kString:
      for (int i = 0; i < c.bytes_contents_size(); ++i) t.strings()[i] = c.bytes_contents(i);
      break;
    default: throw BadRequest("input '" + input + "': data type " + type_name + " is not supported");
  }
  return t;
}

// Raw bytes: row-major, little-endian; BYTES elements as a 4-byte little-endian length, then the bytes.
Tensor FromRaw(DataType dtype, const Shape& shape, int64_t count, const std::string& bytes, const std::string& input,
               const std::string& type_name) {
  if (dtype == DataType::kString) {
    // Each element takes 4 bytes of length at least: a count the data cannot hold is refused before `count`
    // strings are allocated.
    if (static_cast<uint64_t>(count) > bytes.size() / 4) {
      throw BadRequest("input '" + input + "': raw BYTES data has " + std::to_string(bytes.size()) +
                       " bytes, too few for " + std::to_string(count) + " elements (4 bytes of length each)");
    }
    Tensor t(dtype, shape);
    size_t at = 0;
    for (int64_t i = 0; i < count; ++i) {
      if (bytes.size() - at < 4) {
        throw BadRequest("input '" + input + "': raw BYTES data ends before element " + std::to_string(i));
      }
      uint32_t len = 0;
      std::memcpy(&len, bytes.data() + at, 4);  // little-endian, as the protocol states (x86 / arm64 hosts)
      at += 4;
      if (bytes.size() - at < len) {
        throw BadRequest("input '" + input + "': raw BYTES element " + std::to_string(i) + " claims " +
                         std::to_string(len) + " bytes but " + std::to_string(bytes.size() - at) + " remain");
      }
      t.strings()[i] = bytes.substr(at, len);
      at += len;
    }
    if (at != bytes.size()) {
      throw BadRequest("input '" + input + "': raw BYTES data has " + std::to_string(bytes.size() - at) +
                       " bytes after its " + std::to_string(count) + " elements");
    }
    return t;
  }
  const uint64_t need = static_cast<uint64_t>(count) * static_cast<uint64_t>(DataTypeBits(dtype) / 8);
  if (bytes.size() != need) {
    throw BadRequest("input '" + input + "': raw_input_contents has " + std::to_string(bytes.size()) +
                     " bytes but " + type_name + " " + DimsText(shape) + " needs " + std::to_string(need));
  }
  Tensor t = Tensor::Uninitialized(dtype, shape);
  if (need > 0) std::memcpy(t.raw_data(), bytes.data(), need);
  return t;
}

void Duration(const DurationStat& d, inference::StatisticDuration* out) {
  out->set_count(d.count.load());
  out->set_ns(d.ns.load());
}

}  // namespace

InferRequest DecodeGrpcInfer(const inference::ModelInferRequest& req, const ServeConfig& config) {
  InferRequest out;
  out.id = req.id();
  const bool raw = req.raw_input_contents_size() > 0;
  if (raw && req.raw_input_contents_size() != req.inputs_size()) {
    throw BadRequest("raw_input_contents has " + std::to_string(req.raw_input_contents_size()) +
                     " entries but the request has " + std::to_string(req.inputs_size()) +
                     " inputs (one entry per input, in order)");
  }
  for (const auto& [key, value] : req.parameters()) {
    if (key != "timeout") continue;
    if (value.parameter_choice_case() == inference::InferParameter::kInt64Param && value.int64_param() >= 0) {
      out.timeout_us = static_cast<uint64_t>(value.int64_param());
    } else if (value.parameter_choice_case() == inference::InferParameter::kUint64Param) {
      out.timeout_us = value.uint64_param();
    } else {
      throw BadRequest("parameter 'timeout' must be microseconds (an integer >= 0)");
    }
  }
  for (int i = 0; i < req.inputs_size(); ++i) {
    const auto& in = req.inputs(i);
    const std::string& name = in.name();
    if (name.empty()) throw BadRequest("input " + std::to_string(i) + " has no name");
    const auto dtype = DataTypeFromKServe(in.datatype());
    if (!dtype) throw BadRequest("input '" + name + "': unknown datatype '" + in.datatype() + "'");
    Shape shape;
    int64_t count = 1;
    for (int64_t d : in.shape()) {
      if (d < 0) throw BadRequest("input '" + name + "': shape " + DimsText({in.shape().begin(), in.shape().end()}) +
                                  " must hold non-negative integers");
      // Every dim, and their product, at most 2^40 (a dim after a 0 too: kernels multiply dims), as over REST.
      if (d > kMaxElements || (d != 0 && count > kMaxElements / d)) {
        throw BadRequest("input '" + name + "': shape " + DimsText({in.shape().begin(), in.shape().end()}) +
                         " is too large (at most 2^40 elements)");
      }
      count *= d;
      shape.push_back(d);
    }
    // The name, dtype and shape first (the REST path's messages), then the data.
    CheckInput(name, *dtype, shape, config);
    if (raw && in.has_contents()) {
      throw BadRequest("input '" + name + "' has contents but the request uses raw_input_contents (one or the other)");
    }
    out.inputs.emplace_back(name, raw ? FromRaw(*dtype, shape, count, req.raw_input_contents(i), name, in.datatype())
                                      : FromTyped(*dtype, shape, count, in.contents(), name, in.datatype()));
  }
  for (const auto& o : req.outputs()) out.outputs.push_back(o.name());
  ValidateInferInputs(out, config);
  return out;
}

bool GrpcRawOutputs(const inference::ModelInferRequest& request, const ServeConfig& config) {
  if (request.raw_input_contents_size() > 0 || request.inputs_size() == 0) return true;
  for (const auto& s : config.outputs) {
    if (!ContentsField(s.dtype)) return true;
  }
  return false;
}

void EncodeGrpcInfer(const InferResponse& response, const std::string& model_name, const std::string& id, bool raw,
                     inference::ModelInferResponse* out) {
  out->set_model_name(model_name);
  out->set_model_version(response.model_version);
  out->set_id(id);
  for (const auto& [name, t] : response.outputs) {
    auto* o = out->add_outputs();
    o->set_name(name);
    o->set_datatype(KServeDataType(t.dtype()));
    for (int64_t d : t.shape()) o->add_shape(d);
    const int64_t n = t.size();
    if (raw) {
      std::string* bytes = out->add_raw_output_contents();
      if (t.dtype() == DataType::kString) {
        for (int64_t i = 0; i < n; ++i) {
          const auto len = static_cast<uint32_t>(t.strings()[i].size());
          bytes->append(reinterpret_cast<const char*>(&len), 4);
          bytes->append(t.strings()[i]);
        }
      } else {
        bytes->assign(static_cast<const char*>(t.raw_data()), t.nbytes());
      }
      continue;
    }
    auto* c = o->mutable_contents();
    switch (t.dtype()) {
      case DataType::kBool: for (int64_t i = 0; i < n; ++i) c->add_bool_contents(t.data<bool>()[i]); break;
      case DataType::kInt8: for (int64_t i = 0; i < n; ++i) c->add_int_contents(t.data<int8_t>()[i]); break;
      case DataType::kInt16: for (int64_t i = 0; i < n; ++i) c->add_int_contents(t.data<int16_t>()[i]); break;
      case DataType::kInt32: c->mutable_int_contents()->Add(t.data<int32_t>(), t.data<int32_t>() + n); break;
      case DataType::kInt64: c->mutable_int64_contents()->Add(t.data<int64_t>(), t.data<int64_t>() + n); break;
      case DataType::kUint8: for (int64_t i = 0; i < n; ++i) c->add_uint_contents(t.data<uint8_t>()[i]); break;
      case DataType::kUint16: for (int64_t i = 0; i < n; ++i) c->add_uint_contents(t.data<uint16_t>()[i]); break;
      case DataType::kUint32: c->mutable_uint_contents()->Add(t.data<uint32_t>(), t.data<uint32_t>() + n); break;
      case DataType::kUint64: c->mutable_uint64_contents()->Add(t.data<uint64_t>(), t.data<uint64_t>() + n); break;
      case DataType::kFloat: c->mutable_fp32_contents()->Add(t.data<float>(), t.data<float>() + n); break;
      case DataType::kDouble: c->mutable_fp64_contents()->Add(t.data<double>(), t.data<double>() + n); break;
      case DataType::kString: for (int64_t i = 0; i < n; ++i) c->add_bytes_contents(t.strings()[i]); break;
      default: break;  // FP16 / BF16 outputs make the whole response raw (GrpcRawOutputs)
    }
  }
}

void GrpcStats(const ModelStats& stats, inference::ModelStatistics* out) {
  out->set_name(stats.model);
  out->set_version(stats.version);
  out->set_last_inference(static_cast<uint64_t>(std::max<int64_t>(stats.last_inference_ms.load(), 0)));
  out->set_inference_count(stats.inference_count.load());
  out->set_execution_count(stats.execution_count.load());
  auto* s = out->mutable_inference_stats();
  Duration(stats.success, s->mutable_success());
  Duration(stats.fail, s->mutable_fail());
  Duration(stats.queue, s->mutable_queue());
  Duration(stats.compute_input, s->mutable_compute_input());
  Duration(stats.compute_infer, s->mutable_compute_infer());
  Duration(stats.compute_output, s->mutable_compute_output());
  for (const auto& [size, b] : stats.batch_stats()) {
    auto* bs = out->add_batch_stats();
    bs->set_batch_size(static_cast<uint64_t>(size));
    for (auto [d, ns] : {std::pair{bs->mutable_compute_input(), b.compute_input_ns},
                         std::pair{bs->mutable_compute_infer(), b.compute_infer_ns},
                         std::pair{bs->mutable_compute_output(), b.compute_output_ns}}) {
      d->set_count(b.count);
      d->set_ns(ns);
    }
  }
  auto* m = out->add_memory_usage();
  m->set_type("CPU");
  m->set_byte_size(static_cast<uint64_t>(std::max<int64_t>(stats.memory_bytes.load(), 0)));
}

}  // namespace ferry::server
