#include "tools/ncast-rs/files.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <utility>
#include <vector>

namespace ncast::tools {
namespace {

[[noreturn]] void fail(const std::string& what, const fs::path& path, int err) {
  throw IoError(what + " " + path.string() + ": " + std::strerror(err));
}

mode_t creation_mode() {
  // Temporary files are created 0600; once renamed they get what an ordinary create would give.
  static const mode_t mode = [] {
    const mode_t mask = ::umask(0);
    ::umask(mask);
    return static_cast<mode_t>(0666 & ~mask);
  }();
  return mode;
}

}  // namespace

File::File(File&& other) noexcept : fd_(std::exchange(other.fd_, -1)), path_(std::move(other.path_)) {}

File& File::operator=(File&& other) noexcept {
  if (this != &other) {
    if (fd_ >= 0) ::close(fd_);
    fd_ = std::exchange(other.fd_, -1);
    path_ = std::move(other.path_);
  }
  return *this;
}

File::~File() {
  if (fd_ >= 0) ::close(fd_);
}

File File::open_read(const fs::path& path) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) fail("cannot open", path, errno);
  File f(fd, path);
  struct stat st;
  if (::fstat(fd, &st) != 0) fail("cannot stat", path, errno);
  if (!S_ISREG(st.st_mode)) throw IoError(path.string() + " is not a regular file");
  return f;
}

std::uint64_t File::size() const {
  struct stat st;
  if (::fstat(fd_, &st) != 0) fail("cannot stat", path_, errno);
  return static_cast<std::uint64_t>(st.st_size);
}

std::int64_t File::mtime_ns() const {
  struct stat st;
  if (::fstat(fd_, &st) != 0) fail("cannot stat", path_, errno);
  return static_cast<std::int64_t>(st.st_mtim.tv_sec) * 1'000'000'000 + st.st_mtim.tv_nsec;
}

std::size_t File::read_at(std::uint8_t* buf, std::size_t len, std::uint64_t offset) const {
  // Holes of sparse files are filled with zeros here instead of being read: reading a hole makes the
  // kernel zero fresh page-cache pages, several times slower than clearing a buffer that is in cache.
  const std::uint64_t file_size = size();
  if (offset >= file_size) return 0;
  len = static_cast<std::size_t>(std::min<std::uint64_t>(len, file_size - offset));
  std::size_t done = 0;
  while (done < len) {
    const off_t pos = static_cast<off_t>(offset + done);
    off_t data = ::lseek(fd_, pos, SEEK_DATA);
    if (data < 0) {
      if (errno != ENXIO) fail("cannot seek in", path_, errno);
      data = static_cast<off_t>(offset + len);  // nothing but hole up to the end
    }
    const std::size_t hole = static_cast<std::size_t>(
        std::min<std::uint64_t>(static_cast<std::uint64_t>(data), offset + len) - (offset + done));
    std::memset(buf + done, 0, hole);
    done += hole;
    if (done == len) break;
    off_t data_end = ::lseek(fd_, static_cast<off_t>(offset + done), SEEK_HOLE);
    if (data_end < 0) fail("cannot seek in", path_, errno);
    const std::size_t want = static_cast<std::size_t>(
        std::min<std::uint64_t>(static_cast<std::uint64_t>(data_end), offset + len) - (offset + done));
    const std::size_t got = pread_fully(buf + done, want, offset + done);
    done += got;
    if (got < want) break;  // the file shrank under us
  }
  return done;
}

std::size_t File::pread_fully(std::uint8_t* buf, std::size_t len, std::uint64_t offset) const {
  std::size_t done = 0;
  while (done < len) {
    const ssize_t n = ::pread(fd_, buf + done, len - done, static_cast<off_t>(offset + done));
    if (n < 0) {
      if (errno == EINTR) continue;
      fail("cannot read", path_, errno);
    }
    if (n == 0) break;
    done += static_cast<std::size_t>(n);
  }
  return done;
}

void File::read_exact(std::uint8_t* buf, std::size_t len, std::uint64_t offset) const {
  const std::size_t n = read_at(buf, len, offset);
  if (n != len)
    throw IoError(path_.string() + " ends at byte " + std::to_string(offset + n) + ", expected at least " +
                  std::to_string(offset + len) + " (did it change while being read?)");
}

void File::write_at(const std::uint8_t* buf, std::size_t len, std::uint64_t offset) {
  std::size_t done = 0;
  while (done < len) {
    const ssize_t n = ::pwrite(fd_, buf + done, len - done, static_cast<off_t>(offset + done));
    if (n < 0) {
      if (errno == EINTR) continue;
      fail("cannot write", path_, errno);
    }
    done += static_cast<std::size_t>(n);
  }
}

void File::truncate(std::uint64_t size) {
  if (::ftruncate(fd_, static_cast<off_t>(size)) != 0) fail("cannot size", path_, errno);
}

void File::sync() {
  if (::fsync(fd_) != 0) fail("cannot sync", path_, errno);
}

TempFile::TempFile(const fs::path& final_path) : final_(final_path) {
  const fs::path dir = final_path.has_parent_path() ? final_path.parent_path() : fs::path(".");
  std::string name = ".";
  name += final_path.filename().string();
  name += ".partial-XXXXXX";
  const std::string full = (dir / name).string();
  std::vector<char> tmpl(full.begin(), full.end());
  tmpl.push_back('\0');
  fd_ = ::mkostemp(tmpl.data(), O_CLOEXEC);
  if (fd_ < 0) fail("cannot create a file in", dir, errno);
  path_ = tmpl.data();
  if (::fchmod(fd_, creation_mode()) != 0) fail("cannot set the mode of", path_, errno);
}

TempFile::TempFile(TempFile&& other) noexcept
    : File(std::move(other)), final_(std::move(other.final_)), committed_(std::exchange(other.committed_, true)) {}

TempFile::~TempFile() {
  if (!committed_ && !path_.empty()) ::unlink(path_.c_str());
}

void TempFile::commit() {
  if (::rename(path_.c_str(), final_.c_str()) != 0) fail("cannot rename " + path_.string() + " to", final_, errno);
  committed_ = true;
}

void sync_directory(const fs::path& dir) {
  const int fd = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd < 0) fail("cannot open directory", dir, errno);
  const int rc = ::fsync(fd);
  const int err = errno;
  ::close(fd);
  if (rc != 0) fail("cannot sync directory", dir, err);
}

bool all_zero(const std::uint8_t* p, std::size_t len) {
  // p[0] == 0 and every byte equal to the one before it: memcmp's vector loop does the scan.
  return len == 0 || (p[0] == 0 && std::memcmp(p, p + 1, len - 1) == 0);
}

}  // namespace ncast::tools
