// The SNMP poller's pure parts: counter deltas with wraps and resets, agent restarts from sysUpTime, the
// samples derived from two walks (aggregator/ingest/snmp_counters.h), the latest-samples sink, and the
// `snmp:` configuration section with its field-named errors (aggregator/ingest/snmp_config.h).
#include "ingest/snmp_counters.h"

#include <gtest/gtest.h>

#include <fstream>
#include <limits>
#include <string>

#include "config.h"
#include "ingest/snmp_poller.h"
#include "support/temp_dir.h"

namespace hsns::ingest {
namespace {

TEST(SnmpCounters, Counter64DeltaAndReset) {
  EXPECT_EQ(counter64_delta(100, 350), 250u);
  EXPECT_EQ(counter64_delta(7, 7), 0u);
  EXPECT_EQ(counter64_delta(std::numeric_limits<std::uint64_t>::max() - 5,
                            std::numeric_limits<std::uint64_t>::max()),
            5u);
  EXPECT_EQ(counter64_delta(1'000'000, 10), std::nullopt);  // went back: a reset, never a wrap
}

TEST(SnmpCounters, Counter32WrapsOnce) {
  bool wrapped = true;
  EXPECT_EQ(counter32_delta(10, 25, wrapped), 15u);
  EXPECT_FALSE(wrapped);
  EXPECT_EQ(counter32_delta(0xFFFFFFF0u, 0x10u, wrapped), 0x20u);
  EXPECT_TRUE(wrapped);
}

TEST(SnmpCounters, AgentRestartFromSysUpTime) {
  EXPECT_FALSE(agent_restarted(100'000, 103'000, 30'000));    // advanced as the local clock did
  EXPECT_FALSE(agent_restarted(100'000, 100'150, 1'000));     // 1.5 s for 1 s: within the slack
  EXPECT_TRUE(agent_restarted(100'000, 500, 30'000));         // went back
  EXPECT_TRUE(agent_restarted(100'000, 100'100, 3'600'000));  // restarted long enough ago to pass prev
  EXPECT_TRUE(agent_restarted(100'000, 900'000, 30'000));     // jumped ahead: not the same agent run
  // sysUpTime wraps after 497 days: 2^32 - 1000 cs + 30 s is 2000 cs after the wrap.
  EXPECT_FALSE(agent_restarted(0xFFFFFFFFu - 999u, 2000u, 30'000));
}

TEST(SnmpCounters, InterfaceEntity) {
  EXPECT_EQ(interface_entity("leaf01", 3, "Ethernet1/3"), "leaf01/Ethernet1_3");
  EXPECT_EQ(interface_entity("leaf01", 3, "Gi 0\t1"), "leaf01/Gi_0_1");
  EXPECT_EQ(interface_entity("leaf01", 17, ""), "leaf01/if17");
  EXPECT_EQ(interface_entity("leaf01", 1, std::string(400, 'x')).size(), 256u);
}

SnmpInterface port(std::string name, std::uint64_t in, std::uint64_t out, std::uint32_t errors) {
  SnmpInterface i;
  i.name = std::move(name);
  i.in_octets = in;
  i.out_octets = out;
  i.in_errors = errors;
  i.out_errors = 0;
  i.in_discards = 0;
  i.out_discards = 0;
  i.oper_status = 1;
  i.discontinuity_time = 0;
  return i;
}

SnmpPoll poll_at(std::int64_t seconds, std::uint32_t uptime_cs) {
  SnmpPoll p;
  p.steady_ms = seconds * 1000;
  p.ts_ms = 1'700'000'000'000 + seconds * 1000;
  p.uptime_cs = uptime_cs;
  return p;
}

std::optional<double> value_of(const std::vector<KpiSample>& samples, const std::string& entity,
                               const std::string& metric) {
  for (const auto& s : samples) {
    if (s.entity == entity && s.metric == metric) return s.value;
  }
  return std::nullopt;
}

TEST(SnmpCounters, FirstPollGivesOperStatusOnly) {
  auto p = poll_at(0, 1000);
  p.interfaces[1] = port("swp1", 1000, 2000, 0);
  p.interfaces[2] = port("swp2", 0, 0, 0);
  p.interfaces[2].oper_status = 2;
  CounterEvents events;
  const auto samples = derive_samples("leaf01", nullptr, p, events);
  ASSERT_EQ(samples.size(), 2u);
  EXPECT_EQ(samples[0], (KpiSample{"leaf01/swp1", kIfOperStatus, p.ts_ms, 1}));
  EXPECT_EQ(samples[1], (KpiSample{"leaf01/swp2", kIfOperStatus, p.ts_ms, 2}));
}

TEST(SnmpCounters, RatesPerSecondBetweenTwoPolls) {
  auto a = poll_at(0, 1000);
  a.interfaces[1] = port("swp1", 1000, 2000, 4);
  auto b = poll_at(10, 2000);
  b.interfaces[1] = port("swp1", 1000 + 12'500'000'000, 2000 + 500, 9);
  CounterEvents events;
  const auto samples = derive_samples("leaf01", &a, b, events);
  EXPECT_EQ(samples.size(), 7u);
  EXPECT_EQ(value_of(samples, "leaf01/swp1", kIfInOctetsRate), 1'250'000'000.0);
  EXPECT_EQ(value_of(samples, "leaf01/swp1", kIfOutOctetsRate), 50.0);
  EXPECT_EQ(value_of(samples, "leaf01/swp1", kIfInErrorsRate), 0.5);
  EXPECT_EQ(value_of(samples, "leaf01/swp1", kIfOutDiscardsRate), 0.0);
  for (const auto& s : samples) EXPECT_EQ(s.ts_ms, b.ts_ms);
  EXPECT_FALSE(events.agent_restart);
  EXPECT_EQ(events.counter_resets + events.counter_wraps + events.discontinuities, 0u);
}

TEST(SnmpCounters, Counter64ResetIsCountedAndGivesNoRate) {
  auto a = poll_at(0, 1000);
  a.interfaces[1] = port("swp1", 5'000'000, 2000, 0);
  auto b = poll_at(10, 2000);
  b.interfaces[1] = port("swp1", 300, 2100, 0);
  CounterEvents events;
  const auto samples = derive_samples("leaf01", &a, b, events);
  EXPECT_EQ(events.counter_resets, 1u);
  EXPECT_EQ(value_of(samples, "leaf01/swp1", kIfInOctetsRate), std::nullopt);
  EXPECT_EQ(value_of(samples, "leaf01/swp1", kIfOutOctetsRate), 10.0);  // the other counter still counts
}

TEST(SnmpCounters, Counter32WrapGivesTheRateThroughTheWrap) {
  auto a = poll_at(0, 1000);
  a.interfaces[1] = port("swp1", 0, 0, 0xFFFFFFFEu);
  auto b = poll_at(2, 1200);
  b.interfaces[1] = port("swp1", 0, 0, 8);
  CounterEvents events;
  const auto samples = derive_samples("leaf01", &a, b, events);
  EXPECT_EQ(events.counter_wraps, 1u);
  EXPECT_EQ(value_of(samples, "leaf01/swp1", kIfInErrorsRate), 5.0);  // 10 over 2 s
}

TEST(SnmpCounters, AgentRestartGivesNoRatesAndIsCountedOnce) {
  auto a = poll_at(0, 500'000);
  a.interfaces[1] = port("swp1", 9000, 9000, 0);
  a.interfaces[2] = port("swp2", 9000, 9000, 0);
  auto b = poll_at(30, 1500);  // sysUpTime went back: the agent restarted, its counters too
  b.interfaces[1] = port("swp1", 100, 100, 0);
  b.interfaces[2] = port("swp2", 100, 100, 0);
  CounterEvents events;
  const auto samples = derive_samples("leaf01", &a, b, events);
  EXPECT_TRUE(events.agent_restart);
  EXPECT_EQ(events.counter_resets, 0u);  // no counter compared across the restart
  EXPECT_EQ(samples.size(), 2u);         // oper status only
}

TEST(SnmpCounters, NewRenamedAndDiscontinuousInterfacesAreNewBaselines) {
  auto a = poll_at(0, 1000);
  a.interfaces[1] = port("swp1", 100, 100, 0);
  a.interfaces[2] = port("swp2", 100, 100, 0);
  auto b = poll_at(1, 1100);
  b.interfaces[1] = port("swp1", 200, 200, 0);
  b.interfaces[1].discontinuity_time = 1050;  // counters restarted (a line card reset)
  b.interfaces[2] = port("swp2-renamed", 200, 200, 0);
  b.interfaces[3] = port("swp3", 200, 200, 0);  // new
  CounterEvents events;
  const auto samples = derive_samples("leaf01", &a, b, events);
  EXPECT_EQ(events.discontinuities, 1u);
  EXPECT_EQ(samples.size(), 3u);  // oper status of each
  for (const auto& s : samples) EXPECT_EQ(s.metric, kIfOperStatus);
}

TEST(SnmpCounters, MissingCountersAreLeftOut) {
  auto a = poll_at(0, 1000);
  SnmpInterface bare;
  bare.name = "mgmt0";
  a.interfaces[9] = bare;
  auto b = poll_at(1, 1100);
  b.interfaces[9] = bare;
  b.interfaces[9].in_octets = 5;
  CounterEvents events;
  EXPECT_TRUE(derive_samples("leaf01", &a, b, events).empty());
}

TEST(LatestKpiSamples, KeepsTheNewestValueAndRefusesSeriesBeyondCapacity) {
  LatestKpiSamples sink(2);
  const std::vector<KpiSample> first{{"a/1", "m", 10, 1.0}, {"a/2", "m", 10, 2.0}};
  EXPECT_TRUE(sink.append(first));
  const std::vector<KpiSample> second{{"a/1", "m", 20, 3.0}, {"a/1", "m", 15, 9.0}, {"a/3", "m", 20, 4.0}};
  EXPECT_FALSE(sink.append(second));  // a/3 is a third series
  EXPECT_EQ(sink.size(), 2u);
  EXPECT_EQ(sink.latest("a/1", "m")->value, 3.0);
  EXPECT_EQ(sink.latest("a/3", "m"), std::nullopt);
}

// ---- configuration ------------------------------------------------------------------------------------

class SnmpConfigTest : public ::testing::Test {
 protected:
  std::string file(const std::string& name, const std::string& text) {
    const auto path = dir_ / name;
    std::ofstream(path) << text;
    return path.string();
  }

  tl::expected<AggregatorConfig, std::string> load(const std::string& yaml) {
    return load_config_yaml(yaml, AggregatorConfig{});
  }

  void expect_error(const std::string& yaml, const std::string& fragment) {
    const auto c = load(yaml);
    ASSERT_FALSE(c.has_value()) << yaml;
    EXPECT_NE(c.error().find(fragment), std::string::npos)
        << "error: " << c.error() << "\nwanted: " << fragment;
  }

  testing::TempDir dir_{"hsns-snmp-config"};
};

TEST_F(SnmpConfigTest, OffByDefault) {
  const auto c = load("port: 8080\n");
  ASSERT_TRUE(c.has_value()) << c.error();
  EXPECT_TRUE(c->snmp.switches.empty());
}

TEST_F(SnmpConfigTest, ReadsV2cAndV3Switches) {
  const auto v3 = file("leaf02.yaml",
                       "user: hsns\nauth_protocol: SHA-512\nauth_password: authpass1\npriv_protocol: AES\n"
                       "priv_password: privpass1\n");
  const auto c = load(
      "snmp:\n  max_interfaces: 64\n  max_repetitions: 8\n  switches:\n"
      "    - {name: leaf01, address: 192.0.2.1, community: public, interval_ms: 10000}\n"
      "    - {name: leaf02, address: '2001:db8::2', port: 1161, version: '3', credentials_file: " +
      v3 + ", timeout_ms: 500, retries: 2}\n");
  ASSERT_TRUE(c.has_value()) << c.error();
  ASSERT_EQ(c->snmp.switches.size(), 2u);
  EXPECT_EQ(c->snmp.max_interfaces, 64u);
  EXPECT_EQ(c->snmp.bulk_rows, 8);
  const auto& a = c->snmp.switches[0];
  EXPECT_EQ(a.version, SnmpVersion::v2c);
  EXPECT_EQ(a.credentials.community, "public");
  EXPECT_EQ(a.port, 161);
  EXPECT_EQ(a.interval.count(), 10'000);
  const auto& b = c->snmp.switches[1];
  EXPECT_EQ(b.version, SnmpVersion::v3);
  EXPECT_EQ(b.credentials.user, "hsns");
  EXPECT_EQ(b.credentials.auth_protocol, SnmpAuthProtocol::sha512);
  EXPECT_EQ(b.credentials.priv_password, "privpass1");
  EXPECT_EQ(b.retries, 2);
}

TEST_F(SnmpConfigTest, ErrorsNameTheField) {
  const std::string head = "snmp:\n  switches:\n    - ";
  expect_error("snmp:\n  poll: 1\n", "unknown key 'snmp.poll'");
  expect_error("snmp: [1]\n", "snmp: must be a map");
  expect_error("snmp:\n  switches: {a: 1}\n", "snmp.switches: must be a list");
  expect_error(head + "{name: a, address: 192.0.2.1, community: c, colour: red}\n",
               "unknown key 'snmp.switches[0].colour'");
  expect_error(head + "{name: a, address: leaf01.example, community: c}\n",
               "snmp.switches[0].address: 'leaf01.example' is not an IP address");
  expect_error(head + "{address: 192.0.2.1, community: c}\n", "snmp.switches[0].name: is required");
  expect_error(head + "{name: a/b, address: 192.0.2.1, community: c}\n", "snmp.switches[0].name:");
  expect_error(head + "{name: a, community: c}\n", "snmp.switches[0].address: is required");
  expect_error(head + "{name: a, address: 192.0.2.1}\n", "snmp.switches[0].community: SNMPv2c needs");
  expect_error(head + "{name: a, address: 192.0.2.1, community: c, version: '1'}\n",
               "snmp.switches[0].version: '1' is not 2c or 3");
  expect_error(head + "{name: a, address: 192.0.2.1, community: c, port: 0}\n",
               "snmp.switches[0].port: must be between 1 and 65535");
  expect_error(head + "{name: a, address: 192.0.2.1, community: c, retries: lots}\n",
               "snmp.switches[0].retries: must be an integer");
  expect_error(head + "{name: a, address: 192.0.2.1, community: c, interval_ms: 1000, timeout_ms: 600}\n",
               "snmp.switches[0].timeout_ms: with 1 retries a request may take 1800 ms");
  expect_error(head + "{name: a, address: 192.0.2.1, version: '3'}\n",
               "snmp.switches[0].credentials_file: SNMPv3 needs");
  expect_error(head +
                   "{name: a, address: 192.0.2.1, community: c}\n    - {name: a, address: 192.0.2.2, "
                   "community: c}\n",
               "snmp.switches[1].name: 'a' is configured twice");
  expect_error(
      "snmp:\n  max_switches: 1\n  switches:\n    - {name: a, address: 192.0.2.1, community: c}\n"
      "    - {name: b, address: 192.0.2.2, community: c}\n",
      "snmp.switches: 2 switches, more than snmp.max_switches (1)");
  expect_error("snmp:\n  max_interfaces: 0\n", "snmp.max_interfaces: must be between 1 and 65536");
}

TEST_F(SnmpConfigTest, CredentialsFileErrorsNameTheFileAndKey) {
  const std::string head =
      "snmp:\n  switches:\n    - {name: a, address: 192.0.2.1, version: '3', credentials_file: ";
  expect_error(head + (dir_ / "missing.yaml").string() + "}\n",
               "snmp.switches[0].credentials_file: cannot read");
  const auto short_key = file("short.yaml", "user: u\nauth_password: short\npriv_password: privpass1\n");
  expect_error(head + short_key + "}\n", ".auth_password: must be at least 8 characters");
  const auto no_priv = file("nopriv.yaml", "user: u\nauth_password: authpass1\n");
  expect_error(head + no_priv + "}\n", ".priv_password: SNMPv3 polls with authPriv only");
  const auto bad_proto = file("md5.yaml",
                              "user: u\nauth_protocol: MD5\nauth_password: authpass1\n"
                              "priv_password: privpass1\n");
  expect_error(head + bad_proto + "}\n", ".auth_protocol: 'MD5' is not one of SHA, SHA-256, SHA-512");
  const auto unknown = file("unknown.yaml",
                            "user: u\nauth_password: authpass1\npriv_password: privpass1\n"
                            "engine: x\n");
  expect_error(head + unknown + "}\n",
               "unknown key 'snmp.switches[0].credentials_file (" + unknown + ").engine'");
  const auto both = file("both.yaml", "community: c\n");
  expect_error("snmp:\n  switches:\n    - {name: a, address: 192.0.2.1, community: x, credentials_file: " +
                   both + "}\n",
               "snmp.switches[0].community: give the community inline or in credentials_file, not both");
  const auto community = file("community.yaml", "community: secret\n");
  const auto c =
      load("snmp:\n  switches:\n    - {name: a, address: 192.0.2.1, credentials_file: " + community + "}\n");
  ASSERT_TRUE(c.has_value()) << c.error();
  EXPECT_EQ(c->snmp.switches[0].credentials.community, "secret");
}

}  // namespace
}  // namespace hsns::ingest
