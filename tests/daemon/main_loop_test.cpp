// hsnsd's main loop (daemon.h) with components of the test's own making (component.h is the whole
// contract between them): start in order, tick in order, stop in reverse, READY=1 only once every
// component is ready (on a real sd_notify socket), readiness on /metrics' registry, SIGHUP reload and
// SIGUSR1 trigger delivered as real signals, and a failed start that stops what already started.
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <functional>
#include <future>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "daemon.h"
#include "support/aggregator_process.h"

namespace hsns::daemon {
namespace {

using namespace std::chrono_literals;

struct Journal {
  std::mutex mutex;
  std::vector<std::string> events;
  void add(std::string e) {
    const std::lock_guard lock(mutex);
    events.push_back(std::move(e));
  }
  std::vector<std::string> all() {
    const std::lock_guard lock(mutex);
    return events;
  }
  bool has(const std::string& e) {
    for (const auto& x : all())
      if (x == e) return true;
    return false;
  }
};

class Recorder final : public Component {
 public:
  Recorder(std::string name, Journal& journal, bool ready = true, bool fail = false)
      : name_(std::move(name)), journal_(journal), ready_(ready), fail_(fail) {}
  std::string_view name() const override { return name_; }
  tl::expected<void, std::string> start() override {
    journal_.add("start:" + name_);
    if (fail_) return tl::unexpected(name_ + " cannot start");
    return {};
  }
  Clock::time_point tick(Clock::time_point now) override {
    if (!ticked_) journal_.add("tick:" + name_);  // the first tick only: the log stays short
    ticked_ = true;
    return now + 50ms;
  }
  void reload(const DaemonConfig& config) override { journal_.add("reload:" + name_ + ":" + config.host); }
  void trigger() override { journal_.add("trigger:" + name_); }
  void stop() override { journal_.add("stop:" + name_); }
  bool ready() const override { return ready_; }
  void set_ready() { ready_ = true; }

 private:
  std::string name_;
  Journal& journal_;
  std::atomic<bool> ready_;
  bool fail_;
  bool ticked_ = false;
};

bool wait_for(const std::function<bool()>& condition, std::chrono::milliseconds timeout) {
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  while (std::chrono::steady_clock::now() < deadline) {
    if (condition()) return true;
    std::this_thread::sleep_for(10ms);
  }
  return condition();
}

// A datagram socket standing in for systemd's notify socket; notes() drains what hsnsd sent so far.
class NotifySocket {
 public:
  explicit NotifySocket(const std::filesystem::path& path) : path_(path) {
    fd_ = ::socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
    sockaddr_un addr{};
    addr.sun_family = AF_UNIX;
    std::snprintf(addr.sun_path, sizeof addr.sun_path, "%s", path.c_str());
    EXPECT_EQ(::bind(fd_, reinterpret_cast<sockaddr*>(&addr), sizeof addr), 0);
  }
  ~NotifySocket() { ::close(fd_); }
  std::string notes() {
    char buf[512];
    for (;;) {
      const ssize_t n = ::recv(fd_, buf, sizeof buf, 0);
      if (n <= 0) break;
      notes_.append(buf, static_cast<std::size_t>(n)).push_back('\n');
    }
    return notes_;
  }

