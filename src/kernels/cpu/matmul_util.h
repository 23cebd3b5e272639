// Shared by the oneDNN MatMul and Gemm kernels: a constant right-hand matrix reordered once, at kernel creation,
// into the layout oneDNN's matmul prefers (or, where it takes a plain matrix, into rows padded against cache
// conflicts), and the matmul primitives the kernels' Prepare builds per input signature, which use it when they can.
#pragma once

#include <memory>
#include <mutex>
#include <string>

#include "kernels/cpu/dnnl_scratchpad.h"
#include "kernels/cpu/dnnl_util.h"

namespace ferry::cpu {

// A constant B: the initializer itself (K×N as described by `plain`, which may be strided for a transposed
// matrix) and, when oneDNN's matmul prefers another layout for the representative problem it was created for,
// a copy of it reordered into that layout. Where that layout is unblocked (oneDNN's gemm), the copy is row-major
// with each row padded to an odd number of 64-byte lines (dense if N < 128; none if B is so already), except that
// a transposed B stays as it is for a small representative M (<= 16). Kernels reading one initializer in the same
// way share the copy.
class MatMulWeights {
 public:
  MatMulWeights() = default;
  // `a_hint` / `y_hint`: the plain descs of a representative A and Y (static shapes, else a guessed M);
  // `bias` may be a zero desc (no bias); `attr` the attributes the kernel's primitives use.
  MatMulWeights(std::shared_ptr<const Tensor> b, const dnnl::memory::desc& plain, const dnnl::memory::desc& a_hint,
                const dnnl::memory::desc& y_hint, const dnnl::memory::desc& bias, const dnnl::primitive_attr& attr,
                const std::string& what);

  // True when a reordered copy exists and `runtime_b` is the initializer itself (an initializer that is also a
  // graph input may be overridden by a feed; then the plain path runs), or the initializer was released.
  bool Usable(const Tensor& runtime_b) const {
    return packed_ && (released_ || (source_ && runtime_b.raw_data() == source_->raw_data()));
  }
  // True when a reordered copy exists (Usable then tells, for a given B, whether it may be read).
  bool has_packed() const { return static_cast<bool>(packed_); }
  const dnnl::memory::desc& desc() const { return packed_desc_; }
  int64_t bytes() const;
  const dnnl::memory& memory() const { return packed_; }

  // The session frees a constant B once every kernel reading it holds its own copy (OpKernel::
  // ReleaseConstantInput). Drops this object's reference and returns true when a packed copy exists; from then on
  // the kernel must read B only through memory() or, for a shape whose primitive wants the plain layout, Plain().
  bool ReleaseSource();
  bool released() const { return released_; }
  // B in its plain layout, unpacked from the packed copy on first use (after ReleaseSource). Thread-safe.
  const Tensor& Plain() const;
  // B row-major as it can be read in place (a skinny product, skinny_gemm.h): the packed copy when it is unblocked
  // and row-major (its rows padded: *ldb is their stride), else the initializer while held, when row-major;
  // nullptr when neither (a blocked copy and a released initializer).
  const float* RowMajor(int64_t* ldb) const;

 private:
  struct Unpacked {
    std::once_flag once;
    Tensor plain;
  };
  std::shared_ptr<const Tensor> source_;
  dnnl::memory::desc plain_desc_, packed_desc_;
  dnnl::memory packed_;
  // packed_'s buffer, shared with the other kernels reading the initializer the same way (kernels/cpu/
  // shared_packs.h); bytes() counts it for the one that made it.
  std::shared_ptr<const dnnl::memory> shared_;
  bool made_here_ = false;
  DataType dtype_ = DataType::kUndefined;
  Shape shape_;
  bool released_ = false;
  std::shared_ptr<Unpacked> unpacked_ = std::make_shared<Unpacked>();
};

// A matmul primitive (user scratchpad: run it with AddScratchpad(args, scratch)) and whether it reads B from the
// packed weights (else from the plain tensor).
struct MatMulPrimitive {
  dnnl::matmul prim;
  dnnl::memory::desc scratch;
  bool packed = false;
};

// Creates the matmul for the given descs (`bias` may be a zero desc). With `weights` given (Usable), the packed
// layout is tried first and kept unless oneDNN has only its reference implementation for it.
MatMulPrimitive MakeMatMul(const dnnl::memory::desc& a, const dnnl::memory::desc& b_plain,
                           const dnnl::memory::desc& bias, const dnnl::memory::desc& y,
                           const dnnl::primitive_attr& attr, const MatMulWeights* weights);

}  // namespace ferry::cpu
