#include "brain/correlate.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <deque>
#include <limits>
#include <map>
#include <span>
#include <tuple>
#include <utility>

namespace hsns::brain {

IncidentInput to_incident_input(const Alarm& alarm) {
  IncidentInput in;
  in.alarm_id = alarm.id;
  in.fingerprint = alarm.id.substr(0, alarm.id.find('-'));  // the id starts with the fingerprint in hex
  in.fault_type = alarm.fault;
  in.severity = alarm.severity;
  in.entity = alarm.entity;
  in.peer = alarm.peer;
  in.root_cause = alarm.root_cause;
  in.role = alarm.role;
  switch (alarm.state) {
    case AlarmState::raised:
      in.state = IncidentInput::State::raised;
      break;
    case AlarmState::acknowledged:
      in.state = IncidentInput::State::acknowledged;
      break;
    case AlarmState::cleared:
      in.state = IncidentInput::State::cleared;
      break;
  }
  in.suppressed = alarm.suppressed;
  in.flapping = alarm.flapping;
  in.one_shot = alarm.one_shot;
  in.first_ms = alarm.first_ms;
  // A cleared alarm was last seen when it cleared: the correlator's noise rules and holds count from there.
  in.last_ms = alarm.state == AlarmState::cleared ? std::max(alarm.last_ms, alarm.cleared_ms) : alarm.last_ms;
  in.count = static_cast<std::uint32_t>(
      std::min<std::uint64_t>(alarm.count, std::numeric_limits<std::uint32_t>::max()));
  in.detail = alarm.detail;
  return in;
}

using topology::kNoLink;
using topology::kNoNode;
using topology::LinkId;
using topology::NodeId;
using topology::Tier;

std::string_view to_string(CandidateKind kind) {
  switch (kind) {
    case CandidateKind::link:
      return "link";
    case CandidateKind::port:
      return "port";
    case CandidateKind::module:
      return "module";
    case CandidateKind::switch_device:
      return "switch";
    case CandidateKind::host_nic:
      return "host_nic";
  }
  return "port";
}

std::string_view to_string(IncidentChangeKind kind) {
  switch (kind) {
    case IncidentChangeKind::opened:
      return "opened";
    case IncidentChangeKind::updated:
      return "updated";
    case IncidentChangeKind::resolved:
      return "resolved";
    case IncidentChangeKind::merged:
      return "merged";
  }
  return "updated";
}

namespace {

bool is_active(const IncidentInput& a) {
  return a.state != IncidentInput::State::cleared && !a.suppressed;
}

// When an alarm stopped being active (a cleared alarm's last_ms is its clear).
std::int64_t end_of(const IncidentInput& a) {
  return std::max(a.last_ms, a.first_ms);
}

}  // namespace

std::size_t Incident::active_alarms() const {
  return static_cast<std::size_t>(std::count_if(alarms.begin(), alarms.end(), is_active));
}

// ---------------------------------------------------------------------------------------------------
// LocatedTopology

LocatedTopology::LocatedTopology(std::shared_ptr<const topology::Topology> topo) : topo_(std::move(topo)) {
  for (const auto& link : topo_->links()) {
    if (!link.lower_port.empty())
      ports_.emplace(topo_->node(link.lower).name + "/" + link.lower_port, PortRef{link.id, false});
    if (!link.upper_port.empty())
      ports_.emplace(topo_->node(link.upper).name + "/" + link.upper_port, PortRef{link.id, true});
  }
}

const LocatedTopology::PortRef* LocatedTopology::port(std::string_view device_port) const {
  const auto it = ports_.find(std::string(device_port));
  return it == ports_.end() ? nullptr : &it->second;
}

std::string LocatedTopology::end_entity(LinkId id, bool upper) const {
  const auto& link = topo_->link(id);
  const auto& name = topo_->node(upper ? link.upper : link.lower).name;
  const auto& port = upper ? link.upper_port : link.lower_port;
  return port.empty() ? name : name + "/" + port;
}

std::string LocatedTopology::link_entity(LinkId id) const {
  auto a = end_entity(id, false);
  auto b = end_entity(id, true);
  if (b < a) std::swap(a, b);
  return "link:" + a + "|" + b;
}

// ---------------------------------------------------------------------------------------------------
// Locating an alarm

namespace {

constexpr std::string_view kModuleSuffix = "/module";

std::string pair_entity(std::string a, std::string b) {
  if (b < a) std::swap(a, b);
  return "link:" + a + "|" + b;
}

// The two ends of a link entity ("link:<a>|<b>" or the matcher's "<a><-><b>"), or nothing.
bool split_link_entity(std::string_view entity, std::string& a, std::string& b) {
  if (entity.starts_with("link:")) {
    const auto rest = entity.substr(5);
    const auto bar = rest.find('|');
    if (bar == std::string_view::npos || bar == 0 || bar + 1 == rest.size()) return false;
    a = rest.substr(0, bar);
    b = rest.substr(bar + 1);
    return true;
  }
  const auto arrow = entity.find("<->");
  if (arrow == std::string_view::npos || arrow == 0 || arrow + 3 == entity.size()) return false;
  a = entity.substr(0, arrow);
  b = entity.substr(arrow + 3);
  return true;
}

std::string device_of(std::string_view entity) {
  return std::string(entity.substr(0, entity.find('/')));
}

// Where an alarm is: on a link (one end or both), on a device, or nowhere the topology knows.
struct Location {
  LinkId link = kNoLink;
  bool upper = false;      // which end of `link`
  bool both_ends = false;  // the alarm names the link itself
  NodeId node = kNoNode;   // the entity's device (kNoNode for a link entity or an unknown device)
  bool device_level = false;
  bool module = false;
  std::string port_entity;  // "<device>/<port>" without "/module" ("" for a device or a link)
  std::string pair;         // no link on the topology but a peer: the "link:<a>|<b>" entity
  std::string pair_a, pair_b;
  std::string device;  // the entity's device name ("" for a link entity)
};

Location locate(const LocatedTopology* topo, const IncidentInput& a) {
  Location loc;
  std::string ea, eb;
  if (split_link_entity(a.entity, ea, eb)) {
    loc.both_ends = true;
    if (topo != nullptr) {
      const auto* pa = topo->port(ea);
      const auto* pb = topo->port(eb);
      if (pa != nullptr && pb != nullptr && pa->link == pb->link) {
        loc.link = pa->link;
        return loc;
      }
      if (pa != nullptr) {
        loc.link = pa->link;
        return loc;
      }
      if (pb != nullptr) {
        loc.link = pb->link;
        return loc;
      }
    }
    loc.pair_a = ea;
    loc.pair_b = eb;
    loc.pair = pair_entity(ea, eb);
    return loc;
  }
  std::string_view entity = a.entity;
  if (entity.ends_with(kModuleSuffix) && entity.size() > kModuleSuffix.size()) {
    loc.module = true;
    entity.remove_suffix(kModuleSuffix.size());
  }
  loc.device = device_of(entity);
  const bool has_port = entity.find('/') != std::string_view::npos;
  loc.device_level = !has_port;
  if (has_port) loc.port_entity = std::string(entity);
  if (topo != nullptr) {
    if (auto node = topo->topology().find(loc.device)) loc.node = *node;
    if (has_port) {
      if (const auto* p = topo->port(entity)) {
        loc.link = p->link;
        loc.upper = p->upper;
        return loc;
      }
    }
  }
  if (has_port && !a.peer.empty() && a.peer != a.entity) {
    std::string peer = a.peer;
    if (peer.ends_with(kModuleSuffix)) peer.resize(peer.size() - kModuleSuffix.size());
    loc.pair_a = loc.port_entity;
    loc.pair_b = peer;
    loc.pair = pair_entity(loc.port_entity, peer);
  }
  return loc;
}

// ---------------------------------------------------------------------------------------------------
// Ranking

enum class Cls : std::uint8_t { physical, module, transport, device, config };

Cls classify(const IncidentInput& a, const Location& loc, const LocatedTopology* topo) {
  const std::string_view t = a.fault_type;
  // Optics and module temperature are the module's own fault only when the pattern blames the module (a
  // weak transmitter, a hot module); low receive power blames the link (the far laser, the fiber).
  if (loc.module || ((t == "optical_power_out_of_range" || t == "module_overtemperature") &&
                     a.role == RootCauseRole::module))
    return Cls::module;
  if (t == "retransmission_burst" || t == "cnp_surge" || t == "ecn_surge" || t == "pfc_storm" ||
      t == "pfc_deadlock" || t == "buffer_drops")
    return Cls::transport;
  if (t == "switch_reboot" || t == "switch_power_fault" || t == "switch_fan_fault") return Cls::device;
  if (t == "mtu_mismatch" || t == "qos_config_drift") return Cls::config;
  if (loc.device_level && loc.node != kNoNode && topo != nullptr &&
      topo->topology().node(loc.node).tier != Tier::kHost)
    return Cls::device;
  return Cls::physical;
}

// The grouping keys of a located alarm (see the contract): its link and the devices it touches.
// A module's own fault (a weak transmitter, a hot module) keys its link and its own device only: a failing
// far-end switch does not explain it. A transport symptom on a host port (retransmissions, congestion
// notifications) keys its link and its leaf, not its host: a host's symptoms on two rails are two paths'
// symptoms, and through the host they would chain two unrelated faults into one incident.
std::vector<std::string> keys_of(const LocatedTopology* topo, const Location& loc, bool own_device_only,
                                 bool symptom) {
  std::vector<std::string> keys;
  if (loc.link != kNoLink) {
    const auto& link = topo->topology().link(loc.link);
    const auto& lower = topo->topology().node(link.lower);
    keys.push_back("l:" + std::to_string(loc.link));
    const bool host_symptom = symptom && !loc.upper && lower.tier == Tier::kHost;
    if ((!own_device_only || !loc.upper) && !host_symptom) keys.push_back("d:" + lower.name);
    if (!own_device_only || loc.upper) keys.push_back("d:" + topo->topology().node(link.upper).name);
    return keys;
  }
  if (!loc.pair.empty()) {
    keys.push_back("p:" + loc.pair);
    keys.push_back("d:" + device_of(loc.pair_a));
    keys.push_back("d:" + device_of(loc.pair_b));
    return keys;
  }
  if (!loc.device.empty()) keys.push_back("d:" + loc.device);
  return keys;
}

std::vector<std::string> keys_of(const LocatedTopology* topo, const IncidentInput& a) {
  const Location loc = locate(topo, a);
  return keys_of(topo, loc, !loc.both_ends && classify(a, loc, topo) == Cls::module,
                 is_symptom_fault(a.fault_type));
}

struct EndAgg {
  std::vector<std::size_t> idx;
  std::size_t non_transport = 0;
  std::size_t transport = 0;
  std::size_t module = 0;
};

struct LinkAgg {
  LinkId link = kNoLink;
  std::string entity;        // link entity
  std::string end_names[2];  // port entities of the ends
  EndAgg ends[2];
  std::vector<std::size_t> both;  // alarms naming the link itself
  std::vector<std::size_t> all() const {
    std::vector<std::size_t> v = both;
    v.insert(v.end(), ends[0].idx.begin(), ends[0].idx.end());
    v.insert(v.end(), ends[1].idx.begin(), ends[1].idx.end());
    return v;
  }
};

struct NodeAgg {
  std::set<std::string> links;           // link keys with alarms on either end
  std::set<std::string> physical_links;  // of those, the links with an alarm that is no transport symptom
  std::vector<std::size_t> idx;
  std::vector<std::size_t> device_idx;  // alarms on the device itself
  std::size_t config = 0;
};

struct Builder {
  struct Cand {
    CandidateKind kind = CandidateKind::port;
    double strength = 0;
    std::vector<std::string> evidence;
    std::set<std::size_t> explains;
    LinkId link = kNoLink;
    NodeId node = kNoNode;
  };
  std::map<std::string, Cand> cands;

