// The deterministic RoCEv2 traffic mix of hsns-roce-gen and the exact per-flow counts it implies.
//
// Contract:
// - plan() turns a MixConfig (seed, host pair, number of flows, packets per flow, probabilities) into the
//   ordered list of packets to send; the same config always yields the same list (std::mt19937_64 with
//   explicit integer draws, no distribution objects whose output differs across standard libraries).
// - Every flow (source IP, destination IP, UDP source port, destination QP) carries a mix of RC SEND,
//   WRITE, READ request/response, ACKs (some of them NAKs with each syndrome), atomics and CNPs; ECN ECT
//   and CE marks; PSNs that advance by one, with injected retransmissions (the PSN goes back 0..3 below the
//   previous data PSN, which the probe must count as one regression each).
// - tally() computes the expected per-flow counts of a packet list with the probe's definitions
//   (bpf/roce_flow.h): bytes = IP packet length, classes partition packets, NAK kinds from the AETH
//   syndrome, regressions over data packets. to_json() renders them.
#pragma once

#include <cstdint>
#include <map>
#include <nlohmann/json.hpp>
#include <string>
#include <tuple>
#include <vector>

#include "packet.h"

namespace hsns::roce_gen {

struct MixConfig {
  std::uint64_t seed = 1;
  std::string src;
  std::string dst;
  int flows = 4;
  int packets_per_flow = 100;
  int retransmit_permille = 30;
  int nak_permille = 100;  // of ACKs
  int ce_permille = 100;
  int ect_permille = 600;
  int cnp_permille = 30;
};

struct FlowKey {
  int family = 4;
  std::array<std::uint8_t, 16> src{};
  std::array<std::uint8_t, 16> dst{};
  std::uint16_t sport = 0;
  std::uint32_t dest_qp = 0;
  auto tie() const { return std::tie(family, src, dst, sport, dest_qp); }
  bool operator<(const FlowKey& o) const { return tie() < o.tie(); }
};

struct FlowCounts {
  std::uint64_t packets = 0;
  std::uint64_t bytes = 0;
  std::array<std::uint64_t, 8> op{};
  std::uint64_t ect = 0;
  std::uint64_t ce = 0;
  std::uint64_t cnp = 0;
  std::array<std::uint64_t, 6> nak{};
  std::uint64_t psn_regressions = 0;
  bool has_psn = false;
  std::uint32_t last_psn = 0;
  std::uint32_t max_psn = 0;
};

// Returns an error message when the config is invalid (bad address, mixed families, counts out of range).
std::string validate(const MixConfig& config);
std::vector<PacketSpec> plan(const MixConfig& config);
FlowKey key_of(const PacketSpec& spec);
std::map<FlowKey, FlowCounts> tally(const std::vector<PacketSpec>& packets);
nlohmann::json to_json(const std::map<FlowKey, FlowCounts>& flows);

}  // namespace hsns::roce_gen
