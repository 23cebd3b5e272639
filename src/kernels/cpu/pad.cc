// Pad (opset 11+: pads, constant_value and, from opset 18, axes are inputs read on the host): grows (or, with
// negative pads, crops) each dimension by pads[begin] / pads[end]; any data type with a byte-sized element.
// Modes: constant (fill the output with the value, skipped when it is all zero bits since outputs start zeroed,
// then one strided copy of the overlap), edge, reflect and wrap (row by row: the part of each output row that
// lies inside the input is one contiguous run, the borders read through per-dimension index tables). Prepare checks
// the inputs' types and, when pads and axes are known before the run, resolves the pads, Y's shape and the index
// tables once per input signature; pads read at run time are resolved (and their errors raised) by Compute.
#include <algorithm>
#include <cstring>
#include <string>
#include <vector>

#include "core/parallel.h"
#include "kernels/cpu/strided_copy.h"
#include "kernels/kernel_def.h"
#include "kernels/ref/common.h"
#include "kernels/ref/copy_util.h"
#include "kernels/ref/data_movement_shapes.h"
#include "kernels/registry.h"

namespace ferry::cpu {
namespace {

// Input i, when present, is an int32 or int64 tensor: InvalidArgumentError naming the node and input otherwise.
void CheckIndexInput(const PrepareContext& ctx, int i) {
  if (!ctx.has_input(i)) return;
  const InputSpec& t = ctx.tensor_input(i);
  if (t.dtype != DataType::kInt32 && t.dtype != DataType::kInt64) {
    throw InvalidArgumentError(ctx.Describe() + ": " + ctx.InputString(i) + ": expected an int32 or int64 tensor");
  }
}

// The resolved pads of one signature: per dimension the pad before (negative: a crop), Y's shape, and for the
// non-constant modes the source offset (elements) of every output index per dimension.
struct PadPlan {
  std::vector<int64_t> begin;
  Shape out_shape;
  std::vector<std::vector<int64_t>> offs;
};

class Pad : public OpKernel {
 public:
  explicit Pad(const ir::Node& node) : mode_(ref::ReadPadMode(node)) {}

  // The types of pads, axes and constant_value; Y's shape and the plan when pads (and axes, when given) are known
  // before the run, else Y is data-dependent.
  void Prepare(PrepareContext& ctx) const override {
    const InputSpec& x = ctx.tensor_input(0);
    ctx.tensor_input(1);
    CheckIndexInput(ctx, 1);
    CheckIndexInput(ctx, 3);
    if (mode_ == ref::PadMode::kConstant && ctx.has_input(2)) {
      const InputSpec& v = ctx.tensor_input(2);
      if (ShapeElementCount(v.shape) > 0 && v.dtype != x.dtype) {
        throw InvalidArgumentError(ctx.Describe() + ": input 'constant_value' (" + ctx.InputString(2) +
                                   ") must have the data type of input 'data' (" +
                                   std::string(DataTypeName(x.dtype)) + ")");
      }
    }
    const Tensor* pads = ctx.constant(1);
    const Tensor* axes = ctx.constant(3);
    if (!pads || (ctx.has_input(3) && !axes)) return ctx.SetOutputDynamic(0);
    PadPlan& p = ctx.EmplaceState(MakePlan(Tensor::Wrap(x.dtype, x.shape, nullptr, nullptr), *pads, axes,
                                           ctx.Describe()));
    ctx.SetOutput(0, x.dtype, p.out_shape);
  }

  void Compute(KernelContext& ctx) const override {
    const Tensor& x = ctx.required_input(0);
    const PadPlan* prepared = ctx.state_if_any<PadPlan>();
    // Pads read from the run's data: their errors are the data's (they name the node).
    const PadPlan read = prepared ? PadPlan{} : MakePlan(x, ctx.required_input(1), ctx.input(3), ctx.Describe());
    const PadPlan& p = prepared ? *prepared : read;
    Tensor& y = prepared ? ctx.Output(0) : ctx.Output(0, x.dtype(), p.out_shape);
    if (mode_ == ref::PadMode::kConstant) {
      const Tensor* value = ctx.input(2);
      PadConstant(x, y, p.begin, value && value->size() > 0 ? value : nullptr, ctx.threads());
      return;
    }
    if (y.size() == 0) return;
    PadIndexed(x, y, p, ctx.threads());
  }

 private:
  static void PadConstant(const Tensor& x, Tensor& y, const std::vector<int64_t>& begin, const Tensor* value,
                          int threads) {
    if (y.size() == 0) return;
    const int elem = ElementBytes(x.dtype());
    if (value) {
      const auto* v = static_cast<const unsigned char*>(value->raw_data());
      if (std::any_of(v, v + elem, [](unsigned char b) { return b != 0; })) {
        ParallelFill(elem, y.raw_data(), y.size(), value->raw_data(), threads);
      }
    }
    if (x.size() == 0) return;
    const size_t rank = y.shape().size();
    const std::vector<int64_t> in_strides = RowMajorStrides(x.shape()), out_strides = RowMajorStrides(y.shape());
    std::vector<int64_t> box(rank);
    int64_t doff = 0, soff = 0;
    for (size_t d = 0; d < rank; ++d) {
      const int64_t od = y.shape()[d], id = x.shape()[d], b = begin[d];
      if (b >= od || b <= -id) return;  // no overlap (also keeps the sums below from overflowing)
      const int64_t o0 = std::max<int64_t>(0, b), o1 = std::min(od, b + id);
      box[d] = o1 - o0;
      doff += o0 * out_strides[d];
      soff += (o0 - b) * in_strides[d];
    }
    StridedCopy(elem, static_cast<char*>(y.raw_data()) + doff * elem, out_strides,
                static_cast<const char*>(x.raw_data()) + soff * elem, in_strides, box, threads);
  }