 private:
  std::filesystem::path path_;
  int fd_ = -1;
  std::string notes_;
};

double component_ready(Daemon& d, const std::string& component) {
  for (const auto& family : d.registry().Collect()) {
    if (family.name != "hsns_daemon_component_ready") continue;
    for (const auto& m : family.metric)
      for (const auto& l : m.label)
        if (l.name == "component" && l.value == component) return m.gauge.value;
  }
  return -1;
}

// The loop's signals are process-directed: every thread of the test blocks them, so only the loop's
// signalfd receives them.
class MainLoopTest : public ::testing::Test {
 protected:
  void SetUp() override {
    sigset_t set;
    sigemptyset(&set);
    for (int s : {SIGTERM, SIGINT, SIGHUP, SIGUSR1}) sigaddset(&set, s);
    ASSERT_EQ(::pthread_sigmask(SIG_BLOCK, &set, nullptr), 0);
    config.metrics_listen = "";
    config.host = "first";
  }
  hsns::testing::TempDir work;
  DaemonConfig config;
  Journal journal;
};

TEST_F(MainLoopTest, SequencesTheComponentsAndSendsReadyOnceAllAreReady) {
  NotifySocket notify(work.path() / "notify.sock");
  ::setenv("NOTIFY_SOCKET", (work.path() / "notify.sock").c_str(), 1);
  ::setenv("WATCHDOG_USEC", "20000000", 1);  // WATCHDOG=1 at once, then every 10 s
  int reloads = 0;
  Daemon daemon(config, [&]() -> tl::expected<DaemonConfig, std::string> {
    DaemonConfig fresh = config;
    fresh.host = "reloaded-" + std::to_string(++reloads);
    return fresh;
  });
  daemon.add<Recorder>("a", journal);
  auto& b = daemon.add<Recorder>("b", journal, /*ready=*/false);
  auto run = std::async(std::launch::async, [&] { return daemon.run(); });

  ASSERT_TRUE(wait_for([&] { return journal.has("tick:b"); }, 5s));
  EXPECT_TRUE(wait_for([&] { return notify.notes().find("WATCHDOG=1") != std::string::npos; }, 5s));
  EXPECT_EQ(notify.notes().find("READY=1"), std::string::npos) << "b is not ready yet";
  EXPECT_TRUE(wait_for([&] { return component_ready(daemon, "a") == 1; }, 5s));
  EXPECT_EQ(component_ready(daemon, "b"), 0);

  b.set_ready();
  EXPECT_TRUE(wait_for([&] { return notify.notes().find("READY=1") != std::string::npos; }, 5s));
  EXPECT_EQ(component_ready(daemon, "b"), 1);

  ::kill(::getpid(), SIGUSR1);
  EXPECT_TRUE(wait_for([&] { return journal.has("trigger:a") && journal.has("trigger:b"); }, 5s));
  EXPECT_FALSE(journal.has("reload:a:reloaded-1")) << "SIGUSR1 does not reload";

  ::kill(::getpid(), SIGHUP);
  EXPECT_TRUE(wait_for([&] { return journal.has("reload:b:reloaded-1"); }, 5s));
  EXPECT_TRUE(journal.has("reload:a:reloaded-1"));
  EXPECT_TRUE(wait_for([&] { return notify.notes().find("RELOADING=1") != std::string::npos; }, 5s));

  ::kill(::getpid(), SIGTERM);
  ASSERT_EQ(run.wait_for(10s), std::future_status::ready);
  EXPECT_EQ(run.get(), 0);
  ::unsetenv("NOTIFY_SOCKET");
  ::unsetenv("WATCHDOG_USEC");
  EXPECT_NE(notify.notes().find("STOPPING=1"), std::string::npos);

  const auto events = journal.all();
  ASSERT_GE(events.size(), 4u);
  EXPECT_EQ(events[0], "start:a");
  EXPECT_EQ(events[1], "start:b");
  EXPECT_EQ(events[2], "tick:a");
  EXPECT_EQ(events[3], "tick:b");
  EXPECT_EQ(events[events.size() - 2], "stop:b");
  EXPECT_EQ(events[events.size() - 1], "stop:a");
  // The reload reached a before b, and both before their triggers of that signal.
  const auto at = [&](const std::string& e) {
    return std::find(events.begin(), events.end(), e) - events.begin();
  };
  EXPECT_LT(at("reload:a:reloaded-1"), at("reload:b:reloaded-1"));
}

TEST_F(MainLoopTest, AFailedStartStopsWhatStartedInReverseAndExitsOne) {
  Daemon daemon(config, [&]() -> tl::expected<DaemonConfig, std::string> { return config; });
  daemon.add<Recorder>("a", journal);
  daemon.add<Recorder>("b", journal);
  daemon.add<Recorder>("c", journal, true, /*fail=*/true);
  daemon.add<Recorder>("d", journal);
  EXPECT_EQ(daemon.run(), 1);
  EXPECT_EQ(journal.all(), (std::vector<std::string>{"start:a", "start:b", "start:c", "stop:b", "stop:a"}));
}

TEST_F(MainLoopTest, AnInvalidReloadKeepsTheRunningConfiguration) {
  Daemon daemon(config, [&]() -> tl::expected<DaemonConfig, std::string> {
    return tl::unexpected(std::string("hsnsd.yaml: interval_ms: wrong type"));
  });
  daemon.add<Recorder>("a", journal);
  auto run = std::async(std::launch::async, [&] { return daemon.run(); });
  ASSERT_TRUE(wait_for([&] { return journal.has("tick:a"); }, 5s));
  ::kill(::getpid(), SIGHUP);
  EXPECT_TRUE(wait_for([&] { return journal.has("trigger:a"); }, 5s));
  ::kill(::getpid(), SIGTERM);
  ASSERT_EQ(run.wait_for(10s), std::future_status::ready);
  EXPECT_EQ(run.get(), 0);
  for (const auto& e : journal.all()) EXPECT_EQ(e.rfind("reload:", 0), std::string::npos) << e;
}

}  // namespace
}  // namespace hsns::daemon
