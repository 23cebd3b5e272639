// RotaryEmbedding (opset 23): rotates the first rotary_embedding_dim (default: all) features of each head.
// input is [B, H, S, D] or [B, S, H*D] (3-D needs num_heads); cos_cache / sin_cache are [max_pos, rot/2] indexed
// by position_ids [B, S], or [B, S, rot/2] when position_ids is omitted. Non-interleaved pairs feature k with
// k + rot/2; interleaved pairs 2k with 2k+1: (x1, x2) -> (cos*x1 - sin*x2, sin*x1 + cos*x2). Features past
// rot are copied.
// com.microsoft RotaryEmbedding (ONNX Runtime's contrib op, as its CPU kernel computes it:
// onnxruntime/contrib_ops/cpu/bert/rotary_embedding.cc, rotary_embedding_helper.h) is the same rotation with inputs
// (input, position_ids, cos_cache, sin_cache): input [B, S, hidden] or [B, N, S, D]; the caches are always 2-D
// [max_pos, c]; position_ids is one start position p (a scalar or [1]: row p + s for position s, p in [0, max_pos -
// S]) or [B, S] rows. The head size D is 2c without rotary_embedding_dim, else hidden / num_heads (num_heads is then
// required, and c must be D/2 or rot/2); num_heads defaults to hidden / D. Cache row r starts at r * rot/2, as ONNX
// Runtime reads it. S > max_pos is refused (ONNX Runtime would regrow the caches) unless is_packed_batching; scale is
// unused (as ONNX Runtime's).
// The attributes, Prepare's checks and the position ids are shared with the cpu kernel (rotary_embedding.h).
#include <vector>

#include "core/parallel.h"
#include "kernels/kernel_def.h"
#include "kernels/ref/common.h"
#include "kernels/ref/rotary_embedding.h"
#include "kernels/registry.h"

