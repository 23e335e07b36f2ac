// ncast-rs encode FILE -k K -m M: K data shards (FILE's bytes, zero-padded), M parity shards and a
// manifest, written under temporary names and renamed into place only when all of them are complete.
#include <atomic>
#include <cstring>
#include <exception>
#include <iostream>
#include <optional>
#include <thread>
#include <vector>

#include "coding/rs/codec.hpp"
#include "coding/rs/stream.hpp"
#include "tools/ncast-rs/cli.hpp"
#include "tools/ncast-rs/files.hpp"
#include "tools/ncast-rs/interrupt.hpp"
#include "tools/ncast-rs/manifest.hpp"
#include "tools/ncast-rs/progress.hpp"
#include "tools/ncast-rs/sha256.hpp"
#include "tools/ncast-rs/shards.hpp"

namespace ncast::tools {
namespace {

struct Cancelled {};

// The file's own digest needs its bytes in order, while the shards are cut slice by slice across
// the whole file; so a second reader hashes the file alongside, on another core.
class FileHasher {
 public:
  explicit FileHasher(const fs::path& path)
      : thread_([this, path] {
          try {
            const File file = File::open_read(path);
            digest_ = sha256_of(file, [this](std::size_t) {
              if (cancel_) throw Cancelled{};
            });
          } catch (const Cancelled&) {
          } catch (...) {
            error_ = std::current_exception();
          }
        }) {}
  ~FileHasher() {
    cancel_ = true;
    if (thread_.joinable()) thread_.join();
  }
  std::string digest() {
    thread_.join();
    if (error_) std::rethrow_exception(error_);
    return digest_;
  }

 private:
  std::atomic<bool> cancel_{false};
  std::string digest_;
  std::exception_ptr error_;
  std::thread thread_;
};

}  // namespace

int run_encode(int argc, char** argv) {
  std::size_t k = 0, m = 0;
  std::string matrix = "cauchy", backend = "auto", out_dir;
  bool force = false, quiet = false;
  po::options_description desc("ncast-rs encode options");
  desc.add_options()("data-shards,k", po::value(&k)->required(), "data shards K (K >= 1, K + M <= 256)")(
      "parity-shards,m", po::value(&m)->required(), "parity shards M: any M shards may be lost")(
      "matrix", po::value(&matrix)->default_value(matrix),
      "cauchy (ISA-L gf_gen_cauchy1_matrix, klauspost WithCauchyMatrix) or vandermonde (klauspost/Backblaze default)")(
      "output-dir,o", po::value(&out_dir), "directory for the shards and the manifest (default: FILE's directory)")(
      "force,f", po::bool_switch(&force), "replace existing shards and manifest")(
      "backend", po::value(&backend)->default_value(backend), "coding engine: auto, cpu or cuda")(
      "quiet,q", po::bool_switch(&quiet), "no progress bar, no summary")("help,h", "show this help");
  po::variables_map vm;
  if (!parse_command_line(argc, argv,
                          "usage: ncast-rs encode FILE -k K -m M [--matrix cauchy|vandermonde] [-o DIR] [--force]\n\n"
                          "Writes DIR/FILE.000 ... DIR/FILE.<K+M-1> (data shard i holds bytes [i*S, (i+1)*S) of FILE,\n"
                          "zero-padded; S = ceil(size / K)) and DIR/FILE.manifest.json (code, sizes, SHA-256 digests).",
                          desc, "file", vm))
    return kExitOk;

  const fs::path input = vm["file"].as<std::string>();
  const auto kind = rs::parse_matrix_kind(matrix);
  if (!kind || *kind == rs::MatrixKind::custom) throw UsageError("--matrix must be cauchy or vandermonde");
  try {
    rs::check_code_size(k, m);
  } catch (const std::invalid_argument& e) {
    throw UsageError(e.what());
  }
  const Backend engine = parse_backend_option(backend);

  File in = File::open_read(input);
  const std::uint64_t size = in.size();
  const std::int64_t mtime = in.mtime_ns();
  const fs::path dir = !out_dir.empty() ? fs::path(out_dir) : input.has_parent_path() ? input.parent_path() : ".";
  if (!out_dir.empty()) fs::create_directories(dir);

  Manifest man;
  man.name = input.filename().string();
  man.file_size = size;
  man.k = k;
  man.m = m;
  man.matrix = *kind;
  man.shard_size = Manifest::shard_size_for(size, k);
  const std::size_t n = k + m;
  const fs::path manifest_path = dir / Manifest::manifest_file(man.name);
  if (!force) {
    for (std::size_t i = 0; i <= n; ++i) {
      const fs::path p = i < n ? dir / Manifest::shard_file(man.name, i) : manifest_path;
      if (fs::exists(fs::symlink_status(p)))
        throw std::runtime_error(p.string() + " exists (use --force to replace it)");
    }
  }

  rs::Codec codec(k, m, {.matrix = *kind, .backend = engine});
  std::vector<TempFile> shards;
  std::vector<Sha256> digests(n);
  for (std::size_t i = 0; i < n; ++i) {
    shards.emplace_back(dir / Manifest::shard_file(man.name, i));
    shards.back().truncate(man.shard_size);
  }

  Progress progress("encode", size, !quiet);
  FileHasher file_hasher(input);
  const std::uint64_t S = man.shard_size;
  const auto read = [&](const rs::Slice& s) {
    check_interrupted();
    for (std::size_t j = 0; j < k; ++j) {
      const std::uint64_t start = j * S + s.offset;
      const std::size_t avail =
          start < size ? static_cast<std::size_t>(std::min<std::uint64_t>(s.len, size - start)) : 0;
      in.read_exact(s.shards[j], avail, start);
      std::memset(s.shards[j] + avail, 0, s.len - avail);
    }
  };
  const auto write = [&](const rs::Slice& s) {
    for (std::size_t i = 0; i < n; ++i) {
      digests[i].update(s.shards[i], s.len);
      // Zero slices stay holes: a sparse file gives sparse shards.
      if (!all_zero(s.shards[i], s.len)) shards[i].write_at(s.shards[i], s.len, s.offset);
    }
    progress.update(static_cast<std::uint64_t>(static_cast<double>(s.offset + s.len) / static_cast<double>(S) *
                                               static_cast<double>(size)));
  };
  rs::StreamCoder(codec, slice_bytes_for(codec, S)).encode(S, read, write);
  man.file_sha256 = file_hasher.digest();
  if (in.size() != size || in.mtime_ns() != mtime)
    throw std::runtime_error(input.string() + " changed while it was being encoded; nothing written");

  for (std::size_t i = 0; i < n; ++i) man.shards.push_back({Manifest::shard_file(man.name, i), digests[i].hex()});
  TempFile manifest(manifest_path);
  const std::string json = man.to_json();
  manifest.write_at(reinterpret_cast<const std::uint8_t*>(json.data()), json.size(), 0);
  for (auto& s : shards) s.sync();
  manifest.sync();
  // An old manifest goes first: were we stopped among the renames, no manifest would vouch for a mix
  // of old and new shards.
  if (force) fs::remove(manifest_path);
  for (auto& s : shards) s.commit();
  manifest.commit();
  sync_directory(dir);

  const double seconds = progress.finish();
  if (!quiet)
    std::cout << "encoded " << man.name << " (" << format_bytes(size) << ") into " << k << "+" << m << " "
              << rs::to_string(*kind) << " shards of " << format_bytes(S) << " in " << format_seconds(seconds) << " ("
              << format_rate(size, seconds) << "); manifest " << manifest_path.string() << "\n";
  return kExitOk;
}

}  // namespace ncast::tools
