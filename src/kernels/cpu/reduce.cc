// ReduceSum, ReduceMean, ReduceProd, ReduceMax, ReduceMin, ReduceL1, ReduceL2, ReduceLogSum, ReduceLogSumExp and
// ReduceSumSquare on the cpu backend: float32 with AVX-512F / AVX2+FMA loops (reduce_kernels.inc), and int32/int64
// (shape arithmetic: sums, products, extrema of dims) through ref's reduction engine with ref's integer semantics.
//
// Prepare resolves the axes (the attribute before opset 13 / 18, the `axes` input after: constant or omitted, else
// Compute reads it) into ref's ReducePlan (kernels/ref/reduce.h: size-1 dims dropped, neighbouring kept / reduced
// dims merged) plus the offsets of every reduced run, kept as state. Compute then takes one of two shapes:
//   - innermost run reduced (ReduceMean over H,W of NCHW, over the last axis): each output folds its contiguous
//     runs with four vector accumulators and a horizontal merge; threads split the outputs;
//   - innermost run kept (reducing C of NCHW, axis 0 of [R, K]): output rows are accumulated in place, vertical
//     SIMD over the kept columns; threads split (row, column block) pairs.
// Float32 accumulates in float (ref: double), so sums differ from ref by rounding only. NaN propagates, ±inf as in
// ref; an empty reduction gives each op's identity (Sum 0, Prod 1, Max -inf, Min +inf, LogSum(Exp) -inf, Mean
// NaN); noop_with_empty_axes with no axes makes the op a view of its input. ReduceLogSumExp is max, then
// max + log(sum e^(x - max)) (ref's online form gives the same: -inf when every element is -inf, +inf with +inf).
#include <algorithm>
#include <cmath>
#include <limits>
#include <string>
#include <vector>

#include "core/parallel.h"
#include "kernels/cpu/simd_common.h"
#include "kernels/kernel_def.h"
#include "kernels/ref/common.h"
#include "kernels/ref/reduce.h"
#include "kernels/registry.h"

