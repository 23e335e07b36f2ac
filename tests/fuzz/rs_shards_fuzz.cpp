// ncast-rs reading shards a user's disk or a hostile party left behind. Each input encodes a small
// random file with the real encode command, then damages what it wrote: shards deleted, truncated,
// extended, bit-flipped, swapped, duplicated, replaced by a directory or a symbolic link, and
// manifest entries pointed at each other's files, at the manifest, at the original file, or given
// other digests, matrix or sizes; then runs decode, verify or repair in-process.
//   Always: a failure leaves no output and no temporary file; a decode that succeeds wrote a file
//   of the size and SHA-256 the manifest gives (exactly the original's bytes when the manifest is the
//   one encode wrote); the manifest and the original are never changed; a shard intact by the
//   manifest is never changed.
//   With the manifest as written: decode and repair succeed exactly when K shards are intact, verify
//   says how many are; a repair makes every shard intact again (and refuses, changing nothing, when a
//   directory stands where a shard belongs).
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <iostream>
#include <map>
#include <optional>
#include <span>
#include <streambuf>
#include <string>
#include <tuple>
#include <vector>

#include "tests/fuzz/fuzz_target.hpp"
#include "tools/ncast-rs/cli.hpp"
#include "tools/ncast-rs/manifest.hpp"
#include "tools/ncast-rs/sha256.hpp"

