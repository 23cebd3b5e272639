// A FIFO (named pipe) for tests of readers that must refuse one without blocking. A reader that wrongly open()s
// it waits for a writer forever, so that such a regression fails instead of hanging the test binary, a watchdog
// thread opens the write end once `grace` has passed and records that it had to (fired()): the blocked open()
// then returns and the reader sees an empty file. A reader that refuses the FIFO returns long before.
#pragma once

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <mutex>
#include <string>
#include <thread>

#include <gtest/gtest.h>

namespace ferry::testing {

class Fifo {
 public:
  explicit Fifo(std::string path, std::chrono::seconds grace = std::chrono::seconds(10)) : path_(std::move(path)) {
    ::unlink(path_.c_str());
    if (::mkfifo(path_.c_str(), 0600) != 0) ADD_FAILURE() << "mkfifo " << path_ << " failed";
    watchdog_ = std::thread([this, grace] {
      std::unique_lock lock(mu_);
      if (cv_.wait_for(lock, grace, [this] { return stop_; })) return;
      while (!stop_) {
        const int fd = ::open(path_.c_str(), O_WRONLY | O_NONBLOCK);  // succeeds only while a reader waits
        if (fd >= 0) {
          fired_ = true;
          ::close(fd);
        }
        cv_.wait_for(lock, std::chrono::milliseconds(10), [this] { return stop_; });
      }
    });
  }
  Fifo(const Fifo&) = delete;
  Fifo& operator=(const Fifo&) = delete;
  ~Fifo() {
    {
      std::lock_guard lock(mu_);
      stop_ = true;
    }
    cv_.notify_all();
    watchdog_.join();
    ::unlink(path_.c_str());
  }

  const std::string& path() const { return path_; }
  // True when a reader blocked on the FIFO and the watchdog had to release it.
  bool fired() const { return fired_; }

 private:
  std::string path_;
  std::mutex mu_;
  std::condition_variable cv_;
  bool stop_ = false;
  std::atomic<bool> fired_{false};
  std::thread watchdog_;
};

}  // namespace ferry::testing
