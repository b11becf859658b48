// Calibration of the network tiers for the alpha-beta collective model.
//
// Contract:
// - A Calibration lists tiers from the innermost outwards: tiers[0] is intra-host (HCCS/NVLink), then
//   leaf/rail (inter-host under one leaf), spine, core... A group "spans tier t" when t is the highest
//   tier its members' traffic crosses.
// - Each tier has alpha (per-message latency, microseconds), the per-port link bandwidth (Gbit/s,
//   1 Gbit/s = 1e9 bit/s) and the oversubscription ratio (>= 1) of that tier; the effective bandwidth
//   a collective sees is bandwidth / oversubscription (the worst case with every port busy).
// - parse_calibration() reads the JSON document
//     {"tiers": [{"name": "host", "alpha_us": 2.0, "bandwidth_gbps": 1600, "oversubscription": 1}, ...]}
//   strictly: unknown fields, wrong types, non-positive alpha/bandwidth or oversubscription < 1 are
//   errors that name the offending field ("tiers[1].bandwidth_gbps: ...").
// - load_calibration() reads such a file (the library's only I/O); an unreadable file is an error
//   naming the path. calibration.example.json beside this header is a documented starting point.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>
#include <tl/expected.hpp>
#include <vector>

namespace hsns::cost {

struct Tier {
  std::string name;
  double alpha_us = 0;
  double bandwidth_gbps = 0;
  double oversubscription = 1;

  double alpha_seconds() const { return alpha_us * 1e-6; }
  // Effective bytes per second: bandwidth_gbps * 1e9 / 8 / oversubscription.
  double bytes_per_second() const { return bandwidth_gbps * 1e9 / 8.0 / oversubscription; }
};

struct Calibration {
  std::vector<Tier> tiers;
};

// Checks the same rules as the parser (at least one tier, alpha >= 0, bandwidth > 0, oversub >= 1).
tl::expected<void, std::string> validate(const Calibration& cal);

tl::expected<Calibration, std::string> parse_calibration(std::string_view json_text);
tl::expected<Calibration, std::string> load_calibration(const std::string& path);

}  // namespace hsns::cost
