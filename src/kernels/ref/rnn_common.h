// Shared pieces of the reference RNN, GRU and LSTM kernels: attribute parsing (direction, hidden_size, clip,
// layout, activation list with alpha/beta), input validation (Prepare) and conversion to the compute type in layout 0,
// the input projection X*W^T + bias, per-step row bookkeeping for sequence_lens, activations, and output writing.
//
// Internally everything is in layout 0: X [seq, batch, input], states [dir, batch, hidden],
// Y [seq, dir, batch, hidden]. Layout 1 (opset 14+) is converted on the way in and out.
#pragma once

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdint>
#include <string>
#include <vector>

#include "core/parallel.h"
#include "kernels/kernel.h"
#include "kernels/ref/common.h"

namespace ferry::ref::rnn {

enum class Direction { kForward, kReverse, kBidirectional };

// One activation function of the RNN family ("Tanh", "Sigmoid", "Relu", "Affine", "LeakyRelu",
// "ThresholdedRelu", "ScaledTanh", "HardSigmoid", "Elu", "Softsign", "Softplus"), with its alpha/beta.
struct Activation {
  enum class Kind {
    kRelu,
    kTanh,
    kSigmoid,
    kAffine,
    kLeakyRelu,
    kThresholdedRelu,
    kScaledTanh,
    kHardSigmoid,
    kElu,
    kSoftsign,
    kSoftplus
  };
  Kind kind = Kind::kTanh;
  float alpha = 0;
  float beta = 0;

  // Applies the function in place to x[0..n); the switch is outside the element loop.
  template <typename A>
  void Apply(A* x, int64_t n) const {
    const A a = static_cast<A>(alpha), b = static_cast<A>(beta);
    switch (kind) {
      case Kind::kRelu:
        for (int64_t i = 0; i < n; ++i) x[i] = x[i] > A(0) ? x[i] : A(0);
        break;
      case Kind::kTanh:
        for (int64_t i = 0; i < n; ++i) x[i] = std::tanh(x[i]);
        break;
      case Kind::kSigmoid:
        for (int64_t i = 0; i < n; ++i) {
          // Stable for large |x|.
          x[i] = x[i] >= A(0) ? A(1) / (A(1) + std::exp(-x[i])) : std::exp(x[i]) / (A(1) + std::exp(x[i]));
        }
        break;
      case Kind::kAffine:
        for (int64_t i = 0; i < n; ++i) x[i] = a * x[i] + b;
        break;
      case Kind::kLeakyRelu:
        for (int64_t i = 0; i < n; ++i) x[i] = x[i] >= A(0) ? x[i] : a * x[i];
        break;
      case Kind::kThresholdedRelu:
        for (int64_t i = 0; i < n; ++i) x[i] = x[i] > a ? x[i] : A(0);
        break;
      case Kind::kScaledTanh:
        for (int64_t i = 0; i < n; ++i) x[i] = a * std::tanh(b * x[i]);
        break;
      case Kind::kHardSigmoid:
        for (int64_t i = 0; i < n; ++i) x[i] = std::min(std::max(a * x[i] + b, A(0)), A(1));
        break;
      case Kind::kElu:
        for (int64_t i = 0; i < n; ++i) x[i] = x[i] >= A(0) ? x[i] : a * (std::exp(x[i]) - A(1));
        break;
      case Kind::kSoftsign:
        for (int64_t i = 0; i < n; ++i) x[i] = x[i] / (A(1) + std::abs(x[i]));
        break;
      case Kind::kSoftplus:
        for (int64_t i = 0; i < n; ++i) {
          x[i] = x[i] > A(0) ? x[i] + std::log1p(std::exp(-x[i])) : std::log1p(std::exp(x[i]));
        }
        break;
    }
  }
};

struct Attributes {
  Direction direction = Direction::kForward;
  int64_t num_directions = 1;
  int64_t hidden_size = 0;  // 0: not given, taken from R's shape
  float clip = 0;           // > 0: clip gate pre-activations to [-clip, clip]
  int64_t layout = 0;
  int per_direction = 1;                // activations per direction (RNN 1, GRU 2, LSTM 3)
  std::vector<Activation> activations;  // num_directions * per_direction, forward direction first

