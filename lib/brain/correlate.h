// Root cause (issue 12, item 6): alarms correlated over the topology into incidents with ranked root-cause
// candidates. Pure library over hsns_topology; the aggregator's incident service feeds it
// (docs/brain.md, "Root cause and incidents").
//
// Contract:
// - Input: alarm changes (IncidentInput, the fields of the alarm engine's AlarmChange) in EVENT time (the
//   alarms' own first_ms/last_ms, never the wall clock): replaying a stream faster gives the same answer.
//   apply(changes) takes a batch and answers one IncidentChange per incident the batch changed (after the
//   whole batch, so a storm arriving in one batch costs one ranking per incident, not one per alarm).
// - Grouping: each alarm is located on the topology (entity "<device>/<port>[/module]", "<device>",
//   "link:<a>|<b>" or "<a><-><b>"; a port maps to its link through the ports named on the topology's
//   links) and gets keys: its link, the devices at both ends of that link (a host port also keys its
//   leaf: a leaf that fails makes every host under it report; a module's own fault, with role module,
//   keys only its own device; a transport symptom on a host port keys its link and leaf, not its host), or
//   its device alone. A raised alarm joins a live incident sharing its
//   link, or sharing a device and having had a raise within window_ms of this alarm (concurrent); a
//   device's own alarm (reboot, power) also joins, whenever it comes, an active incident holding at least
//   two alarms on that device's links or itself, or an active alarm of the device itself; a fan or power
//   supply fault (is_environment_fault) shares a device only with an incident holding that device's own
//   state fault (reboot, fan, power), and an incident of such faults alone takes no port's fault; a port's
//   fault joins through a shared device only an incident at least half of whose alarms touch that device;
//   a pending incident that will be dropped as noise is joinable by no alarm raised confirm_ms after it
//   began (what joins never depends on batching); an alarm joining several live incidents merges them into
//   the oldest (the others are answered `merged`, with merged_into, and forgotten). An incident is live while
//   any of its alarms is active (raised or acknowledged, not suppressed) and, after the last one cleared, for
//   `window_ms` more (a related alarm within the window reopens it, e.g. a flapping port). The same fault
//   raised again as a new alarm (same fingerprint) joins the unresolved incident holding its earlier alarm
//   however long the gap (until hold_ms resolved it): a session that drops every 90 s is one incident, not
//   one per drop. So concurrent related alarms are one incident, a storm of one fault is one incident, and
//   faults that share no device or link are separate incidents. Known limit: two independent faults on ports
//   of one switch within the window share an incident (each still gets its own link or port candidate).
// - Lifecycle: an incident is pending (never answered) until an alarm of it has been active for
//   confirm_ms (event time), however many alarms it holds; a pending incident whose alarms all clear within
//   confirm_ms of its raise (a re-raised alarm's latest raise), none raised three times or flapping, is
//   dropped as noise (stats().noise_dropped), and an alarm raised once that
//   clears within confirm_ms leaves the incident it joined. Confirmed: `opened`, then `updated` on changes,
//   `resolved` once every alarm has been cleared for hold_ms (checked by apply and advance(now_ms), now = the
//   newest event time). Ids are "inc-<sequence>", never reused (options.first_sequence continues a stored
//   sequence).
// - Ranking (rank_candidates): candidates are links, ports, modules, switches and host NICs, each with a
//   strength from its evidence (both ends of a link, module alarms on one end, far-end-only symptoms, the
//   ratio of a switch's or host's ports alarmed, switch-level alarms), times its coverage (the share of
//   the incident's alarms it explains): score = strength x (0.4 + 0.6 x coverage), in 0..1, with evidence
//   sentences and the alarm ids it explains. Pattern root-cause hints (root_cause, role) add a bonus to the
//   candidate they name, and when only one end of a link reports they choose between its port and the
//   link (the role of that end's most severe alarms); they are evidence, not the answer. A switch port
//   marking ECN is the congestion point; routing sessions down on two adjacent switches name their link;
//   a link_down alarm raised three times names it link_flapping. docs/brain.md has the table of strengths.
// - Bounds: per change the work is a few hash lookups (keys per alarm <= 4) and, per incident a key hits,
//   scans of its alarms (the noise, fan and supply rules), plus, once per batch and touched incident, a
//   ranking linear in that incident's alarms. Memory: live incidents and their alarms
//   only (resolved ones are answered and forgotten), at most max_alarms alarms (further raises are counted
//   dropped_alarms). advance() pops only expired deadlines (an ordered set), never scans all incidents.
// - Threads: not thread-safe; one owner.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <span>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "brain/alarms.h"
#include "brain/patterns.h"
#include "topology/topology.h"