  void add(const std::string& entity, CandidateKind kind, double strength, std::string evidence,
           const std::vector<std::size_t>& explains, LinkId link = kNoLink, NodeId node = kNoNode) {
    auto [it, fresh] = cands.try_emplace(entity);
    auto& c = it->second;
    if (fresh) {
      c.kind = kind;
      c.link = link;
      c.node = node;
    }
    c.strength = std::max(c.strength, strength);
    if (!evidence.empty() && std::find(c.evidence.begin(), c.evidence.end(), evidence) == c.evidence.end())
      c.evidence.push_back(std::move(evidence));
    c.explains.insert(explains.begin(), explains.end());
  }
};

std::string types_of(std::span<const IncidentInput> alarms, const std::vector<std::size_t>& idx) {
  std::set<std::string> types;
  for (auto i : idx) types.insert(alarms[i].fault_type.empty() ? "fault" : alarms[i].fault_type);
  std::string out;
  for (const auto& t : types) {
    if (!out.empty()) out += ", ";
    out += t;
  }
  return out;
}

std::string percent(std::size_t k, std::size_t n) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.0f%%",
                n == 0 ? 0.0 : 100.0 * static_cast<double>(k) / static_cast<double>(n));
  return buf;
}

int severity_rank(FaultSeverity s) {
  return static_cast<int>(s);
}

// Whether the patterns of one end's alarms blame the link rather than the port: the role of its most severe
// alarms, by majority (a tie: the port). When only one end reports, its own port and the link explain the
// same alarms equally well; the pattern's author knows which (a flap, FEC or receive power: the link).
bool blames_link(std::span<const IncidentInput> alarms, const std::vector<std::size_t>& idx) {
  int top = -1;
  for (auto i : idx) top = std::max(top, severity_rank(alarms[i].severity));
  int link = 0;
  int other = 0;
  for (auto i : idx) {
    if (severity_rank(alarms[i].severity) != top) continue;
    (alarms[i].role == RootCauseRole::link ? link : other) += 1;
  }
  return link > other;
}

void link_candidates(const LinkAgg& l, std::span<const IncidentInput> alarms, Builder& b) {
  const auto all = l.all();
  const bool both_named = !l.both.empty();
  const std::size_t nt0 = l.ends[0].non_transport;
  const std::size_t nt1 = l.ends[1].non_transport;
  const std::size_t tr0 = l.ends[0].transport;
  const std::size_t tr1 = l.ends[1].transport;
  const bool any0 = !l.ends[0].idx.empty();
  const bool any1 = !l.ends[1].idx.empty();
  double s = 0;
  std::string ev;
  if (both_named || (nt0 > 0 && nt1 > 0)) {
    s = 0.9;
    ev = both_named
             ? "A pattern saw the fault on both ends of the link (" + types_of(alarms, l.both) + ")."
             : "Both ends of the link report faults: " + types_of(alarms, l.ends[0].idx) + " on " +
                   l.end_names[0] + "; " + types_of(alarms, l.ends[1].idx) + " on " + l.end_names[1] + ".";
  } else if ((nt0 > 0 && nt1 == 0 && tr1 > 0) || (nt1 > 0 && nt0 == 0 && tr0 > 0)) {
    const int bad = nt0 > 0 ? 0 : 1;
    s = 0.85;
    ev = l.end_names[bad] + " reports " + types_of(alarms, l.ends[bad].idx) + " while the far end " +
         l.end_names[1 - bad] + " sees only transport symptoms (" + types_of(alarms, l.ends[1 - bad].idx) +
         "): frames are lost on the link between them.";
  } else if ((nt0 > 0) != (nt1 > 0)) {
    const int bad = nt0 > 0 ? 0 : 1;
    s = blames_link(alarms, l.ends[bad].idx) ? 0.7 : 0.55;
    ev = "Only " + l.end_names[bad] + " reports (" + types_of(alarms, l.ends[bad].idx) +
         "); the cable or the far-end optic may still be at fault.";
  } else {
    s = blames_link(alarms, all) ? 0.45 : 0.35;
    ev = "Only transport symptoms (" + types_of(alarms, all) + ") on the link's ends.";
  }
  const bool mod0 = l.ends[0].module > 0;
  const bool mod1 = l.ends[1].module > 0;
  if (mod0 != mod1) {
    const int m = mod0 ? 0 : 1;
    b.add(l.end_names[m] + std::string(kModuleSuffix), CandidateKind::module, 0.92,
          "The transceiver of " + l.end_names[m] + " reports " + types_of(alarms, l.ends[m].idx) + " and " +
              l.end_names[1 - m] + "'s does not: a failing optic explains the symptoms on both ends.",
          all, l.link);
    s = std::min(s, 0.75);
  } else if (mod0 && mod1) {
    for (int e = 0; e < 2; ++e) {
      b.add(l.end_names[e] + std::string(kModuleSuffix), CandidateKind::module, 0.6,
            "The transceiver of " + l.end_names[e] + " reports " + types_of(alarms, l.ends[e].idx) +
                ", but so does the far end's: the fiber between them is more likely.",
            l.ends[e].idx, l.link);
    }
  }
  b.add(l.entity, CandidateKind::link, s, ev, all, l.link);
  for (int e = 0; e < 2; ++e) {
    const auto& end = l.ends[e];
    const auto& other = l.ends[1 - e];
    if (end.idx.empty()) continue;
    const bool link_blamed = blames_link(alarms, end.idx);
    if (end.non_transport > 0 && other.idx.empty() && l.both.empty()) {
      b.add(l.end_names[e], CandidateKind::port, link_blamed ? 0.55 : 0.7,
            "Only this port reports (" + types_of(alarms, end.idx) +
                "); its own configuration or optic is the first suspect.",
            end.idx, l.link);
    } else if (end.non_transport > 0 && other.non_transport == 0) {
      b.add(l.end_names[e], CandidateKind::port, 0.7,
            l.end_names[e] + " reports " + types_of(alarms, end.idx) +
                "; the far end's transport symptoms follow from frames lost here.",
            all, l.link);
    } else if (end.non_transport > 0) {
      b.add(l.end_names[e], CandidateKind::port, 0.45,
            "The port reports " + types_of(alarms, end.idx) + ", as does its far end.", end.idx, l.link);
    } else if (!any0 || !any1) {
      b.add(l.end_names[e], CandidateKind::port, link_blamed ? 0.35 : 0.45,
            "Only transport symptoms (" + types_of(alarms, end.idx) + ") on this port.", end.idx, l.link);
    }
  }
}