namespace {

namespace fs = std::filesystem;
using namespace ncast::tools;
using Bytes = std::vector<std::uint8_t>;

// The bytes of a regular file (following links, as the tool does); nullopt for anything else.
std::optional<Bytes> read_regular(const fs::path& p) {
  const int fd = ::open(p.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return std::nullopt;
  struct stat st;
  std::optional<Bytes> out;
  if (::fstat(fd, &st) == 0 && S_ISREG(st.st_mode)) {
    out.emplace(static_cast<std::size_t>(st.st_size));
    FUZZ_CHECK(::pread(fd, out->data(), out->size(), 0) == static_cast<ssize_t>(out->size()));
  }
  ::close(fd);
  return out;
}
void write_file(const fs::path& p, std::span<const std::uint8_t> b) {
  const int fd = ::open(p.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  FUZZ_CHECK(fd >= 0 && ::write(fd, b.data(), b.size()) == static_cast<ssize_t>(b.size()));
  ::close(fd);
}

std::string sha256_hex(const Bytes& b) {
  Sha256 h;
  h.update(b.data(), b.size());
  return h.hex();
}

// Runs a subcommand as main() does: the exit code, exceptions included. Its messages are not what
// is checked here: they go nowhere.
int run(int (*command)(int, char**), std::vector<std::string> args) {
  struct Discard : std::streambuf {
    int overflow(int c) override { return c; }
    std::streamsize xsputn(const char*, std::streamsize n) override { return n; }
  } discard;
  struct Quiet {
    std::streambuf* out;
    std::streambuf* err;
    ~Quiet() {
      std::cout.rdbuf(out);
      std::cerr.rdbuf(err);
    }
  } quiet{std::cout.rdbuf(&discard), std::cerr.rdbuf(&discard)};
  std::vector<char*> argv;
  for (auto& a : args) argv.push_back(a.data());
  argv.push_back(nullptr);
  try {
    return command(static_cast<int>(args.size()), argv.data());
  } catch (const UsageError&) {
    return kExitUsage;
  } catch (const std::exception&) {
    return kExitFailure;
  }
}

// Every file in dir by name: contents of regular files, nothing for the rest.
std::map<std::string, std::optional<Bytes>> snapshot(const fs::path& dir) {
  std::map<std::string, std::optional<Bytes>> files;
  for (const auto& e : fs::directory_iterator(dir)) files[e.path().filename()] = read_regular(e.path());
  return files;
}

bool has_temporaries(const fs::path& dir) {
  for (const auto& e : fs::directory_iterator(dir))
    if (e.path().filename().string().find(".partial-") != std::string::npos) return true;
  return false;
}

// A directory of this process on a memory file system when there is one; removed at exit.
const fs::path& work_root() {
  static const fs::path* const root = [] {
    const fs::path base = fs::is_directory("/dev/shm") ? fs::path("/dev/shm") : fs::temp_directory_path();
    const auto* r = new fs::path(base / ("ncast-fuzz-rs-" + std::to_string(::getpid())));  // outlives atexit
    fs::create_directories(*r);
    std::atexit([] {
      std::error_code ignore;
      fs::remove_all(work_root(), ignore);
    });
    return r;
  }();
  return *root;
}

// A file as the encode command left it: its bytes, its shards and its manifest. Encoding is the
// costly part of a run, so the encodings of recent parameters are kept.
struct Encoded {
  Bytes original;
  std::vector<Bytes> shards;
  Bytes manifest_json;
  Manifest manifest;
};

const Encoded& encoded(std::size_t k, std::size_t m, std::size_t file_size, bool vandermonde, std::uint8_t seed) {
  static std::map<std::tuple<std::size_t, std::size_t, std::size_t, bool, std::uint8_t>, Encoded> cache;
  const auto key = std::make_tuple(k, m, file_size, vandermonde, seed);
  if (auto it = cache.find(key); it != cache.end()) return it->second;
  if (cache.size() >= 1024) cache.clear();

  Encoded e;
  e.original.resize(file_size);
  std::uint64_t x = 0x9E3779B97F4A7C15ull * (seed + 1u);
  for (auto& b : e.original) {
    x ^= x << 13, x ^= x >> 7, x ^= x << 17;
    b = static_cast<std::uint8_t>(x >> 8);
  }
  const fs::path dir = work_root() / "encode";
  fs::remove_all(dir);
  fs::create_directories(dir / "s");
  write_file(dir / "f", e.original);
  FUZZ_CHECK(run(run_encode, {"encode", (dir / "f").string(), "-k", std::to_string(k), "-m", std::to_string(m),
                              "--matrix", vandermonde ? "vandermonde" : "cauchy", "-o", (dir / "s").string(), "-q",
                              "--backend", "cpu"}) == kExitOk);
  e.manifest_json = *read_regular(dir / "s" / "f.manifest.json");
  e.manifest = Manifest::load(dir / "s" / "f.manifest.json");
  for (const auto& shard : e.manifest.shards) e.shards.push_back(*read_regular(dir / "s" / shard.file));
  return cache.emplace(key, std::move(e)).first->second;
}

}  // namespace

NCAST_FUZZ_TARGET(rs_shards) {
  ncast::fuzz::Input in(data, size);
  const std::size_t k = 1 + in.u8() % 6, m = 1 + in.u8() % 4, n = k + m;
  const std::size_t file_size = in.u16() % 2000;
  const bool vandermonde = in.flag();
  const Encoded& e = encoded(k, m, file_size, vandermonde, in.u8());
  const Bytes& original = e.original;
  const std::vector<Bytes>& shards = e.shards;
  const Manifest& manifest = e.manifest;

  const fs::path dir = work_root() / "d", s = dir / "s", manifest_path = s / "f.manifest.json";
  fs::remove_all(dir);
  fs::create_directories(s);
  for (std::size_t i = 0; i < n; ++i) write_file(s / manifest.shards[i].file, shards[i]);
  write_file(manifest_path, e.manifest_json);
  // The original beside the shards, where encode without -o leaves them.
  write_file(s / "f", original);

  Manifest edited = manifest;
  bool honest = true;  // the manifest is the one encode wrote
  const auto shard = [&](std::uint8_t b) { return s / manifest.shards[b % n].file; };
  for (int ops = in.u8() % 6; ops > 0 && !in.empty(); --ops) {
    const std::uint8_t op = in.u8(), a = in.u8(), b = in.u8();
    const std::uint16_t at = in.u16();
    std::error_code ec;
    switch (op % 13) {
      case 0: fs::remove(shard(a), ec); break;
      case 1: fs::resize_file(shard(a), at % (manifest.shard_size + 1), ec); break;
      case 2: {
        auto bytes = read_regular(shard(a));
        if (!bytes) break;
        bytes->insert(bytes->end(), 1 + at % 16, b);
        write_file(shard(a), *bytes);
        break;
      }
      case 3: {
        auto bytes = read_regular(shard(a));
        if (!bytes || bytes->empty()) break;
        (*bytes)[at % bytes->size()] ^= static_cast<std::uint8_t>(1 << (b % 8));
        write_file(shard(a), *bytes);
        break;
      }
      case 4:  // swapped
        fs::rename(shard(a), s / "swap", ec);
        fs::rename(shard(b), shard(a), ec);
        fs::rename(s / "swap", shard(b), ec);
        break;
      case 5: fs::copy_file(shard(a), shard(b), fs::copy_options::overwrite_existing, ec); break;  // duplicated
      case 6:
        fs::remove(shard(a), ec);
        fs::create_directory(shard(a), ec);
        break;
      case 7:
        fs::remove(shard(a), ec);
        fs::create_symlink(manifest.shards[b % n].file, shard(a), ec);
        break;
      case 8:  // an entry naming another shard's file, the manifest, or the original
        honest = false;
        edited.shards[a % n].file = b % 3 == 0 ? manifest.shards[b % n].file : b % 3 == 1 ? "f.manifest.json" : "f";
        break;
      case 9:
        honest = false;
        edited.shards[a % n].sha256 = manifest.shards[b % n].sha256;
        break;
      case 10:
        honest = false;
        edited.matrix = edited.matrix == ncast::rs::MatrixKind::cauchy ? ncast::rs::MatrixKind::vandermonde
                                                                       : ncast::rs::MatrixKind::cauchy;
        break;
      case 11:
        honest = false;
        edited.file_sha256 = manifest.shards[b % n].sha256;
        break;
      case 12: {  // k and m traded, sizes kept consistent
        honest = false;
        if (edited.k + edited.m != n || at % 2 == 0) break;
        const std::size_t k2 = 1 + a % (n - 1);
        edited.k = k2;
        edited.m = n - k2;
        edited.shard_size = Manifest::shard_size_for(edited.file_size, k2);
        break;
      }
    }
  }
  if (!honest) {
    const std::string json = edited.to_json();
    write_file(manifest_path, Bytes(json.begin(), json.end()));
  }

  // Intact, as the manifest the tool reads tells it: the file that manifest names for shard i is
  // regular with the shard size and SHA-256 it gives, and the name is not a symbolic link to the file
  // another shard's name reaches (replacing that file would change what the link shows). With the
  // manifest as encode wrote it, these are exactly the shards that hold their own bytes. A damaged
  // shard that is a directory blocks a repair (which must not replace a directory).
  std::vector<std::optional<Bytes>> intact(n);  // the bytes of each intact shard
  std::size_t intact_count = 0;
  bool blocked = false;
  for (std::size_t i = 0; i < n; ++i) {
    const fs::path p = s / edited.shards[i].file;
    auto bytes = read_regular(p);
    bool ok = bytes && bytes->size() == edited.shard_size && sha256_hex(*bytes) == edited.shards[i].sha256;
    std::error_code ec;
    for (std::size_t j = 0; ok && fs::is_symlink(fs::symlink_status(p)) && j < n; ++j)
      ok = j == i || !fs::equivalent(p, s / edited.shards[j].file, ec);
    if (ok) intact[i] = std::move(bytes);
    intact_count += ok;
    blocked |= !ok && fs::is_directory(fs::symlink_status(p));
  }
  const auto before = snapshot(s);

  const fs::path out = dir / "out";
  const int command = in.u8() % 3;
  int code = -1;
  if (command == 0) {
    code = run(run_decode, {"decode", manifest_path.string(), "-o", out.string(), "-q", "--backend", "cpu"});
    if (code == kExitOk) {
      const auto written = read_regular(out);
      FUZZ_CHECK(written && written->size() == edited.file_size && sha256_hex(*written) == edited.file_sha256);
      if (honest) FUZZ_CHECK(*written == original);
    } else {
      FUZZ_CHECK(!fs::exists(fs::symlink_status(out)));
    }
    FUZZ_CHECK(!has_temporaries(dir));
    if (honest) FUZZ_CHECK((code == kExitOk) == (intact_count >= k));
    FUZZ_CHECK(snapshot(s) == before);
  } else if (command == 1) {
    code = run(run_verify, {"verify", manifest_path.string(), "-q"});
    if (honest) FUZZ_CHECK(code == (intact_count == n ? kExitOk : intact_count >= k ? kExitDamaged : kExitFailure));
    FUZZ_CHECK(snapshot(s) == before);
  } else {
    code = run(run_repair, {"repair", manifest_path.string(), "-q", "--backend", "cpu"});
    if (honest) {
      FUZZ_CHECK((code == kExitOk) == (intact_count >= k && !blocked));
      if (code == kExitOk)
        for (std::size_t i = 0; i < n; ++i) FUZZ_CHECK(read_regular(s / manifest.shards[i].file) == shards[i]);
    }
    if (code != kExitOk) FUZZ_CHECK(snapshot(s) == before);
  }
  FUZZ_CHECK(!has_temporaries(s));
  FUZZ_CHECK(read_regular(s / "f") == original);
  FUZZ_CHECK(read_regular(manifest_path) == before.at("f.manifest.json"));
  for (std::size_t i = 0; i < n; ++i)
    if (intact[i]) FUZZ_CHECK(read_regular(s / edited.shards[i].file) == intact[i]);
  return 0;
}
