// Helpers shared by the store, transaction-helper and IPAM tests: temporary directories for real
// SQLite files, address literals, request specs, and result checks that report the store's error.
#pragma once

#include <gtest/gtest.h>
#include <stdlib.h>

#include <cstdio>
#include <filesystem>
#include <latch>
#include <mutex>
#include <optional>
#include <stdexcept>
#include <string>
#include <thread>
#include <type_traits>
#include <vector>

#include "hsns/ip.h"
#include "model/network.h"
#include "store/database.h"
#include "store/network_store.h"
#include "support/temp_dir.h"

namespace hsns::store::test_support {

namespace fs = std::filesystem;
using network::HostRegistration;
using network::NpuInterface;
using network::PortSpec;
using network::SubnetSpec;
using Kind = StoreError::Kind;

using hsns::testing::TempDir;

inline IpAddress ip(const std::string& text) {
  auto a = IpAddress::parse(text);
  if (!a) throw std::runtime_error(a.error());
  return *a;
}

inline IpPrefix prefix(const std::string& text) {
  auto p = IpPrefix::parse(text);
  if (!p) throw std::runtime_error(p.error());
  return *p;
}

inline IpRange range(const std::string& first, const std::string& last) {
  return IpRange{ip(first), ip(last)};
}

inline const char* kind_name(Kind k) {
  switch (k) {
    case Kind::not_found:
      return "not_found";
    case Kind::conflict:
      return "conflict";
    case Kind::invalid:
      return "invalid";
    case Kind::unavailable:
      return "unavailable";
    default:
      break;
  }
  return "?";
}

// The value of a successful result; an error fails the test with its detail.
template <typename T>
T ok(StoreResult<T> r) {
  if (!r) {
    throw std::runtime_error(std::string("unexpected store error ") + kind_name(r.error().kind) + " field '" +
                             r.error().field() + "': " + r.error().detail);
  }
  if constexpr (!std::is_void_v<T>) return std::move(*r);
}

template <typename T>
void expect_error(const StoreResult<T>& r, Kind kind, const std::string& field,
                  const std::string& detail_part) {
  ASSERT_FALSE(r.has_value()) << "expected " << kind_name(kind) << " on '" << field << "'";
  EXPECT_EQ(kind_name(r.error().kind), std::string(kind_name(kind))) << r.error().detail;
  EXPECT_EQ(r.error().field(), field) << r.error().detail;
  EXPECT_NE(r.error().detail.find(detail_part), std::string::npos)
      << "detail '" << r.error().detail << "' lacks '" << detail_part << "'";
}

inline HostRegistration registration(const std::string& name, int npus,
                                     const std::string& netdev_prefix = "eth") {
  HostRegistration reg;
  reg.name = name;
  for (int i = 0; i < npus; ++i) {
    NpuInterface n;
    n.index = i;
    n.netdev = netdev_prefix + std::to_string(i + 2);
    char mac[32];
    std::snprintf(mac, sizeof mac, "02:00:00:00:00:%02x", i);
    n.mac = mac;
    n.rdma_device = "mlx5_" + std::to_string(i);
    n.link_speed_mbps = 200000;
    reg.npus.push_back(n);
  }
  return reg;
}

inline SubnetSpec subnet_spec(const std::string& name, const std::string& cidr,
                              std::optional<std::string> gateway = {}, std::vector<IpRange> pools = {},
                              const std::string& tenant = "default") {
  SubnetSpec s;
  s.name = name;
  s.tenant = tenant;
  s.cidr = prefix(cidr);
  if (gateway) s.gateway = ip(*gateway);
  s.allocation_pools = std::move(pools);
  return s;
}

inline PortSpec port_spec(const std::string& subnet_id, const std::string& host, int npu,
                          std::optional<std::string> fixed = {}, const std::string& name = "") {
  PortSpec p;
  p.subnet_id = subnet_id;
  p.host = host;
  p.npu = npu;
  p.name = name;
  if (fixed) p.ip_address = ip(*fixed);
  return p;
}

// What a set of concurrent calls returned: the values of those that succeeded, the errors of the rest.
template <typename T>
struct Outcomes {
  std::vector<T> values;
  std::vector<StoreError> errors;
};

// Calls call(i) for i in [0, n) on n threads released together, so the calls really overlap.
template <typename T, typename Call>
Outcomes<T> run_together(int n, Call call) {
  Outcomes<T> out;
  std::mutex mu;
  std::latch start(n);
  std::vector<std::thread> threads;
  for (int i = 0; i < n; ++i) {
    threads.emplace_back([&, i] {
      start.arrive_and_wait();
      StoreResult<T> r = call(i);
      std::lock_guard<std::mutex> lock(mu);
      if (r) {
        out.values.push_back(std::move(*r));
      } else {
        out.errors.push_back(std::move(r).error());
      }
    });
  }
  for (auto& t : threads) t.join();
  return out;
}

// One value of a query on a raw connection.
inline std::int64_t query_int(Connection& c, const std::string& sql) {
  auto st = c.prepare(sql);
  if (!st) throw std::runtime_error(st.error().message);
  auto row = st->step();
  if (!row || !*row) throw std::runtime_error("no row for " + sql);
  return st->column_int64(0);
}

inline std::string query_text(Connection& c, const std::string& sql) {
  auto st = c.prepare(sql);
  if (!st) throw std::runtime_error(st.error().message);
  auto row = st->step();
  if (!row || !*row) throw std::runtime_error("no row for " + sql);
  return st->column_text(0);
}

}  // namespace hsns::store::test_support
