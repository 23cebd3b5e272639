// RotaryEmbedding (opset 23): rotates the first rotary_embedding_dim (default: all) features of each head.
// input is [B, H, S, D] or [B, S, H*D] (3-D needs num_heads); cos_cache / sin_cache are [max_pos, rot/2] indexed
// by position_ids [B, S], or [B, S, rot/2] when position_ids is omitted. Non-interleaved pairs feature k with
// k + rot/2; interleaved pairs 2k with 2k+1: (x1, x2) -> (cos*x1 - sin*x2, sin*x1 + cos*x2). Features past
// rot are copied.
#include <vector>

#include "core/parallel.h"
#include "kernels/kernel_def.h"
#include "kernels/ref/common.h"
#include "kernels/registry.h"

namespace ferry::ref {
namespace {

class RotaryEmbedding : public OpKernel {
 public:
  explicit RotaryEmbedding(const ir::Node& node)
      : interleaved_(node.GetInt("interleaved", 0) != 0),
        rotary_dim_(node.GetInt("rotary_embedding_dim", 0)),
        num_heads_(node.GetInt("num_heads", 0)) {}

  void Compute(KernelContext& ctx) const override {
    const std::string what = ctx.Describe();
    const Tensor& x = ctx.required_input(0);
    const Tensor& cos = ctx.required_input(1);
    const Tensor& sin = ctx.required_input(2);
    const Tensor* pos = ctx.input(3);
    int64_t B, H, S, D, sb, sh, ss;  // element (b, h, s, d) at b*sb + h*sh + s*ss + d
    if (x.rank() == 4) {
      B = x.dim(0), H = x.dim(1), S = x.dim(2), D = x.dim(3);
      ss = D, sh = S * D, sb = H * S * D;
    } else if (x.rank() == 3) {
      if (num_heads_ <= 0 || x.dim(2) % num_heads_ != 0) {
        throw InvalidArgumentError(what + ": a 3-D input needs attribute num_heads dividing its last dim " +
                                   std::to_string(x.dim(2)) + ", got " + std::to_string(num_heads_));
      }
      B = x.dim(0), S = x.dim(1), H = num_heads_, D = x.dim(2) / num_heads_;
      sh = D, ss = H * D, sb = S * H * D;
    } else {
      throw InvalidArgumentError(what + ": input must be 3-D or 4-D, got " + ShapeToString(x.shape()));
    }
    const int64_t rot = rotary_dim_ > 0 ? rotary_dim_ : D;
    if (rot > D || rot % 2 != 0) {
      throw InvalidArgumentError(what + ": rotary_embedding_dim " + std::to_string(rot) +
                                 " must be even and at most the head size " + std::to_string(D));
    }
    const int64_t half = rot / 2;
    std::vector<int64_t> positions;
    if (pos) {
      positions = ReadInt64s(*pos, what + " input 'position_ids'");
      if (pos->rank() != 2 || pos->dim(0) != B || pos->dim(1) != S) {
        throw InvalidArgumentError(what + ": position_ids must be [B, S] = [" + std::to_string(B) + "," +
                                   std::to_string(S) + "], got " + ShapeToString(pos->shape()));
      }
      if (cos.rank() != 2 || cos.dim(1) != half || sin.shape() != cos.shape()) {
        throw InvalidArgumentError(what + ": with position_ids, cos_cache/sin_cache must be [max_pos, " +
                                   std::to_string(half) + "], got " + ShapeToString(cos.shape()) + " and " +
                                   ShapeToString(sin.shape()));
      }
      for (int64_t p : positions) {
        if (p < 0 || p >= cos.dim(0)) {
          throw InvalidArgumentError(what + ": position id " + std::to_string(p) + " is outside the cache of " +
                                     std::to_string(cos.dim(0)) + " positions");
        }
      }
    } else if (cos.rank() != 3 || cos.dim(0) != B || cos.dim(1) != S || cos.dim(2) != half ||
               sin.shape() != cos.shape()) {
      throw InvalidArgumentError(what + ": without position_ids, cos_cache/sin_cache must be [B, S, " +
                                 std::to_string(half) + "], got " + ShapeToString(cos.shape()) + " and " +
                                 ShapeToString(sin.shape()));
    }
    if (cos.dtype() != x.dtype() || sin.dtype() != x.dtype()) {
      throw InvalidArgumentError(what + ": cos_cache and sin_cache must have the input's type");
    }
    Tensor& y = ctx.Output(0, x.dtype(), x.shape());
    Dispatch(FloatTypes{}, x.dtype(), what, [&](auto tag) {
      using T = decltype(tag);
      using A = Acc<T>;
      const T* in = x.data<T>();
      const T* cp = cos.data<T>();
      const T* sp = sin.data<T>();
      T* out = y.data<T>();
      ParallelFor(ctx.threads(), B * S, 1, [&](int64_t begin, int64_t end) {
        for (int64_t bs = begin; bs < end; ++bs) {
          const int64_t b = bs / S, s = bs % S;
          const int64_t row = pos ? positions[static_cast<size_t>(bs)] : bs;
          const T* cr = cp + row * half;
          const T* sr = sp + row * half;
          for (int64_t h = 0; h < H; ++h) {
            const T* xi = in + b * sb + h * sh + s * ss;
            T* yo = out + b * sb + h * sh + s * ss;
            for (int64_t k = 0; k < half; ++k) {
              const int64_t i1 = interleaved_ ? 2 * k : k;
              const int64_t i2 = interleaved_ ? 2 * k + 1 : k + half;
              const A c = static_cast<A>(cr[k]), sn = static_cast<A>(sr[k]);
              const A x1 = static_cast<A>(xi[i1]), x2 = static_cast<A>(xi[i2]);
              yo[i1] = T(c * x1 - sn * x2);
              yo[i2] = T(sn * x1 + c * x2);
            }
            for (int64_t d = rot; d < D; ++d) yo[d] = xi[d];
          }
        }
      });
    });
  }

 private:
  bool interleaved_;
  int64_t rotary_dim_;
  int64_t num_heads_;
};

}  // namespace

void RegisterRotaryEmbeddingKernels(KernelRegistry& r) {
  r.Add({.op = "RotaryEmbedding",
         .since = 23,
         .types = {{"T", dtypes::Floats()}, {"M", {DataType::kInt64}}},
         .create = MakeKernel<RotaryEmbedding>});
}

}  // namespace ferry::ref
