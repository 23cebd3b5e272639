// com.microsoft::AttnLSTM: an LSTM whose every step also reads the attention state of the previous step (TF's
// AttentionWrapper around an LSTMCell with Bahdanau attention), as ONNX Runtime computes it (float, double).
// Inputs: X [S, B, I], W [D, 4H, I + As], R [D, 4H, H], B [D, 8H] (Wb then Rb, gates i o f c), sequence_lens [B],
// initial_h / initial_c [D, B, H], P [D, 3H] (peepholes i o f), QW [D, H, Aq], MW [D, Md, Aq], V [D, Aq],
// M (memory) [B, Tm, Md], memory_seq_lens [B] (in [1, Tm], default Tm), AW [D, H + Md, Aw] (optional).
// Per direction, with the attention state A_0 = 0 ([B, As], As = Aw with AW, else Md) and keys = M * MW:
//   gates = Xt * W[:, :I]^T + A_{t-1} * W[:, I:]^T + H_{t-1} * R^T + Wb + Rb, then the LSTM cell of the ONNX LSTM
//   (peepholes, clip, input_forget, activations f g h: default Sigmoid Tanh Tanh) gives C_t and H_t;
//   align[s] = softmax over s < memory_seq_lens[b] of sum_k V[k] tanh(keys[b, s, k] + (H_t * QW)[b, k]) (exp
//   without max subtraction, a uniform 1 / len when the sum is 0), context = align * M[b];
//   A_t = context, or with AW: H_t * AW[:H] + context * AW[H:].
// direction forward / reverse / bidirectional (the second direction uses the second halves of QW, MW, V, AW and
// activations 3-5); a reverse row walks its own sequence_lens[b] steps backwards. Y [S, D, B, H] is 0 past each
// row's length; Y_h and Y_c are the states after each row's last step. sequence_lens must be in [1, S].
#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include "kernels/kernel_def.h"
#include "kernels/ref/common.h"
#include "kernels/ref/rnn_common.h"
#include "kernels/registry.h"

namespace ferry::ref {
namespace {

enum Input { kX, kW, kR, kB, kSeqLens, kH0, kC0, kP, kQW, kMW, kV, kM, kMemLens, kAW };

struct Dims {
  int64_t seq = 0, batch = 0, input = 0, hidden = 0, dirs = 1, aq = 0, mem_steps = 0, mem_depth = 0, aw = 0, attn = 0;
  bool has_aw = false;
};

class AttnLstm : public OpKernel {
 public:
  explicit AttnLstm(const ir::Node& node)
      : attrs_(rnn::ParseAttributes(node, {"Sigmoid", "Tanh", "Tanh"})),
        input_forget_(node.GetInt("input_forget", 0) != 0) {}

