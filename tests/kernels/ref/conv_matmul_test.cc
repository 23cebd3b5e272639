// Reference convolution, matrix-product and pooling kernels beyond the ONNX node tests (whose shapes are tiny):
// the shared blocked GEMM against a double-precision loop on shapes that cross every block boundary, and
// Conv / ConvTranspose / MatMul / MaxPool / AveragePool against naive loops on random configurations (groups,
// depthwise, strides, dilations, asymmetric pads, auto_pad, ceil_mode, batch broadcasting), plus error reporting.
#include <gtest/gtest.h>
#include <onnx/onnx_pb.h>

#include <cmath>
#include <functional>
#include <limits>
#include <random>

#include "ferry/session.h"
#include "testing/op_harness.h"
#include "kernels/ref/gemm.h"

namespace ferry {
namespace {

using Input = testing::NodeInput;

// A one-node model on the ref backend alone (these are ref kernel tests), outputs y0, y1, ...
std::unique_ptr<Session> OneNode(const std::string& op, const std::vector<Input>& inputs, int outputs, int opset,
                                 const std::function<void(onnx::NodeProto&)>& configure = {}) {
  std::vector<std::string> out;
  for (int i = 0; i < outputs; ++i) out.push_back("y" + std::to_string(i));
  return testing::OneNodeSession(op, inputs, out, opset, configure, testing::OnlyBackend("ref", 3));
}

void IntAttr(onnx::NodeProto& n, const std::string& name, int64_t v) {
  auto* a = n.add_attribute();
  a->set_name(name);
  a->set_type(onnx::AttributeProto::INT);
  a->set_i(v);
}

void IntsAttr(onnx::NodeProto& n, const std::string& name, const std::vector<int64_t>& v) {
  auto* a = n.add_attribute();
  a->set_name(name);
  a->set_type(onnx::AttributeProto::INTS);
  for (int64_t x : v) a->add_ints(x);
}

void StringAttr(onnx::NodeProto& n, const std::string& name, const std::string& v) {
  auto* a = n.add_attribute();
  a->set_name(name);
  a->set_type(onnx::AttributeProto::STRING);
  a->set_s(v);
}

Tensor RandomFloats(const Shape& shape, std::mt19937& rng) {
  Tensor t(DataType::kFloat, shape);
  std::uniform_real_distribution<float> dist(-1, 1);
  for (int64_t i = 0; i < t.size(); ++i) t.data<float>()[i] = dist(rng);
  return t;
}

std::vector<Tensor> RunNode(const Session& s, const std::vector<std::pair<std::string, Tensor>>& in) {
  std::vector<Tensor> out;
  for (auto& [name, t] : s.Run(in)) out.push_back(t);
  return out;
}

void ExpectClose(const Tensor& y, const std::vector<double>& want, double tol, const std::string& what) {
  ASSERT_EQ(y.size(), static_cast<int64_t>(want.size())) << what;
  for (int64_t i = 0; i < y.size(); ++i) {
    const double w = want[static_cast<size_t>(i)];
    ASSERT_NEAR(y.data<float>()[i], w, tol * (1 + std::abs(w))) << what << " at " << i;
  }
}

// Row-major multi-index helpers.
std::vector<int64_t> Unravel(int64_t i, const Shape& shape) {
  std::vector<int64_t> idx(shape.size());
  for (size_t d = shape.size(); d-- > 0;) {
    idx[d] = i % shape[d];
    i /= shape[d];
  }
  return idx;
}

TEST(RefGemm, MatchesDoubleLoopAcrossBlockBoundaries) {
  std::mt19937 rng(5);
  std::uniform_real_distribution<float> dist(-1, 1);
  struct Dims {
    int64_t m, n, k;
  };
  std::vector<Dims> dims = {{1, 1, 1},     {1, 37, 300},  {45, 1, 300},  {3, 5, 7},     {130, 17, 260},
                            {7, 1100, 9},  {260, 40, 513}, {4, 16, 256}, {129, 1025, 3}, {2, 2, 600}};
  for (int i = 0; i < 20; ++i) {
    dims.push_back({static_cast<int64_t>(1 + rng() % 150), static_cast<int64_t>(1 + rng() % 150),
                    static_cast<int64_t>(1 + rng() % 300)});
  }
  int iter = 0;
  for (const auto& d : dims) {
    for (int variant = 0; variant < 4; ++variant, ++iter) {
      const bool ta = variant & 1, tb = variant & 2;
      const int64_t lda = (ta ? d.m : d.k) + iter % 3, ldb = (tb ? d.k : d.n) + iter % 2, ldc = d.n + iter % 4;
      std::vector<float> a(static_cast<size_t>((ta ? d.k : d.m) * lda)), b(static_cast<size_t>((tb ? d.n : d.k) * ldb));
      std::vector<float> c(static_cast<size_t>(d.m * ldc));
      for (auto& v : a) v = dist(rng);
      for (auto& v : b) v = dist(rng);
      const float beta = iter % 3 == 0 ? 0.0f : (iter % 3 == 1 ? 1.0f : -0.5f);
      const float alpha = iter % 5 == 0 ? 0.75f : 1.0f;
      for (auto& v : c) v = beta == 0.0f ? std::numeric_limits<float>::quiet_NaN() : dist(rng);
      const std::vector<float> c0 = c;
      ref::GemmF32(ta, tb, d.m, d.n, d.k, alpha, a.data(), lda, b.data(), ldb, beta, c.data(), ldc, 1 + iter % 3);
      for (int64_t i = 0; i < d.m; ++i) {
        for (int64_t j = 0; j < d.n; ++j) {
          double s = 0;
          for (int64_t p = 0; p < d.k; ++p) {
            s += static_cast<double>(ta ? a[static_cast<size_t>(p * lda + i)] : a[static_cast<size_t>(i * lda + p)]) *
                 (tb ? b[static_cast<size_t>(j * ldb + p)] : b[static_cast<size_t>(p * ldb + j)]);
          }
          const double want = alpha * s + (beta == 0.0f ? 0.0 : beta * c0[static_cast<size_t>(i * ldc + j)]);
          ASSERT_NEAR(c[static_cast<size_t>(i * ldc + j)], want, 1e-4 * (1 + std::sqrt(static_cast<double>(d.k))))
              << "m=" << d.m << " n=" << d.n << " k=" << d.k << " ta=" << ta << " tb=" << tb << " at " << i << ","
              << j;
        }
      }
      // Padding columns of C (beyond n) are never touched.
      for (int64_t i = 0; i < d.m; ++i)
        for (int64_t j = d.n; j < ldc; ++j) {
          const float got = c[static_cast<size_t>(i * ldc + j)], was = c0[static_cast<size_t>(i * ldc + j)];
          ASSERT_TRUE(got == was || (std::isnan(got) && std::isnan(was)));
        }
    }
  }
}

struct ConvCase {
  int64_t batch, channels, out_channels, group;
  Shape in, kernel;
  std::vector<int64_t> strides, dilations, pads;  // pads: begin..., end...
  std::string auto_pad = "NOTSET";
};

// Explicit pads the configuration implies (auto_pad resolved).
std::vector<int64_t> ResolvedPads(const ConvCase& c) {
  const size_t r = c.in.size();
  if (c.auto_pad == "NOTSET") return c.pads;
  std::vector<int64_t> pads(2 * r, 0);
  if (c.auto_pad == "VALID") return pads;
  for (size_t d = 0; d < r; ++d) {
    const int64_t out = (c.in[d] + c.strides[d] - 1) / c.strides[d];
    const int64_t eff = (c.kernel[d] - 1) * c.dilations[d] + 1;
    const int64_t total = std::max<int64_t>(0, (out - 1) * c.strides[d] + eff - c.in[d]);
    pads[d] = c.auto_pad == "SAME_UPPER" ? total / 2 : total - total / 2;
    pads[d + r] = total - pads[d];
  }
  return pads;
}

TEST(RefConv, MatchesNaiveConvolutionForRandomConfigs) {
  std::mt19937 rng(7);
  for (int iter = 0; iter < 60; ++iter) {
    ConvCase c;
    const size_t rank = 1 + rng() % 3;
    c.batch = 1 + rng() % 2;
    const int kind = iter % 4;  // 0: plain, 1: grouped, 2: depthwise (maybe with a multiplier), 3: pointwise
    c.group = kind == 1 ? 2 + rng() % 2 : (kind == 2 ? 2 + rng() % 4 : 1);
    c.channels = c.group * (kind == 2 ? 1 : 1 + static_cast<int64_t>(rng() % 3));
    c.out_channels = c.group * (1 + static_cast<int64_t>(rng() % 3));
    if (iter % 10 == 0) c.out_channels = c.group * 35;  // many micro-tile rows, not a multiple of 4
    const int64_t max_in = rank == 3 ? 6 : (rank == 2 ? 14 : 40);
    for (size_t d = 0; d < rank; ++d) {
      c.in.push_back(3 + rng() % max_in);
      c.kernel.push_back(kind == 3 ? 1 : 1 + rng() % 3);
      c.strides.push_back(kind == 3 ? 1 : 1 + rng() % 2);
      c.dilations.push_back(1 + rng() % 2);
    }
    for (size_t d = 0; d < 2 * rank; ++d) c.pads.push_back(kind == 3 ? 0 : rng() % 3);
    if (iter % 7 == 3) c.auto_pad = "SAME_UPPER";
    if (iter % 7 == 5) c.auto_pad = "SAME_LOWER";
    if (iter % 11 == 4) c.auto_pad = "VALID";
    const std::vector<int64_t> pads = ResolvedPads(c);
    Shape out;
    bool ok = true;
    for (size_t d = 0; d < rank; ++d) {
      const int64_t eff = (c.kernel[d] - 1) * c.dilations[d] + 1;
      const int64_t span = c.in[d] + pads[d] + pads[d + rank] - eff;
      ok = ok && span >= 0;
      out.push_back(span >= 0 ? span / c.strides[d] + 1 : 0);
    }
    if (!ok) continue;
    Shape x_shape{c.batch, c.channels}, w_shape{c.out_channels, c.channels / c.group}, y_shape{c.batch, c.out_channels};
    x_shape.insert(x_shape.end(), c.in.begin(), c.in.end());
    w_shape.insert(w_shape.end(), c.kernel.begin(), c.kernel.end());
    y_shape.insert(y_shape.end(), out.begin(), out.end());
    Tensor x = RandomFloats(x_shape, rng), w = RandomFloats(w_shape, rng), b = RandomFloats({c.out_channels}, rng);
    const bool with_bias = iter % 3 != 0;
    auto s = OneNode("Conv", {{"x", DataType::kFloat}, {"w", DataType::kFloat}, {with_bias ? "b" : "", DataType::kFloat}},
                     1, 22, [&](onnx::NodeProto& n) {
                       IntAttr(n, "group", c.group);
                       IntsAttr(n, "strides", c.strides);
                       IntsAttr(n, "dilations", c.dilations);
                       if (iter % 2) IntsAttr(n, "kernel_shape", c.kernel);
                       if (c.auto_pad == "NOTSET") {
                         IntsAttr(n, "pads", c.pads);
                       } else {
                         StringAttr(n, "auto_pad", c.auto_pad);
                       }
                     });
    std::vector<std::pair<std::string, Tensor>> in = {{"x", x}, {"w", w}};
    if (with_bias) in.push_back({"b", b});
    Tensor y = RunNode(*s, in)[0];
    ASSERT_EQ(y.shape(), y_shape) << "iter " << iter;
    // Naive direct convolution in double.
    const int64_t cg = c.channels / c.group, mg = c.out_channels / c.group;
    const int64_t in_size = ShapeElementCount(c.in), ksize = ShapeElementCount(c.kernel), out_size = ShapeElementCount(out);
    std::vector<double> want(static_cast<size_t>(y.size()));
    for (int64_t n = 0; n < c.batch; ++n) {
      for (int64_t m = 0; m < c.out_channels; ++m) {
        const int64_t g = m / mg;
        for (int64_t o = 0; o < out_size; ++o) {
          const std::vector<int64_t> oi = Unravel(o, out);
          double acc = with_bias ? b.data<float>()[m] : 0.0;
          for (int64_t ci = 0; ci < cg; ++ci) {
            for (int64_t t = 0; t < ksize; ++t) {
              const std::vector<int64_t> ti = Unravel(t, c.kernel);
              int64_t off = 0;
              bool inside = true;
              for (size_t d = 0; d < rank; ++d) {
                const int64_t p = oi[d] * c.strides[d] - pads[d] + ti[d] * c.dilations[d];
                inside = inside && p >= 0 && p < c.in[d];
                off = off * c.in[d] + p;
              }
              if (!inside) continue;
              acc += static_cast<double>(x.data<float>()[(n * c.channels + g * cg + ci) * in_size + off]) *
                     w.data<float>()[(m * cg + ci) * ksize + t];
            }
          }
          want[static_cast<size_t>((n * c.out_channels + m) * out_size + o)] = acc;
        }
      }
    }
    ExpectClose(y, want, 1e-4, "Conv iter " + std::to_string(iter) + " x " + ShapeToString(x_shape) + " w " +
                                   ShapeToString(w_shape) + " group " + std::to_string(c.group));
  }
}

TEST(RefConvTranspose, MatchesNaiveScatterForRandomConfigs) {
  std::mt19937 rng(9);
  for (int iter = 0; iter < 40; ++iter) {
    const size_t rank = 1 + rng() % 3;
    const int64_t batch = 1 + rng() % 2, group = 1 + rng() % 2;
    const int64_t channels = group * (1 + rng() % 3), mg = 1 + rng() % 3;
    Shape in, kernel;
    std::vector<int64_t> strides, dilations, pads, out_pad;
    for (size_t d = 0; d < rank; ++d) {
      in.push_back(1 + rng() % (rank == 3 ? 4 : 9));
      kernel.push_back(1 + rng() % 3);
      strides.push_back(1 + rng() % 3);
      dilations.push_back(1 + rng() % 2);
      out_pad.push_back(rng() % strides.back());
    }
    for (size_t d = 0; d < 2 * rank; ++d) pads.push_back(rng() % 2);
    Shape out;
    bool ok = true;
    for (size_t d = 0; d < rank; ++d) {
      const int64_t v = strides[d] * (in[d] - 1) + out_pad[d] + (kernel[d] - 1) * dilations[d] + 1 - pads[d] -
                        pads[d + rank];
      ok = ok && v > 0;
      out.push_back(v);
    }
    if (!ok) continue;
    Shape x_shape{batch, channels}, w_shape{channels, mg}, y_shape{batch, mg * group};
    x_shape.insert(x_shape.end(), in.begin(), in.end());
    w_shape.insert(w_shape.end(), kernel.begin(), kernel.end());
    y_shape.insert(y_shape.end(), out.begin(), out.end());
    Tensor x = RandomFloats(x_shape, rng), w = RandomFloats(w_shape, rng), b = RandomFloats({mg * group}, rng);
    auto s = OneNode("ConvTranspose", {{"x", DataType::kFloat}, {"w", DataType::kFloat}, {"b", DataType::kFloat}}, 1,
                     22, [&](onnx::NodeProto& n) {
                       IntAttr(n, "group", group);
                       IntsAttr(n, "strides", strides);
                       IntsAttr(n, "dilations", dilations);
                       IntsAttr(n, "pads", pads);
                       IntsAttr(n, "output_padding", out_pad);
                     });
    Tensor y = RunNode(*s, {{"x", x}, {"w", w}, {"b", b}})[0];
    ASSERT_EQ(y.shape(), y_shape) << "iter " << iter;
    const int64_t cg = channels / group, in_size = ShapeElementCount(in), out_size = ShapeElementCount(out);
    const int64_t ksize = ShapeElementCount(kernel), oc = mg * group;
    std::vector<double> want(static_cast<size_t>(y.size()), 0.0);
    for (int64_t n = 0; n < batch; ++n)
      for (int64_t m = 0; m < oc; ++m)
        for (int64_t o = 0; o < out_size; ++o) want[static_cast<size_t>((n * oc + m) * out_size + o)] = b.data<float>()[m];
    for (int64_t n = 0; n < batch; ++n) {
      for (int64_t c = 0; c < channels; ++c) {
        const int64_t g = c / cg;
        for (int64_t i = 0; i < in_size; ++i) {
          const std::vector<int64_t> ii = Unravel(i, in);
          const double xv = x.data<float>()[(n * channels + c) * in_size + i];
          for (int64_t j = 0; j < mg; ++j) {
            for (int64_t t = 0; t < ksize; ++t) {
              const std::vector<int64_t> ti = Unravel(t, kernel);
              int64_t off = 0;
              bool inside = true;
              for (size_t d = 0; d < rank; ++d) {
                const int64_t p = ii[d] * strides[d] - pads[d] + ti[d] * dilations[d];
                inside = inside && p >= 0 && p < out[d];
                off = off * out[d] + p;
              }
              if (!inside) continue;
              want[static_cast<size_t>((n * oc + g * mg + j) * out_size + off)] +=
                  xv * w.data<float>()[(c * mg + j) * ksize + t];
            }
          }
        }
      }
    }
    ExpectClose(y, want, 1e-4, "ConvTranspose iter " + std::to_string(iter));
  }
}

TEST(RefMatMul, BroadcastsBatchDimsLikeNumpy) {
  std::mt19937 rng(3);
  const std::vector<std::pair<Shape, Shape>> cases = {
      {{5}, {5}},          {{5}, {2, 5, 3}},       {{2, 3, 4, 5}, {5}},    {{3, 1, 4, 6}, {1, 2, 6, 7}},
      {{2, 70, 33}, {33, 20}}, {{20, 33}, {4, 33, 9}}, {{1, 9, 300}, {300, 1}}, {{6, 3, 8}, {6, 8, 2}}};
  for (const auto& [as, bs] : cases) {
    Tensor a = RandomFloats(as, rng), b = RandomFloats(bs, rng);
    auto s = OneNode("MatMul", {{"a", DataType::kFloat}, {"b", DataType::kFloat}}, 1, 13);
    Tensor y = RunNode(*s, {{"a", a}, {"b", b}})[0];
    // Naive numpy semantics.
    Shape a2 = as.size() == 1 ? Shape{1, as[0]} : as, b2 = bs.size() == 1 ? Shape{bs[0], 1} : bs;
    const int64_t m = a2[a2.size() - 2], k = a2.back(), n = b2.back();
    Shape ab(a2.begin(), a2.end() - 2), bb(b2.begin(), b2.end() - 2);
    const size_t r = std::max(ab.size(), bb.size());
    ab.insert(ab.begin(), r - ab.size(), 1);
    bb.insert(bb.begin(), r - bb.size(), 1);
    Shape batch(r);
    for (size_t d = 0; d < r; ++d) batch[d] = std::max(ab[d], bb[d]);
    Shape want_shape = batch;
    if (as.size() > 1) want_shape.push_back(m);
    if (bs.size() > 1) want_shape.push_back(n);
    ASSERT_EQ(y.shape(), want_shape) << ShapeToString(as) << " x " << ShapeToString(bs);
    std::vector<double> want;
    for (int64_t q = 0; q < ShapeElementCount(batch); ++q) {
      const std::vector<int64_t> bi = Unravel(q, batch);
      int64_t ao = 0, bo = 0;
      for (size_t d = 0; d < r; ++d) {
        ao = ao * ab[d] + (ab[d] == 1 ? 0 : bi[d]);
        bo = bo * bb[d] + (bb[d] == 1 ? 0 : bi[d]);
      }
      for (int64_t i = 0; i < m; ++i)
        for (int64_t j = 0; j < n; ++j) {
          double acc = 0;
          for (int64_t p = 0; p < k; ++p)
            acc += static_cast<double>(a.data<float>()[ao * m * k + i * k + p]) * b.data<float>()[bo * k * n + p * n + j];
          want.push_back(acc);
        }
    }
    ExpectClose(y, want, 1e-4, "MatMul " + ShapeToString(as) + " x " + ShapeToString(bs));
  }
}

TEST(RefPool, MaxAndAverageMatchNaiveWindows) {
  std::mt19937 rng(13);
  for (int iter = 0; iter < 40; ++iter) {
    const size_t rank = 1 + rng() % 3;
    Shape in, kernel;
    std::vector<int64_t> strides, dilations, pads;
    for (size_t d = 0; d < rank; ++d) {
      in.push_back(2 + rng() % (rank == 3 ? 5 : 12));
      kernel.push_back(1 + rng() % 3);
      strides.push_back(1 + rng() % 3);
      dilations.push_back(1 + rng() % 2);
    }
    for (size_t d = 0; d < 2 * rank; ++d) pads.push_back(rng() % std::min<int64_t>(2, kernel[d % rank]));
    const bool ceil_mode = iter % 2, include_pad = iter % 3 == 0;
    Shape out;
    bool ok = true;
    for (size_t d = 0; d < rank; ++d) {
      const int64_t span = in[d] + pads[d] + pads[d + rank] - ((kernel[d] - 1) * dilations[d] + 1);
      ok = ok && span >= 0;
      int64_t o = ceil_mode ? (span + strides[d] - 1) / strides[d] + 1 : span / strides[d] + 1;
      if (ceil_mode && (o - 1) * strides[d] >= in[d] + pads[d]) --o;
      out.push_back(o);
    }
    if (!ok) continue;
    Shape x_shape{2, 3};
    x_shape.insert(x_shape.end(), in.begin(), in.end());
    Tensor x = RandomFloats(x_shape, rng);
    for (const char* op : {"MaxPool", "AveragePool"}) {
      const bool is_max = std::string(op) == "MaxPool";
      auto s = OneNode(op, {{"x", DataType::kFloat}}, 1, 22, [&](onnx::NodeProto& n) {
        IntsAttr(n, "kernel_shape", kernel);
        IntsAttr(n, "strides", strides);
        IntsAttr(n, "dilations", dilations);
        IntsAttr(n, "pads", pads);
        IntAttr(n, "ceil_mode", ceil_mode);
        if (!is_max) IntAttr(n, "count_include_pad", include_pad);
      });
      Tensor y = RunNode(*s, {{"x", x}})[0];
      const int64_t in_size = ShapeElementCount(in), out_size = ShapeElementCount(out), ksize = ShapeElementCount(kernel);
      std::vector<double> want;
      for (int64_t pl = 0; pl < 6; ++pl) {
        for (int64_t o = 0; o < out_size; ++o) {
          const std::vector<int64_t> oi = Unravel(o, out);
          double best = -INFINITY, sum = 0;
          int64_t count = 0, padded = 0;
          for (int64_t t = 0; t < ksize; ++t) {
            const std::vector<int64_t> ti = Unravel(t, kernel);
            int64_t off = 0;
            bool inside = true, in_padded = true;
            for (size_t d = 0; d < rank; ++d) {
              const int64_t p = oi[d] * strides[d] - pads[d] + ti[d] * dilations[d];
              inside = inside && p >= 0 && p < in[d];
              in_padded = in_padded && p >= -pads[d] && p < in[d] + pads[d + rank];
              off = off * in[d] + p;
            }
            padded += in_padded;
            if (!inside) continue;
            const double v = x.data<float>()[pl * in_size + off];
            best = std::max(best, v);
            sum += v;
            ++count;
          }
          want.push_back(is_max ? best : sum / static_cast<double>(include_pad ? padded : count));
        }
      }
      ExpectClose(y, want, 1e-5, std::string(op) + " iter " + std::to_string(iter));
    }
  }
}

TEST(RefConv, ReportsShapeMismatchesAsInvalidArgument) {
  auto s = OneNode("Conv", {{"x", DataType::kFloat}, {"w", DataType::kFloat}}, 1, 22,
                   [](onnx::NodeProto& n) { IntAttr(n, "group", 2); });
  std::mt19937 rng(1);
  try {
    RunNode(*s, {{"x", RandomFloats({1, 3, 5, 5}, rng)}, {"w", RandomFloats({4, 2, 3, 3}, rng)}});
    FAIL() << "expected an error";
  } catch (const InvalidArgumentError& e) {
    EXPECT_NE(std::string(e.what()).find("group"), std::string::npos) << e.what();
  }
  auto mm = OneNode("MatMul", {{"a", DataType::kFloat}, {"b", DataType::kFloat}}, 1, 13);
  EXPECT_THROW(RunNode(*mm, {{"a", RandomFloats({2, 3}, rng)}, {"b", RandomFloats({4, 2}, rng)}}),
               InvalidArgumentError);
  auto unpool = OneNode("MaxUnpool", {{"x", DataType::kFloat}, {"i", DataType::kInt64}}, 1, 22,
                        [](onnx::NodeProto& n) { IntsAttr(n, "kernel_shape", {2, 2}); });
  Tensor idx = Tensor::FromVector<int64_t>(DataType::kInt64, {1, 1, 1, 1}, {99});
  EXPECT_THROW(RunNode(*unpool, {{"x", RandomFloats({1, 1, 1, 1}, rng)}, {"i", idx}}), InvalidArgumentError);
}

}  // namespace
}  // namespace ferry