namespace ferry::cpu {
namespace {

// What the float loops fold (see reduce_kernels.inc).
enum class Fold { kSum, kSumSq, kAbs, kProd, kMax, kMin, kExpShift };

constexpr float FoldIdentity(Fold f) {
  switch (f) {
    case Fold::kProd:
      return 1.0f;
    case Fold::kMax:
      return -std::numeric_limits<float>::infinity();
    case Fold::kMin:
      return std::numeric_limits<float>::infinity();
    default:
      return 0.0f;
  }
}

template <Fold F>
inline float FoldScalar(float a, float x, float s) {
  if constexpr (F == Fold::kSum) {
    return a + x;
  } else if constexpr (F == Fold::kSumSq) {
    return a + x * x;
  } else if constexpr (F == Fold::kAbs) {
    return a + std::fabs(x);
  } else if constexpr (F == Fold::kProd) {
    return a * x;
  } else if constexpr (F == Fold::kMax) {
    return (x > a || std::isnan(x)) ? x : a;
  } else if constexpr (F == Fold::kMin) {
    return (x < a || std::isnan(x)) ? x : a;
  } else {
    return a + std::exp(x - s);
  }
}

// Merges two partial accumulators: partial sums add, the others fold.
template <Fold F>
inline float CombineScalar(float a, float b) {
  if constexpr (F == Fold::kSum || F == Fold::kSumSq || F == Fold::kAbs || F == Fold::kExpShift) {
    return a + b;
  } else {
    return FoldScalar<F>(a, b, 0.0f);
  }
}

struct FoldFns {
  float (*runs)(const float* x, const int64_t* offsets, int64_t count, int64_t inner, float shift);
  void (*columns)(const float* x, const int64_t* offsets, int64_t count, int64_t k, float* acc, const float* shift);
};

#pragma GCC push_options
#pragma GCC target("avx512f")
namespace avx512 {
using V = simd::F32x16;
#include "kernels/cpu/simd_kernels.inc"
#include "kernels/cpu/reduce_kernels.inc"
}  // namespace avx512
#pragma GCC pop_options

#pragma GCC push_options
#pragma GCC target("avx2,fma")
namespace avx2 {
using V = simd::F32x8;
#include "kernels/cpu/simd_kernels.inc"
#include "kernels/cpu/reduce_kernels.inc"
}  // namespace avx2
#pragma GCC pop_options

enum class ReduceKind { kSum, kMean, kProd, kMax, kMin, kL1, kL2, kLogSum, kLogSumExp, kSumSquare };

// The fold a kind's float loop runs (log-sum-exp: kMax, then kExpShift).
Fold FoldOf(ReduceKind kind) {
  switch (kind) {
    case ReduceKind::kSumSquare:
    case ReduceKind::kL2:
      return Fold::kSumSq;
    case ReduceKind::kL1:
      return Fold::kAbs;
    case ReduceKind::kProd:
      return Fold::kProd;
    case ReduceKind::kMax:
    case ReduceKind::kLogSumExp:
      return Fold::kMax;
    case ReduceKind::kMin:
      return Fold::kMin;
    default:
      return Fold::kSum;
  }
}

// A float result from the folded accumulator `a` of `count` elements (`m`: log-sum-exp's max).
inline float Finish(ReduceKind kind, float a, int64_t count, float m) {
  switch (kind) {
    case ReduceKind::kMean:
      return a / static_cast<float>(count);  // an empty reduction: 0 / 0 = NaN, as in ref
    case ReduceKind::kL2:
      return std::sqrt(a);
    case ReduceKind::kLogSum:
      return std::log(a);
    case ReduceKind::kLogSumExp:
      return std::isnan(m) || std::isinf(m) ? m : m + std::log(a);
    default:
      return a;
  }
}

// ---- integer reductions: ref's semantics (sums and products wrap, Mean truncates toward zero) ----------------

template <typename T, ReduceKind K>
struct IntOp {
  using Acc = uint64_t;  // wrapping; Max/Min compare after converting back to T
  static Acc Init() {
    if constexpr (K == ReduceKind::kProd) return 1;
    if constexpr (K == ReduceKind::kMax) return static_cast<Acc>(std::numeric_limits<T>::lowest());
    if constexpr (K == ReduceKind::kMin) return static_cast<Acc>(std::numeric_limits<T>::max());
    return 0;
  }
  static void Update(Acc& a, T x) {
    const Acc w = static_cast<Acc>(x);  // sign-extends: modular arithmetic stays exact
    if constexpr (K == ReduceKind::kProd) {
      a *= w;
    } else if constexpr (K == ReduceKind::kMax) {
      a = static_cast<Acc>(std::max(static_cast<T>(a), x));
    } else if constexpr (K == ReduceKind::kMin) {
      a = static_cast<Acc>(std::min(static_cast<T>(a), x));
    } else if constexpr (K == ReduceKind::kSumSquare) {
      a += w * w;
    } else if constexpr (K == ReduceKind::kL1) {
      a += x < T(0) ? Acc(0) - w : w;
    } else {
      a += w;
    }
  }
  static void Combine(Acc& a, const Acc& b) {
    if constexpr (K == ReduceKind::kProd) {
      a *= b;
    } else if constexpr (K == ReduceKind::kMax || K == ReduceKind::kMin) {
      Update(a, static_cast<T>(b));
    } else {
      a += b;
    }
  }
  static T Finish(const Acc& a, int64_t n) {
    if constexpr (K == ReduceKind::kMean) {
      return n == 0 ? T(0) : static_cast<T>(static_cast<int64_t>(a) / n);
    } else {
      return static_cast<T>(a);
    }
  }
};

template <typename T>
void RunInt(ReduceKind kind, const ref::ReducePlan& plan, const T* x, T* y, int threads) {
  switch (kind) {
    case ReduceKind::kSum:
      return ref::RunReduce<IntOp<T, ReduceKind::kSum>>(plan, x, y, threads);
    case ReduceKind::kMean:
      return ref::RunReduce<IntOp<T, ReduceKind::kMean>>(plan, x, y, threads);
    case ReduceKind::kProd:
      return ref::RunReduce<IntOp<T, ReduceKind::kProd>>(plan, x, y, threads);
    case ReduceKind::kMax:
      return ref::RunReduce<IntOp<T, ReduceKind::kMax>>(plan, x, y, threads);
    case ReduceKind::kMin:
      return ref::RunReduce<IntOp<T, ReduceKind::kMin>>(plan, x, y, threads);
    case ReduceKind::kL1:
      return ref::RunReduce<IntOp<T, ReduceKind::kL1>>(plan, x, y, threads);
    default:  // kSumSquare (L2, LogSum and LogSumExp are registered for float32 only)
      return ref::RunReduce<IntOp<T, ReduceKind::kSumSquare>>(plan, x, y, threads);
  }
}

// ---- the kernel ----------------------------------------------------------------------------------------------

// One input signature's reduction: ref's plan plus the offset of every reduced run (the odometer over the outer
// reduced dims, walked once here instead of per output).
struct ReduceState {
  bool noop = false;  // noop_with_empty_axes with no axes: the output is the input
  Shape out_shape;
  ref::ReducePlan plan;
  std::vector<int64_t> red_offsets;
};

// Input offset of kept row `row` (the kept odometer's position `row`).
inline int64_t KeptOffset(const ref::ReducePlan& p, int64_t row) {
  int64_t off = 0;
  for (size_t i = p.kept_dims.size(); i-- > 0;) {
    off += (row % p.kept_dims[i]) * p.kept_strides[i];
    row /= p.kept_dims[i];
  }
  return off;
}

class Reduce : public OpKernel {
 public:
  Reduce(const ir::Node& node, ReduceKind kind, bool axes_from_input, const FoldFns* fns)
      : kind_(kind),
        fns_(fns),
        axes_from_input_(axes_from_input),
        keepdims_(node.GetInt("keepdims", 1) != 0),
        noop_with_empty_axes_(axes_from_input && node.GetInt("noop_with_empty_axes", 0) != 0),
        axes_(axes_from_input ? std::vector<int64_t>{} : node.GetInts("axes")) {}

