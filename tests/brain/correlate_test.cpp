// Root cause and job impact (lib/brain/correlate.h, job_impact.h) on generated Clos topologies: each
// fault shape the ranking knows (both ends of a link, a switch, a host's ports, a module, far-end-only
// symptoms, a single port), independent faults, an alarm storm, noise, the incident lifecycle, merges,
// restore, no topology, and the exact ranks of the jobs an incident hits.
#include "brain/correlate.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdio>
#include <memory>
#include <string>
#include <vector>

#include "brain/job_impact.h"
#include "topology/generator.h"

namespace hsns::brain {
namespace {

using topology::LinkId;
using topology::Tier;

// 64 hosts x 8 NPUs in two SUs of 32 (16 rail leaves), 8 spines: host001..host064, leaf000..leaf015.
std::shared_ptr<const LocatedTopology> clos(std::uint32_t hosts = 64, double fabric_gbps = 0) {
  topology::ClosParams p;
  p.hosts = hosts;
  p.npus_per_host = 8;
  p.hosts_per_su = 32;
  p.spines_per_plane = 8;
  p.fabric_link_gbps = fabric_gbps;
  auto t = topology::generate_clos(p);
  EXPECT_TRUE(t.has_value());
  return std::make_shared<LocatedTopology>(std::make_shared<topology::Topology>(std::move(*t)));
}

std::string host(int n) {
  char buf[16];
  std::snprintf(buf, sizeof buf, "host%03d", n);
  return buf;
}

LinkId npu_link(const LocatedTopology& lt, int host_no, std::uint32_t npu) {
  const auto& t = lt.topology();
  return t.npu({*t.find(host(host_no)), npu})->link;
}

// "<host>/<netdev>" and the leaf end "<leaf>/<port>" of a host's NPU link.
std::string host_end(const LocatedTopology& lt, int h, std::uint32_t npu) {
  return lt.end_entity(npu_link(lt, h, npu), false);
}
std::string leaf_end(const LocatedTopology& lt, int h, std::uint32_t npu) {
  return lt.end_entity(npu_link(lt, h, npu), true);
}

// A leaf's first uplink and the spine at its top.
struct Uplink {
  LinkId link;
  std::string spine;
};
Uplink first_uplink(const LocatedTopology& lt, const char* leaf) {
  const auto& t = lt.topology();
  const LinkId link = t.node(*t.find(leaf)).uplinks.front();
  return {link, t.node(t.link(link).upper).name};
}

IncidentInput alarm(std::string id, std::string type, std::string entity, std::int64_t t_ms,
                    IncidentInput::State state = IncidentInput::State::raised) {
  IncidentInput a;
  a.alarm_id = std::move(id);
  a.fingerprint = a.alarm_id;
  a.fault_type = std::move(type);
  a.entity = std::move(entity);
  a.first_ms = t_ms;
  a.last_ms = t_ms;
  a.state = state;
  return a;
}

IncidentInput cleared(IncidentInput a, std::int64_t t_ms) {
  a.state = IncidentInput::State::cleared;
  a.last_ms = t_ms;
  return a;
}

CorrelatorOptions fast() {
  CorrelatorOptions o;
  o.confirm_ms = 0;
  return o;
}

// The last answered snapshot of each incident id.
struct Seen {
  std::map<std::string, std::shared_ptr<const Incident>> last;
  std::map<std::string, IncidentChangeKind> kind;
  std::size_t opened = 0;
  void take(const std::vector<IncidentChange>& changes) {
    for (const auto& c : changes) {
      last[c.incident->id] = c.incident;
      kind[c.incident->id] = c.kind;
      if (c.kind == IncidentChangeKind::opened) ++opened;
    }
  }
  const Incident& only() const {
    EXPECT_EQ(last.size(), 1u);
    return *last.begin()->second;
  }
};

const RootCauseCandidate& top(const Incident& i) {
  EXPECT_FALSE(i.root_causes.empty());
  return i.root_causes.front();
}

TEST(Correlate, BothEndsOfALinkBlameTheLink) {
  auto lt = clos();
  Correlator c(lt, fast());
  Seen seen;
  std::vector<IncidentInput> in = {alarm("a1", "crc_errors", host_end(*lt, 1, 0), 1000),
                                   alarm("a2", "crc_errors", leaf_end(*lt, 1, 0), 1200)};
  seen.take(c.apply(in));
  const auto& inc = seen.only();
  EXPECT_EQ(inc.alarms.size(), 2u);
  const auto& t = top(inc);
  EXPECT_EQ(t.kind, CandidateKind::link);
  EXPECT_EQ(t.entity, lt->link_entity(npu_link(*lt, 1, 0)));
  EXPECT_EQ(t.entity, "link:" + host_end(*lt, 1, 0) + "|" + leaf_end(*lt, 1, 0));
  EXPECT_GE(t.score, 0.85);
  EXPECT_EQ(t.symptoms, (std::vector<std::string>{"a1", "a2"}));
  EXPECT_EQ(t.fault_type, "crc_errors");
  EXPECT_EQ(t.rank, 1u);
  EXPECT_FALSE(t.evidence.empty());
  ASSERT_GE(inc.root_causes.size(), 2u);
  EXPECT_LT(inc.root_causes[1].score, t.score);
  EXPECT_FALSE(inc.recommended_action.empty());
}

TEST(Correlate, ManyPortsOfOneSwitchBlameTheSwitch) {
  auto lt = clos();
  Correlator c(lt, fast());
  Seen seen;
  std::vector<IncidentInput> in;
  for (int h = 1; h <= 20; ++h)
    in.push_back(alarm("p" + std::to_string(h), "link_down", leaf_end(*lt, h, 3), 5000 + h));
  in.push_back(alarm("r", "switch_reboot", "leaf003", 5000));
  seen.take(c.apply(in));
  const auto& inc = seen.only();
  EXPECT_EQ(inc.alarms.size(), 21u);
  EXPECT_EQ(top(inc).entity, "leaf003");
  EXPECT_EQ(top(inc).kind, CandidateKind::switch_device);
  EXPECT_EQ(top(inc).symptoms.size(), 21u);
  EXPECT_GE(top(inc).score, 0.9);
  // Without the switch's own log the ratio alone still ranks it first.
  Correlator c2(lt, fast());
  Seen seen2;
  in.pop_back();
  seen2.take(c2.apply(in));
  EXPECT_EQ(top(seen2.only()).entity, "leaf003");
}

TEST(Correlate, AllPortsOfOneHostBlameItsNic) {
  auto lt = clos();
  Correlator c(lt, fast());
  Seen seen;
  std::vector<IncidentInput> in;
  for (std::uint32_t n = 0; n < 8; ++n)
    in.push_back(alarm("h" + std::to_string(n), "link_down", host_end(*lt, 5, n), 7000 + n));
  seen.take(c.apply(in));
  const auto& inc = seen.only();
  EXPECT_EQ(top(inc).entity, "host005");
  EXPECT_EQ(top(inc).kind, CandidateKind::host_nic);
  EXPECT_GE(top(inc).score, 0.85);
  EXPECT_EQ(top(inc).symptoms.size(), 8u);
}

TEST(Correlate, ModuleAlarmOnOneEndBlamesThatModule) {
  auto lt = clos();
  Correlator c(lt, fast());
  Seen seen;
  std::vector<IncidentInput> in = {
      alarm("m", "optical_power_out_of_range", leaf_end(*lt, 3, 0) + "/module", 1000),
      alarm("e1", "crc_errors", host_end(*lt, 3, 0), 1100),
      alarm("e2", "crc_errors", leaf_end(*lt, 3, 0), 1150)};
  seen.take(c.apply(in));
  const auto& inc = seen.only();
  EXPECT_EQ(top(inc).kind, CandidateKind::module);
  EXPECT_EQ(top(inc).entity, leaf_end(*lt, 3, 0) + "/module");
  EXPECT_EQ(top(inc).symptoms.size(), 3u);
  EXPECT_EQ(inc.root_causes[1].kind, CandidateKind::link);
}

TEST(Correlate, SinglePortBlamesThePortThenItsLink) {
  auto lt = clos();
  Correlator c(lt, fast());
  Seen seen;
  seen.take(c.apply(std::vector{alarm("s", "crc_errors", host_end(*lt, 4, 2), 1000)}));
  const auto& inc = seen.only();
  EXPECT_EQ(top(inc).entity, host_end(*lt, 4, 2));
  EXPECT_EQ(top(inc).kind, CandidateKind::port);
  ASSERT_GE(inc.root_causes.size(), 2u);
  EXPECT_EQ(inc.root_causes[1].kind, CandidateKind::link);
}

TEST(Correlate, ASwitchConfigFaultNamingAPortBlamesTheSwitch) {
  auto lt = clos();
  Correlator c(lt, fast());
  Seen seen;
  const std::string port = leaf_end(*lt, 4, 2);
  const std::string leaf = port.substr(0, port.find('/'));
  auto a = alarm("q", "qos_config_drift", port, 1000);
  a.root_cause = leaf;
  a.role = RootCauseRole::switch_device;
  seen.take(c.apply(std::vector{a}));
  const auto& inc = seen.only();
  EXPECT_EQ(top(inc).entity, leaf);
  EXPECT_EQ(top(inc).kind, CandidateKind::switch_device);
  // A port fault of the same port (no switch role) still blames the port.
  Correlator d(lt, fast());
  Seen other;
  other.take(d.apply(std::vector{alarm("s", "crc_errors", port, 1000)}));
  EXPECT_EQ(top(other.only()).entity, port);
}

TEST(Correlate, FarEndOnlySymptomsBlameTheLink) {
  auto lt = clos();
  Correlator c(lt, fast());
  Seen seen;
  // The host sees retransmissions and CNPs; only the switch port has physical errors.
  seen.take(c.apply(std::vector{alarm("r", "retransmission_burst", host_end(*lt, 6, 1), 1000),
                                alarm("n", "cnp_surge", host_end(*lt, 6, 1), 1010),
                                alarm("x", "crc_errors", leaf_end(*lt, 6, 1), 1500)}));
  const auto& inc = seen.only();
  EXPECT_EQ(top(inc).kind, CandidateKind::link);
  EXPECT_EQ(top(inc).entity, lt->link_entity(npu_link(*lt, 6, 1)));
  EXPECT_EQ(top(inc).symptoms.size(), 3u);
  EXPECT_EQ(inc.root_causes[1].entity, leaf_end(*lt, 6, 1));
}

TEST(Correlate, IndependentFaultsAtOnceAreSeparateIncidents) {
  auto lt = clos();
  Correlator c(lt, fast());
  Seen seen;
  std::vector<IncidentInput> in = {alarm("l1", "crc_errors", host_end(*lt, 2, 0), 1000),
                                   alarm("l2", "crc_errors", leaf_end(*lt, 2, 0), 1000)};
  for (std::uint32_t n = 0; n < 8; ++n)
    in.push_back(alarm("h" + std::to_string(n), "link_down", host_end(*lt, 40, n), 1000));
  seen.take(c.apply(in));
  ASSERT_EQ(seen.last.size(), 2u);
  std::set<std::string> tops;
  for (const auto& [id, inc] : seen.last) tops.insert(top(*inc).entity);
  EXPECT_EQ(tops, (std::set<std::string>{lt->link_entity(npu_link(*lt, 2, 0)), "host040"}));
  EXPECT_EQ(c.live_incidents(), 2u);
}

TEST(Correlate, StormFromOneSpineIsOneIncidentRankedSpineFirst) {
  auto lt = clos(256, 400);  // 8 SUs, 64 leaves; 4 parallel 400G links per leaf-spine pair
  const auto& t = lt->topology();
  const auto spine = *t.find("spine00");
  const auto& down = t.node(spine).downlinks;
  ASSERT_GE(down.size(), 100u);
  Correlator c(lt, fast());
  Seen seen;
  std::vector<IncidentInput> in;
  for (std::size_t i = 0; i < 100; ++i) {
    in.push_back(alarm("s" + std::to_string(i), "link_down", lt->end_entity(down[i], true),
                       10'000 + static_cast<std::int64_t>(i)));
    in.push_back(alarm("l" + std::to_string(i), "link_down", lt->end_entity(down[i], false),
                       10'050 + static_cast<std::int64_t>(i)));
  }
  // One change at a time, as alarms arrive.
  for (const auto& a : in) seen.take(c.apply(std::span(&a, 1)));
  ASSERT_EQ(seen.last.size(), 1u);
  const auto& inc = seen.only();
  EXPECT_EQ(inc.alarms.size(), 200u);
  EXPECT_EQ(top(inc).entity, "spine00");
  EXPECT_EQ(top(inc).symptoms.size(), 200u);
  EXPECT_GT(top(inc).score, inc.root_causes[1].score + 0.2);
  EXPECT_EQ(seen.opened, 1u);
}

TEST(Correlate, NoiseThatClearsQuicklyOpensNoIncident) {
  auto lt = clos();
  Correlator c(lt);  // confirm_ms 5 s
  Seen seen;
  auto a = alarm("n", "crc_errors", host_end(*lt, 9, 3), 1000);
  seen.take(c.apply(std::vector{a}));
  seen.take(c.apply(std::vector{cleared(a, 2500)}));
  seen.take(c.advance(1'000'000));
  EXPECT_TRUE(seen.last.empty());
  EXPECT_EQ(c.stats().noise_dropped, 1u);
  EXPECT_EQ(c.live_incidents(), 0u);
  // One that stays: confirmed once active 5 s (event time), here by advance.
  auto b = alarm("b", "crc_errors", host_end(*lt, 9, 3), 2'000'000);
  seen.take(c.apply(std::vector{b}));
  EXPECT_TRUE(seen.last.empty());
  seen.take(c.advance(2'005'000));
  ASSERT_EQ(seen.last.size(), 1u);
  EXPECT_EQ(seen.kind.begin()->second, IncidentChangeKind::opened);
}

TEST(Correlate, LifecycleHoldWindowAndStableIds) {
  auto lt = clos();
  CorrelatorOptions o = fast();
  o.window_ms = 60'000;
  o.hold_ms = 120'000;
  Correlator c(lt, o);
  Seen seen;
  auto a = alarm("a", "link_flapping", host_end(*lt, 1, 1), 1000);
  seen.take(c.apply(std::vector{a}));
  const std::string id = seen.only().id;
  EXPECT_EQ(id, "inc-1");
  seen.take(c.apply(std::vector{cleared(a, 10'000)}));
  EXPECT_EQ(seen.kind[id], IncidentChangeKind::updated);
  // Raised again within the window: the same incident.
  seen.take(c.apply(std::vector{alarm("a", "link_flapping", host_end(*lt, 1, 1), 30'000)}));
  EXPECT_EQ(seen.last.size(), 1u);
  EXPECT_EQ(seen.only().active_alarms(), 1u);
  // A related alarm joins it.
  seen.take(c.apply(std::vector{alarm("b", "crc_errors", leaf_end(*lt, 1, 1), 31'000)}));
  EXPECT_EQ(seen.only().alarms.size(), 2u);
  seen.take(c.apply(std::vector{cleared(alarm("a", "link_flapping", host_end(*lt, 1, 1), 30'000), 40'000),
                                cleared(alarm("b", "crc_errors", leaf_end(*lt, 1, 1), 31'000), 41'000)}));
  EXPECT_EQ(seen.kind[id], IncidentChangeKind::updated);
  seen.take(c.advance(41'000 + 119'999));
  EXPECT_EQ(seen.kind[id], IncidentChangeKind::updated);
  seen.take(c.advance(41'000 + 120'000));
  EXPECT_EQ(seen.kind[id], IncidentChangeKind::resolved);
  EXPECT_TRUE(seen.last[id]->resolved);
  EXPECT_EQ(c.live_incidents(), 0u);
  EXPECT_EQ(c.live_alarms(), 0u);
  // After resolution the same port opens a new incident with a new id.
  seen.take(c.apply(std::vector{alarm("a", "link_flapping", host_end(*lt, 1, 1), 500'000)}));
  EXPECT_TRUE(seen.last.contains("inc-2"));
  EXPECT_EQ(c.stats().resolved, 1u);
}

TEST(Correlate, ClearedBeyondTheWindowIsNotJoined) {
  auto lt = clos();
  CorrelatorOptions o = fast();
  o.window_ms = 10'000;
  o.hold_ms = 120'000;
  Correlator c(lt, o);
  Seen seen;
  auto a = alarm("a", "crc_errors", host_end(*lt, 1, 1), 1000);
  seen.take(c.apply(std::vector{a}));
  seen.take(c.apply(std::vector{cleared(a, 2000)}));
  seen.take(c.apply(std::vector{alarm("b", "crc_errors", leaf_end(*lt, 1, 1), 30'000)}));
  EXPECT_EQ(seen.last.size(), 2u);
}

TEST(Correlate, TheSameFaultRaisedAgainJoinsItsUnresolvedIncident) {
  auto lt = clos();
  CorrelatorOptions o = fast();
  o.window_ms = 60'000;
  o.hold_ms = 120'000;
  o.reopen_ms = 0;  // reopening a resolved incident has its own test
  Correlator c(lt, o);
  Seen seen;
  // A switch's routing session drops every 90 s: each drop is a new alarm (the alarm engine's reopen window
  // passed) of the same fingerprint, 60 s after the last clear: beyond window_ms, within hold_ms.
  const std::string leaf = leaf_end(*lt, 1, 1).substr(0, leaf_end(*lt, 1, 1).find('/'));
  auto session = [&](std::string id, std::int64_t t_ms) {
    auto a = alarm(std::move(id), "routing_session_down", leaf, t_ms);
    a.fingerprint = "bgp";
    return a;
  };
  for (int k = 0; k < 3; ++k) {
    auto a = session("bgp-" + std::to_string(k), std::int64_t{k} * 90'000);
    seen.take(c.apply(std::vector{a}));
    seen.take(c.apply(std::vector{cleared(a, std::int64_t{k} * 90'000 + 30'000)}));
  }
  ASSERT_EQ(seen.last.size(), 1u);
  EXPECT_EQ(seen.only().alarms.size(), 3u);
  // Resolved (hold_ms after the last clear): the next drop is a new incident.
  seen.take(c.advance(210'000 + 120'000));
  EXPECT_EQ(c.stats().resolved, 1u);
  seen.take(c.apply(std::vector{session("bgp-3", 400'000)}));
  EXPECT_TRUE(seen.last.contains("inc-2"));
  // A device's later alarm joins the active incident of that device's own earlier alarm, however late:
  // the pattern that counts the session drops fires minutes after the first one.
  seen.take(c.apply(std::vector{alarm("flapping", "routing_session_flapping", leaf, 600'000)}));
  EXPECT_FALSE(seen.last.contains("inc-3"));
  EXPECT_EQ(seen.last.at("inc-2")->alarms.size(), 2u);
}

// An alarm that left its incident as noise, then the incident ended: the same fault raised again opens a new
// incident (its fingerprint no longer names the ended one; this crashed the aggregator under an alarm flood).
TEST(Correlate, TheSameFaultAfterItsNoiseLeftAnEndedIncidentOpensANewOne) {
  auto lt = clos();
  CorrelatorOptions o;  // confirm_ms 5 s
  o.hold_ms = 60'000;
  Correlator c(lt, o);
  Seen seen;
  auto a = alarm("a", "link_down", host_end(*lt, 1, 0), 1000);
  auto b = alarm("b", "link_down", host_end(*lt, 1, 1), 1000);
  seen.take(c.apply(std::vector{a, b}));
  seen.take(c.apply(std::vector{cleared(b, 2000)}));  // noise: leaves the incident
  seen.take(c.advance(10'000));
  seen.take(c.apply(std::vector{cleared(a, 20'000)}));
  seen.take(c.advance(1'000'000));  // resolved, then forgotten
  EXPECT_EQ(c.live_incidents(), 0u);
  auto again = alarm("b-again", "link_down", host_end(*lt, 1, 1), 2'000'000);
  again.fingerprint = "b";
  auto other = alarm("c", "link_down", host_end(*lt, 1, 2), 2'000'000);
  seen.take(c.apply(std::vector{again, other}));
  seen.take(c.advance(2'010'000));
  EXPECT_EQ(c.live_incidents(), 1u);
}

TEST(Correlate, AnAlarmBridgingTwoIncidentsMergesThem) {
  auto lt = clos();
  Correlator c(lt, fast());
  Seen seen;
  // Two hosts' ports on different leaves, then a spine alarm... simplest bridge: a link alarm whose ends
  // are on both devices: host002 (incident 1) and leaf0, where incident 2 lives.
  seen.take(c.apply(std::vector{alarm("x", "crc_errors", host_end(*lt, 2, 3), 1000)}));  // host002, leaf3
  seen.take(c.apply(std::vector{alarm("y", "crc_errors", leaf_end(*lt, 7, 0), 1000)}));  // leaf0, host007
  ASSERT_EQ(seen.last.size(), 2u);
  // host002's NPU 0 link ends on leaf0: keys host002 and leaf0 hit both incidents.
  std::vector<IncidentChange> changes =
      c.apply(std::vector{alarm("z", "crc_errors", host_end(*lt, 2, 0), 1100)});
  ASSERT_EQ(changes.size(), 2u);
  EXPECT_EQ(changes[0].kind, IncidentChangeKind::merged);
  EXPECT_EQ(changes[0].incident->id, "inc-2");
  EXPECT_EQ(changes[0].merged_into, "inc-1");
  EXPECT_EQ(changes[1].incident->id, "inc-1");
  EXPECT_EQ(changes[1].incident->alarms.size(), 3u);
  EXPECT_EQ(c.live_incidents(), 1u);
  EXPECT_EQ(c.stats().merged, 1u);
}

TEST(Correlate, UpdatesAndSuppressionAndUnknownClears) {
  auto lt = clos();
  Correlator c(lt, fast());
  Seen seen;
  auto a = alarm("a", "crc_errors", host_end(*lt, 1, 1), 1000);
  seen.take(c.apply(std::vector{cleared(a, 900)}));  // never raised: ignored
  EXPECT_EQ(c.stats().ignored, 1u);
  auto s = a;
  s.suppressed = true;
  seen.take(c.apply(std::vector{s}));  // suppressed raise: ignored
  EXPECT_EQ(c.stats().ignored, 2u);
  EXPECT_TRUE(seen.last.empty());
  seen.take(c.apply(std::vector{a}));
  auto ack = a;
  ack.state = IncidentInput::State::acknowledged;
  ack.count = 7;
  ack.last_ms = 5000;
  seen.take(c.apply(std::vector{ack}));
  EXPECT_EQ(seen.only().alarms[0].count, 7u);
  EXPECT_EQ(seen.only().last_ms, 5000);
  EXPECT_EQ(seen.only().active_alarms(), 1u);
  ack.suppressed = true;  // blacklisted later: counts as cleared
  seen.take(c.apply(std::vector{ack}));
  EXPECT_EQ(seen.only().active_alarms(), 0u);
}

TEST(Correlate, WithoutTopologyGroupsByDeviceAndPeer) {
  Correlator c(nullptr, fast());
  Seen seen;
  auto a = alarm("a", "crc_errors", "sw1/Ethernet4", 1000);
  a.peer = "sw2/Ethernet9";
  auto b = alarm("b", "crc_errors", "sw2/Ethernet9", 1000);
  b.peer = "sw1/Ethernet4";
  auto other = alarm("o", "switch_fan_fault", "sw9", 1000);
  other.root_cause = "sw9";
  other.role = RootCauseRole::switch_device;
  seen.take(c.apply(std::vector{a, b, other}));
  ASSERT_EQ(seen.last.size(), 2u);
  const auto& first = *seen.last.at("inc-1");
  EXPECT_EQ(top(first).entity, "link:sw1/Ethernet4|sw2/Ethernet9");
  EXPECT_EQ(top(first).kind, CandidateKind::link);
  const auto& second = *seen.last.at("inc-2");
  EXPECT_EQ(top(second).entity, "sw9");
  EXPECT_EQ(top(second).kind, CandidateKind::switch_device);
}

TEST(Correlate, PatternHintIsEvidenceNotTheAnswer) {
  auto lt = clos();
  Correlator c(lt, fast());
  Seen seen;
  // A single port whose pattern blames the link: the hint lifts the link above the port.
  auto a = alarm("a", "crc_errors", host_end(*lt, 4, 2), 1000);
  a.root_cause = host_end(*lt, 4, 2) + "<->" + leaf_end(*lt, 4, 2);
  a.role = RootCauseRole::link;
  seen.take(c.apply(std::vector{a}));
  const auto& inc = seen.only();
  const auto link = std::find_if(inc.root_causes.begin(), inc.root_causes.end(),
                                 [](const auto& r) { return r.kind == CandidateKind::link; });
  ASSERT_NE(link, inc.root_causes.end());
  EXPECT_TRUE(std::any_of(link->evidence.begin(), link->evidence.end(),
                          [](const auto& e) { return e.find("names") != std::string::npos; }));
  // A hint naming a switch does not beat both ends of a link.
  Correlator c2(lt, fast());
  Seen seen2;
  auto x = alarm("x", "crc_errors", host_end(*lt, 1, 0), 1000);
  auto y = alarm("y", "crc_errors", leaf_end(*lt, 1, 0), 1000);
  y.root_cause = "leaf000";
  y.role = RootCauseRole::switch_device;
  seen2.take(c2.apply(std::vector{x, y}));
  EXPECT_EQ(top(seen2.only()).kind, CandidateKind::link);
}

TEST(Correlate, RestoreKeepsIdsAndSequence) {
  auto lt = clos();
  Incident stored;
  stored.id = "inc-41";
  stored.sequence = 41;
  stored.alarms = {alarm("a", "crc_errors", host_end(*lt, 1, 0), 1000)};
  Correlator c(lt, fast());
  c.restore(stored);
  EXPECT_EQ(c.live_incidents(), 1u);
  ASSERT_NE(c.find("inc-41"), nullptr);
  EXPECT_EQ(c.next_sequence(), 42u);
  Seen seen;
  seen.take(c.apply(std::vector{alarm("b", "crc_errors", leaf_end(*lt, 1, 0), 2000)}));
  EXPECT_EQ(seen.only().id, "inc-41");
  EXPECT_EQ(top(seen.only()).kind, CandidateKind::link);
  seen.take(c.apply(std::vector{alarm("c", "crc_errors", host_end(*lt, 30, 5), 2000)}));
  EXPECT_TRUE(seen.last.contains("inc-42"));
}

TEST(Correlate, TopologyChangeReranks) {
  Correlator c(nullptr, fast());
  Seen seen;
  auto lt = clos();
  std::vector<IncidentInput> in;
  for (int h = 1; h <= 12; ++h)
    in.push_back(alarm("p" + std::to_string(h), "link_down", leaf_end(*lt, h, 2), 1000));
  seen.take(c.apply(in));
  ASSERT_EQ(seen.last.size(), 1u);  // all on device leaf2
  seen.take(c.set_topology(lt));
  EXPECT_EQ(top(seen.only()).entity, "leaf002");
}

TEST(Correlate, AlarmCapIsCounted) {
  auto lt = clos();
  CorrelatorOptions o = fast();
  o.max_alarms = 3;
  Correlator c(lt, o);
  std::vector<IncidentInput> in;
  for (int h = 1; h <= 5; ++h)
    in.push_back(alarm("p" + std::to_string(h), "link_down", host_end(*lt, h + 10, 0), 1000));
  (void)c.apply(in);
  EXPECT_EQ(c.live_alarms(), 3u);
  EXPECT_EQ(c.stats().dropped_alarms, 2u);
}

// ---------------------------------------------------------------------------------------------------
// Job impact

// A job over hosts (all 8 NPUs each), ranks numbered host by host.
JobDescription job(std::string name, const std::vector<int>& hosts,
                   const std::vector<std::uint32_t>& npus = {0, 1, 2, 3, 4, 5, 6, 7}) {
  JobDescription j;
  j.id = name;
  j.name = std::move(name);
  std::uint32_t r = 0;
  for (int h : hosts) {
    for (auto n : npus) j.ranks.push_back({r++, host(h), n});
  }
  return j;
}

std::vector<RootCauseCandidate> one(const std::string& entity, CandidateKind kind, LinkId link,
                                    topology::NodeId node) {
  RootCauseCandidate c;
  c.rank = 1;
  c.entity = entity;
  c.kind = kind;
  c.score = 0.9;
  c.link = link;
  c.node = node;
  return {c};
}

// ---- Fault types named by their evidence, victims, routing sessions, reopening ----

TEST(Correlate, AFaultIsNamedByItsStrongestEvidenceNotItsMostNumerousSymptom) {
  auto lt = clos();
  Correlator c(lt, fast());
  Seen seen;
  // CRC errors on a host port and the retransmissions they cause on the same port: crc_errors.
  std::vector<IncidentInput> in = {alarm("x1", "retransmission_burst", host_end(*lt, 2, 1), 1000),
                                   alarm("x2", "retransmission_burst", host_end(*lt, 2, 1), 1000),
                                   alarm("x3", "crc_errors", host_end(*lt, 2, 1), 1100)};
  in[1].alarm_id = "x2";
  in[1].fingerprint = "x2";
  seen.take(c.apply(in));
  EXPECT_EQ(top(seen.only()).fault_type, "crc_errors");
}

TEST(Correlate, ASwitchExplainedOnlyByItsLinksWentSilent) {
  auto lt = clos();
  Correlator c(lt, fast());
  Seen seen;
  std::vector<IncidentInput> in;
  for (int h = 1; h <= 12; ++h)
    in.push_back(alarm("d" + std::to_string(h), "link_down", host_end(*lt, h, 3), 5000 + h));
  seen.take(c.apply(in));
  EXPECT_EQ(top(seen.only()).entity, "leaf003");
  EXPECT_EQ(top(seen.only()).fault_type, "switch_down");
  // Its own reboot line names it a reboot.
  seen.take(c.apply(std::vector{alarm("r", "switch_reboot", "leaf003", 6000)}));
  EXPECT_EQ(top(seen.only()).fault_type, "switch_reboot");
}

TEST(Correlate, VictimsSymptomsFoldIntoTheirCauseAndAreNotCandidates) {
  auto lt = clos();
  auto options = fast();
  // The caller knows which hosts run a job crossing the cause: here host 40 (another SU) does.
  options.symptom_of = [](const IncidentInput& symptom, const Incident&) {
    return symptom.entity.starts_with("host040/");
  };
  Correlator c(lt, options);
  Seen seen;
  const auto uplink = lt->topology().node(*lt->topology().find("leaf002")).uplinks.front();
  seen.take(c.apply(std::vector{alarm("u", "link_down", lt->end_entity(uplink, false), 1000)}));
  std::vector<IncidentInput> victims;
  for (std::uint32_t n = 0; n < 8; ++n)
    victims.push_back(alarm("v" + std::to_string(n), "retransmission_burst", host_end(*lt, 40, n), 3000 + n));
  victims.push_back(alarm("other", "retransmission_burst", host_end(*lt, 10, 0), 3100));  // not a victim
  seen.take(c.apply(victims));
  ASSERT_EQ(seen.last.size(), 2u);
  const auto& cause = *seen.last.at("inc-1");
  EXPECT_EQ(cause.alarms.size(), 9u);
  EXPECT_EQ(std::count_if(cause.alarms.begin(), cause.alarms.end(), [](const auto& a) { return a.victim; }),
            8);
  EXPECT_EQ(top(cause).fault_type, "link_down");
  for (const auto& rc : cause.root_causes) EXPECT_FALSE(rc.entity.starts_with("host040")) << rc.entity;
  EXPECT_EQ(top(*seen.last.at("inc-2")).entity, host_end(*lt, 10, 0));

  // The other way round: symptoms first, their cause later takes their incident in.
  Correlator later(lt, options);
  Seen seen2;
  seen2.take(later.apply(std::vector{alarm("v", "retransmission_burst", host_end(*lt, 40, 0), 1000)}));
  seen2.take(later.apply(std::vector{alarm("u", "link_down", lt->end_entity(uplink, false), 1500)}));
  EXPECT_EQ(seen2.kind.at("inc-1"), IncidentChangeKind::merged);
  EXPECT_EQ(top(*seen2.last.at("inc-2")).fault_type, "link_down");
  EXPECT_EQ(seen2.last.at("inc-2")->alarms.size(), 2u);
}

TEST(Correlate, BothEndsOfARoutingSessionDownAreOneIncidentOnTheirLink) {
  auto lt = clos();
  Correlator c(lt, fast());
  Seen seen;
  const auto [uplink, spine] = first_uplink(*lt, "leaf002");
  seen.take(c.apply(std::vector{alarm("b1", "routing_session_down", "leaf002", 1000)}));
  seen.take(c.apply(std::vector{alarm("b2", "routing_session_down", spine, 1400)}));
  const auto& inc = seen.only();
  EXPECT_EQ(inc.alarms.size(), 2u);
  EXPECT_EQ(top(inc).entity, lt->link_entity(uplink));
  EXPECT_EQ(top(inc).fault_type, "routing_session_down");
  // A session alarm of a device the topology does not know is another story.
  seen.take(c.apply(std::vector{alarm("b3", "routing_session_down", "leaf020", 1500)}));
  EXPECT_EQ(seen.last.size(), 2u);
}

TEST(Correlate, ASessionFlappingWithOneNeighbourIsItsLinkNotTheSwitch) {
  auto lt = clos();
  Correlator c(lt, fast());
  Seen seen;
  const auto [uplink, spine] = first_uplink(*lt, "leaf002");
  // Both ends' sessions flap, and two hosts under the leaf retransmit meanwhile.
  seen.take(c.apply(std::vector{alarm("d1", "routing_session_down", "leaf002", 1000),
                                alarm("d2", "routing_session_down", spine, 1100),
                                alarm("f1", "routing_session_flapping", "leaf002", 2000),
                                alarm("f2", "routing_session_flapping", spine, 2100),
                                alarm("r1", "retransmission_burst", host_end(*lt, 1, 2), 2200),
                                alarm("r2", "retransmission_burst", host_end(*lt, 2, 2), 2300)}));
  const auto& inc = seen.only();
  EXPECT_EQ(top(inc).entity, lt->link_entity(uplink));
  ASSERT_GE(inc.root_causes.size(), 2u);
  EXPECT_GT(top(inc).score, inc.root_causes[1].score + 0.05);  // not a tie that would widen job impact
}

TEST(Correlate, AHostLinkUnderALeafIsNotPartOfTheSpineRebootAtTheSameTime) {
  auto lt = clos(256, 400);
  const auto& t = lt->topology();
  const auto& down = t.node(*t.find("spine00")).downlinks;
  Correlator c(lt, fast());
  Seen seen;
  std::vector<IncidentInput> in = {alarm("r", "switch_reboot", "spine00", 10'000)};
  for (std::size_t i = 0; i < 40; ++i) {
    in.push_back(alarm("s" + std::to_string(i), "link_down", lt->end_entity(down[i], false), 10'100));
  }
  seen.take(c.apply(in));
  // A host NIC port under the first of those leaves goes down meanwhile.
  const auto leaf = t.node(t.link(down[0]).lower).name;
  std::string host_port;
  for (int h = 1; h <= 256 && host_port.empty(); ++h) {
    for (std::uint32_t n = 0; n < 8 && host_port.empty(); ++n) {
      if (t.node(t.link(npu_link(*lt, h, n)).upper).name == leaf) host_port = host_end(*lt, h, n);
    }
  }
  ASSERT_FALSE(host_port.empty());
  seen.take(c.apply(std::vector{alarm("h", "link_down", host_port, 10'500)}));
  EXPECT_EQ(seen.last.size(), 2u);
}

TEST(Correlate, AFaultBackWithinTheReopenWindowReopensItsIncident) {
  auto lt = clos();
  auto options = fast();
  options.hold_ms = 60'000;
  options.window_ms = 60'000;
  options.reopen_ms = 300'000;
  Correlator c(lt, options);
  Seen seen;
  auto down = alarm("s1", "routing_session_down", "leaf002", 1000);
  seen.take(c.apply(std::vector{down}));
  seen.take(c.apply(std::vector{cleared(down, 2000)}));
  seen.take(c.advance(70'000));
  EXPECT_EQ(seen.kind.at("inc-1"), IncidentChangeKind::resolved);
  // The same session down again two minutes later (the alarm engine's new alarm, same fingerprint).
  auto again = alarm("s1-again", "routing_session_down", "leaf002", 180'000);
  again.fingerprint = down.fingerprint;
  seen.take(c.apply(std::vector{again}));
  EXPECT_EQ(seen.last.size(), 1u);
  EXPECT_EQ(seen.kind.at("inc-1"), IncidentChangeKind::updated);
  EXPECT_FALSE(seen.last.at("inc-1")->resolved);
  EXPECT_EQ(seen.last.at("inc-1")->alarms.size(), 2u);
  EXPECT_EQ(c.stats().reopened, 1u);
  // Beyond the window it is a new incident.
  seen.take(c.apply(std::vector{cleared(again, 181'000)}));
  seen.take(c.advance(300'000));
  auto late = alarm("s1-late", "routing_session_down", "leaf002", 700'000);
  late.fingerprint = down.fingerprint;
  seen.take(c.apply(std::vector{late}));
  EXPECT_EQ(seen.last.size(), 2u);
}

TEST(Correlate, TwoAlarmsOfAOneSecondFlapAreStillNoise) {
  auto lt = clos();
  CorrelatorOptions options;  // confirm_ms 5 s
  Correlator c(lt, options);
  Seen seen;
  auto host_down = alarm("h", "link_down", host_end(*lt, 3, 0), 10'000);
  auto leaf_down = alarm("l", "link_down", leaf_end(*lt, 3, 0), 10'100);
  seen.take(c.apply(std::vector{host_down, leaf_down}));
  seen.take(c.apply(std::vector{cleared(host_down, 10'900), cleared(leaf_down, 11'000)}));
  seen.take(c.advance(30'000));
  EXPECT_EQ(seen.opened, 0u);
  EXPECT_EQ(c.stats().noise_dropped, 1u);
}

TEST(Correlate, WhatJoinsDoesNotDependOnHowChangesWereBatched) {
  // A one-second flap on a leaf port (noise), then 20 s later a real fault on another port of that leaf.
  auto lt = clos();
  const auto flap = alarm("f", "link_down", leaf_end(*lt, 3, 0), 10'000);
  const auto weak = alarm("o", "optical_power_out_of_range", leaf_end(*lt, 5, 0), 30'000);
  const auto run = [&](bool one_batch) {
    Correlator c(lt, CorrelatorOptions{});  // confirm_ms 5 s
    Seen seen;
    seen.take(c.apply(std::vector{flap}));
    if (one_batch) {
      seen.take(c.apply(std::vector{cleared(flap, 10'900), weak}));
    } else {
      seen.take(c.apply(std::vector{cleared(flap, 10'900)}));
      seen.take(c.advance(20'000));
      seen.take(c.apply(std::vector{weak}));
    }
    seen.take(c.advance(60'000));
    EXPECT_EQ(c.stats().noise_dropped, 1u);
    return seen.only().alarms.size();
  };
  EXPECT_EQ(run(true), 1u);  // the flap was gone before the fault: not one of its symptoms
  EXPECT_EQ(run(false), 1u);
}

TEST(Correlate, ABriefFlapAgainMinutesLaterIsStillNoiseAndTheThirdIsAFault) {
  auto lt = clos();
  Correlator c(lt, CorrelatorOptions{});  // confirm_ms 5 s
  Seen seen;
  // The alarm engine keeps one alarm for the port and counts its raises; each flap lasts a second.
  auto flap = alarm("f", "link_down", leaf_end(*lt, 3, 0), 10'000);
  for (std::uint32_t n = 1; n <= 3; ++n) {
    const std::int64_t at = 10'000 + (n - 1) * 200'000;
    flap.count = n;
    flap.state = IncidentInput::State::raised;
    flap.last_ms = at;
    seen.take(c.apply(std::vector{flap}));
    seen.take(c.apply(std::vector{cleared(flap, at + 1'000)}));
    seen.take(c.advance(at + 100'000));
    EXPECT_EQ(seen.opened, n < 3 ? 0u : 1u) << "after flap " << n;
  }
  EXPECT_EQ(c.stats().noise_dropped, 2u);
}

TEST(Correlate, AFanOrPowerSupplyIsItsOwnIncidentUnlessItsSwitchFailsWithIt) {
  auto lt = clos();
  Correlator c(lt, fast());
  Seen seen;
  // A host NIC port down (its leaf's port reports too) and, at the same time, one power supply of that leaf.
  seen.take(c.apply(std::vector{alarm("h", "link_down", host_end(*lt, 7, 2), 1000),
                                alarm("l", "link_down", leaf_end(*lt, 7, 2), 1000),
                                alarm("p", "switch_power_fault", "leaf002/psu2", 1500)}));
  ASSERT_EQ(seen.last.size(), 2u);
  // A later port fault of that leaf does not join the power supply's incident either.
  seen.take(c.apply(std::vector{alarm("c", "crc_errors", leaf_end(*lt, 9, 2), 2000)}));
  for (const auto& [id, inc] : seen.last) {
    const bool power = std::any_of(inc->alarms.begin(), inc->alarms.end(), [](const IncidentInput& a) {
      return a.fault_type == "switch_power_fault";
    });
    if (power) EXPECT_EQ(inc->alarms.size(), 1u);
  }
  // The leaf rebooting joins its power supply's incident: a fault of the switch as a whole.
  Correlator d(lt, fast());
  Seen other;
  other.take(d.apply(std::vector{alarm("p", "switch_power_fault", "leaf002/psu2", 1500),
                                 alarm("r", "switch_reboot", "leaf002", 1600)}));
  EXPECT_EQ(other.only().alarms.size(), 2u);
}

TEST(Correlate, AHostsSymptomsOnTwoRailsDoNotChainTwoFaults) {
  auto lt = clos();
  Correlator c(lt, fast());
  Seen seen;
  // Two faults on two rails; one host's retransmissions on both rails.
  seen.take(c.apply(std::vector{alarm("a", "optical_power_out_of_range", leaf_end(*lt, 4, 3), 1000),
                                alarm("b", "link_down", host_end(*lt, 1, 0), 1200),
                                alarm("v3", "retransmission_burst", host_end(*lt, 2, 3), 1300),
                                alarm("v0", "retransmission_burst", host_end(*lt, 2, 0), 1400)}));
  EXPECT_EQ(seen.last.size(), 2u);
}

TEST(Correlate, ASwitchPortMarkingEcnIsTheCongestionPoint) {
  auto lt = clos();
  const auto& t = lt->topology();
  const auto uplink = t.node(*t.find("leaf003")).uplinks.front();
  const auto spine_port = lt->end_entity(uplink, true);
  Correlator c(lt, fast());
  Seen seen;
  std::vector<IncidentInput> in = {alarm("e", "ecn_surge", spine_port, 1000)};
  for (int h = 1; h <= 6; ++h) {
    in.push_back(alarm("r" + std::to_string(h), "ecn_surge", host_end(*lt, h, 3), 1100 + h));
    in.push_back(alarm("n" + std::to_string(h), "cnp_surge", host_end(*lt, h, 3), 1200 + h));
  }
  seen.take(c.apply(in));
  EXPECT_EQ(top(seen.only()).entity, spine_port);
  EXPECT_EQ(top(seen.only()).fault_type, "ecn_surge");
}

TEST(Correlate, APortThatWentDownAgainAndAgainIsAFlappingLink) {
  auto lt = clos();
  Correlator c(lt, fast());
  Seen seen;
  auto down = alarm("d", "link_down", leaf_end(*lt, 5, 1), 1000);
  down.count = 4;  // raised four times before its hold-down ended
  seen.take(c.apply(std::vector{down}));
  EXPECT_EQ(top(seen.only()).fault_type, "link_flapping");
}

TEST(JobImpact, ExactRanksFromAnIncident) {
  auto lt = clos();
  JobImpact impact(lt, {job("train-a", {1, 2, 3, 4}), job("train-b", {40, 41}), job("solo", {10}, {0})});
  Correlator c(lt, fast());
  Seen seen;
  std::vector<IncidentInput> in;
  for (std::uint32_t n = 0; n < 8; ++n)
    in.push_back(alarm("h" + std::to_string(n), "link_down", host_end(*lt, 2, n), 1000));
  seen.take(c.apply(in));
  auto hit = impact.affected(seen.only().root_causes);
  ASSERT_EQ(hit.size(), 1u);
  EXPECT_EQ(hit[0].job_id, "train-a");
  EXPECT_EQ(hit[0].ranks, (std::vector<std::uint32_t>{8, 9, 10, 11, 12, 13, 14, 15}));

  Correlator c2(lt, fast());
  Seen s2;
  s2.take(c2.apply(std::vector{alarm("x", "crc_errors", host_end(*lt, 41, 5), 1000),
                               alarm("y", "crc_errors", leaf_end(*lt, 41, 5), 1000)}));
  hit = impact.affected(s2.only().root_causes);
  ASSERT_EQ(hit.size(), 1u);
  EXPECT_EQ(hit[0].job_id, "train-b");
  EXPECT_EQ(hit[0].ranks, (std::vector<std::uint32_t>{13}));
}

TEST(JobImpact, SwitchesAndFabricLinks) {
  auto lt = clos();
  const auto& t = lt->topology();
  // leaf2 is rail 2 of SU 0 (hosts 1..32); "wide" spans SU 0 and SU 1 (host 41).
  JobImpact impact(lt, {job("a", {1, 2}), job("b", {40}), job("one-leaf", {3, 4}, {0}), job("c", {33}, {2}),
                        job("wide", {5, 41})});
  const auto leaf2 = *t.find("leaf002");
  auto hit = impact.affected(one("leaf002", CandidateKind::switch_device, topology::kNoLink, leaf2));
  ASSERT_EQ(hit.size(), 2u);
  EXPECT_EQ(hit[0].job_id, "a");
  EXPECT_EQ(hit[0].ranks, (std::vector<std::uint32_t>{2, 10}));
  EXPECT_EQ(hit[1].job_id, "wide");
  EXPECT_EQ(hit[1].ranks, (std::vector<std::uint32_t>{2}));
  // A spine: only jobs spanning more than one SU, their ranks on leaves below the spine (all of them here).
  // "a" and "b" use 8 leaves each but stay in one SU (rail-local traffic), "one-leaf" never leaves leaf0.
  const auto spine = *t.find("spine03");
  hit = impact.affected(one("spine03", CandidateKind::switch_device, topology::kNoLink, spine));
  ASSERT_EQ(hit.size(), 1u);
  EXPECT_EQ(hit[0].job_id, "wide");
  EXPECT_EQ(hit[0].ranks.size(), 16u);
  // A leaf-spine link: the ranks on that leaf of jobs leaving their SU.
  const auto uplink = t.node(leaf2).uplinks.front();
  hit = impact.affected(one(lt->link_entity(uplink), CandidateKind::link, uplink, topology::kNoNode));
  ASSERT_EQ(hit.size(), 1u);
  EXPECT_EQ(hit[0].job_id, "wide");
  EXPECT_EQ(hit[0].ranks, (std::vector<std::uint32_t>{2}));
}

TEST(JobImpact, OnlyJobsThatRanWhileTheIncidentWasLive) {
  auto lt = clos();
  auto before = job("ended-before", {1});
  before.started_ms = 1000;
  before.ended_ms = 5000;
  auto during = job("ended-during", {1});
  during.ended_ms = 15000;
  auto after = job("started-after", {1});
  after.started_ms = 30000;
  auto running = job("running", {1});
  running.started_ms = 12000;
  JobImpact impact(lt, {before, during, after, running});
  auto c = one("host001", CandidateKind::host_nic, topology::kNoLink, *lt->topology().find("host001"));
  std::vector<std::string> names;
  for (const auto& j : impact.affected(c, {10000, 20000})) names.push_back(j.name);
  EXPECT_EQ(names, (std::vector<std::string>{"ended-during", "running"}));
  names.clear();  // still open: a job that started later counts too
  for (const auto& j : impact.affected(c, {10000, 0})) names.push_back(j.name);
  EXPECT_EQ(names, (std::vector<std::string>{"ended-during", "running", "started-after"}));
}

TEST(JobImpact, AFanOrOnePowerSupplyStopsNoTraffic) {
  auto lt = clos();
  JobImpact impact(lt, {job("a", {1, 2})});
  auto c = one("leaf002", CandidateKind::switch_device, topology::kNoLink, *lt->topology().find("leaf002"));
  c[0].fault_type = "switch_fan_fault";
  EXPECT_TRUE(impact.affected(c).empty());
  c[0].fault_type = "switch_reboot";
  EXPECT_EQ(impact.affected(c).size(), 1u);
}

TEST(JobImpact, PlannedFlowsDecideFabricImpact) {
  auto lt = clos();
  const auto& t = lt->topology();
  auto planned = job("p", {1, 40}, {0});
  const auto src = npu_link(*lt, 1, 0);
  const auto leaf0 = t.link(src).upper;
  const auto up0 = t.node(leaf0).uplinks[0];
  const auto up1 = t.node(leaf0).uplinks[1];
  planned.planned = {{0, 1, {src, up0}}};
  JobImpact impact(lt, {planned});
  auto hit = impact.affected(one(lt->link_entity(up0), CandidateKind::link, up0, topology::kNoNode));
  ASSERT_EQ(hit.size(), 1u);
  EXPECT_EQ(hit[0].ranks, (std::vector<std::uint32_t>{0, 1}));
  EXPECT_TRUE(
      impact.affected(one(lt->link_entity(up1), CandidateKind::link, up1, topology::kNoNode)).empty());
}

TEST(JobImpact, TiesWithinAHairCountAndOthersDoNot) {
  auto lt = clos();
  JobImpact impact(lt, {job("a", {1}), job("b", {2})});
  auto c = one("host001", CandidateKind::host_nic, topology::kNoLink, *lt->topology().find("host001"));
  auto d = one("host002", CandidateKind::host_nic, topology::kNoLink, *lt->topology().find("host002"));
  d[0].score = 0.87;
  c.push_back(d[0]);
  EXPECT_EQ(impact.affected(c).size(), 2u);
  c[1].score = 0.5;
  EXPECT_EQ(impact.affected(c).size(), 1u);
  EXPECT_TRUE(impact.affected({}).empty());
}

}  // namespace
}  // namespace hsns::brain
