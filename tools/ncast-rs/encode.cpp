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

// What the command line asks for.
struct EncodeRequest {
  fs::path input;
  std::size_t k = 0, m = 0;
  rs::MatrixKind matrix = rs::MatrixKind::cauchy;
  Backend backend = Backend::automatic;
  std::string out_dir;
  bool force = false, quiet = false;
};

std::optional<EncodeRequest> parse_request(int argc, char** argv) {
  EncodeRequest r;
  std::string matrix = "cauchy", backend = "auto";
  po::options_description desc("ncast-rs encode options");
  desc.add_options()("data-shards,k", po::value(&r.k)->required(), "data shards K (K >= 1, K + M <= 256)")(
      "parity-shards,m", po::value(&r.m)->required(), "parity shards M: any M shards may be lost")(
      "matrix", po::value(&matrix)->default_value(matrix),
      "cauchy (ISA-L gf_gen_cauchy1_matrix, klauspost WithCauchyMatrix) or vandermonde (klauspost/Backblaze default)")(
      "output-dir,o", po::value(&r.out_dir), "directory for the shards and the manifest (default: FILE's directory)")(
      "force,f", po::bool_switch(&r.force), "replace existing shards and manifest")(
      "backend", po::value(&backend)->default_value(backend), "coding engine: auto, cpu or cuda")(
      "quiet,q", po::bool_switch(&r.quiet), "no progress bar, no summary")("help,h", "show this help");
  const auto vm =
      parse_command_line(argc, argv,
                         "usage: ncast-rs encode FILE -k K -m M [--matrix cauchy|vandermonde] [-o DIR] [--force]\n\n"
                         "Writes DIR/FILE.000 ... DIR/FILE.<K+M-1> (data shard i holds bytes [i*S, (i+1)*S) of FILE,\n"
                         "zero-padded; S = ceil(size / K)) and DIR/FILE.manifest.json (code, sizes, SHA-256 digests).",
                         desc, "file");
  if (!vm) return std::nullopt;

  r.input = (*vm)["file"].as<std::string>();
  const auto kind = rs::parse_matrix_kind(matrix);
  if (!kind || *kind == rs::MatrixKind::custom) throw UsageError("--matrix must be cauchy or vandermonde");
  r.matrix = *kind;
  try {
    rs::check_code_size(r.k, r.m);
  } catch (const std::invalid_argument& e) {
    throw UsageError(e.what());
  }
  r.backend = parse_backend_option(backend);
  return r;
}

// Without --force, no shard or manifest of the set may exist yet (nor a link in its place).
void refuse_existing(const fs::path& dir, const Manifest& man, const fs::path& manifest_path) {
  const std::size_t n = man.k + man.m;
  for (std::size_t i = 0; i <= n; ++i) {
    const fs::path p = i < n ? dir / Manifest::shard_file(man.name, i) : manifest_path;
    if (fs::exists(fs::symlink_status(p))) throw std::runtime_error(p.string() + " exists (use --force to replace it)");
  }
}

// Codes the file into the temporary shards, slice by slice; returns each shard's digest and fills in
// the file's own.
std::vector<Sha256> encode_shards(const rs::Codec& codec, const File& in, const fs::path& input, Manifest& man,
                                  std::vector<TempFile>& shards, Progress& progress) {
  const std::size_t k = man.k, n = man.k + man.m;
  const std::uint64_t size = man.file_size, S = man.shard_size;
  std::vector<Sha256> digests(n);
  FileHasher file_hasher(input);
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
  return digests;
}

// Writes the manifest and renames every file of the set into place.
void commit_set(const fs::path& dir, const fs::path& manifest_path, const Manifest& man, std::vector<TempFile>& shards,
                bool force) {
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
}

}  // namespace

int run_encode(int argc, char** argv) {
  const auto request = parse_request(argc, argv);
  if (!request) return kExitOk;
  const EncodeRequest& r = *request;
  const std::size_t k = r.k, m = r.m;

  File in = File::open_read(r.input);
  const std::uint64_t size = in.size();
  const std::int64_t mtime = in.mtime_ns();
  const fs::path dir = !r.out_dir.empty()          ? fs::path(r.out_dir)
                       : r.input.has_parent_path() ? r.input.parent_path()
                                                   : ".";
  if (!r.out_dir.empty()) fs::create_directories(dir);

  Manifest man;
  man.name = r.input.filename().string();
  man.file_size = size;
  man.k = k;
  man.m = m;
  man.matrix = r.matrix;
  man.shard_size = Manifest::shard_size_for(size, k);
  const std::size_t n = k + m;
  const fs::path manifest_path = dir / Manifest::manifest_file(man.name);
  if (!r.force) refuse_existing(dir, man, manifest_path);

  rs::Codec codec(k, m, {.matrix = r.matrix, .backend = r.backend});
  std::vector<TempFile> shards;
  shards.reserve(n);
  for (std::size_t i = 0; i < n; ++i) {
    shards.emplace_back(dir / Manifest::shard_file(man.name, i));
    shards.back().truncate(man.shard_size);
  }

  Progress progress("encode", size, !r.quiet);
  auto digests = encode_shards(codec, in, r.input, man, shards, progress);
  if (in.size() != size || in.mtime_ns() != mtime)
    throw std::runtime_error(r.input.string() + " changed while it was being encoded; nothing written");
  man.shards.reserve(n);
  for (std::size_t i = 0; i < n; ++i) man.shards.push_back({Manifest::shard_file(man.name, i), digests[i].hex()});
  commit_set(dir, manifest_path, man, shards, r.force);

  const double seconds = progress.finish();
  if (!r.quiet)
    std::cout << "encoded " << man.name << " (" << format_bytes(size) << ") into " << k << "+" << m << " "
              << rs::to_string(r.matrix) << " shards of " << format_bytes(man.shard_size) << " in "
              << format_seconds(seconds) << " (" << format_rate(size, seconds) << "); manifest "
              << manifest_path.string() << "\n";
  return kExitOk;
}

}  // namespace ncast::tools
