#include "kernels/ref/conv_util.h"

#include "ferry/error.h"

namespace ferry::ref {

namespace {

int64_t Product(const std::vector<int64_t>& v) {
  int64_t p = 1;
  for (int64_t x : v) p *= x;
  return p;
}

}  // namespace

int64_t WindowGeometry::in_size() const { return Product(in); }
int64_t WindowGeometry::out_size() const { return Product(out); }
int64_t WindowGeometry::kernel_size() const { return Product(kernel); }

std::string IntsToString(std::span<const int64_t> v) { return ShapeToString(v); }

WindowAttrs WindowAttrs::FromNode(const ir::Node& node) {
  WindowAttrs a;
  const std::string pad = node.GetString("auto_pad", "NOTSET");
  if (pad == "NOTSET" || pad.empty()) {
    a.auto_pad = AutoPad::kNotSet;
  } else if (pad == "SAME_UPPER") {
    a.auto_pad = AutoPad::kSameUpper;
  } else if (pad == "SAME_LOWER") {
    a.auto_pad = AutoPad::kSameLower;
  } else if (pad == "VALID") {
    a.auto_pad = AutoPad::kValid;
  } else {
    throw InvalidModelError(node.Describe() + ": auto_pad '" + pad +
                            "' is not one of NOTSET, SAME_UPPER, SAME_LOWER, VALID");
  }
  a.kernel_shape = node.GetInts("kernel_shape");
  a.strides = node.GetInts("strides");
  a.dilations = node.GetInts("dilations");
  a.pads = node.GetInts("pads");
  auto check_positive = [&](const std::vector<int64_t>& v, const char* name) {
    for (int64_t x : v) {
      if (x < 1) {
        throw InvalidModelError(node.Describe() + ": attribute " + name + " = " + IntsToString(v) +
                                " must hold values >= 1");
      }
    }
  };
  check_positive(a.kernel_shape, "kernel_shape");
  check_positive(a.strides, "strides");
  check_positive(a.dilations, "dilations");
  for (int64_t x : a.pads) {
    if (x < 0) {
      throw InvalidModelError(node.Describe() + ": attribute pads = " + IntsToString(a.pads) +
                              " must hold values >= 0");
    }
  }
  return a;
}

std::vector<int64_t> SpatialAttr(const std::vector<int64_t>& v, size_t rank, int64_t def, const char* name,
                                 const std::string& what) {
  if (v.empty()) return std::vector<int64_t>(rank, def);
  if (v.size() != rank) {
    throw InvalidArgumentError(what + ": attribute " + name + " = " + IntsToString(v) + " has " +
                               std::to_string(v.size()) + " values, expected " + std::to_string(rank) +
                               " (one per spatial dimension)");
  }
  return v;
}

WindowGeometry ResolveWindow(const WindowAttrs& attrs, std::span<const int64_t> in_spatial,
                             std::span<const int64_t> kernel, bool ceil_mode, const std::string& what) {
  const size_t rank = in_spatial.size();
  WindowGeometry g;
  g.in.assign(in_spatial.begin(), in_spatial.end());
  g.kernel.assign(kernel.begin(), kernel.end());
  if (g.kernel.size() != rank) {
    throw InvalidArgumentError(what + ": kernel shape " + IntsToString(g.kernel) + " does not match the " +
                               std::to_string(rank) + " spatial dimensions of the input");
  }
  for (int64_t k : g.kernel) {
    if (k < 1) throw InvalidArgumentError(what + ": kernel shape " + IntsToString(g.kernel) + " has an empty dim");
  }
  g.strides = SpatialAttr(attrs.strides, rank, 1, "strides", what);
  g.dilations = SpatialAttr(attrs.dilations, rank, 1, "dilations", what);
  g.pad_begin.assign(rank, 0);
  g.pad_end.assign(rank, 0);
  g.out.assign(rank, 0);
  if (attrs.auto_pad == AutoPad::kNotSet && !attrs.pads.empty()) {
    if (attrs.pads.size() != 2 * rank) {
      throw InvalidArgumentError(what + ": attribute pads = " + IntsToString(attrs.pads) + " has " +
                                 std::to_string(attrs.pads.size()) + " values, expected " +
                                 std::to_string(2 * rank));
    }
    for (size_t d = 0; d < rank; ++d) {
      g.pad_begin[d] = attrs.pads[d];
      g.pad_end[d] = attrs.pads[d + rank];
    }
  }
  for (size_t d = 0; d < rank; ++d) {
    const int64_t in = g.in[d], s = g.strides[d];
    const int64_t eff = (g.kernel[d] - 1) * g.dilations[d] + 1;
    int64_t out = 0;
    if (attrs.auto_pad == AutoPad::kSameUpper || attrs.auto_pad == AutoPad::kSameLower) {
      out = (in + s - 1) / s;
      const int64_t total = std::max<int64_t>(0, (out - 1) * s + eff - in);
      const int64_t small = total / 2, large = total - total / 2;
      g.pad_begin[d] = attrs.auto_pad == AutoPad::kSameUpper ? small : large;
      g.pad_end[d] = attrs.auto_pad == AutoPad::kSameUpper ? large : small;
    } else {
      const int64_t span = in + g.pad_begin[d] + g.pad_end[d] - eff;
      if (span < 0) {
        out = 0;
      } else if (ceil_mode) {
        out = (span + s - 1) / s + 1;
        // A window may not start in the end padding (it would only see padding).
        if ((out - 1) * s >= in + g.pad_begin[d]) --out;
      } else {
        out = span / s + 1;
      }
    }
    if (out <= 0) {
      throw InvalidArgumentError(what + ": input spatial shape " + IntsToString(g.in) + " is too small for kernel " +
                                 IntsToString(g.kernel) + " with dilations " + IntsToString(g.dilations) +
                                 " and pads " + IntsToString(attrs.pads));
    }
    g.out[d] = out;
  }
  return g;
}

ConvShape ResolveConv(const WindowAttrs& attrs, int64_t group, const Shape& x, const Shape& w,
                      const std::string& what) {
  if (x.size() < 3) {
    throw InvalidArgumentError(what + ": input X must have rank >= 3 (N, C, spatial...), got shape " +
                               ShapeToString(x));
  }
  if (w.size() != x.size()) {
    throw InvalidArgumentError(what + ": weight W has shape " + ShapeToString(w) + ", expected rank " +
                               std::to_string(x.size()) + " like X " + ShapeToString(x));
  }
  ConvShape s;
  s.batch = x[0];
  s.channels = x[1];
  s.out_channels = w[0];
  s.group = group;
  if (group < 1 || s.out_channels % group != 0 || w[1] * group != s.channels) {
    throw InvalidArgumentError(what + ": X " + ShapeToString(x) + " and W " + ShapeToString(w) +
                               " do not match group = " + std::to_string(group) +
                               " (expected C = W[1] * group and W[0] divisible by group)");
  }
  std::span<const int64_t> kernel(w.data() + 2, w.size() - 2);
  if (!attrs.kernel_shape.empty() &&
      !std::equal(kernel.begin(), kernel.end(), attrs.kernel_shape.begin(), attrs.kernel_shape.end())) {
    throw InvalidArgumentError(what + ": kernel_shape " + IntsToString(attrs.kernel_shape) +
                               " does not match the weight's spatial shape " + IntsToString(kernel));
  }
  std::span<const int64_t> in_spatial(x.data() + 2, x.size() - 2);
  s.g = ResolveWindow(attrs, in_spatial, kernel, false, what);
  s.y_shape = {s.batch, s.out_channels};
  s.y_shape.insert(s.y_shape.end(), s.g.out.begin(), s.g.out.end());
  return s;
}

PoolWindows::PoolWindows(const WindowGeometry& g) {
  const size_t r = g.rank();
  const int64_t out_size = g.out_size();
  const int64_t ksize = g.kernel_size();
  begin_.reserve(static_cast<size_t>(out_size) + 1);
  padded_count_.reserve(static_cast<size_t>(out_size));
  offsets_.reserve(static_cast<size_t>(std::min<int64_t>(out_size * ksize, int64_t{1} << 24)));
  begin_.push_back(0);
  std::vector<int64_t> o(r, 0), t(r, 0);
  for (int64_t q = 0; q < out_size; ++q) {
    int64_t rem = q;
    for (size_t d = r; d-- > 0;) {
      o[d] = rem % g.out[d];
      rem /= g.out[d];
    }
    int64_t padded = 1;
    for (size_t d = 0; d < r; ++d) {
      const int64_t start = o[d] * g.strides[d] - g.pad_begin[d];
      int64_t n = 0;
      for (int64_t k = 0; k < g.kernel[d]; ++k) {
        const int64_t i = start + k * g.dilations[d];
        if (i >= -g.pad_begin[d] && i < g.in[d] + g.pad_end[d]) ++n;
      }
      padded *= n;
    }
    padded_count_.push_back(padded);
    // every tap, keeping those inside the input
    std::fill(t.begin(), t.end(), 0);
    for (int64_t k = 0; k < ksize; ++k) {
      int64_t off = 0;
      bool inside = true;
      for (size_t d = 0; d < r; ++d) {
        const int64_t i = o[d] * g.strides[d] - g.pad_begin[d] + t[d] * g.dilations[d];
        if (i < 0 || i >= g.in[d]) {
          inside = false;
          break;
        }
        off = off * g.in[d] + i;
      }
      if (inside) offsets_.push_back(off);
      for (size_t d = r; d-- > 0;) {
        if (++t[d] < g.kernel[d]) break;
        t[d] = 0;
      }
    }
    begin_.push_back(static_cast<int64_t>(offsets_.size()));
  }
}

}  // namespace ferry::ref
