// Pad (opset 11+: pads, constant_value and, from opset 18, axes are inputs read on the host): grows (or, with
// negative pads, crops) each dimension by pads[begin] / pads[end]; any data type with a byte-sized element.
// Modes: constant (fill the output with the value, skipped when it is all zero bits since outputs start zeroed,
// then one strided copy of the overlap), edge, reflect and wrap (row by row: the part of each output row that
// lies inside the input is one contiguous run, the borders read through per-dimension index tables).
#include <algorithm>
#include <cstring>

#include "core/parallel.h"
#include "kernels/cpu/strided_copy.h"
#include "kernels/kernel_def.h"
#include "kernels/ref/common.h"
#include "kernels/ref/copy_util.h"
#include "kernels/ref/data_movement_shapes.h"
#include "kernels/registry.h"

namespace ferry::cpu {
namespace {

class Pad : public OpKernel {
 public:
  explicit Pad(const ir::Node& node) : mode_(ref::ReadPadMode(node)) {}

  void Compute(KernelContext& ctx) const override {
    const Tensor& x = ctx.required_input(0);
    const std::string what = ctx.Describe();
    const int64_t rank = x.rank();
    const std::vector<int64_t> pads = ref::ReadInt64s(ctx.required_input(1), what + ": input 'pads'");
    std::vector<int64_t> axes;
    if (const Tensor* a = ctx.input(3)) {
      axes = ref::ReadInt64s(*a, what + ": input 'axes'");
    } else {
      for (int64_t d = 0; d < rank; ++d) axes.push_back(d);
    }
    const ref::PadShape ps = ref::ResolvePad(x, pads, axes, what);
    const std::vector<int64_t>& begin = ps.begin;
    const Shape& out_shape = ps.out_shape;
    Tensor& y = ctx.Output(0, x.dtype(), out_shape);
    if (mode_ == ref::PadMode::kConstant) {
      const Tensor* value = ctx.input(2);
      if (value && value->size() > 0 && value->dtype() != x.dtype()) {
        throw InvalidArgumentError(ctx.Describe() + ": input 'constant_value' " + ref::DescribeTensor(*value) +
                                   " must have the data type of input 'data' (" +
                                   std::string(DataTypeName(x.dtype())) + ")");
      }
      PadConstant(x, y, begin, value && value->size() > 0 ? value : nullptr, ctx.threads());
      return;
    }
    if (y.size() == 0) return;
    for (int64_t d = 0; d < rank; ++d) {
      if (x.dim(d) == 0) {
        throw InvalidArgumentError(what + ": cannot pad empty dimension " + std::to_string(d) + " of input " +
                                   ref::DescribeTensor(x) + " in a non-constant mode");
      }
    }
    PadIndexed(x, y, begin, ctx.threads());
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

  void PadIndexed(const Tensor& x, Tensor& y, const std::vector<int64_t>& begin, int threads) const {
    const Shape& out_shape = y.shape();
    const size_t rank = out_shape.size();
    const int elem = ElementBytes(x.dtype());
    if (rank == 0) {
      std::memcpy(y.raw_data(), x.raw_data(), static_cast<size_t>(elem));
      return;
    }
    // Per dimension, the source offset (elements) of every output index.
    const std::vector<int64_t> in_strides = RowMajorStrides(x.shape());
    std::vector<std::vector<int64_t>> offs(rank);
    for (size_t d = 0; d < rank; ++d) {
      offs[d].resize(static_cast<size_t>(out_shape[d]));
      for (int64_t o = 0; o < out_shape[d]; ++o) {
        offs[d][static_cast<size_t>(o)] = ref::PadSourceIndex(mode_, o - begin[d], x.shape()[d]) * in_strides[d];
      }
    }
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
}

}  // namespace ferry::cpu
