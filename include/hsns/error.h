// hsns::Error: the one error value of the pure libraries (topology, scheduling, wire contract) and the
// stores. It says what kind of failure happened and which input field is at fault; it knows nothing of
// HTTP. Only the HTTP layer turns an Error into a problem document (aggregator/http/errors.h), and hsnsctl
// or the daemon print message().
//
// Contract: values only, thread-safe. `fields` lists every offending field when a check collects more than
// one (the first is the one the detail speaks of); field paths are JSON-pointer-like as the API names them
// ("links[3].b", "parallel.tp"). detail says what went wrong this time.
#pragma once

#include <string>
#include <tl/expected.hpp>
#include <utility>
#include <vector>

namespace hsns {

struct FieldError {
  std::string field;
  std::string reason;
};

struct Error {
  enum class Kind {
    invalid,        // one or more fields have values outside their rules
    malformed,      // the input is not of the expected shape at all (not JSON, wrong types)
    not_found,      // a named thing does not exist
    conflict,       // the request contradicts stored state
    too_large,      // the input exceeds a documented size limit
    unprocessable,  // valid input that cannot be satisfied (no host set fits, combination not supported)
    unavailable,    // a resource is temporarily unusable (database busy or full, queue full)
    internal,       // a bug or an unexpected failure of a dependency
  };

  Kind kind = Kind::internal;
  std::string detail;
  std::vector<FieldError> fields;

  // The field at fault ("" when none).
  const std::string& field() const;
  // "field: reason" for one field, the detail otherwise; for logs and the command line.
  std::string message() const;

  static Error invalid(std::string field, std::string reason);
  static Error invalid(std::vector<FieldError> fields);
  static Error malformed(std::string detail);
  static Error not_found(std::string detail);
  static Error conflict(std::string field, std::string detail);
  static Error too_large(std::string detail);
  static Error unprocessable(std::string field, std::string detail);
  static Error unavailable(std::string detail);
  static Error internal(std::string detail);
};

template <typename T>
using Result = tl::expected<T, Error>;

}  // namespace hsns
