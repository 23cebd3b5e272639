// com.microsoft::MatMulInteger16: Y = A · B with numpy matmul batching (MatMul's shapes) of 16-bit integers, each
// widened to 32 bits and the products summed modulo 2^32. Y is int32 when A or B is int16 and uint32 when both
// are uint16 (ONNX Runtime's type inference; its CPU kernel implements int16 x int16 -> int32 only).
#include <string>

#include "kernels/kernel_def.h"
#include "kernels/ref/common.h"
#include "kernels/ref/gemm.h"
#include "kernels/registry.h"

namespace ferry::ref {
namespace {

uint32_t Widen(const Tensor& t, int64_t i) {
  return t.dtype() == DataType::kInt16 ? static_cast<uint32_t>(static_cast<int32_t>(t.data<int16_t>()[i]))
                                       : static_cast<uint32_t>(t.data<uint16_t>()[i]);
}

class MatMulInteger16 : public OpKernel {
 public:
  explicit MatMulInteger16(const ir::Node&) {}

  void Prepare(PrepareContext& ctx) const override {
    const InputSpec& a = ctx.tensor_input(0);
    const InputSpec& b = ctx.tensor_input(1);
    const MatMulPlan& p = ctx.EmplaceState(PlanMatMul(a.shape, b.shape, ctx.Describe()));
    const bool unsigned_out = a.dtype == DataType::kUint16 && b.dtype == DataType::kUint16;
    ctx.SetOutput(0, unsigned_out ? DataType::kUint32 : DataType::kInt32, p.out_shape);
  }

  void Compute(KernelContext& ctx) const override {
    const Tensor& a = ctx.required_input(0);
    const Tensor& b = ctx.required_input(1);
    const MatMulPlan& p = ctx.state<MatMulPlan>();
    Tensor& y = ctx.OutputUninitialized(0);
    auto* out = static_cast<uint32_t*>(y.raw_data());  // int32 and uint32 hold the same bits
    for (size_t mat = 0; mat < p.a_offsets.size(); ++mat) {
      const int64_t ao = p.a_offsets[mat], bo = p.b_offsets[mat];
      for (int64_t i = 0; i < p.m; ++i) {
        for (int64_t j = 0; j < p.n; ++j) {
          uint32_t sum = 0;
          for (int64_t t = 0; t < p.k; ++t) sum += Widen(a, ao + i * p.k + t) * Widen(b, bo + t * p.n + j);
          *out++ = sum;
        }
      }
    }
  }
};

}  // namespace

void RegisterMatMulInteger16Kernels(KernelRegistry& r) {
  r.Add({.op = "MatMulInteger16",
         .domain = "com.microsoft",
         .since = 1,
         .types = {{"T1", {DataType::kInt16, DataType::kUint16}},
                   {"T2", {DataType::kInt16, DataType::kUint16}},
                   {"T3", {DataType::kInt32, DataType::kUint32}}},
         .create = MakeKernel<MatMulInteger16>});
}

}  // namespace ferry::ref
