// The flow probe run by hsnsd itself (issue 4, items 3 and 4): the real hsnsd, with a `flow_probe:` section
// in its hsnsd.yaml, inside a network namespace the test creates, talking to the real hsns-aggregator on
// that namespace's loopback; hsns-roce-gen sends a known mix from a second namespace over a veth pair.
//
// - kill -9 of hsnsd at any moment of a run, restart: per-flow totals summed from the sink equal the
//   generator's exact counts (the acceptance test of the issue, against hsnsd). hsnsd is killed again and
//   again during one generator run: inside the harvest window (the test-only hook
//   HSNS_TEST_CRASH_AFTER_DRAIN makes it SIGKILL itself half-way through writing a batch, after writing it
//   but before its commit, and half-way through the commit) and at random moments.
// - /metrics exposes the probe's counters and harvest figures (promtool clean); SIGHUP restarts the probe
//   only when its section changed; SIGTERM leaves no tc filter, clsact qdisc, XDP program or loaded
//   program using the pinned maps behind (the maps stay pinned).
// - A probe that cannot start (missing interface) is logged and reported on /metrics while hsnsd goes on
//   reconciling; SIGHUP retries it.
//
// hsnsd runs with only the capabilities in systemd/hsnsd.service's CapabilityBoundingSet (setpriv), so
// the unit's set is tested to be enough for the probe. Root only; all traffic stays in the namespaces.
#include <gtest/gtest.h>
#include <stdlib.h>
#include <sys/socket.h>
#include <sys/un.h>

#include <algorithm>
#include <atomic>
#include <cctype>
#include <filesystem>
#include <map>
#include <mutex>
#include <nlohmann/json.hpp>
#include <optional>
#include <random>
#include <set>
#include <string>
#include <thread>

#include "lab.h"
#include "support/aggregator_process.h"
#include "support/metrics.h"
#include "support/temp_dir.h"

