#include "ingest/snmp_counters.h"

#include <algorithm>
#include <cstdlib>

namespace hsns::ingest {

std::optional<std::uint64_t> counter64_delta(std::uint64_t prev, std::uint64_t cur) {
  if (cur < prev) return std::nullopt;
  return cur - prev;
}

std::uint64_t counter32_delta(std::uint32_t prev, std::uint32_t cur, bool& wrapped) {
  wrapped = cur < prev;
  return static_cast<std::uint32_t>(cur - prev);  // modulo 2^32: one wrap
}

bool agent_restarted(std::uint32_t prev_cs, std::uint32_t cur_cs, std::int64_t elapsed_ms) {
  const auto advanced_cs = static_cast<std::int64_t>(static_cast<std::uint32_t>(cur_cs - prev_cs));
  const std::int64_t elapsed_cs = std::max<std::int64_t>(elapsed_ms, 0) / 10;
  const std::int64_t slack_cs = std::max<std::int64_t>(elapsed_cs / 2, 1000);
  return std::llabs(advanced_cs - elapsed_cs) > slack_cs;
}

std::string interface_entity(std::string_view device, std::uint32_t if_index, std::string_view if_name) {
  std::string entity(device);
  entity.push_back('/');
  if (if_name.empty()) return entity + "if" + std::to_string(if_index);
  for (const char c : if_name) entity.push_back(c > ' ' && c <= '~' && c != '/' ? c : '_');
  if (entity.size() > 256) entity.resize(256);
  return entity;
}

namespace {

struct Rates {
  const SnmpInterface& prev;
  const SnmpInterface& cur;
  const std::string& entity;
  std::int64_t ts_ms;
  double seconds;
  CounterEvents& events;
  std::vector<KpiSample>& out;

  void counter64(const std::optional<std::uint64_t> SnmpInterface::*field, const char* metric) {
    const auto& a = prev.*field;
    const auto& b = cur.*field;
    if (!a || !b) return;
    const auto delta = counter64_delta(*a, *b);
    if (!delta) {
      ++events.counter_resets;
      return;
    }
    out.push_back({entity, metric, ts_ms, static_cast<double>(*delta) / seconds});
  }

  void counter32(const std::optional<std::uint32_t> SnmpInterface::*field, const char* metric) {
    const auto& a = prev.*field;
    const auto& b = cur.*field;
    if (!a || !b) return;
    bool wrapped = false;
    const auto delta = counter32_delta(*a, *b, wrapped);
    if (wrapped) ++events.counter_wraps;
    out.push_back({entity, metric, ts_ms, static_cast<double>(delta) / seconds});
  }
};

}  // namespace

std::vector<KpiSample> derive_samples(std::string_view device, const SnmpPoll* prev, const SnmpPoll& cur,
                                      CounterEvents& events) {
  std::vector<KpiSample> out;
  const std::int64_t elapsed_ms = prev ? cur.steady_ms - prev->steady_ms : 0;
  bool rates = prev != nullptr && elapsed_ms > 0;
  if (rates && agent_restarted(prev->uptime_cs, cur.uptime_cs, elapsed_ms)) {
    events.agent_restart = true;
    rates = false;
  }
  const double seconds = static_cast<double>(elapsed_ms) / 1000.0;
  for (const auto& [index, now] : cur.interfaces) {
    const auto entity = interface_entity(device, index, now.name);
    if (now.oper_status)
      out.push_back({entity, kIfOperStatus, cur.ts_ms, static_cast<double>(*now.oper_status)});
    if (!rates) continue;
    const auto before = prev->interfaces.find(index);
    if (before == prev->interfaces.end() || before->second.name != now.name) continue;  // new interface
    if (before->second.discontinuity_time && now.discontinuity_time &&
        *before->second.discontinuity_time != *now.discontinuity_time) {
      ++events.discontinuities;
      continue;
    }
    Rates r{before->second, now, entity, cur.ts_ms, seconds, events, out};
    r.counter64(&SnmpInterface::in_octets, kIfInOctetsRate);
    r.counter64(&SnmpInterface::out_octets, kIfOutOctetsRate);
    r.counter32(&SnmpInterface::in_errors, kIfInErrorsRate);
    r.counter32(&SnmpInterface::out_errors, kIfOutErrorsRate);
    r.counter32(&SnmpInterface::in_discards, kIfInDiscardsRate);
    r.counter32(&SnmpInterface::out_discards, kIfOutDiscardsRate);
  }
  return out;
}

}  // namespace hsns::ingest
