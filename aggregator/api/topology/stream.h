// GET /api/v1/topology/stream (WebSocket): tells the dashboard that the topology changed, so that a page
// showing device and link states (the site view and the matrices under the link-state overlay) re-reads
// what it draws and recolours what changed, without a reload.
//
// Contract:
// - Message: {"kind":"topology","revision":R}, R the topology's revision (what GET /api/v1/topology and
//   /api/v1/topology/links answer as `revision`: every committed import, generate, LLDP merge and device
//   state change is a new one; revisions never go back; 0 before the first topology). A session gets the
//   revision at open, then a message whenever a topology write committed, noticed within `period`
//   (several writes inside one period are one message naming the newest revision). A reader re-reads
//   what it draws when a message names a revision newer than the one it drew.
// - TopologyChangeNotifier polls TopologyCache::change_mark() (the store's revision mirror: an atomic load,
//   never a query) on a thread of its own while it exists, and publishes on the hub's topic
//   kTopologyTopic only when the mark moved and someone listens; a store without a revision mirror gives
//   no messages besides the one at open. The model's revision is read on that thread too (the first read
//   after a start may parse the stored document), never on an I/O thread: a session gets the notifier's
//   last reading at open. Writes by another process are not seen (one aggregator per
//   database, as for every revision mirror).
// - Reads need role read, like GET /api/v1/topology/links. The notifier must outlive the router's sessions'
//   handlers that use it; the hub must outlive the notifier.
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>

#include "hsns/periodic_thread.h"
#include "http/router.h"
#include "http/websocket.h"
#include "services/topology_cache.h"

namespace hsns::topology_api {

inline constexpr const char* kTopologyTopic = "topology";

// The message for revision `revision`.
std::string topology_change_message(std::int64_t revision);

class TopologyChangeNotifier {
 public:
  TopologyChangeNotifier(std::shared_ptr<services::TopologyCache> cache, http::WebSocketHub& hub,
                         std::chrono::milliseconds period = std::chrono::milliseconds(250));
  TopologyChangeNotifier(const TopologyChangeNotifier&) = delete;
  TopologyChangeNotifier& operator=(const TopologyChangeNotifier&) = delete;

  // The revision as the notifier last read it (0 while there is no topology, or before its first read).
  std::int64_t revision() const;

 private:
  std::int64_t read_revision() const;
  void poll();

  std::shared_ptr<services::TopologyCache> cache_;
  http::WebSocketHub& hub_;
  std::atomic<std::int64_t> revision_{0};
  // The thread's own: whether it read the revision yet, and the change mark taken before that reading.
  bool read_ = false;
  std::optional<std::int64_t> seen_;
  PeriodicThread thread_;  // last: starts once the members above exist
};

void register_topology_stream(http::Router& router, TopologyChangeNotifier& notifier,
                              http::WebSocketHub& hub);

}  // namespace hsns::topology_api
