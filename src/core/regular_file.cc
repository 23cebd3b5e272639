#include "core/regular_file.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <system_error>
#include <utility>

namespace ferry {
namespace {

std::string ErrnoText(int err) { return std::generic_category().message(err); }

}  // namespace

std::string FileKindName(unsigned mode) {
  switch (mode & S_IFMT) {
    case S_IFIFO: return "a FIFO";
    case S_IFDIR: return "a directory";
    case S_IFCHR: return "a character device";
    case S_IFBLK: return "a block device";
    case S_IFSOCK: return "a socket";
    case S_IFLNK: return "a symbolic link";
    default: return "not a regular file";
  }
}

RegularFile RegularFile::Open(const std::string& path) {
  RegularFile f;
  auto refuse = [&](unsigned mode) {
    const std::string kind = FileKindName(mode);
    f.error_ = kind == "not a regular file" ? "is not a regular file" : "is " + kind + ", not a regular file";
  };
  // 1. The path as it is now: nothing but a regular file is opened at all.
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0) {
    const int err = errno;
    f.error_ = err == ENOENT ? "does not exist" : "cannot be read: " + ErrnoText(err);
    return f;
  }
  if (!S_ISREG(st.st_mode)) {
    refuse(st.st_mode);
    return f;
  }
  // 2. Open without blocking, and judge the descriptor itself: the path may have changed since step 1.
  int fd = -1;
  do {
    fd = ::open(path.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC | O_NOCTTY);
  } while (fd < 0 && errno == EINTR);
  if (fd < 0) {
    const int err = errno;
    f.error_ = err == ENOENT ? "does not exist" : "cannot be opened: " + ErrnoText(err);
    return f;
  }
  if (::fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
    const int err = errno;
    if (S_ISREG(st.st_mode)) f.error_ = "cannot be read: " + ErrnoText(err);
    else refuse(st.st_mode);
    ::close(fd);
    return f;
  }
  // O_NONBLOCK means nothing for a regular file's reads; drop it so the descriptor is an ordinary one.
  const int flags = ::fcntl(fd, F_GETFL);
  if (flags >= 0) ::fcntl(fd, F_SETFL, flags & ~O_NONBLOCK);
  f.fd_ = fd;
  f.size_ = static_cast<uint64_t>(st.st_size);
  return f;
}

RegularFile::RegularFile(RegularFile&& other) noexcept
    : fd_(std::exchange(other.fd_, -1)), size_(other.size_), error_(std::move(other.error_)) {}

RegularFile& RegularFile::operator=(RegularFile&& other) noexcept {
  if (this != &other) {
    if (fd_ >= 0) ::close(fd_);
    fd_ = std::exchange(other.fd_, -1);
    size_ = other.size_;
    error_ = std::move(other.error_);
  }
  return *this;
}

RegularFile::~RegularFile() {
  if (fd_ >= 0) ::close(fd_);
}

std::string RegularFile::ReadAt(uint64_t offset, void* dst, size_t n) const {
  if (fd_ < 0) return "the file is not open";
  auto* out = static_cast<char*>(dst);
  size_t done = 0;
  while (done < n) {
    const uint64_t at = offset + done;
    if (at > static_cast<uint64_t>(INT64_MAX)) return "offset " + std::to_string(at) + " is past any file's end";
    const ssize_t got = ::pread(fd_, out + done, n - done, static_cast<off_t>(at));
    if (got < 0) {
      if (errno == EINTR) continue;
      return "read error: " + ErrnoText(errno);
    }
    if (got == 0) {
      return "the file ends " + std::to_string(done) + " bytes after offset " + std::to_string(offset) + ", " +
             std::to_string(n) + " were needed";
    }
    done += static_cast<size_t>(got);
  }
  return "";
}

}  // namespace ferry
