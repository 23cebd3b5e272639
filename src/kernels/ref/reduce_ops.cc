// ReduceSum, ReduceMean, ReduceProd, ReduceMax, ReduceMin, ReduceL1, ReduceL2, ReduceLogSum, ReduceLogSumExp,
// ReduceSumSquare: one kernel over the shared engine in reduce.h, one small op struct per reduction.
//
// Axes come from the `axes` attribute before opset 13 (ReduceSum) / 18 (the others) and from the optional
// `axes` input after; an empty or omitted axes list reduces everything, unless noop_with_empty_axes=1, which
// makes the op an identity. Empty reductions give each op's identity (Sum 0, Prod 1, Max -inf, Min +inf,
// LogSum(Exp) -inf, Mean NaN). Floating types accumulate in double; integer sums and products wrap like numpy.
#include <cmath>
#include <limits>

#include "kernels/kernel_def.h"
#include "kernels/ref/common.h"
#include "kernels/ref/reduce.h"
#include "kernels/registry.h"

namespace ferry::ref {
namespace {

// ---- the reduction ops -----------------------------------------------------------------------------------

template <typename T>
inline constexpr bool kIsFloat = std::is_floating_point_v<Acc<T>>;

// Wide accumulator: double for floating types, uint64 (wrapping) for integers.
template <typename T>
using Wide = std::conditional_t<kIsFloat<T>, double, uint64_t>;

template <typename T>
Wide<T> Widen(T x) {
  if constexpr (kIsFloat<T>) {
    return static_cast<double>(static_cast<Acc<T>>(x));
  } else {
    return static_cast<uint64_t>(x);  // sign-extends: modular arithmetic stays exact
  }
}

template <typename T>
T Narrow(Wide<T> a) {
  if constexpr (kIsFloat<T>) {
    return FromDouble<T>(a);
  } else {
    return static_cast<T>(a);  // modular, like numpy's integer overflow
  }
}

template <typename T>
struct SumOp {
  using Acc = Wide<T>;
  static Acc Init() { return 0; }
  static void Update(Acc& a, T x) { a += Widen(x); }
  static void Combine(Acc& a, const Acc& b) { a += b; }
  static T Finish(const Acc& a, int64_t) { return Narrow<T>(a); }
};

template <typename T>
struct MeanOp : SumOp<T> {
  using Acc = Wide<T>;
  static T Finish(const Acc& a, int64_t n) {
    if constexpr (kIsFloat<T>) {
      return FromDouble<T>(a / static_cast<double>(n));  // n == 0 gives NaN
    } else if constexpr (std::is_signed_v<T>) {
      return n == 0 ? T(0) : static_cast<T>(static_cast<int64_t>(a) / n);
    } else {
      return n == 0 ? T(0) : static_cast<T>(a / static_cast<uint64_t>(n));
    }
  }
};

template <typename T>
struct ProdOp {
  using Acc = Wide<T>;
  static Acc Init() { return 1; }
  static void Update(Acc& a, T x) { a *= Widen(x); }
  static void Combine(Acc& a, const Acc& b) { a *= b; }
  static T Finish(const Acc& a, int64_t) { return Narrow<T>(a); }
};

template <typename T>
struct SumSquareOp : SumOp<T> {
  using Acc = Wide<T>;
  static void Update(Acc& a, T x) {
    Acc w = Widen(x);
    a += w * w;
  }
};

template <typename T>
struct L1Op : SumOp<T> {
  using Acc = Wide<T>;
  static void Update(Acc& a, T x) {
    if constexpr (kIsFloat<T>) {
      a += std::abs(Widen(x));
    } else {
      Acc w = Widen(x);
      a += (std::is_signed_v<T> && x < T(0)) ? Acc(0) - w : w;
    }
  }
};

// L2 and LogSum compute in double for every type, then convert.
template <typename T>
struct L2Op {
  using Acc = double;
  static Acc Init() { return 0; }
  static void Update(Acc& a, T x) {
    double v = static_cast<double>(static_cast<ferry::ref::Acc<T>>(x));
    a += v * v;
  }
  static void Combine(Acc& a, const Acc& b) { a += b; }
  static T Finish(const Acc& a, int64_t) { return FromDouble<T>(std::sqrt(a)); }
};

template <typename T>
struct LogSumOp {
  using Acc = double;
  static Acc Init() { return 0; }
  static void Update(Acc& a, T x) { a += static_cast<double>(static_cast<ferry::ref::Acc<T>>(x)); }
  static void Combine(Acc& a, const Acc& b) { a += b; }
  static T Finish(const Acc& a, int64_t) { return FromDouble<T>(std::log(a)); }
};

// Online log-sum-exp: keeps (max, sum of exp(x - max)), rescaling when the max grows.
struct LseAcc {
  double m = -std::numeric_limits<double>::infinity();
  double s = 0;
};

template <typename T>
struct LogSumExpOp {
  using Acc = LseAcc;
  static Acc Init() { return {}; }
  static void Add(Acc& a, double m, double s) {
    if (s == 0) return;  // empty partial (or only -inf elements)
    if (m > a.m) {
      a.s = a.s * std::exp(a.m - m) + s;
      a.m = m;
    } else if (m == a.m) {
      a.s += s;  // also keeps +inf + +inf finite in s
    } else {
      a.s += s * std::exp(m - a.m);  // NaN in either propagates through exp
    }
  }
  static void Update(Acc& a, T x) {
    double v = static_cast<double>(static_cast<ferry::ref::Acc<T>>(x));
    if (v == -std::numeric_limits<double>::infinity()) return;
    Add(a, v, 1.0);
  }
  static void Combine(Acc& a, const Acc& b) { Add(a, b.m, b.s); }
  static T Finish(const Acc& a, int64_t) { return FromDouble<T>(a.s == 0 ? a.m : a.m + std::log(a.s)); }
};

// Max/Min keep the element type (float for 16-bit floats); NaN propagates; bool is any / all.
template <typename T>
using MinMaxAcc = ferry::ref::Acc<T>;

template <typename T>
T FromMinMax(MinMaxAcc<T> a) {
  if constexpr (kIsHalf<T>) {
    return T(a);
  } else {
    return a;
  }
}

template <typename T, bool kMax>
struct ExtremumOp {
  using Acc = MinMaxAcc<T>;
  static Acc Init() {
    if constexpr (std::is_same_v<T, bool>) {
      return !kMax;
    } else if constexpr (kIsFloat<T>) {
      return kMax ? -std::numeric_limits<Acc>::infinity() : std::numeric_limits<Acc>::infinity();
    } else {
      return kMax ? std::numeric_limits<T>::lowest() : std::numeric_limits<T>::max();
    }
  }
  static void Fold(Acc& a, Acc v) {
    if constexpr (std::is_same_v<T, bool>) {
      a = kMax ? (a || v) : (a && v);
    } else if constexpr (kIsFloat<T>) {
      if ((kMax ? v > a : v < a) || std::isnan(v)) a = v;
    } else {
      a = kMax ? std::max(a, v) : std::min(a, v);
    }
  }
  static void Update(Acc& a, T x) { Fold(a, static_cast<Acc>(x)); }
  static void Combine(Acc& a, const Acc& b) { Fold(a, b); }
  static T Finish(const Acc& a, int64_t) { return FromMinMax<T>(a); }
};

template <typename T>
using MaxOp = ExtremumOp<T, true>;
template <typename T>
using MinOp = ExtremumOp<T, false>;

// ---- the kernel ----------------------------------------------------------------------------------------------

enum class ReduceKind { kSum, kMean, kProd, kMax, kMin, kL1, kL2, kLogSum, kLogSumExp, kSumSquare };

using MinMaxTypes = TypeList<float, double, Float16, BFloat16, int8_t, int16_t, int32_t, int64_t, uint8_t, uint16_t,
                             uint32_t, uint64_t, bool>;

template <template <typename> class Op, typename... Ts>
void RunTyped(TypeList<Ts...> types, const ReducePlan& plan, const Tensor& x, Tensor& y, KernelContext& ctx) {
  Dispatch(types, x.dtype(), ctx, [&](auto tag) {
    using T = decltype(tag);
    RunReduce<Op<T>>(plan, x.data<T>(), y.data<T>(), ctx.threads());
  });
}

class Reduce : public OpKernel {
 public:
  Reduce(const ir::Node& node, ReduceKind kind, bool axes_from_input)
      : kind_(kind),
        axes_from_input_(axes_from_input),
        keepdims_(node.GetInt("keepdims", 1) != 0),
        noop_with_empty_axes_(axes_from_input && node.GetInt("noop_with_empty_axes", 0) != 0),
        axes_(axes_from_input ? std::vector<int64_t>{} : node.GetInts("axes")) {}

