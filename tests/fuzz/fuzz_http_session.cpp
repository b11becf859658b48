// libFuzzer target over the HTTP request path end to end: raw bytes into a real server session, as
// Beast's own fuzzers feed its parsers, but through the aggregator's HttpServer (aggregator/http/server.h)
// over a loopback TCP connection, with the real request pipeline and routes over a temporary SQLite store
// behind it (fuzz_aggregator.h). Framing, limits, pipelining, WebSocket upgrades, routing, handlers and
// response writing all run as in the aggregator.
//
// Input layout: the first byte chooses how the bytes are sent: 0..63 in writes of (byte + 1) bytes each,
// 64..255 in one write; the rest is the byte stream (any number of pipelined requests). The client writes
// while reading whatever comes back, half-closes once everything is written (or the server closed), and
// reads to end of stream.
//
// Invariants (a violation is __builtin_trap()): every input ends: the server closes the connection within
// 20 s (no hang) and its session is gone within 5 s after (no session leaked); what comes back is a
// sequence of well-formed HTTP/1.1 responses (an upgrade's 101 ends the HTTP part), each passing
// check_response (no 5xx but 501 and 503, problem documents well-formed). Leaks and memory errors are the
// sanitizers' to catch.
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <boost/beast/http/parser.hpp>
#include <boost/beast/http/string_body.hpp>
#include <cerrno>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include "fuzz_aggregator.h"

namespace {

namespace bhttp = boost::beast::http;
using hsns::fuzz::require;
using Clock = std::chrono::steady_clock;

int connect_loopback(std::uint16_t port) {
  const int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
  require(fd >= 0);
  const int one = 1;
  ::setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_port = htons(port);
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  const int rc = ::connect(fd, reinterpret_cast<const sockaddr*>(&addr), sizeof addr);
  require(rc == 0 || errno == EINPROGRESS);
  return fd;
}

struct Received {
  std::string bytes;
  bool reset = false;  // ended by a reset (the server closed with unread input): the tail may be lost
};

// Writes `stream` in pieces of `step` bytes while draining the answers; returns everything the server
// sent before closing. Traps when the server has not closed after 20 s.
Received exchange(int fd, std::string_view stream, std::size_t step) {
  Received received;
  std::size_t sent = 0;
  bool write_closed = false;
  const auto deadline = Clock::now() + std::chrono::seconds(20);
  char buffer[65536];
  for (;;) {
    if (!write_closed && sent == stream.size()) {
      ::shutdown(fd, SHUT_WR);
      write_closed = true;
    }
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now()).count();
    require(left > 0);  // the server must end every exchange
    pollfd p{fd, static_cast<short>(POLLIN | (write_closed ? 0 : POLLOUT)), 0};
    if (::poll(&p, 1, static_cast<int>(left)) <= 0) continue;
    if ((p.revents & POLLOUT) != 0 && !write_closed) {
      const auto n = ::send(fd, stream.data() + sent, std::min(step, stream.size() - sent), MSG_NOSIGNAL);
      if (n > 0) {
        sent += static_cast<std::size_t>(n);
      } else if (n < 0 && errno != EAGAIN && errno != EINTR) {
        write_closed = true;  // the server closed its side: read what it said
      }
    }
    if ((p.revents & (POLLIN | POLLHUP | POLLERR)) != 0) {
      const auto n = ::recv(fd, buffer, sizeof buffer, 0);
      if (n > 0) {
        received.bytes.append(buffer, static_cast<std::size_t>(n));
      } else if (n == 0) {
        return received;
      } else if (errno != EAGAIN && errno != EINTR) {
        received.reset = true;
        return received;
      }
    }
  }
}

// The methods of the requests in the stream, in order, as far as they parse (the server answers them in
// this order; a response to HEAD has no body). A request the server refuses as malformed is answered
// too, last: its method counts once its request line was read (verb::unknown before), as in the server,
// whose parser has the same header limit.
std::vector<bhttp::verb> request_methods(std::string_view stream) {
  std::vector<bhttp::verb> methods;
  while (!stream.empty()) {
    bhttp::request_parser<bhttp::string_body> parser;
    parser.eager(true);
    parser.header_limit(static_cast<std::uint32_t>(hsns::http::ServerLimits{}.header_limit));
    parser.body_limit(64 * 1024 * 1024);
    std::size_t used = 0;
    boost::system::error_code ec;
    while (!parser.is_done() && !ec) {
      const auto n = parser.put(boost::asio::buffer(stream.data() + used, stream.size() - used), ec);
      used += n;
      if (n == 0 && !ec) break;
    }
    if (parser.is_header_done() || (ec && ec != bhttp::error::need_more))
      methods.push_back(parser.get().method());
    if (!parser.is_done()) break;
    stream.remove_prefix(used);
  }
  return methods;
}

// The responses in what the server sent: each well-formed and passing check_response. A 101 ends the
// HTTP part (WebSocket frames follow). After a reset the last response may be cut short.
void check_responses(std::string_view bytes, bool reset, const std::vector<bhttp::verb>& methods) {
  for (std::size_t index = 0; !bytes.empty(); ++index) {
    bhttp::response_parser<bhttp::string_body> parser;
    parser.eager(true);
    parser.body_limit(64 * 1024 * 1024);
    const bool head = index < methods.size() && methods[index] == bhttp::verb::head;
    parser.skip(head);
    std::size_t used = 0;
    boost::system::error_code ec;
    while (!parser.is_done()) {
      const auto n = parser.put(boost::asio::buffer(bytes.data() + used, bytes.size() - used), ec);
      used += n;
      if (ec == bhttp::error::need_more || (n == 0 && !ec)) {
        if (reset) return;
        require(used == bytes.size());  // a response cut short (need_more with bytes left is a bad line)
        parser.put_eof(ec);
        require(!ec);  // only a body delimited by the end of stream may end here
        break;
      }
      require(!ec);
    }
    const auto& response = parser.get();
    hsns::fuzz::check_response(response, head);
    if (response.result() == bhttp::status::switching_protocols) return;
    bytes.remove_prefix(used);
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size == 0) return 0;
  auto& aggregator = hsns::fuzz::FuzzAggregator::instance();
  const std::size_t step = data[0] < 64 ? std::size_t{data[0]} + 1 : size;
  const std::string_view stream(reinterpret_cast<const char*>(data) + 1, size - 1);

  const int fd = connect_loopback(aggregator.port());
  const Received answers = exchange(fd, stream, step);
  ::close(fd);
  check_responses(answers.bytes, answers.reset, request_methods(stream));

  // The session is gone once the connection is: nothing keeps it (or its request) alive.
  const auto deadline = Clock::now() + std::chrono::seconds(5);
  while (aggregator.server().open_connections() > 0) {
    require(Clock::now() < deadline);
    std::this_thread::sleep_for(std::chrono::microseconds(200));
  }
  return 0;
}
