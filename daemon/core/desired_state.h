// hsnsd's side of the wire contract (hsns/proto/agent.h): the desired state it applies and the status
// report it sends. The types and their strict reader/writer are the contract's; these are the daemon's
// entry points, kept so that daemon.cpp and agent_client.cpp read the same as before.
//
// Contract: parse_desired_state() never throws; a malformed document (not JSON, a missing or mistyped
// field, an unknown field, an address outside its cidr, two ports on one netdev) is an error naming the
// field ("desired state: ports[0].mtu: must be between 68 and 65535"), and the caller keeps its previous
// desired state. desired_state_to_json() writes the contract's canonical document (the state file's copy).
// status_report() builds the status document from one reconcile pass and its QoS checks: the body of
// PUT /api/v1/agents/{host}/status. Plain data, no threads.
#pragma once

#include <string>
#include <tl/expected.hpp>
#include <vector>

#include "hsns/proto/agent.h"

namespace hsns::daemon {

using DesiredPort = proto::DesiredPort;
using DesiredState = proto::DesiredState;

struct PassReport;
struct QosReport;

tl::expected<DesiredState, std::string> parse_desired_state(const std::string& body);
std::string desired_state_to_json(const DesiredState& state);

// The status report of one pass (PassReport of reconciler.h, QosReport of qos.h) from the daemon
// `version` started at `started_at` (RFC 3339). A port or QoS state outside the contract's enumeration is
// a bug in the daemon and reported as pending / unknown.
proto::StatusReport status_report(const PassReport& pass, const std::vector<QosReport>& qos,
                                  const std::string& version, const std::string& started_at);

}  // namespace hsns::daemon
