#include "hsns/error.h"

namespace hsns {

const std::string& Error::field() const {
  static const std::string none;
  return fields.empty() ? none : fields.front().field;
}

std::string Error::message() const {
  if (fields.size() == 1 && (detail.empty() || detail == fields.front().reason)) {
    return fields.front().field + ": " + fields.front().reason;
  }
  if (!fields.empty() && detail.empty()) {
    return fields.front().field + ": " + fields.front().reason + " (and " +
           std::to_string(fields.size() - 1) + " more)";
  }
  return fields.empty() ? detail : fields.front().field + ": " + detail;
}

namespace {

Error with_field(Error::Kind kind, std::string field, std::string detail) {
  Error e{kind, detail, {}};
  if (!field.empty()) e.fields.push_back({std::move(field), std::move(detail)});
  return e;
}

}  // namespace

Error Error::invalid(std::string field, std::string reason) {
  return invalid(std::vector<FieldError>{{std::move(field), std::move(reason)}});
}

Error Error::invalid(std::vector<FieldError> fields) {
  Error e{Kind::invalid, "", std::move(fields)};
  if (!e.fields.empty()) e.detail = e.fields.front().reason;
  return e;
}

Error Error::malformed(std::string detail) {
  return {Kind::malformed, std::move(detail), {}};
}
Error Error::not_found(std::string detail) {
  return {Kind::not_found, std::move(detail), {}};
}
Error Error::conflict(std::string field, std::string detail) {
  return with_field(Kind::conflict, std::move(field), std::move(detail));
}
Error Error::too_large(std::string detail) {
  return {Kind::too_large, std::move(detail), {}};
}
Error Error::unprocessable(std::string field, std::string detail) {
  return with_field(Kind::unprocessable, std::move(field), std::move(detail));
}
Error Error::unavailable(std::string detail) {
  return {Kind::unavailable, std::move(detail), {}};
}
Error Error::internal(std::string detail) {
  return {Kind::internal, std::move(detail), {}};
}

}  // namespace hsns
