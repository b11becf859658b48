#include "args.h"

#include <cctype>
#include <charconv>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <vector>

namespace hsnsctl {

namespace {

std::vector<std::string_view> split(std::string_view text, char sep) {
  std::vector<std::string_view> parts;
  std::size_t begin = 0;
  while (true) {
    auto pos = text.find(sep, begin);
    if (pos == std::string_view::npos) {
      parts.push_back(text.substr(begin));
      return parts;
    }
    parts.push_back(text.substr(begin, pos - begin));
    begin = pos + 1;
  }
}

std::optional<std::int64_t> parse_non_negative(std::string_view text) {
  std::int64_t value = 0;
  if (text.empty()) return std::nullopt;
  auto [ptr, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (ec != std::errc() || ptr != text.data() + text.size() || value < 0) return std::nullopt;
  return value;
}

bool is_hex_octet(std::string_view text) {
  return text.size() == 2 && std::isxdigit(static_cast<unsigned char>(text[0])) &&
         std::isxdigit(static_cast<unsigned char>(text[1]));
}

std::string_view trim(std::string_view text) {
  while (!text.empty() && std::isspace(static_cast<unsigned char>(text.front()))) text.remove_prefix(1);
  while (!text.empty() && std::isspace(static_cast<unsigned char>(text.back()))) text.remove_suffix(1);
  return text;
}

}  // namespace

nlohmann::json NpuSpec::to_json() const {
  nlohmann::json j = {{"index", index}, {"netdev", netdev}, {"mac", mac}};
  if (rdma_device) j["rdma_device"] = *rdma_device;
  if (link_speed_mbps) j["link_speed_mbps"] = *link_speed_mbps;
  return j;
}

tl::expected<NpuSpec, std::string> parse_npu_spec(std::string_view spec) {
  const std::string expected =
      " (expected INDEX:NETDEV:MAC[:RDMA_DEV[:SPEED_MBPS]], e.g. 0:eth2:02:00:00:00:00:01)";
  auto fail = [&](const std::string& why) {
    return tl::unexpected("--npu '" + std::string(spec) + "': " + why + expected);
  };
  auto parts = split(spec, ':');
  if (parts.size() < 8 || parts.size() > 10) return fail("wrong number of ':'-separated fields");
  NpuSpec npu;
  auto index = parse_non_negative(parts[0]);
  if (!index) return fail("INDEX must be a non-negative integer");
  npu.index = *index;
  if (parts[1].empty()) return fail("NETDEV is empty");
  npu.netdev = std::string(parts[1]);
  for (std::size_t i = 2; i < 8; ++i) {
    if (!is_hex_octet(parts[i])) return fail("MAC must be six two-digit hex octets");
    if (i > 2) npu.mac += ':';
    npu.mac += parts[i];
  }
  if (parts.size() >= 9) npu.rdma_device = std::string(parts[8]);
  if (parts.size() == 10) {
    auto speed = parse_non_negative(parts[9]);
    if (!speed) return fail("SPEED_MBPS must be a non-negative integer");
    npu.link_speed_mbps = *speed;
  }
  return npu;
}

nlohmann::json PoolSpec::to_json() const {
  return {{"start", start}, {"end", end}};
}

tl::expected<PoolSpec, std::string> parse_pool_spec(std::string_view spec) {
  auto parts = split(spec, '-');
  if (parts.size() != 2 || parts[0].empty() || parts[1].empty()) {
    return tl::unexpected("--pool '" + std::string(spec) +
                          "': expected START-END, e.g. 198.18.0.10-198.18.0.200");
  }
  return PoolSpec{std::string(parts[0]), std::string(parts[1])};
}

bool is_uuid(std::string_view text) {
  if (text.size() != 36) return false;
  for (std::size_t i = 0; i < text.size(); ++i) {
    bool dash_position = i == 8 || i == 13 || i == 18 || i == 23;
    if (dash_position ? text[i] != '-' : !std::isxdigit(static_cast<unsigned char>(text[i]))) return false;
  }
  return true;
}

tl::expected<std::string, std::string> read_token_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return tl::unexpected("cannot read token file '" + path + "'");
  std::ostringstream content;
  content << in.rdbuf();
  if (in.bad()) return tl::unexpected("cannot read token file '" + path + "'");
  const std::string text = content.str();
  auto token = trim(text);
  if (token.empty()) return tl::unexpected("token file '" + path + "' is empty");
  return std::string(token);
}

}  // namespace hsnsctl
