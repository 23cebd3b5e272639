#include "backends/plugin/plugin_backend.h"

#include <algorithm>
#include <map>
#include <mutex>
#include <shared_mutex>

#include "ferry/error.h"
#include "kernels/kernel.h"
#include "schemas/shape_inference/context.h"

// The context behind every FerryOpContext* a plugin sees: the node, the callback's phase, and the error the
// plugin reported. Defined at global scope: it completes the C ABI's opaque struct.
struct FerryOpContext {
  enum class Phase { kCreate, kInferShapes, kCompute };
  const ferry::plugin::PluginOp* op = nullptr;
  const ferry::ir::Node* node = nullptr;
  Phase phase = Phase::kCreate;
  std::string error;
  ferry::schemas::InferenceContext* infer = nullptr;  // kInferShapes
  ferry::KernelContext* kernel = nullptr;             // kCompute
  std::vector<bool> allocated;                        // kCompute: outputs allocated so far
};

namespace ferry::plugin {
namespace {

const char* StatusName(FerryStatus s) {
  switch (s) {
    case FERRY_OK: return "FERRY_OK";
    case FERRY_INVALID_ARGUMENT: return "FERRY_INVALID_ARGUMENT";
    case FERRY_UNSUPPORTED: return "FERRY_UNSUPPORTED";
    case FERRY_OUT_OF_MEMORY: return "FERRY_OUT_OF_MEMORY";
    case FERRY_NOT_FOUND: return "FERRY_NOT_FOUND";
    case FERRY_INTERNAL: return "FERRY_INTERNAL";
  }
  return "an unknown status";
}

// "node 'c' (com.example::Correlation) in plugin /p/libx.so: compute failed (FERRY_INVALID_ARGUMENT): why".
[[noreturn]] void ThrowStatus(const FerryOpContext& ctx, const char* callback, FerryStatus status) {
  std::string msg = ctx.node->Describe() + " in plugin " + ctx.op->plugin_path + ": " + callback + " failed (" +
                    StatusName(status) + "): " + (ctx.error.empty() ? "(the plugin gave no message)" : ctx.error);
  switch (status) {
    case FERRY_INVALID_ARGUMENT: throw InvalidArgumentError(msg);
    case FERRY_UNSUPPORTED: throw UnsupportedError(msg);
    case FERRY_OUT_OF_MEMORY: throw ResourceExhaustedError(msg);
    default: throw InternalError(msg);
  }
}

// ---- FerryHostApi ------------------------------------------------------------------------------------------

void SetError(FerryOpContext* ctx, const char* message) {
  if (ctx) ctx->error = message ? message : "";
}

const char* NodeName(const FerryOpContext* ctx) { return ctx ? ctx->node->name().c_str() : ""; }

template <typename Fn>
FerryStatus GetAttr(const FerryOpContext* ctx, const char* name, ir::AttrType type, Fn&& read) {
  if (!ctx || !name) return FERRY_INVALID_ARGUMENT;
  const ir::Attribute* a = ctx->node->attr(name);
  if (!a) return FERRY_NOT_FOUND;
  if (a->type != type) {
    const_cast<FerryOpContext*>(ctx)->error = "attribute '" + std::string(name) + "' has another type";
    return FERRY_INVALID_ARGUMENT;
  }
  read(*a);
  return FERRY_OK;
}

FerryStatus GetAttrInt(const FerryOpContext* ctx, const char* name, int64_t* value) {
  if (!value) return FERRY_INVALID_ARGUMENT;
  return GetAttr(ctx, name, ir::AttrType::kInt, [&](const ir::Attribute& a) { *value = a.i; });
}

FerryStatus GetAttrFloat(const FerryOpContext* ctx, const char* name, float* value) {
  if (!value) return FERRY_INVALID_ARGUMENT;
  return GetAttr(ctx, name, ir::AttrType::kFloat, [&](const ir::Attribute& a) { *value = a.f; });
}

FerryStatus GetAttrString(const FerryOpContext* ctx, const char* name, const char** value, size_t* length) {
  if (!value || !length) return FERRY_INVALID_ARGUMENT;
  return GetAttr(ctx, name, ir::AttrType::kString, [&](const ir::Attribute& a) {
    *value = a.s.c_str();
    *length = a.s.size();
  });
}

FerryStatus GetAttrInts(const FerryOpContext* ctx, const char* name, const int64_t** values, size_t* count) {
  if (!values || !count) return FERRY_INVALID_ARGUMENT;
  return GetAttr(ctx, name, ir::AttrType::kInts, [&](const ir::Attribute& a) {
    *values = a.ints.data();
    *count = a.ints.size();
  });
}

FerryStatus GetAttrFloats(const FerryOpContext* ctx, const char* name, const float** values, size_t* count) {
  if (!values || !count) return FERRY_INVALID_ARGUMENT;
  return GetAttr(ctx, name, ir::AttrType::kFloats, [&](const ir::Attribute& a) {
    *values = a.floats.data();
    *count = a.floats.size();
  });
}

FerryStatus SetOutputShape(FerryOpContext* ctx, size_t index, int32_t rank, const int64_t* dims) {
  if (!ctx || ctx->phase != FerryOpContext::Phase::kInferShapes) return FERRY_INVALID_ARGUMENT;
  if (index >= ctx->infer->num_outputs()) {
    ctx->error = "set_output_shape: output " + std::to_string(index) + " does not exist (the node has " +
                 std::to_string(ctx->infer->num_outputs()) + ")";
    return FERRY_INVALID_ARGUMENT;
  }
  if (rank < 0) return FERRY_OK;  // unknown rank: nothing to record
  if (rank > 0 && !dims) return FERRY_INVALID_ARGUMENT;
  std::vector<ir::Dim> shape;
  for (int32_t i = 0; i < rank; ++i) shape.push_back(dims[i] >= 0 ? ir::Dim::Static(dims[i]) : ir::Dim{});
  ctx->infer->SetOutputShape(index, std::move(shape));
  return FERRY_OK;
}

FerryStatus AllocateOutput(FerryOpContext* ctx, size_t index, int32_t dtype, int32_t rank, const int64_t* dims,
                           void** data) {
  if (!ctx || ctx->phase != FerryOpContext::Phase::kCompute || !data) return FERRY_INVALID_ARGUMENT;
  KernelContext& k = *ctx->kernel;
  if (index >= static_cast<size_t>(k.output_count())) {
    ctx->error = "allocate_output: output " + std::to_string(index) + " does not exist (the node has " +
                 std::to_string(k.output_count()) + ")";
    return FERRY_INVALID_ARGUMENT;
  }
  if (ctx->allocated[index]) {
    ctx->error = "allocate_output: output " + std::to_string(index) + " was allocated twice";
    return FERRY_INVALID_ARGUMENT;
  }
  if (!IsKnownDataType(dtype) || static_cast<DataType>(dtype) == DataType::kString) {
    ctx->error = "allocate_output: element type " + std::to_string(dtype) + " is not a FerryDataType";
    return FERRY_INVALID_ARGUMENT;
  }
  if (rank < 0 || (rank > 0 && !dims)) {
    ctx->error = "allocate_output: rank " + std::to_string(rank) + (rank > 0 ? " without dims" : "");
    return FERRY_INVALID_ARGUMENT;
  }
  Shape shape(dims, dims + rank);
  for (int64_t d : shape) {
    if (d < 0) {
      ctx->error = "allocate_output: negative dimension in " + ShapeToString(shape);
      return FERRY_INVALID_ARGUMENT;
    }
  }
  try {
    Tensor& t = k.Output(static_cast<int>(index), static_cast<DataType>(dtype), shape);
    *data = t.size() > 0 ? t.raw_data() : nullptr;
  } catch (const std::bad_alloc&) {
    ctx->error = "allocate_output: out of memory for shape " + ShapeToString(shape);
    return FERRY_OUT_OF_MEMORY;
  } catch (const std::exception& e) {
    ctx->error = std::string("allocate_output: ") + e.what();
    return FERRY_INVALID_ARGUMENT;
  }
  ctx->allocated[index] = true;
  return FERRY_OK;
}

int32_t ThreadCount(const FerryOpContext* ctx) {
  return ctx && ctx->kernel ? static_cast<int32_t>(std::max(1, ctx->kernel->threads())) : 1;
}

FerryStatus RegisterOpOutsideInit(FerryRegistrar*, const FerryOpDef*) { return FERRY_INVALID_ARGUMENT; }

// ---- the kernel --------------------------------------------------------------------------------------------

class PluginKernel : public OpKernel {
 public:
  PluginKernel(const PluginOp& op, const ir::Node& node) : op_(op) {
    if (!op.create) return;
    FerryOpContext ctx;
    ctx.op = &op;
    ctx.node = &node;
    ctx.phase = FerryOpContext::Phase::kCreate;
    const FerryStatus s = op.create(&ctx, &state_);
    if (s != FERRY_OK) ThrowStatus(ctx, "create", s);
  }
  ~PluginKernel() override {
    if (op_.destroy) op_.destroy(state_);
  }
  PluginKernel(const PluginKernel&) = delete;
  PluginKernel& operator=(const PluginKernel&) = delete;

