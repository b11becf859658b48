// A streaming JSON writer for response bodies that are too large to build as a DOM first (the list
// endpoints: thousands of ports), appending straight to one string.
//
// Contract:
// - The output is byte for byte what nlohmann::json::dump() (compact, ensure_ascii off) gives for the same
//   document, provided the caller writes object keys in nlohmann's order (std::map: byte-wise ascending),
//   as nlohmann's object type sorts them: strings escape ", \ and the control characters as nlohmann does
//   (\b \f \n \r \t, other bytes below 0x20 as \u00xx in lower-case hex; DEL and UTF-8 unchanged), integers
//   in decimal.
// - A string that is not valid UTF-8 throws std::invalid_argument (nlohmann's dump throws too), so a body
//   is never sent with broken text.
// - The writer places the commas; it does not check the document's structure (a key outside an object is
//   the caller's bug). Not thread-safe (one writer per body).
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

namespace hsns::http {

// Appends s as a JSON string literal (quoted, escaped as above).
void append_json_string(std::string& out, std::string_view s);

class JsonWriter {
 public:
  explicit JsonWriter(std::string& out) : out_(out) {}

  JsonWriter& begin_object();
  JsonWriter& end_object();
  JsonWriter& begin_array();
  JsonWriter& end_array();
  JsonWriter& key(std::string_view name);
  JsonWriter& string(std::string_view value);
  JsonWriter& integer(std::int64_t value);
  JsonWriter& boolean(bool value);
  JsonWriter& null();
  // An already serialised JSON value (e.g. one item's nlohmann dump()).
  JsonWriter& raw(std::string_view json);

 private:
  void separate();

  std::string& out_;
  bool after_value_ = false;  // a value was written last: the next value or key needs a comma
};

}  // namespace hsns::http