namespace ferry::ref {

RotaryEmbeddingAttrs::RotaryEmbeddingAttrs(const ir::Node& node)
    : ms(node.domain() == "com.microsoft"),
      packed_batching(node.GetInt("is_packed_batching", 0) == 1),
      interleaved(node.GetInt("interleaved", 0) == 1 || (!ms && node.GetInt("interleaved", 0) != 0)),
      rotary_dim(node.GetInt("rotary_embedding_dim", 0)),
      num_heads(node.GetInt("num_heads", 0)) {
  if (ms && (rotary_dim < 0 || num_heads < 0 || (rotary_dim > 0 && num_heads == 0))) {
    throw InvalidModelError(node.Describe() + ": attributes rotary_embedding_dim = " + std::to_string(rotary_dim) +
                            " and num_heads = " + std::to_string(num_heads) +
                            ": both must be >= 0, and num_heads > 0 with rotary_embedding_dim");
  }
}

namespace {

// com.microsoft RotaryEmbedding's checks (ONNX Runtime's rotary_embedding_helper.h, plus the consistency of the
// heads with the input that ONNX Runtime leaves unchecked).
RotaryEmbeddingPlan PrepareMsRotaryEmbedding(PrepareContext& ctx, const RotaryEmbeddingAttrs& a) {
  const std::string what = ctx.Describe();
  const InputSpec& x = ctx.tensor_input(0);
  const InputSpec& pos = ctx.tensor_input(1);
  const InputSpec& cos = ctx.tensor_input(2);
  const InputSpec& sin = ctx.tensor_input(3);
  const Shape& xs = x.shape;
  const Shape& cs = cos.shape;
  RotaryEmbeddingPlan p;
  p.cos_in = 2, p.sin_in = 3, p.pos_in = 1;
  if (xs.size() != 3 && xs.size() != 4) {
    throw InvalidArgumentError(what + ": input must be 3-D or 4-D, got " + ShapeToString(xs));
  }
  if (cs.size() != 2 || sin.shape != cs) {
    throw InvalidArgumentError(what + ": cos_cache and sin_cache must be 2-D [max_pos, rot/2] of one shape, got " +
                               ShapeToString(cs) + " and " + ShapeToString(sin.shape));
  }
  if (cos.dtype != x.dtype || sin.dtype != x.dtype) {
    throw InvalidArgumentError(what + ": cos_cache and sin_cache must have the input's type (" + ctx.InputString(0) +
                               ", " + ctx.InputString(2) + ", " + ctx.InputString(3) + ")");
  }
  const bool four = xs.size() == 4;
  p.B = xs[0], p.S = four ? xs[2] : xs[1];
  const int64_t hidden = four ? xs[1] * xs[3] : xs[2];
  p.D = a.rotary_dim == 0 ? cs[1] * 2 : (hidden / a.num_heads);
  p.H = a.num_heads > 0 ? a.num_heads : (p.D > 0 ? hidden / p.D : 0);
  if (p.D <= 0 || p.H * p.D != hidden || (four && (p.H != xs[1] || p.D != xs[3]))) {
    throw InvalidArgumentError(what + ": the input " + ShapeToString(xs) + " is not num_heads x head_size = " +
                               std::to_string(p.H) + " x " + std::to_string(p.D) + " (head_size from " +
                               (a.rotary_dim == 0 ? "cos_cache's dim 1 x 2" : "hidden / num_heads") + ")");
  }
  p.rot = a.rotary_dim > 0 ? a.rotary_dim : p.D;
  if (p.rot > p.D || p.rot % 2 != 0) {
    throw InvalidArgumentError(what + ": rotary_embedding_dim " + std::to_string(p.rot) +
                               " must be even and at most the head size " + std::to_string(p.D));
  }
  p.half = p.rot / 2;
  if (cs[1] != p.D / 2 && cs[1] != p.half) {
    throw InvalidArgumentError(what + ": cos_cache's dim 1 is " + std::to_string(cs[1]) +
                               ", expected head_size / 2 = " + std::to_string(p.D / 2) +
                               " or rotary_embedding_dim / 2 = " + std::to_string(p.half));
  }
  if (four) {
    p.ss = p.D, p.sh = p.S * p.D, p.sb = p.H * p.S * p.D;
  } else {
    p.sh = p.D, p.ss = p.H * p.D, p.sb = p.S * p.H * p.D;
  }
  if (pos.dtype != DataType::kInt64) {
    throw InvalidArgumentError(what + ": " + ctx.InputString(1) + " must be int64");
  }
  if (pos.shape.empty() || (pos.shape.size() == 1 && pos.shape[0] == 1)) {
    p.pos_format = 0;
  } else if (pos.shape.size() == 2 && pos.shape[0] == p.B && pos.shape[1] == p.S) {
    p.pos_format = 1;
  } else {
    throw InvalidArgumentError(what + ": position_ids must be a scalar, [1] or [B, S] = [" + std::to_string(p.B) +
                               ", " + std::to_string(p.S) + "], got " + ShapeToString(pos.shape));
  }
  if (!a.packed_batching && p.S > cs[0]) {
    throw UnsupportedError(what + ": sequence length " + std::to_string(p.S) + " exceeds the caches' " +
                           std::to_string(cs[0]) +
                           " positions (regrowing them is not implemented, as in ONNX Runtime)");
  }
  ctx.SetOutput(0, x.dtype, xs);
  return p;
}

}  // namespace

RotaryEmbeddingPlan PrepareRotaryEmbedding(PrepareContext& ctx, const RotaryEmbeddingAttrs& a) {
  if (a.ms) return PrepareMsRotaryEmbedding(ctx, a);
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

std::vector<int64_t> RotaryEmbeddingPositions(const RotaryEmbeddingPlan& p, const Tensor* pos, const Tensor& cos,
                                              const std::string& what) {
  std::vector<int64_t> positions;
  if (!pos) return positions;
  if (p.pos_format == 0) {  // com.microsoft: rows start + s
    const int64_t start = pos->data<int64_t>()[0];
    if (start < 0 || start > cos.dim(0) - p.S) {
      throw InvalidArgumentError(what + ": position_ids start " + std::to_string(start) + " with sequence length " +
                                 std::to_string(p.S) + " exceeds the cache of " + std::to_string(cos.dim(0)) +
                                 " positions");
    }
    positions.resize(static_cast<size_t>(p.B * p.S));
    for (int64_t bs = 0; bs < p.B * p.S; ++bs) positions[static_cast<size_t>(bs)] = start + bs % p.S;
    return positions;
  }
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
    const RotaryEmbeddingPlan& p = ctx.state<RotaryEmbeddingPlan>();
    const Tensor& cos = ctx.required_input(p.cos_in);
    const Tensor& sin = ctx.required_input(p.sin_in);
    const Tensor* pos = ctx.input(p.pos_in);
    const int64_t B = p.B, H = p.H, S = p.S, D = p.D, sb = p.sb, sh = p.sh, ss = p.ss, rot = p.rot, half = p.half;
    const std::vector<int64_t> positions = RotaryEmbeddingPositions(p, pos, cos, ctx.Describe());
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
          const int64_t row = positions.empty() ? bs : positions[static_cast<size_t>(bs)];
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
  // com.microsoft, group "attention": the same kernel (the attributes and Prepare read the contrib form).
  r.Add({.op = "RotaryEmbedding",
         .domain = "com.microsoft",
         .since = 1,
         .types = {{"T", {DataType::kFloat, DataType::kFloat16, DataType::kBFloat16}}, {"M", {DataType::kInt64}}},
         .create = MakeKernel<RotaryEmbedding>});
}

}  // namespace ferry::ref