  // The reduction plan and output shape when the axes are known (the attribute, or a constant or omitted axes
  // input); dynamic otherwise. An identity (noop_with_empty_axes) is a view of the input.
  void Prepare(PrepareContext& ctx) const override {
    const InputSpec& x = ctx.tensor_input(0);
    std::vector<int64_t> axes = axes_;
    if (axes_from_input_ && ctx.has_input(1)) {
      const Tensor* t = ctx.constant(1);
      if (!t) return ctx.SetOutputDynamic(0);
      axes = ReadInt64s(*t, ctx.Describe() + ": input 'axes'");
    }
    const Plan& p = ctx.EmplaceState(MakePlan(x.shape, axes, ctx.Describe()));
    ctx.SetOutput(0, x.dtype, p.noop ? x.shape : p.out_shape);
    if (p.noop) ctx.output(0).view_of = 0;
  }

  void Compute(KernelContext& ctx) const override {
    const Tensor& x = ctx.required_input(0);
    const Plan* prepared = ctx.state_if_any<Plan>();
    Plan read;  // axes read from this run's data: their errors are the data's, naming the node
    if (!prepared) {
      const std::string what = ctx.Describe();
      read = MakePlan(x.shape(), ReadInt64s(ctx.required_input(1), what + ": input 'axes'"), what);
    }
    const Plan& p = prepared ? *prepared : read;
    if (p.noop) {
      ctx.SetOutput(0, Value(x));
      return;
    }
    Tensor& y = prepared ? ctx.Output(0) : ctx.Output(0, x.dtype(), p.out_shape);
    const ReducePlan& plan = p.plan;
    switch (kind_) {
      case ReduceKind::kSum:
        RunTyped<SumOp>(NumericTypes{}, plan, x, y, ctx);
        break;
      case ReduceKind::kMean:
        RunTyped<MeanOp>(NumericTypes{}, plan, x, y, ctx);
        break;
      case ReduceKind::kProd:
        RunTyped<ProdOp>(NumericTypes{}, plan, x, y, ctx);
        break;
      case ReduceKind::kMax:
        RunTyped<MaxOp>(MinMaxTypes{}, plan, x, y, ctx);
        break;
      case ReduceKind::kMin:
        RunTyped<MinOp>(MinMaxTypes{}, plan, x, y, ctx);
        break;
      case ReduceKind::kL1:
        RunTyped<L1Op>(NumericTypes{}, plan, x, y, ctx);
        break;
      case ReduceKind::kL2:
        RunTyped<L2Op>(NumericTypes{}, plan, x, y, ctx);
        break;
      case ReduceKind::kLogSum:
        RunTyped<LogSumOp>(NumericTypes{}, plan, x, y, ctx);
        break;
      case ReduceKind::kLogSumExp:
        RunTyped<LogSumExpOp>(NumericTypes{}, plan, x, y, ctx);
        break;
      case ReduceKind::kSumSquare:
        RunTyped<SumSquareOp>(NumericTypes{}, plan, x, y, ctx);
        break;
    }
  }

