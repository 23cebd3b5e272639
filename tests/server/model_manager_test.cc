// The model manager on real repositories in a temporary folder: warm-up (zeros by default, where a model that
// cannot run on zeros still serves with a warning; Triton's model_warmup samples from config.pbtxt when given:
// zero_data, random_data and input_data_file under the model's warmup/ folder, whose failure fails the load);
// loads in parallel on the load threads (a model that blocks delays no other; one model's tasks keep their order);
// a config.pbtxt that is a FIFO refused without blocking.
// The model is y = Resize(x, scales) on x [1,1,2,2], whose scales must be positive: zeros are not a valid input.
#include "server/model_manager.h"

#include <gtest/gtest.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <future>
#include <mutex>
#include <sstream>
#include <thread>

#include "testing/model_builder.h"

namespace ferry::server {
namespace {

namespace fs = std::filesystem;

std::string ResizeModel() {
  testing::ModelBuilder b;
  b.Input("x", onnx::TensorProto::FLOAT, {1, 1, 2, 2});
  b.Input("scales", onnx::TensorProto::FLOAT, {4});
  auto* out = b.graph().add_output();
  out->set_name("y");
  auto* tt = out->mutable_type()->mutable_tensor_type();
  tt->set_elem_type(onnx::TensorProto::FLOAT);
  for (const char* d : {"a", "b", "c", "d"}) tt->mutable_shape()->add_dim()->set_dim_param(d);
  b.Node("Resize", {"x", "", "scales"}, {"y"});
  return b.Bytes();
}

struct Repo {
  fs::path dir;
  std::ostringstream log;
  std::shared_ptr<MetricsRegistry> metrics = std::make_shared<MetricsRegistry>();

