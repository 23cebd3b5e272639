// KernelDef: a kernel's contract as plain data. The registry, placement, `ferry ops` and `ferry check` all
// read these records; nothing else decides whether a kernel supports a node.
#pragma once

#include <climits>
#include <functional>
#include <memory>
#include <string>
#include <type_traits>
#include <vector>

#include "core/isa.h"
#include "ferry/dtype.h"
#include "ir/graph.h"
#include "kernels/kernel.h"

namespace ferry {

// Allowed element types for one type variable of the op's schema ("T", "T1", "Tind", ...).
struct TypeConstraintDef {
  std::string var;
  std::vector<DataType> types;
};

// Returns "" when the kernel supports the node, else a human-readable reason naming the attribute or shape.
using KernelPredicate = std::function<std::string(const ir::Node&)>;
// Creates the kernel for a node (the first phase of the lifecycle: kernel.h).
using KernelFactory = std::function<std::unique_ptr<OpKernel>(const ir::Node&, const KernelOptions&)>;

inline constexpr int kOpsetOpen = INT_MAX;

struct KernelDef {
  std::string op;
  std::string domain;      // "" = ai.onnx
  int since = 1;           // first opset version of the op's schema this kernel implements
  int until = kOpsetOpen;  // last opset version (inclusive) this kernel implements
  std::vector<TypeConstraintDef> types;
  KernelFactory create;
  KernelPredicate predicate;         // optional: attribute constraints
  // Optional: constraints on static input shapes (read from node.input(i)->type().shape, which shape inference
  // and `--shape` fill in). Only judged when every dim it needs is static; return "" when a dim is unknown.
  KernelPredicate shape_predicate;
  std::vector<int> host_inputs;      // inputs that must live in host memory (shape tensors, axes)
  IsaSet isa;                        // CPU extensions the kernel executes (hardware layer when missing)
  int min_compute_capability = 0;    // GPU kernels: e.g. 80 for sm_80 (hardware layer when below)
  std::string name;                  // e.g. "ref.Relu"; filled by the registry when empty
  std::string backend;               // filled by the registry
  // Optional one-line description of what `predicate` / `shape_predicate` reject, for `ferry ops` and
  // docs/ops.md ("mode=cubic with tf_crop_and_resize not implemented"); "(predicate)" is shown when empty.
  std::string constraints;
  // The library the kernel's arithmetic runs in, where it is not Ferry's own code: "oneDNN" (its primitives or
  // its GEMM, for all shapes or some). `ferry ops` and `ferry check` then say which instruction set that library
  // will use on the target (oneDNN picks its own, capped by --isa / FERRY_ISA: kernels/cpu/dnnl_isa.h).
  std::string library;
};

// The factory of a kernel class constructed from (node, options) or from the node alone.
template <typename K>
std::unique_ptr<OpKernel> MakeKernel(const ir::Node& node, const KernelOptions& options) {
  if constexpr (std::is_constructible_v<K, const ir::Node&, const KernelOptions&>) {
    return std::make_unique<K>(node, options);
  } else {
    return std::make_unique<K>(node);
  }
}

// Common dtype sets.
namespace dtypes {
std::vector<DataType> Floats();        // float32, float64, float16, bfloat16
std::vector<DataType> Ints();          // int8..int64, uint8..uint64
std::vector<DataType> SignedInts();    // int8..int64
std::vector<DataType> Numeric();       // Floats() + Ints()
std::vector<DataType> All();           // every tensor type incl. string, bool, float8, int4
std::vector<DataType> AllNonString();  // All() without string
std::vector<DataType> Concat(std::vector<DataType> a, const std::vector<DataType>& b);
}  // namespace dtypes

}  // namespace ferry
