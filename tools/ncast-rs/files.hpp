#pragma once
// POSIX file I/O for ncast-rs: positional reads and writes that complete or throw naming the file and
// the reason, and temporary files that take their final name only once complete, so an interrupted
// run never leaves output that looks valid.
#include <sys/types.h>

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <stdexcept>
#include <string>

namespace ncast::tools {

namespace fs = std::filesystem;

// Any failed file operation; the message names the file and the reason.
class IoError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

class File {
 public:
  File() = default;
  File(File&& other) noexcept;
  File& operator=(File&& other) noexcept;
  File(const File&) = delete;
  File& operator=(const File&) = delete;
  ~File();

  // A regular file opened for reading (IoError for anything else).
  static File open_read(const fs::path& path);

  const fs::path& path() const { return path_; }
  std::uint64_t size() const;
  // Modification time in nanoseconds, to notice a file that changes while it is read.
  std::int64_t mtime_ns() const;

  // Up to len bytes at offset: fewer only where the file ends. Returns the count read. Holes are
  // zero-filled without reading them.
  std::size_t read_at(std::uint8_t* buf, std::size_t len, std::uint64_t offset) const;
  // Exactly len bytes at offset, or IoError.
  void read_exact(std::uint8_t* buf, std::size_t len, std::uint64_t offset) const;
  void write_at(const std::uint8_t* buf, std::size_t len, std::uint64_t offset);
  void truncate(std::uint64_t size);
  void sync();

 protected:
  File(int fd, fs::path path) : fd_(fd), path_(std::move(path)) {}
  std::size_t pread_fully(std::uint8_t* buf, std::size_t len, std::uint64_t offset) const;
  int fd_ = -1;
  fs::path path_;
};

// Created as DIR/.NAME.partial-XXXXXX beside its final path DIR/NAME; removed on destruction unless
// commit() renamed it into place.
class TempFile : public File {
 public:
  explicit TempFile(const fs::path& final_path);
  TempFile(TempFile&& other) noexcept;
  TempFile& operator=(TempFile&&) = delete;
  ~TempFile();

  const fs::path& final_path() const { return final_; }
  // Renames onto the final path (replacing what is there) and keeps the file.
  void commit();

 private:
  fs::path final_;
  bool committed_ = false;
};

// Makes renames in dir durable.
void sync_directory(const fs::path& dir);

// Whether len bytes at p are all zero (a slice worth a hole rather than a write).
bool all_zero(const std::uint8_t* p, std::size_t len);

}  // namespace ncast::tools
