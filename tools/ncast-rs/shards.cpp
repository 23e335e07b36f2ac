#include "tools/ncast-rs/shards.hpp"

#include <sys/stat.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <exception>
#include <mutex>
#include <optional>
#include <thread>
#include <utility>

#include "tools/ncast-rs/files.hpp"
#include "tools/ncast-rs/interrupt.hpp"
#include "tools/ncast-rs/sha256.hpp"

namespace ncast::tools {

std::string_view to_string(ShardStatus status) {
  switch (status) {
    case ShardStatus::unchecked: return "unchecked";
    case ShardStatus::ok: return "ok";
    case ShardStatus::missing: return "missing";
    case ShardStatus::corrupt: return "corrupt";
  }
  return "unknown";
}

std::vector<ShardReport> stat_shards(const Manifest& manifest, const fs::path& dir) {
  std::vector<ShardReport> reports(manifest.shards.size());
  std::vector<std::optional<std::pair<dev_t, ino_t>>> files(reports.size());
  for (std::size_t i = 0; i < reports.size(); ++i) {
    const fs::path path = dir / manifest.shards[i].file;
    struct stat st;
    if (::stat(path.c_str(), &st) != 0) {
      reports[i] = {ShardStatus::missing, errno == ENOENT ? "" : std::strerror(errno)};
      continue;
    }
    files[i].emplace(st.st_dev, st.st_ino);
    if (!S_ISREG(st.st_mode)) {
      reports[i] = {ShardStatus::corrupt, "not a regular file"};
    } else if (static_cast<std::uint64_t>(st.st_size) != manifest.shard_size) {
      reports[i] = {ShardStatus::corrupt,
                    "size " + std::to_string(st.st_size) + ", expected " + std::to_string(manifest.shard_size)};
    }
  }
  // A shard's name that is a symbolic link to the file another shard's name reaches shows whatever a
  // repair later puts there, not its own bytes: however right it reads now, it counts as damaged, so
  // that repair replaces the link itself with a file of its own.
  for (std::size_t i = 0; i < reports.size(); ++i) {
    if (reports[i].status != ShardStatus::unchecked) continue;
    struct stat own;
    if (::lstat((dir / manifest.shards[i].file).c_str(), &own) != 0 || !S_ISLNK(own.st_mode)) continue;
    for (std::size_t j = 0; j < reports.size(); ++j)
      if (j != i && files[j] == files[i]) {
        reports[i] = {ShardStatus::corrupt, "a symbolic link to the same file as " + manifest.shards[j].file};
        break;
      }
  }
  return reports;
}

std::vector<ShardReport> check_shards(const Manifest& manifest, const fs::path& dir, bool show_progress,
                                      std::uint64_t* bytes_hashed) {
  std::vector<ShardReport> reports = stat_shards(manifest, dir);
  std::vector<std::size_t> todo;
  for (std::size_t i = 0; i < reports.size(); ++i)
    if (reports[i].status == ShardStatus::unchecked) todo.push_back(i);

  Progress progress("check", manifest.shard_size * todo.size(), show_progress);
  std::atomic<std::size_t> next{0}, finished{0};
  std::atomic<std::uint64_t> hashed{0};
  std::atomic<bool> failed{false};
  std::exception_ptr error;
  std::mutex error_mutex;
  const auto worker = [&] {
    try {
      for (std::size_t t; !failed && (t = next++) < todo.size();) {
        const std::size_t i = todo[t];
        try {
          const File file = File::open_read(dir / manifest.shards[i].file);
          reports[i] = sha256_of(file, [&](std::size_t n) { hashed += n; }) == manifest.shards[i].sha256
                           ? ShardReport{ShardStatus::ok, ""}
                           : ShardReport{ShardStatus::corrupt, "checksum mismatch"};
        } catch (const IoError& e) {
          reports[i] = {ShardStatus::missing, std::string("unreadable: ") + e.what()};
        }
      }
    } catch (...) {
      std::lock_guard lock(error_mutex);
      if (!error) error = std::current_exception();
      failed = true;
    }
    ++finished;
  };
  // A thread pays for itself only with megabytes to hash: a small set is hashed right here.
  constexpr std::uint64_t bytes_per_thread = 4 << 20;
  const std::size_t threads = std::min<std::size_t>(
      {std::max(1u, std::thread::hardware_concurrency()), todo.size(),
       static_cast<std::size_t>(std::max<std::uint64_t>(1, manifest.shard_size * todo.size() / bytes_per_thread))});
  if (threads <= 1) {
    worker();
  } else {
    std::vector<std::thread> pool;
    for (std::size_t t = 0; t < threads; ++t) pool.emplace_back(worker);
    while (show_progress && finished < threads) {  // without a bar to redraw, just wait for the workers
      progress.update(hashed);
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
    for (auto& th : pool) th.join();
  }
  progress.finish();
  if (error) std::rethrow_exception(error);
  if (bytes_hashed) *bytes_hashed += hashed;
  return reports;
}

std::size_t slice_bytes_for(const rs::Codec& codec, std::uint64_t shard_size) {
  return static_cast<std::size_t>(
      std::clamp<std::uint64_t>(shard_size, 1, rs::StreamCoder::default_slice_bytes(codec.total_shards())));
}

std::vector<std::size_t> usable_shards(const std::vector<ShardReport>& reports) {
  std::vector<std::size_t> usable;
  for (std::size_t i = 0; i < reports.size(); ++i)
    if (reports[i].status == ShardStatus::ok || reports[i].status == ShardStatus::unchecked) usable.push_back(i);
  return usable;
}

std::string describe_damage(const Manifest& manifest, const std::vector<ShardReport>& reports) {
  std::string s;
  for (std::size_t i = 0; i < reports.size(); ++i) {
    if (reports[i].status != ShardStatus::missing && reports[i].status != ShardStatus::corrupt) continue;
    s += (s.empty() ? "" : ", ") + manifest.shards[i].file + " " + std::string(to_string(reports[i].status));
    if (!reports[i].detail.empty()) s += " (" + reports[i].detail + ")";
  }
  return s;
}

std::vector<std::size_t> stream_survivors(const rs::Codec& codec, const Manifest& manifest, const fs::path& dir,
                                          const std::vector<std::size_t>& erased,
                                          const std::vector<std::size_t>& wanted, const rs::SliceFn& sink,
                                          Progress& progress) {
  const rs::ShardSet sources = codec.sources_for(erased);
  std::vector<std::optional<File>> files(codec.total_shards());
  std::vector<std::optional<Sha256>> digests(codec.total_shards());
  for (std::size_t i = 0; i < codec.total_shards(); ++i)
    if (sources.test(i)) {
      files[i].emplace(File::open_read(dir / manifest.shards[i].file));
      digests[i].emplace();
    }

  rs::StreamCoder stream(codec, slice_bytes_for(codec, manifest.shard_size));
  const auto read = [&](const rs::Slice& s) {
    check_interrupted();
    for (std::size_t i = 0; i < codec.total_shards(); ++i)
      if (s.active.test(i)) {
        files[i]->read_exact(s.shards[i], s.len, s.offset);
        digests[i]->update(s.shards[i], s.len);
      }
  };
  const auto write = [&](const rs::Slice& s) {
    sink(s);
    const double done = static_cast<double>(s.offset + s.len) / static_cast<double>(manifest.shard_size);
    progress.update(static_cast<std::uint64_t>(done * static_cast<double>(manifest.file_size)));
  };
  stream.reconstruct(manifest.shard_size, erased, wanted, read, write);

  std::vector<std::size_t> bad;
  for (std::size_t i = 0; i < codec.total_shards(); ++i)
    if (sources.test(i) && digests[i]->hex() != manifest.shards[i].sha256) bad.push_back(i);
  return bad;
}

}  // namespace ncast::tools