void node_candidate(const topology::Node& node, const NodeAgg& n, std::span<const IncidentInput> alarms,
                    Builder& b) {
  const std::size_t alarmed = n.links.size();
  if (node.tier == Tier::kHost) {
    const std::size_t total = std::max<std::size_t>(node.npus.size(), 1);
    if (alarmed < 2 && n.device_idx.empty()) return;
    const double r = std::min(1.0, static_cast<double>(alarmed) / static_cast<double>(total));
    double s = alarmed >= 2 ? 0.3 + 0.6 * r : 0.6;
    std::string ev = alarmed >= 2
                         ? std::to_string(alarmed) + " of the " + std::to_string(total) + " NPU ports of " +
                               node.name +
                               " have alarms: the host's NIC or its configuration (driver, firmware, "
                               "MTU, QoS) is what they share."
                         : node.name + " itself reports " + types_of(alarms, n.device_idx) + ".";
    if (n.config > 0) {
      s += 0.1;
      ev += " Configuration faults on the host: " + types_of(alarms, n.device_idx) + ".";
    }
    b.add(node.name, CandidateKind::host_nic, std::min(s, 0.98), ev, n.idx, kNoLink, node.id);
    return;
  }
  if (alarmed < 2 && n.device_idx.empty()) return;
  const std::size_t total = std::max<std::size_t>(node.uplinks.size() + node.downlinks.size(), 1);
  double s = 0.3;
  std::string ev;
  if (alarmed >= 2) {
    // Links with transport symptoms only (retransmissions, pauses, congestion notifications) weigh half: a
    // cause anywhere on their paths produces them; a port's own fault on a link is about this switch.
    const double weight = static_cast<double>(n.physical_links.size()) +
                          0.5 * static_cast<double>(alarmed - n.physical_links.size());
    const double r = weight / static_cast<double>(total);
    s += 0.5 * std::min(1.0, r / 0.25);
    ev = std::to_string(alarmed) + " of the " + std::to_string(total) + " links of " + node.name + " (" +
         percent(alarmed, total) + ") have alarms.";
  }
  if (!n.device_idx.empty()) {
    s = alarmed >= 2 ? s + 0.2 : 0.75;
    if (!ev.empty()) ev += " ";
    ev += node.name + " itself reports " + types_of(alarms, n.device_idx) + ".";
  }
  b.add(node.name, CandidateKind::switch_device, std::min(s, 0.98), ev, n.idx, kNoLink, node.id);
}

CandidateKind kind_of(RootCauseRole role) {
  switch (role) {
    case RootCauseRole::port:
      return CandidateKind::port;
    case RootCauseRole::link:
      return CandidateKind::link;
    case RootCauseRole::module:
      return CandidateKind::module;
    case RootCauseRole::switch_device:
      return CandidateKind::switch_device;
    case RootCauseRole::host_nic:
      return CandidateKind::host_nic;
  }
  return CandidateKind::port;
}

// A hint's entity in the candidates' spelling ("a<->b" -> "link:a|b").
std::string normalize_hint(const std::string& hint) {
  std::string a, b;
  if (split_link_entity(hint, a, b)) return pair_entity(a, b);
  return hint;
}

bool hint_names(const IncidentInput& a, const std::string& entity, CandidateKind kind) {
  if (a.root_cause.empty()) return false;
  const auto hint = normalize_hint(a.root_cause);
  if (hint == entity)
    return kind == kind_of(a.role) || a.role == RootCauseRole::link || kind == CandidateKind::port;
  // A host-NIC hint names "<host>/<device>"; the candidate is the host.
  return kind == CandidateKind::host_nic && a.role == RootCauseRole::host_nic &&
         hint.starts_with(entity + "/");
}

// How strongly an alarm names a fault, as opposed to reporting its symptoms: a device's own state, then a
// link's state, then optical power, then the physical layer, modules and configuration, then a PFC
// deadlock, then transport symptoms (retransmissions, CNPs, pauses, drops), which a cause upstream produces.
int evidence_rank(Cls cls, std::string_view fault_type) {
  // Within a class, the more specific diagnosis: light out of range explains the CRC and FEC errors it
  // causes; pause in both directions of a link (a deadlock) explains the storms each end sees.
  // A link that went down reads no light: its state explains the optics alarms at both ends.
  if (fault_type == "link_down" || fault_type == "link_flapping") return 5;
  if (fault_type == "optical_power_out_of_range") return 4;
  if (fault_type == "pfc_deadlock") return 2;
  switch (cls) {
    case Cls::device:
      return 6;
    case Cls::physical:
    case Cls::module:
    case Cls::config:  // as strong as the physical layer: a wrong MTU or PFC setting drops frames too
      return 3;
    case Cls::transport:
      return 1;
  }
  return 0;
}

// Routing sessions that went down (or flap) on two adjacent switches at once are one session: its link,
// unless a link alarm already names it. Explains both ends' session alarms. Answers the session alarms of
// the switches paired with exactly one neighbour: that link explains them, not the switch (one paired with
// several neighbours is their common end and keeps them).
std::set<std::size_t> session_link_candidates(const LocatedTopology& topo,
                                              std::span<const IncidentInput> alarms,
                                              const std::map<NodeId, NodeAgg>& nodes, Builder& b) {
  std::map<std::size_t, std::size_t> pairs_of;  // speaker index -> neighbours it paired with
  std::vector<std::pair<NodeId, std::vector<std::size_t>>> speakers;
  for (const auto& [id, n] : nodes) {
    std::vector<std::size_t> sessions;
    for (auto i : n.device_idx) {
      if (is_routing_fault(alarms[i].fault_type)) sessions.push_back(i);
    }
    if (!sessions.empty()) speakers.emplace_back(id, std::move(sessions));
  }
  const auto& t = topo.topology();
  for (std::size_t x = 0; x < speakers.size(); ++x) {
    for (std::size_t y = x + 1; y < speakers.size(); ++y) {
      const auto link = link_between(t, speakers[x].first, speakers[y].first);
      if (!link) continue;
      std::vector<std::size_t> idx = speakers[x].second;
      idx.insert(idx.end(), speakers[y].second.begin(), speakers[y].second.end());
      ++pairs_of[x];
      ++pairs_of[y];
      b.add(topo.link_entity(*link), CandidateKind::link, 0.85,
            "Both ends of the link lost their routing session at once (" + t.node(speakers[x].first).name +
                ", " + t.node(speakers[y].first).name + "): the session's path, this link, is the suspect.",
            idx, *link);
    }
  }
  std::set<std::size_t> paired;
  for (const auto& [speaker, n] : pairs_of) {
    if (n == 1) paired.insert(speakers[speaker].second.begin(), speakers[speaker].second.end());
  }
  return paired;
}

