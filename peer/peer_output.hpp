#pragma once
// Where a peer writes the decoded stream: a file, standard output, or nowhere. A file is written under
// a temporary name beside it and renamed onto its own name only once the stream is complete, so that
// an interrupted or failed run leaves nothing half-written under the name asked for. A failed write
// (the player quit, a full disk) stops the writing and is kept for the peer to report.
#include <cstdint>
#include <span>
#include <string>

namespace ncast::peer {

class Output {
 public:
  // path: a file ("" for nowhere, "-" for standard output). An existing regular file is refused
  // unless force; an existing file of another kind (a FIFO, /dev/null) is written to directly.
  // Throws std::runtime_error naming the path when the file cannot be created.
  Output(const std::string& path, bool force);
  // Removes the temporary file unless commit() renamed it.
  ~Output();
  Output(const Output&) = delete;
  Output& operator=(const Output&) = delete;

  void write(std::span<const std::uint8_t> data);
  bool failed() const { return closed_; }
  const std::string& error() const { return error_; }
  // The stream is complete: the temporary file takes the final name (replacing a file there only with
  // force). Throws std::runtime_error naming both paths when it cannot.
  void commit();

 private:
  int fd_ = -1;
  bool owned_ = false, closed_ = false, force_ = false;
  std::string path_, temporary_;  // temporary_ empty: written in place (or not a file)
  std::string error_;
};

}  // namespace ncast::peer
