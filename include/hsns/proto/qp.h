// The RDMA queue-pair inventory of a host: what hsnsd's rdma_qp component (daemon/rdma_qp) read from RDMA
// netlink at its last interval, the section of the telemetry report that joins the flow records of the
// probe (hsns/proto/flows.h: source and destination address, UDP source port, destination QP) to a
// process (pid, comm) and so to a job.
//
// One document of kind "qp-inventory": {"host","ts_ms","qps":[{...}]}, each QP
//   device, port (0 = not bound to a port yet), lqpn, rqpn (RC and UC), type ("RC", "UD", ... as
//   `rdma resource show qp` prints it), state ("RESET" ... "ERR"), pid (user QPs whose task lives),
//   comm (the task's command, or for kernel QPs the owning module; "" when unknown), kernel (owned by
//   the kernel), family + src + dst (the IP addresses of the QP's rdma_cm connection, when it has one;
//   all three or none), sport (the RoCE v2 UDP source port, for RC QPs on RoCE v2 ports with a remote QP).
// Contract: the rules of hsns/proto/codec.h (strict, unknown members refused, JSON and CBOR). QPNs are
// 24-bit; sport lies in 0xC000..0xFFFF; addresses are of the record's family. Values only; thread-safe.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "hsns/error.h"
#include "hsns/proto/codec.h"

namespace hsns::proto {

inline constexpr std::array<const char*, 12> kQpTypeNames = {
    "SMI",           "GSI",        "RC",      "UC",      "UD",     "RAW_IPV6",
    "RAW_ETHERTYPE", "RAW_PACKET", "XRC_INI", "XRC_TGT", "DRIVER", "UNKNOWN"};
inline constexpr std::array<const char*, 8> kQpStateNames = {"RESET", "INIT", "RTR", "RTS",
                                                             "SQD",   "SQE",  "ERR", "UNKNOWN"};
inline constexpr std::uint32_t kMaxQpn = 0xFFFFFF;
inline constexpr std::size_t kMaxQpInventoryRecords = 1 << 18;

struct QpAddresses {
  int family = 4;  // 4 or 6
  std::string src;
  std::string dst;
  bool operator==(const QpAddresses&) const = default;
};

struct QpRecord {
  std::string device;
  std::uint32_t port = 0;
  std::uint32_t lqpn = 0;
  std::optional<std::uint32_t> rqpn;
  std::string type = "UNKNOWN";   // one of kQpTypeNames
  std::string state = "UNKNOWN";  // one of kQpStateNames
  std::optional<std::uint32_t> pid;
  std::string comm;
  bool kernel = false;
  std::optional<QpAddresses> addresses;
  std::optional<std::uint16_t> sport;
  bool operator==(const QpRecord&) const = default;
};

struct QpInventory {
  std::string host;
  std::int64_t ts_ms = 0;  // Unix time of the read
  std::vector<QpRecord> qps;
  bool operator==(const QpInventory&) const = default;
};

Result<QpInventory> read_qp_inventory(const nlohmann::json& document);
nlohmann::json to_json(const QpRecord& record);
nlohmann::json to_json(const QpInventory& inventory);

template <>
struct Kind<QpInventory> {
  static constexpr const char* kName = "qp-inventory";
  static constexpr std::size_t kMaxBytes = 64 << 20;
  static Result<QpInventory> read(const nlohmann::json& d) { return read_qp_inventory(d); }
  static nlohmann::json write(const QpInventory& v) { return to_json(v); }
};

}  // namespace hsns::proto