namespace hsns::brain {

// One alarm change: the fields of the alarm engine's AlarmChange that correlation uses.
struct IncidentInput {
  enum class State : std::uint8_t { raised, acknowledged, cleared };
  std::string alarm_id;  // stable per alarm
  std::string fingerprint;
  std::string fault_type;  // the pattern's fault type (link_down, crc_errors, ...)
  FaultSeverity severity = FaultSeverity::major;
  std::string entity;                        // what the alarm was raised on
  std::string peer;                          // the other end of its link, when known
  std::string root_cause;                    // the pattern's root-cause entity (a hint)
  RootCauseRole role = RootCauseRole::port;  // the pattern's root-cause role (a hint)
  State state = State::raised;
  bool suppressed = false;  // blacklisted: never correlated (a suppressed alarm counts as cleared)
  bool flapping = false;
  std::int64_t first_ms = 0;
  std::int64_t last_ms = 0;
  std::uint32_t count = 1;
  std::string detail;
  std::string action;     // the pattern's recommended action, when the caller has it (may be empty)
  bool victim = false;    // folded into a cause's incident as its victim's symptom (set by the correlator)
  bool one_shot = false;  // an event (a log line without a clearing line): cleared by time, not by a state
};

// Fault types that are symptoms a cause elsewhere produces (transport: retransmissions, congestion
// notifications, ECN marks, buffer drops; routing sessions over a broken link or to a dead switch): the
// ones a victim reports.
bool is_symptom_fault(std::string_view fault_type);
// routing_session_down / routing_session_flapping: what a broken link or switch does to the sessions over it.
bool is_routing_fault(std::string_view fault_type);
// switch_fan_fault / switch_power_fault: a device's environment failing with redundancy left, which touches
// no frame; is_device_state_fault adds switch_reboot: the faults of a device as a whole.
bool is_environment_fault(std::string_view fault_type);
bool is_device_state_fault(std::string_view fault_type);
// The first link between two nodes, if they are adjacent.
std::optional<topology::LinkId> link_between(const topology::Topology& t, topology::NodeId a,
                                             topology::NodeId b);

// The alarm engine's alarm (lib/brain/alarms.h) as the correlator's input: the same fields, the
// fingerprint in hex (the id's prefix), the count saturated; action is left empty (an alarm does not carry
// it).
IncidentInput to_incident_input(const Alarm& alarm);

enum class CandidateKind : std::uint8_t { link, port, module, switch_device, host_nic };
std::string_view to_string(CandidateKind kind);  // "link", "port", "module", "switch", "host_nic"

struct RootCauseCandidate {
  std::uint32_t rank = 0;  // 1 = most likely
  std::string entity;  // "link:<a>|<b>" (ends in name order), "<dev>/<port>", "<dev>/<port>/module", "<dev>"
  CandidateKind kind = CandidateKind::port;
  std::string fault_type;
  double score = 0;  // 0..1, rounded to 3 decimals
  std::vector<std::string> evidence;
  std::vector<std::string> symptoms;  // alarm ids it explains, sorted
  // Where it is on the topology (job impact): the link, or the node (switch, host), when known.
  topology::LinkId link = topology::kNoLink;
  topology::NodeId node = topology::kNoNode;
};

struct Incident {
  std::string id;  // "inc-<sequence>"
  std::uint64_t sequence = 0;
  bool resolved = false;
  std::int64_t first_ms = 0;          // the earliest first_ms of its alarms
  std::int64_t last_ms = 0;           // the latest last_ms of its alarms
  std::vector<IncidentInput> alarms;  // every alarm it holds, latest state, in the order they joined
  std::vector<RootCauseCandidate> root_causes;
  std::string recommended_action;
  std::size_t active_alarms() const;
};

enum class IncidentChangeKind : std::uint8_t { opened, updated, resolved, merged };
std::string_view to_string(IncidentChangeKind kind);

struct IncidentChange {
  IncidentChangeKind kind = IncidentChangeKind::updated;
  std::shared_ptr<const Incident> incident;  // a snapshot
  std::string merged_into;                   // merged: the incident that absorbed it
};

struct CorrelatorOptions {
  std::int64_t window_ms = 60'000;  // a cleared incident stays joinable this long
  std::int64_t hold_ms = 120'000;   // every alarm cleared this long: resolved (>= window_ms)
  // A fault raised again this soon after its incident resolved reopens that incident (same id) instead of
  // opening another: a BGP session or a port going down every few minutes is one story. The alarm
  // engine's reopen window.
  std::int64_t reopen_ms = 300'000;
  std::int64_t confirm_ms = 5'000;  // an incident is confirmed once an alarm is active this long (0: at once)
  std::size_t max_alarms = 1'000'000;  // alarms held over all live incidents
  std::size_t max_candidates = 5;
  std::uint64_t first_sequence = 1;
  // Victim folding: a symptom alarm (is_symptom_fault) that would open an incident of its own is offered
  // to each live incident with an active cause (an active alarm that is not a symptom, or for a transport
  // symptom also a routing session's fault, and a ranked root cause), oldest first; the first for which this
  // answers true takes it as a victim (the caller knows the jobs: a host running a job whose path crosses the
  // cause). Victims join the cause's incident but are neither candidates nor counted in a candidate's
  // coverage. Unset: no folding.
  std::function<bool(const IncidentInput& symptom, const Incident& cause)> symptom_of;
};

struct CorrelatorStats {
  std::uint64_t changes = 0;
  std::uint64_t ignored = 0;  // a clear or update of an alarm no live incident holds, a suppressed raise
  std::uint64_t dropped_alarms = 0;  // over max_alarms
  std::uint64_t opened = 0;
  std::uint64_t resolved = 0;
  std::uint64_t merged = 0;
  std::uint64_t reopened = 0;       // resolved incidents live again: their fault came back within reopen_ms
  std::uint64_t noise_dropped = 0;  // pending incidents whose alarms all cleared within confirm_ms
  std::uint64_t noise_alarms =
      0;  // alarms raised once and cleared within confirm_ms, taken out of an incident
};

// A topology with the index correlation needs: "<device>/<port>" -> the link that port is an end of (ports
// as the links name them: a host's NPU netdev, a switch's port). Immutable; shared by the correlator, the
// ranking and job impact. Built in O(links).
class LocatedTopology {
 public:
  explicit LocatedTopology(std::shared_ptr<const topology::Topology> topo);
  const topology::Topology& topology() const { return *topo_; }
  struct PortRef {
    topology::LinkId link = topology::kNoLink;
    bool upper = false;  // the port is the link's upper end
  };
  const PortRef* port(std::string_view device_port) const;
  // "<device>/<port>" of one end ("<device>" when the link names no port there).
  std::string end_entity(topology::LinkId link, bool upper) const;
  // "link:<a>|<b>", the two end entities in name order.
  std::string link_entity(topology::LinkId link) const;

