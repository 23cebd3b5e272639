// ai.ferry Attention (schemas_ferry.cc): Y = Softmax(scale * Q Kᵀ + mask, axis = -1) V, computed by that definition,
// one leading index (batch * head) at a time: S = Q Kᵀ with the ref GEMM (GemmF32, as the ref MatMul), each score
// scaled then the mask added (the broadcast element), each row normalized with ref Softmax's operations in its
// order (maximum from the first element by `v > max`, exp(x - max), times 1 / sum) — so a row that is -inf
// everywhere (or holds +inf or NaN) comes out NaN as from the unfused graph — then Y = P V with GemmF32.
#include "kernels/ref/ferry_attention.h"

#include <algorithm>
#include <cmath>
#include <optional>
#include <string>
#include <vector>

#include "core/parallel.h"
#include "kernels/kernel_def.h"
#include "kernels/ref/common.h"
#include "kernels/ref/gemm.h"
#include "kernels/registry.h"

namespace ferry::ref {

AttentionPlan PlanAttention(const Tensor& q, const Tensor& k, const Tensor& v, const Tensor* mask, bool k_transposed,
                            const std::string& what) {
  const std::pair<const Tensor*, const char*> typed[] = {{&q, "Q"}, {&k, "K"}, {&v, "V"}, {mask, "mask"}};
  for (const auto& [t, name] : typed) {
    if (t && t->dtype() != DataType::kFloat) {
      throw InvalidArgumentError(what + ": input " + name + " has type " + std::string(DataTypeName(t->dtype())) +
                                 ", expected float");
    }
  }
  auto shapes = [&] {
    return "Q " + ShapeToString(q.shape()) + ", K " + ShapeToString(k.shape()) +
           (k_transposed ? " (k_transposed = 1)" : "") + ", V " + ShapeToString(v.shape()) +
           (mask ? ", mask " + ShapeToString(mask->shape()) : std::string());
  };
  auto fail = [&](const std::string& why) { throw InvalidArgumentError(what + ": " + why + " (" + shapes() + ")"); };
  if (q.rank() < 2 || k.rank() < 2 || v.rank() < 2) fail("Q, K and V must have rank >= 2");
  AttentionPlan p;
  p.sq = q.dim(q.rank() - 2);
  p.dh = q.dim(q.rank() - 1);
  const int64_t k_rows = k.dim(k.rank() - 2), k_cols = k.dim(k.rank() - 1);
  p.sk = k_transposed ? k_cols : k_rows;
  if ((k_transposed ? k_rows : k_cols) != p.dh) fail("K's head dim differs from Q's (" + std::to_string(p.dh) + ")");
  if (v.dim(v.rank() - 2) != p.sk) fail("V's row count differs from K's key count Sk = " + std::to_string(p.sk));
  p.dv = v.dim(v.rank() - 1);
  const int64_t mr = mask ? mask->rank() : 0;
  if (mr >= 1 && mask->dim(mr - 1) != 1 && mask->dim(mr - 1) != p.sk) fail("the mask's last dim is neither 1 nor Sk");
  if (mr >= 2 && mask->dim(mr - 2) != 1 && mask->dim(mr - 2) != p.sq) fail("the mask's dim -2 is neither 1 nor Sq");

  // The leading dims (all but the last two of each operand), broadcast numpy-style, right-aligned.
  const Tensor* ops[4] = {&q, &k, &v, mask};
  size_t lead_rank = 0;
  for (const Tensor* t : ops) {
    if (t && t->rank() > 2) lead_rank = std::max(lead_rank, static_cast<size_t>(t->rank() - 2));
  }
  Shape lead(lead_rank, 1);
  for (const Tensor* t : ops) {
    if (!t || t->rank() <= 2) continue;
    const size_t n = static_cast<size_t>(t->rank() - 2);
    for (size_t j = 0; j < n; ++j) {
      int64_t& d = lead[lead_rank - n + j];
      const int64_t x = t->dim(static_cast<int64_t>(j));
      if (x == 1 || x == d) continue;
      if (d != 1) fail("the leading dims cannot be broadcast together");
      d = x;
    }
  }
  p.out_shape = lead;
  p.out_shape.push_back(p.sq);
  p.out_shape.push_back(p.dv);
  int64_t batch = 1;
  for (int64_t d : lead) batch *= d;
  if (batch == 0 || p.sq == 0 || p.dv == 0 || p.sk == 0) return p;  // nothing to read: Y is empty or zero

  if (mr >= 1 && mask->dim(mr - 1) != 1) p.mask_col_stride = 1;
  if (mr >= 2 && mask->dim(mr - 2) != 1) p.mask_row_stride = mask->dim(mr - 1);
  // Per operand, its element stride along each leading dim (0 where it broadcasts), then the offsets of every
  // leading index by an odometer over `lead`.
  std::vector<int64_t>* offsets[4] = {&p.q_offsets, &p.k_offsets, &p.v_offsets, &p.mask_offsets};
  for (size_t o = 0; o < 4; ++o) {
    const Tensor* t = ops[o];
    if (!t) continue;
    std::vector<int64_t> stride(lead_rank, 0);
    int64_t s = 1;
    for (int64_t d = t->rank() - 1; d >= 0; --d) {
      const int64_t lead_dim = d - (t->rank() - 2) + static_cast<int64_t>(lead_rank);  // its position in `lead`
      if (d < t->rank() - 2 && lead_dim >= 0 && t->dim(d) != 1) stride[static_cast<size_t>(lead_dim)] = s;
      s *= t->dim(d);
    }
    std::vector<int64_t>& out = *offsets[o];
    out.resize(static_cast<size_t>(batch));
    std::vector<int64_t> idx(lead_rank, 0);
    int64_t off = 0;
    for (int64_t b = 0; b < batch; ++b) {
      out[static_cast<size_t>(b)] = off;
      for (size_t j = lead_rank; j-- > 0;) {  // next index: the last dim fastest
        off += stride[j];
        if (++idx[j] < lead[j]) break;
        off -= stride[j] * lead[j];
        idx[j] = 0;
      }
    }
  }
  return p;
}

namespace {

// Tensor-shaped stand-ins for the inputs Prepare sees (dtype and shape, no data), for PlanAttention, which reads
// only those.
Tensor Spec(const InputSpec& s) { return Tensor::Wrap(s.dtype, s.shape, nullptr, nullptr); }

class FerryAttention : public OpKernel {
 public:
  explicit FerryAttention(const ir::Node& node)
      : scale_(node.GetFloat("scale", 1.0f)), k_transposed_(node.GetInt("k_transposed", 0) != 0) {}

