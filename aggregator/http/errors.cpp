#include "http/errors.h"

namespace hsns::http {

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
      return Problem::conflict(error.field(), error.detail);
    case Error::Kind::too_large:
      return Problem::payload_too_large(error.detail);
    case Error::Kind::unprocessable:
      return Problem::unprocessable(error.field(), error.detail);
    case Error::Kind::unavailable:
      return Problem::unavailable(error.detail);
    case Error::Kind::internal:
      break;
  }
  return Problem::internal(error.detail);
}

}  // namespace hsns::http