  void Prepare(PrepareContext& ctx) const override {
    const std::string what = ctx.Describe();
    for (int i : {kX, kW, kR, kQW, kMW, kV, kM}) {
      if (!ctx.has_input(i)) throw InvalidArgumentError(what + ": input " + std::to_string(i) + " is required");
    }
    const InputSpec& x = ctx.tensor_input(kX);
    auto shape_of = [&](int i) -> const Shape* { return ctx.has_input(i) ? &ctx.tensor_input(i).shape : nullptr; };
    auto expect = [&](int i, const Shape& want) {
      const Shape* s = shape_of(i);
      if (!s) return;
      if (*s != want || ctx.tensor_input(i).dtype != (i == kSeqLens || i == kMemLens ? DataType::kInt32 : x.dtype)) {
        throw InvalidArgumentError(
            what + ": input " + ctx.InputString(i) + " must be " +
            std::string(DataTypeName(i == kSeqLens || i == kMemLens ? DataType::kInt32 : x.dtype)) +
            ShapeToString(want));
      }
    };
    if (x.shape.size() != 3) throw InvalidArgumentError(what + ": X must be [S, B, I], got " + ctx.InputString(kX));
    const Shape& r = ctx.tensor_input(kR).shape;
    const Shape& m = ctx.tensor_input(kM).shape;
    const Shape& mw = ctx.tensor_input(kMW).shape;
    const Shape& qw = ctx.tensor_input(kQW).shape;
    if (r.size() != 3 || m.size() != 3 || mw.size() != 3 || qw.size() != 3) {
      throw InvalidArgumentError(what + ": R, QW, MW and M must be 3-D, got " + ctx.InputString(kR) + ", " +
                                 ctx.InputString(kQW) + ", " + ctx.InputString(kMW) + ", " + ctx.InputString(kM));
    }
    Dims d;
    d.seq = x.shape[0];
    d.batch = x.shape[1];
    d.input = x.shape[2];
    d.dirs = attrs_.num_directions;
    d.hidden = attrs_.hidden_size > 0 ? attrs_.hidden_size : r[2];
    d.aq = mw[2];
    d.mem_steps = m[1];
    d.mem_depth = m[2];
    d.has_aw = ctx.has_input(kAW);
    if (d.has_aw) {
      const Shape& aw = ctx.tensor_input(kAW).shape;
      if (aw.size() != 3) throw InvalidArgumentError(what + ": AW must be 3-D, got " + ctx.InputString(kAW));
      d.aw = aw[2];
      expect(kAW, {d.dirs, d.hidden + d.mem_depth, d.aw});
    }
    d.attn = d.has_aw ? d.aw : d.mem_depth;
    const int64_t H = d.hidden, D = d.dirs;
    expect(kW, {D, 4 * H, d.input + d.attn});
    expect(kR, {D, 4 * H, H});
    expect(kB, {D, 8 * H});
    expect(kSeqLens, {d.batch});
    expect(kH0, {D, d.batch, H});
    expect(kC0, {D, d.batch, H});
    expect(kP, {D, 3 * H});
    expect(kQW, {D, H, d.aq});
    expect(kMW, {D, d.mem_depth, d.aq});
    expect(kV, {D, d.aq});
    expect(kM, {d.batch, d.mem_steps, d.mem_depth});
    expect(kMemLens, {d.batch});
    ctx.SetOutput(0, x.dtype, {d.seq, D, d.batch, H});
    if (ctx.output_count() > 1) ctx.SetOutput(1, x.dtype, {D, d.batch, H});
    if (ctx.output_count() > 2) ctx.SetOutput(2, x.dtype, {D, d.batch, H});
    ctx.EmplaceState(d);
  }

  void Compute(KernelContext& ctx) const override {
    Dispatch(TypeList<float, double>{}, ctx.required_input(kX).dtype(), ctx, [&](auto tag) {
      using T = decltype(tag);
      Run<T>(ctx);
    });
  }

 private:
  // The int32 lengths of input `i` (all `def` when absent), each checked to be in [1, max].
  static std::vector<int64_t> Lengths(const KernelContext& ctx, int i, int64_t batch, int64_t max, const char* name) {
    std::vector<int64_t> lens(static_cast<size_t>(batch), max);
    if (const Tensor* t = ctx.input(i)) {
      for (int64_t b = 0; b < batch; ++b) {
        lens[static_cast<size_t>(b)] = t->data<int32_t>()[b];
        if (lens[static_cast<size_t>(b)] < 1 || lens[static_cast<size_t>(b)] > max) {
          throw InvalidArgumentError(ctx.Describe() + ": " + name + "[" + std::to_string(b) +
                                     "] = " + std::to_string(lens[static_cast<size_t>(b)]) + " is outside [1, " +
                                     std::to_string(max) + "]");
        }
      }
    }
    return lens;
  }