  // Checks Q, K, V and the mask and resolves the geometry (PlanAttention).
  void Prepare(PrepareContext& ctx) const override {
    const Tensor q = Spec(ctx.tensor_input(0)), k = Spec(ctx.tensor_input(1)), v = Spec(ctx.tensor_input(2));
    const std::optional<Tensor> mask = ctx.has_input(3) ? std::optional(Spec(ctx.tensor_input(3))) : std::nullopt;
    const AttentionPlan& p =
        ctx.EmplaceState(PlanAttention(q, k, v, mask ? &*mask : nullptr, k_transposed_, ctx.Describe()));
    ctx.SetOutput(0, DataType::kFloat, p.out_shape);
  }

  void Compute(KernelContext& ctx) const override {
    const Tensor& q = ctx.required_input(0);
    const Tensor& k = ctx.required_input(1);
    const Tensor& v = ctx.required_input(2);
    const Tensor* mask = ctx.input(3);
    const AttentionPlan& p = ctx.state<AttentionPlan>();
    Tensor& y = ctx.Output(0);  // zeros: what P V is when Sk = 0
    if (y.size() == 0 || p.sk == 0) return;
    const float* qp = q.data<float>();
    const float* kp = k.data<float>();
    const float* vp = v.data<float>();
    const float* mp = mask ? mask->data<float>() : nullptr;
    float* yp = y.data<float>();
    const int gemm_threads = p.batch() == 1 ? ctx.threads() : 1;
    ParallelFor(ctx.threads(), p.batch(), 1, [&](int64_t begin, int64_t end) {
      std::vector<float> scores(static_cast<size_t>(p.sq * p.sk));
      float* s = scores.data();
      for (int64_t b = begin; b < end; ++b) {
        const size_t bi = static_cast<size_t>(b);
        GemmF32(false, !k_transposed_, p.sq, p.sk, p.dh, 1.0f, qp + p.q_offsets[bi], p.dh, kp + p.k_offsets[bi],
                k_transposed_ ? p.sk : p.dh, 0.0f, s, p.sk, gemm_threads);
        for (int64_t i = 0; i < p.sq; ++i) {
          float* row = s + i * p.sk;
          const float* m = mp ? mp + p.mask_offsets[bi] + i * p.mask_row_stride : nullptr;
          for (int64_t j = 0; j < p.sk; ++j) row[j] = scale_ * row[j] + (m ? m[j * p.mask_col_stride] : 0.0f);
          SoftmaxRow(row, p.sk);
        }
        GemmF32(false, false, p.sq, p.dv, p.sk, 1.0f, s, p.sk, vp + p.v_offsets[bi], p.dv, 0.0f,
                yp + b * p.sq * p.dv, p.dv, gemm_threads);
      }
    });
  }

 private:
  // ref Softmax's row (softmax.cc) on float, in place; n > 0.
  static void SoftmaxRow(float* x, int64_t n) {
    float mx = x[0];
    for (int64_t i = 1; i < n; ++i) {
      if (x[i] > mx) mx = x[i];
    }
    float sum = 0;
    for (int64_t i = 0; i < n; ++i) {
      x[i] = std::exp(x[i] - mx);
      sum += x[i];
    }
    const float inv = 1.0f / sum;
    for (int64_t i = 0; i < n; ++i) x[i] *= inv;
  }

  float scale_;
  bool k_transposed_;
};

}  // namespace

void RegisterFerryAttentionKernels(KernelRegistry& r) {
  r.Add({.op = "Attention",
         .domain = "ai.ferry",
         .since = 1,
         .types = {{"T", {DataType::kFloat}}},
         .create = MakeKernel<FerryAttention>});
}

}  // namespace ferry::ref
