// The conformance summary's opset bands and the expected-failure list's hand-written reasons.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include "tools/conformance_report.h"

namespace ferry::tools {
namespace {

CaseResult Case(const std::string& name, bool pass, int opset, const std::string& reason = "") {
  CaseResult r;
  r.test = {"/nowhere/" + name, "node", name};
  r.status = pass ? "pass" : "fail";
  r.reason = reason;
  r.opset = opset;
  r.ops = {"Add"};
  return r;
}

std::string Slurp(const std::string& path) {
  std::ifstream in(path);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

TEST(ConformanceMarkdown, CountsCasesPerOpsetBand) {
  std::vector<CaseResult> results = {Case("a", true, 1),   Case("b", false, 6, "x"), Case("c", true, 7),
                                     Case("d", true, 17),  Case("e", true, 18),      Case("f", false, 23, "y"),
                                     Case("g", true, 28),  Case("h", true, 13)};
  const std::string md = ConformanceMarkdown("ref", results);
  EXPECT_NE(md.find("| 1-6 | 1 | 2 |"), std::string::npos) << md;
  EXPECT_NE(md.find("| 7-12 | 1 | 1 |"), std::string::npos) << md;
  EXPECT_NE(md.find("| 13-17 | 2 | 2 |"), std::string::npos) << md;
  EXPECT_NE(md.find("| 18-22 | 1 | 1 |"), std::string::npos) << md;
  EXPECT_NE(md.find("| 23-28 | 1 | 2 |"), std::string::npos) << md;
  // Bands appear in opset order.
  EXPECT_LT(md.find("| 1-6 |"), md.find("| 7-12 |"));
  EXPECT_LT(md.find("| 18-22 |"), md.find("| 23-28 |"));
}

TEST(ExpectedFailures, RewritingKeepsHandWrittenReasonsAndDropsFixedCases) {
  const std::string path =
      (std::filesystem::temp_directory_path() / ("ferry_expected_" + std::to_string(::getpid()) + ".txt")).string();
  {
    std::ofstream out(path);
    out << "# header comment\n"
        << "node/old_random  # random values cannot match numpy's generator\n"
        << "node/fixed  # used to fail\n";
  }
  std::vector<CaseResult> results = {Case("old_random", false, 13, "3 of 10 elements differ"),
                                     Case("fixed", true, 13), Case("new_fail", false, 13, "model 'm.onnx': boom")};
  WriteExpectedFailures(path, "ref", results);
  const std::string text = Slurp(path);
  std::filesystem::remove(path);
  EXPECT_NE(text.find("node/old_random  # random values cannot match numpy's generator\n"), std::string::npos) << text;
  EXPECT_EQ(text.find("node/fixed"), std::string::npos) << text;
  EXPECT_NE(text.find("node/new_fail  # boom\n"), std::string::npos) << text;
}

}  // namespace
}  // namespace ferry::tools