 private:
  struct Plan {
    bool noop = false;  // noop_with_empty_axes with no axes: the output is the input
    ReducePlan plan;
    Shape out_shape;
  };

  // The plan for input shape x and `axes`; throws InvalidArgumentError naming `what` for a bad or repeated axis.
  Plan MakePlan(const Shape& x, const std::vector<int64_t>& axes, const std::string& what) const {
    Plan p;
    if (axes.empty() && noop_with_empty_axes_) {
      p.noop = true;
      return p;
    }
    const std::vector<bool> mask = ReduceAxesMask(axes, static_cast<int64_t>(x.size()), what);
    p.out_shape = ReducedShape(x, mask, keepdims_);
    p.plan = MakeReducePlan(x, mask);
    return p;
  }

  ReduceKind kind_;
  bool axes_from_input_;
  bool keepdims_;
  bool noop_with_empty_axes_;
  std::vector<int64_t> axes_;
};

// ---- registration ----------------------------------------------------------------------------------------

// One op's schema history: the opsets where a new version starts, the first one with the `axes` input, and
// whether it is Max/Min (int8/uint8 from 12, bool from 20).
struct ReduceOpInfo {
  const char* name;
  ReduceKind kind;
  std::vector<int> versions;
  int axes_input_since;
  bool min_max;
};

std::vector<DataType> ReduceTypes(const ReduceOpInfo& op, int since) {
  // numeric_types_for_math_reduction: 32/64-bit ints, float16/float/double; bfloat16 from 13.
  std::vector<DataType> t = {DataType::kUint32,  DataType::kUint64, DataType::kInt32, DataType::kInt64,
                             DataType::kFloat16, DataType::kFloat,  DataType::kDouble};
  if (since >= 13) t.push_back(DataType::kBFloat16);
  if (op.min_max && since >= 12) {
    t.push_back(DataType::kUint8);
    t.push_back(DataType::kInt8);
  }
  if (op.min_max && since >= 20) t.push_back(DataType::kBool);
  return t;
}

}  // namespace

void RegisterReduceKernels(KernelRegistry& r) {
  const std::vector<int> common = {1, 11, 13, 18};
  const std::vector<int> min_max = {1, 11, 12, 13, 18, 20};
  const ReduceOpInfo ops[] = {
      {"ReduceSum", ReduceKind::kSum, {1, 11, 13}, 13, false},
      {"ReduceMean", ReduceKind::kMean, common, 18, false},
      {"ReduceProd", ReduceKind::kProd, common, 18, false},
      {"ReduceMax", ReduceKind::kMax, min_max, 18, true},
      {"ReduceMin", ReduceKind::kMin, min_max, 18, true},
      {"ReduceL1", ReduceKind::kL1, common, 18, false},
      {"ReduceL2", ReduceKind::kL2, common, 18, false},
      {"ReduceLogSum", ReduceKind::kLogSum, common, 18, false},
      {"ReduceLogSumExp", ReduceKind::kLogSumExp, common, 18, false},
      {"ReduceSumSquare", ReduceKind::kSumSquare, common, 18, false},
  };
  for (const auto& op : ops) {
    for (size_t i = 0; i < op.versions.size(); ++i) {
      const int since = op.versions[i];
      const int until = i + 1 < op.versions.size() ? op.versions[i + 1] - 1 : kOpsetOpen;
      const bool axes_input = since >= op.axes_input_since;
      const ReduceKind kind = op.kind;
      KernelDef def{
          .op = op.name,
          .since = since,
          .until = until,
          .types = {{"T", ReduceTypes(op, since)}},
          .create = [kind, axes_input](const ir::Node& node, const KernelOptions&) -> std::unique_ptr<OpKernel> {
            return std::make_unique<Reduce>(node, kind, axes_input);
          }};
      if (axes_input) def.host_inputs = {1};
      r.Add(std::move(def));
    }
  }
}

}  // namespace ferry::ref
