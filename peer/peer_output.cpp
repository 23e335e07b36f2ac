#include "peer/peer_output.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <stdexcept>

namespace ncast::peer {
namespace {

// ".NAME.PID.part" beside path: hidden, and one per process.
std::string temporary_name(const std::string& path) {
  const std::filesystem::path p(path);
  std::string name = ".";
  name += p.filename().string();
  name += '.';
  name += std::to_string(::getpid());
  name += ".part";
  return (p.parent_path() / name).string();
}

std::string cannot_create(const std::string& path, int error) {
  return "cannot create " + path + ": " + std::strerror(error) + (error == EEXIST ? " (use --force to overwrite)" : "");
}

// rename() that fails with EEXIST instead of replacing; where the file system cannot do that atomically
// (EINVAL: NFS, say), a file there is looked for first.
bool rename_no_replace(const std::string& from, const std::string& to) {
  if (::renameat2(AT_FDCWD, from.c_str(), AT_FDCWD, to.c_str(), RENAME_NOREPLACE) == 0) return true;
  if (errno != EINVAL) return false;
  struct stat st {};
  if (::lstat(to.c_str(), &st) == 0) {
    errno = EEXIST;
    return false;
  }
  return std::rename(from.c_str(), to.c_str()) == 0;
}

}  // namespace

Output::Output(const std::string& path, bool force) : force_(force), path_(path) {
  if (path.empty()) return;
  if (path == "-") {
    fd_ = STDOUT_FILENO;
    return;
  }
  struct stat st {};
  const bool exists = ::stat(path.c_str(), &st) == 0;
  if (exists && S_ISREG(st.st_mode) && !force) throw std::runtime_error(cannot_create(path, EEXIST));
  if (exists && !S_ISREG(st.st_mode)) {
    fd_ = ::open(path.c_str(), O_WRONLY | O_CLOEXEC);
    if (fd_ < 0) throw std::runtime_error(cannot_create(path, errno));
  } else {
    temporary_ = temporary_name(path);
    fd_ = ::open(temporary_.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
    if (fd_ < 0) {
      const int error = errno;
      throw std::runtime_error("cannot create " + path + " (written first as " + temporary_ +
                               "): " + std::strerror(error));
    }
  }
  owned_ = true;
}

Output::~Output() {
  if (owned_) ::close(fd_);
  if (!temporary_.empty()) ::unlink(temporary_.c_str());
}

void Output::write(std::span<const std::uint8_t> data) {
  if (fd_ < 0 || closed_) return;
  std::size_t done = 0;
  while (done < data.size()) {
    const ssize_t n = ::write(fd_, data.data() + done, data.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) {
      closed_ = true;  // EPIPE (the player quit) or a full disk: stop writing, report it
      error_ = std::strerror(errno);
      return;
    }
    done += static_cast<std::size_t>(n);
  }
}

void Output::commit() {
  if (temporary_.empty()) return;
  // close() is where a network file system reports a write that failed.
  const int closed = ::close(fd_);
  owned_ = false;
  const bool renamed = closed == 0 && (force_ ? std::rename(temporary_.c_str(), path_.c_str()) == 0
                                              : rename_no_replace(temporary_, path_));
  if (renamed) {
    temporary_.clear();
    return;
  }
  const int error = errno;
  throw std::runtime_error("cannot write " + path_ + " (from " + temporary_ + "): " + std::strerror(error) +
                           (error == EEXIST ? " (it appeared meanwhile; use --force to overwrite)" : ""));
}

}  // namespace ncast::peer