namespace {

using hsns::test::add_flow;
using hsns::test::flow_id;
using hsns::test::Lab;
using hsns::test::Proc;
using hsns::test::read_file;
using hsns::test::read_sink_totals;
using hsns::test::sh;
using hsns::test::wait_for;
using hsns::testing::metric_value;
using nlohmann::json;
using namespace std::chrono_literals;

const std::string kBuild = HSNS_TEST_BUILD_DIR;
const std::string kSource = HSNS_TEST_SOURCE_DIR;
const std::string kGen = kBuild + "/lab/roce_gen/hsns-roce-gen";
const std::string kHsnsd = kBuild + "/daemon/core/hsnsd";
using hsns::testing::kAgentToken;

// "CAP_BPF CAP_NET_ADMIN" from the unit's CapabilityBoundingSet= as setpriv's "-all,+bpf,+net_admin".
std::string unit_bounding_set() {
  std::istringstream in(read_file(kSource + "/systemd/hsnsd.service"));
  std::string line;
  std::string set = "-all";
  while (std::getline(in, line)) {
    if (line.rfind("CapabilityBoundingSet=", 0) != 0) continue;
    std::istringstream caps(line.substr(line.find('=') + 1));
    std::string cap;
    while (caps >> cap) {
      std::transform(cap.begin(), cap.end(), cap.begin(), [](unsigned char c) { return std::tolower(c); });
      set += ",+" + cap.substr(cap.rfind("cap_", 0) == 0 ? 4 : 0);
    }
  }
  return set;
}

std::size_t count(const std::string& text, const std::string& what) {
  std::size_t n = 0;
  for (auto pos = text.find(what); pos != std::string::npos; pos = text.find(what, pos + what.size())) ++n;
  return n;
}

// A datagram socket standing in for systemd's NOTIFY_SOCKET, read continuously by a thread of its own
// as systemd does: sd_notify() blocks once a unix datagram socket holds net.unix.max_dgram_qlen (10)
// unread messages, which would stall hsnsd's main loop on WATCHDOG=1. notes() returns everything so far.
class NotifySocket {
 public:
  explicit NotifySocket(std::string path) : path_(std::move(path)) {
    fd_ = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
    sockaddr_un addr{};
    addr.sun_family = AF_UNIX;
    std::snprintf(addr.sun_path, sizeof addr.sun_path, "%s", path_.c_str());
    bound_ = fd_ >= 0 && bind(fd_, reinterpret_cast<sockaddr*>(&addr), sizeof addr) == 0;
    const timeval tv{0, 50000};
    if (bound_) setsockopt(fd_, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
    if (bound_) reader_ = std::thread([this] { read_loop(); });
  }
  ~NotifySocket() {
    stop_ = true;
    if (reader_.joinable()) reader_.join();
    if (fd_ >= 0) close(fd_);
  }
  NotifySocket(const NotifySocket&) = delete;
  NotifySocket& operator=(const NotifySocket&) = delete;
  bool ok() const { return bound_; }
  const std::string& path() const { return path_; }
  std::string notes() {
    const std::lock_guard lock(mutex_);
    return notes_;
  }

 private:
  void read_loop() {
    char buf[512];
    while (!stop_) {
      const ssize_t n = recv(fd_, buf, sizeof buf, 0);
      if (n <= 0) continue;
      const std::lock_guard lock(mutex_);
      notes_.append(buf, static_cast<std::size_t>(n)).push_back('\n');
    }
  }

  std::string path_;
  int fd_ = -1;
  bool bound_ = false;
  std::atomic<bool> stop_{false};
  std::mutex mutex_;
  std::string notes_;  // guarded by mutex_
  std::thread reader_;
};

class HsnsdFlowProbe : public ::testing::Test {
 protected:
  void SetUp() override {
    if (geteuid() != 0) GTEST_SKIP() << "needs root (namespaces, bpf, tc)";
    dir_ = tmp_.string();
    pin_dir_ = "/sys/fs/bpf/hsns-test-roce-hsnsd-" + std::to_string(getpid());
    sh("rm -rf " + pin_dir_);
    a_ = lab_.ns("a");
    b_ = lab_.ns("b");
    ASSERT_TRUE(lab_.veth(a_, "va", b_, "vb", {"198.18.50.1/24"}, {"198.18.50.2/24"}));
    ASSERT_TRUE(lab_.veth(a_, "xa", b_, "xb"));
    ASSERT_TRUE(wait_for([&] { return sh(Lab::in(a_, "ping -c1 -W1 198.18.50.2")).status == 0; }, 10s));
    if (sh("command -v setpriv").status == 0) setpriv_ = unit_bounding_set();
    notify_ = std::make_unique<NotifySocket>(dir_ + "/notify.sock");
    ASSERT_TRUE(notify_->ok());
    start_aggregator();
  }

  void TearDown() override {
    hsnsd_.kill9();
    aggregator_.kill9();
    if (!pin_dir_.empty()) sh("rm -rf " + pin_dir_);
  }

  // The real aggregator on namespace B's loopback (where hsnsd runs), on a free port.
  void start_aggregator() {
    std::ofstream(dir_ + "/agent.token") << kAgentToken << "\n";
    aggregator_.set_netns(b_);
    aggregator_.start();
    agg_port_ = aggregator_.port();
    ASSERT_GT(agg_port_, 0);
  }

  void write_config(const std::string& interfaces, int interval_ms = 200) {
    std::ofstream(dir_ + "/hsnsd.yaml", std::ios::trunc)
        << "host: roce-node\n"
        << "aggregator: {url: \"http://127.0.0.1:" << agg_port_ << "\", token_file: " << dir_
        << "/agent.token, timeout_ms: 2000}\n"
        << "state_dir: " << dir_ << "/state\n"
        << "metrics: {listen: \"127.0.0.1:9810\"}\n"
        << "interval_ms: 500\n"
        << "backoff: {initial_ms: 100, max_ms: 1000}\n"
        << "flow_probe:\n  interval_ms: " << interval_ms << "\n  table_size: 4096\n  pin_dir: " << pin_dir_
        << "\n  sink: " << dir_ << "/flows.jsonl\n  interfaces:\n"
        << interfaces;
  }