 private:
  std::shared_ptr<const topology::Topology> topo_;
  std::unordered_map<std::string, PortRef> ports_;
};

// Ranks the root-cause candidates of a set of alarms (all of one incident) on a topology (may be null:
// then only the alarms' own entities and hints are candidates). Pure; used by the Correlator.
std::vector<RootCauseCandidate> rank_candidates(const LocatedTopology* topo,
                                                std::span<const IncidentInput> alarms,
                                                std::size_t max_candidates);
// The recommended action for the top candidate (its best alarm's action, else one per kind).
std::string recommended_action(const RootCauseCandidate& top, std::span<const IncidentInput> alarms);

class Correlator {
 public:
  // topo may be null (no topology yet: alarms are grouped by device names and peers only).
  explicit Correlator(std::shared_ptr<const LocatedTopology> topo, CorrelatorOptions options = {});
  ~Correlator();
  Correlator(const Correlator&) = delete;
  Correlator& operator=(const Correlator&) = delete;

  // A new topology: live incidents are re-keyed and re-ranked (answered as updated when that changed them).
  std::vector<IncidentChange> set_topology(std::shared_ptr<const LocatedTopology> topo);
  std::vector<IncidentChange> apply(std::span<const IncidentInput> changes);
  // Event time moved on without alarms (the service's clock): confirmations and resolutions due.
  std::vector<IncidentChange> advance(std::int64_t now_ms);
  // A live incident as stored (after a restart): keeps its id and alarms; confirmed. Ignored when its id or
  // one of its alarms is live already.
  void restore(const Incident& incident);

  const Incident* find(std::string_view id) const;  // live incidents only (pending included)
  std::size_t live_incidents() const;
  std::size_t live_alarms() const;
  std::int64_t now_ms() const;
  std::uint64_t next_sequence() const;
  const CorrelatorStats& stats() const;

 private:
  struct State;
  std::unique_ptr<State> s_;
};

}  // namespace hsns::brain
