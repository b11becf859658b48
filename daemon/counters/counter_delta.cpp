#include "counter_delta.h"

#include <array>
#include <limits>

#include "hsns/checked_math.h"

namespace hsns::daemon::counters {

Delta counter_delta(std::uint64_t previous, std::uint64_t current, unsigned width_bits) {
  if (current >= previous) return {current - previous, Change::increase};
  const bool narrow = width_bits < 64;
  const std::uint64_t max =
      narrow ? (std::uint64_t{1} << width_bits) - 1 : std::numeric_limits<std::uint64_t>::max();
  const std::uint64_t quarter = max / 4 + 1;  // 2^(width-2)
  if (previous <= max && previous >= max - quarter + 1 && current < quarter) {
    // (max - previous) + current + 1 == 2^width - previous + current, without leaving 64 bits.
    return {(max - previous) + current + 1, Change::wrap};
  }
  return {current, Change::reset};
}

unsigned counter_width(std::string_view name) {
  // PortCounters (IBA 16.1.3.5): 32-bit data, packet and wait counters; PortCountersExtended widens them.
  static constexpr std::array<std::string_view, 5> kNarrow = {
      "port_xmit_data", "port_rcv_data", "port_xmit_packets", "port_rcv_packets", "port_xmit_wait"};
  for (const auto n : kNarrow)
    if (n == name) return 32;
  return 64;
}

proto::CounterSample DeltaTracker::update(const std::string& key, std::uint64_t raw, unsigned width,
                                          std::uint64_t scale, double interval_s) {
  proto::CounterSample s;
  s.value = saturating_mul(raw, scale);
  auto [it, inserted] = states_.try_emplace(key);
  State& st = it->second;
  last_first_ = inserted;
  if (!inserted) {
    const unsigned effective = st.wide ? 64 : width;
    const auto d = counter_delta(st.raw, raw, effective);
    if (d.change == Change::reset) ++resets_;
    if (d.change == Change::wrap) ++wraps_;
    s.delta = saturating_mul(d.delta, scale);
    if (interval_s > 0) s.rate = static_cast<double>(s.delta) / interval_s;
  }
  st.raw = raw;
  st.wide = st.wide || raw > std::numeric_limits<std::uint32_t>::max();
  st.seen = true;
  return s;
}

void DeltaTracker::forget_unseen() {
  for (auto it = states_.begin(); it != states_.end();) {
    if (!it->second.seen) {
      it = states_.erase(it);
    } else {
      it->second.seen = false;
      ++it;
    }
  }
}

}  // namespace hsns::daemon::counters
