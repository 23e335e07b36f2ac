#pragma once
// A generation: the unit RLNC codes over. n source symbols of L bytes each hold one piece of an
// object (a media segment); the last symbol is zero-padded and the true length is kept, so the
// decoder gives back exactly the bytes that went in.
#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

namespace ncast::rlnc {

inline constexpr std::size_t kMaxSymbols = 256;
inline constexpr std::size_t kMaxSymbolSize = 65536;

class GenerationLayout {
 public:
  // n symbols (1..256) of symbol_size bytes (1..65536) carrying data_bytes (1..n·symbol_size) bytes.
  // Throws Error(bad_layout) naming the bad value.
  GenerationLayout(std::size_t n, std::size_t symbol_size, std::size_t data_bytes);
  // The fewest symbols of symbol_size bytes that hold data_bytes; throws when that is more than 256.
  static GenerationLayout for_data(std::size_t data_bytes, std::size_t symbol_size);

  std::size_t n() const { return n_; }
  std::size_t symbol_size() const { return symbol_size_; }
  std::size_t data_bytes() const { return data_bytes_; }
  std::size_t block_bytes() const { return n_ * symbol_size_; }
  bool operator==(const GenerationLayout&) const = default;

 private:
  std::size_t n_, symbol_size_, data_bytes_;
};

// One generation of an object cut into several: its bytes start at offset.
struct GenerationSlice {
  std::size_t offset;
  GenerationLayout layout;
};

// Cuts object_bytes into generations of n symbols of symbol_size bytes, all full except the last,
// which has as few symbols as its bytes need. An empty object has no generations.
std::vector<GenerationSlice> split_object(std::size_t object_bytes, std::size_t n, std::size_t symbol_size);

// A generation's source block, owned: n·L bytes, symbol i at offset i·L, the data then zero padding.
class SourceBlock {
 public:
  // data must be exactly layout.data_bytes() long (Error(wrong_payload_length) otherwise).
  SourceBlock(const GenerationLayout& layout, std::span<const std::uint8_t> data);

  const GenerationLayout& layout() const { return layout_; }
  std::span<const std::uint8_t> bytes() const { return bytes_; }
  const std::uint8_t* symbol(std::size_t i) const { return bytes_.data() + i * layout_.symbol_size(); }

 private:
  GenerationLayout layout_;
  std::vector<std::uint8_t> bytes_;
};

}  // namespace ncast::rlnc
