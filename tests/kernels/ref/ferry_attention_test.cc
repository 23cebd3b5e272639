// The ref kernel of ai.ferry Attention (schemas_ferry.cc) against a direct computation of its definition in double
// (Softmax(scale * Q Kᵀ + mask) V, leading dims broadcast) on small random shapes: Sq != Sk, Dh != Dv, K given
// as [.., Sk, Dh] or transposed, masks of every broadcast shape, leading dims broadcasting between Q, K, V and the
// mask; a row masked by -inf everywhere gives NaN like the unfused ONNX graph on ref; empty sizes; and the shape
// errors at session creation (shape inference) and at run time.
#include <gtest/gtest.h>
#include <onnx/onnx_pb.h>

#include <cmath>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include "ferry/session.h"
#include "testing/model_builder.h"
#include "testing/op_harness.h"

namespace ferry::testing {
namespace {

int64_t Pick(std::mt19937& rng, int64_t lo, int64_t hi) { return std::uniform_int_distribution<int64_t>(lo, hi)(rng); }

// The element offset in a tensor of shape `s` of `idx`, an index into the broadcast shape (right-aligned; dims of
// 1 in `s` broadcast).
int64_t BroadcastOffset(const std::vector<int64_t>& idx, const Shape& s) {
  int64_t off = 0, stride = 1;
  for (size_t j = 0; j < s.size(); ++j) {
    const size_t d = s.size() - 1 - j;
    const int64_t i = idx[idx.size() - 1 - j];
    off += (s[d] == 1 ? 0 : i) * stride;
    stride *= s[d];
  }
  return off;
}

// The definition, in double: Y[lead, i, c] = sum_j softmax_j(scale * sum_d Q[i, d] K[j, d] + mask[i, j]) V[j, c].
Tensor Direct(const Tensor& q, const Tensor& k, const Tensor& v, const Tensor* mask, float scale, bool kt) {
  const int64_t sq = q.dim(q.rank() - 2), dh = q.dim(q.rank() - 1);
  const int64_t sk = kt ? k.dim(k.rank() - 1) : k.dim(k.rank() - 2), dv = v.dim(v.rank() - 1);
  // Leading dims broadcast.
  const Tensor* ops[4] = {&q, &k, &v, mask};
  size_t lr = 0;
  for (const Tensor* t : ops) {
    if (t && t->rank() > 2) lr = std::max(lr, static_cast<size_t>(t->rank() - 2));
  }
  Shape lead(lr, 1);
  for (const Tensor* t : ops) {
    if (!t || t->rank() <= 2) continue;
    for (int64_t j = 0; j < t->rank() - 2; ++j) {
      int64_t& d = lead[lr - static_cast<size_t>(t->rank() - 2) + static_cast<size_t>(j)];
      if (t->dim(j) != 1) d = t->dim(j);
    }
  }
  Shape out_shape = lead;
  out_shape.push_back(sq);
  out_shape.push_back(dv);
  Tensor y(DataType::kFloat, out_shape);
  int64_t batch = 1;
  for (int64_t d : lead) batch *= d;
  std::vector<int64_t> idx(lr + 2, 0);
  for (int64_t b = 0; b < batch; ++b) {
    int64_t rest = b;
    for (size_t j = lr; j-- > 0;) {
      idx[j] = rest % lead[j];
      rest /= lead[j];
    }
    auto at = [&](const Tensor& t, int64_t r, int64_t c) {
      idx[lr] = r;
      idx[lr + 1] = c;
      return static_cast<double>(t.data<float>()[BroadcastOffset(idx, t.shape())]);
    };
    for (int64_t i = 0; i < sq; ++i) {
      std::vector<double> s(static_cast<size_t>(sk));
      for (int64_t j = 0; j < sk; ++j) {
        double dot = 0;
        for (int64_t d = 0; d < dh; ++d) dot += at(q, i, d) * (kt ? at(k, d, j) : at(k, j, d));
        s[static_cast<size_t>(j)] = scale * dot + (mask ? at(*mask, i, j) : 0.0);
      }
      double mx = -std::numeric_limits<double>::infinity(), sum = 0;
      for (double x : s) mx = std::max(mx, x);
      for (double& x : s) sum += (x = std::exp(x - mx));
      for (int64_t c = 0; c < dv; ++c) {
        double acc = 0;
        for (int64_t j = 0; j < sk; ++j) acc += s[static_cast<size_t>(j)] / sum * at(v, j, c);
        y.data<float>()[(b * sq + i) * dv + c] = static_cast<float>(acc);
      }
    }
  }
  return y;
}

OpTest AttentionTest(const Tensor& q, const Tensor& k, const Tensor& v, const Tensor* mask, float scale, bool kt) {
  OpTest t{.op = "Attention",
           .domain = "ai.ferry",
           .opset = 1,
           .inputs = {In("q", q), In("k", k), In("v", v)},
           .attributes = {Float("scale", scale), Int("k_transposed", kt ? 1 : 0)}};
  if (mask) t.inputs.push_back(In("mask", *mask));
  return t;
}

Tensor RunRefAttention(const Tensor& q, const Tensor& k, const Tensor& v, const Tensor* mask, float scale, bool kt,
                       int threads = 1) {
  const auto out = RunOn(AttentionTest(q, k, v, mask, scale, kt), {"ref"}, true, threads);
  return out.at(0).second;
}

// A random lead shape of rank 0-2 and, for one operand, the same with some dims replaced by 1.
Shape RandomLead(std::mt19937& rng) {
  Shape s(static_cast<size_t>(Pick(rng, 0, 2)));
  for (int64_t& d : s) d = Pick(rng, 1, 3);
  return s;
}
Shape Thinned(const Shape& lead, std::mt19937& rng) {
  Shape s = lead;
  for (int64_t& d : s) {
    if (Pick(rng, 0, 3) == 0) d = 1;
  }
  if (!s.empty() && Pick(rng, 0, 3) == 0) s.erase(s.begin());  // a lower rank broadcasts too
  return s;
}
Shape Cat(Shape a, std::initializer_list<int64_t> b) {
  a.insert(a.end(), b.begin(), b.end());
  return a;
}

TEST(RefFerryAttention, MatchesTheDefinition) {
  std::mt19937 rng(3);
  for (int it = 0; it < 60; ++it) {
    const int64_t sq = Pick(rng, 1, 6), sk = Pick(rng, 1, 7), dh = Pick(rng, 1, 5), dv = Pick(rng, 1, 6);
    const bool kt = Pick(rng, 0, 1) == 1;
    const Shape lead = RandomLead(rng);
    const Tensor q = RandomTensor(DataType::kFloat, Cat(Thinned(lead, rng), {sq, dh}), rng);
    const Shape k_lead = Thinned(lead, rng);
    const Tensor k = RandomTensor(DataType::kFloat, kt ? Cat(k_lead, {dh, sk}) : Cat(k_lead, {sk, dh}), rng);
    const Tensor v = RandomTensor(DataType::kFloat, Cat(lead, {sk, dv}), rng);
    // Mask: none, or a rank-0..(lead+2) shape whose dims are 1 or the scores'.
    const int mask_kind = static_cast<int>(Pick(rng, 0, 5));
    Shape ms;
    switch (mask_kind) {
      case 1: ms = {}; break;
      case 2: ms = {sk}; break;
      case 3: ms = {sq, Pick(rng, 0, 1) ? sk : 1}; break;
      case 4: ms = Cat(Thinned(lead, rng), {Pick(rng, 0, 1) ? sq : 1, sk}); break;
      case 5: ms = {1, 1, 1, sk}; break;  // may add leading dims the others lack
      default: break;
    }
    const Tensor mask = RandomTensor(DataType::kFloat, ms, rng, -3, 3);
    const Tensor* m = mask_kind ? &mask : nullptr;
    const float scale = static_cast<float>(Pick(rng, 1, 8)) / 4.0f;
    SCOPED_TRACE(::testing::Message() << "Q " << ShapeToString(q.shape()) << " K " << ShapeToString(k.shape())
                                      << (kt ? " (kt)" : "") << " V " << ShapeToString(v.shape()) << " mask "
                                      << (m ? ShapeToString(ms) : "none"));
    const Tensor got = RunRefAttention(q, k, v, m, scale, kt, it % 2 + 1);
    EXPECT_TRUE(TensorsClose(got, Direct(q, k, v, m, scale, kt), 1e-5, 1e-5));
  }
}

// Div(Q, c) -> MatMul(·, Transpose(K)) -> Add(mask) -> Softmax -> MatMul(·, V), on ref, level 0.
Tensor RunUnfused(const Tensor& q, const Tensor& k, const Tensor& v, const Tensor& mask, float c) {
  ModelBuilder b(17);
  auto input = [&](const std::string& name, const Tensor& t) {
    auto* vi = b.graph().add_input();
    vi->set_name(name);
    vi->mutable_type()->mutable_tensor_type()->set_elem_type(onnx::TensorProto::FLOAT);
    for (int64_t d : t.shape()) vi->mutable_type()->mutable_tensor_type()->mutable_shape()->add_dim()->set_dim_value(d);
  };
  input("q", q);
  input("k", k);
  input("v", v);
  input("mask", mask);
  b.FloatInitializer("c", {}, {c});
  b.Node("Div", {"q", "c"}, {"qs"});
  auto& tr = b.Node("Transpose", {"k"}, {"kt"});
  auto* perm = tr.add_attribute();
  perm->set_name("perm");
  perm->set_type(onnx::AttributeProto::INTS);
  for (int64_t i = 0; i < k.rank(); ++i) perm->add_ints(i == k.rank() - 2 ? i + 1 : i == k.rank() - 1 ? i - 1 : i);
  b.Node("MatMul", {"qs", "kt"}, {"s"});
  b.Node("Add", {"s", "mask"}, {"sm"});
  b.Node("Softmax", {"sm"}, {"p"});
  b.Node("MatMul", {"p", "v"}, {"y"});
  b.Output("y", onnx::TensorProto::FLOAT, {});
  const std::string bytes = b.Bytes();
  SessionOptions o = OnlyBackend("ref", 1);
  o.optimization_level = 0;
  auto session = Session::CreateFromBytes({reinterpret_cast<const uint8_t*>(bytes.data()), bytes.size()}, o);
  return session->Run({{"q", q}, {"k", k}, {"v", v}, {"mask", mask}})[0].second;
}

TEST(RefFerryAttention, FullyMaskedRowIsNanLikeTheUnfusedGraph) {
  std::mt19937 rng(5);
  const Tensor q = RandomTensor(DataType::kFloat, {2, 4, 3}, rng);
  const Tensor k = RandomTensor(DataType::kFloat, {2, 5, 3}, rng);
  const Tensor v = RandomTensor(DataType::kFloat, {2, 5, 6}, rng);
  Tensor mask = RandomTensor(DataType::kFloat, {4, 5}, rng);
  const float inf = std::numeric_limits<float>::infinity();
  for (int64_t j = 0; j < 5; ++j) mask.data<float>()[1 * 5 + j] = -inf;  // row 1: every key masked
  mask.data<float>()[2 * 5 + 3] = -inf;                                   // row 2: one key masked
  mask.data<float>()[3 * 5 + 0] = inf;                                    // row 3: +inf: NaN too
  const Tensor want = RunUnfused(q, k, v, mask, 2.0f);
  const Tensor got = RunRefAttention(q, k, v, &mask, 0.5f, false);
  EXPECT_TRUE(TensorsClose(got, want, 1e-5, 1e-5));
  for (int64_t b = 0; b < 2; ++b) {
    for (int64_t c = 0; c < 6; ++c) {
      EXPECT_TRUE(std::isnan(got.data<float>()[(b * 4 + 1) * 6 + c]));
      EXPECT_TRUE(std::isnan(got.data<float>()[(b * 4 + 3) * 6 + c]));
      EXPECT_FALSE(std::isnan(got.data<float>()[(b * 4 + 2) * 6 + c]));
    }
  }
}

TEST(RefFerryAttention, EmptySizes) {
  std::mt19937 rng(9);
  // No keys: the softmax is over nothing and P V sums nothing: zeros.
  const Tensor y0 = RunRefAttention(RandomTensor(DataType::kFloat, {2, 3, 4}, rng),
                                    RandomTensor(DataType::kFloat, {2, 0, 4}, rng),
                                    RandomTensor(DataType::kFloat, {2, 0, 5}, rng), nullptr, 1.0f, false);
  ASSERT_EQ(y0.shape(), (Shape{2, 3, 5}));
  for (int64_t i = 0; i < y0.size(); ++i) EXPECT_EQ(y0.data<float>()[i], 0.0f);
  // Dh = 0: every score is the mask alone.
  const Tensor mask = RandomTensor(DataType::kFloat, {3, 4}, rng);
  const Tensor q = RandomTensor(DataType::kFloat, {3, 0}, rng), k = RandomTensor(DataType::kFloat, {4, 0}, rng);
  const Tensor v = RandomTensor(DataType::kFloat, {4, 2}, rng);
  EXPECT_TRUE(TensorsClose(RunRefAttention(q, k, v, &mask, 1.0f, false), Direct(q, k, v, &mask, 1.0f, false), 1e-6,
                           1e-6));
  // No query rows, no value columns, an empty batch.
  EXPECT_EQ(RunRefAttention(RandomTensor(DataType::kFloat, {0, 4}, rng), RandomTensor(DataType::kFloat, {3, 4}, rng),
                            RandomTensor(DataType::kFloat, {3, 2}, rng), nullptr, 1.0f, false)
                .shape(),
            (Shape{0, 2}));
  EXPECT_EQ(RunRefAttention(RandomTensor(DataType::kFloat, {0, 2, 4}, rng),
                            RandomTensor(DataType::kFloat, {1, 3, 4}, rng),
                            RandomTensor(DataType::kFloat, {1, 3, 2}, rng), nullptr, 1.0f, false)
                .shape(),
            (Shape{0, 2, 2}));
}

TEST(RefFerryAttention, ShapeErrors) {
  std::mt19937 rng(1);
  auto t = [&](Shape s) { return RandomTensor(DataType::kFloat, std::move(s), rng); };
  // Declared shapes: shape inference rejects the model when the session is made.
  const Tensor m = t({3, 5});
  const std::vector<OpTest> bad = {
      AttentionTest(t({2, 3, 4}), t({2, 5, 3}), t({2, 5, 6}), nullptr, 1.0f, false),   // Dh 4 vs 3
      AttentionTest(t({2, 3, 4}), t({2, 4, 5}), t({2, 5, 6}), nullptr, 1.0f, false),   // K [Sk=4, Dh=5]
      AttentionTest(t({2, 3, 4}), t({2, 5, 4}), t({2, 6, 6}), nullptr, 1.0f, false),   // Sk 5 vs 6
      AttentionTest(t({2, 3, 4}), t({2, 5, 4}), t({2, 5, 6}), &m, 1.0f, true),         // K transposed: Dh 5
      AttentionTest(t({2, 4, 4}), t({2, 5, 4}), t({2, 5, 6}), &m, 1.0f, false),        // mask rows 3 vs Sq 4
      AttentionTest(t({2, 3, 4}), t({3, 5, 4}), t({2, 5, 6}), nullptr, 1.0f, false),   // batch 2 vs 3
      AttentionTest(t({4}), t({5, 4}), t({5, 6}), nullptr, 1.0f, false),               // rank 1
  };
  for (size_t i = 0; i < bad.size(); ++i) {
    EXPECT_THROW(RunOn(bad[i], {"ref"}, true, 1), InvalidModelError) << i;
  }
  // Undeclared shapes: the kernel's own checks, at run time.
  SessionOptions o = OnlyBackend("ref", 1);
  o.optimization_level = 0;
  auto session = [&](const std::vector<NodeInput>& inputs, int64_t kt) {
    onnx::ModelProto mp;
    mp.set_ir_version(10);
    auto* imp = mp.add_opset_import();
    imp->set_domain("ai.ferry");
    imp->set_version(1);
    auto* g = mp.mutable_graph();
    g->set_name("g");
    auto* n = g->add_node();
    n->set_op_type("Attention");
    n->set_domain("ai.ferry");
    n->set_name("attn");
    for (const auto& in : inputs) {
      n->add_input(in.name);
      auto* vi = g->add_input();
      vi->set_name(in.name);
      vi->mutable_type()->mutable_tensor_type()->set_elem_type(static_cast<int>(in.dtype));
    }
    *n->add_attribute() = Int("k_transposed", kt);
    n->add_output("y");
    g->add_output()->set_name("y");
    const std::string bytes = mp.SerializeAsString();
    return Session::CreateFromBytes({reinterpret_cast<const uint8_t*>(bytes.data()), bytes.size()}, o);
  };
  const std::vector<NodeInput> qkv = {{"q", DataType::kFloat}, {"k", DataType::kFloat}, {"v", DataType::kFloat}};
  auto s3 = session(qkv, 0);
  EXPECT_THROW(s3->Run({{"q", t({2, 3, 4})}, {"k", t({2, 5, 3})}, {"v", t({2, 5, 6})}}), InvalidArgumentError);
  EXPECT_THROW(s3->Run({{"q", t({2, 3, 4})}, {"k", t({3, 5, 4})}, {"v", t({2, 5, 6})}}), InvalidArgumentError);
  EXPECT_THROW(s3->Run({{"q", t({4})}, {"k", t({5, 4})}, {"v", t({5, 6})}}), InvalidArgumentError);
  try {
    s3->Run({{"q", t({2, 3, 4})}, {"k", t({2, 5, 4})}, {"v", t({2, 7, 6})}});
    ADD_FAILURE() << "expected an error";
  } catch (const InvalidArgumentError& e) {
    EXPECT_NE(std::string(e.what()).find("V [2,7,6]"), std::string::npos) << e.what();
  }
  auto s4 = session({{"q", DataType::kFloat}, {"k", DataType::kFloat}, {"v", DataType::kFloat},
                     {"mask", DataType::kFloat}}, 1);
  EXPECT_NO_THROW(s4->Run({{"q", t({2, 3, 4})}, {"k", t({2, 4, 5})}, {"v", t({2, 5, 6})}, {"mask", t({3, 1})}}));
  EXPECT_THROW(s4->Run({{"q", t({2, 3, 4})}, {"k", t({2, 4, 5})}, {"v", t({2, 5, 6})}, {"mask", t({2, 5})}}),
               InvalidArgumentError);
  EXPECT_THROW(s4->Run({{"q", t({2, 3, 4})}, {"k", t({2, 4, 5})}, {"v", t({2, 5, 6})}, {"mask", t({3, 4})}}),
               InvalidArgumentError);
  EXPECT_THROW(s4->Run({{"q", t({2, 3, 4})}, {"k", t({2, 4, 5})}, {"v", t({2, 5, 6})}, {"mask", t({3, 3, 5})}}),
               InvalidArgumentError);
}

}  // namespace
}  // namespace ferry::testing
