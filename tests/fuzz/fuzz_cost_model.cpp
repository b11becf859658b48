// libFuzzer target over the cost model's arithmetic (lib/scheduling/cost: comm_volume.h,
// collective_time.h, collective_flows.h): cost::check, communication_volume and iteration_comm_time on
// numbers decoded from the input, over the whole 32/64-bit range of every field, not only the documented
// request ranges (the library must be safe for any input; the REST layer narrows them further).
//
// Input layout: a sequence of field records, read in the order of the fields below; a missing record
// (input too short) leaves the field at 0 (or the library default for dtype_bytes, virtual_stages ...).
// Each record is one mode byte and then, depending on the mode (mode byte modulo 5):
//   0  raw: 8 bytes, little-endian, truncated to the field's width (any value, including 0 and 2^32 - 1)
//   1  power of two: 1 byte e, the value 2^(e mod (width + 1)) truncated to the width (2^width gives 0)
//   2  small: 1 byte, the value itself (0..255)
//   3  near the documented maximum: 1 byte d, the value max - 2 + (d mod 5) (max - 2 .. max + 2)
//   4  near a power of two: 1 byte e, 2^(e mod width) - 1 + (e / width mod 3)
// Fields, in order: model parameters, layers, hidden, heads, kv_heads, seq_len, micro_batch, global_batch,
// dtype_bytes, moe_experts, moe_top_k; parallel tp, pp, dp, cp, ep, virtual_stages, zero_stage (signed,
// low bits), sequence_parallel (bit 0); then one byte per dimension choosing its span (tier and
// ranks_per_host), then the algorithm byte.
//
// Invariants (a violation is __builtin_trap()): check() and validate() agree; an error names a field that
// starts its message; communication_volume succeeds exactly when check() does; every operation has a group
// of >= 2 ranks and positive bytes and count; automatic collective time always succeeds; every time is
// finite and non-negative. The sanitizers (address, undefined without recovery) catch the rest: a wrapped
// product used as a divisor is a SIGFPE, an over-wide shift a UBSan report.
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <string>

#include "scheduling/cost/collective_flows.h"
#include "scheduling/cost/collective_time.h"
#include "scheduling/cost/comm_volume.h"

namespace {

namespace cost = hsns::cost;

void require(bool ok) {
  if (!ok) __builtin_trap();
}

class Decoder {
 public:
  Decoder(const std::uint8_t* data, std::size_t size) : data_(data), size_(size) {}

  // One field of `width` bits whose documented maximum is `max`; `fallback` when the input is used up.
  std::uint64_t field(unsigned width, std::uint64_t max, std::uint64_t fallback) {
    if (pos_ >= size_) return fallback;
    const std::uint8_t mode = data_[pos_++] % 5;
    const std::uint64_t mask = width >= 64 ? ~std::uint64_t{0} : (std::uint64_t{1} << width) - 1;
    if (mode == 0) {
      std::uint64_t v = 0;
      for (int i = 0; i < 8 && pos_ < size_; ++i) v |= std::uint64_t{data_[pos_++]} << (8 * i);
      return v & mask;
    }
    const std::uint8_t b = byte();
    switch (mode) {
      case 1: {
        const unsigned e = b % (width + 1);
        return e >= 64 ? 0 : (std::uint64_t{1} << e) & mask;
      }
      case 2:
        return b;
      case 3: {
        const std::uint64_t up = max + b % 5;  // max <= 2^50: no wrap
        return (up >= 2 ? up - 2 : 0) & mask;
      }
      default: {
        const unsigned e = b % width;
        return ((std::uint64_t{1} << e) - 1 + (b / width) % 3) & mask;
      }
    }
  }
  std::uint8_t byte() { return pos_ < size_ ? data_[pos_++] : 0; }