  void Compute(KernelContext& k) const override {
    std::vector<FerryTensor> inputs(static_cast<size_t>(k.input_count()));
    for (int i = 0; i < k.input_count(); ++i) {
      FerryTensor& t = inputs[static_cast<size_t>(i)];
      const Tensor* x = k.input(i);
      if (!x) continue;  // an omitted optional input: dtype 0, rank 0, data NULL
      t.dtype = static_cast<int32_t>(x->dtype());
      t.rank = static_cast<int32_t>(x->rank());
      t.dims = x->shape().data();
      t.data = x->size() > 0 ? x->raw_data() : nullptr;
    }
    FerryOpContext ctx;
    ctx.op = &op_;
    ctx.node = &k.node();
    ctx.phase = FerryOpContext::Phase::kCompute;
    ctx.kernel = &k;
    ctx.allocated.assign(static_cast<size_t>(k.output_count()), false);
    const FerryStatus s = op_.compute(state_, &ctx, inputs.data(), inputs.size());
    if (s != FERRY_OK) ThrowStatus(ctx, "compute", s);
    for (int i = 0; i < k.output_count(); ++i) {
      if (k.output_requested(i) && !ctx.allocated[static_cast<size_t>(i)]) {
        throw InternalError(k.Describe() + " in plugin " + op_.plugin_path + ": compute returned FERRY_OK without "
                            "allocating output " + std::to_string(i) + " ('" + k.node().output(i)->name() + "')");
      }
    }
  }

