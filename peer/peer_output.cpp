#include "peer/peer_output.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <stdexcept>

namespace ncast::peer {

Output::Output(const std::string& path, bool force) {
  if (path.empty()) return;
  if (path == "-") {
    fd_ = STDOUT_FILENO;
    return;
  }
  fd_ = ::open(path.c_str(), O_WRONLY | O_CREAT | O_CLOEXEC | (force ? O_TRUNC : O_EXCL), 0644);
  if (fd_ < 0)
    throw std::runtime_error("cannot create " + path + ": " + std::strerror(errno) +
                             (errno == EEXIST ? " (use --force to overwrite)" : ""));
  owned_ = true;
}

Output::~Output() {
  if (owned_) ::close(fd_);
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

}  // namespace ncast::peer
