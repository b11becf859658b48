// hsns-roce-gen: sends a deterministic RoCEv2 mix (generator.h) as UDP datagrams or as raw Ethernet frames
// (AF_PACKET: plain, VLAN, QinQ, IPv6, ERSPAN II/III) and prints the exact per-flow counts it sent as one
// JSON document on stdout. Exit status: 0 all sent, 1 send failure, 64 usage error.
#include <arpa/inet.h>
#include <net/if.h>
#include <netinet/in.h>
#include <netpacket/packet.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <csignal>
#include <cstddef>
#include <cstring>
#include <iostream>
#include <map>
#include <string>
#include <thread>
#include <vector>

#include "generator.h"
#include "packet.h"

namespace {

using hsns::roce_gen::Encap;
using hsns::roce_gen::PacketSpec;

struct Options {
  hsns::roce_gen::MixConfig mix;
  std::string mode = "udp";
  std::string iface;
  std::string encap = "none";
  std::string dst_mac = "ff:ff:ff:ff:ff:ff";
  std::string src_mac = "02:00:00:00:00:01";
  std::uint16_t vlan = 100;
  double rate = 0;
  bool dry_run = false;
  int iterations = 1;    // 0: until SIGTERM
  int period_ms = 1000;  // start of one iteration to the start of the next
  bool quiet = false;    // periodic mode: send failures are counted, not printed
};

void usage(std::ostream& os) {
  os << "usage: hsns-roce-gen --src IP --dst IP [--seed N] [--flows N] [--packets N] [--rate PPS]\n"
        "         [--mode udp|raw] [--iface IF] [--encap none|vlan|qinq|erspan2|erspan3]\n"
        "         [--dst-mac MAC] [--src-mac MAC] [--vlan ID] [--retransmit-permille N] [--ce-permille N]\n"
        "         [--cnp-permille N] [--nak-permille N] [--iterations N] [--period-ms MS] [--dry-run]\n"
        "SIGTERM stops sending; the summary then covers the packets sent.\n"
        "--iterations N (0: until SIGTERM) sends the mix again every --period-ms, like the bursts of a "
        "training\n"
        "job's iterations; the summary then has the totals (iterations, sent, send_errors), not per-flow "
        "counts.\n";
}

bool parse_mac(const std::string& s, hsns::roce_gen::Mac& m) {
  unsigned v[6];
  if (std::sscanf(s.c_str(), "%x:%x:%x:%x:%x:%x", &v[0], &v[1], &v[2], &v[3], &v[4], &v[5]) != 6)
    return false;
  for (int i = 0; i < 6; ++i) m[static_cast<std::size_t>(i)] = static_cast<std::uint8_t>(v[i]);
  return true;
}

int parse_args(int argc, char** argv, Options& o) {
  std::map<std::string, std::string*> strings = {
      {"--src", &o.mix.src}, {"--dst", &o.mix.dst},     {"--mode", &o.mode},      {"--iface", &o.iface},
      {"--encap", &o.encap}, {"--dst-mac", &o.dst_mac}, {"--src-mac", &o.src_mac}};
  std::map<std::string, int*> ints = {{"--flows", &o.mix.flows},
                                      {"--packets", &o.mix.packets_per_flow},
                                      {"--retransmit-permille", &o.mix.retransmit_permille},
                                      {"--ce-permille", &o.mix.ce_permille},
                                      {"--cnp-permille", &o.mix.cnp_permille},
                                      {"--nak-permille", &o.mix.nak_permille},
                                      {"--iterations", &o.iterations},
                                      {"--period-ms", &o.period_ms}};
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (a == "--dry-run") {
      o.dry_run = true;
      continue;
    }
    if (a == "--help" || a == "-h") return 1;
    if (i + 1 >= argc) return 2;
    const std::string v = argv[++i];
    try {
      if (auto s = strings.find(a); s != strings.end()) {
        *s->second = v;
      } else if (auto n = ints.find(a); n != ints.end()) {
        *n->second = std::stoi(v);
      } else if (a == "--seed") {
        o.mix.seed = std::stoull(v);
      } else if (a == "--rate") {
        o.rate = std::stod(v);
      } else if (a == "--vlan") {
        o.vlan = static_cast<std::uint16_t>(std::stoi(v) & 0xFFF);
      } else {
        return 2;
      }
    } catch (const std::exception&) {
      return 2;
    }
  }
  return 0;
}

// SIGTERM ends the run early: the packets sent so far are summarised as if they were the whole plan, so a
// test can run traffic for as long as it needs and still know the exact counts.
volatile std::sig_atomic_t g_stop = 0;
extern "C" void request_stop(int /*sig*/) {
  g_stop = 1;
}

class Pacer {
 public:
  explicit Pacer(double rate) : rate_(rate), start_(std::chrono::steady_clock::now()) {}
  void wait(std::uint64_t sent) const {
    if (rate_ <= 0) return;
    const auto due = start_ + std::chrono::duration_cast<std::chrono::steady_clock::duration>(
                                  std::chrono::duration<double>(static_cast<double>(sent) / rate_));
    std::this_thread::sleep_until(due);
  }

