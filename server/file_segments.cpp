#include "server/file_segments.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <stdexcept>

#include "protocol/crypto.hpp"

namespace ncast::server {

FileSegments::FileSegments(const std::filesystem::path& path, std::size_t segment_bytes, std::size_t symbol_size,
                           SegmentCache& cache, std::uint64_t key_base)
    : path_(path), segment_bytes_(segment_bytes), symbol_size_(symbol_size), cache_(cache), key_base_(key_base) {
  fd_ = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd_ < 0) throw std::runtime_error("cannot open " + path.string() + ": " + std::strerror(errno));
  struct stat st {};
  if (::fstat(fd_, &st) != 0 || !S_ISREG(st.st_mode)) {
    ::close(fd_);
    throw std::runtime_error(path.string() + " is not a regular file");
  }
  file_bytes_ = static_cast<std::uint64_t>(st.st_size);
  const std::uint64_t count = (file_bytes_ + segment_bytes_ - 1) / segment_bytes_;
  if (count == 0 || count > 0xFFFFFFFEull) {
    ::close(fd_);
    throw std::runtime_error(path.string() + (count == 0 ? " is empty" : " has more than 2^32 - 2 segments"));
  }
  descriptors_.resize(count);
  for (std::uint64_t i = 0; i < count; ++i)
    descriptors_[i].size =
        static_cast<std::uint32_t>(std::min<std::uint64_t>(segment_bytes_, file_bytes_ - i * segment_bytes_));
  hashed_.resize(count);
}

FileSegments::~FileSegments() { ::close(fd_); }

void FileSegments::read(std::uint32_t segment, std::uint8_t* out) const {
  const std::size_t size = size_of(segment);
  const auto offset = static_cast<off_t>(std::uint64_t{segment} * segment_bytes_);
  for (std::size_t got = 0; got < size;) {
    const ssize_t n = ::pread(fd_, out + got, size - got, offset + static_cast<off_t>(got));
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0)
      throw std::runtime_error("reading segment " + std::to_string(segment) + " of " + path_.string() + ": " +
                               (n < 0 ? std::strerror(errno) : "the file shrank while served"));
    got += static_cast<std::size_t>(n);
  }
}

SegmentBlock FileSegments::block(std::uint32_t segment) const {
  const std::size_t size = size_of(segment);
  const std::size_t padded = (size + symbol_size_ - 1) / symbol_size_ * symbol_size_;
  return cache_.get(key_base_ | segment, padded, [&](HostBuffer& b) {
    read(segment, b.data());
    std::memset(b.data() + size, 0, padded - size);
  });
}

const proto::SegmentDescriptor& FileSegments::descriptor(std::uint32_t segment) const {
  {
    std::lock_guard lock(mutex_);
    if (hashed_.at(segment)) return descriptors_[segment];
  }
  // Descriptors run ahead of the data, far ahead for a peer that starts deep into the file (it is sent
  // every descriptor from segment 0): a block not cached is read for its hash alone, so that hashing
  // does not push out the blocks senders are using.
  proto::Sha256Digest hash;
  if (const SegmentBlock b = cache_.peek(key_base_ | segment)) {
    hash = proto::sha256({b->data(), size_of(segment)});
  } else {
    thread_local std::vector<std::uint8_t> scratch;
    scratch.resize(segment_bytes_);
    read(segment, scratch.data());
    hash = proto::sha256({scratch.data(), size_of(segment)});
  }
  std::lock_guard lock(mutex_);
  // Written once: a reference handed out earlier is never written under its reader.
  if (!hashed_[segment]) {
    descriptors_[segment].hash = hash;
    hashed_[segment] = true;
  }
  return descriptors_[segment];
}

}  // namespace ncast::server
