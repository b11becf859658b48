// libFuzzer target over the request-body readers of the scheduling, topology and agent APIs that are pure
// functions (aggregator/api/scheduling/requests.h, api/topology/routes.h, api/agents/routes.h), called
// directly so they get many executions per second; fuzz_api_routes runs the same bodies (and the readers
// inside the handlers) through the routes.
//
// Input layout: the first byte selects the reader (taken modulo 4, so the seeds can use the digits
// '0'..'3'); the rest is the body, read by parse_json_object first as the HTTP layer does:
//   0  parse_search_request      (POST /api/v1/topology/search)
//   1  parse_schedule_request    (POST /api/v1/schedule)
//   2  parse_clos_params         (POST /api/v1/topology/generate)
//   3  parse_agent_report        (PUT /api/v1/agents/{host}/status)
// Invariants (a violation is __builtin_trap()): a refusal is a 400 problem with a title and a detail,
// every invalid field it lists has a name and a reason; an accepted search or schedule request has a
// model and parallel sizes the cost model accepts as values (the combination rules are the libraries'),
// a job name that valid_job_name accepts, at most kMaxRequestHosts hosts; an accepted report is the body.
#include <cstddef>
#include <cstdint>
#include <nlohmann/json.hpp>
#include <string_view>

#include "api/agents/routes.h"
#include "api/scheduling/requests.h"
#include "api/topology/routes.h"
#include "hsns/json_fields.h"
#include "hsns/problem.h"

namespace {

namespace api = hsns::scheduling_api;
using hsns::Problem;

void check(bool ok) {
  if (!ok) __builtin_trap();
}

void check_refusal(const Problem& p) {
  check(p.status == 400);
  check(!p.title.empty() && !p.detail.empty());
  for (const auto& f : p.invalid_params) check(!f.name.empty() && !f.reason.empty());
}

template <typename Result>
bool accepted(const Result& r) {
  if (!r) check_refusal(r.error());
  return r.has_value();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size == 0) return 0;
  const std::string_view text(reinterpret_cast<const char*>(data) + 1, size - 1);
  const auto body = hsns::parse_json_object(text);
  if (!body) {
    check(body.error().status == 400 || body.error().status == 413);
    return 0;
  }
  switch (static_cast<std::uint8_t>(data[0] - '0') % 4) {
    case 0: {
      const auto r = api::parse_search_request(*body);
      if (accepted(r)) check(r->parallel.tp >= 1 && r->parallel.pp >= 1 && r->parallel.dp >= 1);
      break;
    }
    case 1: {
      const auto r = api::parse_schedule_request(*body);
      if (accepted(r)) {
        check(api::valid_job_name(r->job_name));
        check(r->hosts.size() <= api::kMaxRequestHosts);
        check(r->npu_ips.empty() && r->host_ips.empty());
      }
      break;
    }
    case 2:
      (void)accepted(hsns::topology_api::parse_clos_params(*body));
      break;
    default: {
      const auto r = hsns::network::parse_agent_report(*body);
      if (accepted(r)) check(*r == *body);
      break;
    }
  }
  return 0;
}