  // `x` may be a tensor without data (Prepare): only its dtype and shape are read. Throws InvalidArgumentError
  // naming `what` for pads or axes that do not fit x, or an empty dimension to pad in a non-constant mode.
  PadPlan MakePlan(const Tensor& x, const Tensor& pads_t, const Tensor* axes_t, const std::string& what) const {
    const int64_t rank = x.rank();
    const std::vector<int64_t> pads = ref::ReadInt64s(pads_t, what + ": input 'pads'");
    std::vector<int64_t> axes;
    if (axes_t) {
      axes = ref::ReadInt64s(*axes_t, what + ": input 'axes'");
    } else {
      for (int64_t d = 0; d < rank; ++d) axes.push_back(d);
    }
    ref::PadShape ps = ref::ResolvePad(x, pads, axes, what);
    PadPlan p{std::move(ps.begin), std::move(ps.out_shape), {}};
    if (mode_ == ref::PadMode::kConstant || ShapeElementCount(p.out_shape) == 0) return p;
    for (int64_t d = 0; d < rank; ++d) {
      if (x.dim(d) == 0) {
        throw InvalidArgumentError(what + ": cannot pad empty dimension " + std::to_string(d) + " of input " +
                                   ref::DescribeTensor(x) + " in a non-constant mode");
      }
    }
    // Per dimension, the source offset (elements) of every output index.
    const std::vector<int64_t> in_strides = RowMajorStrides(x.shape());
    p.offs.resize(static_cast<size_t>(rank));
    for (size_t d = 0; d < p.offs.size(); ++d) {
      p.offs[d].resize(static_cast<size_t>(p.out_shape[d]));
      for (int64_t o = 0; o < p.out_shape[d]; ++o) {
        p.offs[d][static_cast<size_t>(o)] = ref::PadSourceIndex(mode_, o - p.begin[d], x.shape()[d]) * in_strides[d];
      }
    }
    return p;
  }

  static void PadIndexed(const Tensor& x, Tensor& y, const PadPlan& p, int threads) {
    const Shape& out_shape = y.shape();
    const size_t rank = out_shape.size();
    const int elem = ElementBytes(x.dtype());
    if (rank == 0) {
      std::memcpy(y.raw_data(), x.raw_data(), static_cast<size_t>(elem));
      return;
    }
    const std::vector<int64_t>& begin = p.begin;
    const std::vector<std::vector<int64_t>>& offs = p.offs;
    const size_t last = rank - 1;
    const int64_t inner = out_shape[last], in_inner = x.shape()[last], b = begin[last];
    // Output columns [mid0, mid1) read the contiguous input columns from mid0 - b.
    const int64_t mid0 = std::clamp<int64_t>(b, 0, inner), mid1 = std::clamp<int64_t>(b + in_inner, mid0, inner);
    const int64_t rows = y.size() / inner;
    const int64_t* last_offs = offs[last].data();
    DispatchWord(elem, [&](auto tag) {
      using W = decltype(tag);
      const W* src = static_cast<const W*>(x.raw_data());
      W* dst = static_cast<W*>(y.raw_data());
      const int64_t grain = std::max<int64_t>(1, kCopyGrainBytes / static_cast<int64_t>(sizeof(W)) / inner);
      ParallelFor(CopyThreads(threads, y.size() * elem), rows, grain, [&](int64_t r0, int64_t r1) {
        std::vector<int64_t> cnt(last, 0);
        int64_t flat = r0;
        for (size_t d = last; d-- > 0;) {
          cnt[d] = flat % out_shape[d];
          flat /= out_shape[d];
        }
        for (int64_t r = r0; r < r1; ++r) {
          int64_t base = 0;
          for (size_t d = 0; d < last; ++d) base += offs[d][static_cast<size_t>(cnt[d])];
          const W* s = src + base;
          W* o = dst + r * inner;
          for (int64_t c = 0; c < mid0; ++c) o[c] = s[last_offs[c]];
          CopyRun(o + mid0, s + (mid0 - b), mid1 - mid0);
          for (int64_t c = mid1; c < inner; ++c) o[c] = s[last_offs[c]];
          for (size_t d = last; d-- > 0;) {
            if (++cnt[d] < out_shape[d]) break;
            cnt[d] = 0;
          }
        }
      });
    });
  }

  ref::PadMode mode_ = ref::PadMode::kConstant;
};

}  // namespace

void RegisterPadKernels(KernelRegistry& r) {
  r.Add({.op = "Pad",
         .since = 11,
         .types = {{"T", ByteSizedTypes()}, {"Tind", {DataType::kInt32, DataType::kInt64}}},
         .create = MakeKernel<Pad>,
         .host_inputs = {1, 2, 3},
         .name = "cpu.any_pad__strided.11"});
  // com.microsoft::Pad (ONNX Runtime's Pad with pads and value as inputs): the same kernel, without mode wrap.
  r.Add({.op = "Pad",
         .domain = "com.microsoft",
         .since = 1,
         .types = {{"T", {DataType::kFloat, DataType::kDouble, DataType::kFloat16}}},
         .create = MakeKernel<Pad>,
         .predicate = [](const ir::Node& node) -> std::string {
           const std::string mode = node.GetString("mode", "constant");
           return mode == "constant" || mode == "edge" || mode == "reflect"
                      ? ""
                      : "com.microsoft::Pad: mode '" + mode + "' is not one of constant, edge, reflect";
         },
         .host_inputs = {1, 2},
         .name = "cpu.com.microsoft.any_pad__strided.1",
         .constraints = "mode=wrap is not a com.microsoft::Pad mode"});
}

}  // namespace ferry::cpu
