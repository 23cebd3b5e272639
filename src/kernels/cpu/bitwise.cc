// BitwiseAnd BitwiseOr BitwiseXor (opset 18, numpy broadcasting) and BitwiseNot (opset 18) on the cpu backend for
// every integer type (int8..int64, uint8..uint64), as ref: the C++ operator on the two values (~x for Not).
// Prepare checks the types and resolves the broadcast once per signature (binary_elementwise_map.h); the loops
// are plain C++ the compiler vectorizes, compiled for AVX-512F, AVX2+FMA and the baseline (registered best first).
#include <cstdint>
#include <memory>
#include <string>

#include "core/parallel.h"
#include "kernels/cpu/binary_elementwise_map.h"
#include "kernels/kernel_def.h"
#include "kernels/registry.h"

namespace ferry::cpu {
namespace {

struct AndOp {
  template <class T>
  static T Apply(T a, T b) {
    return static_cast<T>(a & b);
  }
};
struct OrOp {
  template <class T>
  static T Apply(T a, T b) {
    return static_cast<T>(a | b);
  }
};
struct XorOp {
  template <class T>
  static T Apply(T a, T b) {
    return static_cast<T>(a ^ b);
  }
};

template <class T>
class BitwiseKernel final : public OpKernel {
 public:
  BitwiseKernel(DataType dtype, BinaryMapRows<T, T, T> rows) : dtype_(dtype), rows_(rows) {}

  // Both inputs of the kernel's type, shapes that broadcast (InvalidArgumentError naming the node otherwise).
  void Prepare(PrepareContext& ctx) const override {
    const InputSpec& a = ctx.tensor_input(0);
    const InputSpec& b = ctx.tensor_input(1);
    if (a.dtype != dtype_ || b.dtype != dtype_) {
      throw InvalidArgumentError(ctx.Describe() + ": " + ctx.InputString(0) + " and " + ctx.InputString(1) +
                                 ": expected " + std::string(DataTypeName(dtype_)) + " for both");
    }
    BinaryMapPlan p(a.shape, b.shape, ref::BroadcastShapes({a.shape, b.shape}, ctx.Describe()));
    ctx.SetOutput(0, dtype_, p.out_shape);
    ctx.EmplaceState(std::move(p));
  }

  void Compute(KernelContext& ctx) const override {
    const BinaryMapPlan& p = ctx.state<BinaryMapPlan>();
    const Tensor& a = ctx.required_input(0);
    const Tensor& b = ctx.required_input(1);
    Tensor& out = ctx.OutputUninitialized(0);
    RunBinaryMap(ctx.threads(), p, a.data<T>(), b.data<T>(), out.data<T>(), rows_);
  }

 private:
  DataType dtype_;
  BinaryMapRows<T, T, T> rows_;
};

struct NoParams {};
struct NotOp {
  template <class T>
  static T Apply(T x, const NoParams&) {
    return static_cast<T>(~x);
  }
};

template <class T>
class BitwiseNotKernel final : public OpKernel {
 public:
  BitwiseNotKernel(DataType dtype, MapIsa isa)
      : dtype_(dtype), row_(UnaryMapRows<T, NoParams, NotOp>(isa)) {}

  // X of the kernel's type; Y has its shape.
  void Prepare(PrepareContext& ctx) const override {
    const InputSpec& x = ctx.tensor_input(0);
    if (x.dtype != dtype_) {
      throw InvalidArgumentError(ctx.Describe() + ": " + ctx.InputString(0) + ": expected " +
                                 std::string(DataTypeName(dtype_)));
    }
    ctx.SetOutput(0, dtype_, x.shape);
  }

  void Compute(KernelContext& ctx) const override {
    const Tensor& x = ctx.required_input(0);
    Tensor& y = ctx.OutputUninitialized(0);
    const T* px = x.data<T>();
    T* py = y.data<T>();
    ParallelFor(ctx.threads(), x.size(), kBinaryMapGrain,
                [&](int64_t s, int64_t e) { row_(px + s, py + s, e - s, NoParams{}); });
  }

 private:
  DataType dtype_;
  UnaryMapRowFn<T, NoParams> row_;
};

// One kernel per ISA variant, best first, for each integer type.
template <class T>
void AddType(KernelRegistry& r, const std::string& tag, DataType dtype) {
  for (MapIsa isa : kMapIsas) {
    auto def = [&](const std::string& op, const std::string& lower, KernelFactory create) {
      r.Add({.op = op,
             .since = 18,
             .types = {{"T", {dtype}}},
             .create = std::move(create),
             .isa = MapIsaSet(isa),
             .name = "cpu." + tag + "_" + lower + "__" + MapIsaName(isa) + ".18"});
    };
    auto binary = [&]<class Op>(Op) {
      return [dtype, isa](const ir::Node&, const KernelOptions&) -> std::unique_ptr<OpKernel> {
        return std::make_unique<BitwiseKernel<T>>(dtype, MapRows<T, T, T, Op>(isa));
      };
    };
    def("BitwiseAnd", "bitwise_and", binary(AndOp{}));
    def("BitwiseOr", "bitwise_or", binary(OrOp{}));
    def("BitwiseXor", "bitwise_xor", binary(XorOp{}));
    def("BitwiseNot", "bitwise_not", [dtype, isa](const ir::Node&, const KernelOptions&) -> std::unique_ptr<OpKernel> {
      return std::make_unique<BitwiseNotKernel<T>>(dtype, isa);
    });
  }
}

}  // namespace

void RegisterBitwiseKernels(KernelRegistry& r) {
  AddType<int8_t>(r, "i8", DataType::kInt8);
  AddType<int16_t>(r, "i16", DataType::kInt16);
  AddType<int32_t>(r, "i32", DataType::kInt32);
  AddType<int64_t>(r, "i64", DataType::kInt64);
  AddType<uint8_t>(r, "u8", DataType::kUint8);
  AddType<uint16_t>(r, "u16", DataType::kUint16);
  AddType<uint32_t>(r, "u32", DataType::kUint32);
  AddType<uint64_t>(r, "u64", DataType::kUint64);
}

}  // namespace ferry::cpu
