#include "kernels/cuda_defs/cuda_kernel_defs.h"

#include <algorithm>

namespace ferry::cuda {
namespace {

using DT = DataType;

// float32, float16, bfloat16: what the GPU kernels compute in (float64 stays on the CPU backends).
std::vector<DataType> Gpu() { return {DT::kFloat, DT::kFloat16, DT::kBFloat16}; }
// Every fixed-size element type of 1, 2, 4 or 8 bytes: what data movement (Transpose, Gather, ...) copies.
std::vector<DataType> Movable() {
  return {DT::kFloat, DT::kFloat16, DT::kBFloat16, DT::kDouble, DT::kInt8,   DT::kUint8, DT::kInt16,
          DT::kUint16, DT::kInt32, DT::kUint32,  DT::kInt64,  DT::kUint64, DT::kBool};
}
std::vector<DataType> CastSources() {
  return {DT::kFloat, DT::kFloat16, DT::kBFloat16, DT::kInt32, DT::kInt64, DT::kBool, DT::kInt8, DT::kUint8};
}
std::vector<DataType> GpuAndIndices() { return {DT::kFloat, DT::kFloat16, DT::kBFloat16, DT::kInt32, DT::kInt64}; }

// The rank of input `i` when shape inference knows it, else -1.
int64_t InputRank(const ir::Node& n, size_t i) {
  const ir::Value* v = n.input(i);
  if (!v || !v->type().is_tensor() || !v->type().shape) return -1;
  return static_cast<int64_t>(v->type().shape->size());
}

// True when output `i` is present (not omitted) in the node.
bool OutputUsed(const ir::Node& n, size_t i) { return n.output(i) != nullptr && !n.output(i)->name().empty(); }

std::string NoExtraOutputs(const ir::Node& n, size_t keep, const std::string& what) {
  for (size_t i = keep; i < n.num_outputs(); ++i) {
    if (OutputUsed(n, i)) return n.op_type() + ": output " + std::to_string(i) + " (" + what + ") not implemented";
  }
  return "";
}

bool AllEqual(const std::vector<int64_t>& v, int64_t x) {
  return std::all_of(v.begin(), v.end(), [x](int64_t e) { return e == x; });
}

// cuDNN convolution and pooling descriptors: 2-D only, symmetric explicit pads (no SAME_* auto padding).
std::string SymmetricPads2d(const ir::Node& n) {
  const std::string pad = n.GetString("auto_pad", "NOTSET");
  if (pad != "NOTSET" && pad != "VALID") return n.op_type() + ": auto_pad=" + pad + " not implemented (cuDNN takes symmetric pads)";
  const auto pads = n.GetInts("pads");
  if (!pads.empty()) {
    if (pads.size() != 4) return n.op_type() + ": only 2-D (4 pads), got " + std::to_string(pads.size()) + " pads";
    if (pads[0] != pads[2] || pads[1] != pads[3]) return n.op_type() + ": asymmetric pads not implemented (cuDNN)";
  }
  const auto kernel = n.GetInts("kernel_shape");
  if (!kernel.empty() && kernel.size() != 2) return n.op_type() + ": only 2-D kernels, got " + std::to_string(kernel.size()) + "-D";
  return "";
}

std::string Rank4Input(const ir::Node& n) {
  const int64_t r = InputRank(n, 0);
  if (r >= 0 && r != 4) return n.op_type() + ": only 4-D (NCHW) inputs, got rank " + std::to_string(r);
  return "";
}

std::string ConvPredicate(const ir::Node& n) {
  if (auto why = SymmetricPads2d(n); !why.empty()) return why;
  if (n.GetInts("dilations").size() > 2) return "Conv: only 2-D dilations";
  return "";
}

std::string MaxPoolPredicate(const ir::Node& n) {
  if (auto why = SymmetricPads2d(n); !why.empty()) return why;
  if (auto why = NoExtraOutputs(n, 1, "Indices"); !why.empty()) return why;
  if (n.GetInt("ceil_mode", 0) != 0) return "MaxPool: ceil_mode=1 not implemented";
  if (n.GetInt("storage_order", 0) != 0) return "MaxPool: storage_order=1 not implemented";
  if (!AllEqual(n.GetInts("dilations"), 1)) return "MaxPool: dilations other than 1 not implemented";
  return "";
}

std::string AveragePoolPredicate(const ir::Node& n) {
  if (auto why = SymmetricPads2d(n); !why.empty()) return why;
  if (n.GetInt("ceil_mode", 0) != 0) return "AveragePool: ceil_mode=1 not implemented";
  if (!AllEqual(n.GetInts("dilations"), 1)) return "AveragePool: dilations other than 1 not implemented";
  return "";
}

std::string GemmPredicate(const ir::Node& n) {
  // C must broadcast to (M, N): checked when the kernel is prepared, where the shapes are known.
  (void)n;
  return "";
}

std::string BatchNormPredicate(const ir::Node& n) {
  if (n.GetInt("training_mode", 0) != 0) return "BatchNormalization: training_mode=1 not implemented";
  return NoExtraOutputs(n, 1, "running mean/var");
}

std::string LayerNormPredicate(const ir::Node& n) { return NoExtraOutputs(n, 1, "Mean / InvStdDev"); }

std::string PowPredicate(const ir::Node& n) {
  const ir::Value* a = n.input(0);
  const ir::Value* b = n.input(1);
  if (a && b && a->type().is_tensor() && b->type().is_tensor() && a->type().elem_type != DT::kUndefined &&
      b->type().elem_type != DT::kUndefined && a->type().elem_type != b->type().elem_type) {
    return "Pow: an exponent of another type than the base (" + std::string(DataTypeName(b->type().elem_type)) +
           " vs " + std::string(DataTypeName(a->type().elem_type)) + ") not implemented";
  }
  return "";
}

KernelDef Def(std::string op, int since, std::vector<TypeConstraintDef> types, std::string constraints = "",
              KernelPredicate predicate = nullptr, std::vector<int> host_inputs = {}) {
  KernelDef d;
  d.op = std::move(op);
  d.since = since;
  d.types = std::move(types);
  d.predicate = std::move(predicate);
  d.host_inputs = std::move(host_inputs);
  d.min_compute_capability = kMinComputeCapability;
  d.name = "cuda." + d.op + "." + std::to_string(since);
  d.constraints = std::move(constraints);
  return d;
}

}  // namespace

std::vector<KernelDef> KernelDefs() {
  std::vector<KernelDef> d;
  // --- cuDNN: convolution, pooling ---
  d.push_back(Def("Conv", 1, {{"T", Gpu()}}, "2-D (NCHW) only; symmetric pads, no auto_pad=SAME_*", ConvPredicate));
  d.back().shape_predicate = Rank4Input;
  d.push_back(Def("MaxPool", 1, {{"T", Gpu()}},
                  "2-D (NCHW) only; symmetric pads; no Indices output, ceil_mode, storage_order or dilations",
                  MaxPoolPredicate));
  d.back().shape_predicate = Rank4Input;
  d.push_back(Def("AveragePool", 1, {{"T", Gpu()}}, "2-D (NCHW) only; symmetric pads; no ceil_mode or dilations",
                  AveragePoolPredicate));
  d.back().shape_predicate = Rank4Input;
  // --- cuBLAS / cuBLASLt ---
  d.push_back(Def("MatMul", 1, {{"T", Gpu()}}, "float32 (TF32 with FERRY_CUDA_TF32=1), float16, bfloat16"));
  d.push_back(Def("Gemm", 7, {{"T", Gpu()}}, "C broadcast to (M, N)", GemmPredicate));
  // --- Ferry's own kernels: normalization, softmax, reductions ---
  d.push_back(Def("BatchNormalization", 9, {{"T", Gpu()}, {"T1", Gpu()}, {"T2", Gpu()}},
                  "inference only (training_mode=0, one output)", BatchNormPredicate));
  d.push_back(Def("LayerNormalization", 17, {{"T", Gpu()}, {"U", {DT::kFloat}}}, "output Y only", LayerNormPredicate));
  d.push_back(Def("Softmax", 1, {{"T", Gpu()}}));
  d.push_back(Def("ReduceMean", 13, {{"T", Gpu()}}, "", nullptr, {1}));
  d.push_back(Def("ReduceSum", 13, {{"T", Gpu()}}, "", nullptr, {1}));
  d.push_back(Def("ReduceMax", 13, {{"T", Gpu()}}, "", nullptr, {1}));
  d.push_back(Def("GlobalAveragePool", 1, {{"T", Gpu()}}));
  d.push_back(Def("GlobalMaxPool", 1, {{"T", Gpu()}}));
  // --- elementwise ---
  for (const char* op : {"Add", "Sub", "Mul", "Div"}) d.push_back(Def(op, 7, {{"T", GpuAndIndices()}}));
  d.push_back(Def("Pow", 7, {{"T", Gpu()}, {"T1", Gpu()}}, "exponent of the base's type", PowPredicate));
  for (const char* op : {"Relu", "Sigmoid", "Tanh", "Exp", "Log", "Sqrt", "Neg", "Abs", "Reciprocal", "LeakyRelu",
                         "HardSigmoid"}) {
    d.push_back(Def(op, 6, {{"T", Gpu()}}));
  }
  d.push_back(Def("Erf", 9, {{"T", Gpu()}}));
  d.push_back(Def("HardSwish", 14, {{"T", Gpu()}}));
  d.push_back(Def("Gelu", 20, {{"T", Gpu()}}));
  d.push_back(Def("Clip", 6, {{"T", Gpu()}}, "", nullptr, {1, 2}));
  d.push_back(Def("Where", 9, {{"B", {DT::kBool}}, {"T", GpuAndIndices()}}));
  d.push_back(Def("Cast", 6, {{"T1", CastSources()}, {"T2", {DT::kFloat, DT::kFloat16, DT::kBFloat16, DT::kInt32,
                                                           DT::kInt64, DT::kBool}}},
                  "from float32, float16, bfloat16, int32, int64, bool, int8, uint8 to float32, float16, bfloat16, "
                  "int32, int64, bool"));
  // --- data movement ---
  d.push_back(Def("Transpose", 1, {{"T", Movable()}}, "rank <= 8"));
  d.push_back(Def("Gather", 1, {{"T", Movable()}, {"Tind", {DT::kInt32, DT::kInt64}}}));
  d.push_back(Def("Slice", 10, {{"T", Movable()}, {"Tind", {DT::kInt32, DT::kInt64}}}, "rank <= 8", nullptr,
                  {1, 2, 3, 4}));
  d.push_back(Def("Concat", 4, {{"T", Movable()}}, "rank <= 8"));
  // Views: the output shares the input's device buffer.
  d.push_back(Def("Reshape", 5, {{"T", Movable()}}, "", nullptr, {1}));
  d.push_back(Def("Flatten", 1, {{"T", Movable()}}));
  d.push_back(Def("Squeeze", 1, {{"T", Movable()}}, "", nullptr, {1}));
  d.push_back(Def("Unsqueeze", 1, {{"T", Movable()}}, "", nullptr, {1}));
  d.push_back(Def("Identity", 1, {{"T", Movable()}, {"V", Movable()}}, "tensors only", [](const ir::Node& n) {
    const ir::Value* v = n.input(0);
    const bool other = v && v->type().kind != ir::TypeInfo::Kind::kTensor && v->type().kind != ir::TypeInfo::Kind::kUnknown;
    return other ? std::string("Identity: only tensors (not sequences or optionals)") : "";
  }));
  return d;
}

}  // namespace ferry::cuda
