// What the report spool tests share: opening a spool on a directory, listing everything it would send,
// and looking at its files from outside (segment names and sizes, the state file's slots, byte edits that
// emulate corruption and torn writes).
#pragma once

#include <gtest/gtest.h>

#include <cstdint>
#include <filesystem>
#include <fstream>
#include <limits>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "crc32.h"
#include "spool.h"

namespace hsns::testing::spool {

namespace report = hsns::daemon::report;

// The frame sizes of the format (spool.cpp): what the tests need to aim their byte edits.
constexpr std::uint64_t kSegmentHeader = 8;
constexpr std::uint64_t kRecordHeader = 40;
// The state file: two slots, "HSNSSTA2" | generation | acked seq | highest seq | highest flow epoch (u64
// each) | CRC-32 of the slot's bytes before it, at these offsets.
constexpr std::uint64_t kStateSlotOffset[2] = {0, 4096};
constexpr std::uint64_t kStateSlotSize = 44;

inline std::uint64_t le64(const std::string& bytes, std::uint64_t at) {
  std::uint64_t v = 0;
  for (int i = 7; i >= 0; --i)
    v = (v << 8) | static_cast<unsigned char>(bytes[at + static_cast<std::uint64_t>(i)]);
  return v;
}

// What a state slot holds: generation and acked seq, when its magic and checksum hold.
struct StateSlot {
  std::uint64_t generation = 0;
  std::uint64_t acked = 0;
};
inline std::optional<StateSlot> state_slot(const std::string& file, int slot) {
  const std::uint64_t at = kStateSlotOffset[slot];
  if (file.size() < at + kStateSlotSize || file.compare(at, 8, "HSNSSTA2") != 0) return std::nullopt;
  const auto* p = reinterpret_cast<const unsigned char*>(file.data() + at);
  std::uint32_t stored = 0;
  for (int i = 3; i >= 0; --i) stored = (stored << 8) | p[kStateSlotSize - 4 + static_cast<std::uint64_t>(i)];
  if (report::crc32_update(0, p, kStateSlotSize - 4) != stored) return std::nullopt;
  return StateSlot{le64(file, at + 8), le64(file, at + 16)};
}

inline std::unique_ptr<report::Spool> open_spool(const report::SpoolOptions& options) {
  auto s = report::Spool::open(options);
  if (!s) ADD_FAILURE() << "open " << options.dir << ": " << s.error().message();
  return s ? std::move(*s) : nullptr;
}

// Every unacknowledged record, in the order peek hands them out.
inline std::vector<report::SpoolRecord> everything(const report::Spool& spool) {
  auto r = spool.peek(std::numeric_limits<std::uint64_t>::max());
  if (!r) ADD_FAILURE() << "peek: " << r.error().message();
  return r ? *r : std::vector<report::SpoolRecord>{};
}

// Segment file name -> size.
inline std::map<std::string, std::uint64_t> segment_sizes(const std::filesystem::path& dir) {
  std::map<std::string, std::uint64_t> out;
  for (const auto& e : std::filesystem::directory_iterator(dir)) {
    if (e.path().extension() == ".seg") out[e.path().filename().string()] = e.file_size();
  }
  return out;
}

inline std::string read_file(const std::filesystem::path& p) {
  std::ifstream in(p, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

inline void write_file(const std::filesystem::path& p, const std::string& bytes) {
  std::ofstream out(p, std::ios::binary | std::ios::trunc);
  out << bytes;
}

inline void flip_byte(const std::filesystem::path& p, std::uint64_t offset) {
  std::string bytes = read_file(p);
  ASSERT_LT(offset, bytes.size()) << p;
  bytes[offset] = static_cast<char>(bytes[offset] ^ 0x5a);
  write_file(p, bytes);
}

}  // namespace hsns::testing::spool
