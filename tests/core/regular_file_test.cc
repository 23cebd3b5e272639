// core/regular_file.h: only regular files are opened, and refusing anything else never blocks.
#include "core/regular_file.h"

#include <gtest/gtest.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <cstring>
#include <filesystem>
#include <fstream>

#include "testing/fifo.h"

namespace ferry {
namespace {

namespace fs = std::filesystem;

class RegularFileTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::path(::testing::TempDir()) / ("ferry_regular_file_" + std::to_string(::getpid()));
    fs::remove_all(dir_);
    fs::create_directories(dir_);
    std::ofstream(dir_ / "data.bin", std::ios::binary) << "0123456789";
  }
  void TearDown() override { fs::remove_all(dir_); }
  fs::path dir_;
};

TEST_F(RegularFileTest, ReadsARegularFileAtAnyOffset) {
  RegularFile f = RegularFile::Open((dir_ / "data.bin").string());
  ASSERT_TRUE(f.ok()) << f.error();
  EXPECT_EQ(f.size(), 10u);
  char buf[4] = {};
  EXPECT_EQ(f.ReadAt(3, buf, 4), "");
  EXPECT_EQ(std::string(buf, 4), "3456");
  EXPECT_EQ(f.ReadAt(8, buf, 4), "the file ends 2 bytes after offset 8, 4 were needed");
  EXPECT_EQ(f.ReadAt(0, buf, 0), "");
  // A symbolic link to a regular file is that file.
  fs::create_symlink(dir_ / "data.bin", dir_ / "link.bin");
  EXPECT_TRUE(RegularFile::Open((dir_ / "link.bin").string()).ok());
}

TEST_F(RegularFileTest, RefusesWhatIsNotARegularFileAndSaysWhatItIs) {
  testing::Fifo fifo((dir_ / "pipe").string());
  EXPECT_EQ(RegularFile::Open(fifo.path()).error(), "is a FIFO, not a regular file");
  fs::create_symlink(dir_ / "pipe", dir_ / "pipe_link");  // a link to a FIFO is a FIFO
  EXPECT_EQ(RegularFile::Open((dir_ / "pipe_link").string()).error(), "is a FIFO, not a regular file");
  EXPECT_FALSE(fifo.fired()) << "Open blocked on the FIFO";
  EXPECT_EQ(RegularFile::Open(dir_.string()).error(), "is a directory, not a regular file");
  EXPECT_EQ(RegularFile::Open("/dev/null").error(), "is a character device, not a regular file");
  EXPECT_EQ(RegularFile::Open((dir_ / "missing").string()).error(), "does not exist");
  fs::create_symlink(dir_ / "missing", dir_ / "dangling");
  EXPECT_EQ(RegularFile::Open((dir_ / "dangling").string()).error(), "does not exist");

  const int sock = ::socket(AF_UNIX, SOCK_STREAM, 0);
  ASSERT_GE(sock, 0);
  sockaddr_un addr{};
  addr.sun_family = AF_UNIX;
  const std::string sock_path = (dir_ / "sock").string();
  ASSERT_LT(sock_path.size(), sizeof addr.sun_path);
  std::memcpy(addr.sun_path, sock_path.c_str(), sock_path.size() + 1);
  ASSERT_EQ(::bind(sock, reinterpret_cast<sockaddr*>(&addr), sizeof addr), 0);
  EXPECT_EQ(RegularFile::Open(sock_path).error(), "is a socket, not a regular file");
  ::close(sock);
}

TEST_F(RegularFileTest, MovesOwnTheDescriptor) {
  auto fds = [] {
    size_t n = 0;
    for ([[maybe_unused]] const auto& e : fs::directory_iterator("/proc/self/fd")) ++n;
    return n;
  };
  const size_t before = fds();
  {
    RegularFile a = RegularFile::Open((dir_ / "data.bin").string());
    RegularFile b = std::move(a);
    EXPECT_FALSE(a.ok());
    EXPECT_TRUE(b.ok());
    b = RegularFile::Open((dir_ / "data.bin").string());  // the first descriptor is closed here
    EXPECT_EQ(fds(), before + 1);
  }
  EXPECT_EQ(fds(), before);
}

}  // namespace
}  // namespace ferry