  template <typename T>
  void Run(KernelContext& ctx) const {
    const Dims& d = ctx.state<Dims>();
    const int64_t S = d.seq, Bn = d.batch, I = d.input, H = d.hidden, D = d.dirs, As = d.attn;
    const int64_t Tm = d.mem_steps, Md = d.mem_depth, Aq = d.aq, Aw = d.aw;
    const std::vector<int64_t> lens = Lengths(ctx, kSeqLens, Bn, S, "sequence_lens");
    const std::vector<int64_t> mem_lens = Lengths(ctx, kMemLens, Bn, Tm, "memory_seq_lens");
    auto data = [&](int i) -> const T* { return ctx.input(i) ? ctx.input(i)->template data<T>() : nullptr; };
    const T *x = data(kX), *w = data(kW), *r = data(kR), *bias = data(kB), *h0 = data(kH0), *c0 = data(kC0);
    const T *p = data(kP), *qw = data(kQW), *mw = data(kMW), *v = data(kV), *mem = data(kM), *aw = data(kAW);
    std::vector<T> y(static_cast<size_t>(S * D * Bn * H), T(0));
    std::vector<T> yh(static_cast<size_t>(D * Bn * H)), yc(static_cast<size_t>(D * Bn * H));
    for (int64_t dir = 0; dir < D; ++dir) {
      const T* wd = w + dir * 4 * H * (I + As);
      const T* rd = r + dir * 4 * H * H;
      const T* qwd = qw + dir * H * Aq;
      const T* mwd = mw + dir * Md * Aq;
      const T* vd = v + dir * Aq;
      const T* awd = aw ? aw + dir * (H + Md) * Aw : nullptr;
      const rnn::Activation& f = attrs_.act(dir, 0);
      const rnn::Activation& g = attrs_.act(dir, 1);
      const rnn::Activation& hact = attrs_.act(dir, 2);
      // keys = M * MW: [B, Tm, Aq].
      std::vector<T> keys(static_cast<size_t>(Bn * Tm * Aq), T(0));
      for (int64_t row = 0; row < Bn * Tm; ++row) {
        for (int64_t k = 0; k < Md; ++k) {
          const T mv = mem[row * Md + k];
          for (int64_t a = 0; a < Aq; ++a) keys[static_cast<size_t>(row * Aq + a)] += mv * mwd[k * Aq + a];
        }
      }
      std::vector<T> h(static_cast<size_t>(Bn * H), T(0)), c(static_cast<size_t>(Bn * H), T(0));
      if (h0) std::copy_n(h0 + dir * Bn * H, Bn * H, h.begin());
      if (c0) std::copy_n(c0 + dir * Bn * H, Bn * H, c.begin());
      std::vector<T> attn(static_cast<size_t>(Bn * As), T(0)), step_h(static_cast<size_t>(Bn * H));
      std::vector<T> gates(static_cast<size_t>(4 * H)), hc(static_cast<size_t>(H));
      const int64_t max_len = *std::max_element(lens.begin(), lens.end());
      for (int64_t s = 0; s < max_len; ++s) {
        for (int64_t b = 0; b < Bn; ++b) {
          T* hb = h.data() + b * H;
          T* cb = c.data() + b * H;
          T* out = step_h.data() + b * H;
          const int64_t len = lens[static_cast<size_t>(b)];
          if (s >= len) {  // finished: its output (and what the attention reads) is 0
            std::fill_n(out, H, T(0));
            continue;
          }
          const int64_t t = rnn::TimeIndex(attrs_, dir, len, s);
          const T* xt = x + (t * Bn + b) * I;
          const T* ab = attn.data() + b * As;
          for (int64_t gi = 0; gi < 4 * H; ++gi) {
            const T* wrow = wd + gi * (I + As);
            const T* rrow = rd + gi * H;
            T acc = bias ? bias[dir * 8 * H + gi] + bias[dir * 8 * H + 4 * H + gi] : T(0);
            for (int64_t k = 0; k < I; ++k) acc += xt[k] * wrow[k];
            for (int64_t k = 0; k < As; ++k) acc += ab[k] * wrow[I + k];
            for (int64_t k = 0; k < H; ++k) acc += hb[k] * rrow[k];
            gates[static_cast<size_t>(gi)] = acc;
          }
          T* i_g = gates.data();
          T* o_g = i_g + H;
          T* f_g = i_g + 2 * H;
          T* c_g = i_g + 3 * H;
          const T* pi = p ? p + dir * 3 * H : nullptr;
          for (int64_t k = 0; pi && k < H; ++k) {
            i_g[k] += pi[k] * cb[k];
            f_g[k] += pi[2 * H + k] * cb[k];
          }
          rnn::Clip(i_g, H, attrs_.clip);
          f.Apply(i_g, H);
          if (input_forget_) {
            for (int64_t k = 0; k < H; ++k) f_g[k] = T(1) - i_g[k];
          } else {
            rnn::Clip(f_g, H, attrs_.clip);
            f.Apply(f_g, H);
          }
          rnn::Clip(c_g, H, attrs_.clip);
          g.Apply(c_g, H);
          for (int64_t k = 0; k < H; ++k) cb[k] = f_g[k] * cb[k] + i_g[k] * c_g[k];
          for (int64_t k = 0; pi && k < H; ++k) o_g[k] += pi[H + k] * cb[k];
          rnn::Clip(o_g, H, attrs_.clip);
          f.Apply(o_g, H);
          std::copy_n(cb, H, hc.data());
          hact.Apply(hc.data(), H);
          for (int64_t k = 0; k < H; ++k) hb[k] = o_g[k] * hc[k];
          std::copy_n(hb, H, out);
          std::copy_n(hb, H, y.data() + ((t * D + dir) * Bn + b) * H);
          if (s + 1 == len) {
            std::copy_n(hb, H, yh.data() + (dir * Bn + b) * H);
            std::copy_n(cb, H, yc.data() + (dir * Bn + b) * H);
          }
        }
        Attend(step_h, keys, mem, mem_lens, qwd, vd, awd, d, attn);
      }
    }
    auto write = [&](int i, const std::vector<T>& v) {
      if (i < ctx.output_count() && ctx.output_requested(i)) std::copy(v.begin(), v.end(), ctx.Output(i).data<T>());
    };
    write(0, y);
    write(1, yh);
    write(2, yc);
  }

