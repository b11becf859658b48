// Syslog ingest rate: messages per second parsed, mapped to a device and stored in the log buffer
// (GET /api/v1/logs's LogBuffer) by the aggregator's SyslogReceiver, sent over loopback UDP (one datagram
// per message; the sender keeps at most `window` messages in flight so that none is dropped) and over one
// TCP connection (RFC 6587 octet counting, written in 64 KiB chunks), printed beside the same run's
// baselines on the same lines: the raw parse alone (parse_syslog), and the receiver's in-process ingest
// (parse, device lookup, buffer) without sockets. The ratio socket / raw parse is the figure
// docs/performance.md reports. The receiver runs on one io_context thread, as on a 1-thread aggregator.
//
// Lines: a mix of RFC 5424 (with structured data) and RFC 3164 from 200 devices, 120..200 bytes each.
//
// Usage: hsns_bench_syslog_ingest [messages=200000] [window=128]  (a datagram takes about 1 KB of the default
// 208 KB socket receive buffer: a larger window loses datagrams, and the benchmark stops saying so)
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "bench_timing.h"
#include "ingest/syslog_receiver.h"

namespace {

using hsns::bench::Clock;
using hsns::bench::ms_since;
using hsns::bench::thread_cpu_ms;
namespace ingest = hsns::ingest;
namespace net = boost::asio;

constexpr int kDevices = 200;

void check(bool ok, const char* what) {
  if (!ok) {
    std::fprintf(stderr, "syslog_ingest: %s\n", what);
    std::exit(1);
  }
}

std::string device_name(int i) {
  char name[16];
  std::snprintf(name, sizeof name, "leaf%03d", i);
  return name;
}

std::vector<std::string> make_lines(std::size_t n) {
  std::vector<std::string> lines;
  lines.reserve(n);
  for (std::size_t i = 0; i < n; ++i) {
    const auto host = device_name(static_cast<int>(i % kDevices));
    const auto port = std::to_string(i % 64);
    std::string line;
    if (i % 2 == 0) {
      line.append("<187>1 2026-12-02T05:07:56.123Z ")
          .append(host)
          .append(" bgpd 2211 PEER [peer@32473 ip=\"198.18.0.");
      line.append(port).append("\" as=\"65001\"] neighbor 198.18.0.").append(port);
      line.append(" state changed to Idle (hold timer)");
    } else {
      line.append("<189>Dec  2 05:07:56 ")
          .append(host)
          .append(" ifmgr[311]: Interface Ethernet1/")
          .append(port);
      line.append(" changed state to down, reason: link fault, seq ").append(std::to_string(i));
    }
    lines.push_back(std::move(line));
  }
  return lines;
}

double per_second(std::size_t n, double ms) {
  return ms > 0 ? static_cast<double>(n) * 1000.0 / ms : 0;
}

struct Figures {
  double wall_ms = 0;
  double cpu_ms = 0;  // the calling thread's (raw parse, in-process) or the receiver thread's
};

Figures raw_parse(const std::vector<std::string>& lines) {
  ingest::SyslogContext context;
  context.receive_time_ms = 1'796'000'000'000;
  context.source = "127.0.0.1";
  std::size_t ok = 0;
  const double cpu0 = thread_cpu_ms();
  const auto t0 = Clock::now();
  for (const auto& line : lines) ok += ingest::parse_syslog(line, context).has_value() ? 1 : 0;
  Figures f{ms_since(t0), thread_cpu_ms() - cpu0};
  check(ok == lines.size(), "a line did not parse");
  return f;
}

// The receiver with a topology of kDevices devices (the NameResolver the aggregator uses), storing into a
// LogBuffer and counting what arrived.
struct Ingest {
  prometheus::Registry registry;
  ingest::IngestMetrics metrics{registry};
  ingest::LogBuffer buffer{ingest::LogBufferLimits{.per_device = 1000, .max_devices = 4096, .window = {}}};
  std::set<std::string, std::less<>> devices;
  std::atomic<std::size_t> stored{0};
  net::io_context ioc{1};
  std::unique_ptr<ingest::SyslogReceiver> receiver;

  explicit Ingest(bool udp, bool tcp) {
    for (int i = 0; i < kDevices; ++i) devices.insert(device_name(i));
    ingest::SyslogConfig config;
    if (udp) config.udp = ingest::ListenEndpoint{"127.0.0.1", 0};
    if (tcp) config.tcp = ingest::ListenEndpoint{"127.0.0.1", 0};
    const ingest::NameResolver by_name([this](std::string_view name, std::string& device) {
      const auto it = devices.find(name);
      if (it == devices.end()) return false;
      device = *it;
      return true;
    });
    receiver = std::make_unique<ingest::SyslogReceiver>(ioc, config, by_name, metrics);
    receiver->subscribe([this](const ingest::IngestedLog& log) {
      if (buffer.add(log).stored) stored.fetch_add(1, std::memory_order_release);
    });
    receiver->start();
  }
  // The connections' last handlers refer to the receiver: run them before it goes (as the aggregator's
  // event loop does before main returns).
  ~Ingest() {
    receiver->stop();
    ioc.restart();
    ioc.run_for(std::chrono::seconds(5));
    receiver.reset();
  }
  Ingest(const Ingest&) = delete;
  Ingest& operator=(const Ingest&) = delete;
};

Figures in_process(const std::vector<std::string>& lines) {
  Ingest in(false, false);
  const double cpu0 = thread_cpu_ms();
  const auto t0 = Clock::now();
  for (const auto& line : lines) in.receiver->ingest(line, "127.0.0.1", "udp");
  Figures f{ms_since(t0), thread_cpu_ms() - cpu0};
  check(in.stored.load() == lines.size(), "in-process: not every message was stored");
  return f;
}

// Runs the receiver's io_context on a thread of its own, measuring that thread's CPU time.
class ReceiverThread {
 public:
  explicit ReceiverThread(Ingest& in) : in_(in) {
    thread_ = std::thread([this] {
      const double cpu0 = thread_cpu_ms();
      auto guard = net::make_work_guard(in_.ioc);
      in_.ioc.run();
      cpu_ms_ = thread_cpu_ms() - cpu0;
    });
  }
  double stop() {
    in_.receiver->stop();
    in_.ioc.stop();
    thread_.join();
    return cpu_ms_;
  }

