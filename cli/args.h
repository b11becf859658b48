// Parsing of hsnsctl's structured command-line values. Pure functions; thread-safe; nothing throws.
//
// Each parser returns the value or a one-line message saying what is wrong and what was expected;
// callers turn that message into a usage error (exit code 64).
#pragma once

#include <cstdint>
#include <nlohmann/json_fwd.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <tl/expected.hpp>

namespace hsnsctl {

// One NPU interface of `hosts register --npu INDEX:NETDEV:MAC[:RDMA_DEV[:SPEED_MBPS]]`.
// The MAC is six colon-separated hex octets, so the spec has 8, 9 or 10 colon-separated fields.
struct NpuSpec {
  std::int64_t index = 0;
  std::string netdev;
  std::string mac;
  std::optional<std::string> rdma_device;
  std::optional<std::int64_t> link_speed_mbps;

  // {"index","netdev","mac"} plus "rdma_device"/"link_speed_mbps" when given.
  nlohmann::json to_json() const;
};
tl::expected<NpuSpec, std::string> parse_npu_spec(std::string_view spec);

// An allocation pool `START-END` (IPv4 or IPv6 addresses; neither contains '-').
struct PoolSpec {
  std::string start;
  std::string end;

  nlohmann::json to_json() const;  // {"start","end"}
};
tl::expected<PoolSpec, std::string> parse_pool_spec(std::string_view spec);

// True for the canonical textual UUID form 8-4-4-4-12 hex digits (either case).
bool is_uuid(std::string_view text);

// Reads a bearer token from a file: the content with surrounding whitespace removed. Error when the
// file cannot be read or holds no token.
tl::expected<std::string, std::string> read_token_file(const std::string& path);

}  // namespace hsnsctl