 private:
  const std::uint8_t* data_;
  std::size_t size_;
  std::size_t pos_ = 0;
};

std::uint32_t u32(Decoder& d, std::uint64_t max, std::uint32_t fallback) {
  return static_cast<std::uint32_t>(d.field(32, max, fallback));
}

bool finite_non_negative(double v) {
  return std::isfinite(v) && v >= 0;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  Decoder d(data, size);
  cost::ModelSpec m;
  m.parameters = d.field(64, cost::kMaxParameters, 1'000'000'000);
  m.layers = u32(d, cost::kMaxLayers, 8);
  m.hidden = u32(d, cost::kMaxHidden, 2048);
  m.heads = u32(d, cost::kMaxHidden, 16);
  m.kv_heads = u32(d, cost::kMaxHidden, 0);
  m.seq_len = u32(d, cost::kMaxSeqLen, 2048);
  m.micro_batch = u32(d, cost::kMaxSeqLen, 1);
  m.global_batch = u32(d, cost::kMaxGlobalBatch, 64);
  m.dtype_bytes = u32(d, 8, 2);
  m.moe_experts = u32(d, cost::kMaxExperts, 0);
  m.moe_top_k = u32(d, cost::kMaxTopK, 0);
  cost::ParallelSpec p;
  p.tp = u32(d, cost::kMaxParallelSize, 1);
  p.pp = u32(d, cost::kMaxParallelSize, 1);
  p.dp = u32(d, cost::kMaxParallelSize, 1);
  p.cp = u32(d, cost::kMaxParallelSize, 1);
  p.ep = u32(d, cost::kMaxParallelSize, 1);
  p.virtual_stages = u32(d, cost::kMaxParallelSize, 1);
  p.zero_stage = static_cast<int>(static_cast<std::int8_t>(d.field(8, 3, 0)));
  p.sequence_parallel = (d.field(1, 1, 0) & 1) != 0;

  auto checked = cost::check(m, p);
  auto validated = cost::validate(m, p);
  require(checked.has_value() == validated.has_value());
  auto volume = cost::communication_volume(m, p);
  if (!checked) {
    const auto& e = checked.error();
    require(!e.field().empty() && e.detail.rfind(e.field(), 0) == 0);
    require(validated.error() == e.detail);
    require(!volume);
    return 0;
  }
  require(volume.has_value());
  require(volume->micro_batches >= 1);
  require(volume->params_per_rank <= m.parameters);
  for (const auto& op : volume->ops) {
    require(op.group_size >= 2 && op.bytes > 0 && op.count > 0);
    require(finite_non_negative(op.total_bytes()));
  }

  // Spans: tier from the low bits, ranks per host 1 or (when it divides every group of the dimension) the
  // dimension's smallest group size.
  const cost::Calibration cal{{cost::Tier{"host", 2.0, 1600, 1}, cost::Tier{"leaf", 5.0, 400, 1},
                               cost::Tier{"spine", 8.0, 400, 2}, cost::Tier{"core", 10.0, 400, 4}}};
  cost::DimensionSpans spans{};
  for (std::size_t dim = 0; dim < spans.size(); ++dim) {
    const std::uint8_t b = d.byte();
    spans[dim].tier = b % cal.tiers.size();
    std::uint32_t smallest = 0;
    bool divides = true;
    for (const auto& op : volume->ops) {
      if (static_cast<std::size_t>(op.dim) != dim) continue;
      if (smallest == 0 || op.group_size < smallest) smallest = op.group_size;
    }
    for (const auto& op : volume->ops) {
      if (static_cast<std::size_t>(op.dim) == dim && smallest != 0)
        divides = divides && op.group_size % smallest == 0;
    }
    spans[dim].ranks_per_host = (b & 0x80) != 0 && smallest != 0 && divides ? smallest : 1;
  }
  const auto algorithm = static_cast<cost::Algorithm>(d.byte() % 5);
  for (auto a : {cost::Algorithm::automatic, algorithm}) {
    auto t = cost::iteration_comm_time(*volume, spans, cal, a);
    if (!t) {
      require(a == cost::Algorithm::tree || a == cost::Algorithm::hierarchical);
      continue;
    }
    require(finite_non_negative(t->total_seconds));
    for (double s : t->per_dimension_seconds) require(finite_non_negative(s));
  }

  // The DP all-reduce as phases, where the route plan would build them: bounded before allocation.
  for (const auto& op : volume->ops) {
    if (op.dim != cost::Dimension::dp) continue;
    const bool fits = cost::ring_all_reduce_transfers(op.group_size) <= cost::kMaxCollectiveTransfers;
    if (fits && op.group_size > 256) break;  // valid, but slow to build under the sanitizers
    auto phases = cost::ring_all_reduce_phases(op.group_size, static_cast<double>(op.bytes));
    require(phases.has_value() == fits);
    break;
  }
  return 0;
}