  Repo() {
    const auto* test = ::testing::UnitTest::GetInstance()->current_test_info();
    dir = fs::path(::testing::TempDir()) / ("ferry_manager_" + std::to_string(::getpid()) + "_" + test->name());
    fs::remove_all(dir);
  }
  ~Repo() { fs::remove_all(dir); }
  // A Resize model named `name`, with `config` as its config.pbtxt when not empty.
  void Add(const std::string& name, const std::string& config = "") {
    fs::create_directories(dir / name / "1");
    std::ofstream(dir / name / "1" / "model.onnx", std::ios::binary) << ResizeModel();
    if (!config.empty()) std::ofstream(dir / name / "config.pbtxt") << config;
  }
  ManagerOptions Options() const {
    ManagerOptions o;
    o.repository = dir.string();
    o.threads = 1;
    return o;
  }
};

// A model_warmup sample for the Resize model: x and scales with the given data fields.
std::string WarmupConfig(const std::string& x_data, const std::string& scales_data) {
  return "model_warmup [ { name: \"w\" batch_size: 1 inputs [\n"
         "  { key: \"x\" value: { data_type: TYPE_FP32 dims: [ 1, 1, 2, 2 ] " + x_data + " } },\n"
         "  { key: \"scales\" value: { data_type: TYPE_FP32 dims: [ 4 ] " + scales_data + " } } ] } ]\n";
}

void WriteFloats(const fs::path& path, const std::vector<float>& values) {
  fs::create_directories(path.parent_path());
  std::ofstream(path, std::ios::binary).write(reinterpret_cast<const char*>(values.data()),
                                              static_cast<std::streamsize>(values.size() * 4));
}

// The case: without model_warmup, the default warm-up feeds zeros, which a valid model may refuse
// (Resize's scales); the model must still serve, with a warning.
TEST(ServerModelManager, ZeroWarmupThatFailsIsAWarningAndTheModelServes) {
  Repo repo;
  repo.Add("resize");
  ModelManager manager(repo.Options(), repo.metrics, repo.log);
  EXPECT_EQ(manager.Start(), 0) << repo.log.str();
  ASSERT_TRUE(manager.Find("resize")) << repo.log.str();
  EXPECT_NE(repo.log.str().find("warning: model 'resize' version 1: the warm-up run with zeros failed"),
            std::string::npos)
      << repo.log.str();
  EXPECT_NE(repo.log.str().find("input 'scales' must be positive"), std::string::npos) << repo.log.str();
}

TEST(ServerModelManager, ModelWarmupFeedsTheConfiguredInputs) {
  Repo repo;
  repo.Add("resize", WarmupConfig("random_data: true", "input_data_file: \"scales.bin\""));
  WriteFloats(repo.dir / "resize" / "warmup" / "scales.bin", {1, 1, 2, 2});
  ModelManager manager(repo.Options(), repo.metrics, repo.log);
  EXPECT_EQ(manager.Start(), 0) << repo.log.str();
  EXPECT_TRUE(manager.Find("resize"));
  EXPECT_EQ(repo.log.str().find("warm-up run with zeros"), std::string::npos) << repo.log.str();
  EXPECT_EQ(repo.log.str().find("model_warmup is ignored"), std::string::npos) << repo.log.str();
  EXPECT_NE(repo.log.str().find("warm-up 'w'"), std::string::npos) << repo.log.str();
}

// A warm-up the config asks for must succeed, as in Triton: its failure fails the load, naming the sample.
TEST(ServerModelManager, AFailingModelWarmupFailsTheLoad) {
  Repo repo;
  repo.Add("resize", WarmupConfig("zero_data: true", "zero_data: true"));
  ModelManager manager(repo.Options(), repo.metrics, repo.log);
  EXPECT_EQ(manager.Start(), 1);
  EXPECT_FALSE(manager.Find("resize"));
  EXPECT_NE(repo.log.str().find("model 'resize' version 1: model_warmup[0] 'w' failed: "), std::string::npos)
      << repo.log.str();
  EXPECT_NE(repo.log.str().find("input 'scales' must be positive"), std::string::npos) << repo.log.str();
}

// input_data_file is a regular file inside <model>/warmup/ with exactly one sample's bytes; a FIFO there is
// refused at once (reading it would block the load).
TEST(ServerModelManager, WarmupDataFileIsCheckedBeforeItIsRead) {
  struct Case {
    std::string file;
    std::string message;
  };
  Repo repo;
  const fs::path warmup = repo.dir / "resize" / "warmup";
  WriteFloats(warmup / "short.bin", {1, 1, 2});
  fs::create_directories(warmup);
  ASSERT_EQ(::mkfifo((warmup / "fifo.bin").c_str(), 0600), 0);
  const std::vector<Case> cases = {
      {"../config.pbtxt", "input_data_file '../config.pbtxt' must be a file name inside the model's warmup/ folder"},
      {"absent.bin", "warmup/absent.bin is not a regular file"},
      {"fifo.bin", "warmup/fifo.bin is not a regular file"},
      {"short.bin", "warmup/short.bin has 12 bytes but FP32 [4] needs 16"},
  };
  for (const auto& c : cases) {
    repo.log.str("");
    repo.Add("resize", WarmupConfig("zero_data: true", "input_data_file: \"" + c.file + "\""));
    ModelManager manager(repo.Options(), repo.metrics, repo.log);
    auto started = std::async(std::launch::async, [&] { return manager.Start(); });
    if (started.wait_for(std::chrono::seconds(30)) != std::future_status::ready) {
      ADD_FAILURE() << c.file << ": the load blocks";
      const int fd = ::open((warmup / "fifo.bin").c_str(), O_RDWR);  // lets the blocked reader go on
      ::close(fd);
    }
    EXPECT_EQ(started.get(), 1) << c.file;
    EXPECT_NE(repo.log.str().find(c.message), std::string::npos) << c.file << ": " << repo.log.str();
  }
}


// Loads run on the load threads, not in StartLoading: a model whose load cannot go on (here its slot is held by a
// task that waits) delays no other model, and the server is not ready until it is done.
TEST(ServerModelManager, AModelThatBlocksDelaysNoOther) {
  Repo repo;
  repo.Add("a");
  repo.Add("b");
  ModelManager manager(repo.Options(), repo.metrics, repo.log);
  std::promise<void> release;
  std::shared_future<void> released = release.get_future().share();
  manager.Schedule("a", [released] { released.wait_for(std::chrono::seconds(60)); });
  manager.StartLoading();  // returns at once
  const auto wait_until = [](const auto& done) {
    for (int i = 0; i < 3000 && !done(); ++i) std::this_thread::sleep_for(std::chrono::milliseconds(10));
    return done();
  };
  ASSERT_TRUE(wait_until([&] { return manager.Startup().done == 1; })) << repo.log.str();
  EXPECT_TRUE(manager.Find("b")) << repo.log.str();
  EXPECT_FALSE(manager.Find("a"));
  EXPECT_FALSE(manager.AllReady());
  EXPECT_EQ(manager.Startup().models, 2);
  for (const auto& e : manager.Index()) EXPECT_EQ(e.state, e.name == "b" ? "READY" : "UNAVAILABLE") << e.name;
  release.set_value();
  ASSERT_TRUE(wait_until([&] { return manager.Startup().done == 2; }));
  EXPECT_TRUE(manager.Find("a"));
  EXPECT_EQ(manager.Startup().failed, 0);
  EXPECT_TRUE(manager.AllReady());
}

// One model's tasks run in the order they were scheduled, one at a time.
TEST(ServerModelManager, OneModelsTasksKeepTheirOrder) {
  Repo repo;
  ModelManager manager(repo.Options(), repo.metrics, repo.log);
  std::mutex m;
  std::vector<int> order;
  std::promise<void> all;
  for (int i = 0; i < 20; ++i) {
    manager.Schedule("x", [&, i] {
      std::lock_guard lock(m);
      order.push_back(i);
      if (i == 19) all.set_value();
    });
  }
  ASSERT_EQ(all.get_future().wait_for(std::chrono::seconds(30)), std::future_status::ready);
  std::lock_guard lock(m);
  for (int i = 0; i < 20; ++i) EXPECT_EQ(order[i], i);
}

// config.pbtxt is checked before it is opened: a FIFO there fails the load at once instead of blocking it.
TEST(ServerModelManager, AConfigThatIsAFifoIsRefusedWithoutBlocking) {
  Repo repo;
  repo.Add("m");
  const fs::path config = repo.dir / "m" / "config.pbtxt";
  ASSERT_EQ(::mkfifo(config.c_str(), 0600), 0);
  ModelManager manager(repo.Options(), repo.metrics, repo.log);
  auto started = std::async(std::launch::async, [&] { return manager.Start(); });
  if (started.wait_for(std::chrono::seconds(30)) != std::future_status::ready) {
    ADD_FAILURE() << "the load blocks";
    ::close(::open(config.c_str(), O_RDWR));  // lets the blocked reader go on
  }
  EXPECT_EQ(started.get(), 1);
  EXPECT_NE(repo.log.str().find(config.string() + ": not a regular file"), std::string::npos) << repo.log.str();
}

}  // namespace
}  // namespace ferry::server
