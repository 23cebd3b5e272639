#include "ir/onnx_import.h"

#include <onnx/onnx_pb.h>

#include <algorithm>
#include <climits>
#include <filesystem>
#include <memory>
#include <system_error>
#include <unordered_set>
#include <google/protobuf/unknown_field_set.h>
#ifdef __GLIBC__
#include <malloc.h>
#endif
#include <google/protobuf/io/coded_stream.h>
#include <google/protobuf/io/zero_copy_stream_impl.h>

#include "core/regular_file.h"
#include "ferry/error.h"
#include "ir/tensor_proto.h"

namespace ferry::ir {
namespace {

std::string CanonicalDomain(const std::string& d) { return d == "ai.onnx" ? std::string() : d; }

std::string DomainLabel(const std::string& canonical) { return canonical.empty() ? "ai.onnx" : canonical; }

// The opset imports of a model or a function (kKnownDomains says what is checked); `what` names it in errors.
std::map<std::string, int64_t> ImportOpsets(
    const google::protobuf::RepeatedPtrField<onnx::OperatorSetIdProto>& imports, const std::string& what) {
  std::map<std::string, int64_t> out;
  for (const auto& op : imports) {
    const std::string domain = CanonicalDomain(op.domain());
    if (op.version() <= 0) {
      throw InvalidModelError(what + ": opset import for domain '" + DomainLabel(domain) + "' has version " +
                              std::to_string(op.version()) + "; versions start at 1");
    }
    const int64_t max = KnownMaxOpset(domain);
    if (max > 0 && op.version() > max) {
      throw UnsupportedError(what + ": opset " + std::to_string(op.version()) + " of domain '" + DomainLabel(domain) +
                             "' is newer than Ferry knows (" + std::to_string(max) + ")");
    }
    auto [it, added] = out.emplace(domain, op.version());
    if (!added && it->second != op.version()) {
      throw InvalidModelError(what + ": domain '" + DomainLabel(domain) + "' is imported twice, at opsets " +
                              std::to_string(it->second) + " and " + std::to_string(op.version()));
    }
  }
  return out;
}

// Fields newer than libonnx 1.12's protos arrive as unknown fields; read length-delimited ones by number.
std::vector<std::string> UnknownBytes(const google::protobuf::Message& msg, int field_number) {
  std::vector<std::string> out;
  const auto& unknown = msg.GetReflection()->GetUnknownFields(msg);
  for (int i = 0; i < unknown.field_count(); ++i) {
    const auto& f = unknown.field(i);
    if (f.number() == field_number && f.type() == google::protobuf::UnknownField::TYPE_LENGTH_DELIMITED) {
      out.push_back(f.length_delimited());
    }
  }
  return out;
}

// Frees a TensorProto's data fields (each freed with its buffer, not just emptied); returns about how many bytes.
size_t FreeTensorData(onnx::TensorProto& tp) {
  const size_t bytes = tp.raw_data().capacity() + tp.float_data().Capacity() * sizeof(float) +
                       tp.double_data().Capacity() * sizeof(double) + tp.int32_data().Capacity() * sizeof(int32_t) +
                       tp.int64_data().Capacity() * sizeof(int64_t) + tp.uint64_data().Capacity() * sizeof(uint64_t);
  std::unique_ptr<std::string>(tp.release_raw_data());
  google::protobuf::RepeatedField<float>().Swap(tp.mutable_float_data());
  google::protobuf::RepeatedField<double>().Swap(tp.mutable_double_data());
  google::protobuf::RepeatedField<int32_t>().Swap(tp.mutable_int32_data());
  google::protobuf::RepeatedField<int64_t>().Swap(tp.mutable_int64_data());
  google::protobuf::RepeatedField<uint64_t>().Swap(tp.mutable_uint64_data());
  google::protobuf::RepeatedPtrField<std::string>().Swap(tp.mutable_string_data());
  return bytes;
}

// Every this many bytes of tensor data freed, the import hands malloc's free pages back to the system. A model's
// strings come from malloc's heap once glibc's dynamic mmap threshold has risen (a process that freed large blocks
// before), and a freed block in the middle of the heap stays resident; Ferry's tensors are mapped pages of their
// own (core/buffer_pool.h), so without this the import would peak at the proto's and Ferry's copies together.
constexpr size_t kTrimEveryBytes = size_t{16} << 20;

void ReturnFreedHeapPages() {
#ifdef __GLIBC__
  ::malloc_trim(0);
#endif
}

// False when `a` and `b` are known and disagree in kind or element type (their shapes are not compared), at any
// depth of a sequence, optional or map.
bool CompatibleTypes(const TypeInfo& a, const TypeInfo& b) {
  if (a.kind == TypeInfo::Kind::kUnknown || b.kind == TypeInfo::Kind::kUnknown) return true;
  if (a.kind != b.kind) return false;
  if (a.elem_type != DataType::kUndefined && b.elem_type != DataType::kUndefined && a.elem_type != b.elem_type) {
    return false;
  }
  return !a.elem || !b.elem || CompatibleTypes(*a.elem, *b.elem);
}

class Importer {
 public:
  // release_tensor_data: the proto being imported belongs to the import (parsed by ImportModelFromBytes/File,
  // never a caller's), so each tensor's data is freed from it as soon as the Tensor holding a copy is made:
  // the proto's and Ferry's copies of the weights are then never both whole.
  Importer(Model& model, std::string base_dir, const ImportOptions& options, ImportStats* stats,
           bool release_tensor_data)
      : model_(model),
        base_dir_(std::move(base_dir)),
        options_(options),
        stats_(stats),
        release_tensor_data_(release_tensor_data) {}