  // Checks the dtypes; the state and output shape when the axes are known (the attribute, or a constant or
  // omitted axes input), a dynamic output otherwise. An identity (noop_with_empty_axes) is a view of the input.
  void Prepare(PrepareContext& ctx) const override {
    const InputSpec& x = ctx.tensor_input(0);
    const bool float_only = kind_ == ReduceKind::kL2 || kind_ == ReduceKind::kLogSum ||
                            kind_ == ReduceKind::kLogSumExp;
    if (x.dtype != DataType::kFloat && (float_only || (x.dtype != DataType::kInt32 && x.dtype != DataType::kInt64))) {
      throw InvalidArgumentError(ctx.Describe() + ": input 'data' must be float32" +
                                 (float_only ? "" : ", int32 or int64") + ", got " + ctx.InputString(0));
    }
    std::vector<int64_t> axes = axes_;
    if (axes_from_input_ && ctx.has_input(1)) {
      const InputSpec& a = ctx.tensor_input(1);
      if (a.dtype != DataType::kInt64) {
        throw InvalidArgumentError(ctx.Describe() + ": input 'axes' must be int64, got " + ctx.InputString(1));
      }
      const Tensor* t = ctx.constant(1);
      if (!t) return ctx.SetOutputDynamic(0);
      axes = ref::ReadInt64s(*t, ctx.Describe() + ": input 'axes'");
    }
    const ReduceState& s = ctx.EmplaceState(MakeState(x.shape, axes, ctx.Describe()));
    ctx.SetOutput(0, x.dtype, s.noop ? x.shape : s.out_shape);
    if (s.noop) ctx.output(0).view_of = 0;
  }

  void Compute(KernelContext& ctx) const override {
    const Tensor& x = ctx.required_input(0);
    const ReduceState* prepared = ctx.state_if_any<ReduceState>();
    ReduceState read;  // axes read from this run's data: their errors are the data's, naming the node
    if (!prepared) {
      const std::string what = ctx.Describe();
      read = MakeState(x.shape(), ref::ReadInt64s(ctx.required_input(1), what + ": input 'axes'"), what);
    }
    const ReduceState& s = prepared ? *prepared : read;
    if (s.noop) {
      ctx.SetOutput(0, Value(x));
      return;
    }
    Tensor& y = prepared ? ctx.OutputUninitialized(0) : ctx.OutputUninitialized(0, x.dtype(), s.out_shape);
    switch (x.dtype()) {
      case DataType::kFloat:
        return RunFloat(s, x.data<float>(), y.data<float>(), ctx.threads());
      case DataType::kInt32:
        return RunInt(kind_, s.plan, x.data<int32_t>(), y.data<int32_t>(), ctx.threads());
      case DataType::kInt64:
        return RunInt(kind_, s.plan, x.data<int64_t>(), y.data<int64_t>(), ctx.threads());
      default:
        throw InvalidArgumentError(ctx.Describe() + ": unsupported dtype " + std::string(DataTypeName(x.dtype())));
    }
  }

