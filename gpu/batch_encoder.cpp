#include "gpu/batch_encoder.hpp"

#include <algorithm>
#include <stdexcept>
#include <string>
#include <unordered_map>
#include <unordered_set>

#include "gpu/cuda_check.hpp"
#include "gpu/device_memory.hpp"
#include "gpu/rlnc_coefficients.hpp"

namespace ncast::gpu {
namespace {

constexpr std::size_t kLanesPerDevice = 2;
constexpr std::size_t kMaxChunk = 4096;                           // requests per launch
constexpr std::size_t kChunkOutputBytes = std::size_t{64} << 20;  // device staging of one lane's payloads

}  // namespace

struct BatchEncoder::Lane {
  Stream stream;
  PinnedBuffer host_requests;
  DeviceBuffer device_requests;
  DeviceMatrix coefs, outputs;
  ProductBatch batch;

  void reserve(std::size_t rows, std::size_t len) {
    if (host_requests.size() < rows * sizeof(CoefficientRequest)) {
      host_requests = PinnedBuffer(rows * sizeof(CoefficientRequest), "batch encoder requests");
      device_requests = DeviceBuffer(rows * sizeof(CoefficientRequest), "batch encoder requests");
    }
    if (coefs.rows() < rows) coefs = DeviceMatrix(rows, kVectorStride, "batch encoder coefficients");
    if (outputs.rows() < rows || outputs.cols() < len) outputs = DeviceMatrix(rows, len, "batch encoder payloads");
  }
};

BatchEncoder::BatchEncoder(SegmentStore& store, const rlnc::EncoderOptions& options, Kernel kernel)
    : store_(store), options_(options), kernel_(kernel) {}

BatchEncoder::~BatchEncoder() = default;

void BatchEncoder::encode(std::span<const EncodeRequest> requests, std::uint8_t* out, std::size_t slot,
                          std::uint8_t* coefficients) {
  // One store lookup per distinct segment (requests mostly come in runs of one segment); the held
  // pointers keep every segment alive for this call even if another thread evicts it meanwhile.
  Segments segments(requests.size());
  std::unordered_map<SegmentKey, std::shared_ptr<const ResidentSegment>, SegmentKeyHash> held;
  std::map<int, std::vector<std::size_t>> by_device;
  std::size_t max_len = 0;
  for (std::size_t r = 0; r < requests.size(); ++r) {
    const auto& key = requests[r].segment;
    if (r > 0 && key == requests[r - 1].segment) {
      segments[r] = segments[r - 1];
    } else {
      auto& resident = held[key];
      if (!resident) resident = store_.find(key);
      if (!resident)
        throw std::out_of_range("batch encoder: segment " + std::to_string(key.segment) + " of stream " +
                                std::to_string(key.stream) + " is not resident");
      segments[r] = resident.get();
      const std::size_t len = segments[r]->layout.symbol_size();
      if (slot < len)
        throw std::invalid_argument("batch encoder: slot of " + std::to_string(slot) +
                                    " bytes is smaller than a symbol of " + std::to_string(len));
      max_len = std::max(max_len, len);
    }
    by_device[segments[r]->device].push_back(r);
  }
  if (requests.empty()) return;

  const std::size_t chunk_rows = std::clamp<std::size_t>(kChunkOutputBytes / max_len, 1, kMaxChunk);
  std::vector<Lane*> used;
  try {
    for (auto& [device, indices] : by_device) {
      DeviceGuard guard(device);
      auto& lanes = lanes_[device];
      while (lanes.size() < kLanesPerDevice) lanes.push_back(std::make_unique<Lane>());
      std::size_t c = 0;
      for (std::size_t first = 0; first < indices.size(); first += chunk_rows, ++c) {
        Lane& lane = *lanes[c % kLanesPerDevice];
        lane.stream.synchronize("waiting for a lane of the batch encoder");  // its staging is free again
        lane.reserve(chunk_rows, max_len);
        const std::size_t count = std::min(chunk_rows, indices.size() - first);
        run_chunk(lane, std::span(indices).subspan(first, count), requests, segments, out, slot, coefficients);
        used.push_back(&lane);
      }
    }
    for (Lane* lane : used) lane->stream.synchronize("finishing a batch encode");
  } catch (...) {
    for (Lane* lane : used) cudaStreamSynchronize(lane->stream.get());
    throw;
  }
}

void BatchEncoder::run_chunk(Lane& lane, std::span<const std::size_t> chunk, std::span<const EncodeRequest> requests,
                             const Segments& segments, std::uint8_t* out, std::size_t slot,
                             std::uint8_t* coefficients) {
  // Requests of one segment become consecutive rows (one product each), in their order.
  std::vector<std::size_t> order(chunk.begin(), chunk.end());
  std::unordered_set<const ResidentSegment*> seen;
  bool grouped = true;
  for (std::size_t p = 0; p < order.size() && grouped; ++p)
    if (p == 0 || segments[order[p]] != segments[order[p - 1]]) grouped = seen.insert(segments[order[p]]).second;
  if (!grouped)
    std::stable_sort(order.begin(), order.end(),
                     [&](std::size_t a, std::size_t b) { return segments[a] < segments[b]; });

  auto* host = reinterpret_cast<CoefficientRequest*>(lane.host_requests.get());
  for (std::size_t p = 0; p < order.size(); ++p) {
    const ResidentSegment& seg = *segments[order[p]];
    const std::uint32_t id = requests[order[p]].id, n = static_cast<std::uint32_t>(seg.layout.n());
    host[p] = {seg.seeds.seed,
               seg.seeds.segment,
               id,
               n,
               options_.density.threshold(),
               options_.systematic && id < n ? 1u : 0u};
  }
  const cudaStream_t s = lane.stream.get();
  check(cudaMemcpyAsync(lane.device_requests.get(), host, order.size() * sizeof(CoefficientRequest),
                        cudaMemcpyHostToDevice, s),
        "copying batch encoder requests");
  draw_coefficients(reinterpret_cast<const CoefficientRequest*>(lane.device_requests.get()), order.size(),
                    kVectorStride, lane.coefs.ref(), s);

  lane.batch.clear();
  const DeviceMatrixRef coefs = lane.coefs.ref(), outputs = lane.outputs.ref();
  for (std::size_t p0 = 0, p1; p0 < order.size(); p0 = p1) {
    const ResidentSegment& seg = *segments[order[p0]];
    for (p1 = p0 + 1; p1 < order.size() && segments[order[p1]] == &seg;) ++p1;
    const std::size_t n = seg.layout.n(), len = seg.layout.symbol_size();
    lane.batch.add({ConstDeviceMatrixRef(coefs.row(p0), p1 - p0, n, coefs.pitch), seg.symbols.cref(),
                    DeviceMatrixRef{outputs.row(p0), p1 - p0, len, outputs.pitch}});
  }
  lane.batch.multiply(kernel_, false, s);

  // Back to the caller's slots: one 2D copy per run of rows that are consecutive there too.
  for (std::size_t p0 = 0, p1; p0 < order.size(); p0 = p1) {
    const ResidentSegment& seg = *segments[order[p0]];
    for (p1 = p0 + 1; p1 < order.size() && segments[order[p1]] == &seg && order[p1] == order[p1 - 1] + 1;) ++p1;
    check(cudaMemcpy2DAsync(out + order[p0] * slot, slot, outputs.row(p0), outputs.pitch, seg.layout.symbol_size(),
                            p1 - p0, cudaMemcpyDeviceToHost, s),
          "copying coded payloads to the host");
    if (coefficients)
      check(cudaMemcpy2DAsync(coefficients + order[p0] * kVectorStride, kVectorStride, coefs.row(p0), coefs.pitch,
                              seg.layout.n(), p1 - p0, cudaMemcpyDeviceToHost, s),
            "copying coefficient vectors to the host");
  }
}

}  // namespace ncast::gpu
