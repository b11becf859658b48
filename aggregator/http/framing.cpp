#include "http/framing.h"

#include <boost/beast/core/string.hpp>
#include <boost/beast/http/rfc7230.hpp>
#include <boost/url/parse.hpp>
#include <string>
#include <vector>

namespace hsns::http {
namespace {

namespace bhttp = boost::beast::http;

Problem bad_request(std::string slug, std::string title, std::string detail) {
  return Problem{400, std::move(slug), std::move(title), std::move(detail), {}};
}

Problem bad_framing(std::string detail) {
  return bad_request("bad-framing", "Invalid message framing", std::move(detail));
}

Problem bad_header(std::string detail) {
  return bad_request("malformed-header", "Malformed request header", std::move(detail));
}

// Header fields whose repetition makes the request ambiguous: which value would a proxy in front of us
// have used? Refusing is the only answer that agrees with every proxy.
constexpr bhttp::field kSingletonFields[] = {bhttp::field::host, bhttp::field::authorization,
                                             bhttp::field::content_length, bhttp::field::content_type};

std::optional<Problem> check_transfer_encoding(const bhttp::request_header<>& h) {
  std::vector<std::string> codings;
  const auto [first, last] = h.equal_range(bhttp::field::transfer_encoding);
  for (auto it = first; it != last; ++it) {
    for (const auto coding : bhttp::token_list{it->value()}) codings.emplace_back(coding);
  }
  if (h.count(bhttp::field::transfer_encoding) == 0) return std::nullopt;
  if (h.version() < 11) {
    return bad_framing("Transfer-Encoding is not defined for HTTP/1.0 requests");
  }
  if (h.count(bhttp::field::content_length) > 0) {
    return bad_framing("a request may not carry both Transfer-Encoding and Content-Length");
  }
  if (codings.empty()) return bad_framing("Transfer-Encoding names no coding");
  if (!boost::beast::iequals(codings.back(), "chunked")) {
    return bad_framing("Transfer-Encoding must end with chunked (got '" + codings.back() +
                       "'); the body length would be unknown");
  }
  for (std::size_t i = 0; i + 1 < codings.size(); ++i) {
    if (boost::beast::iequals(codings[i], "chunked")) {
      return bad_framing("Transfer-Encoding applies chunked more than once");
    }
  }
  if (codings.size() > 1) {
    Problem p{501,
              "coding-not-implemented",
              "Transfer coding not implemented",
              "Transfer-Encoding '" + codings.front() + "' is not implemented; send the body chunked only",
              {}};
    return p;
  }
  return std::nullopt;
}

}  // namespace

std::optional<Problem> check_request_framing(const bhttp::request_header<>& h) {
  for (const auto field : kSingletonFields) {
    if (h.count(field) > 1) {
      return bad_header("header field " + std::string(bhttp::to_string(field)) + " appears more than once");
    }
  }
  if (auto p = check_transfer_encoding(h)) return p;
  if (const auto cl = h.find(bhttp::field::content_length); cl != h.end()) {
    // Beast accepts "5, 5"; a proxy may not, so one plain number is the only unambiguous form.
    const auto v = cl->value();
    if (v.empty() || v.find_first_not_of("0123456789") != std::string_view::npos) {
      return bad_framing("Content-Length must be a single decimal number");
    }
  }
  if (h.version() >= 11) {
    const auto host = h.find(bhttp::field::host);
    if (host == h.end()) return bad_header("an HTTP/1.1 request needs a Host header field");
    if (!host->value().empty()) {
      const auto authority = boost::urls::parse_authority(host->value());
      if (!authority || authority->has_userinfo()) {
        return bad_header("the Host header field is not a valid host[:port]");
      }
    }
  }
  return std::nullopt;
}

Problem parse_error_problem(const boost::system::error_code& ec) {
  using E = bhttp::error;
  if (ec == E::bad_method || ec == E::bad_target || ec == E::bad_version) {
    return bad_request("malformed-request-line", "Malformed request line", "request line: " + ec.message());
  }
  if (ec == E::bad_field || ec == E::bad_value || ec == E::bad_line_ending) {
    return bad_header("header fields: " + ec.message());
  }
  if (ec == E::bad_content_length) {
    return bad_framing("Content-Length is not a number, or comes with Transfer-Encoding: chunked");
  }
  if (ec == E::multiple_content_length) return bad_framing("Content-Length fields disagree");
  if (ec == E::bad_transfer_encoding) {
    return bad_framing("Transfer-Encoding is repeated after chunked, or comes with Content-Length");
  }
  if (ec == E::bad_chunk || ec == E::bad_chunk_extension) {
    return bad_request("malformed-chunked-body", "Malformed chunked body", "chunked body: " + ec.message());
  }
  return bad_request("malformed-request", "Malformed request", ec.message());
}

}  // namespace hsns::http
