// Configuration of the RoCEv2 flow probe: the `flow_probe:` section of hsnsd.yaml.
//
//   flow_probe:
//     interval_ms: 1000              # harvest interval (100..3600000)
//     table_size: 65536              # flow table entries (1024..4194304), fixed at load
//     ring_buffer_bytes: 262144      # overflow ring buffer (power of two, 4096..1 GiB)
//     pin_dir: /sys/fs/bpf/hsns/roce_flow
//     sink: /var/lib/hsns/flows.jsonl  # JSON-lines flow records ("" = none)
//     interfaces:
//       - name: rxe0                 # netdev
//         attach: tc                 # tc | xdp
//         direction: both            # ingress | egress | both (tc only; xdp is ingress)
//         mirror: false              # decapsulate GRE/ERSPAN (collector port fed by switch mirroring)
//
// Contract: parse_flow_probe_config() takes a YAML document that either has a top-level `flow_probe` key
// or is the section itself. Unknown keys, wrong types and out-of-range values are errors naming the key
// (e.g. "flow_probe.interfaces[1].attach: expected tc or xdp"). Never throws.
#pragma once

#include <chrono>
#include <cstdint>
#include <string>
#include <tl/expected.hpp>
#include <vector>

namespace hsns::daemon {

enum class AttachMode { tc, xdp };

struct FlowProbeInterface {
  std::string name;
  AttachMode attach = AttachMode::tc;
  bool ingress = true;
  bool egress = true;
  bool mirror = false;
};

struct FlowProbeConfig {
  std::chrono::milliseconds interval{1000};
  std::uint32_t table_size = 65536;
  std::uint32_t ring_buffer_bytes = 256 * 1024;
  std::string pin_dir = "/sys/fs/bpf/hsns/roce_flow";
  std::string sink = "/var/lib/hsns/flows.jsonl";
  std::vector<FlowProbeInterface> interfaces;
};

tl::expected<FlowProbeConfig, std::string> parse_flow_probe_config(const std::string& yaml_text);

}  // namespace hsns::daemon