bool is_switch_port(const LocatedTopology* topo, const Location& loc) {
  if (topo == nullptr || loc.port_entity.empty() || loc.link == kNoLink) return false;
  const auto& link = topo->topology().link(loc.link);
  return topo->topology().node(loc.upper ? link.upper : link.lower).tier != Tier::kHost;
}

// A switch egress queue that marks ECN is where the congestion is: the receivers' ECN-marked packets and
// the CNPs they send back are its symptoms downstream, and the switches above those receivers only carry
// them. Each marking switch port explains every congestion notification of the incident.
void congestion_point_candidates(const std::map<std::string, LinkId>& marking_ports,
                                 std::span<const IncidentInput> alarms, Builder& b) {
  if (marking_ports.empty()) return;
  std::vector<std::size_t> notifications;
  for (std::size_t i = 0; i < alarms.size(); ++i) {
    if (alarms[i].fault_type == "ecn_surge" || alarms[i].fault_type == "cnp_surge")
      notifications.push_back(i);
  }
  for (const auto& [port, link] : marking_ports) {
    b.add(port, CandidateKind::port, 0.85,
          port + " marks ECN on its egress queue: the congestion point; the receivers' ECN marks and CNPs (" +
              std::to_string(notifications.size()) + " alarms) follow from it.",
          notifications, link);
  }
}

// The fault type a candidate is named by: among the alarms it explains, the type of the strongest evidence
// class, then the most severe, then the most frequent; a link_down alarm that flapped counts as
// link_flapping. A switch explained mostly by its links' physical
// alarms with nothing of its own (no reboot, power, fan or configuration alarm: it went silent) is
// "switch_down".
std::string main_fault_type(std::span<const IncidentInput> alarms, std::span<const Cls> classes,
                            const std::set<std::size_t>& idx, CandidateKind kind) {
  if (kind == CandidateKind::switch_device) {
    std::size_t own = 0;
    std::size_t links_lost = 0;
    for (auto i : idx) {
      if (classes[i] == Cls::device || classes[i] == Cls::config) ++own;
      if (classes[i] == Cls::physical || classes[i] == Cls::module) ++links_lost;
    }
    if (own == 0 && 2 * links_lost > idx.size()) return "switch_down";
  }
  // type -> (evidence class, max severity, count)
  std::map<std::string, std::tuple<int, int, std::size_t>> by_type;
  for (auto i : idx) {
    // A port that went down again and again (the alarm engine's flapping, or three raises of one alarm) is
    // a flapping link, whichever message each down came in.
    const bool flapped = alarms[i].fault_type == "link_down" && (alarms[i].flapping || alarms[i].count >= 3);
    const std::string_view type = flapped ? std::string_view("link_flapping") : alarms[i].fault_type;
    auto& e = by_type[std::string(type)];
    std::get<0>(e) = std::max(std::get<0>(e), evidence_rank(classes[i], type));
    std::get<1>(e) = std::max(std::get<1>(e), severity_rank(alarms[i].severity));
    ++std::get<2>(e);
  }
  std::string best;
  std::tuple<int, int, std::size_t> best_key{-1, -1, 0};
  for (const auto& [type, key] : by_type) {
    if (key > best_key) {
      best_key = key;
      best = type;
    }
  }
  return best;
}

}  // namespace

bool is_symptom_fault(std::string_view fault_type) {
  return fault_type == "retransmission_burst" || fault_type == "cnp_surge" || fault_type == "ecn_surge" ||
         fault_type == "buffer_drops" || is_routing_fault(fault_type);
}

bool is_environment_fault(std::string_view fault_type) {
  return fault_type == "switch_fan_fault" || fault_type == "switch_power_fault";
}

bool is_device_state_fault(std::string_view fault_type) {
  return fault_type == "switch_reboot" || is_environment_fault(fault_type);
}

bool is_routing_fault(std::string_view fault_type) {
  return fault_type == "routing_session_down" || fault_type == "routing_session_flapping";
}

std::optional<LinkId> link_between(const topology::Topology& t, NodeId a, NodeId b) {
  for (const auto* list : {&t.node(a).uplinks, &t.node(a).downlinks}) {
    for (LinkId l : *list) {
      const auto& link = t.link(l);
      if ((link.lower == a && link.upper == b) || (link.lower == b && link.upper == a)) return l;
    }
  }
  return std::nullopt;
}

std::vector<RootCauseCandidate> rank_candidates(const LocatedTopology* topo,
                                                std::span<const IncidentInput> alarms,
                                                std::size_t max_candidates) {
  std::vector<RootCauseCandidate> out;
  if (alarms.empty() || max_candidates == 0) return out;
  std::map<std::string, LinkAgg> links;
  std::map<NodeId, NodeAgg> nodes;
  std::map<std::string, std::vector<std::size_t>> loose;  // no topology place: by hint or entity
  std::vector<Cls> classes(alarms.size(), Cls::physical);
  std::size_t victims = 0;
  std::map<std::string, LinkId> marking_ports;  // switch ports whose egress queue marks ECN -> their link
  for (std::size_t i = 0; i < alarms.size(); ++i) {
    const auto& a = alarms[i];
    if (a.victim) {  // a symptom of the cause elsewhere: evidence of reach, not a candidate
      classes[i] = Cls::transport;
      ++victims;
      continue;
    }
    const Location loc = locate(topo, a);
    const Cls cls = classify(a, loc, topo);
    classes[i] = cls;
    if (a.fault_type == "ecn_surge" && is_switch_port(topo, loc)) {
      marking_ports.try_emplace(loc.port_entity, loc.link);
    }
    if (loc.link != kNoLink || !loc.pair.empty()) {
      const std::string key = loc.link != kNoLink ? "l:" + std::to_string(loc.link) : "p:" + loc.pair;
      auto [it, fresh] = links.try_emplace(key);
      auto& l = it->second;
      if (fresh) {
        l.link = loc.link;
        if (loc.link != kNoLink) {
          l.entity = topo->link_entity(loc.link);
          l.end_names[0] = topo->end_entity(loc.link, false);
          l.end_names[1] = topo->end_entity(loc.link, true);
        } else {
          l.entity = loc.pair;
          l.end_names[0] = std::min(loc.pair_a, loc.pair_b);
          l.end_names[1] = std::max(loc.pair_a, loc.pair_b);
        }
      }
      if (loc.both_ends) {
        l.both.push_back(i);
        ++l.ends[0].non_transport;
        ++l.ends[1].non_transport;
      } else {
        const int e = loc.link != kNoLink ? (loc.upper ? 1 : 0) : (loc.port_entity == l.end_names[1] ? 1 : 0);
        auto& end = l.ends[e];
        end.idx.push_back(i);
        if (cls == Cls::transport) {
          ++end.transport;
        } else {
          ++end.non_transport;
        }
        if (cls == Cls::module) ++end.module;
      }
      if (loc.link != kNoLink) {
        const auto& link = topo->topology().link(loc.link);
        for (NodeId n : {link.lower, link.upper}) {
          auto& agg = nodes[n];
          agg.links.insert(key);
          if (cls != Cls::transport) agg.physical_links.insert(key);
          agg.idx.push_back(i);
        }
        // A switch's own fault that names one of its ports (a QoS mismatch on Ethernet12) blames the
        // switch as well as the port.
        if (a.role == RootCauseRole::switch_device && (cls == Cls::config || cls == Cls::device)) {
          nodes[loc.upper ? link.upper : link.lower].device_idx.push_back(i);
        }
      }
      continue;
    }
    if (loc.node != kNoNode) {
      auto& agg = nodes[loc.node];
      agg.idx.push_back(i);
      if (loc.device_level || cls == Cls::device || cls == Cls::config) agg.device_idx.push_back(i);
      if (cls == Cls::config) ++agg.config;
      if (!loc.device_level) loose[loc.port_entity].push_back(i);
      continue;
    }
    loose[a.root_cause.empty() ? (loc.port_entity.empty() ? loc.device : loc.port_entity)
                               : normalize_hint(a.root_cause)]
        .push_back(i);
  }

  Builder b;
  for (const auto& [key, l] : links) link_candidates(l, alarms, b);
  std::set<std::size_t> paired_sessions;
  if (topo != nullptr) paired_sessions = session_link_candidates(*topo, alarms, nodes, b);
  if (topo != nullptr) {
    for (auto& [id, n] : nodes) {
      // A switch's routing sessions that went down with its neighbour's are their link's evidence.
      std::erase_if(n.device_idx, [&](std::size_t i) { return paired_sessions.contains(i); });
      node_candidate(topo->topology().node(id), n, alarms, b);
    }
  }
  congestion_point_candidates(marking_ports, alarms, b);
  for (const auto& [entity, idx] : loose) {
    if (entity.empty()) continue;
    const auto& first = alarms[idx.front()];
    const bool from_hint = !first.root_cause.empty() && normalize_hint(first.root_cause) == entity;
    CandidateKind kind = from_hint ? kind_of(first.role)
                                   : (entity.find('/') == std::string::npos ? CandidateKind::switch_device
                                                                            : CandidateKind::port);
    b.add(entity, kind, 0.5,
          from_hint ? "Not on the topology; the pattern names " + entity + " (" +
                          std::string(to_string(kind_of(first.role))) + ")."
                    : entity + " reports " + types_of(alarms, idx) + " (not on the topology).",
          idx);
  }

  // Pattern hints: a bonus for the candidate a hint names (evidence, not the answer).
  for (auto& [entity, c] : b.cands) {
    for (auto i : c.explains) {
      if (hint_names(alarms[i], entity, c.kind)) {
        c.strength += 0.08;
        c.evidence.push_back("Pattern " + alarms[i].fault_type + " names " + alarms[i].root_cause +
                             " as the root cause (" + std::string(to_string(kind_of(alarms[i].role))) + ").");
        break;
      }
    }
    bool flapping = false;
    for (auto i : c.explains) flapping = flapping || alarms[i].flapping;
    if (flapping) c.evidence.push_back("Some of its alarms are flapping.");
  }

  const double n = static_cast<double>(std::max<std::size_t>(1, alarms.size() - victims));
  for (auto& [entity, c] : b.cands) {
    RootCauseCandidate r;
    r.entity = entity;
    r.kind = c.kind;
    const double coverage = static_cast<double>(c.explains.size()) / n;
    const double score = std::min(1.0, c.strength) * (0.4 + 0.6 * coverage);
    r.score = std::round(std::clamp(score, 0.0, 1.0) * 1000.0) / 1000.0;
    r.evidence = std::move(c.evidence);
    r.evidence.push_back("Explains " + std::to_string(c.explains.size()) + " of the incident's " +
                         std::to_string(alarms.size()) + " alarms.");
    r.fault_type = main_fault_type(alarms, classes, c.explains, c.kind);
    for (auto i : c.explains) r.symptoms.push_back(alarms[i].alarm_id);
    std::sort(r.symptoms.begin(), r.symptoms.end());
    r.symptoms.erase(std::unique(r.symptoms.begin(), r.symptoms.end()), r.symptoms.end());
    r.link = c.link;
    r.node = c.node;
    out.push_back(std::move(r));
  }
  std::sort(out.begin(), out.end(), [](const RootCauseCandidate& x, const RootCauseCandidate& y) {
    if (x.score != y.score) return x.score > y.score;
    if (x.symptoms.size() != y.symptoms.size()) return x.symptoms.size() > y.symptoms.size();
    if (x.kind != y.kind) return x.kind < y.kind;
    return x.entity < y.entity;
  });
  if (out.size() > max_candidates) out.resize(max_candidates);
  for (std::size_t i = 0; i < out.size(); ++i) out[i].rank = static_cast<std::uint32_t>(i + 1);
  return out;
}

