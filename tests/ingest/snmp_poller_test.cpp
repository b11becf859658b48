// The SNMP poller against a real net-snmp `snmpd` inside a network namespace this test creates: snmpd
// listens on the namespace's loopback with a v2c community and a v3 (authPriv) user from a configuration
// file the test writes; a veth pair to a second namespace gives IF-MIB a real interface with real counters.
// The poller runs on a thread inside the first namespace, so no packet leaves the test's namespaces.
// Checked: v2c and v3 walks, ifName as the port name, counters equal to what `snmpget` reads in the same
// test, deltas of consecutive polls equal to snmpget's deltas, octet rates of pinged traffic, a switch that
// does not answer (timeouts counted while the others go on being polled), a wrong v3 key (auth), an
// snmpd restart (agent_restart counted), a switch the topology does not know (counted), and the metrics.
#include "ingest/snmp_poller.h"

#include <gtest/gtest.h>
#include <prometheus/text_serializer.h>

#include <chrono>
#include <fstream>
#include <map>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "support/aggregator_process.h"
#include "support/metrics.h"
#include "support/netns.h"
#include "support/process.h"
#include "support/shell.h"
#include "support/temp_dir.h"

namespace hsns::ingest {
namespace {

using namespace std::chrono_literals;
using testing::Namespaces;

constexpr const char* kCommunity = "hsns-test-ro";
constexpr const char* kV3User = "hsnspoller";
constexpr const char* kAuthPassword = "auth-secret-1";
constexpr const char* kPrivPassword = "priv-secret-1";
constexpr int kAgentPort = 16161;
constexpr int kSilentPort = 16199;  // nothing listens there
const std::string kIfHCInOctets = "1.3.6.1.2.1.31.1.1.1.6.";

// Every sample the poller hands over, in order.
class RecordingSink : public KpiSink {
 public:
  bool append(std::span<const KpiSample> samples) override {
    const std::lock_guard lock(mutex_);
    samples_.insert(samples_.end(), samples.begin(), samples.end());
    return true;
  }
  std::optional<KpiSample> find(const std::string& entity, const std::string& metric, std::int64_t ts_ms) {
    const std::lock_guard lock(mutex_);
    for (const auto& s : samples_) {
      if (s.entity == entity && s.metric == metric && s.ts_ms == ts_ms) return s;
    }
    return std::nullopt;
  }

 private:
  std::mutex mutex_;
  std::vector<KpiSample> samples_;
};

bool wait_until(const std::function<bool()>& done, std::chrono::milliseconds timeout) {
  const auto end = std::chrono::steady_clock::now() + timeout;
  while (std::chrono::steady_clock::now() < end) {
    if (done()) return true;
    std::this_thread::sleep_for(10ms);
  }
  return done();
}

class SnmpPollerTest : public ::testing::Test {
 protected:
  void SetUp() override {
    agent_ns_ = namespaces_.add("agent");
    peer_ns_ = namespaces_.add("peer");
    // IPv6 off on both ends: no router solicitations or MLD reports move the counters behind the test's back.
    for (const auto& [ns, ifname] : {std::pair{agent_ns_, "swp1"}, std::pair{peer_ns_, "host1"}}) {
      Namespaces::exec(ns, {"sysctl", "-qw", "net.ipv6.conf.default.disable_ipv6=1"});
    }
    namespaces_.veth({agent_ns_, "swp1", {"198.18.61.1/24"}}, {peer_ns_, "host1", {"198.18.61.2/24"}});
    write_snmpd_config();
    start_snmpd();
  }

  void write_snmpd_config() {
    std::ofstream conf(dir_ / "snmpd.conf");
    conf << "agentaddress udp:127.0.0.1:" << kAgentPort << "\n"
         << "rocommunity " << kCommunity << " 127.0.0.1\n"
         << "createUser " << kV3User << " SHA-256 \"" << kAuthPassword << "\" AES \"" << kPrivPassword
         << "\"\n"
         << "rouser " << kV3User << " priv\n";
    std::filesystem::create_directories(dir_ / "persist");
  }