  void ImportGraph(const onnx::GraphProto& gp, Graph& g, const std::map<std::string, int64_t>& opsets,
                   const std::string& scope);
  void ImportFunction(const onnx::FunctionProto& fp, Function& f);

 private:
  [[noreturn]] void Fail(const std::string& scope, const std::string& what) const {
    throw InvalidModelError(model_.Describe() + ", " + scope + ": " + what);
  }
  Attribute ImportAttribute(const onnx::AttributeProto& ap, Graph& owner, const std::map<std::string, int64_t>& opsets,
                            const std::string& scope);
  void ImportNodes(const google::protobuf::RepeatedPtrField<onnx::NodeProto>& nodes, Graph& g,
                   const std::map<std::string, int64_t>& opsets, const std::string& scope);
  TensorLoadOptions TensorOptions(const std::string& where) const { return {base_dir_, model_.Describe() + ", " + where}; }
  // With load_initializer_data = false: the type of a large initializer, or nullopt when it is small enough to
  // load. A skipped initializer is validated exactly as loading it would (ValidateTensorProto: dims, data sizes,
  // the external data reference and its file), only its data is not read.
  std::optional<TypeInfo> SkippedInitializerType(const TensorProtoInfo& info) const;
  std::optional<TypeInfo> SkippedInitializerType(const onnx::TensorProto& tp, const std::string& where) const {
    if (options_.load_initializer_data) return std::nullopt;
    return SkippedInitializerType(ValidateTensorProto(tp, TensorOptions(where)));
  }
  std::optional<TypeInfo> SkippedInitializerType(const onnx::SparseTensorProto& sp, const std::string& where) const {
    if (options_.load_initializer_data) return std::nullopt;
    return SkippedInitializerType(ValidateSparseTensorProto(sp, TensorOptions(where)));
  }
  // A declared type (graph input, output, value_info) is valid: see the definition.
  void CheckDeclaredType(const onnx::TypeProto& tp, bool interface, const std::string& where) const;
  void CountInitializer(bool top, bool skipped, const TypeInfo* type, const std::string& name);
  // Frees the data of a tensor that has been converted (or skipped) when release_tensor_data_ is set. Every
  // TensorProto is read once; the const_cast is sound because the import's own proto is not const.
  void Release(const onnx::TensorProto& tp) const {
    if (!release_tensor_data_) return;
    freed_since_trim_ += FreeTensorData(const_cast<onnx::TensorProto&>(tp));
    if (freed_since_trim_ >= kTrimEveryBytes) {
      ReturnFreedHeapPages();
      freed_since_trim_ = 0;
    }
  }
  void Release(const onnx::SparseTensorProto& sp) const {
    Release(sp.values());
    Release(sp.indices());
  }
  Tensor ConvertTensor(const onnx::TensorProto& tp, const std::string& where) const {
    Tensor t = TensorFromProto(tp, TensorOptions(where));
    Release(tp);
    return t;
  }
  Tensor ConvertSparseTensor(const onnx::SparseTensorProto& sp, const std::string& where) const {
    Tensor t = TensorFromSparseProto(sp, TensorOptions(where));
    Release(sp);
    return t;
  }

