// Strict parsing of the bodies of POST /api/v1/topology/search and POST /api/v1/schedule into the library
// requests (search::SearchRequest, placement::ScheduleRequest). Wire format: docs/rest-api.md, "Topology
// search and scheduling".
//
// Contract:
// - Stateless validation only: JSON types (integers must be JSON integers), ranges, enumerations, name
//   syntax, unknown fields at every level. Every bad field is reported, with its full path ("model.heads",
//   "parallel.tp", "constraints.exclude_hosts[2]", "ecmp_hash.fields[0]"), in one 400 Problem. The ranges
//   of the model and parallel sizes are the cost model's limits (scheduling/cost/comm_volume.h), and every
//   accepted value fits its library field exactly. Rules that need the topology or combine fields
//   (divisibility, world size tp*pp*dp*cp, pp*virtual_stages <= layers, micro_batch*dp <= global_batch,
//   host state) are left to the libraries (cost::check first), whose errors name the field and which the
//   API maps to 422.
// - Defaults are the libraries' defaults; the schedule request's npu_ips and host_ips are left empty (the
//   API fills npu_ips from the network store).
// - Pure functions; thread-safe.
#pragma once

#include <nlohmann/json.hpp>
#include <string_view>
#include <tl/expected.hpp>

#include "hsns/problem.h"
#include "scheduling/placement/schedule.h"
#include "scheduling/search/search.h"

namespace hsns::scheduling_api {

inline constexpr std::size_t kMaxRequestHosts = 16384;
inline constexpr std::size_t kMaxJobNameLength = 63;

// The schedule body: the library request plus what only the API acts on.
struct ScheduleBody : placement::ScheduleRequest {
  // Register the job even when pairs of its route plan have addresses in different subnets (which hsns
  // isolates); default false: such a schedule is a 422 on "hosts".
  bool allow_unreachable = false;
};

tl::expected<search::SearchRequest, Problem> parse_search_request(const nlohmann::json& body);
tl::expected<ScheduleBody, Problem> parse_schedule_request(const nlohmann::json& body);

// [A-Za-z0-9][A-Za-z0-9._-]{0,62}: safe in a URL path segment, a file name and a log line.
bool valid_job_name(std::string_view name);

// Wire names of the library enums.
std::string_view dimension_name(cost::Dimension d);  // "tp", "pp", "dp", "ep", "cp"

}  // namespace hsns::scheduling_api
