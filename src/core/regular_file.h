// Reading a file whose path comes from outside (a model file, its external data, an `--input` tensor file): only
// regular files are read, and refusing anything else never blocks.
//
// A plain open() of a FIFO waits until a writer appears (forever, if none does), and opening some devices has
// effects of its own. So Open() first stat()s the path and refuses it unless it is a regular file, then opens it
// with O_NONBLOCK and fstat()s the descriptor it got: a path swapped for a FIFO between the two calls is refused
// too, never waited on. The descriptor is the object's and is closed when it goes (on every error path alike).
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

namespace ferry {

class RegularFile {
 public:
  // Opens `path` for reading. When that fails the result is not ok() and error() says why, without the path
  // ("does not exist", "is a FIFO, not a regular file", "is a directory, not a regular file", "cannot be
  // opened: Permission denied"): callers wrap it in their own error naming the file and what it was for.
  static RegularFile Open(const std::string& path);

  RegularFile() = default;
  RegularFile(RegularFile&& other) noexcept;
  RegularFile& operator=(RegularFile&& other) noexcept;
  RegularFile(const RegularFile&) = delete;
  RegularFile& operator=(const RegularFile&) = delete;
  ~RegularFile();

  bool ok() const { return fd_ >= 0; }
  const std::string& error() const { return error_; }
  int fd() const { return fd_; }
  uint64_t size() const { return size_; }  // the size fstat() gave at Open

  // Reads exactly `n` bytes at `offset` into `dst`. Returns "" on success, else why ("the file ends N bytes
  // after offset M", "read error: ..."); a file that shrank since Open is such a short read.
  std::string ReadAt(uint64_t offset, void* dst, size_t n) const;

 private:
  int fd_ = -1;
  uint64_t size_ = 0;
  std::string error_;
};

// "a FIFO", "a directory", "a character device", "a block device", "a socket", "a symbolic link", or "not a
// regular file", for a st_mode that is not S_IFREG.
std::string FileKindName(unsigned mode);

}  // namespace ferry
