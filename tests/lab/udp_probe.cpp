// udp_probe: a tiny UDP sender/receiver for the emulated-cluster acceptance test (tests/lab/).
//
//   udp_probe recv ADDR PORT COUNT TIMEOUT_MS [READY_FILE]
//       Binds ADDR:PORT, creates READY_FILE once bound, prints "<source address> <payload>" for every
//       datagram and exits 0 after COUNT datagrams, 1 when TIMEOUT_MS pass first (after printing what it
//       got).
//   udp_probe send SRC DST PORT COUNT PAYLOAD [DEVICE]
//       Binds SRC (any port), and DEVICE when given (SO_BINDTODEVICE: the kernel then sends on that port even
//       without a route), sends COUNT datagrams "PAYLOAD <n>" to DST:PORT; exits 0 when all were sent.
// IPv4 and IPv6 literals only; exit 2 on a usage or socket error.
#include <arpa/inet.h>
#include <netdb.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <string>

namespace {

bool resolve(const char* addr, const char* port, sockaddr_storage& out, socklen_t& len) {
  addrinfo hints{};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_DGRAM;
  hints.ai_flags = AI_NUMERICHOST | AI_NUMERICSERV;
  addrinfo* res = nullptr;
  if (getaddrinfo(addr, port, &hints, &res) != 0 || res == nullptr) return false;
  std::memcpy(&out, res->ai_addr, res->ai_addrlen);
  len = res->ai_addrlen;
  freeaddrinfo(res);
  return true;
}

std::string text_of(const sockaddr_storage& a) {
  char buf[INET6_ADDRSTRLEN] = {};
  if (a.ss_family == AF_INET)
    inet_ntop(AF_INET, &reinterpret_cast<const sockaddr_in&>(a).sin_addr, buf, sizeof buf);
  else
    inet_ntop(AF_INET6, &reinterpret_cast<const sockaddr_in6&>(a).sin6_addr, buf, sizeof buf);
  return buf;
}

int fail(const std::string& what) {
  std::fprintf(stderr, "udp_probe: %s: %s\n", what.c_str(), std::strerror(errno));
  return 2;
}

int recv_main(int argc, char** argv) {
  if (argc < 6) return 2;
  sockaddr_storage local{};
  socklen_t len = 0;
  if (!resolve(argv[2], argv[3], local, len)) return fail(std::string("bad address ") + argv[2]);
  const long want = std::strtol(argv[4], nullptr, 10);
  const auto deadline =
      std::chrono::steady_clock::now() + std::chrono::milliseconds(std::strtol(argv[5], nullptr, 10));
  const int fd = socket(local.ss_family, SOCK_DGRAM, 0);
  if (fd < 0) return fail("socket");
  if (bind(fd, reinterpret_cast<sockaddr*>(&local), len) != 0) return fail("bind");
  if (argc > 6) std::ofstream(argv[6]) << "ready\n";
  long got = 0;
  while (got < want) {
    const auto left =
        std::chrono::duration_cast<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now());
    if (left.count() <= 0) break;
    pollfd p{fd, POLLIN, 0};
    if (poll(&p, 1, static_cast<int>(left.count())) <= 0) continue;
    char buf[2048];
    sockaddr_storage from{};
    socklen_t flen = sizeof from;
    const ssize_t n = recvfrom(fd, buf, sizeof buf, 0, reinterpret_cast<sockaddr*>(&from), &flen);
    if (n < 0) return fail("recvfrom");
    std::printf("%s %.*s\n", text_of(from).c_str(), static_cast<int>(n), buf);
    std::fflush(stdout);
    ++got;
  }
  close(fd);
  if (got < want) std::fprintf(stderr, "udp_probe: received %ld of %ld datagrams\n", got, want);
  return got >= want ? 0 : 1;
}

int send_main(int argc, char** argv) {
  if (argc < 7) return 2;
  sockaddr_storage src{}, dst{};
  socklen_t slen = 0, dlen = 0;
  if (!resolve(argv[2], "0", src, slen)) return fail(std::string("bad address ") + argv[2]);
  if (!resolve(argv[3], argv[4], dst, dlen)) return fail(std::string("bad address ") + argv[3]);
  const long count = std::strtol(argv[5], nullptr, 10);
  const int fd = socket(src.ss_family, SOCK_DGRAM, 0);
  if (fd < 0) return fail("socket");
  if (argc > 7 &&
      setsockopt(fd, SOL_SOCKET, SO_BINDTODEVICE, argv[7], static_cast<socklen_t>(std::strlen(argv[7]))) != 0)
    return fail(std::string("bind to device ") + argv[7]);
  if (bind(fd, reinterpret_cast<sockaddr*>(&src), slen) != 0) return fail("bind");
  for (long i = 0; i < count; ++i) {
    const std::string msg = std::string(argv[6]) + " " + std::to_string(i);
    if (sendto(fd, msg.data(), msg.size(), 0, reinterpret_cast<sockaddr*>(&dst), dlen) < 0)
      return fail("sendto");
  }
  close(fd);
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  const std::string mode = argc > 1 ? argv[1] : "";
  if (mode == "recv" && argc >= 6) return recv_main(argc, argv);
  if (mode == "send" && argc >= 7) return send_main(argc, argv);
  std::fprintf(stderr,
               "usage: udp_probe recv ADDR PORT COUNT TIMEOUT_MS [READY_FILE]\n"
               "       udp_probe send SRC DST PORT COUNT PAYLOAD [DEVICE]\n");
  return 2;
}