  void start_snmpd() {
    testing::ProcessOptions options = testing::log_to(dir_ / "snmpd.log");
    options.env["SNMP_PERSISTENT_DIR"] = (dir_ / "persist").string();
    options.env["MIBS"] = "";
    snmpd_ = testing::Process(
        Namespaces::in(agent_ns_, {"snmpd", "-f", "-Lo", "-C", "-c", (dir_ / "snmpd.conf").string(), "-p",
                                   (dir_ / "snmpd.pid").string()}),
        options);
    ASSERT_TRUE(wait_until([&] { return snmpget("1.3.6.1.2.1.1.3.0").has_value(); }, 15s))
        << "snmpd did not answer; its log:\n"
        << testing::run_command({"cat", (dir_ / "snmpd.log").string()}).output;
  }

  // One value as the `snmp` package's snmpget reads it (numeric, value only), over v2c.
  std::optional<std::string> snmpget(const std::string& oid) {
    const auto r = Namespaces::exec(agent_ns_, {"snmpget", "-v2c", "-c", kCommunity, "-On", "-Oqv", "-t", "1",
                                                "-r", "0", "127.0.0.1:" + std::to_string(kAgentPort), oid});
    if (!r.ok() || r.output.empty()) return std::nullopt;
    auto text = r.output;
    while (!text.empty() && (text.back() == '\n' || text.back() == ' ')) text.pop_back();
    return text;
  }

  SnmpSwitchConfig v2c_switch(std::string name, int port) {
    SnmpSwitchConfig s;
    s.name = std::move(name);
    s.address = "127.0.0.1";
    s.port = static_cast<std::uint16_t>(port);
    s.credentials.community = kCommunity;
    s.interval = 1000ms;
    s.timeout = 200ms;
    s.retries = 1;
    return s;
  }

  SnmpSwitchConfig v3_switch(std::string name, std::string auth_password) {
    auto s = v2c_switch(std::move(name), kAgentPort);
    s.version = SnmpVersion::v3;
    s.credentials = {};
    s.credentials.user = kV3User;
    s.credentials.auth_protocol = SnmpAuthProtocol::sha256;
    s.credentials.auth_password = std::move(auth_password);
    s.credentials.priv_password = kPrivPassword;
    return s;
  }

  // The poller on a thread of its own inside the agent's namespace (the thread inherits it).
  void start_poller(SnmpConfig config) {
    poller_ = std::make_unique<SnmpPoller>(
        std::move(config),
        [](std::string_view name, std::string_view) -> std::optional<std::string> {
          if (name == "leaf01") return std::string(name);  // the topology knows leaf01 only
          return std::nullopt;
        },
        sink_, metrics_);
    const testing::NetnsScope inside(agent_ns_);
    poller_->start();
  }

  SnmpSwitchStatus status(const std::string& name) {
    auto s = poller_->status(name);
    EXPECT_TRUE(s.has_value()) << name;
    return s.value_or(SnmpSwitchStatus{});
  }

  double metric(const std::string& selector) {
    const auto text = prometheus::TextSerializer().Serialize(registry_.Collect());
    return testing::metric_value(text, selector).value_or(-1);
  }

  // The ifIndex of an interface in a switch's latest poll.
  static std::optional<std::uint32_t> index_of(const SnmpPoll& poll, const std::string& name) {
    for (const auto& [index, i] : poll.interfaces) {
      if (i.name == name) return index;
    }
    return std::nullopt;
  }

