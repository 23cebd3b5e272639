#include "tools/compare_extract.h"

#include <onnx/onnx_pb.h>

#include <filesystem>
#include <fstream>
#include <set>

#include "ferry/error.h"
#include "ir/tensor_proto.h"

namespace ferry::tools {
namespace {

ir::TypeInfo TypeOf(const Value& v) {
  if (!v.is_tensor()) return {};
  std::vector<ir::Dim> dims;
  for (int64_t d : v.tensor().shape()) dims.push_back(ir::Dim::Static(d));
  return ir::TypeInfo::Tensor(v.tensor().dtype(), std::move(dims));
}

}  // namespace

ExtractedModel ExtractSubgraph(const ir::Model& original, const std::vector<const ir::Node*>& nodes,
                               const std::vector<std::string>& outputs, const std::map<std::string, Value>& values) {
  ExtractedModel out;
  out.model = std::make_unique<ir::Model>();
  ir::Model& m = *out.model;
  m.ir_version = original.ir_version;
  m.opsets = original.opsets;
  m.producer_name = "ferry compare";
  m.graph = std::make_unique<ir::Graph>();
  ir::Graph& g = *m.graph;
  g.set_name("extracted");
  const std::set<const ir::Node*> keep(nodes.begin(), nodes.end());
  const auto type_of = [&](const ir::Value& v) {
    auto it = values.find(v.name());
    return it != values.end() && it->second.is_tensor() ? TypeOf(it->second) : v.type();
  };
  for (const auto& owned : original.graph->nodes()) {
    const ir::Node* n = owned.get();
    if (!keep.count(n)) continue;
    if (!n->subgraphs().empty()) {
      throw InvalidArgumentError(n->Describe() + " holds subgraphs; it cannot be cut out on its own");
    }
    std::vector<ir::Value*> ins, outs;
    for (const ir::Value* v : n->inputs()) {
      if (!v) {
        ins.push_back(nullptr);
        continue;
      }
      if (ir::Value* known = g.FindValue(v->name())) {
        ins.push_back(known);
      } else if (v->is_initializer()) {
        ins.push_back(g.AddInitializer(v->name(), v->initializer_ptr()));
      } else if (v->producer() && keep.count(v->producer())) {
        throw InvalidArgumentError(n->Describe() + " reads '" + v->name() + "' before its producer");
      } else {
        auto it = values.find(v->name());
        if (it == values.end()) throw InvalidArgumentError("no captured value for '" + v->name() + "'");
        if (!it->second.is_tensor()) {
          throw InvalidArgumentError("'" + v->name() + "' is not a tensor; it cannot be a standalone input");
        }
        ir::Value* input = g.AddValue(v->name(), TypeOf(it->second));
        g.mutable_inputs().push_back(input);
        out.feeds.emplace_back(v->name(), it->second);
        ins.push_back(input);
      }
    }
    for (const ir::Value* v : n->outputs()) outs.push_back(v ? g.AddValue(v->name(), type_of(*v)) : nullptr);
    ir::Node* copy = g.AddNode(n->name(), n->op_type(), n->domain(), std::move(ins), std::move(outs), n->attributes());
    copy->set_opset(n->opset());
  }
  for (const std::string& name : outputs) {
    ir::Value* v = g.FindValue(name);
    if (!v || !v->producer()) throw InvalidArgumentError("'" + name + "' is not produced by the extracted nodes");
    g.mutable_outputs().push_back(v);
  }
  return out;
}

void WriteDataSet(const std::string& dir, const std::vector<NamedValue>& feeds, const std::vector<NamedValue>& outputs) {
  const std::filesystem::path set = std::filesystem::path(dir) / "test_data_set_0";
  std::error_code ec;
  std::filesystem::create_directories(set, ec);
  if (ec) throw InvalidArgumentError("cannot create '" + set.string() + "': " + ec.message());
  const auto write = [&](const std::string& prefix, const std::vector<NamedValue>& list) {
    for (size_t k = 0; k < list.size(); ++k) {
      const auto& [name, v] = list[k];
      if (!v.is_tensor()) throw InvalidArgumentError("'" + name + "' is not a tensor; cannot write it as a .pb file");
      onnx::TensorProto proto;
      ir::TensorToProto(v.tensor(), name, &proto);
      const std::string path = (set / (prefix + "_" + std::to_string(k) + ".pb")).string();
      std::ofstream f(path, std::ios::binary | std::ios::trunc);
      if (!f || !proto.SerializeToOstream(&f) || !f.flush()) throw InvalidArgumentError("cannot write '" + path + "'");
    }
  };
  write("input", feeds);
  write("output", outputs);
}

}  // namespace ferry::tools
