// RFC 9457 problem details: the one error shape every hsns HTTP API answers with.
//
// Contract: a Problem carries the HTTP status, a short title that is the same for every occurrence of
// the problem type, a detail that says what went wrong this time (naming the offending field), an
// optional list of invalid parameters ("invalid_params", the extension RFC 9457 shows in its
// examples), and a type URI ("urn:hsns:problem:<slug>"). Values only; thread-safe.
#pragma once

#include <nlohmann/json_fwd.hpp>
#include <string>
#include <vector>

namespace hsns {

struct InvalidParam {
  std::string name;    // JSON-pointer-like field path, e.g. "allocation_pools[1].start"
  std::string reason;  // what is wrong with it
};

struct Problem {
  int status = 500;
  std::string slug = "internal";  // becomes type "urn:hsns:problem:<slug>"
  std::string title = "Internal error";
  std::string detail;
  std::vector<InvalidParam> invalid_params;

  nlohmann::json to_json() const;
  std::string type() const { return "urn:hsns:problem:" + slug; }

  // 400: one or more fields are invalid; detail names the first, invalid_params lists them all.
  static Problem invalid(std::vector<InvalidParam> params);
  static Problem invalid(std::string field, std::string reason);
  // 400: the body is not valid JSON or not of the expected shape at all.
  static Problem malformed(std::string detail);
  static Problem not_found(std::string detail);
  // 409: the request conflicts with stored state; field names what conflicts (may be empty).
  static Problem conflict(std::string field, std::string detail);
  static Problem unauthorized(std::string detail);
  static Problem forbidden(std::string detail);
  static Problem payload_too_large(std::string detail);
  static Problem unsupported_media_type(std::string detail);
  static Problem method_not_allowed(std::string detail);
  static Problem unprocessable(std::string field, std::string detail);
  static Problem unavailable(std::string detail);
  static Problem internal(std::string detail);
};

}  // namespace hsns
