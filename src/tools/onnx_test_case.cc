#include "tools/onnx_test_case.h"

#include <onnx/onnx_pb.h>  // must precede onnx-data_pb.h
#include <onnx/onnx-data_pb.h>

#include <algorithm>
#include <climits>
#include <filesystem>
#include <set>

#include "core/regular_file.h"
#include "ferry/error.h"
#include "ferry/session.h"
#include "ir/tensor_proto.h"

namespace ferry::tools {
namespace fs = std::filesystem;

std::vector<OnnxTestCase> ListOnnxTestCases(const std::string& data_dir) {
  std::vector<OnnxTestCase> out;
  std::error_code ec;
  std::string category = fs::path(data_dir).lexically_normal().filename().string();
  if (category.empty()) category = fs::path(data_dir).lexically_normal().parent_path().filename().string();
  for (const auto& entry : fs::directory_iterator(data_dir, ec)) {
    if (!entry.is_directory() || !fs::exists(entry.path() / "model.onnx")) continue;
    out.push_back({entry.path().string(), category, entry.path().filename().string()});
  }
  std::sort(out.begin(), out.end(), [](const auto& a, const auto& b) { return a.name < b.name; });
  return out;
}

namespace {

void CollectOps(const onnx::GraphProto& g, std::set<std::string>& ops) {
  for (const auto& n : g.node()) {
    std::string d = n.domain() == "ai.onnx" ? "" : n.domain();
    ops.insert(d.empty() ? n.op_type() : d + "::" + n.op_type());
    for (const auto& a : n.attribute()) {
      if (a.has_g()) CollectOps(a.g(), ops);
      for (const auto& sg : a.graphs()) CollectOps(sg, ops);
    }
  }
}

// A whole protobuf file (at most 2 GiB, protobuf's own limit). Only a regular file is read, and anything else is
// refused without blocking (core/regular_file.h): `--input x=pipe.pb` must not wait on a FIFO.
std::string ReadFile(const std::string& path) {
  RegularFile file = RegularFile::Open(path);
  if (!file.ok()) throw InvalidArgumentError("'" + path + "' " + file.error());
  if (file.size() > static_cast<uint64_t>(INT_MAX)) {
    throw InvalidArgumentError("'" + path + "' is " + std::to_string(file.size()) +
                               " bytes, over the 2 GiB a protobuf message can have");
  }
  std::string bytes(static_cast<size_t>(file.size()), '\0');
  const std::string err = file.ReadAt(0, bytes.data(), bytes.size());
  if (!err.empty()) throw InvalidArgumentError("'" + path + "': cannot read it: " + err);
  return bytes;
}

}  // namespace

OnnxTestCaseModel ReadOnnxTestCaseModel(const OnnxTestCase& c) {
  onnx::ModelProto m;
  std::string bytes;
  try {
    bytes = ReadFile(c.dir + "/model.onnx");
  } catch (const Error&) {
    return {};
  }
  if (!m.ParseFromString(bytes)) return {};
  std::set<std::string> ops;
  CollectOps(m.graph(), ops);
  OnnxTestCaseModel out{{ops.begin(), ops.end()}, 0};
  for (const auto& o : m.opset_import()) {
    if (o.domain().empty() || o.domain() == "ai.onnx") out.opset = static_cast<int>(o.version());
  }
  return out;
}

Value LoadPbValue(const std::string& path, const std::string& kind) {
  std::string bytes = ReadFile(path);
  ir::TensorLoadOptions opts{fs::path(path).parent_path().string(), "'" + path + "'"};
  if (kind == "sequence") {
    onnx::SequenceProto p;
    if (!p.ParseFromString(bytes)) throw InvalidArgumentError("'" + path + "' is not a SequenceProto");
    return ir::ValueFromSequenceProto(p, opts);
  }
  if (kind == "optional") {
    onnx::OptionalProto p;
    if (!p.ParseFromString(bytes)) throw InvalidArgumentError("'" + path + "' is not an OptionalProto");
    return ir::ValueFromOptionalProto(p, opts);
  }
  onnx::TensorProto p;
  if (!p.ParseFromString(bytes)) throw InvalidArgumentError("'" + path + "' is not a TensorProto");
  return Value(ir::TensorFromProto(p, opts));
}

std::string RunOnnxTestCase(const OnnxTestCase& c, const std::vector<std::string>& backends, int threads,
                            const Tolerance& tol) {
  SessionOptions options;
  options.backends = backends;
  options.threads = threads;
  auto session = Session::Create(c.dir + "/model.onnx", options);
  std::vector<fs::path> sets;
  for (const auto& entry : fs::directory_iterator(c.dir)) {
    if (entry.is_directory() && entry.path().filename().string().rfind("test_data_set_", 0) == 0) {
      sets.push_back(entry.path());
    }
  }
  std::sort(sets.begin(), sets.end());
  if (sets.empty()) return "no test_data_set_* folders";
  for (const auto& set : sets) {
    std::vector<NamedValue> inputs;
    const auto& in_info = session->inputs();
    for (size_t k = 0;; ++k) {
      fs::path p = set / ("input_" + std::to_string(k) + ".pb");
      if (!fs::exists(p)) break;
      if (k >= in_info.size()) return "test data has more inputs than the model (" + std::to_string(in_info.size()) + ")";
      inputs.emplace_back(in_info[k].name, LoadPbValue(p.string(), in_info[k].kind));
    }
    auto results = session->RunValues(inputs);
    const auto& out_info = session->outputs();
    for (size_t k = 0;; ++k) {
      fs::path p = set / ("output_" + std::to_string(k) + ".pb");
      if (!fs::exists(p)) break;
      if (k >= results.size()) return "test data has more outputs than the model";
      Value expected = LoadPbValue(p.string(), out_info[k].kind);
      std::string why = CompareValues(results[k].second, expected, tol);
      if (!why.empty()) return set.filename().string() + ", output '" + results[k].first + "': " + why;
    }
  }
  return "";
}

}  // namespace ferry::tools
