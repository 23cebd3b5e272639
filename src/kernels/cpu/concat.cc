// Concat: joins its inputs along `axis` (all other dimensions must match); any data type with a byte-sized
// element. Seen as [outer, axis * inner], every output row is the inputs' rows side by side, so the copy is
// contiguous runs only: per input one memcpy when outer == 1, else row by row (short runs copied in a loop).
// Large outputs are split over threads by rows, or by byte ranges when there are too few rows to share. Prepare
// checks the shapes and lays out each input's run in the output row once per input signature.
#include <algorithm>
#include <cstring>
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

// One input's run in every output row: bytes [begin, begin + bytes) of the row, row r read from src + r * bytes.
struct Segment {
  int64_t begin, bytes;
  const char* src;
};

// The prepared state of one signature: Y as [outer, row_bytes], and per present input with a non-empty run, its
// input index and place in the row (Segment::src filled in by Compute).
struct ConcatPlan {
  int64_t outer = 1, row_bytes = 0;
  int elem = 0;
  std::vector<int> inputs;
  std::vector<Segment> segs;
};

class Concat : public OpKernel {
 public:
  explicit Concat(const ir::Node& node) : axis_(ref::ReadConcatAxis(node)) {}

  // At least one present input, not scalars, every input of input 0's type and rank and equal to it outside the
  // axis; InvalidArgumentError naming the node and both inputs otherwise.
  void Prepare(PrepareContext& ctx) const override {
    std::vector<int> present;
    for (int i = 0; i < ctx.input_count(); ++i) {
      if (ctx.has_input(i)) present.push_back(i);
    }
    if (present.empty()) throw InvalidArgumentError(ctx.Describe() + ": needs at least one input");
    const InputSpec& first = ctx.tensor_input(present[0]);
    const int64_t rank = static_cast<int64_t>(first.shape.size());
    if (rank == 0) {
      throw InvalidArgumentError(ctx.Describe() + ": cannot concatenate scalars (" + ctx.InputString(present[0]) +
                                 ")");
    }
    const int64_t axis = ref::NormalizeAxis(axis_, rank, ctx.Describe());
    const auto ax = static_cast<size_t>(axis);
    Shape out_shape = first.shape;
    out_shape[ax] = 0;
    for (int i : present) {
      const InputSpec& t = ctx.tensor_input(i);
      bool ok = t.dtype == first.dtype && t.shape.size() == first.shape.size();
      for (size_t d = 0; ok && d < t.shape.size(); ++d) ok = d == ax || t.shape[d] == first.shape[d];
      if (!ok) {
        throw InvalidArgumentError(ctx.Describe() + ": " + ctx.InputString(i) + " does not match " +
                                   ctx.InputString(present[0]) + " outside axis " + std::to_string(axis));
      }
      out_shape[ax] += t.shape[ax];
    }
    ConcatPlan p;
    p.elem = ElementBytes(first.dtype);
    int64_t inner = p.elem;
    for (size_t d = 0; d < out_shape.size(); ++d) {
      if (d < ax) p.outer *= out_shape[d];
      if (d > ax) inner *= out_shape[d];
    }
    for (int i : present) {
      const int64_t bytes = ctx.input(i).shape[ax] * inner;
      if (bytes > 0) {
        p.inputs.push_back(i);
        p.segs.push_back({p.row_bytes, bytes, nullptr});
      }
      p.row_bytes += bytes;
    }
    ctx.SetOutput(0, first.dtype, std::move(out_shape));
    ctx.EmplaceState(std::move(p));
  }

  void Compute(KernelContext& ctx) const override {
    const ConcatPlan& p = ctx.state<ConcatPlan>();
    Tensor& y = ctx.OutputUninitialized(0);
    if (y.size() == 0) return;
    const int elem = p.elem;
    const int64_t outer = p.outer, row_bytes = p.row_bytes;
    std::vector<Segment> segs = p.segs;
    for (size_t k = 0; k < segs.size(); ++k) {
      segs[k].src = static_cast<const char*>(ctx.required_input(p.inputs[k]).raw_data());
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