  // Starts hsnsd in namespace B with the unit's capabilities; returns once it sent READY=1. crash_hook:
  // HSNS_TEST_CRASH_AFTER_DRAIN for this run ("" = none).
  void start_hsnsd(const std::string& crash_hook = "") {
    std::vector<std::string> argv = {kHsnsd, "run", "--config", dir_ + "/hsnsd.yaml"};
    if (!setpriv_.empty()) argv.insert(argv.begin(), {"setpriv", "--bounding-set=" + setpriv_, "--"});
    const std::size_t ready_before = count(notify_->notes(), "READY=1");
    ++starts_;
    std::map<std::string, std::string> env = {{"NOTIFY_SOCKET", notify_->path()}};
    if (!crash_hook.empty()) env["HSNS_TEST_CRASH_AFTER_DRAIN"] = crash_hook;
    hsnsd_ = hsns::test::spawn(Lab::in(b_, argv), dir_ + "/hsnsd.out", log_path(), env);
    ASSERT_TRUE(wait_for([&] { return count(notify_->notes(), "READY=1") > ready_before; }, 20s)) << log();
  }

  std::string log_path() const { return dir_ + "/hsnsd" + std::to_string(starts_) + ".err"; }
  std::string log() const { return read_file(log_path()); }

  void stop_hsnsd() {
    hsnsd_.signal(SIGTERM);
    EXPECT_EQ(hsnsd_.wait(20s), 0) << log();
    EXPECT_TRUE(wait_for([&] { return notify_->notes().find("STOPPING=1") != std::string::npos; }, 5s));
  }

  // SIGHUP, then waits until hsnsd logged its reload and sent READY=1 again.
  void reload() {
    const std::size_t reloads = count(log(), "configuration reloaded");
    const std::size_t ready = count(notify_->notes(), "READY=1");
    hsnsd_.signal(SIGHUP);
    ASSERT_TRUE(wait_for(
        [&] {
          return count(log(), "configuration reloaded") > reloads &&
                 count(notify_->notes(), "READY=1") > ready;
        },
        20s))
        << log();
  }

  std::string metrics() { return sh(Lab::in(b_, "curl -sf http://127.0.0.1:9810/metrics"), false).out; }
  double metric(const std::string& key) { return metric_value(metrics(), key).value_or(-1); }

  std::string tc_filters(const std::string& dev, const std::string& dir) {
    return sh(Lab::in(b_, "tc filter show dev " + dev + " " + dir)).out;
  }
  // The id of the program in the probe's filter (handle 0x4f52) on dev/dir, or "" when there is none.
  std::string probe_prog_id(const std::string& dev, const std::string& dir) {
    const auto out = tc_filters(dev, dir);
    const auto at = out.find("handle 0x4f52");
    if (at == std::string::npos) return "";
    const auto id = out.find(" id ", at);
    if (id == std::string::npos) return "?";
    return out.substr(id + 4, out.find(' ', id + 4) - id - 4);
  }

  // Loaded programs that use one of the maps pinned under pin_dir_ (after SIGTERM: none).
  std::vector<std::string> programs_using_pinned_maps() {
    std::set<std::uint64_t> ids;
    for (const auto& e : std::filesystem::directory_iterator(pin_dir_)) {
      const auto m =
          json::parse(sh("bpftool -j map show pinned " + e.path().string(), false).out, nullptr, false);
      if (m.is_object() && m.contains("id")) ids.insert(m["id"].get<std::uint64_t>());
    }
    EXPECT_FALSE(ids.empty()) << "no maps pinned under " << pin_dir_;
    std::vector<std::string> users;
    const auto progs = json::parse(sh("bpftool -j prog show", false).out, nullptr, false);
    if (!progs.is_array()) return {"bpftool prog show failed"};
    for (const auto& p : progs)
      for (const auto& id : p.value("map_ids", json::array()))
        if (ids.count(id.get<std::uint64_t>())) users.push_back(p.value("name", "?") + " " + p["id"].dump());
    return users;
  }

  // Runs one generator feed in namespace A (foreground) and adds its flows to the expected totals.
  void run_feed(const std::string& args) {
    const auto r = sh(Lab::in(a_, kGen + " " + args), false);
    ASSERT_EQ(r.status, 0) << r.out;
    expect_generator_output(r.out);
  }
  void expect_generator_output(const std::string& text) {
    const json j = json::parse(text.substr(0, text.find('\n')));
    EXPECT_TRUE(j.at("complete").get<bool>());
    for (const auto& fl : j.at("flows")) add_flow(expected_[flow_id("vb", fl)], fl);
    sent_ += j.at("sent").get<std::uint64_t>();
  }