  // The attention state after a step from each row's output `hs` [B, H]: Bahdanau attention over the memory,
  // then the attention layer (AW) when there is one.
  template <typename T>
  static void Attend(const std::vector<T>& hs, const std::vector<T>& keys, const T* mem,
                     const std::vector<int64_t>& mem_lens, const T* qw, const T* v, const T* aw, const Dims& d,
                     std::vector<T>& attn) {
    const int64_t H = d.hidden, Tm = d.mem_steps, Md = d.mem_depth, Aq = d.aq, Aw = d.aw;
    std::vector<T> query(static_cast<size_t>(Aq)), align(static_cast<size_t>(Tm)), context(static_cast<size_t>(Md));
    for (int64_t b = 0; b < d.batch; ++b) {
      const T* hb = hs.data() + b * H;
      std::fill(query.begin(), query.end(), T(0));
      for (int64_t k = 0; k < H; ++k) {
        for (int64_t a = 0; a < Aq; ++a) query[static_cast<size_t>(a)] += hb[k] * qw[k * Aq + a];
      }
      std::fill(align.begin(), align.end(), T(0));
      const int64_t steps = mem_lens[static_cast<size_t>(b)];
      double sum = 0;
      for (int64_t s = 0; s < steps; ++s) {
        const T* key = keys.data() + (b * Tm + s) * Aq;
        T score = 0;
        for (int64_t a = 0; a < Aq; ++a) score += v[a] * std::tanh(key[a] + query[static_cast<size_t>(a)]);
        align[static_cast<size_t>(s)] = std::exp(score);
        sum += static_cast<double>(align[static_cast<size_t>(s)]);
      }
      for (int64_t s = 0; s < steps; ++s) {
        align[static_cast<size_t>(s)] = sum == 0.0 ? static_cast<T>(1.0 / static_cast<double>(steps))
                                                   : static_cast<T>(align[static_cast<size_t>(s)] / sum);
      }
      std::fill(context.begin(), context.end(), T(0));
      for (int64_t s = 0; s < Tm; ++s) {
        const T* row = mem + (b * Tm + s) * Md;
        for (int64_t k = 0; k < Md; ++k) context[static_cast<size_t>(k)] += align[static_cast<size_t>(s)] * row[k];
      }
      T* ab = attn.data() + b * d.attn;
      if (!aw) {
        std::copy(context.begin(), context.end(), ab);
        continue;
      }
      std::fill_n(ab, Aw, T(0));
      for (int64_t k = 0; k < H; ++k) {
        for (int64_t a = 0; a < Aw; ++a) ab[a] += hb[k] * aw[k * Aw + a];
      }
      for (int64_t k = 0; k < Md; ++k) {
        for (int64_t a = 0; a < Aw; ++a) ab[a] += context[static_cast<size_t>(k)] * aw[(H + k) * Aw + a];
      }
    }
  }

  rnn::Attributes attrs_;
  bool input_forget_;
};

}  // namespace

void RegisterAttnLstmKernels(KernelRegistry& r) {
  r.Add({.op = "AttnLSTM",
         .domain = "com.microsoft",
         .since = 1,
         .types = {{"T", {DataType::kFloat, DataType::kDouble}}, {"T1", {DataType::kInt32}}},
         .create = MakeKernel<AttnLstm>});
}

}  // namespace ferry::ref
