#include "server/model_config.h"

#include <google/protobuf/io/tokenizer.h>

#include <algorithm>
#include <set>
#include <unordered_map>
#include <unordered_set>

#include "ferry/error.h"
#include "ferry/limits.h"

namespace ferry::server {
namespace {

namespace pb = google::protobuf;

class Collector : public pb::io::ErrorCollector {
 public:
  explicit Collector(std::string path) : path_(std::move(path)) {}
  void AddError(int line, pb::io::ColumnNumber column, const std::string& message) override {
    if (first_error_.empty()) first_error_ = Position(line, column) + message;
  }
  void AddWarning(int line, pb::io::ColumnNumber column, const std::string& message) override {
    warnings_.push_back(Position(line, column) + message);
  }
  const std::string& first_error() const { return first_error_; }
  const std::vector<std::string>& warnings() const { return warnings_; }

 private:
  std::string Position(int line, int column) const {
    return path_ + ":" + std::to_string(line + 1) + ":" + std::to_string(column + 1) + ": ";
  }
  std::string path_;
  std::string first_error_;
  std::vector<std::string> warnings_;
};

// Fields Ferry reads (full names). Sub-messages of these are walked; any other field that is set is ignored.
const std::unordered_set<std::string>& ReadFields() {
  static const std::unordered_set<std::string> fields = {
      "inference.ModelConfig.name", "inference.ModelConfig.platform", "inference.ModelConfig.backend",
      "inference.ModelConfig.version_policy", "inference.ModelConfig.max_batch_size", "inference.ModelConfig.input",
      "inference.ModelConfig.output", "inference.ModelConfig.optimization", "inference.ModelConfig.dynamic_batching",
      "inference.ModelConfig.instance_group", "inference.ModelConfig.default_model_filename",
      "inference.ModelConfig.parameters", "inference.ModelConfig.model_transaction_policy",
      "inference.ModelInput.name", "inference.ModelInput.data_type", "inference.ModelInput.format",
      "inference.ModelInput.dims", "inference.ModelInput.optional", "inference.ModelOutput.name",
      "inference.ModelOutput.data_type", "inference.ModelOutput.dims", "inference.ModelInstanceGroup.name",
      "inference.ModelInstanceGroup.kind", "inference.ModelInstanceGroup.count",
      "inference.ModelVersionPolicy.latest", "inference.ModelVersionPolicy.all",
      "inference.ModelVersionPolicy.specific", "inference.ModelVersionPolicy.Latest.num_versions",
      "inference.ModelVersionPolicy.Specific.versions", "inference.ModelOptimizationPolicy.graph",
      "inference.ModelOptimizationPolicy.Graph.level", "inference.ModelDynamicBatching.preferred_batch_size",
      "inference.ModelDynamicBatching.max_queue_delay_microseconds",
      "inference.ModelDynamicBatching.default_queue_policy", "inference.ModelQueuePolicy.timeout_action",
      "inference.ModelQueuePolicy.default_timeout_microseconds",
      "inference.ModelQueuePolicy.allow_timeout_override", "inference.ModelQueuePolicy.max_queue_size",
      "inference.ModelConfig.model_warmup", "inference.ModelWarmup.name", "inference.ModelWarmup.batch_size",
      "inference.ModelWarmup.inputs", "inference.ModelWarmup.count",
  };
  return fields;
}

// Fields whose meaning Ferry does not implement: serving without them would answer differently from Triton.
const std::unordered_map<std::string, std::string>& RefusedFields() {
  static const std::unordered_map<std::string, std::string> fields = {
      {"inference.ModelConfig.sequence_batching", "sequence batching is not supported"},
      {"inference.ModelConfig.ensemble_scheduling", "ensembles are not supported"},
      {"inference.ModelConfig.batch_input", "batch inputs are not supported"},
      {"inference.ModelConfig.batch_output", "batch outputs are not supported"},
      {"inference.ModelInput.reshape", "reshape is not supported: give the model's own dims"},
      {"inference.ModelOutput.reshape", "reshape is not supported: give the model's own dims"},
      {"inference.ModelTransactionPolicy.decoupled", "decoupled models are not supported"},
  };
  return fields;
}

std::string LocationPrefix(const std::string& path, const pb::TextFormat::ParseInfoTree* tree,
                           const pb::FieldDescriptor* field, int index) {
  if (path.empty()) return "(auto-completed config): ";
  if (tree) {
    const auto loc = tree->GetLocation(field, field->is_repeated() ? std::max(index, 0) : -1);
    if (loc.line >= 0) return path + ":" + std::to_string(loc.line + 1) + ": ";
  }
  return path + ": ";
}

void WalkFields(const pb::Message& message, const pb::TextFormat::ParseInfoTree* tree, const std::string& prefix,
                const std::string& path, std::vector<std::string>* warnings) {
  std::vector<const pb::FieldDescriptor*> fields;
  message.GetReflection()->ListFields(message, &fields);
  for (const auto* field : fields) {
    const std::string name = prefix.empty() ? field->name() : prefix + "." + field->name();
    if (auto it = RefusedFields().find(field->full_name()); it != RefusedFields().end()) {
      throw InvalidModelError(LocationPrefix(path, tree, field, 0) + name + ": " + it->second + " by Ferry");
    }
    if (!ReadFields().count(field->full_name())) {
      if (warnings) warnings->push_back(LocationPrefix(path, tree, field, 0) + name + " is ignored by Ferry");
      continue;
    }
    if (field->type() != pb::FieldDescriptor::TYPE_MESSAGE || field->is_map()) continue;
    const auto* reflection = message.GetReflection();
    if (field->is_repeated()) {
      for (int i = 0; i < reflection->FieldSize(message, field); ++i) {
        WalkFields(reflection->GetRepeatedMessage(message, field, i), tree ? tree->GetTreeForNested(field, i) : nullptr,
                   name + "[" + std::to_string(i) + "]", path, warnings);
      }
    } else {
      WalkFields(reflection->GetMessage(message, field), tree ? tree->GetTreeForNested(field, -1) : nullptr, name,
                 path, warnings);
    }
  }
}

std::string DimsText(const std::vector<int64_t>& dims) {
  std::string s = "[";
  for (size_t i = 0; i < dims.size(); ++i) s += (i ? "," : "") + std::to_string(dims[i]);
  return s + "]";
}

std::string ModelDimsText(const IoInfo& io) {
  if (!io.has_shape) return "unknown rank";
  return DimsText(io.dims);
}

}  // namespace

std::string ParsedConfig::Where(std::initializer_list<std::pair<const char*, int>> path_to_field) const {
  if (path.empty()) return "(auto-completed config): ";
  // The line of the innermost field found; a repeated scalar in list syntax ("dims: [ 3, -2 ]") has no location
  // per element, so its first element's line, or the enclosing message's, stands in.
  int line = -1;
  const auto locate = [&](const pb::TextFormat::ParseInfoTree* t, const pb::FieldDescriptor* f, int index) {
    for (int i : {f->is_repeated() ? std::max(index, 0) : -1, f->is_repeated() ? 0 : -1}) {
      const auto loc = t->GetLocation(f, i);
      if (loc.line >= 0) return line = loc.line, true;
    }
    return false;
  };
  const pb::Descriptor* desc = proto.GetDescriptor();
  const pb::TextFormat::ParseInfoTree* t = tree.get();
  for (const auto& [name, index] : path_to_field) {
    const pb::FieldDescriptor* field = desc ? desc->FindFieldByName(name) : nullptr;
    if (!field || !t || !locate(t, field, index)) break;
    desc = field->message_type();
    t = desc ? t->GetTreeForNested(field, field->is_repeated() ? std::max(index, 0) : -1) : nullptr;
  }
  if (line < 0) return path + ": ";
  return path + ":" + std::to_string(line + 1) + ": ";
}

ParsedConfig ParseModelConfig(const std::string& text, const std::string& path, std::vector<std::string>* warnings) {
  ParsedConfig config;
  config.path = path;
  config.tree = std::make_shared<pb::TextFormat::ParseInfoTree>();
  Collector collector(path);
  pb::TextFormat::Parser parser;
  parser.RecordErrorsTo(&collector);
  parser.WriteLocationsTo(config.tree.get());
  if (!parser.ParseFromString(text, &config.proto)) {
    throw InvalidModelError(collector.first_error().empty() ? path + ": not a valid model configuration"
                                                            : collector.first_error());
  }
  if (warnings) warnings->insert(warnings->end(), collector.warnings().begin(), collector.warnings().end());
  WalkFields(config.proto, config.tree.get(), "", path, warnings);
  return config;
}

ParsedConfig EmptyModelConfig(const std::string& model_name) {
  ParsedConfig config;
  config.proto.set_name(model_name);
  return config;
}

DataType DataTypeFromConfig(inference::DataType t) {
  switch (t) {
    case inference::TYPE_BOOL: return DataType::kBool;
    case inference::TYPE_UINT8: return DataType::kUint8;
    case inference::TYPE_UINT16: return DataType::kUint16;
    case inference::TYPE_UINT32: return DataType::kUint32;
    case inference::TYPE_UINT64: return DataType::kUint64;
    case inference::TYPE_INT8: return DataType::kInt8;
    case inference::TYPE_INT16: return DataType::kInt16;
    case inference::TYPE_INT32: return DataType::kInt32;
    case inference::TYPE_INT64: return DataType::kInt64;
    case inference::TYPE_FP16: return DataType::kFloat16;
    case inference::TYPE_FP32: return DataType::kFloat;
    case inference::TYPE_FP64: return DataType::kDouble;
    case inference::TYPE_STRING: return DataType::kString;
    case inference::TYPE_BF16: return DataType::kBFloat16;
    default: return DataType::kUndefined;
  }
}

inference::DataType DataTypeToConfig(DataType t) {
  for (int v = inference::DataType_MIN; v <= inference::DataType_MAX; ++v) {
    const auto c = static_cast<inference::DataType>(v);
    if (c != inference::TYPE_INVALID && DataTypeFromConfig(c) == t) return c;
  }
  return inference::TYPE_INVALID;
}

void CompleteModelConfig(ParsedConfig& config, const std::vector<IoInfo>& model_inputs,
                         const std::vector<IoInfo>& model_outputs, int64_t default_max_batch_size,
                         const std::string& model_path) {
  auto& proto = config.proto;
  const auto batchable = [](const IoInfo& io) {
    return io.kind == "tensor" && io.has_shape && !io.dims.empty() && io.dims[0] < 0;
  };
  if (proto.input_size() == 0 && proto.output_size() == 0 && proto.max_batch_size() == 0 &&
      default_max_batch_size > 0 && !model_inputs.empty() &&
      std::all_of(model_inputs.begin(), model_inputs.end(), batchable) &&
      std::all_of(model_outputs.begin(), model_outputs.end(), batchable)) {
    proto.set_max_batch_size(static_cast<int32_t>(default_max_batch_size));
    if (proto.scheduling_choice_case() == inference::ModelConfig::SCHEDULING_CHOICE_NOT_SET) {
      proto.mutable_dynamic_batching();
    }
  }
  const int64_t batch_dims = proto.max_batch_size() > 0 ? 1 : 0;
  // Checks one listed tensor against the model's; `kind` is "input" or "output".
  const auto check = [&](const char* kind, int index, const std::string& name, inference::DataType dtype,
                         const pb::RepeatedField<int64_t>& dims, const std::vector<IoInfo>& model) {
    const std::string where = config.Where({{kind, index}}) + kind + "[" + std::to_string(index) + "] '" + name + "': ";
    auto it = std::find_if(model.begin(), model.end(), [&](const IoInfo& io) { return io.name == name; });
    if (it == model.end()) {
      std::string names;
      for (const auto& io : model) names += (names.empty() ? "" : ", ") + io.name;
      throw InvalidModelError(where + "the model " + model_path + " has no " + kind + " of that name (it has: " +
                              names + ")");
    }
    if (it->kind != "tensor") {
      throw InvalidModelError(where + "the model's " + kind + " is a " + it->kind + "; Ferry serves tensors only");
    }
    const DataType want = DataTypeFromConfig(dtype);
    if (want != it->dtype) {
      throw InvalidModelError(config.Where({{kind, index}, {"data_type", -1}}) + kind + "[" + std::to_string(index) +
                              "] '" + name + "': data_type " + inference::DataType_Name(dtype) +
                              " does not match the model's " + std::string(DataTypeName(it->dtype)) +
                              " (" + inference::DataType_Name(DataTypeToConfig(it->dtype)) + ")");
    }
    if (!it->has_shape) return;
    const auto dims_where = config.Where({{kind, index}, {"dims", 0}}) + kind + "[" + std::to_string(index) + "] '" +
                            name + "': dims ";
    if (static_cast<int64_t>(it->dims.size()) != dims.size() + batch_dims) {
      throw InvalidModelError(dims_where + DimsText({dims.begin(), dims.end()}) +
                              (batch_dims ? " (plus the batch dim, max_batch_size > 0)" : "") +
                              " do not match the model's " + ModelDimsText(*it));
    }
    if (batch_dims && it->dims[0] >= 0) {
      throw InvalidModelError(config.Where({{"max_batch_size", -1}}) + "max_batch_size " +
                              std::to_string(proto.max_batch_size()) + " needs a dynamic first dim on " + kind + " '" +
                              name + "', but the model has " + ModelDimsText(*it) + " (set max_batch_size: 0)");
    }
    for (int d = 0; d < dims.size(); ++d) {
      const int64_t m = it->dims[static_cast<size_t>(d + batch_dims)];
      if (m >= 0 && dims[d] >= 0 && m != dims[d]) {
        throw InvalidModelError(dims_where + DimsText({dims.begin(), dims.end()}) + " do not match the model's " +
                                ModelDimsText(*it) + (batch_dims ? " (whose first dim is the batch)" : ""));
      }
    }
  };
  const auto fill_dims = [&](const IoInfo& io, pb::RepeatedField<int64_t>* dims) {
    if (!io.has_shape) {
      throw InvalidModelError("(auto-completed config): '" + io.name + "' has no static rank in " + model_path +
                              ": list it in config.pbtxt with its dims");
    }
    if (batch_dims && io.dims.empty()) {
      throw InvalidModelError("(auto-completed config): '" + io.name + "' is a scalar in " + model_path +
                              " but max_batch_size > 0 needs a batch dim");
    }
    if (batch_dims && io.dims[0] >= 0) {
      throw InvalidModelError(config.Where({{"max_batch_size", -1}}) + "max_batch_size " +
                              std::to_string(proto.max_batch_size()) + " needs a dynamic first dim on '" + io.name +
                              "', but the model has " + ModelDimsText(io) + " (set max_batch_size: 0)");
    }
    for (size_t d = static_cast<size_t>(batch_dims); d < io.dims.size(); ++d) dims->Add(io.dims[d] < 0 ? -1 : io.dims[d]);
  };
  if (proto.input_size() == 0) {
    for (const auto& io : model_inputs) {
      if (io.kind != "tensor") throw InvalidModelError(model_path + ": input '" + io.name + "' is a " + io.kind +
                                                       "; Ferry serves tensors only");
      auto* in = proto.add_input();
      in->set_name(io.name);
      in->set_data_type(DataTypeToConfig(io.dtype));
      fill_dims(io, in->mutable_dims());
    }
  } else {
    for (int i = 0; i < proto.input_size(); ++i) {
      const auto& in = proto.input(i);
      check("input", i, in.name(), in.data_type(), in.dims(), model_inputs);
    }
    for (const auto& io : model_inputs) {
      const bool listed = std::any_of(proto.input().begin(), proto.input().end(),
                                      [&](const inference::ModelInput& in) { return in.name() == io.name; });
      if (!listed) {
        throw InvalidModelError(config.Where({{"input", 0}}) + "input: the model " + model_path + " has input '" +
                                io.name + "', which the config does not list");
      }
    }
  }
  if (proto.output_size() == 0) {
    for (const auto& io : model_outputs) {
      if (io.kind != "tensor") throw InvalidModelError(model_path + ": output '" + io.name + "' is a " + io.kind +
                                                       "; Ferry serves tensors only");
      auto* out = proto.add_output();
      out->set_name(io.name);
      out->set_data_type(DataTypeToConfig(io.dtype));
      fill_dims(io, out->mutable_dims());
    }
  } else {
    for (int i = 0; i < proto.output_size(); ++i) {
      const auto& out = proto.output(i);
      check("output", i, out.name(), out.data_type(), out.dims(), model_outputs);
    }
  }
}

ServeConfig ValidateModelConfig(const ParsedConfig& config, const std::string& model_name,
                                std::vector<std::string>* warnings) {
  const auto& p = config.proto;
  const auto fail = [](const std::string& where, const std::string& field, const std::string& problem) {
    throw InvalidModelError(where + field + ": " + problem);
  };
  ServeConfig c;
  c.name = model_name;
  if (!p.name().empty() && p.name() != model_name) {
    fail(config.Where({{"name", -1}}), "name", "'" + p.name() + "' differs from the model's folder name '" +
                                                   model_name + "'");
  }
  if (!p.platform().empty() && p.platform() != "onnxruntime_onnx") {
    fail(config.Where({{"platform", -1}}), "platform",
         "'" + p.platform() + "': Ferry serves ONNX models (platform \"onnxruntime_onnx\")");
  }
  if (!p.backend().empty() && p.backend() != "onnxruntime" && p.backend() != "ferry") {
    fail(config.Where({{"backend", -1}}), "backend",
         "'" + p.backend() + "': Ferry serves ONNX models (backend \"onnxruntime\" or \"ferry\")");
  }
  if (p.max_batch_size() < 0) {
    fail(config.Where({{"max_batch_size", -1}}), "max_batch_size", std::to_string(p.max_batch_size()) +
                                                                       " is negative (0 disables batching)");
  }
  c.max_batch_size = p.max_batch_size();
  const auto tensors = [&](const char* kind, const auto& list, std::vector<TensorSpec>* out) {
    std::set<std::string> seen;
    for (int i = 0; i < list.size(); ++i) {
      const auto& t = list[i];
      const std::string field = std::string(kind) + "[" + std::to_string(i) + "]";
      if (t.name().empty()) fail(config.Where({{kind, i}}), field + ".name", "missing");
      if (!seen.insert(t.name()).second) fail(config.Where({{kind, i}}), field + ".name", "'" + t.name() + "' is listed twice");
      TensorSpec s;
      s.name = t.name();
      s.dtype = DataTypeFromConfig(t.data_type());
      if (s.dtype == DataType::kUndefined) {
        fail(config.Where({{kind, i}, {"data_type", -1}}), field + ".data_type", "missing or TYPE_INVALID");
      }
      for (int d = 0; d < t.dims_size(); ++d) {
        if (t.dims(d) < -1) {
          fail(config.Where({{kind, i}, {"dims", d}}), field + ".dims",
               std::to_string(t.dims(d)) + " is not a size (use -1 for any size)");
        }
        s.dims.push_back(t.dims(d));
      }
      if constexpr (std::is_same_v<std::decay_t<decltype(t)>, inference::ModelInput>) s.optional = t.optional();
      out->push_back(std::move(s));
    }
  };
  tensors("input", p.input(), &c.inputs);
  tensors("output", p.output(), &c.outputs);
  int count = 0;
  for (int i = 0; i < p.instance_group_size(); ++i) {
    const auto& g = p.instance_group(i);
    const std::string field = "instance_group[" + std::to_string(i) + "]";
    if (g.count() < 0) fail(config.Where({{"instance_group", i}, {"count", -1}}), field + ".count", "is negative");
    if (g.kind() == inference::ModelInstanceGroup::KIND_GPU && warnings) {
      warnings->push_back(config.Where({{"instance_group", i}, {"kind", -1}}) + field +
                          ".kind: KIND_GPU instances run on the CPU backends in Ferry");
    }
    count += g.count() == 0 ? 1 : g.count();
  }
  if (count > 64) fail(config.Where({{"instance_group", 0}}), "instance_group", std::to_string(count) + " instances (at most 64)");
  c.instance_count = std::max(count, 1);
  if (p.has_dynamic_batching()) {
    const auto& b = p.dynamic_batching();
    if (c.max_batch_size == 0) {
      if (warnings) {
        warnings->push_back(config.Where({{"dynamic_batching", -1}}) +
                            "dynamic_batching is ignored: max_batch_size is 0 (the model does not batch)");
      }
    } else {
      c.dynamic_batching = true;
    }
    for (int i = 0; i < b.preferred_batch_size_size(); ++i) {
      const int64_t s = b.preferred_batch_size(i);
      if (s < 1 || (c.max_batch_size > 0 && s > c.max_batch_size)) {
        fail(config.Where({{"dynamic_batching", -1}, {"preferred_batch_size", i}}),
             "dynamic_batching.preferred_batch_size", std::to_string(s) + " is outside 1.." +
                                                          std::to_string(c.max_batch_size) + " (max_batch_size)");
      }
      c.preferred_batch_sizes.push_back(s);
    }
    std::sort(c.preferred_batch_sizes.begin(), c.preferred_batch_sizes.end());
    c.max_queue_delay_us = b.max_queue_delay_microseconds();
    if (c.max_queue_delay_us > 10'000'000) {
      fail(config.Where({{"dynamic_batching", -1}, {"max_queue_delay_microseconds", -1}}),
           "dynamic_batching.max_queue_delay_microseconds", std::to_string(c.max_queue_delay_us) + " is over 10 s");
    }
    const auto& q = b.default_queue_policy();
    c.max_queue_size = q.max_queue_size();
    c.default_timeout_us = q.default_timeout_microseconds();
    c.timeout_delay = q.timeout_action() == inference::ModelQueuePolicy::DELAY;
    c.allow_timeout_override = q.allow_timeout_override();
  }
  switch (p.version_policy().policy_choice_case()) {
    case inference::ModelVersionPolicy::kAll: c.version_policy = VersionPolicy::kAll; break;
    case inference::ModelVersionPolicy::kSpecific: {
      c.version_policy = VersionPolicy::kSpecific;
      const auto& v = p.version_policy().specific();
      if (v.versions_size() == 0) {
        fail(config.Where({{"version_policy", -1}, {"specific", -1}}), "version_policy.specific.versions", "is empty");
      }
      for (int i = 0; i < v.versions_size(); ++i) {
        if (v.versions(i) < 0) {
          fail(config.Where({{"version_policy", -1}, {"specific", -1}}), "version_policy.specific.versions",
               std::to_string(v.versions(i)) + " is negative");
        }
        c.specific_versions.push_back(v.versions(i));
      }
      break;
    }
    case inference::ModelVersionPolicy::kLatest:
      c.latest_versions = p.version_policy().latest().num_versions();
      if (c.latest_versions == 0) {
        fail(config.Where({{"version_policy", -1}, {"latest", -1}}), "version_policy.latest.num_versions",
             "must be at least 1");
      }
      break;
    default: break;
  }
  if (p.has_optimization() && p.optimization().has_graph()) {
    const int level = p.optimization().graph().level();
    if (level < -1 || level > 1) {
      fail(config.Where({{"optimization", -1}, {"graph", -1}}), "optimization.graph.level",
           std::to_string(level) + " is not -1 (basic), 0 (all) or 1 (extended)");
    }
    c.optimization_level = level == -1 ? 1 : level == 1 ? 2 : 3;
  }
  for (const auto& [key, value] : p.parameters()) {
    const std::string where = config.path.empty() ? "(auto-completed config): " : config.path + ": ";
    // Init-captures: clang before 16 (the fuzz build's) cannot capture a structured binding.
    const auto parse_int = [&, &key = key, &text = value.string_value()](int lo, int hi) {
      try {
        size_t used = 0;
        const int v = std::stoi(text, &used);
        if (used != text.size() || v < lo || v > hi) throw std::out_of_range("range");
        return v;
      } catch (const std::exception&) {
        fail(where, "parameters '" + key + "'",
             "'" + text + "' is not an integer in " + std::to_string(lo) + ".." + std::to_string(hi));
      }
      return 0;
    };
    if (key == "intra_op_thread_count") {
      c.threads = parse_int(0, kMaxThreads);
    } else if (key == "ferry_optimization_level") {
      c.optimization_level = parse_int(0, 3);
    } else if (warnings) {
      warnings->push_back(where + "parameters '" + key + "' is ignored by Ferry");
    }
  }
  if (!p.default_model_filename().empty()) {
    const std::string& f = p.default_model_filename();
    if (f == "." || f == ".." || f.find('/') != std::string::npos || f.find('\\') != std::string::npos ||
        f.find('\0') != std::string::npos) {
      fail(config.Where({{"default_model_filename", -1}}), "default_model_filename",
           "'" + f + "' must be a file name inside the version folder");
    }
    c.model_filename = f;
  }
  return c;
}

}  // namespace ferry::server