std::string recommended_action(const RootCauseCandidate& top, std::span<const IncidentInput> alarms) {
  const IncidentInput* best = nullptr;
  for (const auto& a : alarms) {
    if (a.action.empty()) continue;
    if (!std::binary_search(top.symptoms.begin(), top.symptoms.end(), a.alarm_id)) continue;
    if (best == nullptr || severity_rank(a.severity) > severity_rank(best->severity)) best = &a;
  }
  if (best != nullptr) return best->action;
  switch (top.kind) {
    case CandidateKind::link:
      return "Check the cable and the optics on both ends of " + top.entity +
             "; clean the connectors, reseat or replace the cable.";
    case CandidateKind::port:
      return "Check the configuration and counters of " + top.entity +
             "; reset the port, and replace its optic if the errors persist.";
    case CandidateKind::module:
      return "Replace the transceiver " + top.entity + " and clean the connectors on both ends.";
    case CandidateKind::switch_device:
      return "Check " + top.entity +
             " (power, fans, reboot and crash logs); drain it from the fabric before repairing it.";
    case CandidateKind::host_nic:
      return "Check the NIC and its configuration on " + top.entity +
             " (driver, firmware, MTU, QoS); drain the host's jobs before repairing it.";
  }
  return {};
}

// ---------------------------------------------------------------------------------------------------
// Correlator

struct Correlator::State {
  struct Live {
    Incident inc;
    std::unordered_map<std::string, std::size_t> pos;  // alarm id -> index in inc.alarms
    std::set<std::string> keys;
    std::unordered_map<std::string, std::size_t> key_alarms;  // key -> alarms holding it
    std::size_t active = 0;
    std::int64_t cleared_at = -1;  // event time the last active alarm cleared; -1 while any is active
    std::int64_t last_raise = 0;   // event time of its newest raise (device keys join only near it)
    // Event time of its first raise as seen here: an alarm raised again (count > 1) after its earlier brief
    // incident was dropped as noise starts a new one at this raise, not at the alarm's first_ms.
    std::int64_t raised_ms = 0;
    bool announced = false;      // opened was answered
    bool force_confirm = false;  // absorbed an announced incident
  };

  std::shared_ptr<const LocatedTopology> topo;
  CorrelatorOptions options;
  CorrelatorStats stats;
  std::uint64_t next_seq = 1;
  std::int64_t now = 0;
  std::size_t alarms = 0;
  std::map<std::uint64_t, Live> live;
  std::unordered_map<std::string, std::uint64_t> alarm_index;
  // Fingerprint -> the unresolved incident that holds an alarm of it: the same fault raised again (a new
  // alarm once the previous one cleared) goes back to that incident however long the gap, until it resolves.
  std::unordered_map<std::string, std::uint64_t> fingerprint_index;
  std::unordered_map<std::string, std::vector<std::uint64_t>> key_index;
  std::set<std::pair<std::int64_t, std::uint64_t>> deadlines;  // (event time, sequence), checked lazily
  // Incidents resolved within reopen_ms, by their alarms' fingerprints (reopen_resolved).
  struct Resolved {
    Incident incident;
    std::int64_t resolved_at = 0;
  };
  static constexpr std::size_t kMaxRecentlyResolved = 10'000;
  std::unordered_map<std::uint64_t, Resolved> recently_resolved;  // by sequence
  std::unordered_map<std::string, std::uint64_t>
      resolved_by_fingerprint;                                        // an alarm's fingerprint -> sequence
  std::deque<std::pair<std::int64_t, std::uint64_t>> resolved_order;  // (resolved at, sequence)

  void index_key(const std::string& key, std::uint64_t seq) {
    auto& v = key_index[key];
    if (std::find(v.begin(), v.end(), seq) == v.end()) v.push_back(seq);
  }
  void unindex_key(const std::string& key, std::uint64_t seq) {
    auto it = key_index.find(key);
    if (it == key_index.end()) return;
    std::erase(it->second, seq);
    if (it->second.empty()) key_index.erase(it);
  }

  void forget(std::uint64_t seq) {
    auto it = live.find(seq);
    if (it == live.end()) return;
    for (const auto& k : it->second.keys) unindex_key(k, seq);
    for (const auto& a : it->second.inc.alarms) {
      alarm_index.erase(a.alarm_id);
      if (auto f = fingerprint_index.find(a.fingerprint); f != fingerprint_index.end() && f->second == seq) {
        fingerprint_index.erase(f);
      }
    }
    alarms -= it->second.inc.alarms.size();
    live.erase(it);
  }

  // Whether the incident holds an active alarm of `device` itself (not of one of its ports): a device's
  // later alarm (sessions flapping after one went down) is the same device's story. Scans the incident's
  // alarms, but runs only for a device alarm that is not concurrent with the incident.
  static bool holds_own_alarm(const Live& l, const std::string& device) {
    return std::any_of(l.inc.alarms.begin(), l.inc.alarms.end(),
                       [&](const IncidentInput& a) { return a.entity == device && is_active(a); });
  }

