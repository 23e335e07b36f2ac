#include "server/ingest.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <stdexcept>

namespace ncast::server {
namespace asio = boost::asio;

void ingest_file(const std::filesystem::path& path, MediaStream& stream, SegmentCache& cache) {
  stream.serve_file(path, cache);
}

std::vector<std::filesystem::path> media_files(const std::filesystem::path& directory) {
  std::vector<std::filesystem::path> files;
  for (const auto& entry : std::filesystem::directory_iterator(directory))
    if (entry.is_regular_file() && entry.file_size() > 0) files.push_back(entry.path());
  std::sort(files.begin(), files.end());
  if (files.empty()) throw std::runtime_error("no non-empty files in " + directory.string());
  return files;
}

LiveIngest::LiveIngest(asio::io_context& io, const std::filesystem::path& path, MediaStream& stream, Options options,
                       std::function<void()> on_change)
    : path_(path),
      stream_(stream),
      options_(options),
      on_change_(std::move(on_change)),
      descriptor_(io),
      poll_timer_(io),
      flush_timer_(io),
      cutter_(stream.segment_bytes()),
      chunk_(64 * 1024) {
  if (path == "-") {
    fd_ = ::dup(STDIN_FILENO);
  } else {
    fd_ = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK);
  }
  if (fd_ < 0) throw std::runtime_error("cannot open live source " + path.string() + ": " + std::strerror(errno));
  struct stat st {};
  ::fstat(fd_, &st);
  pipe_ = !S_ISREG(st.st_mode);
  if (pipe_) {
    ::fcntl(fd_, F_SETFL, ::fcntl(fd_, F_GETFL) | O_NONBLOCK);
    descriptor_.assign(fd_);
  }
  last_growth_ = std::chrono::steady_clock::now();
}

LiveIngest::~LiveIngest() {
  try {
    stop();
  } catch (const boost::system::system_error&) {
    // A timer's cancel() throws only when the reactor fails, and a destructor has no one to tell.
  }
  if (!pipe_ && fd_ >= 0) ::close(fd_);
}

void LiveIngest::start() {
  if (pipe_) read_pipe();
  else poll_file();
}

void LiveIngest::stop() {
  stopped_ = true;
  boost::system::error_code ignore;
  poll_timer_.cancel();
  flush_timer_.cancel();
  if (pipe_) descriptor_.cancel(ignore);
}

void LiveIngest::read_pipe() {
  descriptor_.async_read_some(asio::buffer(chunk_), [this](const boost::system::error_code& ec, std::size_t n) {
    if (stopped_ || ec == asio::error::operation_aborted) return;
    if (n > 0) {
      seen_data_ = true;
      take(chunk_.data(), n);
    }
    if (!ec) return read_pipe();
    // A named pipe reads as at its end until its writer opens it: before any data, wait for one.
    if (ec == asio::error::eof && !seen_data_) {
      poll_timer_.expires_after(options_.poll);
      poll_timer_.async_wait([this](const boost::system::error_code& e) {
        if (!e && !stopped_) read_pipe();
      });
      return;
    }
    end();  // the writer closed (or a read error): the stream is complete
  });
}

void LiveIngest::poll_file() {
  for (int reads = 0; reads < 256; ++reads) {
    const ssize_t n = ::read(fd_, chunk_.data(), chunk_.size());
    if (n <= 0) break;
    take(chunk_.data(), static_cast<std::size_t>(n));
  }
  const auto now = std::chrono::steady_clock::now();
  if (options_.end_after.count() > 0 && now - last_growth_ > options_.end_after) return end();
  poll_timer_.expires_after(options_.poll);
  poll_timer_.async_wait([this](const boost::system::error_code& ec) {
    if (!ec && !stopped_) poll_file();
  });
}

void LiveIngest::take(const std::uint8_t* data, std::size_t len) {
  last_growth_ = std::chrono::steady_clock::now();
  meter_.add(last_growth_, len);
  cutter_.push({data, len});
  if (append_all([this] { return cutter_.next(); })) on_change_();
  arm_flush();
}

bool LiveIngest::append_all(const std::function<std::optional<LiveCutter::Segment>()>& cut) {
  bool any = false;
  while (auto s = cut()) {
    stream_.append(s->data, s->entry);
    any = true;
  }
  return any;
}

void LiveIngest::arm_flush() {
  flush_timer_.expires_after(options_.flush_after);
  flush_timer_.async_wait([this](const boost::system::error_code& ec) {
    if (ec || stopped_) return;
    if (append_all([this] { return cutter_.flush(); })) on_change_();
  });
}

void LiveIngest::end() {
  if (ended_) return;
  ended_ = true;
  flush_timer_.cancel();
  append_all([this] { return cutter_.next(); });
  append_all([this] { return cutter_.finish(); });
  stream_.finish();
  on_change_();
}

}  // namespace ncast::server
