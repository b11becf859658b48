// Table views of the aggregator's JSON objects (docs/rest-api.md) for hsnsctl's default output.
//
// Contract: every function takes the JSON the server answered and never throws on a missing field or a
// field of an unexpected type: such a cell is empty (rendered "-"). A list argument that is not an array
// gives a table with no rows. Pure functions; thread-safe.
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>

#include "table.h"

namespace hsnsctl {

// Text of object[key]: strings as they are, numbers and booleans in JSON notation, null/absent as "".
std::string cell_text(const nlohmann::json& object, std::string_view key);

// "200G" for 200000, "2500M" for 2500, "" for 0 (unknown).
std::string format_speed(std::int64_t mbps);
// "START-END,START-END" of an allocation_pools array ("" when empty).
std::string format_pools(const nlohmann::json& pools);

// The "items" array of a list answer, or an empty array when there is none.
const nlohmann::json& list_items(const nlohmann::json& answer);

Table hosts_table(const nlohmann::json& hosts);          // NAME NPUS GENERATION UPDATED
Table npus_table(const nlohmann::json& npus);            // INDEX NETDEV MAC RDMA_DEVICE SPEED
Table subnets_table(const nlohmann::json& subnets);      // ID NAME TENANT CIDR GATEWAY POOLS MTU PORTS
Table ports_table(const nlohmann::json& ports);          // ID NAME HOST NPU SUBNET IP
Table desired_table(const nlohmann::json& desired);      // one row per port of a DesiredState
Table reachability_table(const nlohmann::json& answer);  // SRC_PORT DST_PORT REACHABLE REASON

}  // namespace hsnsctl
