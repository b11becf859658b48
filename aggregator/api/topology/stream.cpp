#include "stream.h"

#include <nlohmann/json.hpp>

namespace hsns::topology_api {

std::string topology_change_message(std::int64_t revision) {
  return nlohmann::json{{"kind", "topology"}, {"revision", revision}}.dump();
}

TopologyChangeNotifier::TopologyChangeNotifier(std::shared_ptr<services::TopologyCache> cache,
                                               http::WebSocketHub& hub, std::chrono::milliseconds period)
    : cache_(std::move(cache)),
      hub_(hub),
      thread_("topology change notifier", {.period = period}, [this] { poll(); }) {}

std::int64_t TopologyChangeNotifier::revision() const {
  return revision_.load(std::memory_order_acquire);
}

std::int64_t TopologyChangeNotifier::read_revision() const {
  auto snapshot =
      cache_->current();  // the cached model's record (parsed here, off the I/O threads, if not yet)
  return snapshot ? snapshot->revision : 0;
}

void TopologyChangeNotifier::poll() {
  // An atomic load, taken before the read: see store/revision.h.
  const std::optional<std::int64_t> mark = cache_->change_mark();
  if (read_ && mark == seen_) return;
  seen_ = mark;
  // Stored before it is published: a session opened meanwhile gets it at open or as a message.
  const std::int64_t now = read_revision();
  revision_.store(now, std::memory_order_release);
  // The first reading (at start) is no change: sessions get it at open.
  if (read_ && hub_.subscribers(kTopologyTopic) > 0)
    hub_.publish(kTopologyTopic, topology_change_message(now));
  read_ = true;
}

void register_topology_stream(http::Router& router, TopologyChangeNotifier& notifier,
                              http::WebSocketHub& hub) {
  router.add_websocket(
      "/api/v1/topology/stream", http::permits(http::Permission::read),
      [&notifier, &hub](const http::RequestContext&, const std::shared_ptr<http::WebSocketChannel>& channel) {
        // Subscribed before the revision is read: a change in between reaches the session (possibly as a
        // second message with the same revision, or ahead of it); revisions never go back, so a reader
        // that re-reads when a message names a revision newer than what it drew misses nothing. The
        // revision is the notifier's last reading (an atomic load: no model is read on an I/O thread).
        hub.subscribe(kTopologyTopic, channel);
        channel->send_text(topology_change_message(notifier.revision()));
      });
}

}  // namespace hsns::topology_api
