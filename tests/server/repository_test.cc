// Model repository layout: name validation (no path traversal), version folders, version policies.
#include "server/repository.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "ferry/error.h"

namespace ferry::server {
namespace {
namespace fs = std::filesystem;

TEST(ServerRepository, ModelNamesCannotLeaveTheRepository) {
  for (const char* ok : {"resnet50", "bert_base-v1.5", "A.b_c-9"}) EXPECT_NO_THROW(ValidateModelName(ok)) << ok;
  for (const char* bad : {"", ".", "..", "../etc", "a/b", "a\\b", ".hidden", "x%2e", "m\n"}) {
    EXPECT_THROW(ValidateModelName(bad), InvalidArgumentError) << bad;
  }
  EXPECT_EQ(ParseVersion("12"), 12);
  for (const char* bad : {"", "-1", "1a", "..", "99999999999999999999"}) {
    EXPECT_THROW(ParseVersion(bad), InvalidArgumentError) << bad;
  }
}

TEST(ServerRepository, ReadsVersionFoldersAndSkipsOthers) {
  const fs::path repo = fs::path(::testing::TempDir()) / ("ferry_repo_" + std::to_string(::getpid()));
  fs::remove_all(repo);
  for (const char* d : {"m/1", "m/3", "m/10", "m/latest", "not a model"}) fs::create_directories(repo / d);
  std::ofstream(repo / "m" / "config.pbtxt") << "max_batch_size: 2\n";
  std::ofstream(repo / "README") << "x";
  std::vector<std::string> skipped;
  EXPECT_EQ(ListModels(repo.string(), &skipped), std::vector<std::string>{"m"});
  EXPECT_EQ(skipped.size(), 2u);
  const ModelSource src = ReadModelSource(repo.string(), "m");
  EXPECT_EQ(src.available_versions, (std::vector<int64_t>{1, 3, 10}));
  ASSERT_EQ(src.warnings.size(), 1u);
  EXPECT_NE(src.warnings[0].find("folder 'latest' is not a version number"), std::string::npos);
  EXPECT_EQ(src.config.proto.max_batch_size(), 2);
  EXPECT_THROW(ReadModelSource(repo.string(), "absent"), InvalidArgumentError);
  EXPECT_THROW(ReadModelSource(repo.string(), ".."), InvalidArgumentError);
  const std::string fp = ModelFingerprint(repo.string(), "m");
  std::ofstream(repo / "m" / "config.pbtxt", std::ios::app) << "\n# changed\n";
  EXPECT_NE(ModelFingerprint(repo.string(), "m"), fp);
  fs::remove_all(repo);
}

TEST(ServerRepository, VersionPolicies) {
  ServeConfig c;
  const std::vector<int64_t> avail = {1, 2, 5};
  EXPECT_EQ(SelectVersions(c, avail, "m"), std::vector<int64_t>{5});
  c.latest_versions = 2;
  EXPECT_EQ(SelectVersions(c, avail, "m"), (std::vector<int64_t>{2, 5}));
  c.version_policy = VersionPolicy::kAll;
  EXPECT_EQ(SelectVersions(c, avail, "m"), avail);
  c.version_policy = VersionPolicy::kSpecific;
  c.specific_versions = {5, 1};
  EXPECT_EQ(SelectVersions(c, avail, "m"), (std::vector<int64_t>{1, 5}));
  c.specific_versions = {4};
  try {
    SelectVersions(c, avail, "m");
    FAIL();
  } catch (const InvalidModelError& e) {
    EXPECT_STREQ(e.what(), "m: version_policy.specific lists version(s) 4 with no version folder");
  }
  c.version_policy = VersionPolicy::kLatest;
  EXPECT_THROW(SelectVersions(c, {}, "m"), InvalidModelError);
}

}  // namespace
}  // namespace ferry::server