  void expect_sink_matches_generator(json* counters) {
    const auto got = read_sink_totals(dir_ + "/flows.jsonl", counters,
                                      [](const json& f) { EXPECT_EQ(f.at("host"), "roce-node"); });
    EXPECT_EQ(got.size(), expected_.size());
    for (const auto& [id, want] : expected_) {
      SCOPED_TRACE(id);
      const auto it = got.find(id);
      ASSERT_NE(it, got.end()) << "flow missing from the sink";
      for (const auto& [k, v] : want) EXPECT_EQ(it->second.at(k), v) << k;
    }
    for (const auto& [id, t] : got) EXPECT_TRUE(expected_.count(id)) << "unexpected flow " << id;
  }

  void expect_nothing_attached() {
    EXPECT_EQ(probe_prog_id("vb", "ingress"), "") << tc_filters("vb", "ingress");
    EXPECT_EQ(probe_prog_id("vb", "egress"), "") << tc_filters("vb", "egress");
    EXPECT_EQ(sh(Lab::in(b_, "tc qdisc show dev vb")).out.find("clsact"), std::string::npos);
    EXPECT_EQ(sh(Lab::in(b_, "ip link show dev xb")).out.find("xdp"), std::string::npos);
    EXPECT_EQ(programs_using_pinned_maps(), std::vector<std::string>{});
  }

