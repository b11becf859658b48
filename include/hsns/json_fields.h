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
// - Child readers (child(), objects()) share the parent's error list, so one Problem lists every bad field.
// - FieldStyle says how findings are worded; the default is the REST API's ("must be an integer, not
//   string"; a member holding null counts as absent). A reader whose wording was settled before it came
//   here (the topology generator's parameters) keeps it with a style: bare type findings ("must be an
//   integer") and null as a value of the wrong type. Child readers inherit the style.
// - parse_cbor_strict() is parse_json_strict() for CBOR (RFC 8949) bytes: the same data model, limits and
//   refusals (nesting beyond kMaxJsonDepth and repeated map keys, both found before the document is built;
//   tags, non-string keys and trailing bytes are malformed), so one FieldReader reads both encodings.
// - finish() answers a Problem (the REST API); finish_error() the same findings as an hsns::Error of kind
//   invalid (the wire contract, lib/proto) with every field in `fields`.
//
// This is the one strict field reader of the code base: the REST request parsers, the agent routes and
// the wire contract (hsns/proto) all read through it, so a field is named and refused the same way
// everywhere.
#pragma once

#include <cstdint>
#include <initializer_list>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <tl/expected.hpp>
#include <vector>

#include "hsns/error.h"
#include "hsns/problem.h"

namespace hsns {

inline constexpr int kMaxJsonDepth = 32;

// At most this many repeated keys are listed in one Problem (the parse still checks the whole text).
inline constexpr std::size_t kMaxDuplicateKeysReported = 16;

tl::expected<nlohmann::json, Problem> parse_json_strict(std::string_view text);
tl::expected<nlohmann::json, Problem> parse_json_object(std::string_view body);
tl::expected<nlohmann::json, Problem> parse_cbor_strict(std::string_view bytes);

// The name a problem gives to member `key` of the object at `parent` ("" for the top level): "parent.key"
// for keys of letters, digits, '_' and '-', else the key quoted as a JSON string in brackets
// (`parent[""]`, `["a.b"]`), so that every key a client sent, even an empty one, is named visibly.
std::string member_path(std::string_view parent, std::string_view key);

struct FieldStyle {
  // A member holding JSON null is a value of the wrong type ("must be an integer"), not an absent member.
  bool null_is_a_value = false;
  // A type finding also names the type that came ("must be an integer, not string").
  bool name_the_found_type = true;
};

class FieldReader {
 public:
  // path: the prefix for field names ("" for the top level, "pools[0]" for a nested object).
  explicit FieldReader(const nlohmann::json& object, std::string path = "");
  FieldReader(const nlohmann::json& object, FieldStyle style);
  FieldReader(const nlohmann::json& object, std::string path,
              std::shared_ptr<std::vector<InvalidParam>> errors, FieldStyle style = {});

  std::optional<std::string> string(std::string_view name, bool required, std::size_t max_len = 256);
  // A string of min_len to max_len characters ("must be 1 to 128 characters" for either bound).
  std::optional<std::string> sized_string(std::string_view name, bool required, std::size_t min_len,
                                          std::size_t max_len);
  std::optional<std::int64_t> integer(std::string_view name, bool required, std::int64_t min,
                                      std::int64_t max);
  // Unsigned counters up to 2^64-1 (the integer() range is int64).
  std::optional<std::uint64_t> unsigned_integer(std::string_view name, bool required,
                                                std::uint64_t max = UINT64_MAX);
  // A finite JSON number (an integer counts) in [min, max], or (min, max] with min_exclusive
  // ("must be > 0 and <= 100000"; the bounds as an ostream writes them: 1e6 is "1e+06").
  std::optional<double> number(std::string_view name, bool required, double min, double max,
                               bool min_exclusive = false);
  std::optional<bool> boolean(std::string_view name, bool required);
  // A string that must be one of `allowed`: the position in the list ("must be one of a, b, c").
  std::optional<std::size_t> one_of(std::string_view name, bool required,
                                    std::initializer_list<std::string_view> allowed,
                                    std::size_t max_len = 64);
  // An array of strings; each element that is not a string of at most max_len characters is an error
  // named "name[i]". Returns the elements (the good ones when some are bad; ok() tells).
  std::optional<std::vector<std::string>> strings(std::string_view name, bool required, std::size_t max_items,
                                                  std::size_t max_len);
  // Arrays and objects: returns a pointer into the parsed document, valid while it lives.
  const nlohmann::json* array(std::string_view name, bool required, std::size_t max_items = 1024);
  const nlohmann::json* object(std::string_view name, bool required);
  // True when the field is present with a JSON null (for "clear this optional field").
  bool is_null(std::string_view name) const;

  // An array of objects: each(FieldReader& element, std::size_t index) reads one element with a child
  // reader (path "name[i]", unknown fields reported after each returns, or where each calls
  // report_unknown() itself); an element that is not an object is an error.
  // Returns false when the field is absent or not an array.
  template <typename Each>
  bool objects(std::string_view name, bool required, std::size_t max_items, Each&& each) {
    const auto* arr = array(name, required, max_items);
    if (!arr) return false;
    for (std::size_t i = 0; i < arr->size(); ++i) {
      const std::string element = std::string(name) + "[" + std::to_string(i) + "]";
      if (!(*arr)[i].is_object()) {
        fail(element, "must be an object");
        continue;
      }
      FieldReader child_reader = child((*arr)[i], field_path(element));
      each(child_reader, i);
      child_reader.report_unknown();
    }
    return true;
  }
  // Marks a field as known without reading it (a member another layer reads, e.g. a line's "type").
  void known(std::string_view name) { seen_.emplace(name); }

  // A reader for a nested object (an element of an array or a field's value), sharing the error list.
  FieldReader child(const nlohmann::json& object, const std::string& path);
  std::string field_path(std::string_view name) const;
  void fail(std::string_view name, std::string reason);
  bool ok() const { return errors_->empty(); }

  // Reports unknown fields of this object; returns the Problem if any error was recorded anywhere.
  std::optional<Problem> finish();
  // The same as an hsns::Error (kind invalid, one FieldError per finding).
  std::optional<Error> finish_error();
  // Only the unknown-field check of finish(), for a child reader whose findings the parent returns. Each
  // unknown field is reported once, however often this is called.
  void report_unknown();

 private:
  const nlohmann::json* lookup(std::string_view name, bool required);
  // The field's text when it is a string (a finding when it is not); nullptr when absent or not a string.
  const std::string* text(std::string_view name, bool required);
  // "must be <expected>", and ", not <type of v>" when the style names the found type.
  void wrong_type(std::string_view name, const char* expected, const nlohmann::json& v);

  const nlohmann::json& object_;
  std::string path_;
  std::shared_ptr<std::vector<InvalidParam>> errors_;
  FieldStyle style_;
  std::set<std::string, std::less<>> seen_;
};

}  // namespace hsns
