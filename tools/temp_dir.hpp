#pragma once
// A fresh private directory under the system's temporary directory, removed with everything in it when
// the object goes: for the end-to-end tests and benchmarks that start real processes.
#include <stdlib.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <stdexcept>
#include <string>

namespace ncast::tools {

class TempDir {
 public:
  TempDir() {
    // mkdtemp fills in the six trailing X's.
    std::string pattern = (std::filesystem::temp_directory_path() / ("ncast-" + std::string(6, 'X'))).string();
    if (!::mkdtemp(pattern.data()))
      throw std::runtime_error("cannot create a directory like " + pattern + ": " + std::strerror(errno));
    path_ = pattern;
  }
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;
  ~TempDir() {
    std::error_code ignore;
    std::filesystem::remove_all(path_, ignore);
  }
  std::filesystem::path operator/(const std::string& name) const { return path_ / name; }
  const std::filesystem::path& path() const { return path_; }

 private:
  std::filesystem::path path_;
};

}  // namespace ncast::tools
