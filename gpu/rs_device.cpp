#include "gpu/rs_device.hpp"

#include <algorithm>
#include <stdexcept>
#include <string>

#include "coding/rs/matrix.hpp"
#include "gpu/cuda_check.hpp"

namespace ncast::gpu {
namespace {

constexpr std::size_t kCachedPatterns = 256;

DeviceMatrix upload(const rs::Matrix& m, const char* what) {
  DeviceMatrix d(m.rows(), m.cols(), what);
  std::vector<const std::uint8_t*> rows;
  for (std::size_t r = 0; r < m.rows(); ++r) rows.push_back(m.row(r));
  d.upload(rows.data());
  check(cudaStreamSynchronize(nullptr), what);
  return d;
}

rs::Matrix generator_of(const rs::Codec& codec) {
  const std::size_t k = codec.data_shards(), m = codec.parity_shards();
  std::vector<std::uint8_t> g((k + m) * k, 0);
  for (std::size_t i = 0; i < k; ++i) g[i * k + i] = 1;
  for (std::size_t p = 0; p < m; ++p)
    for (std::size_t j = 0; j < k; ++j) g[(k + p) * k + j] = codec.parity_matrix()(p, j);
  return rs::Matrix(k + m, k, g);
}

}  // namespace

DeviceRsCodec::DeviceRsCodec(const rs::Codec& codec, Kernel kernel)
    : k_(codec.data_shards()),
      m_(codec.parity_shards()),
      kernel_(kernel),
      generator_(generator_of(codec)),
      parity_(upload(codec.parity_matrix(), "an RS parity matrix")) {}

void DeviceRsCodec::check_stripe(const DeviceMatrixRef& stripe) const {
  if (stripe.rows != k_ + m_)
    throw std::invalid_argument("device RS: a stripe of " + std::to_string(k_) + "+" + std::to_string(m_) + " has " +
                                std::to_string(k_ + m_) + " rows, not " + std::to_string(stripe.rows));
}

void DeviceRsCodec::encode(DeviceMatrixRef stripe, cudaStream_t stream) const {
  check_stripe(stripe);
  const ConstDeviceMatrixRef data(stripe.data, k_, stripe.cols, stripe.pitch);
  multiply(kernel_, {parity_.cref(), data, {stripe.row(k_), m_, stripe.cols, stripe.pitch}}, false, stream);
}

const DeviceMatrix& DeviceRsCodec::decode_rows(const std::vector<std::size_t>& erased) {
  if (const auto it = decode_.find(erased); it != decode_.end()) return it->second;
  std::vector<std::size_t> survivors;
  for (std::size_t i = 0; i < k_ + m_ && survivors.size() < k_; ++i)
    if (!std::binary_search(erased.begin(), erased.end(), i)) survivors.push_back(i);
  const auto inverse = rs::invert(rs::select_rows(generator_, survivors));
  if (!inverse) throw rs::Unrecoverable("device RS: the surviving rows of the generator are singular");
  const rs::Matrix rows = rs::select_rows(generator_, erased) * *inverse;  // over the survivors
  std::vector<std::uint8_t> wide(erased.size() * (k_ + m_), 0);
  for (std::size_t e = 0; e < erased.size(); ++e)
    for (std::size_t j = 0; j < k_; ++j) wide[e * (k_ + m_) + survivors[j]] = rows(e, j);
  if (decode_.size() >= kCachedPatterns) decode_.clear();
  return decode_.emplace(erased, upload(rs::Matrix(erased.size(), k_ + m_, wide), "RS decode rows")).first->second;
}

void DeviceRsCodec::reconstruct(DeviceMatrixRef stripe, std::span<const std::size_t> erased_in, cudaStream_t stream) {
  check_stripe(stripe);
  std::vector<std::size_t> erased(erased_in.begin(), erased_in.end());
  std::sort(erased.begin(), erased.end());
  erased.erase(std::unique(erased.begin(), erased.end()), erased.end());
  if (!erased.empty() && erased.back() >= k_ + m_)
    throw std::invalid_argument("device RS: shard " + std::to_string(erased.back()) + " does not exist");
  if (erased.size() > m_)
    throw rs::Unrecoverable("device RS: " + std::to_string(erased.size()) + " shards erased, at most " +
                            std::to_string(m_) + " can be rebuilt");
  if (erased.empty()) return;
  const DeviceMatrix& rows = decode_rows(erased);
  // The product reads every row of the stripe (erased ones with zero coefficients), so it writes to
  // scratch and the rebuilt rows are copied into place after it.
  if (scratch_.rows() < erased.size() || scratch_.cols() < stripe.cols)
    scratch_ = DeviceMatrix(m_, stripe.cols, "rebuilt RS shards");
  const DeviceMatrixRef out{scratch_.ref().data, erased.size(), stripe.cols, scratch_.pitch()};
  multiply(kernel_, {rows.cref(), ConstDeviceMatrixRef(stripe), out}, false, stream);
  for (std::size_t e = 0; e < erased.size(); ++e)
    check(cudaMemcpyAsync(stripe.row(erased[e]), out.row(e), stripe.cols, cudaMemcpyDeviceToDevice, stream),
          "placing a rebuilt shard");
}

}  // namespace ncast::gpu
