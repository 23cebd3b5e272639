// TensorScatter (opset 24): the KV-cache update. A copy of past_cache in which, for every prefix index before
// `axis` (default -2), the update's sequence rows are written at write_indices[batch] + s along `axis`
// (mode linear: must fit; mode circular: modulo max_sequence_length). write_indices defaults to zeros. Prepare
// checks the shapes; Compute checks the write positions.
#include <string>
#include <vector>

#include "kernels/kernel_def.h"
#include "kernels/ref/common.h"
#include "kernels/ref/copy_util.h"
#include "kernels/registry.h"

namespace ferry::ref {
namespace {

// The sequence axis, past_cache as [batch, prefix, max_seq, inner] around it, and the update's rows (seq).
struct Plan {
  int64_t axis = 0, batch = 0, max_seq = 0, seq = 0, prefix = 1, inner = 1;
};

class TensorScatter : public OpKernel {
 public:
  explicit TensorScatter(const ir::Node& node) : axis_(node.GetInt("axis", -2)) {
    const std::string mode = node.GetString("mode", "linear");
    if (mode != "linear" && mode != "circular") {
      throw InvalidModelError(node.Describe() + ": unknown mode '" + mode + "' (expected linear or circular)");
    }
    circular_ = mode == "circular";
  }

  // The shapes of past_cache, update and write_indices, and the rows; Y has past_cache's shape. The write
  // positions are the data's (Compute).
  void Prepare(PrepareContext& ctx) const override {
    const InputSpec& past = ctx.tensor_input(0);
    const InputSpec& update = ctx.tensor_input(1);
    const auto rank = static_cast<int64_t>(past.shape.size());
    if (rank < 2) {
      throw InvalidArgumentError(ctx.Describe() + ": past_cache must have rank >= 2, got " + ctx.InputString(0));
    }
    Plan p;
    p.axis = NormalizeAxis(axis_, rank, ctx.Describe());
    if (p.axis == 0) throw InvalidArgumentError(ctx.Describe() + ": axis must not be the batch axis 0");
    auto pd = [&](int64_t d) { return past.shape[static_cast<size_t>(d)]; };
    auto ud = [&](int64_t d) { return update.shape[static_cast<size_t>(d)]; };
    bool ok = static_cast<int64_t>(update.shape.size()) == rank && update.dtype == past.dtype;
    for (int64_t d = 0; ok && d < rank; ++d) ok = d == p.axis ? ud(d) <= pd(d) : ud(d) == pd(d);
    if (!ok) {
      throw InvalidArgumentError(ctx.Describe() + ": update " + ctx.InputString(1) + " must match past_cache " +
                                 ctx.InputString(0) + " except for a shorter sequence axis " + std::to_string(p.axis));
    }
    p.batch = pd(0);
    p.max_seq = pd(p.axis);
    p.seq = ud(p.axis);
    for (int64_t d = 1; d < p.axis; ++d) p.prefix *= pd(d);
    for (int64_t d = p.axis + 1; d < rank; ++d) p.inner *= pd(d);
    if (ctx.has_input(2)) {
      const InputSpec& wi = ctx.tensor_input(2);
      if (wi.dtype != DataType::kInt32 && wi.dtype != DataType::kInt64) {
        throw InvalidArgumentError(ctx.Describe() + ": input 'write_indices': expected an int32 or int64 tensor, got " +
                                   ctx.InputString(2));
      }
      if (ShapeElementCount(wi.shape) != p.batch) {
        throw InvalidArgumentError(ctx.Describe() + ": input 'write_indices' " + ctx.InputString(2) +
                                   " must have one entry per batch entry (" + std::to_string(p.batch) + ")");
      }
    }
    ctx.EmplaceState(p);
    ctx.SetOutput(0, past.dtype, past.shape);
  }

  void Compute(KernelContext& ctx) const override {
    const Tensor& past = ctx.required_input(0);
    const Tensor& update = ctx.required_input(1);
    const Plan& pl = ctx.state<Plan>();
    const int64_t batch = pl.batch, max_seq = pl.max_seq, seq = pl.seq, prefix = pl.prefix, inner = pl.inner;
    std::vector<int64_t> writes(static_cast<size_t>(batch), 0);
    if (const Tensor* wi = ctx.input(2)) {  // int32 or int64, one per batch entry (Prepare checked)
      for (int64_t b = 0; b < batch; ++b) writes[static_cast<size_t>(b)] = IndexAt(*wi, b);
    }
    for (int64_t w : writes) {
      if (w < 0 || (!circular_ && w > max_seq - seq)) {
        throw InvalidArgumentError(ctx.Describe() + ": input 'write_indices' value " + std::to_string(w) +
                                   " does not fit " + std::to_string(seq) + " rows into a sequence of " +
                                   std::to_string(max_seq));
      }
    }
    Tensor& y = ctx.Output(0);
    CopyElements(past.dtype(), y.raw_data(), 0, past.raw_data(), 0, past.size());
    if (update.size() == 0 || max_seq == 0) return;
    // Every registered dtype has a storage layout: the description is never used.
    DispatchElements(past.dtype(), std::string(), [&](auto acc) {
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
