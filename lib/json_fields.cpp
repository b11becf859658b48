#include "hsns/json_fields.h"

namespace hsns {
namespace {

const char* type_name(const nlohmann::json& v) {
  if (v.is_null()) return "null";
  if (v.is_boolean()) return "boolean";
  if (v.is_number_integer() || v.is_number_unsigned()) return "integer";
  if (v.is_number()) return "number";
  if (v.is_string()) return "string";
  if (v.is_array()) return "array";
  return "object";
}

}  // namespace

tl::expected<nlohmann::json, Problem> parse_json_object(std::string_view body) {
  if (body.empty())
    return tl::unexpected(Problem::malformed("request body is empty; a JSON object is required"));
  // Depth guard before the recursive parser sees the text.
  int depth = 0;
  bool in_string = false;
  bool escaped = false;
  for (char c : body) {
    if (in_string) {
      if (escaped) {
        escaped = false;
      } else if (c == '\\') {
        escaped = true;
      } else if (c == '"') {
        in_string = false;
      }
      continue;
    }
    if (c == '"') {
      in_string = true;
    } else if (c == '{' || c == '[') {
      if (++depth > kMaxJsonDepth) {
        return tl::unexpected(
            Problem::malformed("JSON nested deeper than " + std::to_string(kMaxJsonDepth) + " levels"));
      }
    } else if (c == '}' || c == ']') {
      --depth;
    }
  }
  // One parse; only a failing parse throws, and every nlohmann exception is turned into the Problem:
  // besides parse_error the parser throws out_of_range for numbers beyond double range ("1e500").
  nlohmann::json j;
  try {
    j = nlohmann::json::parse(body);
  } catch (const nlohmann::json::parse_error& e) {
    return tl::unexpected(
        Problem::malformed("body is not valid JSON: error at byte " + std::to_string(e.byte)));
  } catch (const nlohmann::json::out_of_range&) {
    return tl::unexpected(Problem::malformed("body is not valid JSON: a number is out of range"));
  } catch (const nlohmann::json::exception&) {
    return tl::unexpected(Problem::malformed("body is not valid JSON"));
  }
  if (!j.is_object()) {
    return tl::unexpected(Problem::malformed(std::string("body must be a JSON object, not ") + type_name(j)));
  }
  return j;
}

FieldReader::FieldReader(const nlohmann::json& object, std::string path)
    : FieldReader(object, std::move(path), std::make_shared<std::vector<InvalidParam>>()) {}

FieldReader::FieldReader(const nlohmann::json& object, std::string path,
                         std::shared_ptr<std::vector<InvalidParam>> errors)
    : object_(object), path_(std::move(path)), errors_(std::move(errors)) {}

std::string FieldReader::field_path(std::string_view name) const {
  if (path_.empty()) return std::string(name);
  return path_ + "." + std::string(name);
}

void FieldReader::fail(std::string_view name, std::string reason) {
  errors_->push_back({field_path(name), std::move(reason)});
}

const nlohmann::json* FieldReader::lookup(std::string_view name, bool required) {
  seen_.emplace(name);
  const auto it = object_.find(name);
  if (it == object_.end() || it->is_null()) {
    if (required) fail(name, "is required");
    return nullptr;
  }
  return &*it;
}

bool FieldReader::is_null(std::string_view name) const {
  const auto it = object_.find(name);
  return it != object_.end() && it->is_null();
}

std::optional<std::string> FieldReader::string(std::string_view name, bool required, std::size_t max_len) {
  const auto* v = lookup(name, required);
  if (!v) return std::nullopt;
  if (!v->is_string()) {
    fail(name, std::string("must be a string, not ") + type_name(*v));
    return std::nullopt;
  }
  const auto& s = v->get_ref<const std::string&>();
  if (s.size() > max_len) {
    fail(name, "must be at most " + std::to_string(max_len) + " characters");
    return std::nullopt;
  }
  return s;
}

std::optional<std::int64_t> FieldReader::integer(std::string_view name, bool required, std::int64_t min,
                                                 std::int64_t max) {
  const auto* v = lookup(name, required);
  if (!v) return std::nullopt;
  if (!v->is_number_integer()) {
    fail(name, std::string("must be an integer, not ") + type_name(*v));
    return std::nullopt;
  }
  if (v->is_number_unsigned() && (max < 0 || v->get<std::uint64_t>() > static_cast<std::uint64_t>(max))) {
    fail(name, "must be between " + std::to_string(min) + " and " + std::to_string(max));
    return std::nullopt;
  }
  const auto n = v->get<std::int64_t>();
  if (n < min || n > max) {
    fail(name, "must be between " + std::to_string(min) + " and " + std::to_string(max));
    return std::nullopt;
  }
  return n;
}

std::optional<bool> FieldReader::boolean(std::string_view name, bool required) {
  const auto* v = lookup(name, required);
  if (!v) return std::nullopt;
  if (!v->is_boolean()) {
    fail(name, std::string("must be a boolean, not ") + type_name(*v));
    return std::nullopt;
  }
  return v->get<bool>();
}

const nlohmann::json* FieldReader::array(std::string_view name, bool required, std::size_t max_items) {
  const auto* v = lookup(name, required);
  if (!v) return nullptr;
  if (!v->is_array()) {
    fail(name, std::string("must be an array, not ") + type_name(*v));
    return nullptr;
  }
  if (v->size() > max_items) {
    fail(name, "must have at most " + std::to_string(max_items) + " items");
    return nullptr;
  }
  return v;
}

const nlohmann::json* FieldReader::object(std::string_view name, bool required) {
  const auto* v = lookup(name, required);
  if (!v) return nullptr;
  if (!v->is_object()) {
    fail(name, std::string("must be an object, not ") + type_name(*v));
    return nullptr;
  }
  return v;
}

FieldReader FieldReader::child(const nlohmann::json& object, const std::string& path) {
  return FieldReader(object, path, errors_);
}

std::optional<Problem> FieldReader::finish() {
  if (object_.is_object()) {
    for (const auto& [key, value] : object_.items()) {
      if (!seen_.contains(key)) fail(key, "is not a known field");
    }
  }
  if (errors_->empty()) return std::nullopt;
  return Problem::invalid(*errors_);
}

}  // namespace hsns
