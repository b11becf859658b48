// Storage of node-daemon status reports: the last report of each host's hsnsd (actual state, drift,
// failed ports, QoS conformance), kept so operators and the network brain see where each host stands.
//
// Contract: put_status replaces the host's previous report atomically and returns what was stored;
// the host must be registered (not_found otherwise). The report is stored as given (validated JSON from
// the API layer). Thread-safe as the underlying store is.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "store/network_store.h"

namespace hsns::store {

struct AgentStatus {
  std::string host;
  std::int64_t applied_generation = 0;
  std::string report_json;  // the daemon's report, a JSON object
  std::string received_at;  // RFC 3339 UTC
};

class AgentStore {
 public:
  virtual ~AgentStore() = default;
  virtual StoreResult<AgentStatus> put_status(const std::string& host, std::int64_t applied_generation,
                                              const std::string& report_json) = 0;
  virtual StoreResult<AgentStatus> get_status(const std::string& host) = 0;
  virtual StoreResult<std::vector<AgentStatus>> list_status() = 0;
};

}  // namespace hsns::store
