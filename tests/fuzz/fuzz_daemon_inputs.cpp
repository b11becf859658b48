// libFuzzer target over what hsnsd reads from outside besides the wire contract (whose readers, the
// desired state among them, are fuzz_proto's): its YAML configuration and the kernel's DCB netlink replies.
//
// Input layout: the first byte selects the reader (taken modulo 3, so the seeds can use the digits
// '0'..'2'); the rest is the reader's input:
//   0  parse_config_text (daemon/core/config.h): the text of hsnsd.yaml, validated as load_config does
//   1  parse_flow_probe_config (daemon/flows/flow_probe_config.h): the flow_probe section on its own
//   2  parse_dcb_ieee_reply (daemon/core/dcb.h): one netlink message as the kernel writes it
// Invariants (a violation is __builtin_trap()): nothing throws (an exception escaping is libFuzzer's
// "deadly signal"); a refusal is a non-empty message (the configuration's starts with its origin); an
// accepted configuration passes validate() again and its flow probe section equals itself
// (same_flow_probe); an accepted DCB reply's maps hold DSCPs 0..63 and priorities 0..7, its PFC
// priorities are 0..7 and DSCP lookups agree with the map (or its ambiguous entries).
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <span>
#include <string>

#include "config.h"
#include "dcb.h"
#include "flow_probe_config.h"

namespace {

namespace daemon = hsns::daemon;

void check(bool ok) {
  if (!ok) __builtin_trap();
}

void config(const std::string& text) {
  auto c = daemon::parse_config_text(text, "fuzz.yaml");
  if (!c) {
    check(c.error().rfind("fuzz.yaml: ", 0) == 0);
    return;
  }
  check(daemon::validate(*c).has_value());
  check(daemon::same_flow_probe(c->flow_probe, c->flow_probe));
}

void flow_probe(const std::string& text) {
  auto f = daemon::parse_flow_probe_config(text);
  if (!f) {
    check(!f.error().empty());
    return;
  }
  for (const auto& i : f->interfaces) check(!i.name.empty());
}

void dcb(std::span<const std::uint8_t> message) {
  auto q = daemon::parse_dcb_ieee_reply(message);
  if (!q) {
    check(!q.error().empty());
    return;
  }
  for (const auto& [dscp, prio] : q->dscp_prio) check(dscp >= 0 && dscp <= 63 && prio >= 0 && prio <= 7);
  for (const int p : q->pfc_priorities()) check(p >= 0 && p <= 7);
  for (int prio = 0; prio <= 7; ++prio) {
    for (const int dscp : q->dscp_for_priority(prio)) {
      const auto entry = q->dscp_prio.find(dscp);
      check(entry != q->dscp_prio.end());
      const auto more = q->ambiguous_dscp.find(dscp);
      check(entry->second == prio ||
            (more != q->ambiguous_dscp.end() &&
             std::find(more->second.begin(), more->second.end(), prio) != more->second.end()));
    }
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size == 0) return 0;
  const std::span<const std::uint8_t> rest(data + 1, size - 1);
  const std::string text(reinterpret_cast<const char*>(rest.data()), rest.size());
  switch (static_cast<std::uint8_t>(data[0] - '0') % 3) {
    case 0:
      config(text);
      break;
    case 1:
      flow_probe(text);
      break;
    default:
      dcb(rest);
      break;
  }
  return 0;
}
