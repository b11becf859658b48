// Strict reading of JSON request bodies: typed fields, named errors, unknown fields rejected.
//
// Contract:
// - parse_json_strict() is the one way client-supplied JSON text is read: RFC 8259 syntax only (no
//   comments, no trailing data, valid UTF-8), nesting at most kMaxJsonDepth (refused before the
//   recursive parser sees the text), and no object with the same key twice. nlohmann (like most
//   parsers) silently keeps the last of repeated keys, so two readers of one body could disagree about
//   its meaning; a repeated key is therefore a 400 invalid-request naming each repeated key by its path
//   ("allocation_pools[1].start", "" for an empty key at the top level). Malformed text is a 400
//   malformed-body saying where parsing failed (byte offset). Nothing throws.
// - parse_json_object() is parse_json_strict() for a request body, which must be a JSON object.
// - FieldReader reads fields of one object. Each getter records an InvalidParam (with the full field
//   path, e.g. "allocation_pools[2].end") when the field is missing or has the wrong type/range, and
//   returns nullopt. finish() adds one error per field that no getter asked for, then returns all
//   errors as one Problem, or nothing when the object was valid. Nothing throws.
// - Child readers (object_at) share the parent's error list, so one Problem lists every bad field.
#pragma once

#include <cstdint>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <tl/expected.hpp>
#include <vector>

#include "hsns/problem.h"

namespace hsns {

inline constexpr int kMaxJsonDepth = 32;

// At most this many repeated keys are listed in one Problem (the parse still checks the whole text).
inline constexpr std::size_t kMaxDuplicateKeysReported = 16;

tl::expected<nlohmann::json, Problem> parse_json_strict(std::string_view text);
tl::expected<nlohmann::json, Problem> parse_json_object(std::string_view body);

class FieldReader {
 public:
  // path: the prefix for field names ("" for the top level, "pools[0]" for a nested object).
  explicit FieldReader(const nlohmann::json& object, std::string path = "");
  FieldReader(const nlohmann::json& object, std::string path,
              std::shared_ptr<std::vector<InvalidParam>> errors);

  std::optional<std::string> string(std::string_view name, bool required, std::size_t max_len = 256);
  std::optional<std::int64_t> integer(std::string_view name, bool required, std::int64_t min,
                                      std::int64_t max);
  std::optional<bool> boolean(std::string_view name, bool required);
  // Arrays and objects: returns a pointer into the parsed document, valid while it lives.
  const nlohmann::json* array(std::string_view name, bool required, std::size_t max_items = 1024);
  const nlohmann::json* object(std::string_view name, bool required);
  // True when the field is present with a JSON null (for "clear this optional field").
  bool is_null(std::string_view name) const;

  // A reader for a nested object (an element of an array or a field's value), sharing the error list.
  FieldReader child(const nlohmann::json& object, const std::string& path);
  std::string field_path(std::string_view name) const;
  void fail(std::string_view name, std::string reason);
  bool ok() const { return errors_->empty(); }

  // Reports unknown fields of this object; returns the Problem if any error was recorded anywhere.
  std::optional<Problem> finish();

 private:
  const nlohmann::json* lookup(std::string_view name, bool required);

  const nlohmann::json& object_;
  std::string path_;
  std::shared_ptr<std::vector<InvalidParam>> errors_;
  std::set<std::string, std::less<>> seen_;
};

}  // namespace hsns
