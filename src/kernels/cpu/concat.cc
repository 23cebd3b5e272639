// Concat: joins its inputs along `axis` (all other dimensions must match); any data type with a byte-sized
// element. Seen as [outer, axis * inner], every output row is the inputs' rows side by side, so the copy is
// contiguous runs only: per input one memcpy when outer == 1, else row by row (short runs copied in a loop).
// Large outputs are split over threads by rows, or by byte ranges when there are too few rows to share.
#include <algorithm>

#include "core/parallel.h"
#include "kernels/cpu/strided_copy.h"
#include "kernels/kernel_def.h"
#include "kernels/ref/common.h"
#include "kernels/ref/copy_util.h"
#include "kernels/ref/data_movement_shapes.h"
#include "kernels/registry.h"

namespace ferry::cpu {
namespace {

// One input's run in every output row: bytes [begin, begin + bytes) of the row, row r read from src + r * bytes.
struct Segment {
  int64_t begin, bytes;
  const char* src;
};

class Concat : public OpKernel {
 public:
  explicit Concat(const ir::Node& node) : axis_(ref::ReadConcatAxis(node)) {}

  void Compute(KernelContext& ctx) const override {
    const ref::ConcatShape cs = ref::ResolveConcat(ctx, axis_);
    const std::vector<const Tensor*>& ins = cs.inputs;
    const Tensor& first = *ins[0];
    const int64_t rank = first.rank(), axis = cs.axis;
    const Shape& out_shape = cs.out_shape;
    Tensor& y = ctx.OutputUninitialized(0, first.dtype(), out_shape);
    if (y.size() == 0) return;
    const int elem = ElementBytes(y.dtype());
    int64_t outer = 1, inner = elem;
    for (int64_t d = 0; d < rank; ++d) {
      if (d < axis) outer *= out_shape[static_cast<size_t>(d)];
      if (d > axis) inner *= out_shape[static_cast<size_t>(d)];
    }
    std::vector<Segment> segs;
    int64_t row_bytes = 0;
    for (const Tensor* t : ins) {
      const int64_t bytes = t->dim(axis) * inner;
      if (bytes > 0) segs.push_back({row_bytes, bytes, static_cast<const char*>(t->raw_data())});
      row_bytes += bytes;
    }
    char* out = static_cast<char*>(y.raw_data());
    const int threads = CopyThreads(ctx.threads(), outer * row_bytes);
    if (outer == 1) {
      for (const Segment& s : segs) ParallelMemcpy(out + s.begin, s.src, s.bytes, threads);
    } else if (threads > 1 && outer < 4 * static_cast<int64_t>(threads)) {
      CopyByteRanges(out, outer, row_bytes, segs, threads);
    } else {
      DispatchWord(elem, [&](auto tag) {
        using W = decltype(tag);
        const int64_t grain = std::max<int64_t>(1, kCopyGrainBytes / row_bytes);
        ParallelFor(threads, outer, grain, [&](int64_t begin, int64_t end) {
          for (int64_t r = begin; r < end; ++r) {
            for (const Segment& s : segs) {
              CopyRun(reinterpret_cast<W*>(out + r * row_bytes + s.begin),
                      reinterpret_cast<const W*>(s.src + r * s.bytes), s.bytes / static_cast<int64_t>(sizeof(W)));
            }
          }
        });
      });
    }
  }

 private:
  // Splits the output's bytes evenly over threads; each byte range is copied piece by piece.
  static void CopyByteRanges(char* out, int64_t outer, int64_t row_bytes, const std::vector<Segment>& segs,
                             int threads) {
    ParallelFor(threads, outer * row_bytes, kCopyGrainBytes, [&](int64_t b, int64_t e) {
      while (b < e) {
        const int64_t r = b / row_bytes, off = b % row_bytes;
        auto it = std::upper_bound(segs.begin(), segs.end(), off,
                                   [](int64_t v, const Segment& s) { return v < s.begin; });
        const Segment& s = *(it - 1);
        const int64_t in_off = off - s.begin;
        const int64_t n = std::min(s.bytes - in_off, e - b);
        std::memcpy(out + b, s.src + r * s.bytes + in_off, static_cast<size_t>(n));
        b += n;
      }
    });
  }

  int64_t axis_ = 1;
};

}  // namespace

void RegisterConcatKernels(KernelRegistry& r) {
  r.Add({.op = "Concat",
         .since = 1,
         .types = {{"T", ByteSizedTypes()}},
         .create = MakeKernel<Concat>,
         .name = "cpu.any_concat__memcpy.1"});
}

}  // namespace ferry::cpu