  Model& model_;
  std::string base_dir_;
  ImportOptions options_;
  ImportStats* stats_;
  bool release_tensor_data_;
  mutable size_t freed_since_trim_ = 0;  // tensor data bytes freed since the last ReturnFreedHeapPages
};

std::optional<TypeInfo> Importer::SkippedInitializerType(const TensorProtoInfo& info) const {
  if (info.elements <= options_.small_initializer_elements) return std::nullopt;
  std::vector<Dim> ds;
  for (int64_t d : info.shape) ds.push_back(Dim::Static(d));
  return TypeInfo::Tensor(info.dtype, std::move(ds));
}

// Every element type a declared type names must be an ONNX data type (1000 or -1 is no type). The main graph's
// inputs and outputs are the model's interface, which ONNX's checker requires to be typed: there a tensor type
// whose element type is UNDEFINED (0, or no elem_type) is invalid too, as in ONNX Runtime, where it can match no
// tensor. Elsewhere (value_info, subgraphs' inputs and outputs) UNDEFINED means "not declared". A ValueInfoProto
// with no type at all declares nothing and is always accepted.
void Importer::CheckDeclaredType(const onnx::TypeProto& tp, bool interface, const std::string& where) const {
  auto elem = [&](bool has, int32_t e, const char* what) {
    if (has && e != 0 && !IsKnownDataType(e)) {
      Fail(where, std::string("declares ") + what + " " + std::to_string(e) + ", which is not an ONNX data type");
    }
    if (interface && (!has || e == 0)) {
      Fail(where, std::string("declares a tensor type without an element type (") + what +
                      " UNDEFINED); the model's inputs and outputs must name theirs");
    }
  };
  switch (tp.value_case()) {
    case onnx::TypeProto::kTensorType:
      elem(tp.tensor_type().has_elem_type(), tp.tensor_type().elem_type(), "element type");
      break;
    case onnx::TypeProto::kSparseTensorType:
      elem(tp.sparse_tensor_type().has_elem_type(), tp.sparse_tensor_type().elem_type(), "element type");
      break;
    case onnx::TypeProto::kSequenceType:
      if (tp.sequence_type().has_elem_type()) CheckDeclaredType(tp.sequence_type().elem_type(), interface, where);
      break;
    case onnx::TypeProto::kOptionalType:
      if (tp.optional_type().has_elem_type()) CheckDeclaredType(tp.optional_type().elem_type(), interface, where);
      break;
    case onnx::TypeProto::kMapType: {
      const int32_t key = tp.map_type().key_type();
      const bool integral_or_string = IsKnownDataType(key) && (static_cast<DataType>(key) == DataType::kString ||
                                                               IsInteger(static_cast<DataType>(key)));
      if (key != 0 && !integral_or_string) {
        Fail(where, "declares a map with key type " + std::to_string(key) + "; keys are integers or strings");
      }
      if (tp.map_type().has_value_type()) CheckDeclaredType(tp.map_type().value_type(), interface, where);
      break;
    }
    default:
      break;
  }
}

void Importer::CountInitializer(bool top, bool skipped, const TypeInfo* type, const std::string& name) {
  if (!top || !stats_) return;
  ++stats_->initializers;
  if (!skipped) return;
  ++stats_->initializers_skipped;
  stats_->skipped_names.push_back(name);
  int64_t n = 1;
  for (const Dim& d : *type->shape) n *= d.value;
  stats_->bytes_skipped += static_cast<int64_t>((static_cast<unsigned __int128>(n) * DataTypeBits(type->elem_type) + 7) / 8);
}

Attribute Importer::ImportAttribute(const onnx::AttributeProto& ap, Graph& owner,
                                    const std::map<std::string, int64_t>& opsets, const std::string& scope) {
  Attribute a;
  a.name = ap.name();
  a.ref_attr_name = ap.ref_attr_name();
  a.doc = ap.doc_string();
  auto type = static_cast<AttrType>(ap.type());
  if (type == AttrType::kUndefined) {  // IR < 2 models: infer from the field that is set
    if (ap.has_f()) type = AttrType::kFloat;
    else if (ap.has_i()) type = AttrType::kInt;
    else if (ap.has_s()) type = AttrType::kString;
    else if (ap.has_t()) type = AttrType::kTensor;
    else if (ap.has_g()) type = AttrType::kGraph;
    else if (ap.floats_size()) type = AttrType::kFloats;
    else if (ap.ints_size()) type = AttrType::kInts;
    else if (ap.strings_size()) type = AttrType::kStrings;
    else if (ap.tensors_size()) type = AttrType::kTensors;
    else if (ap.graphs_size()) type = AttrType::kGraphs;
  }
  a.type = type;
  std::string where = scope + ", attribute '" + ap.name() + "'";
  switch (type) {
    case AttrType::kFloat: a.f = ap.f(); break;
    case AttrType::kInt: a.i = ap.i(); break;
    case AttrType::kString: a.s = ap.s(); break;
    case AttrType::kTensor: a.t = ConvertTensor(ap.t(), where); break;
    case AttrType::kSparseTensor: a.t = ConvertSparseTensor(ap.sparse_tensor(), where); break;
    case AttrType::kGraph: {
      a.g = std::make_shared<Graph>(&owner);
      ImportGraph(ap.g(), *a.g, opsets, where);
      break;
    }
    case AttrType::kFloats: a.floats.assign(ap.floats().begin(), ap.floats().end()); break;
    case AttrType::kInts: a.ints.assign(ap.ints().begin(), ap.ints().end()); break;
    case AttrType::kStrings: a.strings.assign(ap.strings().begin(), ap.strings().end()); break;
    case AttrType::kTensors:
      for (const auto& t : ap.tensors()) a.tensors.push_back(ConvertTensor(t, where));
      break;
    case AttrType::kGraphs:
      for (const auto& gp : ap.graphs()) {
        auto g = std::make_shared<Graph>(&owner);
        ImportGraph(gp, *g, opsets, where);
        a.graphs.push_back(std::move(g));
      }
      break;
    case AttrType::kTypeProto: a.tp = TypeFromProto(ap.tp()); break;
    case AttrType::kTypeProtos:
      for (const auto& tp : ap.type_protos()) a.tps.push_back(TypeFromProto(tp));
      break;
    case AttrType::kSparseTensors:
      for (const auto& t : ap.sparse_tensors()) a.tensors.push_back(ConvertSparseTensor(t, where));
      break;
    case AttrType::kUndefined:
      if (a.ref_attr_name.empty()) Fail(scope, "attribute '" + ap.name() + "' has no type and no value");
      break;
    default:
      Fail(scope, "attribute '" + ap.name() + "' has unknown type " + std::to_string(ap.type()));
  }
  return a;
}

void Importer::ImportNodes(const google::protobuf::RepeatedPtrField<onnx::NodeProto>& nodes, Graph& g,
                           const std::map<std::string, int64_t>& opsets, const std::string& scope) {
  // Create every node output first so nodes may be listed out of order and subgraphs may capture them.
  std::vector<std::vector<Value*>> outputs(static_cast<size_t>(nodes.size()));
  for (int k = 0; k < nodes.size(); ++k) {
    const auto& np = nodes[k];
    for (const auto& name : np.output()) {
      if (name.empty()) {
        outputs[static_cast<size_t>(k)].push_back(nullptr);
        continue;
      }
      if (g.FindValue(name)) {
        Fail(scope, "node '" + np.name() + "' (" + np.op_type() + "): output '" + name +
                        "' is already defined (a graph input, initializer or another node's output)");
      }
      outputs[static_cast<size_t>(k)].push_back(g.AddValue(name));
    }
  }
  for (int k = 0; k < nodes.size(); ++k) {
    const auto& np = nodes[k];
    std::string name = np.name().empty() ? np.op_type() + "_" + std::to_string(k) : np.name();
    std::string where = scope + ", node '" + name + "' (" + np.op_type() + ")";
    if (np.op_type().empty()) Fail(scope, "node '" + name + "' has no op_type");
    std::vector<Value*> inputs;
    for (const auto& in : np.input()) {
      if (in.empty()) {
        inputs.push_back(nullptr);
        continue;
      }
      Value* v = g.LookupValue(in);
      if (!v) Fail(where, "input '" + in + "' is not a graph input, initializer or output of any node");
      inputs.push_back(v);
    }
    std::vector<Attribute> attrs;
    for (const auto& ap : np.attribute()) attrs.push_back(ImportAttribute(ap, g, opsets, where));
    std::string domain = CanonicalDomain(np.domain());
    Node* node = g.AddNode(name, np.op_type(), domain, std::move(inputs), outputs[static_cast<size_t>(k)], std::move(attrs));
    auto it = opsets.find(domain);
    if (it == opsets.end()) {
      Fail(where, "domain '" + (domain.empty() ? std::string("ai.onnx") : domain) + "' is not in the opset imports");
    }
    node->set_opset(it->second);
    for (const auto& s : UnknownBytes(np, 8)) node->set_overload(s);
    node->set_doc(np.doc_string());
  }
}

void Importer::ImportGraph(const onnx::GraphProto& gp, Graph& g, const std::map<std::string, int64_t>& opsets,
                           const std::string& scope_in) {
  g.set_name(gp.name());
  g.set_doc(gp.doc_string());
  std::string scope = scope_in.empty() ? "graph '" + gp.name() + "'" : scope_in + ", graph '" + gp.name() + "'";
  const bool top = scope_in.empty();
  // Initializers whose data was skipped (ImportOptions): typed values that stand where initializers would.
  std::unordered_set<const Value*> skipped;
  auto is_init = [&](const Value* v) { return v->is_initializer() || skipped.count(v); };
  for (const auto& tp : gp.initializer()) {
    if (tp.name().empty()) Fail(scope, "an initializer has no name");
    if (g.FindValue(tp.name())) Fail(scope, "initializer '" + tp.name() + "' is defined more than once");
    std::string where = scope + ", initializer '" + tp.name() + "'";
    if (auto type = SkippedInitializerType(tp, where)) {
      skipped.insert(g.AddValue(tp.name(), *type));
      CountInitializer(top, true, &*type, tp.name());
      Release(tp);
      continue;
    }
    auto t = std::make_shared<const Tensor>(ConvertTensor(tp, where));
    g.AddInitializer(tp.name(), std::move(t));
    CountInitializer(top, false, nullptr, tp.name());
  }
  for (const auto& sp : gp.sparse_initializer()) {
    const std::string& n = sp.values().name();
    if (n.empty()) Fail(scope, "a sparse initializer has no name");
    if (g.FindValue(n)) Fail(scope, "sparse initializer '" + n + "' is defined more than once");
    std::string where = scope + ", initializer '" + n + "'";
    if (auto type = SkippedInitializerType(sp, where)) {
      skipped.insert(g.AddValue(n, *type));
      CountInitializer(top, true, &*type, n);
      Release(sp);
      continue;
    }
    auto t = std::make_shared<const Tensor>(ConvertSparseTensor(sp, where));
    g.AddInitializer(n, std::move(t));
    CountInitializer(top, false, nullptr, n);
  }
  std::unordered_set<const Value*> inputs;
  for (const auto& vi : gp.input()) {
    if (vi.name().empty()) Fail(scope, "a graph input has no name");
    Value* v = g.FindValue(vi.name());
    if (v && !is_init(v)) Fail(scope, "graph input '" + vi.name() + "' is declared twice");
    if (!v) v = g.AddValue(vi.name());
    if (vi.has_type()) {
      const std::string where = scope + ", graph input '" + vi.name() + "'";
      CheckDeclaredType(vi.type(), top, where);
      TypeInfo t = TypeFromProto(vi.type());
      if (is_init(v) && !CompatibleTypes(t, v->type())) {
        Fail(where, "is declared " + t.ToString() + ", but its initializer is " + v->type().ToString());
      }
      v->set_type(std::move(t));
    }
    g.mutable_inputs().push_back(v);
    inputs.insert(v);
  }
  ImportNodes(gp.node(), g, opsets, scope);
  for (const auto& vi : gp.value_info()) {
    Value* v = g.FindValue(vi.name());
    if (!vi.has_type()) continue;
    CheckDeclaredType(vi.type(), false, scope + ", value_info '" + vi.name() + "'");
    if (v && !is_init(v)) v->set_type(TypeFromProto(vi.type()));
  }
  for (const auto& vi : gp.output()) {
    Value* v = g.LookupValue(vi.name());
    if (!v) Fail(scope, "graph output '" + vi.name() + "' is not produced by any node, input or initializer");
    const std::string where = scope + ", graph output '" + vi.name() + "'";
    if (vi.has_type()) CheckDeclaredType(vi.type(), top, where);
    TypeInfo t = vi.has_type() ? TypeFromProto(vi.type()) : TypeInfo{};
    if (t.kind != TypeInfo::Kind::kUnknown) {
      if (v->owner() == &g && !is_init(v) && !inputs.count(v)) {
        v->set_type(std::move(t));  // a node's output: type inference checks the declaration against it
      } else if (!CompatibleTypes(t, v->type())) {
        // An input, initializer or outer value passed through: it already has its type, declared or its tensor's.
        Fail(scope, "graph output '" + vi.name() + "' is declared " + t.ToString() + ", but it is the " +
                        (is_init(v) ? "initializer" : inputs.count(v) ? "graph input" : "outer-scope value") + " '" +
                        v->name() + "' of type " + v->type().ToString());
      }
    }
    g.mutable_outputs().push_back(v);
  }
  try {
    g.TopologicalSort();
  } catch (const InvalidModelError& e) {
    Fail(scope, e.what());
  }
}

void Importer::ImportFunction(const onnx::FunctionProto& fp, Function& f) {
  f.domain = CanonicalDomain(fp.domain());
  f.name = fp.name();
  f.doc = fp.doc_string();
  for (const auto& s : UnknownBytes(fp, 13)) f.overload = s;
  f.inputs.assign(fp.input().begin(), fp.input().end());
  f.outputs.assign(fp.output().begin(), fp.output().end());
  f.attributes.assign(fp.attribute().begin(), fp.attribute().end());
  std::string scope = "function '" + (f.domain.empty() ? "" : f.domain + "::") + f.name + "'";
  f.opsets = ImportOpsets(fp.opset_import(), model_.Describe() + ", " + scope);
  f.body = std::make_shared<Graph>();
  f.body->set_name(f.name);
  for (const auto& bytes : UnknownBytes(fp, 11)) {  // attribute_proto (IR >= 9): attributes with defaults
    onnx::AttributeProto ap;
    if (!ap.ParseFromString(bytes)) Fail(scope, "an attribute_proto entry is not a valid AttributeProto");
    f.attribute_defaults.push_back(ImportAttribute(ap, *f.body, f.opsets, scope));
  }
  for (const auto& in : f.inputs) {
    if (f.body->FindValue(in)) Fail(scope, "input '" + in + "' is declared twice");
    f.body->mutable_inputs().push_back(f.body->AddValue(in));
  }
  ImportNodes(fp.node(), *f.body, f.opsets, scope);
  for (const auto& out : f.outputs) {
    Value* v = f.body->FindValue(out);
    if (!v) Fail(scope, "output '" + out + "' is not produced by the function body");
    f.body->mutable_outputs().push_back(v);
  }
  try {
    f.body->TopologicalSort();
  } catch (const InvalidModelError& e) {
    Fail(scope, e.what());
  }
}

}  // namespace

int64_t KnownMaxOpset(std::string_view domain) {
  if (domain == "ai.onnx") domain = "";
  for (const KnownDomain& d : kKnownDomains) {
    if (d.domain == domain) return d.max_opset;
  }
  return 0;
}

TypeInfo TypeFromProto(const onnx::TypeProto& tp) {
  TypeInfo t;
  auto shape_of = [](const onnx::TensorShapeProto& sp) {
    std::vector<Dim> dims;
    for (const auto& d : sp.dim()) {
      if (d.has_dim_value()) dims.push_back(Dim::Static(d.dim_value()));
      else dims.push_back(Dim::Symbolic(d.dim_param()));
    }
    return dims;
  };
  switch (tp.value_case()) {
    case onnx::TypeProto::kTensorType:
      t.kind = TypeInfo::Kind::kTensor;
      t.elem_type = IsKnownDataType(tp.tensor_type().elem_type()) ? static_cast<DataType>(tp.tensor_type().elem_type())
                                                                  : DataType::kUndefined;
      if (tp.tensor_type().has_shape()) t.shape = shape_of(tp.tensor_type().shape());
      break;
    case onnx::TypeProto::kSparseTensorType:
      t.kind = TypeInfo::Kind::kSparseTensor;
      t.elem_type = IsKnownDataType(tp.sparse_tensor_type().elem_type())
                        ? static_cast<DataType>(tp.sparse_tensor_type().elem_type())
                        : DataType::kUndefined;
      if (tp.sparse_tensor_type().has_shape()) t.shape = shape_of(tp.sparse_tensor_type().shape());
      break;
    case onnx::TypeProto::kSequenceType:
      t.kind = TypeInfo::Kind::kSequence;
      t.elem = std::make_shared<TypeInfo>(TypeFromProto(tp.sequence_type().elem_type()));
      break;
    case onnx::TypeProto::kOptionalType:
      t.kind = TypeInfo::Kind::kOptional;
      t.elem = std::make_shared<TypeInfo>(TypeFromProto(tp.optional_type().elem_type()));
      break;
    case onnx::TypeProto::kMapType:
      t.kind = TypeInfo::Kind::kMap;
      t.elem_type = IsKnownDataType(tp.map_type().key_type()) ? static_cast<DataType>(tp.map_type().key_type())
                                                              : DataType::kUndefined;
      t.elem = std::make_shared<TypeInfo>(TypeFromProto(tp.map_type().value_type()));
      break;
    default:
      break;
  }
  return t;
}

namespace {

std::unique_ptr<Model> ImportProto(const onnx::ModelProto& proto, const std::string& path, const std::string& base_dir,
                                   const ImportOptions& options, ImportStats* stats, bool release_tensor_data) {
  auto model = std::make_unique<Model>();
  model->path = path;
  model->ir_version = proto.ir_version();
  if (!proto.has_ir_version() || proto.ir_version() <= 0) {
    throw InvalidModelError(model->Describe() + ": not an ONNX model (no ir_version)");
  }
  if (proto.ir_version() > kMaxIrVersion) {
    throw UnsupportedError(model->Describe() + ": IR version " + std::to_string(proto.ir_version()) +
                           " is newer than the newest Ferry reads (" + std::to_string(kMaxIrVersion) + ")");
  }
  if (!proto.has_graph()) throw InvalidModelError(model->Describe() + ": the model has no graph");
  model->opsets = ImportOpsets(proto.opset_import(), model->Describe());
  if (proto.opset_import_size() == 0) {
    // Opset imports came with IR version 3; older models use opset 1 of the default domain.
    if (proto.ir_version() >= 3) {
      throw InvalidModelError(model->Describe() + ": the model imports no opset (IR version " +
                              std::to_string(proto.ir_version()) + " models must list their opset_import)");
    }
    model->opsets[""] = 1;
  }
  model->producer_name = proto.producer_name();
  model->producer_version = proto.producer_version();
  model->domain = proto.domain();
  model->doc = proto.doc_string();
  model->model_version = proto.model_version();
  for (const auto& kv : proto.metadata_props()) model->metadata.emplace_back(kv.key(), kv.value());
  if (stats) *stats = {};
  Importer importer(*model, base_dir, options, stats, release_tensor_data);
  for (const auto& fp : proto.functions()) {
    Function f;
    importer.ImportFunction(fp, f);
    model->functions.push_back(std::move(f));
  }
  model->graph = std::make_unique<Graph>();
  importer.ImportGraph(proto.graph(), *model->graph, model->opsets, "");
  return model;
}

std::string ModelLabel(const std::string& name) { return name.empty() ? "model <bytes>" : "model '" + name + "'"; }

void CheckModelSize(uint64_t size, const std::string& label) {
  if (size > static_cast<uint64_t>(INT32_MAX)) {
    throw UnsupportedError(label + ": files over 2 GiB must keep their weights in external data");
  }
}

// Parses a whole ModelProto from `stream` (the model is at most 2 GiB: CheckModelSize).
void ParseModel(google::protobuf::io::CodedInputStream& stream, onnx::ModelProto& proto, const std::string& label) {
  stream.SetTotalBytesLimit(INT_MAX);  // not protobuf's old 64 MiB default
  stream.SetRecursionLimit(256);
  if (!proto.ParseFromCodedStream(&stream) || !stream.ConsumedEntireMessage()) {
    throw InvalidModelError(label + ": not a valid ONNX model (protobuf parsing failed: truncated or not a ModelProto)");
  }
}

}  // namespace

std::unique_ptr<Model> ImportModelProto(const onnx::ModelProto& proto, const std::string& path,
                                        const std::string& base_dir, const ImportOptions& options,
                                        ImportStats* stats) {
  return ImportProto(proto, path, base_dir, options, stats, /*release_tensor_data=*/false);
}

std::unique_ptr<Model> ImportModelFromBytes(std::span<const uint8_t> bytes, const std::string& base_dir,
                                            const std::string& name, const ImportOptions& options,
                                            ImportStats* stats) {
  onnx::ModelProto proto;
  const std::string label = ModelLabel(name);
  CheckModelSize(bytes.size(), label);
  google::protobuf::io::CodedInputStream stream(bytes.data(), static_cast<int>(bytes.size()));
  ParseModel(stream, proto, label);
  return ImportProto(proto, name, base_dir, options, stats, /*release_tensor_data=*/true);
}

std::unique_ptr<Model> ImportModelFromFile(const std::string& path) { return ImportModelFromFile(path, {}); }

std::unique_ptr<Model> ImportModelFromFile(const std::string& path, const ImportOptions& options, ImportStats* stats) {
  // Only a regular file is read, and anything else is refused without blocking (a FIFO's open() would wait for
  // a writer forever): core/regular_file.h.
  RegularFile file = RegularFile::Open(path);
  if (!file.ok()) {
    throw InvalidArgumentError("model '" + path + "': " +
                               (file.error() == "does not exist" ? std::string("no such file") : file.error()));
  }
  const std::string label = ModelLabel(path);
  CheckModelSize(file.size(), label);
  // Parsed straight from the file through a 1 MiB window: the file's bytes are never all in memory beside the
  // proto (with the release of each tensor's data after conversion, the import peaks near one copy of the
  // weights, not three).
  onnx::ModelProto proto;
  {
    google::protobuf::io::FileInputStream file_stream(file.fd(), 1 << 20);
    google::protobuf::io::CodedInputStream stream(&file_stream);
    try {
      ParseModel(stream, proto, label);
    } catch (const InvalidModelError&) {
      if (const int err = file_stream.GetErrno(); err != 0) {
        throw InvalidArgumentError(label + ": read failed: " + std::generic_category().message(err));
      }
      throw;
    }
  }
  file = RegularFile();  // closed before the weights are converted
  std::string base = std::filesystem::path(path).parent_path().string();
  if (base.empty()) base = ".";
  return ImportProto(proto, path, base, options, stats, /*release_tensor_data=*/true);
}

}  // namespace ferry::ir
