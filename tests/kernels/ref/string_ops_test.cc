// String kernels beyond the ONNX node tests: StringNormalizer's locale-free UTF-8 case mapping and
// case-insensitive stopwords, the [1, C] all-filtered shape, RegexFullMatch rejecting a bad pattern at session
// creation, StringSplit's whitespace remainder under maxsplit.
#include <gtest/gtest.h>
#include <onnx/onnx_pb.h>

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "ferry/session.h"

namespace ferry {
namespace {

std::unique_ptr<Session> OneNode(const std::string& op, int opset, int outputs,
                                 const std::function<void(onnx::NodeProto&)>& configure) {
  onnx::ModelProto m;
  m.set_ir_version(10);
  auto* imp = m.add_opset_import();
  imp->set_domain("");
  imp->set_version(opset);
  auto* g = m.mutable_graph();
  g->set_name("g");
  auto* n = g->add_node();
  n->set_op_type(op);
  n->set_name("strnode");
  n->add_input("x0");
  auto* vi = g->add_input();
  vi->set_name("x0");
  vi->mutable_type()->mutable_tensor_type()->set_elem_type(static_cast<int>(DataType::kString));
  for (int i = 0; i < outputs; ++i) {
    n->add_output("y" + std::to_string(i));
    g->add_output()->set_name("y" + std::to_string(i));
  }
  configure(*n);
  std::string bytes = m.SerializeAsString();
  return Session::CreateFromBytes({reinterpret_cast<const uint8_t*>(bytes.data()), bytes.size()}, {});
}

onnx::AttributeProto* Attr(onnx::NodeProto& n, const std::string& name, onnx::AttributeProto::AttributeType t) {
  auto* a = n.add_attribute();
  a->set_name(name);
  a->set_type(t);
  return a;
}

Tensor Strings(Shape shape, std::vector<std::string> v) {
  return Tensor::FromVector<std::string>(DataType::kString, std::move(shape), v);
}

std::vector<std::string> Values(const Tensor& t) { return {t.strings(), t.strings() + t.size()}; }

TEST(StringOps, NormalizerMapsUtf8CaseWithoutALocale) {
  auto upper = OneNode("StringNormalizer", 10, 1, [](onnx::NodeProto& n) {
    Attr(n, "case_change_action", onnx::AttributeProto::STRING)->set_s("UPPER");
  });
  Tensor y = upper->Run({{"x0", Strings({3}, {"straße café", "ÿ ā ł", "αβγ жук"})}}).at(0).second;
  EXPECT_EQ(Values(y), (std::vector<std::string>{"STRAßE CAFÉ", "Ÿ Ā Ł", "ΑΒΓ ЖУК"}));
  auto lower = OneNode("StringNormalizer", 10, 1, [](onnx::NodeProto& n) {
    Attr(n, "case_change_action", onnx::AttributeProto::STRING)->set_s("LOWER");
  });
  y = lower->Run({{"x0", Strings({2}, {"ÀÉÎÕÜ Ÿ", "ΑΒΓ ЖУК \xff"})}}).at(0).second;
  EXPECT_EQ(Values(y), (std::vector<std::string>{"àéîõü ÿ", "αβγ жук \xff"}));  // bad UTF-8 passes through
}

TEST(StringOps, NormalizerCaseInsensitiveStopwordsAndEmptyResult) {
  auto s = OneNode("StringNormalizer", 10, 1, [](onnx::NodeProto& n) {
    auto* a = Attr(n, "stopwords", onnx::AttributeProto::STRINGS);
    a->add_strings("ÉTÉ");
    a->add_strings("monday");
  });
  Tensor y = s->Run({{"x0", Strings({1, 3}, {"été", "MONDAY", "Tuesday"})}}).at(0).second;
  EXPECT_EQ(y.shape(), (Shape{1, 1}));
  EXPECT_EQ(Values(y), (std::vector<std::string>{"Tuesday"}));
  y = s->Run({{"x0", Strings({1, 2}, {"été", "Monday"})}}).at(0).second;
  EXPECT_EQ(y.shape(), (Shape{1, 1}));
  EXPECT_EQ(Values(y), (std::vector<std::string>{""}));
}

TEST(StringOps, RegexFullMatchRejectsABadPatternNamingTheNode) {
  try {
    OneNode("RegexFullMatch", 20, 1, [](onnx::NodeProto& n) {
      Attr(n, "pattern", onnx::AttributeProto::STRING)->set_s("(unclosed");
    });
    FAIL() << "expected InvalidModelError";
  } catch (const InvalidModelError& e) {
    EXPECT_NE(std::string(e.what()).find("strnode"), std::string::npos) << e.what();
  }
}

TEST(StringOps, SplitWhitespaceMaxsplitKeepsTheRemainder) {
  auto s = OneNode("StringSplit", 20, 2, [](onnx::NodeProto& n) {
    Attr(n, "maxsplit", onnx::AttributeProto::INT)->set_i(1);
  });
  auto out = s->Run({{"x0", Strings({3}, {"  a  b c  ", "", "x"})}});
  EXPECT_EQ(out.at(0).second.shape(), (Shape{3, 2}));
  EXPECT_EQ(Values(out.at(0).second), (std::vector<std::string>{"a", "b c  ", "", "", "x", ""}));
  const Tensor& counts = out.at(1).second;
  EXPECT_EQ(std::vector<int64_t>(counts.data<int64_t>(), counts.data<int64_t>() + 3), (std::vector<int64_t>{2, 0, 1}));
}

}  // namespace
}  // namespace ferry
