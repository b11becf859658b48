#include "brain/yaml_reader.h"

#include <algorithm>
#include <cerrno>
#include <charconv>
#include <cmath>
#include <cstring>
#include <fstream>
#include <sstream>

namespace hsns::brain {

std::string YamlReader::where(const YAML::Node& node) const {
  const YAML::Mark mark = node.Mark();
  std::string at(source_);
  if (!mark.is_null()) at += ":" + std::to_string(mark.line + 1) + ":" + std::to_string(mark.column + 1);
  return at;
}

bool YamlReader::fail(const YAML::Node& node, const std::string& path, const std::string& reason) {
  if (!error_) error_ = Error::invalid(path, where(node) + ": " + reason);
  return false;
}

bool YamlReader::check_keys(const YAML::Node& map, const std::string& path,
                            std::initializer_list<std::string_view> allowed,
                            std::initializer_list<std::string_view> also) {
  if (!map.IsMap()) return fail(map, path, "must be a mapping");
  for (const auto& entry : map) {
    if (!entry.first.IsScalar()) return fail(entry.first, path, "keys must be plain names");
    const auto key = entry.first.Scalar();
    const auto known = [&](std::initializer_list<std::string_view> keys) {
      return std::find(keys.begin(), keys.end(), key) != keys.end();
    };
    if (!known(allowed) && !known(also)) return fail(entry.first, join(path, key), "unknown key");
  }
  return true;
}

std::string YamlReader::join(const std::string& path, std::string_view key) {
  return path.empty() ? std::string(key) : path + "." + std::string(key);
}

bool YamlReader::read_number(const YAML::Node& map, const std::string& path, std::string_view key,
                             double& out) {
  const YAML::Node node = map[std::string(key)];
  if (!node) return true;
  const std::string at = join(path, key);
  if (!node.IsScalar()) return fail(node, at, "must be a number");
  const std::string& text = node.Scalar();
  double v = 0;
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
  if (ec != std::errc() || end != text.data() + text.size() || !std::isfinite(v)) {
    return fail(node, at, "must be a finite number, got \"" + text + "\"");
  }
  out = v;
  return true;
}

bool YamlReader::read_count(const YAML::Node& map, const std::string& path, std::string_view key,
                            std::uint32_t& out) {
  double v = out;
  if (!read_number(map, path, key, v)) return false;
  if (v < 0 || v != std::floor(v) || v > 1e9) {
    return fail(map[std::string(key)], join(path, key), "must be a whole number");
  }
  out = static_cast<std::uint32_t>(v);
  return true;
}

bool YamlReader::read_bool(const YAML::Node& map, const std::string& path, std::string_view key, bool& out) {
  const YAML::Node node = map[std::string(key)];
  if (!node) return true;
  if (node.IsScalar() && (node.Scalar() == "true" || node.Scalar() == "false")) {
    out = node.Scalar() == "true";
    return true;
  }
  return fail(node, join(path, key), "must be true or false");
}

Result<YAML::Node> load_yaml(std::string_view text, std::string_view source) {
  try {
    return YAML::Load(std::string(text));
  } catch (const YAML::Exception& e) {
    return tl::unexpected(Error::invalid("", std::string(source) + ":" + std::to_string(e.mark.line + 1) +
                                                 ":" + std::to_string(e.mark.column + 1) + ": " + e.msg));
  }
}

Result<std::string> read_text_file(const std::string& path, std::size_t max_bytes) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return tl::unexpected(Error::not_found("cannot read " + path + ": " + std::strerror(errno)));
  std::ostringstream text;
  text << in.rdbuf();
  std::string s = std::move(text).str();
  if (s.size() > max_bytes) {
    return tl::unexpected(Error::too_large(path + ": over " + std::to_string(max_bytes) + " bytes"));
  }
  return s;
}

}  // namespace hsns::brain
