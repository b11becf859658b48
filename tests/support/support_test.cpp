// Tests of the test-support library itself: commands and their failure messages, child processes
// (timeout, kill, no leftover descendants), namespaces removed after a throwing scope, temporary
// directories removed, and exposition parsing, on hand-written text and on a started aggregator's
// /metrics. The namespace tests need root.
#include <gtest/gtest-spi.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmath>
#include <fstream>
#include <stdexcept>

#include "support/aggregator_process.h"
#include "support/metrics.h"
#include "support/netns.h"
#include "support/process.h"
#include "support/shell.h"
#include "support/temp_dir.h"

namespace hsns::testing {
namespace {

using namespace std::chrono_literals;

// ---- shell ----

TEST(SupportShell, CapturesOutputStatusAndStdin) {
  const auto r = run_command({"sh", "-c", "cat; echo err >&2; exit 3"}, "in\n");
  EXPECT_EQ(r.status, 3);
  EXPECT_EQ(r.output, "in\nerr\n");
  EXPECT_EQ(r.command, "sh -c cat; echo err >&2; exit 3");
  EXPECT_EQ(sh("echo out; echo err >&2", Stderr::discard).output, "out\n");
  EXPECT_EQ(sh("kill -9 $$").status, 128 + SIGKILL);
  EXPECT_EQ(run_command({"/nonexistent/program"}).status, 127);
  // A command that exits without reading its input does not take the test process down with SIGPIPE.
  EXPECT_EQ(run_command({"true"}, std::string(1 << 20, 'x')).status, 0);
}

TEST(SupportShell, AFailingCommandNamesItselfInTheFailure) {
  EXPECT_NONFATAL_FAILURE(must("echo broken-thing; exit 4"), "`echo broken-thing; exit 4` exited with 4");
  EXPECT_NONFATAL_FAILURE(must(std::vector<std::string>{"ls", "/nonexistent-hsns"}),
                          "`ls /nonexistent-hsns` exited with 2");
  EXPECT_EQ(must("echo fine"), "fine\n");
}

TEST(SupportShell, WaitForPollsUntilTheConditionHolds) {
  int calls = 0;
  EXPECT_TRUE(wait_for([&] { return ++calls == 3; }, 5s, 1ms));
  EXPECT_EQ(calls, 3);
  const auto start = std::chrono::steady_clock::now();
  EXPECT_FALSE(wait_for([] { return false; }, 100ms));
  EXPECT_GE(std::chrono::steady_clock::now() - start, 100ms);
}

// ---- process ----

TEST(SupportProcess, WaitTimesOutOnARunningChildAndKillEndsIt) {
  Process p({"sleep", "30"});
  EXPECT_TRUE(p.alive());
  EXPECT_TRUE(pid_running(p.pid()));
  const auto start = std::chrono::steady_clock::now();
  EXPECT_EQ(p.wait(200ms), std::nullopt);
  EXPECT_GE(std::chrono::steady_clock::now() - start, 200ms);
  EXPECT_TRUE(p.running());
  const pid_t pid = p.pid();
  p.kill();
  ASSERT_TRUE(p.exit_status().has_value());
  EXPECT_EQ(p.exit_status()->signal, SIGKILL);
  EXPECT_EQ(p.exit_status()->shell(), 137);
  EXPECT_FALSE(p.running());
  EXPECT_FALSE(pid_running(pid));
}

TEST(SupportProcess, ExitCodeEnvironmentAndOutputFiles) {
  TempDir dir;
  ProcessOptions options;
  options.env = {{"HSNS_SUPPORT_VALUE", "from-the-test"}};
  options.stdout_path = dir / "out";
  options.stderr_path = dir / "err";
  Process p({"sh", "-c", "echo \"$HSNS_SUPPORT_VALUE\"; echo to-err >&2; exit 5"}, options);
  const auto s = p.wait(10s);
  ASSERT_TRUE(s.has_value());
  EXPECT_EQ(*s, (ExitStatus{5, 0}));
  EXPECT_EQ(read_file(dir / "out"), "from-the-test\n");
  EXPECT_EQ(read_file(dir / "err"), "to-err\n");
  EXPECT_EQ(Process({"/nonexistent/program"}).wait(10s), (ExitStatus{127, 0}));
}

TEST(SupportProcess, StopEscalatesToSigkillWhenSigtermIsIgnored) {
  TempDir dir;
  Process p({"sh", "-c", "trap '' TERM; echo ready; while :; do sleep 1; done"}, log_to(dir / "out"));
  ASSERT_TRUE(wait_for([&] { return read_file(dir / "out") == "ready\n"; }, 10s));
  EXPECT_EQ(p.stop(300ms).signal, SIGKILL);
  Process polite({"sleep", "30"});
  EXPECT_EQ(polite.stop().signal, SIGTERM);
}

TEST(SupportProcess, DestructionLeavesNoProcessBehindNotEvenAGrandchild) {
  TempDir dir;
  pid_t child = -1;
  {
    Process p({"sh", "-c", "sleep 60 & echo $! > " + (dir / "grandchild").string() + "; wait"});
    ASSERT_TRUE(wait_for([&] { return !read_file(dir / "grandchild").empty(); }, 10s));
    child = p.pid();
  }  // as when a failing ASSERT leaves the test early
  const pid_t grandchild = std::stoi(read_file(dir / "grandchild"));
  EXPECT_FALSE(pid_running(child));
  EXPECT_TRUE(wait_for([&] { return !pid_running(grandchild); }, 5s))
      << "sleep " << grandchild << " was left running";
}

// ---- temporary directory ----

TEST(SupportTempDir, IsRemovedWithItsContents) {
  std::filesystem::path path;
  {
    TempDir dir("hsns-support-test");
    path = dir.path();
    EXPECT_TRUE(std::filesystem::is_directory(path));
    EXPECT_EQ(path.filename().string().rfind("hsns-support-test-", 0), 0u) << path;
    std::filesystem::create_directories(dir / "a" / "b");
    std::ofstream(dir / "a" / "b" / "file") << "x";
    TempDir other;
    EXPECT_NE(other.path(), path);
  }
  EXPECT_FALSE(std::filesystem::exists(path));
}

// ---- network namespaces ----

class SupportNetns : public ::testing::Test {
 protected:
  void SetUp() override { ASSERT_EQ(::geteuid(), 0u) << "the namespace tests need root"; }
};

TEST_F(SupportNetns, EverythingCreatedIsRemovedAfterAThrowingScope) {
  // A leftover of a test process that no longer runs is removed by the next Namespaces of that prefix;
  // one of a running process (pid 1 here) is not touched.
  const std::string stale = "hsst-2147483646-stale";
  const std::string live = "hsst-1-live";
  must({"ip", "netns", "add", stale});
  must({"ip", "netns", "add", live});
  std::vector<std::string> names;
  std::string root_if;
  try {
    Namespaces nets("hsst");
    const auto before = run_command({"ip", "netns", "list"}).output;
    EXPECT_EQ(before.find(stale), std::string::npos) << "the stale namespace was not removed";
    EXPECT_NE(before.find(live), std::string::npos) << "the namespace of a running process was removed";
    names.push_back(nets.add("a"));
    names.push_back(nets.add("b"));
    EXPECT_EQ(nets.add("a"), names[0]);
    nets.veth({names[0], "va", {"198.18.61.1/24", "2001:db8:61::1/64"}},
              {names[1], "vb", {"198.18.61.2/24", "2001:db8:61::2/64"}});
    EXPECT_TRUE(Namespaces::exec(names[0], {"ping", "-c1", "-W2", "198.18.61.2"}).ok());
    EXPECT_TRUE(Namespaces::exec(names[0], {"ping", "-6", "-c1", "-W2", "2001:db8:61::2"}).ok());
    const RootLink link = nets.link_to_root(names[1], "mgmt0");
    root_if = link.root_ifname;
    EXPECT_TRUE(run_command({"ip", "link", "show", root_if}).ok());
    EXPECT_TRUE(Namespaces::exec(names[1], {"ping", "-c1", "-W2", link.root_address}).ok());
    EXPECT_NE(Namespaces::ip(names[1], {"addr", "show", "mgmt0"}).find(link.ns_address + "/30"),
              std::string::npos);
    EXPECT_THROW(nets.veth({names[0], "va", {}}, {names[1], "vc", {}}), std::runtime_error)
        << "a name already taken";
    throw std::runtime_error("the test failed here");
  } catch (const std::runtime_error& e) {
    EXPECT_STREQ(e.what(), "the test failed here");
  }
  ASSERT_EQ(names.size(), 2u);
  const auto list = run_command({"ip", "netns", "list"}).output;
  for (const auto& n : names) EXPECT_EQ(list.find(n), std::string::npos) << n << " left behind";
  EXPECT_NE(list.find(live), std::string::npos);
  must({"ip", "netns", "del", live});
  EXPECT_TRUE(wait_for(
      [&] {
        return !run_command({"ip", "link", "show", root_if}).ok();
      },
      5s))
      << root_if << " left in the root namespace";
}

TEST_F(SupportNetns, AFailedCommandIsNamedInTheException) {
  Namespaces nets("hsst");
  const auto ns = nets.add("x");
  try {
    nets.veth({ns, "bad/name", {}}, {ns, "peer0", {}});
    ADD_FAILURE() << "no exception";
  } catch (const std::runtime_error& e) {
    EXPECT_NE(std::string(e.what()).find("`ip link add bad/name netns " + ns), std::string::npos) << e.what();
  }
}

TEST_F(SupportNetns, ScopeEntersAndLeavesANamespaceAndAFreshOneDisappears) {
  const auto own = std::filesystem::read_symlink("/proc/thread-self/ns/net");
  Namespaces nets("hsst");
  const auto ns = nets.add("s");
  {
    NetnsScope in(ns);
    EXPECT_NE(std::filesystem::read_symlink("/proc/thread-self/ns/net"), own);
  }
  EXPECT_EQ(std::filesystem::read_symlink("/proc/thread-self/ns/net"), own);
  EXPECT_THROW(NetnsScope("hsst-no-such-namespace"), std::runtime_error);

  run_in_fresh_netns([] {
    must({"ip", "link", "add", "hsstfresh0", "type", "veth", "peer", "name", "hsstfresh1"});
  });
  EXPECT_FALSE(run_command({"ip", "link", "show", "hsstfresh0"}).ok());
  EXPECT_THROW(run_in_fresh_netns([] { throw std::runtime_error("inside"); }), std::runtime_error);
}

// ---- metrics ----

TEST(SupportMetrics, ParsesNamesLabelsValuesAndTimestamps) {
  const auto e = Exposition::parse(
      "# HELP a_total Things.\n"
      "# TYPE a_total counter\n"
      "a_total 3\n"
      "a_total{code=\"200\",route=\"/x\"} 4.5\n"
      "a_total{route=\"/y\",code=\"404\",} 1e3 1700000000000\n"
      "\n"
      "b_bucket{le=\"+Inf\"} +Inf\n"
      "c{text=\"quote \\\" backslash \\\\ newline \\n\"} -2\n"
      "d NaN\n");
  EXPECT_EQ(e.samples().size(), 6u);
  EXPECT_EQ(e.find("a_total"), 3.0);
  EXPECT_EQ(e.find("a_total", {{"route", "/x"}, {"code", "200"}}), 4.5);
  EXPECT_EQ(e.find(R"(a_total{code="404",route="/y"})"), 1000.0);
  EXPECT_EQ(e.find(R"(a_total{code="404"})"), std::nullopt) << "the whole label set must match";
  EXPECT_TRUE(std::isinf(*e.find(R"(b_bucket{le="+Inf"})")));
  EXPECT_EQ(e.find("c", {{"text", "quote \" backslash \\ newline \n"}}), -2.0);
  EXPECT_TRUE(std::isnan(*e.find("d")));
  EXPECT_EQ(e.find("missing"), std::nullopt);
  EXPECT_EQ(e.all("a_total").size(), 3u);
  EXPECT_EQ(metric_value("x 1\n", "x"), 1.0);
}

TEST(SupportMetrics, AMalformedLineIsNamed) {
  for (const char* bad :
       {"x{a=\"1\" 2\n", "x{a=1} 2\n", "x 1 2 3\n", "x two\n", "9x 1\n", "x{a=\"1\",a=\"2\"} 1\n", "x\n"}) {
    try {
      (void)Exposition::parse(std::string("ok 1\n") + bad);
      ADD_FAILURE() << "accepted: " << bad;
    } catch (const std::invalid_argument& e) {
      EXPECT_EQ(std::string(e.what()).rfind("exposition line 2: ", 0), 0u) << e.what();
    }
  }
}

TEST(SupportMetrics, ReadsARealAggregatorsMetrics) {
  TempDir dir;
  AggregatorProcess agg(dir.path());
  agg.start();
  auto c = agg.client();
  ASSERT_EQ(c.get("/api/v1/subnets")->status, 200);
  ASSERT_EQ(agg.client("").get("/api/v1/ports")->status, 401);
  const auto m = c.get("/metrics");
  ASSERT_TRUE(m && m->status == 200);
  const auto e = Exposition::parse(m->body);
  EXPECT_EQ(
      e.find("hsns_http_requests_total", {{"code", "200"}, {"method", "GET"}, {"route", "/api/v1/subnets"}}),
      1.0)
      << m->body;
  EXPECT_EQ(e.find(R"(hsns_http_auth_failures_total{reason="missing_token"})"), 1.0) << m->body;
  EXPECT_GT(e.find("hsns_http_max_connections").value_or(0), 0);
  EXPECT_FALSE(e.all("hsns_http_request_duration_seconds_bucket").empty());
  EXPECT_EQ(agg.stop(), 0) << agg.log();
}

}  // namespace
}  // namespace hsns::testing
