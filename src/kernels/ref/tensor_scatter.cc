// TensorScatter (opset 24): the KV-cache update. A copy of past_cache in which, for every prefix index before
// `axis` (default -2), the update's sequence rows are written at write_indices[batch] + s along `axis`
// (mode linear: must fit; mode circular: modulo max_sequence_length). write_indices defaults to zeros.
#include "kernels/kernel_def.h"
#include "kernels/ref/common.h"
#include "kernels/ref/copy_util.h"
#include "kernels/registry.h"

namespace ferry::ref {
namespace {

class TensorScatter : public OpKernel {
 public:
  explicit TensorScatter(const ir::Node& node) : axis_(node.GetInt("axis", -2)) {
    const std::string mode = node.GetString("mode", "linear");
    if (mode != "linear" && mode != "circular") {
      throw InvalidModelError(node.Describe() + ": unknown mode '" + mode + "' (expected linear or circular)");
    }
    circular_ = mode == "circular";
  }

  void Compute(KernelContext& ctx) const override {
    const Tensor& past = ctx.required_input(0);
    const Tensor& update = ctx.required_input(1);
    const int64_t rank = past.rank();
    if (rank < 2) throw InvalidArgumentError(ctx.Describe() + ": past_cache must have rank >= 2");
    const int64_t axis = NormalizeAxis(axis_, rank, ctx.Describe());
    if (axis == 0) throw InvalidArgumentError(ctx.Describe() + ": axis must not be the batch axis 0");
    bool ok = update.rank() == rank && update.dtype() == past.dtype();
    for (int64_t d = 0; ok && d < rank; ++d) ok = d == axis ? update.dim(d) <= past.dim(d) : update.dim(d) == past.dim(d);
    if (!ok) {
      throw InvalidArgumentError(ctx.Describe() + ": update " + DescribeTensor(update) +
                                 " must match past_cache " + DescribeTensor(past) +
                                 " except for a shorter sequence axis " + std::to_string(axis));
    }
    const int64_t batch = past.dim(0), max_seq = past.dim(axis), seq = update.dim(axis);
    std::vector<int64_t> writes(static_cast<size_t>(batch), 0);
    if (const Tensor* wi = ctx.input(2)) {
      writes = ReadInt64s(*wi, ctx.Describe() + ": input 'write_indices'");
      if (static_cast<int64_t>(writes.size()) != batch) {
        throw InvalidArgumentError(ctx.Describe() + ": input 'write_indices' " + DescribeTensor(*wi) +
                                   " must have one entry per batch entry (" + std::to_string(batch) + ")");
      }
    }
    for (int64_t w : writes) {
      if (w < 0 || (!circular_ && w > max_seq - seq)) {
        throw InvalidArgumentError(ctx.Describe() + ": input 'write_indices' value " + std::to_string(w) +
                                   " does not fit " + std::to_string(seq) + " rows into a sequence of " +
                                   std::to_string(max_seq));
      }
    }
    Tensor& y = ctx.Output(0, past.dtype(), past.shape());
    CopyElements(past.dtype(), y.raw_data(), 0, past.raw_data(), 0, past.size());
    if (update.size() == 0 || max_seq == 0) return;
    int64_t prefix = 1, inner = 1;
    for (int64_t d = 1; d < axis; ++d) prefix *= past.dim(d);
    for (int64_t d = axis + 1; d < rank; ++d) inner *= past.dim(d);
    DispatchElements(past.dtype(), ctx.Describe(), [&](auto acc) {
      using A = decltype(acc);
      for (int64_t b = 0; b < batch; ++b) {
        for (int64_t p = 0; p < prefix; ++p) {
          const int64_t row = b * prefix + p;
          for (int64_t s = 0; s < seq; ++s) {
            int64_t t = writes[static_cast<size_t>(b)] + s;
            if (circular_) t %= max_seq;
            A::Copy(y.raw_data(), (row * max_seq + t) * inner, update.raw_data(), (row * seq + s) * inner, inner);
          }
        }
      }
    });
  }

 private:
  int64_t axis_;
  bool circular_ = false;
};

}  // namespace

void RegisterTensorScatterKernels(KernelRegistry& r) {
  r.Add({.op = "TensorScatter", .since = 24, .types = {{"T", dtypes::All()}}, .create = MakeKernel<TensorScatter>,
         .host_inputs = {2}});
}

}  // namespace ferry::ref
