// Both directions of a QP pair joined into one flow row: the pure step between the telemetry store's
// per-direction totals (store::FlowDirectionTotals) and GET /api/v1/flows.
//
// Contract: pair_flow_directions(directions) answers one FlowPair per direction, except that two directions
// of one reporting host whose addresses and QPs are swapped become one pair: d and r with r.src == d.dst,
// r.dst == d.src, r.dest_qp == d.src_qp (known from a QP record) and r.src_qp, when known, == d.dest_qp.
// A direction whose source QP is unknown can only be the reverse of one whose source QP is known. In a pair
// the forward direction is the one with the smaller (src, dst, dest_qp, sport). Pairs are ordered by
// bytes of both directions, most first, then by host, src, dst, dst QP, sport of the forward direction:
// a total order, so offset paging is stable while the data is. The pairs point into `directions`, which
// must outlive them. Pure; thread-safe.
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <vector>

#include "store/telemetry_store.h"

namespace hsns::telemetry_api {

struct FlowPair {
  const store::FlowDirectionTotals* forward = nullptr;
  const store::FlowDirectionTotals* reverse = nullptr;  // null: no record of the other direction
  std::uint64_t packets = 0;                            // both directions
  std::uint64_t bytes = 0;
};

std::vector<FlowPair> pair_flow_directions(const std::vector<store::FlowDirectionTotals>& directions);

// One row of GET /api/v1/flows (docs/rest-api.md, "Telemetry").
nlohmann::json flow_pair_json(const FlowPair& pair);

}  // namespace hsns::telemetry_api
