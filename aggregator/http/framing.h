// Request framing rules the server enforces on top of Beast's parser, and the problem documents for
// requests the parser refuses. Pure functions over a parsed header; no I/O.
//
// Contract:
// - check_request_framing() runs once the header is complete and before any body byte is read. It
//   answers nullopt for a request whose framing is unambiguous, else the problem to send before closing
//   the connection (the body, if any, is never read, so it can never be taken for a second request):
//   - Transfer-Encoding (all its fields together) must be exactly one final "chunked": a list whose last
//     coding is not "chunked", "chunked" twice, or an empty list is 400; a coding before "chunked"
//     (gzip, deflate, ...) is 501, since the server decodes none; any Transfer-Encoding in an HTTP/1.0
//     request, or together with Content-Length, is 400 (RFC 9112 §6.1, §6.3).
//   - Content-Length must be one field holding one decimal number (no "5, 5" lists).
//   - Host, Authorization, Content-Length and Content-Type may appear at most once; an HTTP/1.1 request
//     must carry exactly one Host whose value is a valid authority (RFC 9112 §3.2).
// - parse_error_problem() names the part a parser error was found in (request line, header fields,
//   framing, chunked body) instead of calling everything a malformed body.
#pragma once

#include <boost/beast/http/error.hpp>
#include <boost/beast/http/message.hpp>
#include <optional>

#include "hsns/problem.h"

namespace hsns::http {

std::optional<Problem> check_request_framing(const boost::beast::http::request_header<>& header);

Problem parse_error_problem(const boost::system::error_code& ec);

}  // namespace hsns::http