  // Whether the incident holds an active alarm on this device as a whole (a reboot, a fan or a power
  // supply of it), whatever component of it the alarm names.
  static bool holds_device_state_alarm(const Live& l, std::string_view device) {
    return std::any_of(l.inc.alarms.begin(), l.inc.alarms.end(), [&](const IncidentInput& a) {
      return is_device_state_fault(a.fault_type) && device_of(a.entity) == device && is_active(a);
    });
  }

  // Whether at least half of the incident's alarms hold this key.
  static bool central(const Live& l, const std::string& key) {
    const auto n = l.key_alarms.find(key);
    return n != l.key_alarms.end() && 2 * n->second >= l.inc.alarms.size();
  }

  static bool only_environment(const Live& l) {
    return std::all_of(l.inc.alarms.begin(), l.inc.alarms.end(),
                       [](const IncidentInput& a) { return is_environment_fault(a.fault_type); });
  }

  // Whether the incident holds a cause for this symptom: a fault that is no symptom itself, or, for a
  // transport symptom (retransmissions, congestion notifications), a routing session going down or
  // flapping: every drop reshuffles the ECMP paths and loses what was in flight on them.
  static bool causes(const Live& l, const IncidentInput& symptom) {
    const bool transport = !is_routing_fault(symptom.fault_type);
    return std::any_of(l.inc.alarms.begin(), l.inc.alarms.end(), [&](const IncidentInput& a) {
      return !a.victim && (!is_symptom_fault(a.fault_type) || (transport && is_routing_fault(a.fault_type)));
    });
  }

  // The live incident whose cause takes this symptom as a victim's (CorrelatorOptions::symptom_of).
  // A cause stays one while its incident is joinable: victims' retransmission bursts are detected over a
  // window and keep coming for a while after the cause recovered. A pending cause is ranked first.
  std::optional<std::uint64_t> cause_of_victim(const IncidentInput& symptom) {
    if (!options.symptom_of || !is_symptom_fault(symptom.fault_type)) return std::nullopt;
    for (auto& [seq, l] : live) {
      if (!joinable(l) || !causes(l, symptom)) continue;
      if (l.inc.root_causes.empty()) rank(l);
      if (!l.inc.root_causes.empty() && options.symptom_of(symptom, l.inc)) return seq;
    }
    return std::nullopt;
  }

  // The incident this alarm's fault belonged to, resolved less than reopen_ms ago: live again under its id.
  std::optional<std::uint64_t> reopen_resolved(const IncidentInput& c) {
    if (c.fingerprint.empty()) return std::nullopt;
    const auto by_fp = resolved_by_fingerprint.find(c.fingerprint);
    if (by_fp == resolved_by_fingerprint.end()) return std::nullopt;
    const auto seq = by_fp->second;
    const auto it = recently_resolved.find(seq);
    if (it == recently_resolved.end()) return std::nullopt;
    Incident inc = std::move(it->second.incident);
    const std::int64_t resolved_at = it->second.resolved_at;
    forget_resolved(seq, inc);
    if (c.first_ms - resolved_at > options.reopen_ms || live.contains(seq)) return std::nullopt;
    for (const auto& a : inc.alarms) {
      if (alarm_index.contains(a.alarm_id)) return std::nullopt;
    }
    auto& l = live[seq];
    l.inc.id = inc.id;
    l.inc.sequence = seq;
    l.announced = true;
    for (const auto& a : inc.alarms) add_alarm(seq, l, a, keys_of(topo.get(), a));
    ++stats.reopened;
    return seq;
  }

  void remember_resolved(const Incident& inc) {
    if (options.reopen_ms <= 0) return;
    for (const auto& a : inc.alarms) {
      if (!a.fingerprint.empty()) resolved_by_fingerprint[a.fingerprint] = inc.sequence;
    }
    recently_resolved[inc.sequence] = {inc, now};
    resolved_order.emplace_back(now, inc.sequence);
    // Forget what is past the window (and, as a bound, beyond kMaxRecentlyResolved incidents).
    while (!resolved_order.empty() && (now - resolved_order.front().first > options.reopen_ms ||
                                       resolved_order.size() > kMaxRecentlyResolved)) {
      const auto [at, seq] = resolved_order.front();
      resolved_order.pop_front();
      // (an incident reopened and resolved again has a newer entry: this older one is stale)
      if (const auto it = recently_resolved.find(seq);
          it != recently_resolved.end() && it->second.resolved_at == at) {
        const Incident old = std::move(it->second.incident);
        forget_resolved(seq, old);
      }
    }
  }

  void forget_resolved(std::uint64_t seq, const Incident& inc) {
    for (const auto& a : inc.alarms) {
      const auto it = resolved_by_fingerprint.find(a.fingerprint);
      if (it != resolved_by_fingerprint.end() && it->second == seq) resolved_by_fingerprint.erase(it);
    }
    recently_resolved.erase(seq);
  }

  // A routing session alarm of a switch joins the live incident holding one of its neighbour's (the other
  // end of the session, adjacent on the topology) raised within the window: one session, one incident.
  std::optional<std::uint64_t> session_peer_incident(const IncidentInput& c) const {
    if (!topo || !is_routing_fault(c.fault_type)) return std::nullopt;
    const auto& t = topo->topology();
    const auto self = t.find(c.entity);
    if (!self) return std::nullopt;
    for (const auto& [seq, l] : live) {
      if (!joinable(l)) continue;
      for (const auto& a : l.inc.alarms) {
        if (!is_routing_fault(a.fault_type) || a.entity == c.entity) continue;
        if (std::llabs(a.first_ms - c.first_ms) > options.window_ms) continue;
        const auto other = t.find(a.entity);
        if (other && link_between(t, *self, *other)) return seq;
      }
    }
    return std::nullopt;
  }

  // Symptoms that joined an incident holding a cause (through a shared leaf, before or after the cause
  // arrived) are its victims when symptom_of says so, judged against the ranking of the causes alone.
  void mark_victims(Live& l) {
    if (!options.symptom_of) return;
    std::vector<IncidentInput> causes;
    bool open_symptom = false;
    for (const auto& a : l.inc.alarms) {
      if (!is_symptom_fault(a.fault_type)) {
        causes.push_back(a);
      } else if (!a.victim) {
        open_symptom = true;
      }
    }
    if (causes.empty() || !open_symptom) return;
    Incident cause;
    cause.id = l.inc.id;
    cause.first_ms = l.inc.first_ms;
    cause.root_causes = rank_candidates(topo.get(), causes, options.max_candidates);
    if (cause.root_causes.empty()) return;
    for (auto& a : l.inc.alarms) {
      if (!a.victim && is_symptom_fault(a.fault_type) && options.symptom_of(a, cause)) a.victim = true;
    }
  }

  // The other direction: a cause that arrives after its victims' symptoms opened incidents of their own
  // (a CRC burst is confirmed later than the retransmissions it causes) takes those incidents in, when
  // every alarm of one is a symptom it explains.
  void absorb_victims(std::uint64_t cause_seq, std::set<std::uint64_t>& touched,
                      std::vector<IncidentChange>& out) {
    if (!options.symptom_of) return;
    auto& cause = live.at(cause_seq);
    rank(cause);
    if (cause.inc.root_causes.empty()) return;
    std::vector<std::uint64_t> victims;
    for (auto& [seq, l] : live) {
      if (seq == cause_seq || !joinable(l) || l.inc.alarms.empty()) continue;
      const bool all_explained =
          std::all_of(l.inc.alarms.begin(), l.inc.alarms.end(), [&](const IncidentInput& a) {
            return is_symptom_fault(a.fault_type) && causes(cause, a) && options.symptom_of(a, cause.inc);
          });
      if (all_explained) victims.push_back(seq);
    }
    for (auto seq : victims) {
      for (auto& a : live.at(seq).inc.alarms) a.victim = true;
      merge(cause_seq, seq, out);
      touched.erase(seq);
    }
  }

  // A pending incident whose alarms all cleared within confirm_ms (publish drops it as noise) is gone by
  // the time an alarm raised confirm_ms after its first: whether the drop was already published depends
  // only on how the changes were batched, which must not decide what joins what.
  bool noise_before(const Live& l, std::int64_t t) const {
    return is_noise(l) && t - l.raised_ms >= options.confirm_ms;
  }