 private:
  const PluginOp& op_;
  void* state_ = nullptr;
};

// ---- ops by (domain, op) for shape inference -------------------------------------------------------------------

struct OpIndex {
  std::shared_mutex mu;
  std::map<std::pair<std::string, std::string>, const PluginOp*> ops;
};

OpIndex& Index() {
  static auto* index = new OpIndex();
  return *index;
}

std::string TypeString(DataType t) { return "tensor(" + std::string(DataTypeName(t)) + ")"; }

}  // namespace

const FerryHostApi* HostApi() {
  static const FerryHostApi api = {
      .abi_version = FERRY_PLUGIN_ABI_VERSION,
      .struct_size = sizeof(FerryHostApi),
      .register_op = RegisterOpOutsideInit,  // the loader hands plugins a copy with the real one
      .set_error = SetError,
      .node_name = NodeName,
      .get_attr_int = GetAttrInt,
      .get_attr_float = GetAttrFloat,
      .get_attr_string = GetAttrString,
      .get_attr_ints = GetAttrInts,
      .get_attr_floats = GetAttrFloats,
      .set_output_shape = SetOutputShape,
      .allocate_output = AllocateOutput,
      .thread_count = ThreadCount,
  };
  return &api;
}

std::string PluginOp::Describe() const {
  return (domain.empty() ? std::string() : domain + "::") + op_type + " (plugin " + plugin_path + ")";
}

schemas::OpSchema PluginOp::MakeSchema() const {
  schemas::OpSchema s;
  s.domain = domain;
  s.name = op_type;
  s.since_version = since;
  for (const Param& p : inputs) {
    s.inputs.push_back({p.name, p.type_var, p.optional ? schemas::ParamOption::kOptional : schemas::ParamOption::kSingle});
    if (!p.optional) ++s.min_inputs;
  }
  s.max_inputs = static_cast<int>(inputs.size());
  for (const Param& p : outputs) s.outputs.push_back({p.name, p.type_var, schemas::ParamOption::kSingle});
  s.min_outputs = 1;
  s.max_outputs = static_cast<int>(outputs.size());
  s.attributes = attributes;
  s.closed_attributes = true;
  for (const TypeConstraintDef& c : types) {
    // A variable some input binds accepts every type here (the kernel's list decides, as a kernel-layer
    // verdict); one that only outputs use keeps the plugin's list, so that a single type types the output.
    const bool bound_by_input =
        std::any_of(inputs.begin(), inputs.end(), [&](const Param& p) { return p.type_var == c.var; });
    schemas::TypeConstraint tc{c.var, {}};
    for (DataType t : bound_by_input ? dtypes::AllNonString() : c.types) tc.allowed.push_back(TypeString(t));
    s.type_constraints.push_back(std::move(tc));
  }
  s.infer = InferPluginShapes;
  return s;
}

KernelDef PluginOp::MakeKernelDef() const {
  KernelDef def;
  def.op = op_type;
  def.domain = domain;
  def.since = since;
  def.until = until;
  def.types = types;
  def.create = [op = this](const ir::Node& node, const KernelOptions&) -> std::unique_ptr<OpKernel> {
    return std::make_unique<PluginKernel>(*op, node);
  };
  def.name = backend + "." + (domain.empty() ? "" : domain + ".") + op_type + "." + std::to_string(since);
  def.constraints = "custom op from plugin " + plugin_path;
  return def;
}

void PluginBackend::AddOp(std::unique_ptr<PluginOp> op) {
  registry_.Add(op->MakeKernelDef());
  ops_.push_back(std::move(op));
}

void RegisterOpForInference(const PluginOp& op) {
  OpIndex& index = Index();
  std::unique_lock lock(index.mu);
  index.ops[{op.domain, op.op_type}] = &op;
}

void InferPluginShapes(schemas::InferenceContext& ctx) {
  const ir::Node& n = ctx.node();
  const PluginOp* op = nullptr;
  {
    OpIndex& index = Index();
    std::shared_lock lock(index.mu);
    auto it = index.ops.find({std::string(schemas::CanonicalDomain(n.domain())), n.op_type()});
    if (it != index.ops.end()) op = it->second;
  }
  if (!op || !op->infer_shapes) return;
  std::vector<std::vector<int64_t>> dims(ctx.num_inputs());
  std::vector<FerryShape> shapes(ctx.num_inputs());
  for (size_t i = 0; i < ctx.num_inputs(); ++i) {
    FerryShape& s = shapes[i];
    s.dtype = static_cast<int32_t>(ctx.input_elem_type(i));
    s.rank = -1;
    if (const auto* shape = ctx.input_shape(i)) {
      for (const ir::Dim& d : *shape) dims[i].push_back(d.is_static() ? d.value : -1);
      s.rank = static_cast<int32_t>(dims[i].size());
      s.dims = dims[i].data();
    }
  }
  FerryOpContext c;
  c.op = op;
  c.node = &n;
  c.phase = FerryOpContext::Phase::kInferShapes;
  c.infer = &ctx;
  const FerryStatus s = op->infer_shapes(&c, shapes.data(), shapes.size());
  if (s != FERRY_OK) {
    ctx.Fail("plugin " + op->plugin_path + ": infer_shapes failed (" + StatusName(s) + "): " +
             (c.error.empty() ? "(the plugin gave no message)" : c.error));
  }
}

std::string ReadOpDef(const FerryOpDef& def, const std::string& plugin_path, const std::string& backend,
                      PluginOp& out) {
  if (def.struct_size < sizeof(FerryOpDef)) {
    return "FerryOpDef.struct_size is " + std::to_string(def.struct_size) + ", expected at least " +
           std::to_string(sizeof(FerryOpDef)) + " (set it to sizeof(FerryOpDef))";
  }
  if (!def.op_type || !*def.op_type) return "FerryOpDef.op_type is empty";
  out.plugin_path = plugin_path;
  out.backend = backend;
  out.domain = std::string(schemas::CanonicalDomain(def.domain ? def.domain : ""));
  out.op_type = def.op_type;
  const std::string what = "op " + (out.domain.empty() ? std::string() : out.domain + "::") + out.op_type + ": ";
  if (def.since_version < 1) return what + "since_version must be >= 1, got " + std::to_string(def.since_version);
  if (def.until_version != 0 && def.until_version < def.since_version) {
    return what + "until_version " + std::to_string(def.until_version) + " is below since_version " +
           std::to_string(def.since_version);
  }
  out.since = def.since_version;
  out.until = def.until_version == 0 ? kOpsetOpen : def.until_version;
  if (!def.compute) return what + "compute is NULL";
  if (def.num_outputs == 0 || !def.outputs) return what + "declares no outputs";
  if (def.num_inputs > 0 && !def.inputs) return what + "num_inputs is " + std::to_string(def.num_inputs) + " but inputs is NULL";
  if (def.num_type_constraints > 0 && !def.type_constraints) return what + "type_constraints is NULL";
  if (def.num_attributes > 0 && !def.attributes) return what + "attributes is NULL";
  for (size_t i = 0; i < def.num_type_constraints; ++i) {
    const FerryTypeConstraint& c = def.type_constraints[i];
    if (!c.type_var || !*c.type_var) return what + "type constraint " + std::to_string(i) + " has no type_var";
    if (c.num_types == 0 || !c.types) return what + "type variable '" + c.type_var + "' allows no types";
    TypeConstraintDef tc{c.type_var, {}};
    for (size_t k = 0; k < c.num_types; ++k) {
      if (!IsKnownDataType(c.types[k]) || static_cast<DataType>(c.types[k]) == DataType::kString) {
        return what + "type variable '" + tc.var + "' lists element type " + std::to_string(c.types[k]) +
               ", which is not a FerryDataType";
      }
      tc.types.push_back(static_cast<DataType>(c.types[k]));
    }
    out.types.push_back(std::move(tc));
  }
  auto read_params = [&](const FerryParam* params, size_t n, bool is_input, std::vector<Param>& to) -> std::string {
    const char* kind = is_input ? "input" : "output";
    for (size_t i = 0; i < n; ++i) {
      const FerryParam& p = params[i];
      const std::string name = p.name && *p.name ? p.name : std::string(kind) + std::to_string(i);
      if (!p.type_var || !*p.type_var) return what + kind + " '" + name + "' has no type_var";
      const bool declared = std::any_of(out.types.begin(), out.types.end(),
                                        [&](const TypeConstraintDef& c) { return c.var == p.type_var; });
      if (!declared) {
        return what + kind + " '" + name + "' uses type variable '" + p.type_var + "', which type_constraints lacks";
      }
      const bool optional = is_input && p.optional != 0;
      if (is_input && !optional && !to.empty() && to.back().optional) {
        return what + "input '" + name + "' is required but follows an optional input (optional inputs must be trailing)";
      }
      to.push_back({name, p.type_var, optional});
    }
    return "";
  };
  if (std::string e = read_params(def.inputs, def.num_inputs, true, out.inputs); !e.empty()) return e;
  if (std::string e = read_params(def.outputs, def.num_outputs, false, out.outputs); !e.empty()) return e;
  for (size_t i = 0; i < def.num_attributes; ++i) {
    const FerryAttrDef& a = def.attributes[i];
    if (!a.name || !*a.name) return what + "attribute " + std::to_string(i) + " has no name";
    ir::AttrType type;
    switch (a.type) {
      case FERRY_ATTR_FLOAT: type = ir::AttrType::kFloat; break;
      case FERRY_ATTR_INT: type = ir::AttrType::kInt; break;
      case FERRY_ATTR_STRING: type = ir::AttrType::kString; break;
      case FERRY_ATTR_FLOATS: type = ir::AttrType::kFloats; break;
      case FERRY_ATTR_INTS: type = ir::AttrType::kInts; break;
      default: return what + "attribute '" + a.name + "' has type " + std::to_string(a.type) + ", not a FerryAttrType";
    }
    out.attributes.push_back({a.name, type, a.required != 0, std::nullopt});
  }
  out.create = def.create;
  out.compute = def.compute;
  out.destroy = def.destroy;
  out.infer_shapes = def.infer_shapes;
  return "";
}

}  // namespace ferry::plugin
