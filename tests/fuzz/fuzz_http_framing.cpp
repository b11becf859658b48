// libFuzzer target over the bytes a client sends to the aggregator: Beast's request parser fed in pieces
// as a socket would deliver them, then the server's framing rules (aggregator/http/framing.h) on every
// complete header, and the problem chosen for every parse error.
//
// Invariants checked (a violation is __builtin_trap()):
// - a header the framing rules accept has an unambiguous body length: chunked (with exactly one final
//   "chunked" coding and no Content-Length) or one Content-Length field or none;
// - an HTTP/1.1 header they accept has exactly one Host field;
// - every problem is a 4xx/5xx with a title and detail, and never titled as a body problem for an error
//   found in the request line or header fields.
// Input: the first byte picks the split points (how many bytes each read delivers); the rest is the
// stream, which may hold several pipelined requests.
#include <boost/beast/core/flat_buffer.hpp>
#include <boost/beast/core/string.hpp>
#include <boost/beast/http/parser.hpp>
#include <boost/beast/http/string_body.hpp>
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "http/framing.h"

namespace {

namespace bhttp = boost::beast::http;

void check(bool ok) {
  if (!ok) __builtin_trap();
}

void check_problem(const hsns::Problem& p) {
  check(p.status >= 400 && p.status <= 599);
  check(!p.title.empty() && !p.detail.empty());
  check(p.title != "Malformed request body");
}

void check_accepted_header(const bhttp::request_parser<bhttp::string_body>& parser) {
  const auto& h = parser.get().base();
  const auto te = h.count(bhttp::field::transfer_encoding);
  const auto cl = h.count(bhttp::field::content_length);
  check(cl <= 1);
  if (te > 0) {
    check(cl == 0);
    check(parser.chunked());
  }
  if (h.version() >= 11) check(h.count(bhttp::field::host) == 1);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size < 1) return 0;
  const std::size_t step = 1 + data[0] % 64;
  std::string_view stream(reinterpret_cast<const char*>(data + 1), size - 1);

  // Up to a few pipelined requests, each through a fresh parser as the server does.
  for (int request = 0; request < 4 && !stream.empty(); ++request) {
    bhttp::request_parser<bhttp::string_body> parser;
    parser.header_limit(16 * 1024);
    parser.body_limit(64 * 1024);
    std::size_t consumed = 0;                              // bytes the parser took
    std::size_t received = std::min(stream.size(), step);  // bytes "arrived" from the socket so far
    bool framing_checked = false;
    while (!parser.is_done()) {
      boost::system::error_code ec;
      const auto n = parser.put(boost::asio::buffer(stream.data() + consumed, received - consumed), ec);
      consumed += n;
      if (ec && ec != bhttp::error::need_more) {
        check_problem(hsns::http::parse_error_problem(ec));
        return 0;  // the server answers and closes
      }
      if (parser.is_header_done() && !framing_checked) {
        framing_checked = true;
        if (auto problem = hsns::http::check_request_framing(parser.get().base())) {
          check_problem(*problem);
          return 0;  // refused before the body: the connection closes
        }
        check_accepted_header(parser);
        parser.eager(true);  // as async_read does once the header passed
      }
      if (parser.is_done()) break;
      if (ec == bhttp::error::need_more || consumed == received) {
        // Beast wants a whole line or more body: the next read delivers more, if there is more.
        if (received == stream.size()) return 0;  // ends mid-request: the server would time out
        received = std::min(stream.size(), received + step);
      }
    }
    stream.remove_prefix(consumed);
  }
  return 0;
}
