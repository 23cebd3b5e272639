#include "server/model_warmup.h"

#include <algorithm>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <random>

#include "ferry/error.h"
#include "ferry/float16.h"

namespace ferry::server {
namespace {

namespace fs = std::filesystem;

constexpr int64_t kMaxElements = int64_t{1} << 28;
constexpr uint32_t kMaxCount = 1000;

std::string DimsText(const std::vector<int64_t>& dims) {
  std::string s = "[";
  for (size_t i = 0; i < dims.size(); ++i) s += (i ? "," : "") + std::to_string(dims[i]);
  return s + "]";
}

std::string TypeText(DataType t) {
  return inference::DataType_Name(DataTypeToConfig(t));
}

// A path inside warmup/: relative, no "." or ".." parts, no NUL.
bool IsPlainRelativePath(const std::string& file) {
  if (file.empty() || file.find('\0') != std::string::npos || file.find('\\') != std::string::npos) return false;
  const fs::path p(file);
  if (p.is_absolute()) return false;
  for (const auto& part : p) {
    if (part == "." || part == ".." || part.empty()) return false;
  }
  return true;
}

int64_t Elements(const std::vector<int64_t>& dims) {
  int64_t n = 1;
  for (int64_t d : dims) n *= d;  // each dim and the product were bounded by ValidateWarmups
  return n;
}

// One sample's data for a numeric input from its file: exactly Elements(dims) values.
std::string ReadDataFile(const WarmupInput& in, const std::string& model_dir, int64_t elements) {
  const fs::path warmup = fs::path(model_dir) / "warmup";
  const fs::path path = warmup / in.file;
  std::error_code ec;
  // status() follows symlinks: a FIFO, socket or device behind a link is refused too, before any open().
  if (!fs::is_regular_file(fs::status(path, ec))) {
    throw InvalidModelError("input '" + in.name + "': " + path.string() + " is not a regular file");
  }
  const fs::path real = fs::canonical(path, ec), root = fs::canonical(warmup, ec);
  if (ec || std::mismatch(root.begin(), root.end(), real.begin(), real.end()).first != root.end()) {
    throw InvalidModelError("input '" + in.name + "': " + path.string() + " resolves outside " + warmup.string());
  }
  const uintmax_t size = fs::file_size(path, ec);
  if (ec) throw InvalidModelError("input '" + in.name + "': " + path.string() + ": " + ec.message());
  if (in.dtype != DataType::kString) {
    const auto need = static_cast<uintmax_t>(elements) * static_cast<uintmax_t>(DataTypeBits(in.dtype) / 8);
    if (size != need) {
      throw InvalidModelError("input '" + in.name + "': " + path.string() + " has " + std::to_string(size) +
                              " bytes but " + TypeText(in.dtype).substr(5) + " " + DimsText(in.dims) + " needs " +
                              std::to_string(need));
    }
  } else if (size > static_cast<uintmax_t>(kMaxElements) * 8) {
    throw InvalidModelError("input '" + in.name + "': " + path.string() + " has " + std::to_string(size) +
                            " bytes (at most " + std::to_string(kMaxElements * 8) + " for a warm-up)");
  }
  std::ifstream f(path, std::ios::binary);
  std::string bytes(static_cast<size_t>(size), '\0');
  f.read(bytes.data(), static_cast<std::streamsize>(size));
  if (!f || static_cast<uintmax_t>(f.gcount()) != size) {
    throw InvalidModelError("input '" + in.name + "': " + path.string() + " cannot be read");
  }
  return bytes;
}

// Fills elements [0, n) of `t` with one sample.
void FillSample(Tensor& t, const WarmupInput& in, const std::string& model_dir, int64_t n, uint32_t seed) {
  if (in.data == WarmupInput::Data::kZero) return;  // Tensor() starts as zeros / empty strings
  if (in.data == WarmupInput::Data::kRandom) {
    std::mt19937 gen(seed);
    std::uniform_real_distribution<double> unit(0.0, 1.0);
    std::uniform_int_distribution<int> digit(0, 9);
    std::uniform_int_distribution<int> coin(0, 1);
    for (int64_t i = 0; i < n; ++i) {
      switch (t.dtype()) {
        case DataType::kFloat: t.data<float>()[i] = static_cast<float>(unit(gen)); break;
        case DataType::kDouble: t.data<double>()[i] = unit(gen); break;
        case DataType::kFloat16: t.data<uint16_t>()[i] = Float16::FromFloat(static_cast<float>(unit(gen))); break;
        case DataType::kBFloat16: {
          const auto f = static_cast<float>(unit(gen));
          uint32_t bits;
          std::memcpy(&bits, &f, 4);
          t.data<uint16_t>()[i] = static_cast<uint16_t>(bits >> 16);  // [0, 1) truncated stays in [0, 1)
          break;
        }
        case DataType::kBool: t.data<bool>()[i] = coin(gen) == 1; break;
        case DataType::kString: return;
        case DataType::kInt8: t.data<int8_t>()[i] = static_cast<int8_t>(digit(gen)); break;
        case DataType::kInt16: t.data<int16_t>()[i] = static_cast<int16_t>(digit(gen)); break;
        case DataType::kInt32: t.data<int32_t>()[i] = digit(gen); break;
        case DataType::kInt64: t.data<int64_t>()[i] = digit(gen); break;
        case DataType::kUint8: t.data<uint8_t>()[i] = static_cast<uint8_t>(digit(gen)); break;
        case DataType::kUint16: t.data<uint16_t>()[i] = static_cast<uint16_t>(digit(gen)); break;
        case DataType::kUint32: t.data<uint32_t>()[i] = static_cast<uint32_t>(digit(gen)); break;
        case DataType::kUint64: t.data<uint64_t>()[i] = static_cast<uint64_t>(digit(gen)); break;
        default: throw InvalidModelError("input '" + in.name + "': random_data for this data type is not supported");
      }
    }
    return;
  }
  const std::string bytes = ReadDataFile(in, model_dir, n);
  if (t.dtype() == DataType::kString) {
    size_t at = 0;
    for (int64_t i = 0; i < n; ++i) {
      if (bytes.size() - at < 4) {
        throw InvalidModelError("input '" + in.name + "': warmup/" + in.file + " ends before element " +
                                std::to_string(i) + " of " + std::to_string(n));
      }
      uint32_t len = 0;
      std::memcpy(&len, bytes.data() + at, 4);  // little-endian (x86 / arm64 hosts)
      at += 4;
      if (bytes.size() - at < len) {
        throw InvalidModelError("input '" + in.name + "': warmup/" + in.file + ": element " + std::to_string(i) +
                                " claims " + std::to_string(len) + " bytes but " + std::to_string(bytes.size() - at) +
                                " remain");
      }
      t.strings()[i] = bytes.substr(at, len);
      at += len;
    }
    if (at != bytes.size()) {
      throw InvalidModelError("input '" + in.name + "': warmup/" + in.file + " has " +
                              std::to_string(bytes.size() - at) + " bytes after its " + std::to_string(n) +
                              " elements");
    }
    return;
  }
  if (t.dtype() == DataType::kBool) {
    for (int64_t i = 0; i < n; ++i) t.data<bool>()[i] = bytes[static_cast<size_t>(i)] != 0;
    return;
  }
  if (!bytes.empty()) std::memcpy(t.raw_data(), bytes.data(), bytes.size());
}

}  // namespace

std::vector<WarmupSample> ValidateWarmups(const ParsedConfig& config, const ServeConfig& served) {
  std::vector<WarmupSample> out;
  const auto& list = config.proto.model_warmup();
  for (int i = 0; i < list.size(); ++i) {
    const auto& w = list[i];
    WarmupSample sample;
    sample.name = w.name();
    std::string where = config.Where({{"model_warmup", i}}) + "model_warmup[" + std::to_string(i) + "]";
    if (w.name().empty()) throw InvalidModelError(where + ".name: missing");
    where += " '" + w.name() + "'";
    const auto fail = [&](const std::string& problem) { throw InvalidModelError(where + ": " + problem); };
    if (served.max_batch_size > 0) {
      if (w.batch_size() < 1 || w.batch_size() > served.max_batch_size) {
        fail("batch_size " + std::to_string(w.batch_size()) + " is outside 1.." +
             std::to_string(served.max_batch_size) + " (max_batch_size)");
      }
    } else if (w.batch_size() != 1) {
      fail("batch_size " + std::to_string(w.batch_size()) + " must be 1: the model does not batch (max_batch_size 0)");
    }
    sample.batch_size = w.batch_size();
    if (w.count() > kMaxCount) fail("count " + std::to_string(w.count()) + " is over " + std::to_string(kMaxCount));
    sample.count = std::max<uint32_t>(w.count(), 1);
    std::string names;
    for (const auto& s : served.inputs) names += (names.empty() ? "" : ", ") + s.name;
    for (const auto& [name, v] : w.inputs()) {
      const auto is_input = [&wanted = name](const TensorSpec& s) { return s.name == wanted; };
      if (std::none_of(served.inputs.begin(), served.inputs.end(), is_input)) {
        fail("'" + name + "' is not an input of the model (inputs: " + names + ")");
      }
    }
    for (const auto& spec : served.inputs) {
      const auto it = w.inputs().find(spec.name);
      if (it == w.inputs().end()) {
        if (spec.optional) continue;
        fail("no data for input '" + spec.name + "' (" + TypeText(spec.dtype) + " " + DimsText(spec.dims) + ")");
      }
      const auto& v = it->second;
      WarmupInput in;
      in.name = spec.name;
      const std::string what = "input '" + spec.name + "': ";
      in.dtype = DataTypeFromConfig(v.data_type());
      if (in.dtype != spec.dtype) {
        fail(what + "data_type " + inference::DataType_Name(v.data_type()) + " does not match the model's " +
             TypeText(spec.dtype));
      }
      bool ok = v.dims_size() == static_cast<int>(spec.dims.size());
      int64_t elements = sample.batch_size;
      for (int d = 0; ok && d < v.dims_size(); ++d) {
        const int64_t n = v.dims(d);
        ok = n >= 0 && (spec.dims[d] < 0 || spec.dims[d] == n);
        if (ok && n > 0 && elements > kMaxElements / n) {
          fail(what + "dims are too large for a warm-up (at most 2^28 elements with the batch)");
        }
        if (ok) elements *= n;
        in.dims.push_back(n);
      }
      if (!ok) {
        std::vector<int64_t> given(v.dims().begin(), v.dims().end());
        fail(what + "dims " + DimsText(given) + " do not match the model's " + DimsText(spec.dims) +
             " (-1: any size" + (served.max_batch_size > 0 ? "; without the batch dim)" : ")"));
      }
      switch (v.input_data_type_case()) {
        case inference::ModelWarmup::Input::kZeroData: in.data = WarmupInput::Data::kZero; break;
        case inference::ModelWarmup::Input::kRandomData: in.data = WarmupInput::Data::kRandom; break;
        case inference::ModelWarmup::Input::kInputDataFile:
          in.data = WarmupInput::Data::kFile;
          in.file = v.input_data_file();
          if (!IsPlainRelativePath(in.file)) {
            fail(what + "input_data_file '" + in.file + "' must be a file name inside the model's warmup/ folder");
          }
          break;
        default: fail(what + "give zero_data, random_data or input_data_file");
      }
      sample.inputs.push_back(std::move(in));
    }
    out.push_back(std::move(sample));
  }
  return out;
}

std::vector<std::pair<std::string, Tensor>> WarmupTensors(const WarmupSample& sample, const ServeConfig& served,
                                                          const std::string& model_dir) {
  std::vector<std::pair<std::string, Tensor>> out;
  uint32_t seed = 1;
  for (const auto& in : sample.inputs) {
    const int64_t n = Elements(in.dims);
    Shape shape = in.dims;
    const int64_t batch = served.max_batch_size > 0 ? sample.batch_size : 1;
    if (served.max_batch_size > 0) shape.insert(shape.begin(), batch);
    Tensor t(in.dtype, shape);
    FillSample(t, in, model_dir, n, seed++);
    // The sample is repeated for every row of the batch (as Triton does).
    for (int64_t b = 1; b < batch; ++b) {
      if (in.dtype == DataType::kString) {
        std::copy_n(t.strings(), n, t.strings() + b * n);
      } else {
        const size_t row = t.nbytes() / static_cast<size_t>(batch);
        std::memcpy(static_cast<char*>(t.raw_data()) + b * row, t.raw_data(), row);
      }
    }
    out.emplace_back(in.name, std::move(t));
  }
  return out;
}

}  // namespace ferry::server
