// Test helpers for the isolation and attach-layer end-to-end tests: UDP send/receive inside a namespace,
// removal of pin directories that dead test processes left (the parts of their own), and this directory's
// names for the shared harness in tests/support: shell commands, network namespaces the test creates
// (removed in the destructor, and stale ones of dead test processes removed at start), entering a
// namespace for the current thread.
#pragma once

#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstring>
#include <filesystem>
#include <functional>
#include <stdexcept>
#include <string>

#include "support/netns.h"
#include "support/shell.h"

namespace hsns::test {

// This directory's names for the shared harness (tests/support): commands through /bin/sh, polling,
// entering a namespace, namespaces named <prefix>-<pid>-<suffix> removed on destruction.
using ::hsns::testing::CommandResult;
using ::hsns::testing::Namespaces;
using ::hsns::testing::NetnsScope;
using ::hsns::testing::sh;

// Polls pred every 10 ms until it holds or the timeout passes; returns the last result.
inline bool eventually(const std::function<bool()>& pred,
                       std::chrono::milliseconds timeout = std::chrono::milliseconds(5000)) {
  return ::hsns::testing::wait_for(pred, timeout, std::chrono::milliseconds(10));
}

inline sockaddr_storage socket_address(const std::string& ip, std::uint16_t port, socklen_t& len) {
  sockaddr_storage ss{};
  if (ip.find(':') != std::string::npos) {
    auto* a = reinterpret_cast<sockaddr_in6*>(&ss);
    a->sin6_family = AF_INET6;
    a->sin6_port = htons(port);
    inet_pton(AF_INET6, ip.c_str(), &a->sin6_addr);
    len = sizeof(sockaddr_in6);
  } else {
    auto* a = reinterpret_cast<sockaddr_in*>(&ss);
    a->sin_family = AF_INET;
    a->sin_port = htons(port);
    inet_pton(AF_INET, ip.c_str(), &a->sin_addr);
    len = sizeof(sockaddr_in);
  }
  return ss;
}

// A UDP socket bound to ip:port inside netns; counts the datagrams that arrive.
class UdpReceiver {
 public:
  UdpReceiver(const std::string& netns, const std::string& ip, std::uint16_t port) {
    NetnsScope in(netns);
    socklen_t len = 0;
    const sockaddr_storage ss = socket_address(ip, port, len);
    fd_ = socket(ss.ss_family, SOCK_DGRAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
    if (fd_ < 0 || bind(fd_, reinterpret_cast<const sockaddr*>(&ss), len) != 0) {
      throw std::runtime_error("bind " + ip + ": " + std::strerror(errno));
    }
  }
  ~UdpReceiver() { close(fd_); }
  UdpReceiver(const UdpReceiver&) = delete;
  UdpReceiver& operator=(const UdpReceiver&) = delete;

  // Drains what has arrived, waiting up to wait for the first datagram when none is queued; counts the
  // datagrams whose payload is tag (late datagrams of an earlier step carry another tag).
  int drain(std::chrono::milliseconds wait, const std::string& tag) {
    int n = 0;
    int any = 0;
    pollfd p{fd_, POLLIN, 0};
    while (poll(&p, 1, any == 0 ? static_cast<int>(wait.count()) : 0) > 0) {
      char buf[2048];
      ssize_t len;
      while ((len = recv(fd_, buf, sizeof(buf), 0)) >= 0) {
        ++any;
        if (std::string(buf, static_cast<std::size_t>(len)) == tag) ++n;
      }
      if (any == 0) break;
    }
    return n;
  }

 private:
  int fd_ = -1;
};

// Sends count datagrams with payload tag from inside netns to ip:port; returns how many sendto() calls
// did not fail (a datagram dropped by tc still counts as sent).
inline int send_udp(const std::string& netns, const std::string& ip, std::uint16_t port, int count,
                    const std::string& tag) {
  NetnsScope in(netns);
  socklen_t len = 0;
  const sockaddr_storage ss = socket_address(ip, port, len);
  const int fd = socket(ss.ss_family, SOCK_DGRAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return 0;
  int sent = 0;
  for (int i = 0; i < count; ++i) {
    if (sendto(fd, tag.data(), tag.size(), 0, reinterpret_cast<const sockaddr*>(&ss), len) >= 0) ++sent;
  }
  close(fd);
  return sent;
}

// Sends n datagrams with payload tag from netns to ip:port until n arrive at rx. While links settle the
// first datagrams may be lost: every 20 ms without all n, one more is sent (at most 200 more). Returns the
// number of datagrams sent; *got (when given) is the number that arrived.
inline int send_until_delivered(const std::string& netns, UdpReceiver& rx, const std::string& ip,
                                std::uint16_t port, int n, const std::string& tag, int* got = nullptr) {
  int arrived = 0;
  int sent = send_udp(netns, ip, port, n, tag);
  eventually([&] {
    arrived += rx.drain(std::chrono::milliseconds(20), tag);
    if (arrived < n && sent < n + 200) sent += send_udp(netns, ip, port, 1, tag);
    return arrived >= n;
  });
  if (got != nullptr) *got = arrived;
  return sent;
}

// Pin directories /sys/fs/bpf/<prefix><pid>... of test processes that no longer run, each handed to remove.
inline void remove_stale_pin_dirs(const std::string& prefix,
                                  const std::function<void(const std::string&)>& remove) {
  std::error_code ec;
  const std::string start = "/sys/fs/bpf/" + prefix;
  for (const auto& entry : std::filesystem::directory_iterator("/sys/fs/bpf", ec)) {
    const std::string path = entry.path().string();
    if (path.rfind(start, 0) != 0) continue;
    const int pid = std::atoi(path.c_str() + start.size());
    if (pid > 0 && kill(pid, 0) != 0) remove(path);
  }
}

}  // namespace hsns::test
