#include "http/json_stream.h"

#include <array>
#include <charconv>
#include <stdexcept>

#include "hsns/utf8.h"

namespace hsns::http {

void append_json_string(std::string& out, std::string_view s) {
  static constexpr std::string_view kHex = "0123456789abcdef";
  out.push_back('"');
  std::size_t i = 0;
  while (i < s.size()) {
    const auto c = static_cast<unsigned char>(s[i]);
    if (c >= 0x80) {
      const std::size_t n = utf8_sequence_length(s, i);
      if (n == 0) throw std::invalid_argument("JSON string is not valid UTF-8 at byte " + std::to_string(i));
      out.append(s.substr(i, n));
      i += n;
      continue;
    }
    switch (c) {
      case '"':
        out.append("\\\"");
        break;
      case '\\':
        out.append("\\\\");
        break;
      case '\b':
        out.append("\\b");
        break;
      case '\f':
        out.append("\\f");
        break;
      case '\n':
        out.append("\\n");
        break;
      case '\r':
        out.append("\\r");
        break;
      case '\t':
        out.append("\\t");
        break;
      default:
        if (c < 0x20) {
          out.append("\\u00");
          out.push_back(kHex[c >> 4]);
          out.push_back(kHex[c & 0xF]);
        } else {
          out.push_back(static_cast<char>(c));
        }
    }
    ++i;
  }
  out.push_back('"');
}

void JsonWriter::separate() {
  if (after_value_) out_.push_back(',');
}

JsonWriter& JsonWriter::begin_object() {
  separate();
  out_.push_back('{');
  after_value_ = false;
  return *this;
}

JsonWriter& JsonWriter::end_object() {
  out_.push_back('}');
  after_value_ = true;
  return *this;
}

JsonWriter& JsonWriter::begin_array() {
  separate();
  out_.push_back('[');
  after_value_ = false;
  return *this;
}

JsonWriter& JsonWriter::end_array() {
  out_.push_back(']');
  after_value_ = true;
  return *this;
}

JsonWriter& JsonWriter::key(std::string_view name) {
  separate();
  append_json_string(out_, name);
  out_.push_back(':');
  after_value_ = false;
  return *this;
}

JsonWriter& JsonWriter::string(std::string_view value) {
  separate();
  append_json_string(out_, value);
  after_value_ = true;
  return *this;
}

JsonWriter& JsonWriter::integer(std::int64_t value) {
  separate();
  std::array<char, 24> buf{};
  const auto r = std::to_chars(buf.data(), buf.data() + buf.size(), value);
  out_.append(buf.data(), r.ptr);
  after_value_ = true;
  return *this;
}

JsonWriter& JsonWriter::boolean(bool value) {
  separate();
  out_.append(value ? "true" : "false");
  after_value_ = true;
  return *this;
}

JsonWriter& JsonWriter::null() {
  separate();
  out_.append("null");
  after_value_ = true;
  return *this;
}

JsonWriter& JsonWriter::raw(std::string_view json) {
  separate();
  out_.append(json);
  after_value_ = true;
  return *this;
}

}  // namespace hsns::http
