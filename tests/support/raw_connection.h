// Raw loopback sockets for tests that must send exactly the bytes they choose (half-sent frames,
// announced bodies never sent, many connections from chosen source addresses, syslog datagrams).
//
// Contract: free_loopback_port(SOCK_STREAM or SOCK_DGRAM) answers a port of 127.0.0.1 no one listens on
// now (bound and released: the kernel does not hand it out again at once). send_udp() sends one datagram
// to 127.0.0.1:port and records a test failure when it could not. RawConnection: the constructor connects to
// 127.0.0.1:port, from `source` (another loopback address such as 127.0.0.2, so that one machine plays
// several senders) when given; connected() says whether it did. send() writes every byte or answers false;
// read_until_close() collects what arrives until the peer closes (closed set) or the timeout passes. The
// descriptor is closed on destruction. Not thread-safe.
#pragma once

#include <chrono>
#include <string>
#include <string_view>

namespace hsns::testing {

int free_loopback_port(int socket_type);
void send_udp(int port, std::string_view payload);

class RawConnection {
 public:
  explicit RawConnection(int port, const std::string& source = "");
  ~RawConnection();
  RawConnection(const RawConnection&) = delete;
  RawConnection& operator=(const RawConnection&) = delete;
  RawConnection(RawConnection&& o) noexcept;

  bool connected() const { return connected_; }
  void finish_sending();
  bool send(std::string_view bytes);
  std::string read_until_close(std::chrono::milliseconds timeout, bool* closed = nullptr);

 private:
  int fd_ = -1;
  bool connected_ = false;
};

}  // namespace hsns::testing
