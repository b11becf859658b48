// What hsnsd's components share (component.h): the host's identity, the persistent state (state.json)
// and the desired state being applied. Owned by the main loop, used by the components of the main thread
// only (the flow harvester's thread never touches it).
//
// Who writes what: the reconciler loads `persistent` and `desired` at start and saves `persistent` after
// each pass; the agent link replaces `desired` (and persistent.desired_json/etag) when the aggregator
// sends a new document and sets `pass_wanted` when it should be applied at once; the reconciler records
// its ownership in persistent.owned.
#pragma once

#include <optional>
#include <string>

#include "desired_state.h"
#include "state_store.h"

namespace hsns::daemon {

struct NodeState {
  std::string host;        // registered name (effective_host)
  std::string started_at;  // RFC 3339, for the status document
  PersistentState persistent;
  std::optional<DesiredState> desired;  // the aggregator's last document, or the stored one
  bool pass_wanted = false;             // apply now: a new generation arrived or the aggregator came back
};

}  // namespace hsns::daemon
