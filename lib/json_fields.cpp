#include "hsns/json_fields.h"

#include <cmath>
#include <sstream>
#include <unordered_set>

#include "hsns/memory_budget.h"
#include "hsns/utf8.h"

namespace hsns {
namespace {

const char* type_name(const nlohmann::json& v) {
  if (v.is_null()) return "null";
  if (v.is_boolean()) return "boolean";
  if (v.is_number_integer() || v.is_number_unsigned()) return "integer";
  if (v.is_number()) return "number";
  if (v.is_string()) return "string";
  if (v.is_array()) return "array";
  if (v.is_binary()) return "byte string";
  return "object";
}

// True for keys the naming can show bare: letters, digits, '_' and '-'.
bool plain_key(std::string_view key) {
  if (key.empty()) return false;
  for (const char c : key) {
    const bool word =
        (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' || c == '-';
    if (!word) return false;
  }
  return true;
}

// Follows the parser's events to know, at every key, the path of the object being read and the keys that
// object already had. Only the first kMaxDuplicateKeysReported repeats are kept.
class DuplicateKeyFinder {
 public:
  void on_event(nlohmann::json::parse_event_t event, const nlohmann::json& parsed) {
    using E = nlohmann::json::parse_event_t;
    switch (event) {
      case E::object_start:
      case E::array_start:
        count_element();
        stack_.push_back(Frame{event == E::object_start, 0, {}, {}});
        break;
      case E::key:
        if (!stack_.empty() && stack_.back().object && parsed.is_string())
          on_key(parsed.get_ref<const std::string&>());
        break;
      case E::value:
        count_element();
        break;
      case E::object_end:
      case E::array_end:
        if (!stack_.empty()) stack_.pop_back();
        break;
    }
  }

  const std::vector<InvalidParam>& found() const { return found_; }

 private:
  struct Frame {
    bool object = true;
    std::size_t elements = 0;  // arrays: elements begun so far
    std::string key;           // objects: the key being read
    std::unordered_set<std::string> keys;
  };

  // A value, object or array begins: inside an array that is the next element.
  void count_element() {
    if (!stack_.empty() && !stack_.back().object) ++stack_.back().elements;
  }

  void on_key(const std::string& key) {
    Frame& top = stack_.back();
    top.key = key;
    if (top.keys.insert(key).second || found_.size() >= kMaxDuplicateKeysReported) return;
    found_.push_back({path_of(key), "appears more than once in its object; each key may be given only once"});
  }

  // The FieldReader naming: "a.b[2].c" (the last frame is the object the key belongs to).
  std::string path_of(const std::string& key) const {
    std::string path;
    for (std::size_t i = 0; i + 1 < stack_.size(); ++i) {
      const Frame& f = stack_[i];
      if (f.object) {
        path = member_path(path, f.key);
      } else {
        path += "[" + std::to_string(f.elements - 1) + "]";
      }
    }
    return member_path(path, key);
  }

  std::vector<Frame> stack_;
  std::vector<InvalidParam> found_;
};

// One SAX pass over a document before the DOM is built: nesting (the pass stops at the first container
// beyond kMaxJsonDepth, so neither this recursive reader nor from_cbor() below ever descends further),
// repeated map keys, text that is not UTF-8, a declared container length that exceeds the input (a CBOR
// length prefix is not trusted), and the memory the DOM would take (estimated per value, key and
// container as nlohmann lays them out; the pass stops once it exceeds kMaxDecodedDocumentBytes, so a
// small input of many tiny values is refused before it is built). The parser's callback form would find
// repeated keys in the DOM parse itself but costs time quadratic in an array's length (about 15 s for
// 8,000 objects in the sanitizer build); one SAX pass is linear.
class StrictChecker : public nlohmann::json_sax<nlohmann::json> {
 public:
  // format: "JSON" or "CBOR", for the messages.
  StrictChecker(std::size_t input_size, const char* format) : input_size_(input_size), format_(format) {}

  bool null() override { return value(); }
  bool boolean(bool) override { return value(); }
  bool number_integer(number_integer_t) override { return value(); }
  bool number_unsigned(number_unsigned_t) override { return value(); }
  bool number_float(number_float_t, const string_t&) override { return value(); }
  bool string(string_t& s) override {
    if (!valid_utf8(s))
      return refuse(std::string("body is not valid ") + format_ + ": a text string is not valid UTF-8");
    if (!cost(kStringBytes + heap_bytes(s))) return false;
    return value();
  }
  bool binary(binary_t& b) override {
    if (!cost(kStringBytes + b.size())) return false;
    return value();
  }
  bool start_object(std::size_t elements) override {
    if (!cost(kObjectBytes)) return false;
    return start(E::object_start, elements);
  }
  bool key(string_t& k) override {
    if (!valid_utf8(k))
      return refuse(std::string("body is not valid ") + format_ + ": a map key is not valid UTF-8");
    // A map node with its key; the key is also held by the duplicate finder until its object ends.
    if (!cost(kMemberBytes + 2 * heap_bytes(k))) return false;
    duplicates_.on_event(E::key, nlohmann::json(k));
    return true;
  }
  bool end_object() override { return end(E::object_end); }
  bool start_array(std::size_t elements) override {
    if (!cost(kArrayBytes)) return false;
    return start(E::array_start, elements);
  }
  bool end_array() override { return end(E::array_end); }
  bool parse_error(std::size_t position, const std::string&, const nlohmann::detail::exception& e) override {
    // nlohmann's out_of_range.406: a number beyond double range ("1e500").
    if (e.id == 406)
      return refuse(std::string("body is not valid ") + format_ + ": a number is out of range");
    return refuse(std::string("body is not valid ") + format_ + ": error at byte " +
                  std::to_string(position));
  }

  // Empty when the input passed; else the malformed detail.
  const std::string& error() const { return error_; }
  // The refusal was the decoded size (413), not the input's form (400).
  bool too_large() const { return too_large_; }
  const DuplicateKeyFinder& duplicates() const { return duplicates_; }

  // The Problem of a refused input.
  Problem problem(const char* fallback) const {
    if (too_large_) return Problem::payload_too_large(error_);
    return Problem::malformed(error_.empty() ? fallback : error_);
  }

 private:
  using E = nlohmann::json::parse_event_t;
  // What nlohmann's DOM takes (64-bit libstdc++): every value 16 bytes in its parent, doubled for the
  // growth of arrays; a string or binary value a heap std::string/vector (32) and its text beyond the
  // small-string buffer; an object a std::map (48) and per member a tree node (48) with its key (32); an
  // array a std::vector (24).
  static constexpr std::size_t kValueBytes = 32;
  static constexpr std::size_t kStringBytes = 32;
  static constexpr std::size_t kObjectBytes = 48;
  static constexpr std::size_t kMemberBytes = 80;
  static constexpr std::size_t kArrayBytes = 24;
  static std::size_t heap_bytes(const std::string& s) { return s.size() > 15 ? s.size() + 1 : 0; }

  bool cost(std::size_t bytes) {
    estimated_ += bytes;
    if (estimated_ <= kMaxDecodedDocumentBytes) return true;
    too_large_ = true;
    return refuse(std::string("the ") + format_ + " document would take more than " +
                  std::to_string(kMaxDecodedDocumentBytes >> 20) + " MiB decoded; send it in smaller parts");
  }
  bool value() {
    if (!cost(kValueBytes)) return false;
    duplicates_.on_event(E::value, nlohmann::json());
    return true;
  }
  bool refuse(std::string why) {
    error_ = std::move(why);
    return false;
  }
  bool start(E event, std::size_t elements) {
    if (++depth_ > kMaxJsonDepth)
      return refuse(std::string(format_) + " nested deeper than " + std::to_string(kMaxJsonDepth) +
                    " levels");
    // Every element takes at least one byte (a map entry two); -1 means indefinite length.
    if (elements != static_cast<std::size_t>(-1) && elements > input_size_)
      return refuse(std::string("body is not valid ") + format_ +
                    ": a container declares more elements than the input holds");
    duplicates_.on_event(event, nlohmann::json());
    return true;
  }
  bool end(E event) {
    --depth_;
    duplicates_.on_event(event, nlohmann::json());
    return true;
  }

  std::size_t input_size_;
  const char* format_;
  int depth_ = 0;
  std::size_t estimated_ = 0;
  bool too_large_ = false;
  std::string error_;
  DuplicateKeyFinder duplicates_;
};

}  // namespace

tl::expected<nlohmann::json, Problem> parse_json_strict(std::string_view text) {
  if (text.empty()) return tl::unexpected(Problem::malformed("the JSON text is empty"));
  // Depth guard before the recursive parser sees the text.
  int depth = 0;
  bool in_string = false;
  bool escaped = false;
  for (char c : text) {
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
  // The checks first, so that nothing too large is built; the DOM keeps only the last of repeated keys,
  // the SAX pass sees every key as it is read.
  StrictChecker checker(text.size(), "JSON");
  if (!nlohmann::json::sax_parse(text, &checker) && !checker.error().empty())
    return tl::unexpected(checker.problem("body is not valid JSON"));
  if (!checker.duplicates().found().empty())
    return tl::unexpected(Problem::invalid(checker.duplicates().found()));
  // The DOM parse; only a failing parse throws, and every nlohmann exception is turned into the Problem:
  // besides parse_error the parser throws out_of_range for numbers beyond double range ("1e500").
  nlohmann::json j;
  try {
    j = nlohmann::json::parse(text);
  } catch (const nlohmann::json::parse_error& e) {
    return tl::unexpected(
        Problem::malformed("body is not valid JSON: error at byte " + std::to_string(e.byte)));
  } catch (const nlohmann::json::out_of_range&) {
    return tl::unexpected(Problem::malformed("body is not valid JSON: a number is out of range"));
  } catch (const nlohmann::json::exception&) {
    return tl::unexpected(Problem::malformed("body is not valid JSON"));
  }
  return j;
}

tl::expected<nlohmann::json, Problem> parse_json_object(std::string_view body) {
  if (body.empty())
    return tl::unexpected(Problem::malformed("request body is empty; a JSON object is required"));
  auto j = parse_json_strict(body);
  if (!j) return j;
  if (!j->is_object()) {
    return tl::unexpected(
        Problem::malformed(std::string("body must be a JSON object, not ") + type_name(*j)));
  }
  return j;
}

tl::expected<nlohmann::json, Problem> parse_cbor_strict(std::string_view bytes) {
  if (bytes.empty()) return tl::unexpected(Problem::malformed("the CBOR input is empty"));
  StrictChecker checker(bytes.size(), "CBOR");
  bool passed = false;
  try {
    passed =
        nlohmann::json::sax_parse(bytes.begin(), bytes.end(), &checker, nlohmann::json::input_format_t::cbor,
                                  /*strict=*/true);
  } catch (const nlohmann::json::exception&) {
    passed = false;
  }
  if (!passed) return tl::unexpected(checker.problem("body is not valid CBOR"));
  if (!checker.duplicates().found().empty())
    return tl::unexpected(Problem::invalid(checker.duplicates().found()));
  // The checked input is now built; tags (which the check pass refused too) stay an error here.
  try {
    return nlohmann::json::from_cbor(bytes, /*strict=*/true, /*allow_exceptions=*/true,
                                     nlohmann::json::cbor_tag_handler_t::error);
  } catch (const nlohmann::json::exception&) {
    return tl::unexpected(Problem::malformed("body is not valid CBOR"));
  }
}

std::string member_path(std::string_view parent, std::string_view key) {
  std::string path(parent);
  if (plain_key(key)) {
    if (!path.empty()) path += '.';
    path += key;
  } else {
    // Quoted as a JSON string: an empty key, or one with '.', '[' or spaces, stays visible and unambiguous.
    path += '[';
    path += nlohmann::json(std::string(key)).dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
    path += ']';
  }
  return path;
}

FieldReader::FieldReader(const nlohmann::json& object, std::string path)
    : FieldReader(object, std::move(path), std::make_shared<std::vector<InvalidParam>>()) {}

FieldReader::FieldReader(const nlohmann::json& object, FieldStyle style)
    : FieldReader(object, "", std::make_shared<std::vector<InvalidParam>>(), style) {}

FieldReader::FieldReader(const nlohmann::json& object, std::string path,
                         std::shared_ptr<std::vector<InvalidParam>> errors, FieldStyle style)
    : object_(object), path_(std::move(path)), errors_(std::move(errors)), style_(style) {}

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
  if (it == object_.end() || (it->is_null() && !style_.null_is_a_value)) {
    if (required) fail(name, "is required");
    return nullptr;
  }
  return &*it;
}

void FieldReader::wrong_type(std::string_view name, const char* expected, const nlohmann::json& v) {
  std::string reason = std::string("must be ") + expected;
  if (style_.name_the_found_type) reason += std::string(", not ") + type_name(v);
  fail(name, std::move(reason));
}

bool FieldReader::is_null(std::string_view name) const {
  const auto it = object_.find(name);
  return it != object_.end() && it->is_null();
}

const std::string* FieldReader::text(std::string_view name, bool required) {
  const auto* v = lookup(name, required);
  if (!v) return nullptr;
  if (!v->is_string()) {
    wrong_type(name, "a string", *v);
    return nullptr;
  }
  return &v->get_ref<const std::string&>();
}

std::optional<std::string> FieldReader::string(std::string_view name, bool required, std::size_t max_len) {
  const auto* s = text(name, required);
  if (!s) return std::nullopt;
  if (s->size() > max_len) {
    fail(name, "must be at most " + std::to_string(max_len) + " characters");
    return std::nullopt;
  }
  return *s;
}

std::optional<std::string> FieldReader::sized_string(std::string_view name, bool required,
                                                     std::size_t min_len, std::size_t max_len) {
  const auto* s = text(name, required);
  if (!s) return std::nullopt;
  if (s->size() < min_len || s->size() > max_len) {
    fail(name, "must be " + std::to_string(min_len) + " to " + std::to_string(max_len) + " characters");
    return std::nullopt;
  }
  return *s;
}

std::optional<double> FieldReader::number(std::string_view name, bool required, double min, double max,
                                          bool min_exclusive) {
  const auto* v = lookup(name, required);
  if (!v) return std::nullopt;
  if (!v->is_number()) {
    wrong_type(name, "a number", *v);
    return std::nullopt;
  }
  const double n = v->get<double>();
  if (!std::isfinite(n) || (min_exclusive ? n <= min : n < min) || n > max) {
    std::ostringstream bounds;
    bounds << (min_exclusive ? "> " : ">= ") << min << " and <= " << max;
    fail(name, "must be " + bounds.str());
    return std::nullopt;
  }
  return n;
}

std::optional<std::int64_t> FieldReader::integer(std::string_view name, bool required, std::int64_t min,
                                                 std::int64_t max) {
  const auto* v = lookup(name, required);
  if (!v) return std::nullopt;
  if (!v->is_number_integer()) {
    wrong_type(name, "an integer", *v);
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

std::optional<std::uint64_t> FieldReader::unsigned_integer(std::string_view name, bool required,
                                                           std::uint64_t max) {
  const auto* v = lookup(name, required);
  if (!v) return std::nullopt;
  if (!v->is_number_integer()) {
    wrong_type(name, "an integer", *v);
    return std::nullopt;
  }
  // A document built in code may hold a non-negative count as a signed integer; parsed text never does.
  const bool negative = !v->is_number_unsigned() && v->get<std::int64_t>() < 0;
  if (negative || v->get<std::uint64_t>() > max) {
    fail(name, "must be between 0 and " + std::to_string(max));
    return std::nullopt;
  }
  return v->get<std::uint64_t>();
}

std::optional<std::size_t> FieldReader::one_of(std::string_view name, bool required,
                                               std::initializer_list<std::string_view> allowed,
                                               std::size_t max_len) {
  auto s = string(name, required, max_len);
  if (!s) return std::nullopt;
  std::size_t i = 0;
  std::string list;
  for (auto a : allowed) {
    if (*s == a) return i;
    list += (i == 0 ? "" : ", ") + std::string(a);
    ++i;
  }
  fail(name, "must be one of " + list);
  return std::nullopt;
}

std::optional<std::vector<std::string>> FieldReader::strings(std::string_view name, bool required,
                                                             std::size_t max_items, std::size_t max_len) {
  const auto* arr = array(name, required, max_items);
  if (!arr) return std::nullopt;
  std::vector<std::string> out;
  out.reserve(arr->size());
  for (std::size_t i = 0; i < arr->size(); ++i) {
    const auto& v = (*arr)[i];
    if (!v.is_string() || v.get_ref<const std::string&>().size() > max_len) {
      fail(std::string(name) + "[" + std::to_string(i) + "]",
           "must be a string of at most " + std::to_string(max_len) + " characters");
      continue;
    }
    out.push_back(v.get<std::string>());
  }
  return out;
}

std::optional<bool> FieldReader::boolean(std::string_view name, bool required) {
  const auto* v = lookup(name, required);
  if (!v) return std::nullopt;
  if (!v->is_boolean()) {
    wrong_type(name, "a boolean", *v);
    return std::nullopt;
  }
  return v->get<bool>();
}

const nlohmann::json* FieldReader::array(std::string_view name, bool required, std::size_t max_items) {
  const auto* v = lookup(name, required);
  if (!v) return nullptr;
  if (!v->is_array()) {
    wrong_type(name, "an array", *v);
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
    wrong_type(name, "an object", *v);
    return nullptr;
  }
  return v;
}

FieldReader FieldReader::child(const nlohmann::json& object, const std::string& path) {
  return FieldReader(object, path, errors_, style_);
}

void FieldReader::report_unknown() {
  if (!object_.is_object()) return;
  for (const auto& [key, value] : object_.items()) {
    // Once reported, a field counts as seen: a second call (objects() after an element reader that
    // reported early, finish() after report_unknown()) finds nothing new.
    if (seen_.emplace(key).second) errors_->push_back({member_path(path_, key), "is not a known field"});
  }
}

std::optional<Problem> FieldReader::finish() {
  report_unknown();
  if (errors_->empty()) return std::nullopt;
  return Problem::invalid(*errors_);
}

std::optional<Error> FieldReader::finish_error() {
  report_unknown();
  if (errors_->empty()) return std::nullopt;
  std::vector<FieldError> fields;
  fields.reserve(errors_->size());
  for (const auto& e : *errors_) fields.push_back({e.name, e.reason});
  return Error::invalid(std::move(fields));
}

}  // namespace hsns
