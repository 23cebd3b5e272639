#include "kernels/cuda_defs/cuda_shapes.h"

#include <algorithm>
#include <limits>
#include <numeric>

#include "ferry/error.h"

namespace ferry::cuda {
namespace {

void CheckRank(size_t rank, const std::string& who) {
  if (rank > static_cast<size_t>(kMaxRank)) {
    throw UnsupportedError(who + ": rank " + std::to_string(rank) + " exceeds the CUDA kernels' limit of " +
                           std::to_string(kMaxRank));
  }
}

std::vector<int64_t> ContiguousStrides(const Shape& s) {
  std::vector<int64_t> st(s.size(), 1);
  for (size_t i = s.size(); i-- > 1;) st[i - 1] = st[i] * s[i];
  return st;
}

// Drops dims of size 1 and merges adjacent dims whose strides are contiguous in every input.
void Coalesce(IndexMap& m) {
  int r = 0;
  for (int i = 0; i < m.rank; ++i) {
    if (m.dims[i] == 1) continue;
    if (r > 0) {
      bool mergeable = true;
      for (int k = 0; k < m.inputs; ++k) mergeable = mergeable && m.strides[k][r - 1] == m.strides[k][i] * m.dims[i];
      if (mergeable) {
        m.dims[r - 1] *= m.dims[i];
        for (int k = 0; k < m.inputs; ++k) m.strides[k][r - 1] = m.strides[k][i];
        continue;
      }
    }
    m.dims[r] = m.dims[i];
    for (int k = 0; k < m.inputs; ++k) m.strides[k][r] = m.strides[k][i];
    ++r;
  }
  for (int i = r; i < kMaxRank; ++i) {
    m.dims[i] = 0;
    for (int k = 0; k < 3; ++k) m.strides[k][i] = 0;
  }
  m.rank = r;
}

}  // namespace

Launch1d LaunchFor(int64_t n, int threads) {
  Launch1d l;
  l.threads = threads;
  if (n <= 0) return l;
  l.blocks = std::min<int64_t>((n + threads - 1) / threads, kMaxBlocks);
  return l;
}

Shape BroadcastShape(std::span<const Shape> inputs, const std::string& who) {
  size_t rank = 0;
  for (const Shape& s : inputs) rank = std::max(rank, s.size());
  Shape out(rank, 1);
  for (const Shape& s : inputs) {
    const size_t off = rank - s.size();
    for (size_t i = 0; i < s.size(); ++i) {
      int64_t& o = out[off + i];
      if (s[i] == o || s[i] == 1) continue;
      if (o == 1) {
        o = s[i];
        continue;
      }
      std::string shapes;
      for (const Shape& t : inputs) shapes += (shapes.empty() ? "" : " and ") + ShapeToString(t);
      throw InvalidModelError(who + ": shapes " + shapes + " do not broadcast");
    }
  }
  return out;
}

IndexMap BroadcastMap(std::span<const Shape> inputs, const std::string& who) {
  if (inputs.empty() || inputs.size() > 3) throw InternalError(who + ": BroadcastMap takes 1 to 3 inputs");
  const Shape out = BroadcastShape(inputs, who);
  CheckRank(out.size(), who);
  IndexMap m;
  m.rank = static_cast<int>(out.size());
  m.inputs = static_cast<int>(inputs.size());
  m.count = ShapeElementCount(out);
  for (size_t i = 0; i < out.size(); ++i) m.dims[i] = out[i];
  for (size_t k = 0; k < inputs.size(); ++k) {
    const Shape& s = inputs[k];
    const auto st = ContiguousStrides(s);
    const size_t off = out.size() - s.size();
    for (size_t i = 0; i < s.size(); ++i) m.strides[k][off + i] = s[i] == 1 ? 0 : st[i];
  }
  Coalesce(m);
  return m;
}

bool IsPlainElementwise(std::span<const Shape> inputs) {
  const Shape out = BroadcastShape(inputs, "elementwise");
  const int64_t n = ShapeElementCount(out);
  return std::all_of(inputs.begin(), inputs.end(), [&](const Shape& s) { return ShapeElementCount(s) == n; });
}

IndexMap TransposeMap(const Shape& in, std::vector<int64_t> perm, Shape* out, const std::string& who) {
  const int64_t rank = static_cast<int64_t>(in.size());
  CheckRank(in.size(), who);
  if (perm.empty()) {
    for (int64_t i = rank - 1; i >= 0; --i) perm.push_back(i);
  }
  if (static_cast<int64_t>(perm.size()) != rank) {
    throw InvalidModelError(who + ": perm has " + std::to_string(perm.size()) + " entries for a rank-" +
                            std::to_string(rank) + " input");
  }
  std::vector<char> seen(in.size(), 0);
  for (int64_t& p : perm) {
    if (p < -rank || p >= rank) throw InvalidModelError(who + ": perm entry " + std::to_string(p) + " out of range");
    if (p < 0) p += rank;
    if (seen[static_cast<size_t>(p)]++) throw InvalidModelError(who + ": perm repeats axis " + std::to_string(p));
  }
  const auto st = ContiguousStrides(in);
  IndexMap m;
  m.rank = static_cast<int>(rank);
  m.inputs = 1;
  out->assign(in.size(), 0);
  for (int64_t i = 0; i < rank; ++i) {
    (*out)[static_cast<size_t>(i)] = in[static_cast<size_t>(perm[static_cast<size_t>(i)])];
    m.dims[i] = (*out)[static_cast<size_t>(i)];
    m.strides[0][i] = st[static_cast<size_t>(perm[static_cast<size_t>(i)])];
  }
  m.count = ShapeElementCount(*out);
  Coalesce(m);
  return m;
}

IndexMap SliceMap(const Shape& in, const std::vector<int64_t>& starts, const std::vector<int64_t>& ends,
                  std::vector<int64_t> axes, std::vector<int64_t> steps, Shape* out, const std::string& who) {
  const int64_t rank = static_cast<int64_t>(in.size());
  CheckRank(in.size(), who);
  if (starts.size() != ends.size()) throw InvalidModelError(who + ": starts and ends differ in length");
  if (axes.empty()) {
    axes.resize(starts.size());
    std::iota(axes.begin(), axes.end(), 0);
  }
  if (steps.empty()) steps.assign(starts.size(), 1);
  if (axes.size() != starts.size() || steps.size() != starts.size()) {
    throw InvalidModelError(who + ": starts, ends, axes and steps differ in length");
  }
  std::vector<int64_t> begin(in.size(), 0), step(in.size(), 1);
  *out = in;
  std::vector<char> seen(in.size(), 0);
  for (size_t k = 0; k < starts.size(); ++k) {
    int64_t axis = axes[k];
    if (axis < -rank || axis >= rank) throw InvalidModelError(who + ": axis " + std::to_string(axis) + " out of range");
    if (axis < 0) axis += rank;
    if (seen[static_cast<size_t>(axis)]++) throw InvalidModelError(who + ": axis " + std::to_string(axis) + " repeated");
    const int64_t dim = in[static_cast<size_t>(axis)];
    const int64_t s = steps[k];
    if (s == 0) throw InvalidModelError(who + ": step 0 on axis " + std::to_string(axis));
    int64_t b = starts[k], e = ends[k];
    if (b < 0) b += dim;
    if (e < 0 && e != std::numeric_limits<int64_t>::min()) e += dim;
    if (e == std::numeric_limits<int64_t>::min()) e = -1;
    int64_t count = 0;
    if (s > 0) {
      b = std::clamp<int64_t>(b, 0, dim);
      e = std::clamp<int64_t>(e, 0, dim);
      count = e > b ? (e - b + s - 1) / s : 0;
    } else {
      b = std::clamp<int64_t>(b, 0, dim - 1);
      e = std::clamp<int64_t>(e, -1, dim - 1);
      count = b > e ? (b - e + (-s) - 1) / (-s) : 0;
    }
    begin[static_cast<size_t>(axis)] = b;
    step[static_cast<size_t>(axis)] = s;
    (*out)[static_cast<size_t>(axis)] = count;
  }
  const auto st = ContiguousStrides(in);
  IndexMap m;
  m.rank = static_cast<int>(rank);
  m.inputs = 1;
  m.count = ShapeElementCount(*out);
  for (int64_t i = 0; i < rank; ++i) {
    m.dims[i] = (*out)[static_cast<size_t>(i)];
    m.strides[0][i] = st[static_cast<size_t>(i)] * step[static_cast<size_t>(i)];
    if (m.count > 0) m.base[0] += begin[static_cast<size_t>(i)] * st[static_cast<size_t>(i)];
  }
  Coalesce(m);
  return m;
}

std::vector<int64_t> NormalizeAxes(std::vector<int64_t> axes, int64_t rank, const std::string& who) {
  for (int64_t& a : axes) {
    if (a < -rank || a >= rank) {
      throw InvalidModelError(who + ": axis " + std::to_string(a) + " out of range for rank " + std::to_string(rank));
    }
    if (a < 0) a += rank;
  }
  std::sort(axes.begin(), axes.end());
  if (std::adjacent_find(axes.begin(), axes.end()) != axes.end()) throw InvalidModelError(who + ": repeated axis");
  return axes;
}

ReducePlan PlanReduce(const Shape& in, const std::vector<int64_t>& axes, const std::string& who) {
  CheckRank(in.size(), who);
  const auto st = ContiguousStrides(in);
  ReducePlan p;
  p.outputs = 1;
  for (size_t i = 0; i < in.size(); ++i) {
    const bool reduced = std::find(axes.begin(), axes.end(), static_cast<int64_t>(i)) != axes.end();
    if (reduced) {
      p.red_dims[p.red_rank] = in[i];
      p.red_strides[p.red_rank++] = st[i];
      p.reduced *= in[i];
    } else {
      p.kept_dims[p.kept_rank] = in[i];
      p.kept_strides[p.kept_rank++] = st[i];
      p.outputs *= in[i];
    }
  }
  return p;
}

Shape ReducedShape(const Shape& in, const std::vector<int64_t>& axes, bool keepdims) {
  Shape out;
  for (size_t i = 0; i < in.size(); ++i) {
    const bool reduced = std::find(axes.begin(), axes.end(), static_cast<int64_t>(i)) != axes.end();
    if (!reduced) out.push_back(in[i]);
    else if (keepdims) out.push_back(1);
  }
  return out;
}

Shape ReshapeShape(const Shape& in, std::span<const int64_t> spec, bool allowzero, const std::string& who) {
  Shape out(spec.begin(), spec.end());
  int infer = -1;
  int64_t known = 1;
  for (size_t i = 0; i < out.size(); ++i) {
    if (out[i] == -1) {
      if (infer >= 0) throw InvalidModelError(who + ": more than one -1 in the shape");
      infer = static_cast<int>(i);
      continue;
    }
    if (out[i] == 0 && !allowzero) {
      if (i >= in.size()) throw InvalidModelError(who + ": 0 at position " + std::to_string(i) + " copies no input dim");
      out[i] = in[i];
    }
    if (out[i] < 0) throw InvalidModelError(who + ": invalid dim " + std::to_string(out[i]) + " in the shape");
    known *= out[i];
  }
  const int64_t total = ShapeElementCount(in);
  if (infer >= 0) {
    if (known == 0 || total % known != 0) {
      throw InvalidModelError(who + ": cannot infer the -1 dim of " + ShapeToString(out) + " for " +
                              std::to_string(total) + " elements");
    }
    out[static_cast<size_t>(infer)] = total / known;
  }
  if (ShapeElementCount(out) != total) {
    throw InvalidModelError(who + ": cannot reshape " + ShapeToString(in) + " to " + ShapeToString(out));
  }
  return out;
}

Shape FlattenShape(const Shape& in, int64_t axis, const std::string& who) {
  const int64_t rank = static_cast<int64_t>(in.size());
  if (axis < -rank || axis > rank) throw InvalidModelError(who + ": axis " + std::to_string(axis) + " out of range");
  if (axis < 0) axis += rank;
  int64_t a = 1, b = 1;
  for (int64_t i = 0; i < rank; ++i) (i < axis ? a : b) *= in[static_cast<size_t>(i)];
  return {a, b};
}

Shape SqueezeShape(const Shape& in, const std::vector<int64_t>& axes, const std::string& who) {
  const auto norm = NormalizeAxes(axes, static_cast<int64_t>(in.size()), who);
  Shape out;
  for (size_t i = 0; i < in.size(); ++i) {
    const bool listed = std::find(norm.begin(), norm.end(), static_cast<int64_t>(i)) != norm.end();
    if (listed && in[i] != 1) {
      throw InvalidModelError(who + ": cannot squeeze axis " + std::to_string(i) + " of size " + std::to_string(in[i]));
    }
    if (norm.empty() ? in[i] != 1 : !listed) out.push_back(in[i]);
  }
  return out;
}

Shape UnsqueezeShape(const Shape& in, const std::vector<int64_t>& axes, const std::string& who) {
  const int64_t rank = static_cast<int64_t>(in.size() + axes.size());
  const auto norm = NormalizeAxes(axes, rank, who);
  Shape out;
  size_t next = 0;
  for (int64_t i = 0; i < rank; ++i) {
    if (std::find(norm.begin(), norm.end(), i) != norm.end()) {
      out.push_back(1);
    } else {
      out.push_back(in[next++]);
    }
  }
  return out;
}

SoftmaxPlan PlanSoftmax(const Shape& in, int64_t axis, int64_t opset, const std::string& who) {
  const int64_t rank = static_cast<int64_t>(in.size());
  if (rank == 0) throw InvalidModelError(who + ": a scalar input has no axis");
  if (axis < -rank || axis >= rank) throw InvalidModelError(who + ": axis " + std::to_string(axis) + " out of range");
  if (axis < 0) axis += rank;
  SoftmaxPlan p;
  for (int64_t i = 0; i < rank; ++i) {
    const int64_t d = in[static_cast<size_t>(i)];
    if (i < axis) p.outer *= d;
    else if (i == axis || opset < 13) p.n *= d;
    else p.inner *= d;
  }
  return p;
}

GatherPlan PlanGather(const Shape& data, const Shape& indices, int64_t axis, Shape* out, const std::string& who) {
  const int64_t rank = static_cast<int64_t>(data.size());
  if (rank == 0) throw InvalidModelError(who + ": Gather of a scalar");
  if (axis < -rank || axis >= rank) throw InvalidModelError(who + ": axis " + std::to_string(axis) + " out of range");
  if (axis < 0) axis += rank;
  GatherPlan p;
  out->clear();
  for (int64_t i = 0; i < rank; ++i) {
    const int64_t d = data[static_cast<size_t>(i)];
    if (i < axis) {
      p.outer *= d;
      out->push_back(d);
    } else if (i == axis) {
      p.axis_dim = d;
      out->insert(out->end(), indices.begin(), indices.end());
    } else {
      p.inner *= d;
      out->push_back(d);
    }
  }
  p.indices = ShapeElementCount(indices);
  return p;
}

Shape ConcatShape(const std::vector<Shape>& inputs, int64_t axis, int64_t* outer, std::vector<int64_t>* widths,
                  const std::string& who) {
  if (inputs.empty()) throw InvalidModelError(who + ": no inputs");
  const int64_t rank = static_cast<int64_t>(inputs[0].size());
  if (rank == 0) throw InvalidModelError(who + ": cannot concatenate scalars");
  if (axis < -rank || axis >= rank) throw InvalidModelError(who + ": axis " + std::to_string(axis) + " out of range");
  if (axis < 0) axis += rank;
  Shape out = inputs[0];
  out[static_cast<size_t>(axis)] = 0;
  for (const Shape& s : inputs) {
    bool ok = static_cast<int64_t>(s.size()) == rank;
    for (int64_t i = 0; ok && i < rank; ++i) ok = i == axis || s[static_cast<size_t>(i)] == inputs[0][static_cast<size_t>(i)];
    if (!ok) {
      throw InvalidModelError(who + ": input shapes " + ShapeToString(inputs[0]) + " and " + ShapeToString(s) +
                              " differ outside axis " + std::to_string(axis));
    }
    out[static_cast<size_t>(axis)] += s[static_cast<size_t>(axis)];
  }
  *outer = 1;
  for (int64_t i = 0; i < axis; ++i) *outer *= out[static_cast<size_t>(i)];
  widths->clear();
  for (const Shape& s : inputs) {
    int64_t w = 1;
    for (int64_t i = axis; i < rank; ++i) w *= s[static_cast<size_t>(i)];
    widths->push_back(w);
  }
  return out;
}

}  // namespace ferry::cuda
