#include "tools/run_inputs.h"

#include <algorithm>
#include <cmath>
#include <random>
#include <sstream>

#include "core/parse_number.h"
#include "ferry/error.h"
#include "ferry/float16.h"
#include "tools/npy.h"
#include "tools/onnx_test_case.h"

namespace ferry::tools {

std::vector<int64_t> ParseDims(const std::string& text, const std::string& what) {
  std::vector<int64_t> dims;
  std::string cur;
  auto flush = [&]() {
    if (cur.empty()) throw InvalidArgumentError(what + ": bad dims '" + text + "' (expected e.g. 1x3x224x224)");
    const std::optional<int64_t> v = ParseInt64(cur);
    if (!v || *v < 0) throw InvalidArgumentError(what + ": bad dimension '" + cur + "' in '" + text + "'");
    dims.push_back(*v);
    cur.clear();
  };
  for (char c : text) {
    if (c == 'x' || c == ',') flush();
    else cur += c;
  }
  if (!text.empty()) flush();
  return dims;
}

std::pair<std::string, std::string> ParseAssignment(const std::string& text, const std::string& flag) {
  auto eq = text.rfind('=');
  if (eq == std::string::npos || eq == 0 || eq + 1 == text.size()) {
    throw InvalidArgumentError(flag + " expects NAME=VALUE, got '" + text + "'");
  }
  return {text.substr(0, eq), text.substr(eq + 1)};
}

Tensor LoadTensorFile(const std::string& path) {
  if (path.size() >= 4 && path.substr(path.size() - 4) == ".npy") return ReadNpy(path);
  if (path.size() >= 3 && path.substr(path.size() - 3) == ".pb") return LoadPbValue(path, "tensor").tensor();
  throw InvalidArgumentError("input file '" + path + "': expected a .npy or .pb file");
}

namespace {

template <typename T>
void FillInts(Tensor& t, std::mt19937_64& rng, double lo, double hi) {
  std::uniform_int_distribution<int64_t> d(static_cast<int64_t>(std::ceil(lo)),
                                           std::max(static_cast<int64_t>(std::ceil(lo)), static_cast<int64_t>(std::ceil(hi)) - 1));
  T* p = t.data<T>();
  for (int64_t i = 0; i < t.size(); ++i) p[i] = static_cast<T>(d(rng));
}

Tensor RandomTensor(DataType dtype, const Shape& shape, std::mt19937_64& rng, std::optional<std::pair<double, double>> range,
                    const std::string& name) {
  Tensor t(dtype, shape);
  bool is_float = IsFloatingPoint(dtype);
  double lo = range ? range->first : 0.0, hi = range ? range->second : (is_float ? 1.0 : 100.0);
  std::uniform_real_distribution<double> real(lo, hi);
  switch (dtype) {
    case DataType::kFloat:
      for (int64_t i = 0; i < t.size(); ++i) t.data<float>()[i] = static_cast<float>(real(rng));
      break;
    case DataType::kDouble:
      for (int64_t i = 0; i < t.size(); ++i) t.data<double>()[i] = real(rng);
      break;
    case DataType::kFloat16:
      for (int64_t i = 0; i < t.size(); ++i) t.data<uint16_t>()[i] = Float16::FromFloat(static_cast<float>(real(rng)));
      break;
    case DataType::kBFloat16:
      for (int64_t i = 0; i < t.size(); ++i) t.data<uint16_t>()[i] = BFloat16::FromFloat(static_cast<float>(real(rng)));
      break;
    case DataType::kInt8: FillInts<int8_t>(t, rng, lo, hi); break;
    case DataType::kInt16: FillInts<int16_t>(t, rng, lo, hi); break;
    case DataType::kInt32: FillInts<int32_t>(t, rng, lo, hi); break;
    case DataType::kInt64: FillInts<int64_t>(t, rng, lo, hi); break;
    case DataType::kUint8: FillInts<uint8_t>(t, rng, lo, hi); break;
    case DataType::kUint16: FillInts<uint16_t>(t, rng, lo, hi); break;
    case DataType::kUint32: FillInts<uint32_t>(t, rng, lo, hi); break;
    case DataType::kUint64: FillInts<uint64_t>(t, rng, lo, hi); break;
    case DataType::kBool: {
      std::bernoulli_distribution b(0.5);
      for (int64_t i = 0; i < t.size(); ++i) t.data<bool>()[i] = b(rng);
      break;
    }
    default:
      throw InvalidArgumentError("input '" + name + "': --random cannot generate " + std::string(DataTypeName(dtype)) +
                                 " values; give a file with --input");
  }
  return t;
}

}  // namespace

std::vector<NamedValue> BuildInputs(const Session& session, const InputSpec& spec) {
  return BuildInputs(session.inputs(), spec);
}

void CheckInputNames(const std::vector<IoInfo>& inputs, const InputSpec& spec) {
  auto known = [&](const std::string& n) {
    for (const auto& i : inputs) {
      if (i.name == n) return true;
    }
    return false;
  };
  auto check_names = [&](const auto& m, const std::string& flag) {
    for (const auto& [n, v] : m) {
      (void)v;
      if (!known(n)) {
        std::string names;
        for (const auto& i : inputs) names += (names.empty() ? "" : ", ") + i.name;
        throw InvalidArgumentError(flag + ": the model has no input '" + n + "' (inputs: " + names + ")");
      }
    }
  };
  check_names(spec.files, "--input");
  check_names(spec.shapes, "--shape");
  check_names(spec.ranges, "--range");
  if (spec.random) return;
  for (const IoInfo& info : inputs) {
    if (!spec.files.count(info.name)) {
      throw InvalidArgumentError("input '" + info.name + "' has no value: give --input " + info.name +
                                 "=FILE or use --random");
    }
  }
}

std::vector<NamedValue> BuildInputs(const std::vector<IoInfo>& inputs, const InputSpec& spec) {
  CheckInputNames(inputs, spec);
  std::mt19937_64 rng(spec.seed);
  std::vector<NamedValue> out;
  for (const IoInfo& info : inputs) {
    if (auto f = spec.files.find(info.name); f != spec.files.end()) {
      try {
        out.emplace_back(info.name, Value(LoadTensorFile(f->second)));
      } catch (const InvalidArgumentError& e) {  // the file's problem (a FIFO, missing, malformed): say whose
        throw InvalidArgumentError("input '" + info.name + "': " + e.what());
      }
      continue;
    }
    // (CheckInputNames made sure this input is --random's.)
    if (info.kind != "tensor") {
      throw InvalidArgumentError("input '" + info.name + "' is a " + info.kind + "; --random makes tensors only");
    }
    Shape shape;
    if (auto s = spec.shapes.find(info.name); s != spec.shapes.end()) {
      shape = s->second;
    } else {
      if (!info.has_shape) {
        throw InvalidArgumentError("input '" + info.name + "' has no declared shape; give --shape " + info.name + "=DIMS");
      }
      for (size_t i = 0; i < info.dims.size(); ++i) {
        int64_t d = info.dims[i];
        if (d < 0 && i == 0 && spec.batch) d = *spec.batch;
        if (d < 0) {
          std::string sym = info.dim_names[i].empty() ? "?" : info.dim_names[i];
          throw InvalidArgumentError("input '" + info.name + "': dimension " + std::to_string(i) + " ('" + sym +
                                     "') is symbolic; give --shape " + info.name + "=DIMS" +
                                     (i == 0 ? " or --batch N" : ""));
        }
        shape.push_back(d);
      }
    }
    std::optional<std::pair<double, double>> range;
    if (auto r = spec.ranges.find(info.name); r != spec.ranges.end()) range = r->second;
    out.emplace_back(info.name, Value(RandomTensor(info.dtype, shape, rng, range, info.name)));
  }
  return out;
}

namespace {

// "[1,3,batch,?]" ("?" for an unnamed symbolic dim), or "(rank unknown)".
std::string DeclaredShape(const IoInfo& info) {
  if (!info.has_shape) return "(rank unknown)";
  std::string dims;
  for (size_t i = 0; i < info.dims.size(); ++i) {
    dims += (i ? "," : "") + (info.dims[i] >= 0 ? std::to_string(info.dims[i])
                                                : info.dim_names[i].empty() ? "?" : info.dim_names[i]);
  }
  return "[" + dims + "]";
}

std::string DimsText(const std::vector<int64_t>& dims) {
  std::string s;
  for (size_t i = 0; i < dims.size(); ++i) s += (i ? "x" : "") + std::to_string(dims[i]);
  return s;
}

}  // namespace

std::map<std::string, std::vector<int64_t>> FixedInputShapes(const std::vector<IoInfo>& inputs,
                                                             const InputSpec& spec) {
  std::string declared;  // every input with its declared shape, for the messages
  for (const IoInfo& info : inputs) {
    declared += (declared.empty() ? "'" : ", '") + info.name + "' " + DeclaredShape(info);
  }
  if (declared.empty()) declared = "none";
  for (const auto& [name, dims] : spec.shapes) {
    const auto it = std::find_if(inputs.begin(), inputs.end(), [&n = name](const IoInfo& i) { return i.name == n; });
    const std::string flag = "--shape " + name + "=" + DimsText(dims);
    if (it == inputs.end()) {
      throw InvalidArgumentError(flag + ": the model has no input '" + name + "' (inputs " + declared + ")");
    }
    if (!it->has_shape) continue;
    if (it->dims.size() != dims.size()) {
      throw InvalidArgumentError(flag + ": expected rank " + std::to_string(it->dims.size()) + " (the model declares " +
                                 DeclaredShape(*it) + "), got " + std::to_string(dims.size()) + " dims");
    }
    for (size_t i = 0; i < dims.size(); ++i) {
      if (it->dims[i] >= 0 && it->dims[i] != dims[i]) {
        throw InvalidArgumentError(flag + ": dimension " + std::to_string(i) + " is " + std::to_string(it->dims[i]) +
                                   " in the model (" + DeclaredShape(*it) + "), got " + std::to_string(dims[i]));
      }
    }
  }
  std::map<std::string, std::vector<int64_t>> fixed = spec.shapes;
  if (!spec.batch) return fixed;
  bool symbolic_batch = false;
  for (const IoInfo& info : inputs) {
    if (!info.has_shape || info.dims.empty() || info.dims[0] >= 0) continue;
    symbolic_batch = true;
    if (fixed.count(info.name) || spec.files.count(info.name)) continue;
    if (std::any_of(info.dims.begin() + 1, info.dims.end(), [](int64_t d) { return d < 0; })) continue;
    std::vector<int64_t> dims_fixed = info.dims;
    dims_fixed[0] = *spec.batch;
    fixed[info.name] = std::move(dims_fixed);
  }
  if (!symbolic_batch) {
    // A model may name a later dim "batch" ([seq, batch, features]): --batch sets only a leading one.
    const bool symbolic_elsewhere = std::any_of(inputs.begin(), inputs.end(), [](const IoInfo& info) {
      return info.has_shape && std::any_of(info.dims.begin(), info.dims.end(), [](int64_t d) { return d < 0; });
    });
    throw InvalidArgumentError("--batch " + std::to_string(*spec.batch) + ": no input has a symbolic leading dim" +
                               (symbolic_elsewhere ? std::string(" (the symbolic dims are not the first: give the "
                                                                 "shape with --shape NAME=DIMS)")
                                                   : std::string(": the model's batch is fixed")) +
                               " (inputs " + declared + ")");
  }
  return fixed;
}

TensorSummary Summarize(const Tensor& t) {
  TensorSummary s;
  auto visit = [&](auto get) {
    s.numeric = true;
    double sum = 0;
    int64_t finite = 0;
    bool first = true;
    for (int64_t i = 0; i < t.size(); ++i) {
      double v = get(i);
      if (std::isnan(v)) {
        ++s.nan;
        continue;
      }
      if (std::isinf(v)) ++s.inf;
      if (first || v < s.min) s.min = v;
      if (first || v > s.max) s.max = v;
      first = false;
      if (std::isfinite(v)) {
        sum += v;
        ++finite;
      }
    }
    s.mean = finite ? sum / static_cast<double>(finite) : 0;
  };
  switch (t.dtype()) {
    case DataType::kFloat: visit([&](int64_t i) { return double(t.data<float>()[i]); }); break;
    case DataType::kDouble: visit([&](int64_t i) { return t.data<double>()[i]; }); break;
    case DataType::kFloat16: visit([&](int64_t i) { return double(Float16::ToFloat(t.data<uint16_t>()[i])); }); break;
    case DataType::kBFloat16: visit([&](int64_t i) { return double(float(BFloat16::FromBits(t.data<uint16_t>()[i]))); }); break;
    case DataType::kInt8: visit([&](int64_t i) { return double(t.data<int8_t>()[i]); }); break;
    case DataType::kInt16: visit([&](int64_t i) { return double(t.data<int16_t>()[i]); }); break;
    case DataType::kInt32: visit([&](int64_t i) { return double(t.data<int32_t>()[i]); }); break;
    case DataType::kInt64: visit([&](int64_t i) { return double(t.data<int64_t>()[i]); }); break;
    case DataType::kUint8: visit([&](int64_t i) { return double(t.data<uint8_t>()[i]); }); break;
    case DataType::kUint16: visit([&](int64_t i) { return double(t.data<uint16_t>()[i]); }); break;
    case DataType::kUint32: visit([&](int64_t i) { return double(t.data<uint32_t>()[i]); }); break;
    case DataType::kUint64: visit([&](int64_t i) { return double(t.data<uint64_t>()[i]); }); break;
    case DataType::kBool: visit([&](int64_t i) { return double(t.data<bool>()[i]); }); break;
    default: break;
  }
  return s;
}

}  // namespace ferry::tools