  bool joinable(const Live& l) const {
    return l.active > 0 || (l.cleared_at >= 0 && now - l.cleared_at <= options.window_ms);
  }

  void add_alarm(std::uint64_t seq, Live& l, const IncidentInput& a, const std::vector<std::string>& keys) {
    l.pos.emplace(a.alarm_id, l.inc.alarms.size());
    l.inc.alarms.push_back(a);
    alarm_index[a.alarm_id] = seq;
    if (!a.fingerprint.empty()) fingerprint_index[a.fingerprint] = seq;
    ++alarms;
    for (const auto& k : keys) {
      ++l.key_alarms[k];
      if (l.keys.insert(k).second) index_key(k, seq);
    }
    if (l.inc.alarms.size() == 1) {
      l.inc.first_ms = a.first_ms;
      l.inc.last_ms = std::max(a.first_ms, a.last_ms);
      l.raised_ms = a.count > 1 ? std::max(a.first_ms, a.last_ms) : a.first_ms;
    } else {
      l.inc.first_ms = std::min(l.inc.first_ms, a.first_ms);
      l.inc.last_ms = std::max({l.inc.last_ms, a.first_ms, a.last_ms});
    }
    if (is_active(a)) {
      ++l.active;
      l.cleared_at = -1;
      l.last_raise = std::max(l.last_raise, a.first_ms);
    }
  }

  // Takes an inactive alarm out of its incident (its keys stay indexed until the incident ends).
  void remove_alarm(Live& l, const std::string& alarm_id, const LocatedTopology* located) {
    const auto it = l.pos.find(alarm_id);
    if (it == l.pos.end()) return;
    const std::size_t i = it->second;
    for (const auto& k : keys_of(located, l.inc.alarms[i])) {
      if (auto n = l.key_alarms.find(k); n != l.key_alarms.end() && n->second > 0) --n->second;
    }
    l.pos.erase(it);
    alarm_index.erase(alarm_id);
    // Its fingerprint no longer leads here: once this incident ends, the entry would name a dead incident.
    if (auto f = fingerprint_index.find(l.inc.alarms[i].fingerprint);
        f != fingerprint_index.end() && f->second == l.inc.sequence) {
      fingerprint_index.erase(f);
    }
    --alarms;
    if (i + 1 != l.inc.alarms.size()) {
      l.inc.alarms[i] = std::move(l.inc.alarms.back());
      l.pos[l.inc.alarms[i].alarm_id] = i;
    }
    l.inc.alarms.pop_back();
  }

  // Moves `from` into `into` (the older); answers the merged change when `from` had been answered.
  void merge(std::uint64_t into_seq, std::uint64_t from_seq, std::vector<IncidentChange>& out) {
    auto& into = live.at(into_seq);
    auto node = live.extract(from_seq);
    auto& from = node.mapped();
    for (const auto& k : from.keys) {
      unindex_key(k, from_seq);
      if (into.keys.insert(k).second) index_key(k, into_seq);
    }
    for (const auto& [k, n] : from.key_alarms) into.key_alarms[k] += n;
    for (auto& a : from.inc.alarms) {
      alarm_index[a.alarm_id] = into_seq;
      if (!a.fingerprint.empty()) fingerprint_index[a.fingerprint] = into_seq;
      into.pos.emplace(a.alarm_id, into.inc.alarms.size());
      into.inc.first_ms = std::min(into.inc.first_ms, a.first_ms);
      into.inc.last_ms = std::max(into.inc.last_ms, a.last_ms);
      into.inc.alarms.push_back(std::move(a));
    }
    into.active += from.active;
    into.last_raise = std::max(into.last_raise, from.last_raise);
    into.raised_ms = std::min(into.raised_ms, from.raised_ms);
    if (into.active > 0) into.cleared_at = -1;
    if (from.announced) {
      into.force_confirm = true;
      auto snap = std::make_shared<Incident>();
      snap->id = from.inc.id;
      snap->sequence = from.inc.sequence;
      snap->first_ms = from.inc.first_ms;
      snap->last_ms = from.inc.last_ms;
      snap->resolved = true;
      out.push_back({IncidentChangeKind::merged, std::move(snap), into.inc.id});
    }
    ++stats.merged;
  }

  void rank(Live& l) {
    mark_victims(l);
    l.inc.root_causes = rank_candidates(topo.get(), l.inc.alarms, options.max_candidates);
    l.inc.recommended_action = l.inc.root_causes.empty()
                                   ? std::string()
                                   : recommended_action(l.inc.root_causes.front(), l.inc.alarms);
  }

  // Confirmed once an alarm has been active for confirm_ms, however many alarms it holds: a port that
  // flaps for a second makes both ends (and their several lines) report, and that is still noise.
  bool confirmable(const Live& l) const {
    if (l.force_confirm) return true;
    if (l.active == 0) return false;
    return now - l.raised_ms >= options.confirm_ms;
  }

  // A pending incident whose alarms all cleared within confirm_ms of its raise: a port that flapped for a
  // second. One that went down three times (or the alarm engine saw flapping) is no noise.
  bool is_noise(const Live& l) const {
    return !l.announced && !l.force_confirm && l.active == 0 &&
           l.cleared_at - l.raised_ms < options.confirm_ms &&
           std::none_of(l.inc.alarms.begin(), l.inc.alarms.end(),
                        [](const IncidentInput& a) { return a.flapping || a.count >= 3; });
  }

  // Answers the touched incidents: opened (newly confirmed), updated, or nothing (pending).
  void publish(const std::set<std::uint64_t>& touched, std::vector<IncidentChange>& out) {
    for (auto seq : touched) {
      auto it = live.find(seq);
      if (it == live.end()) continue;
      auto& l = it->second;
      if (!l.announced) {
        // Noise: cleared within confirm_ms of its raise (is_noise). Alarms that were active longer before the
        // clear arrived (nothing moved the clock in between) were no noise: the incident opens, then
        // resolves.
        if (is_noise(l)) {
          ++stats.noise_dropped;
          forget(seq);
          continue;
        }
        if (l.active > 0 && !confirmable(l)) {
          deadlines.emplace(l.raised_ms + options.confirm_ms, seq);
          continue;
        }
        l.announced = true;
        ++stats.opened;
        rank(l);
        out.push_back({IncidentChangeKind::opened, std::make_shared<Incident>(l.inc), {}});
      } else {
        rank(l);
        out.push_back({IncidentChangeKind::updated, std::make_shared<Incident>(l.inc), {}});
      }
      if (l.active == 0) deadlines.emplace(l.cleared_at + options.hold_ms, seq);
    }
  }

  void expire(std::vector<IncidentChange>& out) {
    std::set<std::uint64_t> confirm;
    while (!deadlines.empty() && deadlines.begin()->first <= now) {
      const auto seq = deadlines.begin()->second;
      deadlines.erase(deadlines.begin());
      auto it = live.find(seq);
      if (it == live.end()) continue;
      auto& l = it->second;
      if (!l.announced) {
        confirm.insert(seq);
        continue;
      }
      if (l.active == 0 && l.cleared_at >= 0 && l.cleared_at + options.hold_ms <= now) {
        l.inc.resolved = true;
        rank(l);
        ++stats.resolved;
        out.push_back({IncidentChangeKind::resolved, std::make_shared<Incident>(l.inc), {}});
        remember_resolved(l.inc);
        forget(seq);
      }
    }
    publish(confirm, out);
  }
};

Correlator::Correlator(std::shared_ptr<const LocatedTopology> topo, CorrelatorOptions options)
    : s_(std::make_unique<State>()) {
  s_->topo = std::move(topo);
  s_->options = std::move(options);
  s_->options.hold_ms = std::max(s_->options.hold_ms, s_->options.window_ms);
  s_->next_seq = std::max<std::uint64_t>(s_->options.first_sequence, 1);
}

Correlator::~Correlator() = default;