  const Activation& act(int64_t dir, int k) const { return activations[static_cast<size_t>(dir * per_direction + k)]; }
};

inline std::string Lower(std::string s) {
  for (char& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return s;
}

// Parses the attributes common to RNN/GRU/LSTM. `defaults` are the activations of one direction.
inline Attributes ParseAttributes(const ir::Node& node, const std::vector<std::string>& defaults) {
  Attributes a;
  const std::string dir = node.GetString("direction", "forward");
  if (dir == "forward") {
    a.direction = Direction::kForward;
  } else if (dir == "reverse") {
    a.direction = Direction::kReverse;
  } else if (dir == "bidirectional") {
    a.direction = Direction::kBidirectional;
  } else {
    throw InvalidModelError(node.Describe() +
                            ": attribute 'direction' must be forward, reverse or bidirectional, got '" + dir + "'");
  }
  a.num_directions = a.direction == Direction::kBidirectional ? 2 : 1;
  a.hidden_size = node.GetInt("hidden_size", 0);
  if (a.hidden_size < 0) {
    throw InvalidModelError(node.Describe() + ": attribute 'hidden_size' must be positive, got " +
                            std::to_string(a.hidden_size));
  }
  a.clip = node.has_attr("clip") ? node.GetFloat("clip", 0) : 0;
  if (node.has_attr("clip") && !(a.clip > 0)) {
    throw InvalidModelError(node.Describe() + ": attribute 'clip' must be positive, got " + std::to_string(a.clip));
  }
  a.layout = node.GetInt("layout", 0);
  if (a.layout != 0 && a.layout != 1) {
    throw InvalidModelError(node.Describe() + ": attribute 'layout' must be 0 or 1, got " + std::to_string(a.layout));
  }
  a.per_direction = static_cast<int>(defaults.size());

  std::vector<std::string> names = node.GetStrings("activations");
  const size_t want = static_cast<size_t>(a.per_direction * a.num_directions);
  if (names.empty()) {
    for (int64_t d = 0; d < a.num_directions; ++d) names.insert(names.end(), defaults.begin(), defaults.end());
  } else if (names.size() == defaults.size() && a.num_directions == 2) {
    names.insert(names.end(), names.begin(), names.end());  // the same functions for both directions
  }
  if (names.size() != want) {
    throw InvalidModelError(node.Describe() + ": attribute 'activations' has " + std::to_string(names.size()) +
                            " entries, expected " + std::to_string(want));
  }
  const std::vector<float> alphas = node.GetFloats("activation_alpha");
  const std::vector<float> betas = node.GetFloats("activation_beta");
  size_t next_alpha = 0, next_beta = 0;
  auto take = [](const std::vector<float>& v, size_t& next, float def) { return next < v.size() ? v[next++] : def; };
  for (const std::string& raw : names) {
    using K = Activation::Kind;
    Activation act;
    const std::string n = Lower(raw);
    if (n == "relu") {
      act.kind = K::kRelu;
    } else if (n == "tanh") {
      act.kind = K::kTanh;
    } else if (n == "sigmoid") {
      act.kind = K::kSigmoid;
    } else if (n == "affine") {
      act.kind = K::kAffine;
      act.alpha = take(alphas, next_alpha, 1.0f);
      act.beta = take(betas, next_beta, 0.0f);
    } else if (n == "leakyrelu") {
      act.kind = K::kLeakyRelu;
      act.alpha = take(alphas, next_alpha, 0.01f);
    } else if (n == "thresholdedrelu") {
      act.kind = K::kThresholdedRelu;
      act.alpha = take(alphas, next_alpha, 1.0f);
    } else if (n == "scaledtanh") {
      act.kind = K::kScaledTanh;
      act.alpha = take(alphas, next_alpha, 1.0f);
      act.beta = take(betas, next_beta, 1.0f);
    } else if (n == "hardsigmoid") {
      act.kind = K::kHardSigmoid;
      act.alpha = take(alphas, next_alpha, 0.2f);
      act.beta = take(betas, next_beta, 0.5f);
    } else if (n == "elu") {
      act.kind = K::kElu;
      act.alpha = take(alphas, next_alpha, 1.0f);
    } else if (n == "softsign") {
      act.kind = K::kSoftsign;
    } else if (n == "softplus") {
      act.kind = K::kSoftplus;
    } else {
      throw InvalidModelError(node.Describe() + ": unknown activation '" + raw + "'");
    }
    a.activations.push_back(act);
  }
  return a;
}

// Validated inputs in the compute type A and layout 0. `gates` is 1 (RNN), 3 (GRU) or 4 (LSTM).
template <typename A>
struct Inputs {
  int64_t seq = 0, batch = 0, input_size = 0, hidden = 0, num_dir = 1;
  std::vector<A> x;           // [seq, batch, input]
  std::vector<A> w;           // [dir, gates*hidden, input]
  std::vector<A> r;           // [dir, gates*hidden, hidden]
  std::vector<A> b;           // [dir, 2*gates*hidden]: Wb then Rb; zeros when absent
  std::vector<int64_t> lens;  // [batch]
  std::vector<A> h0;          // [dir, batch, hidden]; zeros when absent
  std::vector<A> c0;          // LSTM: [dir, batch, hidden]; zeros when absent
  std::vector<A> p;           // LSTM: [dir, 3*hidden]; zeros when absent
};

template <typename T>
std::vector<Acc<T>> ToAcc(const Tensor& t) {
  std::vector<Acc<T>> out(static_cast<size_t>(t.size()));
  const T* p = t.data<T>();
  for (size_t i = 0; i < out.size(); ++i) out[i] = static_cast<Acc<T>>(p[i]);
  return out;
}

// [d0, d1, inner] -> [d1, d0, inner].
template <typename A>
std::vector<A> SwapLeadingDims(const std::vector<A>& in, int64_t d0, int64_t d1, int64_t inner) {
  std::vector<A> out(in.size());
  for (int64_t i = 0; i < d0; ++i) {
    for (int64_t j = 0; j < d1; ++j) {
      std::copy_n(in.begin() + (i * d1 + j) * inner, inner, out.begin() + (j * d0 + i) * inner);
    }
  }
  return out;
}

// Prepare of RNN, GRU and LSTM: the dtype and shape checks of X, W, R, B, sequence_lens, initial_h (and for LSTM
// initial_c, P) on the shapes Prepare sees, and the outputs' shapes: Y, Y_h (and for LSTM Y_c) in the node's
// layout. `gates` is 1 (RNN), 3 (GRU) or 4 (LSTM). The values of sequence_lens are data: ReadInputs checks them
// when Compute runs.
inline void Prepare(PrepareContext& ctx, const Attributes& attrs, int64_t gates, bool lstm) {
  const InputSpec& x = ctx.tensor_input(0);
  const InputSpec& w = ctx.tensor_input(1);
  const InputSpec& r = ctx.tensor_input(2);
  for (const InputSpec* t : {&x, &w, &r}) {
    if (t->dtype != x.dtype) {
      throw InvalidArgumentError(ctx.Describe() + ": inputs X, W and R must share one type, got " +
                                 std::string(DataTypeName(x.dtype)) + " and " + std::string(DataTypeName(t->dtype)));
    }
  }
  if (x.shape.size() != 3 || w.shape.size() != 3 || r.shape.size() != 3) {
    throw InvalidArgumentError(ctx.Describe() + ": X, W and R must have rank 3, got " + ShapeToString(x.shape) +
                               ", " + ShapeToString(w.shape) + ", " + ShapeToString(r.shape));
  }
  const int64_t dir = attrs.num_directions;
  const int64_t seq = attrs.layout == 0 ? x.shape[0] : x.shape[1];
  const int64_t batch = attrs.layout == 0 ? x.shape[1] : x.shape[0];
  const int64_t hid = attrs.hidden_size > 0 ? attrs.hidden_size : r.shape[2];
  auto check_shape = [&](int i, const char* name, const Shape& expect) {
    const Shape& got = ctx.input(i).shape;
    if (got != expect) {
      throw InvalidArgumentError(ctx.Describe() + ": input '" + name + "' has shape " + ShapeToString(got) +
                                 ", expected " + ShapeToString(expect));
    }
  };
  check_shape(1, "W", {dir, gates * hid, x.shape[2]});
  check_shape(2, "R", {dir, gates * hid, hid});
  auto optional_float = [&](int i, const char* name, const Shape& expect) {
    if (!ctx.has_input(i)) return;
    const InputSpec& t = ctx.tensor_input(i);
    if (t.dtype != x.dtype) {
      throw InvalidArgumentError(ctx.Describe() + ": input '" + name + "' has type " +
                                 std::string(DataTypeName(t.dtype)) + ", expected " +
                                 std::string(DataTypeName(x.dtype)));
    }
    check_shape(i, name, expect);
  };
  const Shape state_shape = attrs.layout == 0 ? Shape{dir, batch, hid} : Shape{batch, dir, hid};
  optional_float(3, "B", {dir, 2 * gates * hid});
  if (ctx.has_input(4)) {
    const InputSpec& sl = ctx.tensor_input(4);
    if (sl.dtype != DataType::kInt64 && sl.dtype != DataType::kInt32) {
      throw InvalidArgumentError(ctx.Describe() + ": input 'sequence_lens': expected an int32 or int64 tensor, got " +
                                 std::string(DataTypeName(sl.dtype)));
    }
    const int64_t count = ShapeElementCount(sl.shape);
    if (count != batch) {
      throw InvalidArgumentError(ctx.Describe() + ": input 'sequence_lens' has " + std::to_string(count) +
                                 " values, expected batch size " + std::to_string(batch));
    }
  }
  optional_float(5, "initial_h", state_shape);
  if (lstm) {
    optional_float(6, "initial_c", state_shape);
    optional_float(7, "P", {dir, 3 * hid});
  }
  for (int i = 0; i < ctx.output_count(); ++i) {
    if (i == 0) {
      ctx.SetOutput(0, x.dtype, attrs.layout == 0 ? Shape{seq, dir, batch, hid} : Shape{batch, seq, dir, hid});
    } else if (i == 1 || (lstm && i == 2)) {
      ctx.SetOutput(i, x.dtype, state_shape);
    }
  }
}

// Reads X, W, R, B, sequence_lens, initial_h (and for LSTM initial_c, P) into the compute type and layout 0.
// Prepare checked their dtypes and shapes; what is left to check is data: the values of sequence_lens.
template <typename T>
Inputs<Acc<T>> ReadInputs(const KernelContext& ctx, const Attributes& attrs, int64_t gates, bool lstm) {
  using A = Acc<T>;
  Inputs<A> in;
  const Tensor& x = ctx.required_input(0);
  const Tensor& r = ctx.required_input(2);
  in.num_dir = attrs.num_directions;
  in.seq = attrs.layout == 0 ? x.dim(0) : x.dim(1);
  in.batch = attrs.layout == 0 ? x.dim(1) : x.dim(0);
  in.input_size = x.dim(2);
  in.hidden = attrs.hidden_size > 0 ? attrs.hidden_size : r.dim(2);
  const int64_t dir = in.num_dir, hid = in.hidden, batch = in.batch;
  in.x = ToAcc<T>(x);
  if (attrs.layout == 1) in.x = SwapLeadingDims(in.x, batch, in.seq, in.input_size);
  in.w = ToAcc<T>(ctx.required_input(1));
  in.r = ToAcc<T>(r);

  if (const Tensor* b = ctx.input(3)) {
    in.b = ToAcc<T>(*b);
  } else {
    in.b.assign(static_cast<size_t>(dir * 2 * gates * hid), A(0));
  }
  in.lens.assign(static_cast<size_t>(batch), in.seq);
  if (const Tensor* sl = ctx.input(4)) {
    in.lens = ReadInt64s(*sl, ctx.Describe() + ": input 'sequence_lens'");
    for (int64_t l : in.lens) {
      if (l < 0 || l > in.seq) {
        throw InvalidArgumentError(ctx.Describe() + ": sequence_lens value " + std::to_string(l) + " is outside [0, " +
                                   std::to_string(in.seq) + "]");
      }
    }
  }
  auto state = [&](int idx) {
    std::vector<A> s;
    if (const Tensor* t = ctx.input(idx)) {
      s = ToAcc<T>(*t);
      if (attrs.layout == 1) s = SwapLeadingDims(s, batch, dir, hid);
    } else {
      s.assign(static_cast<size_t>(dir * batch * hid), A(0));
    }
    return s;
  };
  in.h0 = state(5);
  if (lstm) {
    in.c0 = state(6);
    if (const Tensor* p = ctx.input(7)) {
      in.p = ToAcc<T>(*p);
    } else {
      in.p.assign(static_cast<size_t>(dir * 3 * hid), A(0));
    }
  }
  return in;
}

// xw[(t * batch + b) * G + g] = sum_k x[t, b, k] * W[dir, g, k] + bias[g] (+ bias2[g] when given), G = gates*hidden.
template <typename A>
std::vector<A> ProjectInput(const Inputs<A>& in, int64_t dir, int64_t gates, const A* bias, const A* bias2,
                            int threads) {
  const int64_t rows = in.seq * in.batch, G = gates * in.hidden, K = in.input_size;
  std::vector<A> xw(static_cast<size_t>(rows * G));
  const A* w = in.w.data() + dir * G * K;
  ParallelFor(threads, rows, std::max<int64_t>(1, 4096 / std::max<int64_t>(G * K, 1)), [&](int64_t r0, int64_t r1) {
    for (int64_t row = r0; row < r1; ++row) {
      const A* xr = in.x.data() + row * K;
      A* out = xw.data() + row * G;
      for (int64_t g = 0; g < G; ++g) {
        const A* wr = w + g * K;
        A acc = bias[g] + (bias2 ? bias2[g] : A(0));
        for (int64_t k = 0; k < K; ++k) acc += xr[k] * wr[k];
        out[g] = acc;
      }
    }
  });
  return xw;
}

// out[g] += sum_k m[g, k] * v[k] for g in [0, rows).
template <typename A>
void AddMatVec(const A* m, const A* v, A* out, int64_t rows, int64_t k) {
  for (int64_t g = 0; g < rows; ++g) {
    const A* mr = m + g * k;
    A acc = A(0);
    for (int64_t j = 0; j < k; ++j) acc += mr[j] * v[j];
    out[g] += acc;
  }
}

template <typename A>
void Clip(A* x, int64_t n, float clip) {
  if (!(clip > 0)) return;
  const A c = static_cast<A>(clip);
  for (int64_t i = 0; i < n; ++i) x[i] = std::min(std::max(x[i], -c), c);
}

// Time index processed by batch row `b` at step `step` (< lens[b]) of direction `dir`: forward rows walk
// 0..len-1, reverse rows walk len-1..0 (each row reversed within its own length).
inline int64_t TimeIndex(const Attributes& attrs, int64_t dir, int64_t len, int64_t step) {
  const bool reverse = attrs.direction == Direction::kReverse || dir == 1;
  return reverse ? len - 1 - step : step;
}

// Writes Y ([seq, dir, batch, hidden] in `y`), Y_h and Y_c (states [dir, batch, hidden]) to outputs 0, 1, 2 in the
// node's layout, converting back to T. `yc` may be null (RNN, GRU).
template <typename T>
void WriteOutputs(KernelContext& ctx, const Attributes& attrs, const Inputs<Acc<T>>& in, const std::vector<Acc<T>>& y,
                  const std::vector<Acc<T>>& yh, const std::vector<Acc<T>>* yc, DataType dtype) {
  const int64_t seq = in.seq, dir = in.num_dir, batch = in.batch, hid = in.hidden;
  auto store = [](const std::vector<Acc<T>>& src, Tensor& dst) {
    T* p = dst.data<T>();
    for (size_t i = 0; i < src.size(); ++i) p[i] = static_cast<T>(src[i]);
  };
  if (ctx.output_requested(0)) {
    if (attrs.layout == 0) {
      store(y, ctx.Output(0, dtype, {seq, dir, batch, hid}));
    } else {
      // [seq, dir, batch, hid] -> [batch, seq, dir, hid]
      std::vector<Acc<T>> t(y.size());
      for (int64_t s = 0; s < seq; ++s)
        for (int64_t d = 0; d < dir; ++d)
          for (int64_t b = 0; b < batch; ++b)
            std::copy_n(y.begin() + ((s * dir + d) * batch + b) * hid, hid,
                        t.begin() + ((b * seq + s) * dir + d) * hid);
      store(t, ctx.Output(0, dtype, {batch, seq, dir, hid}));
    }
  }
  auto write_state = [&](int idx, const std::vector<Acc<T>>& s) {
    if (!ctx.output_requested(idx)) return;
    if (attrs.layout == 0) {
      store(s, ctx.Output(idx, dtype, {dir, batch, hid}));
    } else {
      store(SwapLeadingDims(s, dir, batch, hid), ctx.Output(idx, dtype, {batch, dir, hid}));
    }
  };
  write_state(1, yh);
  if (yc) write_state(2, *yc);
}

}  // namespace ferry::ref::rnn
