#include "ir/onnx_export.h"

#include <onnx/onnx_pb.h>

#include <climits>
#include <filesystem>
#include <fstream>

#include "ferry/error.h"
#include "ir/tensor_proto.h"

namespace ferry::ir {
namespace {

void TypeToProto(const TypeInfo& t, onnx::TypeProto* p) {
  auto shape_to = [](const std::optional<std::vector<Dim>>& shape, onnx::TensorShapeProto* sp) {
    for (const Dim& d : *shape) {
      auto* dp = sp->add_dim();
      if (d.is_static()) dp->set_dim_value(d.value);
      else if (!d.symbol.empty()) dp->set_dim_param(d.symbol);
    }
  };
  switch (t.kind) {
    case TypeInfo::Kind::kTensor:
      p->mutable_tensor_type()->set_elem_type(static_cast<int32_t>(t.elem_type));
      if (t.shape) shape_to(t.shape, p->mutable_tensor_type()->mutable_shape());
      break;
    case TypeInfo::Kind::kSparseTensor:
      p->mutable_sparse_tensor_type()->set_elem_type(static_cast<int32_t>(t.elem_type));
      if (t.shape) shape_to(t.shape, p->mutable_sparse_tensor_type()->mutable_shape());
      break;
    case TypeInfo::Kind::kSequence:
      if (t.elem) TypeToProto(*t.elem, p->mutable_sequence_type()->mutable_elem_type());
      else p->mutable_sequence_type();
      break;
    case TypeInfo::Kind::kOptional:
      if (t.elem) TypeToProto(*t.elem, p->mutable_optional_type()->mutable_elem_type());
      else p->mutable_optional_type();
      break;
    case TypeInfo::Kind::kMap:
      p->mutable_map_type()->set_key_type(static_cast<int32_t>(t.elem_type));
      if (t.elem) TypeToProto(*t.elem, p->mutable_map_type()->mutable_value_type());
      break;
    case TypeInfo::Kind::kUnknown:
      break;
  }
}

// True when `t` names every tensor element type it holds: a type that does not cannot be declared (an
// UNDEFINED element type on a model's input or output is invalid, as in ONNX Runtime; the importer refuses it).
bool FullyTyped(const TypeInfo& t) {
  switch (t.kind) {
    case TypeInfo::Kind::kUnknown: return false;
    case TypeInfo::Kind::kTensor:
    case TypeInfo::Kind::kSparseTensor: return t.elem_type != DataType::kUndefined;
    case TypeInfo::Kind::kMap: return t.elem_type != DataType::kUndefined && (!t.elem || FullyTyped(*t.elem));
    default: return !t.elem || FullyTyped(*t.elem);
  }
}

// `interface`: an input or output of the main graph, written without a type unless its element types are all
// known (its shape alone cannot be declared there). Elsewhere UNDEFINED means "not declared" and is kept.
void ValueInfoToProto(const Value& v, onnx::ValueInfoProto* p, bool interface = false) {
  p->set_name(v.name());
  if (!v.doc().empty()) p->set_doc_string(v.doc());
  const bool declare = interface ? FullyTyped(v.type()) : v.type().kind != TypeInfo::Kind::kUnknown;
  if (declare) TypeToProto(v.type(), p->mutable_type());
}

void GraphToProto(const Graph& g, onnx::GraphProto* gp);

void AttributeToProto(const Attribute& a, onnx::AttributeProto* ap) {
  ap->set_name(a.name);
  if (!a.ref_attr_name.empty()) ap->set_ref_attr_name(a.ref_attr_name);
  if (!a.doc.empty()) ap->set_doc_string(a.doc);
  ap->set_type(static_cast<onnx::AttributeProto::AttributeType>(a.type));
  switch (a.type) {
    case AttrType::kFloat: ap->set_f(a.f); break;
    case AttrType::kInt: ap->set_i(a.i); break;
    case AttrType::kString: ap->set_s(a.s); break;
    case AttrType::kTensor: TensorToProto(a.t, "", ap->mutable_t()); break;
    case AttrType::kSparseTensor:
      // Sparse tensors are densified on import; write the dense values back as a tensor attribute.
      ap->set_type(onnx::AttributeProto::TENSOR);
      TensorToProto(a.t, "", ap->mutable_t());
      break;
    case AttrType::kGraph: GraphToProto(*a.g, ap->mutable_g()); break;
    case AttrType::kFloats: for (float f : a.floats) ap->add_floats(f); break;
    case AttrType::kInts: for (int64_t i : a.ints) ap->add_ints(i); break;
    case AttrType::kStrings: for (const auto& s : a.strings) ap->add_strings(s); break;
    case AttrType::kTensors: for (const auto& t : a.tensors) TensorToProto(t, "", ap->add_tensors()); break;
    case AttrType::kGraphs: for (const auto& g : a.graphs) GraphToProto(*g, ap->add_graphs()); break;
    case AttrType::kTypeProto: TypeToProto(a.tp, ap->mutable_tp()); break;
    case AttrType::kTypeProtos: for (const auto& t : a.tps) TypeToProto(t, ap->add_type_protos()); break;
    default: break;
  }
}

void NodeToProto(const Node& n, onnx::NodeProto* np) {
  np->set_name(n.name());
  np->set_op_type(n.op_type());
  if (!n.domain().empty()) np->set_domain(n.domain());
  if (!n.doc().empty()) np->set_doc_string(n.doc());
  for (const Value* v : n.inputs()) np->add_input(v ? v->name() : "");
  for (const Value* v : n.outputs()) np->add_output(v ? v->name() : "");
  for (const auto& a : n.attributes()) AttributeToProto(a, np->add_attribute());
}

void GraphToProto(const Graph& g, onnx::GraphProto* gp) {
  gp->set_name(g.name());
  if (!g.doc().empty()) gp->set_doc_string(g.doc());
  const bool top = g.parent() == nullptr;
  for (const Value* v : g.initializers()) TensorToProto(*v->initializer(), v->name(), gp->add_initializer());
  for (const Value* v : g.inputs()) ValueInfoToProto(*v, gp->add_input(), top);
  for (const Value* v : g.outputs()) ValueInfoToProto(*v, gp->add_output(), top);
  for (const auto& n : g.nodes()) NodeToProto(*n, gp->add_node());
  // value_info for typed intermediate values
  for (const auto& v : g.values()) {
    if (v->producer() && v->type().kind != TypeInfo::Kind::kUnknown &&
        std::find(g.outputs().begin(), g.outputs().end(), v.get()) == g.outputs().end()) {
      ValueInfoToProto(*v, gp->add_value_info());
    }
  }
}

}  // namespace

void ExportModelProto(const Model& model, onnx::ModelProto* proto) {
  proto->Clear();
  proto->set_ir_version(model.ir_version);
  for (const auto& [domain, version] : model.opsets) {
    auto* op = proto->add_opset_import();
    op->set_domain(domain);
    op->set_version(version);
  }
  if (!model.producer_name.empty()) proto->set_producer_name(model.producer_name);
  if (!model.producer_version.empty()) proto->set_producer_version(model.producer_version);
  if (!model.domain.empty()) proto->set_domain(model.domain);
  if (!model.doc.empty()) proto->set_doc_string(model.doc);
  if (model.model_version) proto->set_model_version(model.model_version);
  for (const auto& [k, v] : model.metadata) {
    auto* kv = proto->add_metadata_props();
    kv->set_key(k);
    kv->set_value(v);
  }
  for (const auto& f : model.functions) {
    auto* fp = proto->add_functions();
    fp->set_name(f.name);
    fp->set_domain(f.domain);
    if (!f.doc.empty()) fp->set_doc_string(f.doc);
    for (const auto& s : f.inputs) fp->add_input(s);
    for (const auto& s : f.outputs) fp->add_output(s);
    for (const auto& s : f.attributes) fp->add_attribute(s);
    for (const auto& [domain, version] : f.opsets) {
      auto* op = fp->add_opset_import();
      op->set_domain(domain);
      op->set_version(version);
    }
    for (const auto& n : f.body->nodes()) NodeToProto(*n, fp->add_node());
    // attribute_proto (field 11) is newer than libonnx 1.12's protos: write it as an unknown field.
    for (const auto& a : f.attribute_defaults) {
      onnx::AttributeProto ap;
      AttributeToProto(a, &ap);
      fp->GetReflection()->MutableUnknownFields(fp)->AddLengthDelimited(11, ap.SerializeAsString());
    }
  }
  GraphToProto(*model.graph, proto->mutable_graph());
}

std::string ExportModelBytes(const Model& model) {
  onnx::ModelProto proto;
  ExportModelProto(model, &proto);
  std::string out;
  if (!proto.SerializeToString(&out)) throw InternalError(model.Describe() + ": failed to serialize the model");
  return out;
}

namespace {

void CollectInitializers(onnx::GraphProto* g, std::vector<onnx::TensorProto*>& out) {
  for (auto& t : *g->mutable_initializer()) out.push_back(&t);
  for (auto& n : *g->mutable_node()) {
    for (auto& a : *n.mutable_attribute()) {
      if (a.has_g()) CollectInitializers(a.mutable_g(), out);
      for (auto& sub : *a.mutable_graphs()) CollectInitializers(&sub, out);
    }
  }
}

// Moves the raw data of large initializers into `data_path` (truncated first), recording where in `proto`.
void WriteExternalData(onnx::ModelProto& proto, const std::string& data_path, const ExportOptions& options,
                       ExportStats* stats) {
  constexpr int64_t kAlignThreshold = 1 << 20, kAlignment = 64 << 10;
  std::vector<onnx::TensorProto*> tensors;
  CollectInitializers(proto.mutable_graph(), tensors);
  std::ofstream out(data_path, std::ios::binary | std::ios::trunc);
  if (!out) throw InvalidArgumentError("cannot write external data to '" + data_path + "'");
  const std::string location = std::filesystem::path(data_path).filename().string();
  int64_t offset = 0;
  for (onnx::TensorProto* t : tensors) {
    if (!t->has_raw_data()) continue;  // string tensors stay inline (ONNX stores no strings externally)
    const auto size = static_cast<int64_t>(t->raw_data().size());
    if (size <= options.external_data_threshold) continue;
    if (size > kAlignThreshold && offset % kAlignment) {
      const int64_t pad = kAlignment - offset % kAlignment;
      const std::string zeros(static_cast<size_t>(pad), '\0');
      out.write(zeros.data(), pad);
      offset += pad;
    }
    out.write(t->raw_data().data(), size);
    t->clear_raw_data();
    t->set_data_location(onnx::TensorProto::EXTERNAL);
    for (const auto& [key, value] : {std::pair<std::string, std::string>{"location", location},
                                     {"offset", std::to_string(offset)},
                                     {"length", std::to_string(size)}}) {
      auto* kv = t->add_external_data();
      kv->set_key(key);
      kv->set_value(value);
    }
    offset += size;
    if (stats) {
      ++stats->external_tensors;
      stats->external_bytes += size;
    }
  }
  if (!out.flush()) throw InvalidArgumentError("cannot write external data to '" + data_path + "'");
  if (stats) stats->data_path = data_path;
}

}  // namespace

void ExportModelToFile(const Model& model, const std::string& path) { ExportModelToFile(model, path, {}); }

void ExportModelToFile(const Model& model, const std::string& path, const ExportOptions& options,
                       ExportStats* stats) {
  if (stats) *stats = {};
  onnx::ModelProto proto;
  ExportModelProto(model, &proto);
  if (options.external_data) WriteExternalData(proto, path + ".data", options, stats);
  const size_t size = proto.ByteSizeLong();
  if (size > static_cast<size_t>(INT_MAX)) {
    throw InvalidArgumentError(model.Describe() + ": the model is " + std::to_string(size >> 20) +
                               " MiB, over protobuf's 2 GiB limit: write its weights as external data");
  }
  // Serialized straight into the file: no second in-memory copy of the weights.
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  if (!out) throw InvalidArgumentError("cannot write model to '" + path + "'");
  if (!proto.SerializeToOstream(&out) || !out.flush()) {
    throw InvalidArgumentError("cannot write model to '" + path + "': serialization or write failed");
  }
}

}  // namespace ferry::ir