  testing::TempDir dir_{"hsns-snmp"};
  Namespaces namespaces_{"hsnssnmp"};
  std::string agent_ns_;
  std::string peer_ns_;
  testing::Process snmpd_;
  prometheus::Registry registry_;
  SnmpMetrics metrics_{registry_};
  RecordingSink sink_;
  std::unique_ptr<SnmpPoller> poller_;
};

TEST_F(SnmpPollerTest, CountersMatchSnmpgetAndRatesFollowTraffic) {
  SnmpConfig config;
  config.switches = {v2c_switch("leaf01", kAgentPort), v3_switch("leaf01-v3", kAuthPassword)};
  start_poller(config);
  ASSERT_TRUE(wait_until([&] { return status("leaf01").successes >= 1; }, 10s))
      << status("leaf01").last_failure;
  const auto first = *status("leaf01").last;
  const auto index = index_of(first, "swp1");
  ASSERT_TRUE(index.has_value()) << "ifName swp1 not walked";
  EXPECT_TRUE(index_of(first, "lo").has_value());
  const auto& swp1 = first.interfaces.at(*index);
  EXPECT_EQ(swp1.oper_status, 1);  // up
  ASSERT_TRUE(swp1.in_octets.has_value());
  ASSERT_TRUE(swp1.out_octets.has_value());
  ASSERT_TRUE(swp1.in_errors.has_value());
  ASSERT_TRUE(swp1.out_discards.has_value());

  // Each poll seen right away, with what snmpget reads of ifHCInOctets.swp1 just after it.
  struct Observed {
    std::uint64_t success = 0;
    SnmpPoll poll;
    std::uint64_t snmpget = 0;
  };
  auto observe_next = [&](std::uint64_t after) {
    Observed o;
    EXPECT_TRUE(wait_until([&] { return status("leaf01").successes > after; }, 5s));
    const auto s = status("leaf01");
    o.success = s.successes;
    o.poll = *s.last;
    const auto got = snmpget(kIfHCInOctets + std::to_string(*index));
    EXPECT_TRUE(got.has_value());
    o.snmpget = got ? std::stoull(*got) : 0;
    return o;
  };
  std::vector<Observed> seen{observe_next(0)};
  // 50 echo requests of 1000 bytes of payload into swp1: 50 x (1000 + 8 ICMP + 20 IP + 14 Ethernet).
  const auto ping = Namespaces::exec(
      peer_ns_, {"ping", "-q", "-c", "50", "-i", "0.01", "-s", "1000", "-W", "1", "198.18.61.1"});
  ASSERT_TRUE(ping.ok()) << ping.output;
  const std::uint64_t ping_octets = std::uint64_t{50} * (1000 + 8 + 20 + 14);
  // snmpd caches its interface table for a few seconds: look until the traffic shows, then two more polls.
  while (seen.back().poll.interfaces.at(*index).in_octets <
             seen.front().poll.interfaces.at(*index).in_octets.value() + ping_octets &&
         seen.size() < 15) {
    seen.push_back(observe_next(seen.back().success));
  }
  seen.push_back(observe_next(seen.back().success));
  seen.push_back(observe_next(seen.back().success));

  std::size_t consecutive = 0;
  for (std::size_t i = 0; i < seen.size(); ++i) {
    const auto value = *seen[i].poll.interfaces.at(*index).in_octets;
    EXPECT_EQ(value, seen[i].snmpget) << "poll " << i << ": the poller's ifHCInOctets is not snmpget's";
    if (i == 0 || seen[i].success != seen[i - 1].success + 1) continue;
    ++consecutive;
    const auto before = *seen[i - 1].poll.interfaces.at(*index).in_octets;
    EXPECT_EQ(value - before, seen[i].snmpget - seen[i - 1].snmpget);
    // The rate handed to the sink for this poll is exactly that delta over the polls' interval.
    const auto rate = sink_.find("leaf01/swp1", kIfInOctetsRate, seen[i].poll.ts_ms);
    ASSERT_TRUE(rate.has_value()) << "no rate for poll " << i;
    const double seconds = static_cast<double>(seen[i].poll.steady_ms - seen[i - 1].poll.steady_ms) / 1000.0;
    EXPECT_NEAR(rate->value * seconds, static_cast<double>(value - before),
                1e-6 * static_cast<double>(value - before) + 1e-9);
  }
  EXPECT_GE(consecutive, 2u);
  const auto total =
      *seen.back().poll.interfaces.at(*index).in_octets - *seen.front().poll.interfaces.at(*index).in_octets;
  EXPECT_GE(total, ping_octets);
  EXPECT_LE(total, ping_octets + 2000) << "more than the ping and a few ARP frames";
  // The largest rate seen is the traffic's: at least the ping's octets over the longest interval observed.
  double peak = 0;
  for (std::size_t i = 1; i < seen.size(); ++i) {
    if (auto r = sink_.find("leaf01/swp1", kIfInOctetsRate, seen[i].poll.ts_ms))
      peak = std::max(peak, r->value);
  }
  EXPECT_GT(peak, 0.0);
  EXPECT_LE(peak, static_cast<double>(ping_octets + 2000) / 0.5) << "a rate above what was sent";

  // SNMPv3 authPriv read the same interface.
  ASSERT_TRUE(wait_until([&] { return status("leaf01-v3").successes >= 2; }, 10s))
      << status("leaf01-v3").last_failure;
  const auto v3 = *status("leaf01-v3").last;
  ASSERT_TRUE(index_of(v3, "swp1").has_value());
  EXPECT_EQ(index_of(v3, "swp1"), index);
  EXPECT_TRUE(sink_.find("leaf01-v3/swp1", kIfOperStatus, v3.ts_ms).has_value());

  EXPECT_GE(metric("hsns_snmp_polls_total{switch=\"leaf01\"}"), static_cast<double>(seen.back().success));
  EXPECT_GT(metric("hsns_snmp_samples_total{switch=\"leaf01\"}"), 0);
  EXPECT_GT(metric("hsns_snmp_last_success_timestamp_seconds{switch=\"leaf01\"}"), 1.6e9);
  EXPECT_GE(metric("hsns_snmp_interfaces{switch=\"leaf01\"}"), 2);
  EXPECT_EQ(metric("hsns_snmp_unknown_device_total{switch=\"leaf01\"}"), -1) << "leaf01 is a topology device";
  EXPECT_GE(metric("hsns_snmp_unknown_device_total{switch=\"leaf01-v3\"}"), 1);
}

TEST_F(SnmpPollerTest, ASilentSwitchTimesOutWhileTheOthersArePolled) {
  SnmpConfig config;
  config.switches = {v2c_switch("silent", kSilentPort), v2c_switch("leaf01", kAgentPort),
                     v3_switch("wrong-key", "not-the-key-1")};
  start_poller(config);
  ASSERT_TRUE(wait_until([&] { return status("silent").failures >= 3; }, 10s));
  EXPECT_EQ(status("silent").last_failure, "timeout");
  EXPECT_EQ(status("silent").successes, 0u);
  // leaf01 went on at its interval meanwhile: ~1 poll per second despite 600 ms of waiting on "silent".
  EXPECT_GE(status("leaf01").successes, 2u);
  EXPECT_EQ(status("leaf01").failures, 0u);
  EXPECT_GE(metric("hsns_snmp_poll_failures_total{reason=\"timeout\",switch=\"silent\"}"), 3);
  ASSERT_TRUE(wait_until([&] { return status("wrong-key").failures >= 1; }, 5s));
  EXPECT_EQ(status("wrong-key").last_failure, "auth");
  EXPECT_EQ(status("wrong-key").successes, 0u);
}

TEST_F(SnmpPollerTest, AnAgentRestartIsCountedAndStartsANewBaseline) {
  SnmpConfig config;
  config.switches = {v2c_switch("leaf01", kAgentPort), v3_switch("leaf01-v3", kAuthPassword)};
  start_poller(config);
  ASSERT_TRUE(
      wait_until([&] { return status("leaf01").successes >= 2 && status("leaf01-v3").successes >= 2; }, 10s));
  snmpd_.stop(5s);
  start_snmpd();
  ASSERT_TRUE(wait_until(
      [&] {
        return metric("hsns_snmp_counter_events_total{event=\"agent_restart\",switch=\"leaf01\"}") >= 1;
      },
      10s));
  const auto after = status("leaf01").successes;
  ASSERT_TRUE(wait_until([&] { return status("leaf01").successes >= after + 2; }, 10s));
  EXPECT_FALSE(status("leaf01").last_events->agent_restart) << "the poll after the restart is a normal one";
  // v3: a new engine boot; net-snmp resynchronises the engine time (or the probe runs again).
  const auto v3_after = status("leaf01-v3").successes;
  ASSERT_TRUE(wait_until([&] { return status("leaf01-v3").successes >= v3_after + 2; }, 15s))
      << status("leaf01-v3").last_failure;
}

// The real hsns-aggregator in the agent's namespace, configured with an `snmp:` section (a v2c switch, a
// v3 switch whose keys are in a credentials file, a silent one): main.cpp starts the poller, /metrics
// shows each switch's polls.
TEST_F(SnmpPollerTest, TheAggregatorPollsTheConfiguredSwitches) {
  const auto credentials = dir_ / "leaf02.yaml";
  std::ofstream(credentials) << "user: " << kV3User << "\nauth_protocol: SHA-256\nauth_password: \""
                             << kAuthPassword << "\"\npriv_protocol: AES\npriv_password: \"" << kPrivPassword
                             << "\"\n";
  testing::TempDir work("hsns-snmp-aggregator");
  testing::AggregatorProcess aggregator(work.path());
  aggregator.set_netns(agent_ns_);
  const std::string agent = "address: 127.0.0.1, port: " + std::to_string(kAgentPort);
  aggregator.set_config(
      "snmp:\n  switches:\n"
      "    - {name: leaf01, " +
      agent + ", community: " + kCommunity +
      ", interval_ms: 1000, timeout_ms: 200}\n"
      "    - {name: leaf02, " +
      agent + ", version: '3', credentials_file: " + credentials.string() +
      ", interval_ms: 1000, timeout_ms: 200}\n"
      "    - {name: silent, address: 127.0.0.1, port: " +
      std::to_string(kSilentPort) + ", community: x, interval_ms: 1000, timeout_ms: 200, retries: 0}\n");
  aggregator.start();
  std::string exposition;
  const auto scrape = [&] {
    const auto r = Namespaces::exec(agent_ns_, {"curl", "-sf", aggregator.url() + "/metrics"});
    exposition = r.output;
    return r.ok();
  };
  const auto value = [&](const std::string& selector) {
    return testing::metric_value(exposition, selector).value_or(-1);
  };
  ASSERT_TRUE(wait_until(
      [&] {
        return scrape() && value("hsns_snmp_samples_total{switch=\"leaf01\"}") > 0 &&
               value("hsns_snmp_samples_total{switch=\"leaf02\"}") > 0 &&
               value("hsns_snmp_poll_failures_total{reason=\"timeout\",switch=\"silent\"}") >= 2;
      },
      15s))
      << exposition << aggregator.log();
  EXPECT_GT(value("hsns_snmp_last_success_timestamp_seconds{switch=\"leaf02\"}"), 1.6e9);
  EXPECT_GE(value("hsns_snmp_interfaces{switch=\"leaf01\"}"), 2);
  EXPECT_EQ(value("hsns_snmp_last_success_timestamp_seconds{switch=\"silent\"}"), -1);
  EXPECT_GE(value("hsns_snmp_unknown_device_total{switch=\"leaf01\"}"), 1) << "no topology was loaded";
  EXPECT_EQ(aggregator.stop(), 0) << aggregator.log();
}

// check-config refuses a bad `snmp:` section naming the field, without starting anything.
TEST(SnmpAggregatorConfig, CheckConfigNamesTheBadField) {
  testing::TempDir work("hsns-snmp-check");
  const auto config = work / "aggregator.yaml";
  std::ofstream(config)
      << "insecure_no_auth: true\nsnmp:\n  switches:\n    - {name: leaf01, address: leaf01.example, "
         "community: c}\n";
  const auto r = testing::run_command(
      {testing::build_path("aggregator/hsns-aggregator").string(), "check-config", "-c", config.string()});
  EXPECT_EQ(r.status, 64) << r.output;
  EXPECT_NE(r.output.find("snmp.switches[0].address: 'leaf01.example' is not an IP address"),
            std::string::npos)
      << r.output;
}

}  // namespace
}  // namespace hsns::ingest