 private:
  double rate_;
  std::chrono::steady_clock::time_point start_;
};

struct Fd {
  int fd = -1;
  explicit Fd(int f) : fd(f) {}
  Fd(Fd&& o) noexcept : fd(o.fd) { o.fd = -1; }
  Fd(const Fd&) = delete;
  Fd& operator=(const Fd&) = delete;
  Fd& operator=(Fd&&) = delete;
  ~Fd() {
    if (fd >= 0) close(fd);
  }
};

int send_udp(const Options& o, const std::vector<PacketSpec>& pkts, std::uint64_t& n) {
  std::map<std::uint16_t, Fd> socks;
  const Pacer pacer(o.rate);
  for (const auto& p : pkts) {
    if (g_stop != 0) break;
    auto it = socks.find(p.sport);
    if (it == socks.end()) {
      const int fam = p.family == 4 ? AF_INET : AF_INET6;
      Fd s(socket(fam, SOCK_DGRAM, 0));
      if (s.fd < 0) return o.quiet ? 1 : (std::cerr << "socket: " << std::strerror(errno) << "\n", 1);
      const int one = 1;
      setsockopt(s.fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
      sockaddr_storage ss{};
      socklen_t len = 0;
      if (p.family == 4) {
        auto* a = reinterpret_cast<sockaddr_in*>(&ss);
        a->sin_family = AF_INET;
        a->sin_port = htons(p.sport);
        std::memcpy(&a->sin_addr, p.src.data(), 4);
        len = sizeof(*a);
      } else {
        auto* a = reinterpret_cast<sockaddr_in6*>(&ss);
        a->sin6_family = AF_INET6;
        a->sin6_port = htons(p.sport);
        std::memcpy(&a->sin6_addr, p.src.data(), 16);
        len = sizeof(*a);
      }
      if (bind(s.fd, reinterpret_cast<sockaddr*>(&ss), len) != 0)
        return o.quiet ? 1 : (std::cerr << "bind: " << std::strerror(errno) << "\n", 1);
      it = socks.emplace(p.sport, std::move(s)).first;
    }
    const auto payload = hsns::roce_gen::roce_udp_payload(p);
    sockaddr_storage to{};
    socklen_t tolen = 0;
    if (p.family == 4) {
      auto* a = reinterpret_cast<sockaddr_in*>(&to);
      a->sin_family = AF_INET;
      a->sin_port = htons(4791);
      std::memcpy(&a->sin_addr, p.dst.data(), 4);
      tolen = sizeof(*a);
    } else {
      auto* a = reinterpret_cast<sockaddr_in6*>(&to);
      a->sin6_family = AF_INET6;
      a->sin6_port = htons(4791);
      std::memcpy(&a->sin6_addr, p.dst.data(), 16);
      tolen = sizeof(*a);
    }
    iovec iov{const_cast<std::uint8_t*>(payload.data()), payload.size()};
    alignas(cmsghdr) char cbuf[CMSG_SPACE(sizeof(int))] = {};
    msghdr msg{};
    msg.msg_name = &to;
    msg.msg_namelen = tolen;
    msg.msg_iov = &iov;
    msg.msg_iovlen = 1;
    msg.msg_control = cbuf;
    msg.msg_controllen = sizeof(cbuf);
    cmsghdr* c = CMSG_FIRSTHDR(&msg);
    const int tos = p.ecn;
    c->cmsg_level = p.family == 4 ? IPPROTO_IP : IPPROTO_IPV6;
    c->cmsg_type = p.family == 4 ? IP_TOS : IPV6_TCLASS;
    c->cmsg_len = CMSG_LEN(sizeof(int));
    std::memcpy(CMSG_DATA(c), &tos, sizeof(tos));
    pacer.wait(n);
    if (sendmsg(it->second.fd, &msg, 0) != static_cast<ssize_t>(payload.size()))
      return o.quiet ? 1 : (std::cerr << "sendmsg: " << std::strerror(errno) << "\n", 1);
    ++n;
  }
  return 0;
}

int send_raw(const Options& o, const std::vector<PacketSpec>& pkts, Encap encap, std::uint64_t& n) {
  const unsigned ifindex = if_nametoindex(o.iface.c_str());
  if (ifindex == 0) return std::cerr << "unknown interface '" << o.iface << "'\n", 1;
  Fd s(socket(AF_PACKET, SOCK_RAW, 0));
  if (s.fd < 0) return std::cerr << "AF_PACKET socket: " << std::strerror(errno) << "\n", 1;
  sockaddr_ll ll{};
  ll.sll_family = AF_PACKET;
  ll.sll_ifindex = static_cast<int>(ifindex);
  ll.sll_halen = 6;
  hsns::roce_gen::FrameSpec fs;
  fs.encap = encap;
  fs.vlan = o.vlan;
  if (!parse_mac(o.dst_mac, fs.dst_mac) || !parse_mac(o.src_mac, fs.src_mac))
    return std::cerr << "bad MAC address\n", 64;
  const Pacer pacer(o.rate);
  for (const auto& p : pkts) {
    if (g_stop != 0) break;
    const auto f = hsns::roce_gen::frame(p, fs);
    pacer.wait(n);
    if (sendto(s.fd, f.data(), f.size(), 0, reinterpret_cast<sockaddr*>(&ll), sizeof(ll)) !=
        static_cast<ssize_t>(f.size()))
      return o.quiet ? 1 : (std::cerr << "sendto: " << std::strerror(errno) << "\n", 1);
    ++n;
  }
  return 0;
}

// Periodic mode: the mix once per iteration, iterations starting every period_ms (an iteration that takes
// longer starts the next at once). A failed send ends that iteration only: a fabric with a fault drops
// traffic, the job goes on. Sleeps in slices so that SIGTERM ends the run within 50 ms.
int send_periodic(Options& o, const std::vector<PacketSpec>& pkts, Encap encap) {
  o.quiet = true;
  std::uint64_t total = 0;
  std::uint64_t errors = 0;
  std::int64_t done = 0;
  auto next = std::chrono::steady_clock::now();
  while (g_stop == 0 && (o.iterations == 0 || done < o.iterations)) {
    std::uint64_t sent = 0;
    const int rc = o.mode == "udp" ? send_udp(o, pkts, sent) : send_raw(o, pkts, encap, sent);
    if (rc == 64) return 64;
    if (rc != 0) ++errors;
    total += sent;
    ++done;
    next += std::chrono::milliseconds(o.period_ms);
    while (g_stop == 0 && std::chrono::steady_clock::now() < next)
      std::this_thread::sleep_for(std::min<std::chrono::steady_clock::duration>(
          std::chrono::milliseconds(50), next - std::chrono::steady_clock::now()));
    if (std::chrono::steady_clock::now() > next + std::chrono::milliseconds(o.period_ms))
      next = std::chrono::steady_clock::now();  // far behind: do not send a backlog of bursts
  }
  nlohmann::json out;
  out["seed"] = o.mix.seed;
  out["mode"] = o.mode;
  out["encap"] = o.encap;
  out["iterations"] = done;
  out["sent"] = total;
  out["send_errors"] = errors;
  std::cout << out.dump() << "\n";
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  Options o;
  const int pa = parse_args(argc, argv, o);
  if (pa != 0) {
    usage(pa == 1 ? std::cout : std::cerr);
    return pa == 1 ? 0 : 64;
  }
  if (auto err = hsns::roce_gen::validate(o.mix); !err.empty()) return std::cerr << err << "\n", 64;
  static const std::map<std::string, Encap> kEncaps = {{"none", Encap::none},
                                                       {"vlan", Encap::vlan},
                                                       {"qinq", Encap::qinq},
                                                       {"erspan2", Encap::erspan2},
                                                       {"erspan3", Encap::erspan3}};
  const auto enc = kEncaps.find(o.encap);
  if (enc == kEncaps.end()) return std::cerr << "unknown --encap '" << o.encap << "'\n", 64;
  if (o.mode != "udp" && o.mode != "raw") return std::cerr << "unknown --mode '" << o.mode << "'\n", 64;
  if (o.mode == "udp" && enc->second != Encap::none) return std::cerr << "--encap needs --mode raw\n", 64;
  if (o.mode == "raw" && o.iface.empty()) return std::cerr << "--mode raw needs --iface\n", 64;

  if (o.iterations < 0 || o.period_ms < 1)
    return std::cerr << "--iterations must be >= 0, --period-ms >= 1\n", 64;
  auto pkts = hsns::roce_gen::plan(o.mix);
  if (o.iterations != 1 && !o.dry_run) {
    std::signal(SIGTERM, request_stop);
    std::signal(SIGINT, request_stop);
    return send_periodic(o, pkts, enc->second);
  }
  int rc = 0;
  if (!o.dry_run) {
    std::signal(SIGTERM, request_stop);
    std::uint64_t sent = 0;
    rc = o.mode == "udp" ? send_udp(o, pkts, sent) : send_raw(o, pkts, enc->second, sent);
    if (rc == 0 && sent < pkts.size()) {
      // Stopped early: the summary covers what was sent.
      pkts.erase(pkts.begin() + static_cast<std::ptrdiff_t>(sent), pkts.end());
      std::cerr << "stopped after " << sent << " packets\n";
    }
  }
  nlohmann::json out;
  out["seed"] = o.mix.seed;
  out["mode"] = o.mode;
  out["encap"] = o.encap;
  out["sent"] = rc == 0 ? pkts.size() : 0;
  out["complete"] = rc == 0;
  out["flows"] = hsns::roce_gen::to_json(hsns::roce_gen::tally(pkts));
  std::cout << out.dump() << "\n";
  return rc;
}