  hsns::testing::TempDir tmp_{"hsns-roce-hsnsd"};
  Lab lab_{"hrh"};
  std::string a_;
  std::string b_;
  std::string dir_;
  std::string pin_dir_;
  std::string setpriv_;
  std::unique_ptr<NotifySocket> notify_;
  int agg_port_ = 0;
  int starts_ = 0;
  hsns::testing::AggregatorProcess aggregator_{tmp_.path()};
  Proc hsnsd_;
  std::map<std::string, hsns::test::FlowTotals> expected_;
  std::uint64_t sent_ = 0;
};

// The acceptance test of issue 4 against hsnsd: kill -9 at any moment of a run, restart, exact totals.
TEST_F(HsnsdFlowProbe, KillNineOfHsnsdAtAnyMomentKeepsPerFlowTotalsExact) {
  write_config("    - {name: vb, attach: tc, direction: ingress}\n");
  start_hsnsd();
  // READY=1 is sent after the probe attached.
  EXPECT_NE(probe_prog_id("vb", "ingress"), "") << tc_filters("vb", "ingress") << log();
  // Traffic in the background for as long as the restarts take (up to 16 flows x 20000 packets at 2000
  // packets/s = 160 s, however loaded the machine); SIGTERM ends it after the last kill and its summary
  // counts what was sent.
  const std::string gen_out = dir_ + "/gen.json";
  Proc gen = hsns::test::spawn(
      Lab::in(a_, std::vector<std::string>{kGen, "--mode", "udp", "--src", "198.18.50.1", "--dst",
                                           "198.18.50.2", "--seed", "41", "--flows", "16", "--packets",
                                           "20000", "--rate", "2000"}),
      gen_out, dir_ + "/gen.err");
  ASSERT_TRUE(wait_for(
      [&] { return read_file(dir_ + "/flows.jsonl").find("\"type\":\"flow\"") != std::string::npos; }, 10s))
      << log();
  hsnsd_.kill9();
  // Inside the harvest window: hsnsd kills itself (SIGKILL) half-way through writing a batch, after writing
  // it but before its commit, and after advancing the PSN state but before releasing the table. The
  // orphaned filter keeps counting into the pinned maps until the next hsnsd takes over.
  for (const std::string hook : {"partial-write", "before-commit", "mid-commit"}) {
    SCOPED_TRACE(hook);
    start_hsnsd(hook);
    // The start after the half-written batch cut it off the sink (the probe writes it again).
    if (hook == "before-commit") {
      EXPECT_NE(log().find("removed a batch cut short"), std::string::npos) << log();
    }
    EXPECT_EQ(hsnsd_.wait_signal(20s), SIGKILL) << "the crash hook did not fire\n" << log();
    hsnsd_.kill9();
    EXPECT_NE(probe_prog_id("vb", "ingress"), "");
  }
  // At random moments (the harvest interval is 200 ms).
  const auto seed = static_cast<unsigned>(std::random_device{}());
  SCOPED_TRACE("random kill delays, seed " + std::to_string(seed));
  std::mt19937 rng(seed);
  for (int i = 0; i < 3; ++i) {
    start_hsnsd();
    std::this_thread::sleep_for(std::chrono::milliseconds(std::uniform_int_distribution<int>(0, 700)(rng)));
    hsnsd_.kill9();
  }
  // Last, between the flip of the tables and the record of the epoch: the next hsnsd first harvests the
  // table left behind, and counts keep landing in the active one. That next hsnsd harvests only when it
  // stops (a long interval), so its last harvest must go on until it has caught up.
  start_hsnsd("after-flip");
  EXPECT_EQ(hsnsd_.wait_signal(20s), SIGKILL) << "the after-flip crash hook did not fire\n" << log();
  hsnsd_.kill9();
  EXPECT_TRUE(gen.alive()) << "the generator finished before the last kill: not mid-run";
  gen.signal(SIGTERM);
  write_config("    - {name: vb, attach: tc, direction: ingress}\n", 600000);
  start_hsnsd();
  ASSERT_EQ(gen.wait(60s), 0) << read_file(dir_ + "/gen.err");
  stop_hsnsd();
  expect_generator_output(read_file(gen_out));
  ASSERT_EQ(expected_.size(), 16u);
  json counters;
  expect_sink_matches_generator(&counters);
  EXPECT_EQ(counters.at("roce").get<std::uint64_t>(),
            json::parse(read_file(gen_out)).at("sent").get<std::uint64_t>());
  for (const char* bad : {"table_full", "ringbuf_drop"}) EXPECT_EQ(counters.at(bad).get<std::uint64_t>(), 0u);
  expect_nothing_attached();
}

// /metrics, SIGHUP (unchanged, interval only, one more interface) and a clean SIGTERM.
TEST_F(HsnsdFlowProbe, MetricsReloadAndCleanStop) {
  write_config("    - {name: vb, attach: tc, direction: both}\n");
  start_hsnsd();
  run_feed("--mode udp --src 198.18.50.1 --dst 198.18.50.2 --seed 51 --flows 4 --packets 50 --rate 5000");
  const std::string roce = "hsns_flow_probe_packets_total{counter=\"roce\"}";
  ASSERT_TRUE(wait_for([&] { return metric(roce) == static_cast<double>(sent_); }, 10s))
      << metrics() << log();
  const auto text = metrics();
  EXPECT_EQ(metric_value(text, "hsns_flow_probe_up"), 1.0) << text;
  EXPECT_EQ(metric_value(text, "hsns_flow_probe_interfaces"), 1.0);
  EXPECT_EQ(metric_value(text, "hsns_flow_probe_start_failures_total"), 0.0);
  EXPECT_GE(metric_value(text, "hsns_flow_probe_harvests_total").value_or(0), 1.0);
  EXPECT_GE(metric_value(text, "hsns_flow_probe_records_total").value_or(0), 4.0);
  EXPECT_EQ(metric_value(text, "hsns_flow_probe_harvest_errors_total"), 0.0);
  EXPECT_EQ(metric_value(text, "hsns_flow_probe_sink_errors_total"), 0.0);
  EXPECT_GE(metric_value(text, "hsns_flow_probe_last_harvest_duration_seconds").value_or(-1), 0.0);
  EXPECT_GT(metric_value(text, "hsns_flow_probe_last_harvest_timestamp_seconds").value_or(0), 1.7e9);
  EXPECT_EQ(metric_value(text, "hsns_flow_probe_packets_total{counter=\"table_full\"}"), 0.0);
  EXPECT_GE(metric_value(text, "hsns_flow_probe_packets_total{counter=\"packets\"}").value_or(0),
            static_cast<double>(sent_));
  EXPECT_NE(text.find("hsns_daemon_reconcile_passes_total"), std::string::npos);
  std::ofstream(dir_ + "/metrics.txt") << text;
  if (sh("command -v promtool").status == 0) {
    const auto lint = sh("promtool check metrics < " + dir_ + "/metrics.txt");
    EXPECT_EQ(lint.status, 0) << lint.out;
    EXPECT_EQ(lint.out, "") << "promtool reported lint problems";
  }

  // SIGHUP with the same file: the probe is left alone (same program in the filter, no new attach).
  const auto prog = probe_prog_id("vb", "ingress");
  ASSERT_NE(prog, "");
  reload();
  EXPECT_EQ(probe_prog_id("vb", "ingress"), prog);
  EXPECT_EQ(count(log(), "flow probe attached"), 1u) << log();
  // Only the harvest interval changed: still attached, same program.
  write_config("    - {name: vb, attach: tc, direction: both}\n", 300);
  reload();
  EXPECT_EQ(probe_prog_id("vb", "ingress"), prog);
  EXPECT_EQ(count(log(), "flow probe stays attached"), 1u) << log();
  // One more interface (XDP, mirror decapsulation): the probe is restarted with it.
  write_config(
      "    - {name: vb, attach: tc, direction: both}\n"
      "    - {name: xb, attach: xdp, mirror: true}\n",
      300);
  reload();
  EXPECT_EQ(count(log(), "flow probe attached"), 2u) << log();
  EXPECT_NE(sh(Lab::in(b_, "ip link show dev xb")).out.find("xdp"), std::string::npos);
  EXPECT_NE(probe_prog_id("vb", "ingress"), "");
  EXPECT_TRUE(wait_for([&] { return metric("hsns_flow_probe_interfaces") == 2; }, 5s)) << metrics();
  // Counting goes on across the reloads: a second mix, then SIGTERM (a last harvest) and exact totals.
  run_feed("--mode udp --src 198.18.50.1 --dst 198.18.50.2 --seed 52 --flows 4 --packets 50 --rate 5000");
  stop_hsnsd();
  json counters;
  expect_sink_matches_generator(&counters);
  EXPECT_EQ(counters.at("roce").get<std::uint64_t>(), sent_);
  expect_nothing_attached();
  // The maps stay pinned for the next start.
  EXPECT_FALSE(std::filesystem::is_empty(pin_dir_));
}

// A missing interface: logged, reported on /metrics, hsnsd keeps reconciling; SIGHUP retries.
TEST_F(HsnsdFlowProbe, StartFailureIsReportedAndHsnsdKeepsRunning) {
  write_config("    - {name: late0, attach: tc, direction: ingress}\n");
  start_hsnsd();
  EXPECT_NE(log().find("flow probe: "), std::string::npos) << log();
  EXPECT_NE(log().find("late0"), std::string::npos) << log();
  ASSERT_TRUE(wait_for([&] { return metric("hsns_flow_probe_start_failures_total") == 1; }, 10s))
      << metrics();
  EXPECT_EQ(metric("hsns_flow_probe_up"), 0);
  // The reconciler runs its passes all the same.
  ASSERT_TRUE(wait_for(
      [&] {
        const auto st = json::parse(read_file(dir_ + "/state/status.json"), nullptr, false);
        if (!st.is_object()) return false;
        const auto local = st.value("local", json::object());
        return local.is_object() && local.value("pass", 0) >= 2;
      },
      10s))
      << log();
  EXPECT_TRUE(hsnsd_.alive()) << "hsnsd exited:\n" << log();
  // The interface appears; SIGHUP (same file) retries the start.
  ASSERT_TRUE(lab_.veth(a_, "late0p", b_, "late0"));
  reload();
  EXPECT_NE(log().find("flow probe attached to late0"), std::string::npos) << log();
  EXPECT_NE(probe_prog_id("late0", "ingress"), "");
  EXPECT_TRUE(wait_for([&] { return metric("hsns_flow_probe_up") == 1; }, 5s)) << metrics();
  stop_hsnsd();
  EXPECT_EQ(probe_prog_id("late0", "ingress"), "");
  EXPECT_EQ(sh(Lab::in(b_, "tc qdisc show dev late0")).out.find("clsact"), std::string::npos);
}

}  // namespace
