#pragma once
// The bitrate a stream is paced at: the declared one (--bitrate) unless the media says it is higher.
// A transport stream file is measured from its PCRs (its programme clock against the octets between
// them, as ffprobe does); a live source by its arrival (BitrateMeter); other files are not measured.
#include <cstdint>
#include <filesystem>
#include <optional>
#include <span>
#include <string>

namespace ncast::server {

// bit/s from the first PCR in head (the file's start) to the last one of the same PID in tail (octets
// from tail_offset on, a multiple of 188): nullopt without such a pair at least 0.1 s apart.
std::optional<std::uint64_t> pcr_bitrate(std::span<const std::uint8_t> head, std::span<const std::uint8_t> tail,
                                         std::uint64_t tail_offset);

// The PCR bitrate of an MPEG-TS file, reading 1 MiB at each end; nullopt for other files. Throws
// std::runtime_error naming the file when it cannot be read.
std::optional<std::uint64_t> file_bitrate(const std::filesystem::path& path);

// Paced sessions follow the higher of the two (0: unknown).
std::uint64_t pacing_bitrate(std::uint64_t declared, std::uint64_t measured);

// The operator's warning when the declared bitrate (not 0) is more than 5 % below the measured one.
std::optional<std::string> bitrate_warning(const std::string& stream, std::uint64_t declared, std::uint64_t measured);

}  // namespace ncast::server
