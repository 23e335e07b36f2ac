#pragma once
// Where a peer writes the decoded stream: a new file, standard output, or nowhere. A failed write
// (the player quit, a full disk) stops the writing and is kept for the peer to report.
#include <cstdint>
#include <span>
#include <string>

namespace ncast::peer {

class Output {
 public:
  // path: a file created for it (replaced only with force), "-" for standard output, "" for nowhere.
  // Throws std::runtime_error when the file cannot be created.
  Output(const std::string& path, bool force);
  ~Output();
  Output(const Output&) = delete;
  Output& operator=(const Output&) = delete;

  void write(std::span<const std::uint8_t> data);
  bool failed() const { return closed_; }
  const std::string& error() const { return error_; }

 private:
  int fd_ = -1;
  bool owned_ = false, closed_ = false;
  std::string error_;
};

}  // namespace ncast::peer