 private:
  Ingest& in_;
  std::thread thread_;
  double cpu_ms_ = 0;
};

sockaddr_in loopback(std::uint16_t port) {
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_port = htons(port);
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  return a;
}

Figures over_udp(const std::vector<std::string>& lines, std::size_t window) {
  Ingest in(true, false);
  const auto to = *in.receiver->udp_endpoint();
  ReceiverThread receiver(in);
  const int fd = ::socket(AF_INET, SOCK_DGRAM, 0);
  check(fd >= 0, "udp socket");
  sockaddr_in a = loopback(to.port());
  const auto t0 = Clock::now();
  for (std::size_t i = 0; i < lines.size(); ++i) {
    while (i - in.stored.load(std::memory_order_acquire) >= window) std::this_thread::yield();
    check(::sendto(fd, lines[i].data(), lines[i].size(), 0, reinterpret_cast<sockaddr*>(&a), sizeof a) ==
              static_cast<ssize_t>(lines[i].size()),
          "sendto");
  }
  // A datagram lost would stall here: give up after 10 s without progress.
  auto last = in.stored.load();
  auto progress = Clock::now();
  while (in.stored.load() < lines.size() && ms_since(progress) < 10'000) {
    std::this_thread::yield();
    if (in.stored.load() != last) {
      last = in.stored.load();
      progress = Clock::now();
    }
  }
  const double wall = ms_since(t0);
  ::close(fd);
  const double cpu = receiver.stop();
  check(in.stored.load() == lines.size(), "udp: datagrams were lost");
  return {wall, cpu};
}

Figures over_tcp(const std::vector<std::string>& lines) {
  Ingest in(false, true);
  const auto to = *in.receiver->tcp_endpoint();
  ReceiverThread receiver(in);
  std::string stream;
  for (const auto& line : lines) stream.append(std::to_string(line.size())).append(" ").append(line);
  const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  check(fd >= 0, "tcp socket");
  sockaddr_in a = loopback(to.port());
  check(::connect(fd, reinterpret_cast<sockaddr*>(&a), sizeof a) == 0, "connect");
  const auto t0 = Clock::now();
  for (std::size_t off = 0; off < stream.size();) {
    const auto n = ::send(fd, stream.data() + off, std::min<std::size_t>(65'536, stream.size() - off), 0);
    check(n > 0, "send");
    off += static_cast<std::size_t>(n);
  }
  while (in.stored.load() < lines.size() && ms_since(t0) < 60'000) std::this_thread::yield();
  const double wall = ms_since(t0);
  ::close(fd);
  const double cpu = receiver.stop();
  check(in.stored.load() == lines.size(), "tcp: not every message was stored");
  return {wall, cpu};
}

}  // namespace

int main(int argc, char** argv) {
  const std::size_t messages = argc > 1 ? std::strtoul(argv[1], nullptr, 10) : 200'000;
  const std::size_t window = argc > 2 ? std::strtoul(argv[2], nullptr, 10) : 128;
  const auto lines = make_lines(messages);
  std::size_t bytes = 0;
  for (const auto& l : lines) bytes += l.size();
  std::printf("syslog_ingest: %zu messages (%.0f bytes average), %d devices, UDP window %zu\n", messages,
              static_cast<double>(bytes) / static_cast<double>(messages), kDevices, window);
  (void)raw_parse(lines);  // warm-up: allocator and caches
  const auto parse = raw_parse(lines);
  const auto local = in_process(lines);
  const auto udp = over_udp(lines, window);
  const auto tcp = over_tcp(lines);
  const double base = per_second(messages, parse.wall_ms);
  const double base_cpu = per_second(messages, parse.cpu_ms);
  std::printf("%-34s %12s %12s %10s %10s %14s\n", "", "msg/s wall", "msg/s CPU", "x raw wall", "x raw CPU",
              "CPU us / msg");
  const auto row = [&](const char* name, const Figures& f) {
    std::printf("%-34s %12.0f %12.0f %10.2f %10.2f %14.2f\n", name, per_second(messages, f.wall_ms),
                per_second(messages, f.cpu_ms), per_second(messages, f.wall_ms) / base,
                per_second(messages, f.cpu_ms) / base_cpu, f.cpu_ms * 1000.0 / static_cast<double>(messages));
  };
  row("raw parse (baseline)", parse);
  row("in-process ingest (no sockets)", local);
  row("UDP loopback, parsed and stored", udp);
  row("TCP loopback, parsed and stored", tcp);
  std::printf("(CPU of UDP/TCP: the receiver's thread; x raw: the rate over the raw parse's rate)\n");
  return 0;
}