std::vector<IncidentChange> Correlator::apply(std::span<const IncidentInput> changes) {
  std::vector<IncidentChange> out;
  std::set<std::uint64_t> touched;
  auto& s = *s_;
  for (const auto& c : changes) {
    ++s.stats.changes;
    s.now = std::max({s.now, c.first_ms, c.last_ms});
    const bool active = is_active(c);
    if (auto it = s.alarm_index.find(c.alarm_id); it != s.alarm_index.end()) {
      const std::uint64_t seq = it->second;  // `it` dies when the alarm leaves as noise
      auto& l = s.live.at(seq);
      auto& held = l.inc.alarms[l.pos.at(c.alarm_id)];
      const bool was = is_active(held);
      held = c;
      l.inc.first_ms = std::min(l.inc.first_ms, c.first_ms);
      l.inc.last_ms = std::max({l.inc.last_ms, c.first_ms, c.last_ms});
      if (was && !active) {
        if (--l.active == 0) l.cleared_at = end_of(c);
        // Noise inside an incident: an alarm raised once that cleared within confirm_ms (a port that
        // flapped and came back) is no symptom of the incident's fault; it leaves the incident, as a lone
        // one would be dropped. Its own incident, when it had none other, is the lone case (publish).
        if (c.count <= 1 && !c.suppressed && end_of(c) - c.first_ms < s.options.confirm_ms &&
            l.inc.alarms.size() >= 2) {
          s.remove_alarm(l, c.alarm_id, s.topo.get());
        }
      } else if (!was && active) {
        ++l.active;
        l.cleared_at = -1;
        l.last_raise = std::max(l.last_raise, c.first_ms);
      }
      touched.insert(seq);
      continue;
    }
    if (!active) {
      ++s.stats.ignored;
      continue;
    }
    if (s.alarms >= s.options.max_alarms) {
      ++s.stats.dropped_alarms;
      continue;
    }
    const auto keys = keys_of(s.topo.get(), c);
    // An alarm on a device as a whole (a reboot, a power supply) keys that device only.
    const bool device_alarm = keys.size() == 1 && keys.front().starts_with("d:");
    const bool environment = is_environment_fault(c.fault_type);
    std::vector<std::uint64_t> hits;
    if (auto f = s.fingerprint_index.find(c.fingerprint); f != s.fingerprint_index.end()) {
      if (s.live.contains(f->second)) hits.push_back(f->second);
    }
    for (const auto& k : keys) {
      auto kit = s.key_index.find(k);
      if (kit == s.key_index.end()) continue;
      // A shared link joins a live incident; a shared device only one raised within the window of this
      // alarm (concurrent), so long-lived faults under one switch do not chain unrelated ones together.
      // A device's own alarm also joins a live incident whose alarms touch that device at least twice
      // (a reboot logged after its links went down explains them, however long it took to come back).
      const bool device_key = k.starts_with("d:");
      for (auto seq : kit->second) {
        const auto& l = s.live.at(seq);
        if (!s.joinable(l) || s.noise_before(l, c.first_ms)) continue;
        // A fan or a power supply failing (redundancy left) touches no frame: it is nobody's cause or
        // victim. It shares only an incident about its own device as a whole (the reboot it led to), and an
        // incident of such faults alone takes only that device's own alarms, not its ports' faults.
        if (device_key && environment && !State::holds_device_state_alarm(l, std::string_view(k).substr(2))) {
          continue;
        }
        if (device_key && !environment && !device_alarm && State::only_environment(l)) continue;
        // A port's fault joins through a shared switch only an incident about that switch: one whose alarms
        // mostly touch it (a leaf going silent, a spine rebooting). A leaf's uplink to a rebooting spine is
        // in the spine's incident; a host link failing under that leaf at the same time is a fault of its
        // own.
        if (device_key && !device_alarm && !State::central(l, k)) continue;
        if (device_key && std::llabs(c.first_ms - l.last_raise) > s.options.window_ms) {
          const auto n = l.key_alarms.find(k);
          const bool explains =
              device_alarm && l.active > 0 &&
              ((n != l.key_alarms.end() && n->second >= 2) || State::holds_own_alarm(l, c.entity));
          if (!explains) continue;
        }
        hits.push_back(seq);
      }
    }
    std::sort(hits.begin(), hits.end());
    hits.erase(std::unique(hits.begin(), hits.end()), hits.end());
    IncidentInput folded;
    const IncidentInput* adding = &c;
    if (hits.empty()) {
      if (const auto cause = s.cause_of_victim(c)) {
        hits.push_back(*cause);
        folded = c;
        folded.victim = true;
        adding = &folded;
      } else if (const auto session = s.session_peer_incident(c)) {
        hits.push_back(*session);
      } else if (const auto reopened = s.reopen_resolved(c)) {
        hits.push_back(*reopened);
      }
    }
    std::uint64_t target = 0;
    if (hits.empty()) {
      target = s.next_seq++;
      auto& l = s.live[target];
      l.inc.sequence = target;
      l.inc.id = "inc-" + std::to_string(target);
    } else {
      target = hits.front();
      for (std::size_t i = 1; i < hits.size(); ++i) {
        s.merge(target, hits[i], out);
        touched.erase(hits[i]);
      }
    }
    s.add_alarm(target, s.live.at(target), *adding, keys);
    touched.insert(target);
    if (!is_symptom_fault(c.fault_type) || is_routing_fault(c.fault_type))
      s.absorb_victims(target, touched, out);
  }
  s.publish(touched, out);
  s.expire(out);
  return out;
}

std::vector<IncidentChange> Correlator::advance(std::int64_t now_ms) {
  std::vector<IncidentChange> out;
  s_->now = std::max(s_->now, now_ms);
  s_->expire(out);
  return out;
}

std::vector<IncidentChange> Correlator::set_topology(std::shared_ptr<const LocatedTopology> topo) {
  auto& s = *s_;
  s.topo = std::move(topo);
  s.key_index.clear();
  std::vector<IncidentChange> out;
  for (auto& [seq, l] : s.live) {
    l.keys.clear();
    l.key_alarms.clear();
    for (const auto& a : l.inc.alarms) {
      for (auto& k : keys_of(s.topo.get(), a)) {
        ++l.key_alarms[k];
        if (l.keys.insert(k).second) s.index_key(k, seq);
      }
    }
    if (!l.announced) continue;
    auto before = l.inc.root_causes;
    s.rank(l);
    bool same = before.size() == l.inc.root_causes.size();
    for (std::size_t i = 0; same && i < before.size(); ++i) {
      same = before[i].entity == l.inc.root_causes[i].entity && before[i].score == l.inc.root_causes[i].score;
    }
    if (!same) out.push_back({IncidentChangeKind::updated, std::make_shared<Incident>(l.inc), {}});
  }
  return out;
}

void Correlator::restore(const Incident& incident) {
  auto& s = *s_;
  if (incident.resolved || incident.alarms.empty()) return;
  for (const auto& l : s.live) {
    if (l.second.inc.id == incident.id) return;
  }
  for (const auto& a : incident.alarms) {
    if (s.alarm_index.contains(a.alarm_id)) return;
  }
  const auto seq = incident.sequence;
  if (seq == 0 || s.live.contains(seq)) return;
  auto& l = s.live[seq];
  l.inc.id = incident.id;
  l.inc.sequence = seq;
  l.announced = true;
  for (const auto& a : incident.alarms) {
    s.add_alarm(seq, l, a, keys_of(s.topo.get(), a));
  }
  if (l.active == 0) {
    l.cleared_at = l.inc.last_ms;
    s.deadlines.emplace(l.cleared_at + s.options.hold_ms, seq);
  }
  s.rank(l);
  s.next_seq = std::max(s.next_seq, seq + 1);
  s.now = std::max(s.now, l.inc.last_ms);
}

const Incident* Correlator::find(std::string_view id) const {
  const auto prefix = std::string_view("inc-");
  if (!id.starts_with(prefix)) return nullptr;
  std::uint64_t seq = 0;
  for (char ch : id.substr(prefix.size())) {
    if (ch < '0' || ch > '9') return nullptr;
    seq = seq * 10 + static_cast<std::uint64_t>(ch - '0');
  }
  auto it = s_->live.find(seq);
  return it == s_->live.end() || it->second.inc.id != id ? nullptr : &it->second.inc;
}

std::size_t Correlator::live_incidents() const {
  return s_->live.size();
}
std::size_t Correlator::live_alarms() const {
  return s_->alarms;
}
std::int64_t Correlator::now_ms() const {
  return s_->now;
}
std::uint64_t Correlator::next_sequence() const {
  return s_->next_seq;
}
const CorrelatorStats& Correlator::stats() const {
  return s_->stats;
}

}  // namespace hsns::brain
