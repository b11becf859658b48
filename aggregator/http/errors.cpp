#include "http/errors.h"

namespace hsns::http {

namespace {

// Problem::conflict and Problem::unprocessable name one field whose reason is the detail; an Error may
// list more fields, each with its own reason (the first is the one the detail speaks of).
Problem with_fields(Problem p, const Error& error) {
  if (error.fields.empty()) return p;
  p.invalid_params.clear();
  for (const auto& f : error.fields) p.invalid_params.push_back({f.field, f.reason});
  return p;
}

}  // namespace

Problem to_problem(const Error& error) {
  switch (error.kind) {
    case Error::Kind::invalid: {
      std::vector<InvalidParam> params;
      params.reserve(error.fields.size());
      for (const auto& f : error.fields) params.push_back({f.field, f.reason});
      if (params.empty()) return Problem::malformed(error.detail);
      return Problem::invalid(std::move(params));
    }
    case Error::Kind::malformed:
      return Problem::malformed(error.detail);
    case Error::Kind::not_found:
      return Problem::not_found(error.detail);
    case Error::Kind::conflict:
      return with_fields(Problem::conflict(error.field(), error.detail), error);
    case Error::Kind::too_large:
      return Problem::payload_too_large(error.detail);
    case Error::Kind::unprocessable:
      return with_fields(Problem::unprocessable(error.field(), error.detail), error);
    case Error::Kind::unavailable:
      return Problem::unavailable(error.detail);
    case Error::Kind::internal:
      break;
  }
  return Problem::internal(error.detail);
}

}  // namespace hsns::http
