#include "tools/compare_data.h"

#include <algorithm>
#include <filesystem>

#include "ferry/error.h"
#include "ferry/float16.h"
#include "tools/npy.h"
#include "tools/onnx_test_case.h"

namespace ferry::tools {
namespace fs = std::filesystem;
namespace {

std::string FileSafe(std::string name) {
  std::replace_if(name.begin(), name.end(), [](char c) { return c == '/' || c == '\\' || c == ':'; }, '_');
  return name;
}

// The value of `info` in data set folder `dir` (the `k`-th of its kind, `prefix` "input" or "output"), if a
// file holds it.
// Numbered files (the ONNX test layout's input_K.pb, and the input_K.npy / output_K.npy that
// scripts/gen_test_models.py writes) before named ones (NAME.npy as `ferry run --output-dir` writes them).
std::optional<Value> FindValue(const fs::path& dir, const IoInfo& info, size_t k, const std::string& prefix) {
  const std::string stem = prefix + "_" + std::to_string(k);
  if (const fs::path pb = dir / (stem + ".pb"); fs::is_regular_file(pb)) return LoadPbValue(pb.string(), info.kind);
  if (const fs::path npy = dir / (stem + ".npy"); fs::is_regular_file(npy)) return Value(ReadNpy(npy.string()));
  for (const std::string& name : {info.name, FileSafe(info.name)}) {
    if (const fs::path npy = dir / (name + ".npy"); fs::is_regular_file(npy)) return Value(ReadNpy(npy.string()));
    if (const fs::path pb = dir / (name + ".pb"); fs::is_regular_file(pb)) return LoadPbValue(pb.string(), info.kind);
  }
  return std::nullopt;
}

template <typename T>
void Fill(Tensor& t, T v) {
  std::fill(t.data<T>(), t.data<T>() + t.size(), v);
}

}  // namespace

std::vector<DataSet> ReadDataDir(const std::string& dir, const std::vector<IoInfo>& inputs,
                                 const std::vector<IoInfo>& outputs) {
  if (!fs::is_directory(dir)) throw InvalidArgumentError("data folder '" + dir + "' does not exist");
  std::vector<fs::path> sets;
  for (const auto& e : fs::directory_iterator(dir)) {
    if (e.is_directory() && e.path().filename().string().starts_with("test_data_set_")) sets.push_back(e.path());
  }
  std::sort(sets.begin(), sets.end(), [](const fs::path& a, const fs::path& b) {
    const std::string x = a.filename().string(), y = b.filename().string();
    return x.size() != y.size() ? x.size() < y.size() : x < y;
  });
  if (sets.empty()) sets.push_back(dir);
  std::vector<DataSet> out;
  for (const fs::path& s : sets) {
    DataSet d;
    d.dir = s.string();
    for (size_t k = 0; k < inputs.size(); ++k) {
      if (auto v = FindValue(s, inputs[k], k, "input")) d.inputs.emplace(inputs[k].name, std::move(*v));
    }
    for (size_t k = 0; k < outputs.size(); ++k) {
      if (auto v = FindValue(s, outputs[k], k, "output")) d.outputs.emplace(outputs[k].name, std::move(*v));
    }
    if (d.inputs.empty() && d.outputs.empty()) {
      std::string names;
      for (const auto& i : inputs) names += (names.empty() ? "" : ", ") + i.name;
      for (const auto& o : outputs) names += (names.empty() ? "" : ", ") + o.name;
      throw InvalidArgumentError("data folder '" + d.dir + "' holds no file for an input or output of the model (" +
                                 names + "): expected NAME.npy, NAME.pb, input_K.pb / .npy or output_K.pb / .npy");
    }
    out.push_back(std::move(d));
  }
  return out;
}

InputSource ParseInputSource(const std::string& text) {
  InputSource s;
  if (text == "random") s.kind = InputSource::Kind::kRandom;
  else if (text == "zeros") s.kind = InputSource::Kind::kZeros;
  else if (text == "ones") s.kind = InputSource::Kind::kOnes;
  else {
    s.kind = InputSource::Kind::kDir;
    s.dir = text;
    if (!fs::is_directory(text)) {
      throw InvalidArgumentError("--inputs: '" + text + "' is neither random, zeros, ones nor a folder");
    }
  }
  return s;
}

Tensor FilledLike(const Tensor& like, double x) {
  Tensor t(like.dtype(), like.shape());
  switch (t.dtype()) {
    case DataType::kFloat: Fill<float>(t, static_cast<float>(x)); break;
    case DataType::kDouble: Fill<double>(t, x); break;
    case DataType::kFloat16: Fill<uint16_t>(t, Float16::FromFloat(static_cast<float>(x))); break;
    case DataType::kBFloat16: Fill<uint16_t>(t, BFloat16::FromFloat(static_cast<float>(x))); break;
    case DataType::kInt8: Fill<int8_t>(t, static_cast<int8_t>(x)); break;
    case DataType::kInt16: Fill<int16_t>(t, static_cast<int16_t>(x)); break;
    case DataType::kInt32: Fill<int32_t>(t, static_cast<int32_t>(x)); break;
    case DataType::kInt64: Fill<int64_t>(t, static_cast<int64_t>(x)); break;
    case DataType::kUint8: Fill<uint8_t>(t, static_cast<uint8_t>(x)); break;
    case DataType::kUint16: Fill<uint16_t>(t, static_cast<uint16_t>(x)); break;
    case DataType::kUint32: Fill<uint32_t>(t, static_cast<uint32_t>(x)); break;
    case DataType::kUint64: Fill<uint64_t>(t, static_cast<uint64_t>(x)); break;
    case DataType::kBool: Fill<bool>(t, x != 0); break;
    default: return like;
  }
  return t;
}

std::vector<NamedValue> MakeTrialInputs(const Session& session, const InputSource& source, int trial,
                                        const DataSet* data_set) {
  if (data_set) {
    std::vector<NamedValue> out;
    for (const IoInfo& info : session.inputs()) {
      auto it = data_set->inputs.find(info.name);
      if (it == data_set->inputs.end()) {
        throw InvalidArgumentError("data folder '" + data_set->dir + "' has no file for input '" + info.name +
                                   "' (expected " + FileSafe(info.name) + ".npy, " + FileSafe(info.name) +
                                   ".pb or input_K.pb)");
      }
      out.emplace_back(info.name, it->second);
    }
    return out;
  }
  InputSpec spec = source.spec;
  spec.random = true;
  spec.seed = source.spec.seed + static_cast<uint64_t>(trial);
  std::vector<NamedValue> out = BuildInputs(session, spec);
  if (source.kind == InputSource::Kind::kRandom) return out;
  const double x = source.kind == InputSource::Kind::kOnes ? 1.0 : 0.0;
  for (auto& [name, v] : out) {
    if (v.is_tensor()) v = Value(FilledLike(v.tensor(), x));
  }
  return out;
}

}  // namespace ferry::tools
