#include "semantics/window.h"

#include <algorithm>

#include "core/checked_int.h"
#include "ferry/error.h"

namespace ferry::semantics {
namespace {

int64_t Product(const std::vector<int64_t>& v) {
  int64_t p = 1;
  for (int64_t x : v) p *= x;
  return p;
}

// (kernel - 1) * dilation + 1: the extent a dilated kernel spans.
std::optional<int64_t> DilatedKernel(int64_t kernel, int64_t dilation) {
  const auto m = CheckedMul(kernel - 1, dilation);
  return m ? CheckedAdd(*m, 1) : std::nullopt;
}

bool Same(AutoPad p) { return p == AutoPad::kSameUpper || p == AutoPad::kSameLower; }

// `total` padding split between the two sides: the odd one at the end for SAME_UPPER, at the beginning otherwise.
void SplitPadding(int64_t total, AutoPad auto_pad, WindowDim* d) {
  const int64_t small = total / 2, large = total - total / 2;
  d->pad_begin = auto_pad == AutoPad::kSameUpper ? small : large;
  d->pad_end = auto_pad == AutoPad::kSameUpper ? large : small;
}

std::string Ints(std::span<const int64_t> v) { return ShapeToString(v); }

}  // namespace

std::optional<AutoPad> ParseAutoPad(std::string_view value) {
  if (value == "NOTSET" || value.empty()) return AutoPad::kNotSet;
  if (value == "SAME_UPPER") return AutoPad::kSameUpper;
  if (value == "SAME_LOWER") return AutoPad::kSameLower;
  if (value == "VALID") return AutoPad::kValid;
  return std::nullopt;
}

std::string AutoPadError(std::string_view value) {
  return "auto_pad '" + std::string(value) + "' is not one of NOTSET, SAME_UPPER, SAME_LOWER, VALID";
}

int64_t WindowGeometry::in_size() const { return Product(in); }
int64_t WindowGeometry::out_size() const { return Product(out); }
int64_t WindowGeometry::kernel_size() const { return Product(kernel); }

WindowAttrs WindowAttrs::FromNode(const ir::Node& node) {
  WindowAttrs a;
  const std::string pad = node.GetString("auto_pad", "NOTSET");
  const std::optional<AutoPad> parsed = ParseAutoPad(pad);
  if (!parsed) throw InvalidModelError(node.Describe() + ": " + AutoPadError(pad));
  a.auto_pad = *parsed;
  a.kernel_shape = node.GetInts("kernel_shape");
  a.strides = node.GetInts("strides");
  a.dilations = node.GetInts("dilations");
  a.pads = node.GetInts("pads");
  auto check_positive = [&](const std::vector<int64_t>& v, const char* name) {
    for (int64_t x : v) {
      if (x < 1) {
        throw InvalidModelError(node.Describe() + ": attribute " + name + " = " + Ints(v) + " must hold values >= 1");
      }
    }
  };
  check_positive(a.kernel_shape, "kernel_shape");
  check_positive(a.strides, "strides");
  check_positive(a.dilations, "dilations");
  for (int64_t x : a.pads) {
    if (x < 0) {
      throw InvalidModelError(node.Describe() + ": attribute pads = " + Ints(a.pads) + " must hold values >= 0");
    }
  }
  return a;
}

std::optional<WindowDim> ResolveWindowDim(int64_t in, int64_t kernel, int64_t stride, int64_t dilation,
                                          int64_t pad_begin, int64_t pad_end, AutoPad auto_pad, bool ceil_mode) {
  const auto eff = DilatedKernel(kernel, dilation);
  if (!eff) return std::nullopt;
  WindowDim d;
  if (Same(auto_pad)) {
    d.out = in / stride + (in % stride != 0 ? 1 : 0);
    const auto reach = CheckedMul(d.out - 1, stride);
    const auto total = reach ? CheckedAdd(*reach, *eff) : std::nullopt;
    if (!total) return std::nullopt;
    SplitPadding(std::max<int64_t>(0, *total - in), auto_pad, &d);
    return d;
  }
  if (auto_pad == AutoPad::kNotSet) {
    d.pad_begin = pad_begin;
    d.pad_end = pad_end;
  }
  const auto padded = CheckedAdd(d.pad_begin, d.pad_end);
  const auto total = padded ? CheckedAdd(in, *padded) : std::nullopt;
  if (!total) return std::nullopt;
  const int64_t span = *total - *eff;
  if (span < 0) {
    d.out = 0;
  } else if (ceil_mode) {
    d.out = span / stride + (span % stride != 0 ? 1 : 0) + 1;
    // A window may not start in the end padding (it would only see padding).
    if ((d.out - 1) * stride >= in + d.pad_begin) --d.out;
  } else {
    d.out = span / stride + 1;
  }
  return d;
}

bool WindowKeepsExtent(int64_t kernel, int64_t stride, int64_t dilation, int64_t pad_begin, int64_t pad_end,
                       AutoPad auto_pad) {
  if (stride != 1) return false;
  if (Same(auto_pad)) return true;
  const bool no_pads = auto_pad != AutoPad::kNotSet || (pad_begin == 0 && pad_end == 0);
  return DilatedKernel(kernel, dilation) == int64_t{1} && no_pads;
}

std::string SpatialLengthError(std::span<const int64_t> v, size_t rank, std::string_view name) {
  if (v.empty() || v.size() == rank) return "";
  return "attribute " + std::string(name) + " = " + Ints(v) + " has " + std::to_string(v.size()) +
         " values, expected " + std::to_string(rank) + " (one per spatial dimension)";
}

std::vector<int64_t> SpatialAttr(const std::vector<int64_t>& v, size_t rank, int64_t def, const char* name,
                                 const std::string& what) {
  if (v.empty()) return std::vector<int64_t>(rank, def);
  if (const std::string e = SpatialLengthError(v, rank, name); !e.empty()) throw InvalidArgumentError(what + ": " + e);
  return v;
}

WindowGeometry ResolveWindow(const WindowAttrs& attrs, std::span<const int64_t> in_spatial,
                             std::span<const int64_t> kernel, bool ceil_mode, const std::string& what) {
  const size_t rank = in_spatial.size();
  WindowGeometry g;
  g.in.assign(in_spatial.begin(), in_spatial.end());
  g.kernel.assign(kernel.begin(), kernel.end());
  if (g.kernel.size() != rank) {
    throw InvalidArgumentError(what + ": kernel shape " + Ints(g.kernel) + " does not match the " +
                               std::to_string(rank) + " spatial dimensions of the input");
  }
  for (int64_t k : g.kernel) {
    if (k < 1) throw InvalidArgumentError(what + ": kernel shape " + Ints(g.kernel) + " has an empty dim");
  }
  g.strides = SpatialAttr(attrs.strides, rank, 1, "strides", what);
  g.dilations = SpatialAttr(attrs.dilations, rank, 1, "dilations", what);
  std::vector<int64_t> pads(2 * rank, 0);
  if (attrs.auto_pad == AutoPad::kNotSet && !attrs.pads.empty()) {
    if (attrs.pads.size() != 2 * rank) {
      throw InvalidArgumentError(what + ": attribute pads = " + Ints(attrs.pads) + " has " +
                                 std::to_string(attrs.pads.size()) + " values, expected " + std::to_string(2 * rank));
    }
    pads = attrs.pads;
  }
  g.pad_begin.assign(rank, 0);
  g.pad_end.assign(rank, 0);
  g.out.assign(rank, 0);
  for (size_t d = 0; d < rank; ++d) {
    const std::optional<WindowDim> r = ResolveWindowDim(g.in[d], g.kernel[d], g.strides[d], g.dilations[d], pads[d],
                                                        pads[d + rank], attrs.auto_pad, ceil_mode);
    if (!r) {
      throw InvalidArgumentError(what + ": the window arithmetic overflows for input spatial shape " + Ints(g.in) +
                                 ", kernel " + Ints(g.kernel) + ", dilations " + Ints(g.dilations) + " and pads " +
                                 Ints(attrs.pads));
    }
    if (r->out <= 0) {
      throw InvalidArgumentError(what + ": input spatial shape " + Ints(g.in) + " is too small for kernel " +
                                 Ints(g.kernel) + " with dilations " + Ints(g.dilations) + " and pads " +
                                 Ints(attrs.pads));
    }
    g.out[d] = r->out;
    g.pad_begin[d] = r->pad_begin;
    g.pad_end[d] = r->pad_end;
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
    throw InvalidArgumentError(what + ": kernel_shape " + Ints(attrs.kernel_shape) +
                               " does not match the weight's spatial shape " + Ints(kernel));
  }
  std::span<const int64_t> in_spatial(x.data() + 2, x.size() - 2);
  s.g = ResolveWindow(attrs, in_spatial, kernel, false, what);
  s.y_shape = {s.batch, s.out_channels};
  s.y_shape.insert(s.y_shape.end(), s.g.out.begin(), s.g.out.end());
  return s;
}

ConvTransposeAttrs ConvTransposeAttrs::FromNode(const ir::Node& node) {
  ConvTransposeAttrs a;
  a.window = WindowAttrs::FromNode(node);
  a.group = node.GetInt("group", 1);
  a.output_padding = node.GetInts("output_padding");
  a.output_shape = node.GetInts("output_shape");
  if (a.group < 1) throw InvalidModelError(node.Describe() + ": group must be >= 1, got " + std::to_string(a.group));
  for (int64_t v : a.output_padding) {
    if (v < 0) throw InvalidModelError(node.Describe() + ": output_padding must be >= 0");
  }
  return a;
}

std::string OutputPaddingError(std::span<const int64_t> output_padding, size_t rank) {
  return SpatialLengthError(output_padding, rank, "output_padding");
}

std::optional<std::vector<int64_t>> SpatialOutputShape(const std::vector<int64_t>& output_shape, size_t rank) {
  if (output_shape.size() == rank) return output_shape;
  if (output_shape.size() == rank + 2) return std::vector<int64_t>(output_shape.begin() + 2, output_shape.end());
  return std::nullopt;
}

std::string OutputShapeError(const std::vector<int64_t>& output_shape, size_t rank) {
  return "output_shape " + Ints(output_shape) + " must have " + std::to_string(rank) + " values";
}

std::optional<WindowDim> ResolveConvTransposeDim(int64_t in, int64_t kernel, int64_t stride, int64_t dilation,
                                                 int64_t pad_begin, int64_t pad_end, int64_t output_padding,
                                                 AutoPad auto_pad, std::optional<int64_t> output_shape) {
  const auto eff = DilatedKernel(kernel, dilation);
  const auto reach = CheckedMul(stride, in - 1);
  const auto with_kernel = eff && reach ? CheckedAdd(*reach, *eff) : std::nullopt;
  const auto natural = with_kernel ? CheckedAdd(*with_kernel, output_padding) : std::nullopt;
  if (!natural) return std::nullopt;
  WindowDim d;
  if (output_shape || Same(auto_pad)) {
    // Pads come from the requested output extent.
    const auto out = output_shape ? output_shape : CheckedMul(in, stride);
    const auto total = out ? CheckedSub(*natural, *out) : std::nullopt;
    if (!total) return std::nullopt;
    d.out = *out;
    SplitPadding(std::max<int64_t>(0, *total), auto_pad, &d);
    return d;
  }
  if (auto_pad == AutoPad::kNotSet) {
    d.pad_begin = pad_begin;
    d.pad_end = pad_end;
  }
  const auto padded = CheckedAdd(d.pad_begin, d.pad_end);
  const auto out = padded ? CheckedSub(*natural, *padded) : std::nullopt;
  if (!out) return std::nullopt;
  d.out = *out;
  return d;
}

ConvTransposeShape ResolveConvTranspose(const ConvTransposeAttrs& attrs, const Shape& x, const Shape& w,
                                        const std::string& what) {
  if (x.size() < 3 || w.size() != x.size()) {
    throw InvalidArgumentError(what + ": X " + ShapeToString(x) + " and W " + ShapeToString(w) +
                               " must have the same rank >= 3");
  }
  const WindowAttrs& win = attrs.window;
  ConvTransposeShape s;
  s.batch = x[0];
  s.channels = x[1];
  s.group = attrs.group;
  if (w[0] != s.channels || s.channels % s.group != 0) {
    throw InvalidArgumentError(what + ": W " + ShapeToString(w) + " does not match X " + ShapeToString(x) +
                               " with group = " + std::to_string(s.group) + " (expected W[0] = C, divisible by group)");
  }
  s.out_channels = w[1] * s.group;
  const size_t rank = x.size() - 2;
  s.kernel.assign(w.begin() + 2, w.end());
  if (!win.kernel_shape.empty() && win.kernel_shape != s.kernel) {
    throw InvalidArgumentError(what + ": kernel_shape " + Ints(win.kernel_shape) +
                               " does not match the weight's spatial shape " + Ints(s.kernel));
  }
  s.in.assign(x.begin() + 2, x.end());
  s.strides = SpatialAttr(win.strides, rank, 1, "strides", what);
  s.dilations = SpatialAttr(win.dilations, rank, 1, "dilations", what);
  if (const std::string e = OutputPaddingError(attrs.output_padding, rank); !e.empty()) {
    throw InvalidModelError(what + ": " + e);
  }
  s.output_padding = attrs.output_padding.empty() ? std::vector<int64_t>(rank, 0) : attrs.output_padding;
  std::optional<std::vector<int64_t>> out_shape;
  if (!attrs.output_shape.empty()) {
    out_shape = SpatialOutputShape(attrs.output_shape, rank);
    if (!out_shape) throw InvalidArgumentError(what + ": " + OutputShapeError(attrs.output_shape, rank));
  }
  std::vector<int64_t> pads(2 * rank, 0);
  if (win.auto_pad == AutoPad::kNotSet && !win.pads.empty() && !out_shape) {
    if (win.pads.size() != 2 * rank) {
      throw InvalidArgumentError(what + ": attribute pads = " + Ints(win.pads) + " has " +
                                 std::to_string(win.pads.size()) + " values, expected " + std::to_string(2 * rank));
    }
    pads = win.pads;
  }
  s.out.assign(rank, 0);
  s.pad_begin.assign(rank, 0);
  s.pad_end.assign(rank, 0);
  for (size_t d = 0; d < rank; ++d) {
    const std::optional<int64_t> requested = out_shape ? std::optional<int64_t>((*out_shape)[d]) : std::nullopt;
    const std::optional<WindowDim> r =
        ResolveConvTransposeDim(s.in[d], s.kernel[d], s.strides[d], s.dilations[d], pads[d], pads[d + rank],
                                s.output_padding[d], win.auto_pad, requested);
    if (!r) {
      throw InvalidArgumentError(what + ": the output spatial extent along dim " + std::to_string(d) +
                                 " overflows int64");
    }
    if (r->out <= 0) {
      throw InvalidArgumentError(what + ": the output spatial extent along dim " + std::to_string(d) + " would be " +
                                 std::to_string(r->out));
    }
    s.out[d] = r->out;
    s.pad_begin[d] = r->pad_begin;
    s.pad_end[d] = r->pad_end;
  }
  s.y_shape = {s.batch, s.out_channels};
  s.y_shape.insert(s.y_shape.end(), s.out.begin(), s.out.end());
  return s;
}

std::optional<int64_t> MaxUnpoolOutputDim(int64_t in, int64_t kernel, int64_t stride, int64_t pad_begin,
                                          int64_t pad_end) {
  std::optional<int64_t> o = CheckedMul(in - 1, stride);
  for (const auto& [add, sign] : {std::pair{kernel, 1}, std::pair{pad_begin, -1}, std::pair{pad_end, -1}}) {
    if (o) o = sign > 0 ? CheckedAdd(*o, add) : CheckedSub(*o, add);
  }
  return o;
}

}  // namespace ferry::semantics