 private:
  // The state for input shape x and `axes`; throws InvalidArgumentError naming `what` for an out-of-range axis.
  ReduceState MakeState(const Shape& x, const std::vector<int64_t>& axes, const std::string& what) const {
    ReduceState s;
    if (axes.empty() && noop_with_empty_axes_) {
      s.noop = true;
      return s;
    }
    const std::vector<bool> mask = ref::ReduceAxesMask(axes, static_cast<int64_t>(x.size()), what);
    s.out_shape = ref::ReducedShape(x, mask, keepdims_);
    s.plan = ref::MakeReducePlan(x, mask);
    if (s.plan.out_count > 0 && s.plan.reduce_count > 0) {
      int64_t total = 1;
      for (int64_t d : s.plan.red_dims) total *= d;
      s.red_offsets.reserve(static_cast<size_t>(total));
      ref::Odometer red(s.plan.red_dims, s.plan.red_strides, 0);
      for (int64_t r = 0; r < total; ++r, red.Next()) s.red_offsets.push_back(red.offset());
    }
    return s;
  }

  void RunFloat(const ReduceState& s, const float* x, float* y, int threads) const {
    const ref::ReducePlan& p = s.plan;
    if (p.out_count == 0) return;
    const int64_t n = p.reduce_count;
    if (n == 0) {
      const float id = FoldIdentity(FoldOf(kind_));
      std::fill(y, y + p.out_count, Finish(kind_, kind_ == ReduceKind::kLogSumExp ? 0.0f : id, 0, id));
      return;
    }
    const FoldFns& fold = fns_[static_cast<int>(FoldOf(kind_))];
    const FoldFns& exp_shift = fns_[static_cast<int>(Fold::kExpShift)];
    const bool lse = kind_ == ReduceKind::kLogSumExp;
    const int64_t* offs = s.red_offsets.data();
    const auto count = static_cast<int64_t>(s.red_offsets.size());

    if (p.inner_reduced) {
      const int64_t inner = p.inner;
      ParallelFor(threads, p.out_count, std::max<int64_t>(1, 32768 / n), [&](int64_t begin, int64_t end) {
        for (int64_t o = begin; o < end; ++o) {
          const float* base = x + KeptOffset(p, o);
          float a = fold.runs(base, offs, count, inner, 0.0f);
          float m = a;
          if (lse && std::isfinite(m)) a = exp_shift.runs(base, offs, count, inner, m);
          y[o] = Finish(kind_, a, n, m);
        }
      });
      return;
    }

    // Innermost run kept: rows of k outputs accumulated in place, in blocks of columns.
    const int64_t k = p.inner;
    const int64_t rows = p.out_count / k;
    constexpr int64_t kBlock = 1024;
    const int64_t blocks = (k + kBlock - 1) / kBlock;
    const int64_t work = count * std::min(k, kBlock);
    ParallelFor(threads, rows * blocks, std::max<int64_t>(1, 32768 / work), [&](int64_t begin, int64_t end) {
      std::vector<float> sums(lse ? static_cast<size_t>(std::min(k, kBlock)) : 0);
      for (int64_t it = begin; it < end; ++it) {
        const int64_t row = it / blocks, c0 = (it % blocks) * kBlock, w = std::min(kBlock, k - c0);
        const float* base = x + KeptOffset(p, row) + c0;
        float* acc = y + row * k + c0;
        std::fill(acc, acc + w, FoldIdentity(FoldOf(kind_)));
        fold.columns(base, offs, count, w, acc, nullptr);
        if (lse) {
          std::fill(sums.begin(), sums.end(), 0.0f);
          exp_shift.columns(base, offs, count, w, sums.data(), acc);
          for (int64_t i = 0; i < w; ++i) acc[i] = Finish(kind_, sums[static_cast<size_t>(i)], n, acc[i]);
        } else if (kind_ == ReduceKind::kMean || kind_ == ReduceKind::kL2 || kind_ == ReduceKind::kLogSum) {
          for (int64_t i = 0; i < w; ++i) acc[i] = Finish(kind_, acc[i], n, 0.0f);
        }
      }
    });
  }

