// The YAML reading helpers the network brain's files share (detector configuration, fault patterns): one
// error style, "<file>:<line>:<column>: <reason>" in an hsns::Error of kind invalid whose field is the key
// path, the first problem kept and every later step a no-op; unknown keys refused; numbers read strictly
// (plain decimal or exponent notation, finite).
//
// Contract: a YamlReader is used by one parse at a time (not thread-safe); load_yaml and read_text_file
// are pure functions that never throw.
#pragma once

#include <yaml-cpp/yaml.h>

#include <cstddef>
#include <cstdint>
#include <initializer_list>
#include <optional>
#include <string>
#include <string_view>

#include "hsns/error.h"

namespace hsns::brain {

class YamlReader {
 public:
  explicit YamlReader(std::string_view source) : source_(source) {}

  bool ok() const { return !error_; }
  Error take_error() { return std::move(*error_); }
  std::string_view source() const { return source_; }

  // "<source>:<line>:<column>" of a node (just the source when the node has no mark).
  std::string where(const YAML::Node& node) const;
  // Records the first error (later ones are dropped) and answers false.
  bool fail(const YAML::Node& node, const std::string& path, const std::string& reason);
  // `map` is a mapping whose keys are all in `allowed` or `also`.
  bool check_keys(const YAML::Node& map, const std::string& path,
                  std::initializer_list<std::string_view> allowed,
                  std::initializer_list<std::string_view> also = {});
  static std::string join(const std::string& path, std::string_view key);

  // Optional keys: out is left alone when the key is absent.
  bool read_number(const YAML::Node& map, const std::string& path, std::string_view key, double& out);
  bool read_count(const YAML::Node& map, const std::string& path, std::string_view key, std::uint32_t& out);
  bool read_bool(const YAML::Node& map, const std::string& path, std::string_view key, bool& out);

 private:
  std::string_view source_;
  std::optional<Error> error_;
};

// The document of `text`; a syntax error is invalid with reason "<source>:<line>:<column>: <message>".
Result<YAML::Node> load_yaml(std::string_view text, std::string_view source);
// The whole file; not_found when it cannot be read, too_large beyond max_bytes.
Result<std::string> read_text_file(const std::string& path, std::size_t max_bytes);

}  // namespace hsns::brain
