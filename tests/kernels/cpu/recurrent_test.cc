// The cpu LSTM, GRU and RNN kernels (float32, dnnl_sgemm + vectorized gates) against ref: random shapes (seq 1..7,
// batch 1..3, input 1..20, hidden 1..33, so the SIMD tails happen), every direction, layouts 0 and 1, weights as
// constants (packed in Prepare) or graph inputs, sequence_lens, initial states, peepholes, clip, input_forget,
// linear_before_reset, other activation lists, omitted outputs, 1 and 2 threads; every ISA variant the host has on
// the small-batch step kernel (batch 1, 2, 5) and on dnnl_sgemm (batch 9); and a bad W shape in Prepare.
#include "kernels/cpu/conv_test_util.h"
#include "kernels/cpu/elementwise_test_util.h"

namespace ferry::testing {
namespace {

struct Config {
  const char* op;
  int64_t gates;
};

OpTest RandomCase(const Config& cfg, std::mt19937& rng, int i) {
  const int64_t seq = Pick(rng, 1, 7), batch = Pick(rng, 1, 3), input = Pick(rng, 1, 20), hid = Pick(rng, 1, 33);
  const char* dirs[] = {"forward", "reverse", "bidirectional"};
  const std::string dir = dirs[i % 3];
  const int64_t nd = dir == "bidirectional" ? 2 : 1;
  const int64_t layout = (i / 3) % 2;
  const bool constant = (i / 6) % 2 == 0;
  const bool lstm = std::string(cfg.op) == "LSTM";
  auto in = [&](const std::string& name, Tensor t) { return constant ? Const(name, std::move(t)) : In(name, t); };
  OpTest t{.op = cfg.op, .opset = layout == 1 || i % 4 == 0 ? 14 : 7, .rtol = 2e-5, .atol = 2e-6,
           .threads = 1 + i % 2};
  if (t.opset < 14) t.opset = 7;
  const Shape xs = layout == 0 ? Shape{seq, batch, input} : Shape{batch, seq, input};
  const Shape ss = layout == 0 ? Shape{nd, batch, hid} : Shape{batch, nd, hid};
  const int64_t G = cfg.gates * hid;
  t.inputs.push_back(In("x", RandomTensor(DataType::kFloat, xs, rng, -2, 2)));
  t.inputs.push_back(in("w", RandomTensor(DataType::kFloat, {nd, G, input}, rng, -0.5, 0.5)));
  t.inputs.push_back(in("r", RandomTensor(DataType::kFloat, {nd, G, hid}, rng, -0.5, 0.5)));
  const bool with_b = i % 5 != 1, with_lens = i % 3 != 2, with_h0 = i % 4 != 3;
  t.inputs.push_back(with_b ? in("b", RandomTensor(DataType::kFloat, {nd, 2 * G}, rng, -0.5, 0.5)) : Omitted());
  if (with_lens) {
    std::vector<int32_t> lens(static_cast<size_t>(batch));
    for (auto& l : lens) l = static_cast<int32_t>(Pick(rng, 0, seq));
    lens[0] = static_cast<int32_t>(seq);
    t.inputs.push_back(In("lens", Tensor::FromVector(DataType::kInt32, {batch}, lens)));
  } else {
    t.inputs.push_back(Omitted());
  }
  t.inputs.push_back(with_h0 ? In("h0", RandomTensor(DataType::kFloat, ss, rng)) : Omitted());
  if (lstm) {
    t.inputs.push_back(i % 2 == 0 ? In("c0", RandomTensor(DataType::kFloat, ss, rng)) : Omitted());
    t.inputs.push_back(i % 3 != 1 ? in("p", RandomTensor(DataType::kFloat, {nd, 3 * hid}, rng, -0.5, 0.5))
                                  : Omitted());
    if (i % 7 == 3) t.attributes.push_back(Int("input_forget", 1));
  }
  if (std::string(cfg.op) == "GRU" && i % 2 == 1) t.attributes.push_back(Int("linear_before_reset", 1));
  t.attributes.push_back(Str("direction", dir));
  if (i % 3 == 0) t.attributes.push_back(Int("hidden_size", hid));
  if (layout == 1) t.attributes.push_back(Int("layout", 1));
  if (i % 4 == 1) t.attributes.push_back(Float("clip", 0.7f));
  t.num_outputs = lstm ? 3 : 2;
  return t;
}

void RandomCasesMatchRef(const Config& cfg, uint32_t seed) {
  std::mt19937 rng(seed);
  for (int i = 0; i < 48; ++i) {
    const OpTest t = RandomCase(cfg, rng, i);
    EXPECT_TRUE(MatchesRef(t, "cpu")) << cfg.op << " case " << i << " x" << ShapeToString(t.inputs[0].value.shape())
                                      << " r" << ShapeToString(t.inputs[2].value.shape()) << " opset " << t.opset;
  }
}

TEST(CpuRecurrent, LstmRandomCasesMatchRef) { RandomCasesMatchRef({"LSTM", 4}, 71); }
TEST(CpuRecurrent, GruRandomCasesMatchRef) { RandomCasesMatchRef({"GRU", 3}, 72); }
TEST(CpuRecurrent, RnnRandomCasesMatchRef) { RandomCasesMatchRef({"RNN", 1}, 73); }

TEST(CpuRecurrent, OmittedOutputsAndOtherActivations) {
  std::mt19937 rng(74);
  for (const Config cfg : {Config{"LSTM", 4}, Config{"GRU", 3}, Config{"RNN", 1}}) {
    OpTest t = RandomCase(cfg, rng, 2);  // bidirectional
    const std::string op = cfg.op;
    std::vector<std::string> acts = op == "LSTM"  ? std::vector<std::string>{"HardSigmoid", "Tanh", "Softsign"}
                                    : op == "GRU" ? std::vector<std::string>{"Sigmoid", "LeakyRelu"}
                                                  : std::vector<std::string>{"Relu"};
    onnx::AttributeProto a;
    a.set_name("activations");
    a.set_type(onnx::AttributeProto::STRINGS);
    for (int d = 0; d < 2; ++d) {
      for (const auto& s : acts) a.add_strings(s);
    }
    OpTest with_acts = t;
    with_acts.attributes.push_back(a);
    EXPECT_TRUE(MatchesRef(with_acts, "cpu")) << op << " activations";
    // Y alone requested.
    OpTest y_only = t;
    y_only.num_outputs = 1;
    EXPECT_TRUE(MatchesRef(y_only, "cpu")) << op << " Y only";
  }
}

TEST(CpuRecurrent, LargerHiddenSizesMatchRef) {
  std::mt19937 rng(75);
  for (const Config cfg : {Config{"LSTM", 4}, Config{"GRU", 3}, Config{"RNN", 1}}) {
    for (int threads : {1, 2}) {
      const int64_t seq = 9, batch = 5, input = 37, hid = 67, G = cfg.gates * hid;
      OpTest t{.op = cfg.op, .opset = 14, .rtol = 5e-5, .atol = 5e-6, .threads = threads};
      t.inputs = {In("x", RandomTensor(DataType::kFloat, {seq, batch, input}, rng)),
                  Const("w", RandomTensor(DataType::kFloat, {2, G, input}, rng, -0.3, 0.3)),
                  Const("r", RandomTensor(DataType::kFloat, {2, G, hid}, rng, -0.3, 0.3)),
                  Const("b", RandomTensor(DataType::kFloat, {2, 2 * G}, rng))};
      t.attributes = {Str("direction", "bidirectional")};
      t.num_outputs = std::string(cfg.op) == "LSTM" ? 3 : 2;
      EXPECT_TRUE(MatchesRef(t, "cpu")) << cfg.op << " threads " << threads;
    }
  }
}

// Each variant (cpu.f32_lstm__avx512.7, __avx2.7, __sgemm.7) under the --isa that selects it: batches 1, 2 and 5
// (rc::SmallGemm with 1- and 2-row tiles; when R is a graph input its panels are packed at run time) and 9 (above
// kMaxSmallRows: dnnl_sgemm), hidden sizes off the vector width (13: one partial panel; 37 and 100: several
// panels, the last partial), both directions, 1 and 2 threads (hidden 100 with batch 5 splits the panels).
TEST(CpuRecurrent, EveryVariantOnSmallAndLargeBatches) {
  std::mt19937 rng(78);
  const struct {
    const char* op;
    const char* lower;
    int64_t gates;
    int lbr;  // GRU linear_before_reset; -1 for the others
  } ops[] = {{"LSTM", "lstm", 4, -1}, {"GRU", "gru", 3, 0}, {"GRU", "gru", 3, 1}, {"RNN", "rnn", 1, -1}};
  int tested = 0;
  for (const EwVariant& v : {kEwAvx512, kEwAvx2, kEwScalar}) {
    if (!EwHostHas(v)) continue;
    const std::string impl = std::string(v.impl) == "scalar" ? "sgemm" : v.impl;
    for (const auto& op : ops) {
      int i = 0;
      for (const int64_t batch : {1, 2, 5, 9}) {
        for (const int64_t hid : {13, 37, 100}) {
          const std::string dir = i % 3 == 0 ? "forward" : i % 3 == 1 ? "reverse" : "bidirectional";
          const int64_t nd = dir == "bidirectional" ? 2 : 1, seq = 4, input = 11, G = op.gates * hid;
          const bool constant = i % 2 == 0;
          auto w = [&](const std::string& name, Tensor x) {
            return constant ? Const(name, std::move(x)) : In(name, x);
          };
          OpTest t{.op = op.op, .opset = 14, .rtol = 5e-5, .atol = 5e-6, .threads = 1 + (i / 2) % 2};
          t.inputs = {In("x", RandomTensor(DataType::kFloat, {seq, batch, input}, rng)),
                      w("w", RandomTensor(DataType::kFloat, {nd, G, input}, rng, -0.3, 0.3)),
                      w("r", RandomTensor(DataType::kFloat, {nd, G, hid}, rng, -0.3, 0.3)),
                      w("b", RandomTensor(DataType::kFloat, {nd, 2 * G}, rng))};
          if (i % 4 == 3) {  // sequence_lens and an initial state: finished rows keep their state
            std::vector<int32_t> lens(static_cast<size_t>(batch));
            for (auto& l : lens) l = static_cast<int32_t>(Pick(rng, 0, seq));
            lens[0] = static_cast<int32_t>(seq);
            t.inputs.push_back(In("lens", Tensor::FromVector(DataType::kInt32, {batch}, lens)));
            t.inputs.push_back(In("h0", RandomTensor(DataType::kFloat, {nd, batch, hid}, rng)));
          }
          t.attributes = {Str("direction", dir), Int("hidden_size", hid)};
          if (op.lbr >= 0) t.attributes.push_back(Int("linear_before_reset", op.lbr));
          t.num_outputs = std::string(op.op) == "LSTM" ? 3 : 2;
          const std::string kernel = "cpu.f32_" + std::string(op.lower) + "__" + impl + ".7";
          EXPECT_TRUE(MatchesRefWithKernel(t, v.isa, kernel))
              << kernel << " batch " << batch << " hidden " << hid << " " << dir << " threads " << t.threads
              << (constant ? " constant R" : " R input") << " lbr " << op.lbr;
          ++i;
          ++tested;
        }
      }
    }
  }
  EXPECT_GE(tested, 4 * 12);  // the sgemm variant runs on every host
}

TEST(CpuRecurrent, BadWeightShapeNamesTheNode) {
  std::mt19937 rng(76);
  OpTest t{.op = "LSTM", .opset = 14};
  t.inputs = {In("x", RandomTensor(DataType::kFloat, {3, 2, 5}, rng)),
              Const("w", RandomTensor(DataType::kFloat, {1, 4 * 8, 6}, rng)),  // input size 6, X has 5
              Const("r", RandomTensor(DataType::kFloat, {1, 4 * 8, 8}, rng))};
  t.num_outputs = 3;
  try {
    RunOn(t, {"cpu"}, true, 1);
    ADD_FAILURE() << "expected a Prepare error";
  } catch (const InvalidArgumentError& e) {
    const std::string msg = e.what();
    EXPECT_NE(msg.find("node 'node' (LSTM)"), std::string::npos) << msg;
    EXPECT_NE(msg.find("'W'"), std::string::npos) << msg;
    EXPECT_NE(msg.find("[1,32,5]"), std::string::npos) << msg;
  }
}

TEST(CpuRecurrent, SequenceLensOutOfRangeNamesTheNode) {
  std::mt19937 rng(77);
  OpTest t{.op = "RNN", .opset = 14};
  t.inputs = {In("x", RandomTensor(DataType::kFloat, {3, 2, 5}, rng)),
              Const("w", RandomTensor(DataType::kFloat, {1, 4, 5}, rng)),
              Const("r", RandomTensor(DataType::kFloat, {1, 4, 4}, rng)), Omitted(),
              In("lens", Tensor::FromVector(DataType::kInt32, {2}, std::vector<int32_t>{3, 4}))};
  t.num_outputs = 2;
  try {
    RunOn(t, {"cpu"}, true, 1);
    ADD_FAILURE() << "expected an error for sequence_lens 4 > seq 3";
  } catch (const InvalidArgumentError& e) {
    EXPECT_NE(std::string(e.what()).find("node 'node' (RNN)"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace ferry::testing
