// RotaryEmbedding (opset 23): rotates the first rotary_embedding_dim (default: all) features of each head.
// input is [B, H, S, D] or [B, S, H*D] (3-D needs num_heads); cos_cache / sin_cache are [max_pos, rot/2] indexed
// by position_ids [B, S], or [B, S, rot/2] when position_ids is omitted. Non-interleaved pairs feature k with
// k + rot/2; interleaved pairs 2k with 2k+1: (x1, x2) -> (cos*x1 - sin*x2, sin*x1 + cos*x2). Features past
// rot are copied.
// The attributes, Prepare's checks and the position ids are shared with the cpu kernel (rotary_embedding.h).
#include <vector>

#include "core/parallel.h"
#include "kernels/kernel_def.h"
#include "kernels/ref/common.h"
#include "kernels/ref/rotary_embedding.h"
#include "kernels/registry.h"

namespace ferry::ref {

RotaryEmbeddingAttrs::RotaryEmbeddingAttrs(const ir::Node& node)
    : interleaved(node.GetInt("interleaved", 0) != 0),
      rotary_dim(node.GetInt("rotary_embedding_dim", 0)),
      num_heads(node.GetInt("num_heads", 0)) {}

RotaryEmbeddingPlan PrepareRotaryEmbedding(PrepareContext& ctx, const RotaryEmbeddingAttrs& a) {
  const std::string what = ctx.Describe();
  const InputSpec& x = ctx.tensor_input(0);
  const InputSpec& cos = ctx.tensor_input(1);
  const InputSpec& sin = ctx.tensor_input(2);
  const InputSpec* pos = ctx.has_input(3) ? &ctx.tensor_input(3) : nullptr;
  const Shape& xs = x.shape;
  RotaryEmbeddingPlan p;
  if (xs.size() == 4) {
    p.B = xs[0], p.H = xs[1], p.S = xs[2], p.D = xs[3];
    p.ss = p.D, p.sh = p.S * p.D, p.sb = p.H * p.S * p.D;
  } else if (xs.size() == 3) {
    if (a.num_heads <= 0 || xs[2] % a.num_heads != 0) {
      throw InvalidArgumentError(what + ": a 3-D input needs attribute num_heads dividing its last dim " +
                                 std::to_string(xs[2]) + ", got " + std::to_string(a.num_heads));
    }
    p.B = xs[0], p.S = xs[1], p.H = a.num_heads, p.D = xs[2] / a.num_heads;
    p.sh = p.D, p.ss = p.H * p.D, p.sb = p.S * p.H * p.D;
  } else {
    throw InvalidArgumentError(what + ": input must be 3-D or 4-D, got " + ShapeToString(xs));
  }
  p.rot = a.rotary_dim > 0 ? a.rotary_dim : p.D;
  if (p.rot > p.D || p.rot % 2 != 0) {
    throw InvalidArgumentError(what + ": rotary_embedding_dim " + std::to_string(p.rot) +
                               " must be even and at most the head size " + std::to_string(p.D));
  }
  p.half = p.rot / 2;
  const Shape& cs = cos.shape;
  if (pos) {
    if (pos->dtype != DataType::kInt64 && pos->dtype != DataType::kInt32) {
      throw InvalidArgumentError(what + " input 'position_ids': expected an int32 or int64 tensor, got " +
                                 std::string(DataTypeName(pos->dtype)));
    }
    if (pos->shape.size() != 2 || pos->shape[0] != p.B || pos->shape[1] != p.S) {
      throw InvalidArgumentError(what + ": position_ids must be [B, S] = [" + std::to_string(p.B) + "," +
                                 std::to_string(p.S) + "], got " + ShapeToString(pos->shape));
    }
    if (cs.size() != 2 || cs[1] != p.half || sin.shape != cs) {
      throw InvalidArgumentError(what + ": with position_ids, cos_cache/sin_cache must be [max_pos, " +
                                 std::to_string(p.half) + "], got " + ShapeToString(cs) + " and " +
                                 ShapeToString(sin.shape));
    }
  } else if (cs.size() != 3 || cs[0] != p.B || cs[1] != p.S || cs[2] != p.half || sin.shape != cs) {
    throw InvalidArgumentError(what + ": without position_ids, cos_cache/sin_cache must be [B, S, " +
                               std::to_string(p.half) + "], got " + ShapeToString(cs) + " and " +
                               ShapeToString(sin.shape));
  }
  if (cos.dtype != x.dtype || sin.dtype != x.dtype) {
    throw InvalidArgumentError(what + ": cos_cache and sin_cache must have the input's type (" + ctx.InputString(0) +
                               ", " + ctx.InputString(1) + ", " + ctx.InputString(2) + ")");
  }
  ctx.SetOutput(0, x.dtype, xs);
  return p;
}

std::vector<int64_t> RotaryEmbeddingPositions(const Tensor* pos, const Tensor& cos, const std::string& what) {
  std::vector<int64_t> positions;
  if (!pos) return positions;
  positions.resize(static_cast<size_t>(pos->size()));
  for (int64_t i = 0; i < pos->size(); ++i) {
    const int64_t id = pos->dtype() == DataType::kInt64 ? pos->data<int64_t>()[i] : pos->data<int32_t>()[i];
    if (id < 0 || id >= cos.dim(0)) {
      throw InvalidArgumentError(what + ": position id " + std::to_string(id) + " is outside the cache of " +
                                 std::to_string(cos.dim(0)) + " positions");
    }
    positions[static_cast<size_t>(i)] = id;
  }
  return positions;
}

namespace {

class RotaryEmbedding : public OpKernel {
 public:
  explicit RotaryEmbedding(const ir::Node& node) : attrs_(node) {}

  void Prepare(PrepareContext& ctx) const override { ctx.EmplaceState(PrepareRotaryEmbedding(ctx, attrs_)); }

  void Compute(KernelContext& ctx) const override {
    const Tensor& x = ctx.required_input(0);
    const Tensor& cos = ctx.required_input(1);
    const Tensor& sin = ctx.required_input(2);
    const Tensor* pos = ctx.input(3);
    const RotaryEmbeddingPlan& p = ctx.state<RotaryEmbeddingPlan>();
    const int64_t B = p.B, H = p.H, S = p.S, D = p.D, sb = p.sb, sh = p.sh, ss = p.ss, rot = p.rot, half = p.half;
    const std::vector<int64_t> positions = RotaryEmbeddingPositions(pos, cos, ctx.Describe());
    Tensor& y = ctx.Output(0);
    Dispatch(FloatTypes{}, x.dtype(), ctx, [&](auto tag) {
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
              const int64_t i1 = attrs_.interleaved ? 2 * k : k;
              const int64_t i2 = attrs_.interleaved ? 2 * k + 1 : k + half;
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
  RotaryEmbeddingAttrs attrs_;
};

}  // namespace

void RegisterRotaryEmbeddingKernels(KernelRegistry& r) {
  r.Add({.op = "RotaryEmbedding",
         .since = 23,
         .types = {{"T", dtypes::Floats()}, {"M", {DataType::kInt64}}},
         .create = MakeKernel<RotaryEmbedding>});
}

}  // namespace ferry::ref
