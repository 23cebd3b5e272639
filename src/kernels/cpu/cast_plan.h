// The cpu Cast and CastLike kernels' shared parts: one Prepare and one Compute for "cast input 0 to type `to`"
// (Cast reads `to` from its attribute, CastLike from input 1's type), and the conversion each picks.
//  - pairs of the standard numeric types and bool: cast.cc (SIMD where it pays, else a scalar loop);
//  - pairs with a float8, float4e2m1, int4/uint4/int2/uint2 or string side: cast_narrow.cc, through ref's
//    conversion (kernels/ref/cast_convert.h).
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "kernels/kernel.h"
#include "kernels/kernel_def.h"
#include "kernels/registry.h"
#include "kernels/ref/cast_convert.h"

namespace ferry::cpu {

enum class CastIsa { kScalar, kAvx2, kAvx512 };

// A conversion between the standard types: converts n elements.
using CastFn = void (*)(const void* in, void* out, int64_t n);

// A conversion with a narrow or string side (cast_narrow.cc).
struct NarrowCast {
  DataType src = DataType::kFloat;
  DataType dst = DataType::kFloat;
  ref::CastOptions opt;
  // For a source of at most 256 codes (float8, int8, uint8, the packed types) and a non-string target: the
  // converted value of every source code, ElementBytes(dst) bytes each (one code a byte for a packed target).
  // Empty: ref's routine converts each element.
  std::vector<uint8_t> table;
};

NarrowCast PlanNarrowCast(DataType src, DataType dst, const ref::CastOptions& opt);
// Converts the n elements of `in` into `out` on up to `threads` threads.
void RunNarrowCast(const NarrowCast& plan, const void* in, void* out, int64_t n, int threads);

// What one input signature runs: `fn` for a standard pair, else `narrow`.
struct CastPlan {
  CastFn fn = nullptr;
  std::optional<NarrowCast> narrow;
};

// Declares output 0 (type `to`, input 0's shape; input 0's buffer when it already has type `to`) and keeps the
// plan for the pair. Throws UnsupportedError naming the node for a source type that cannot be cast.
void PrepareCastTo(PrepareContext& ctx, DataType to, CastIsa isa, const ref::CastOptions& opt);
void ComputeCastTo(KernelContext& ctx, DataType to);

// The types Cast and CastLike accept on either side (every type but the complex ones).
std::vector<DataType> CastableTypes();

// Registers the AVX-512F, AVX2 + F16C and scalar variants of Cast or CastLike: `base` with T1 and T2 over
// CastableTypes(), each variant's ISA, make(node, isa) as the factory and the name "cpu.any_<tag>__<isa>.<since>".
using CastKernelMaker = std::unique_ptr<OpKernel> (*)(const ir::Node& node, CastIsa isa);
void AddCastKernels(KernelRegistry& r, const KernelDef& base, const std::string& tag, CastKernelMaker make);

}  // namespace ferry::cpu