  ReduceKind kind_;
  const FoldFns* fns_;  // the ISA's loops, indexed by Fold
  bool axes_from_input_;
  bool keepdims_;
  bool noop_with_empty_axes_;
  std::vector<int64_t> axes_;
};

// ---- registration ----------------------------------------------------------------------------------------

// One op's schema history (as ref's): the opsets where a version starts and the first with the `axes` input.
struct ReduceOpInfo {
  const char* name;
  const char* lower;
  ReduceKind kind;
  std::vector<int> versions;
  int axes_input_since;
};

template <typename Table>
std::vector<FoldFns> MakeTable(Table fns_for) {
  std::vector<FoldFns> t;
  for (Fold f : {Fold::kSum, Fold::kSumSq, Fold::kAbs, Fold::kProd, Fold::kMax, Fold::kMin, Fold::kExpShift}) {
    t.push_back(fns_for(f));
  }
  return t;
}

}  // namespace

void RegisterReduceKernels(KernelRegistry& r) {
  static const std::vector<FoldFns> kAvx512 = MakeTable(&avx512::FnsFor);
  static const std::vector<FoldFns> kAvx2 = MakeTable(&avx2::FnsFor);
  const std::vector<int> common = {1, 11, 13, 18};
  const std::vector<int> min_max = {1, 11, 12, 13, 18, 20};
  const ReduceOpInfo ops[] = {
      {"ReduceSum", "reduce_sum", ReduceKind::kSum, {1, 11, 13}, 13},
      {"ReduceMean", "reduce_mean", ReduceKind::kMean, common, 18},
      {"ReduceProd", "reduce_prod", ReduceKind::kProd, common, 18},
      {"ReduceMax", "reduce_max", ReduceKind::kMax, min_max, 18},
      {"ReduceMin", "reduce_min", ReduceKind::kMin, min_max, 18},
      {"ReduceL1", "reduce_l1", ReduceKind::kL1, common, 18},
      {"ReduceL2", "reduce_l2", ReduceKind::kL2, common, 18},
      {"ReduceLogSum", "reduce_log_sum", ReduceKind::kLogSum, common, 18},
      {"ReduceLogSumExp", "reduce_log_sum_exp", ReduceKind::kLogSumExp, common, 18},
      {"ReduceSumSquare", "reduce_sum_square", ReduceKind::kSumSquare, common, 18},
  };
  const struct {
    const char* impl;
    IsaSet isa;
    const FoldFns* fns;
  } variants[] = {
      {"avx512", {Isa::kAvx512f}, kAvx512.data()},
      {"avx2", {Isa::kAvx2, Isa::kFma}, kAvx2.data()},
  };
  for (const auto& op : ops) {
    const bool float_only =
        op.kind == ReduceKind::kL2 || op.kind == ReduceKind::kLogSum || op.kind == ReduceKind::kLogSumExp;
    const std::vector<DataType> types =
        float_only ? std::vector<DataType>{DataType::kFloat}
                   : std::vector<DataType>{DataType::kFloat, DataType::kInt32, DataType::kInt64};
    for (size_t i = 0; i < op.versions.size(); ++i) {
      const int since = op.versions[i];
      const int until = i + 1 < op.versions.size() ? op.versions[i + 1] - 1 : kOpsetOpen;
      const bool axes_input = since >= op.axes_input_since;
      for (const auto& v : variants) {
        const ReduceKind kind = op.kind;
        const FoldFns* fns = v.fns;
        KernelDef def{.op = op.name,
                      .since = since,
                      .until = until,
                      .types = {{"T", types}},
                      .create = [kind, axes_input, fns](const ir::Node& node,
                                                        const KernelOptions&) -> std::unique_ptr<OpKernel> {
                        return std::make_unique<Reduce>(node, kind, axes_input, fns);
                      },
                      .isa = v.isa,
                      .name = std::string("cpu.") + op.lower + "__" + v.impl + "." + std::to_string(since)};
        if (axes_input) def.host_inputs = {1};
        r.Add(std::move(def));
      }
    }
  }
}

}  // namespace ferry::cpu
