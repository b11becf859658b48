// GET /api/v1/overlays/{id}/stream (WebSocket): a metric overlay's grades kept current in the dashboard
// (docs/rest-api.md, "Overlays"; the web's overlay_live.ts): the full grade set at open, then only the
// grades that changed whenever new KPI data landed.
//
// Contract:
// - Query: `upper` as GET /api/v1/topology/links (link indices are positions in that answer), `max_age_s`
//   as GET /api/v1/overlays/{id}/grades (parse_grade_max_age: readings older are no data; default
//   kDefaultGradeMaxAgeS). An id that is no metric overlay, an unknown query parameter or a bad `upper` or
//   `max_age_s` closes the session at once with 1008 (policy violation) and a reason naming it.
// - Messages (schemas in aggregator/openapi.json): at open, {"kind":"groups"} (the layout groups' grades:
//   what the site view draws first) then {"kind":"grades"} (GET /api/v1/overlays/{id}/grades' answer
//   without `at`, with the session's max age); then {"kind":"changes","links":{"index","grade","value"},
//   "devices":{"index","grade"},"groups":{"id","grade"}} naming only what changed since the grades the
//   session has (grade or value). When the topology revision changed, a new "groups" and "grades" pair
//   naming the new revision is sent instead (a reader whose drawing is of another revision rebuilds).
// - OverlayGradeNotifier grades on a thread of its own (hsns::PeriodicThread), never on an I/O thread:
//   every `period` it polls the KPI store's change mark (store/marked_kpi_store.h) and the topology's
//   (TopologyCache::change_mark, atomic loads) and regrades each (overlay, max age) someone follows when
//   either moved, or `refresh` (at most the max age) passed since its last grading (readings age out of the
//   max age without a write). Nothing is sent when nothing changed. An overlay nobody follows is not graded;
//   sessions of one overlay with different max ages are graded apart, each with its own (one grading per
//   pair, whatever the number of sessions and upper filters). Each grading's steps are timed in the histogram
//   hsns_overlay_grading_seconds{overlay, step}: step "read" (the KPI store read), "grade" (the
//   topology graded) and "send" (the differences found, worded and queued to the sessions). A session is
//   served at open on that thread too (opened sessions are queued to it and it is woken): it gets the groups
//   and grades, then is subscribed, so it never sees a change before its full set. A failed KPI read is
//   logged; a session that cannot be served so (no topology yet, the store failed) is closed with 1011 and a
//   reason saying so.
// - Bounded like every stream: the hub's per-session queue (http/websocket.h; a full one closes with
//   1013). A full grade set (at open, or for a new revision) is sent as a starting state
//   (MessageKind::state): queued whatever its size, so a fabric whose set outgrows queue_bytes still opens;
//   the changes after it must fit behind it. Role read; Origin checked at the upgrade like every WebSocket
//   endpoint.
// - The notifier must outlive the router's sessions' handlers that use it; the hub, the store and the
//   cache must outlive the notifier. Thread-safe.
#pragma once

#include <prometheus/family.h>
#include <prometheus/histogram.h>
#include <prometheus/registry.h>

#include <chrono>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "api/overlays/grades.h"
#include "api/overlays/thresholds.h"
#include "hsns/periodic_thread.h"
#include "http/router.h"
#include "http/websocket.h"
#include "services/topology_cache.h"
#include "store/marked_kpi_store.h"

namespace hsns::overlays {

class OverlayGradeNotifier {
 public:
  OverlayGradeNotifier(OverlaySettings overlays, store::MarkedKpiStore& kpis,
                       std::shared_ptr<services::TopologyCache> topology, http::WebSocketHub& hub,
                       prometheus::Registry& registry,
                       std::chrono::milliseconds period = std::chrono::milliseconds(500),
                       std::chrono::milliseconds refresh = std::chrono::seconds(30));
  ~OverlayGradeNotifier();
  OverlayGradeNotifier(const OverlayGradeNotifier&) = delete;
  OverlayGradeNotifier& operator=(const OverlayGradeNotifier&) = delete;

  const OverlaySettings& overlays() const { return overlays_; }
  // Queues a session of a metric overlay (its index in overlays()) and max age for its full set; any
  // thread.
  void open(std::size_t overlay, std::int64_t max_age_s, const topology_api::UpperFilter& upper,
            std::shared_ptr<http::WebSocketChannel> channel);

 private:
  // What one grading serves: the sessions of an overlay with one max age (any upper filter).
  struct Key {
    std::size_t overlay;
    std::int64_t max_age_s;
    auto operator<=>(const Key&) const = default;
  };
  struct Pending {
    Key key;
    topology_api::UpperFilter upper;
    std::shared_ptr<http::WebSocketChannel> channel;
  };
  struct Followed {
    std::optional<Grades> grades;
    std::chrono::steady_clock::time_point graded;
  };
  void tick();
  bool followed(const Key& key) const;
  bool regrade(const Key& key, Followed& f);
  const std::vector<std::int64_t>& positions(const topology::Topology& t, unsigned mask);

  OverlaySettings overlays_;
  store::MarkedKpiStore& kpis_;
  std::shared_ptr<services::TopologyCache> topology_;
  http::WebSocketHub& hub_;
  std::chrono::milliseconds refresh_;
  prometheus::Family<prometheus::Histogram>& seconds_;
  // The notifier thread's own state: the pairs someone follows (or opened a session of).
  std::map<Key, Followed> followed_;
  std::shared_ptr<const topology::Topology> model_;
  std::map<unsigned, std::vector<std::int64_t>> positions_;  // per upper mask, for model_
  std::optional<std::uint64_t> seen_kpis_;                   // the change marks of the last tick
  std::optional<std::int64_t> seen_topology_;
  // Shared with open().
  std::mutex mutex_;
  std::vector<Pending> pending_;
  PeriodicThread thread_;  // last: starts once the members above exist
};

// The hub topic of a metric overlay's sessions with a max age and an upper filter.
std::string grade_topic(const std::string& overlay, std::int64_t max_age_s,
                        const topology_api::UpperFilter& upper);

void register_overlay_stream(http::Router& router, OverlayGradeNotifier& notifier);

}  // namespace hsns::overlays
