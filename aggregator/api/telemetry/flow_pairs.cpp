#include "api/telemetry/flow_pairs.h"

#include <algorithm>
#include <map>
#include <string>
#include <tuple>

namespace hsns::telemetry_api {
namespace {

using store::FlowDirectionTotals;

auto order_key(const FlowDirectionTotals& d) {
  return std::tie(d.host, d.src, d.dst, d.dest_qp, d.sport);
}

bool forward_first(const FlowDirectionTotals& a, const FlowDirectionTotals& b) {
  return std::tie(a.src, a.dst, a.dest_qp, a.sport) < std::tie(b.src, b.dst, b.dest_qp, b.sport);
}

nlohmann::json owner_json(const std::optional<store::QpOwner>& o) {
  if (!o) return nullptr;
  return {{"host", o->host},  {"device", o->device},
          {"qpn", o->qpn},    {"pid", o->pid ? nlohmann::json(*o->pid) : nlohmann::json(nullptr)},
          {"comm", o->comm},  {"kernel", o->kernel},
          {"ts_ms", o->ts_ms}};
}

nlohmann::json direction_json(const FlowDirectionTotals& d) {
  return {{"src", d.src},
          {"dst", d.dst},
          {"sport", d.sport},
          {"dest_qp", d.dest_qp},
          {"interfaces", d.ifnames},
          {"observed", d.directions},
          {"records", d.records},
          {"packets", d.packets},
          {"bytes", d.bytes},
          {"ect", d.ect},
          {"ce", d.ce},
          {"cnp", d.cnp},
          {"naks", d.naks},
          {"psn_regressions", d.psn_regressions},
          {"first_ns", d.first_ns},
          {"last_ns", d.last_ns}};
}

}  // namespace

std::vector<FlowPair> pair_flow_directions(const std::vector<FlowDirectionTotals>& directions) {
  // Directions by (host, src, dst, dest_qp): where a reverse is looked up.
  std::multimap<std::tuple<const std::string&, const std::string&, const std::string&, std::uint32_t>,
                std::size_t>
      by_key;
  for (std::size_t i = 0; i < directions.size(); ++i) {
    const auto& d = directions[i];
    by_key.emplace(std::tie(d.host, d.src, d.dst, d.dest_qp), i);
  }
  std::vector<bool> used(directions.size(), false);
  std::vector<FlowPair> pairs;
  pairs.reserve(directions.size());
  // Directions with a known source QP look for their reverse first, so that one without can be taken.
  for (const bool known_pass : {true, false}) {
    for (std::size_t i = 0; i < directions.size(); ++i) {
      const auto& d = directions[i];
      if (used[i] || d.src_qp.has_value() != known_pass) continue;
      used[i] = true;
      const FlowDirectionTotals* reverse = nullptr;
      if (d.src_qp) {
        const auto [first, last] = by_key.equal_range(std::tie(d.host, d.dst, d.src, *d.src_qp));
        for (auto it = first; it != last; ++it) {
          const auto& r = directions[it->second];
          if (used[it->second] || (r.src_qp && *r.src_qp != d.dest_qp)) continue;
          used[it->second] = true;
          reverse = &r;
          break;
        }
      }
      FlowPair p{&d, reverse, d.packets, d.bytes};
      if (reverse != nullptr) {
        p.packets += reverse->packets;
        p.bytes += reverse->bytes;
        if (forward_first(*reverse, d)) std::swap(p.forward, p.reverse);
      }
      pairs.push_back(p);
    }
  }
  std::sort(pairs.begin(), pairs.end(), [](const FlowPair& a, const FlowPair& b) {
    if (a.bytes != b.bytes) return a.bytes > b.bytes;
    return order_key(*a.forward) < order_key(*b.forward);
  });
  return pairs;
}

nlohmann::json flow_pair_json(const FlowPair& pair) {
  const auto& f = *pair.forward;
  const auto* r = pair.reverse;
  std::optional<std::uint32_t> src_qp = f.src_qp;
  if (!src_qp && r != nullptr) src_qp = r->dest_qp;
  // The source endpoint's QP record is the forward direction's source or the reverse direction's
  // destination (the same QP), and the other way round.
  auto src_process = f.src_process;
  if (!src_process && r != nullptr) src_process = r->dst_process;
  auto dst_process = f.dst_process;
  if (!dst_process && r != nullptr) dst_process = r->src_process;
  return {{"host", f.host},
          {"family", f.family},
          {"src", f.src},
          {"src_qp", src_qp ? nlohmann::json(*src_qp) : nlohmann::json(nullptr)},
          {"dst", f.dst},
          {"dst_qp", f.dest_qp},
          {"packets", pair.packets},
          {"bytes", pair.bytes},
          {"forward", direction_json(f)},
          {"reverse", r != nullptr ? direction_json(*r) : nlohmann::json(nullptr)},
          {"src_process", owner_json(src_process)},
          {"dst_process", owner_json(dst_process)}};
}

}  // namespace hsns::telemetry_api
