#include "coding/rlnc/generation.hpp"

#include <algorithm>
#include <string>

#include "coding/rlnc/error.hpp"

namespace ncast::rlnc {

GenerationLayout::GenerationLayout(std::size_t n, std::size_t symbol_size, std::size_t data_bytes)
    : n_(n), symbol_size_(symbol_size), data_bytes_(data_bytes) {
  if (n < 1 || n > kMaxSymbols)
    throw Error(Errc::bad_layout, "generation size n=" + std::to_string(n) + " is not in 1..256");
  if (symbol_size < 1 || symbol_size > kMaxSymbolSize)
    throw Error(Errc::bad_layout, "symbol size " + std::to_string(symbol_size) + " is not in 1..65536 bytes");
  if (data_bytes < 1 || data_bytes > n * symbol_size)
    throw Error(Errc::bad_layout, "data length " + std::to_string(data_bytes) + " is not in 1.." +
                                      std::to_string(n * symbol_size) + " bytes for n=" + std::to_string(n) +
                                      ", symbol size " + std::to_string(symbol_size));
}

GenerationLayout GenerationLayout::for_data(std::size_t data_bytes, std::size_t symbol_size) {
  if (symbol_size < 1 || symbol_size > kMaxSymbolSize)
    throw Error(Errc::bad_layout, "symbol size " + std::to_string(symbol_size) + " is not in 1..65536 bytes");
  if (data_bytes < 1) throw Error(Errc::bad_layout, "a generation needs at least one byte of data");
  const std::size_t n = (data_bytes + symbol_size - 1) / symbol_size;
  if (n > kMaxSymbols)
    throw Error(Errc::bad_layout, std::to_string(data_bytes) + " bytes need " + std::to_string(n) + " symbols of " +
                                      std::to_string(symbol_size) + " bytes, more than 256");
  return {n, symbol_size, data_bytes};
}

std::vector<GenerationSlice> split_object(std::size_t object_bytes, std::size_t n, std::size_t symbol_size) {
  const GenerationLayout full(n, symbol_size, n * symbol_size);  // validates n and symbol_size
  std::vector<GenerationSlice> slices;
  for (std::size_t offset = 0; offset < object_bytes; offset += full.block_bytes()) {
    const std::size_t bytes = std::min(full.block_bytes(), object_bytes - offset);
    slices.push_back({offset, bytes == full.block_bytes() ? full : GenerationLayout::for_data(bytes, symbol_size)});
  }
  return slices;
}

SourceBlock::SourceBlock(const GenerationLayout& layout, std::span<const std::uint8_t> data)
    : layout_(layout), bytes_(layout.block_bytes(), 0) {
  if (data.size() != layout.data_bytes())
    throw Error(Errc::wrong_payload_length, "source data is " + std::to_string(data.size()) +
                                                " bytes, the generation holds " + std::to_string(layout.data_bytes()));
  std::copy(data.begin(), data.end(), bytes_.begin());
}

}  // namespace ncast::rlnc
