// Tests of the IPAM service (services/ipam.h) on real temporary SQLite files: the subnet and address
// rules, a claim lost to a concurrent writer, and many threads allocating from one pool through
// separate database connections.
#include "services/ipam.h"

#include <gtest/gtest.h>

#include <set>
#include <string>
#include <vector>

#include "store/database.h"
#include "store/sql_helpers.h"
#include "store/sqlite_address_book.h"
#include "store/sqlite_network_store.h"
#include "store_test_support.h"

namespace hsns::store {
namespace {

using namespace test_support;  // NOLINT(google-build-using-namespace): the shared helpers
using network::Port;
using network::Subnet;

// ---- subnet rules (no stored state) -----------------------------------------------------------------

// "first-last" of each pool, for comparing pool lists in one expectation.
std::vector<std::string> pool_text(const std::vector<IpRange>& pools) {
  std::vector<std::string> out;
  out.reserve(pools.size());
  for (const auto& p : pools) out.push_back(p.first.to_string() + "-" + p.last.to_string());
  return out;
}

TEST(IpamPoolRules, ValidatePoolsListsEveryFinding) {
  const auto cidr = prefix("10.0.0.0/24");
  const std::optional<IpAddress> gw = ip("10.0.0.1");
  EXPECT_TRUE(ipam::validate_pools(cidr, gw, {}).empty());
  EXPECT_TRUE(ipam::validate_pools(cidr, gw, {{ip("10.0.0.2"), ip("10.0.0.254")}}).empty());
  EXPECT_TRUE(ipam::validate_pools(cidr, std::nullopt, {{ip("10.0.0.1"), ip("10.0.0.254")}}).empty());
  // A gateway of the other family never lies in a pool.
  EXPECT_TRUE(ipam::validate_pools(cidr, IpAddress(IpFamily::v6, ip("10.0.0.5").value()),
                                   {{ip("10.0.0.2"), ip("10.0.0.9")}})
                  .empty());

  const auto reversed = ipam::validate_pools(cidr, gw, {{ip("10.0.0.9"), ip("10.0.0.2")}});
  ASSERT_EQ(reversed.size(), 1u);
  EXPECT_EQ(reversed[0].field, "allocation_pools[0].end");

  const auto errors = ipam::validate_pools(cidr, gw,
                                           {{ip("10.0.0.2"), ip("10.0.0.9")},
                                            {ip("10.0.0.0"), ip("10.0.0.1")},
                                            {ip("10.0.0.250"), ip("10.0.0.255")},
                                            {ip("10.0.0.5"), ip("10.0.0.6")},
                                            {ip("10.0.1.1"), ip("10.0.1.2")},
                                            {ip("10.0.0.20"), ip("10.0.0.30")}});
  ASSERT_EQ(errors.size(), 4u);
  EXPECT_EQ(errors[0].field, "allocation_pools[1].start");
  EXPECT_EQ(errors[1].field, "allocation_pools[2].end");
  EXPECT_EQ(errors[2].field, "allocation_pools[3]");
  EXPECT_EQ(errors[2].reason, "overlaps allocation_pools[0]");
  EXPECT_EQ(errors[3].field, "allocation_pools[4].start");
  EXPECT_EQ(errors[3].reason, "10.0.1.1 is outside 10.0.0.0/24");
}

TEST(IpamPoolRules, DefaultPoolsAroundTheGateway) {
  const auto v4 = prefix("10.0.0.0/24");
  EXPECT_EQ(pool_text(ipam::default_pools(v4, std::nullopt)),
            (std::vector<std::string>{"10.0.0.1-10.0.0.254"}));
  EXPECT_EQ(pool_text(ipam::default_pools(v4, ip("10.0.0.1"))),
            (std::vector<std::string>{"10.0.0.2-10.0.0.254"}));
  EXPECT_EQ(pool_text(ipam::default_pools(v4, ip("10.0.0.254"))),
            (std::vector<std::string>{"10.0.0.1-10.0.0.253"}));
  EXPECT_EQ(pool_text(ipam::default_pools(v4, ip("10.0.0.100"))),
            (std::vector<std::string>{"10.0.0.1-10.0.0.99", "10.0.0.101-10.0.0.254"}));
  // A gateway outside the usable range does not split it.
  EXPECT_EQ(pool_text(ipam::default_pools(v4, ip("10.0.0.0"))),
            (std::vector<std::string>{"10.0.0.1-10.0.0.254"}));
  EXPECT_EQ(pool_text(ipam::default_pools(v4, ip("192.168.0.1"))),
            (std::vector<std::string>{"10.0.0.1-10.0.0.254"}));
  EXPECT_EQ(pool_text(ipam::default_pools(v4, ip("::1"))), (std::vector<std::string>{"10.0.0.1-10.0.0.254"}));
  EXPECT_EQ(pool_text(ipam::default_pools(prefix("10.0.0.0/30"), ip("10.0.0.1"))),
            (std::vector<std::string>{"10.0.0.2-10.0.0.2"}));
  EXPECT_EQ(pool_text(ipam::default_pools(prefix("10.0.0.0/30"), ip("10.0.0.2"))),
            (std::vector<std::string>{"10.0.0.1-10.0.0.1"}));

  const auto v6 = prefix("fd00:1::/64");
  EXPECT_EQ(pool_text(ipam::default_pools(v6, ip("fd00:1::1"))),
            (std::vector<std::string>{"fd00:1::2-fd00:1::ffff:ffff:ffff:ffff"}));
  EXPECT_EQ(pool_text(ipam::default_pools(v6, std::nullopt)),
            (std::vector<std::string>{"fd00:1::1-fd00:1::ffff:ffff:ffff:ffff"}));
  EXPECT_EQ(pool_text(ipam::default_pools(v6, ip("fd00:1::ffff:ffff:ffff:ffff"))),
            (std::vector<std::string>{"fd00:1::1-fd00:1::ffff:ffff:ffff:fffe"}));

  // Whatever the gateway, the default pools are valid pools.
  for (const char* gw : {"10.0.0.1", "10.0.0.2", "10.0.0.128", "10.0.0.253", "10.0.0.254"}) {
    EXPECT_TRUE(ipam::validate_pools(v4, ip(gw), ipam::default_pools(v4, ip(gw))).empty()) << gw;
  }
}

TEST(IpamSubnetRules, DefaultPoolsSplitAroundTheGateway) {
  auto pools = ok(ipam::subnet_pools(subnet_spec("a", "10.0.0.0/24", "10.0.0.100")));
  ASSERT_EQ(pools.size(), 2u);
  EXPECT_EQ(pools[0], range("10.0.0.1", "10.0.0.99"));
  EXPECT_EQ(pools[1], range("10.0.0.101", "10.0.0.254"));
}

TEST(IpamSubnetRules, RefusesWhatTheAddressRulesRefuse) {
  expect_error(ipam::subnet_pools(subnet_spec("a", "127.0.0.0/24")), Kind::invalid, "cidr", "loopback");
  expect_error(ipam::subnet_pools(subnet_spec("a", "10.0.0.0/24", "10.0.0.255")), Kind::invalid, "gateway_ip",
               "gateway_ip");
  expect_error(ipam::subnet_pools(subnet_spec("a", "10.0.0.0/24", {}, {range("10.0.0.0", "10.0.0.9")})),
               Kind::invalid, "allocation_pools[0].start", "");
  expect_error(
      ipam::subnet_pools(subnet_spec("a", "10.0.0.0/24", "10.0.0.5", {range("10.0.0.1", "10.0.0.9")})),
      Kind::invalid, "allocation_pools[0]", "gateway");
  expect_error(ipam::subnet_pools(subnet_spec("a", "10.0.0.7/32", "10.0.0.7")), Kind::invalid,
               "allocation_pools", "no address left");
}

TEST(IpamSubnetRules, UpdatedPoolsKeepTheSubnetsGatewayRule) {
  Subnet s;
  s.name = "a";
  s.cidr = prefix("10.0.0.0/24");
  s.gateway = ip("10.0.0.1");
  EXPECT_EQ(ok(ipam::updated_pools(s, {})), (std::vector<IpRange>{range("10.0.0.2", "10.0.0.254")}));
  expect_error(ipam::updated_pools(s, {range("10.0.0.1", "10.0.0.20")}), Kind::invalid, "allocation_pools[0]",
               "gateway");
}

// ---- addresses through a SQLite address book ---------------------------------------------------------

class IpamTest : public ::testing::Test {
 protected:
  IpamTest() {
    db_ = std::make_unique<Database>(options());
    store_ = std::make_unique<SqliteNetworkStore>(*db_);
    ok(store_->put_host(registration("node-a", 8)));
  }
  DatabaseOptions options() const {
    DatabaseOptions o;
    o.path = (dir_.path() / "hsns.db").string();
    o.read_connections = 2;
    o.busy_timeout = std::chrono::seconds(60);  // many writers queue on one file lock
    return o;
  }
  static Port new_port(const Subnet& s, const std::string& host, int npu, bool fixed) {
    Port p;
    p.id = "port-" + host + "-" + std::to_string(npu);
    p.subnet_id = s.id;
    p.tenant = s.tenant;
    p.host = host;
    p.npu = npu;
    p.fixed_ip = fixed;
    p.created_at = "2026-11-29T16:47:53Z";
    return p;
  }
  // The service's whole operation: one write transaction, the book bound to the new port.
  static StoreResult<IpAddress> assign(Database& db, const Subnet& s, const std::string& host, int npu,
                                       std::optional<IpAddress> fixed = {}) {
    return sql::write(db, [&](Connection& c) -> StoreResult<IpAddress> {
      Port p = new_port(s, host, npu, fixed.has_value());
      SqlitePortAddressBook book(c, p);
      HSNS_STORE_ASSIGN(address, ipam::assign_address(s, fixed, book));
      EXPECT_EQ(p.ip_address, *address);  // the claim stored the port with it
      return *address;
    });
  }

  TempDir dir_;
  std::unique_ptr<Database> db_;
  std::unique_ptr<SqliteNetworkStore> store_;
};

TEST_F(IpamTest, AllocatesLowestFreeThroughThePoolsThenReportsExhaustion) {
  auto s = ok(store_->create_subnet(subnet_spec(
      "a", "10.0.0.0/24", "10.0.0.1", {range("10.0.0.10", "10.0.0.11"), range("10.0.0.20", "10.0.0.20")})));
  EXPECT_EQ(ok(assign(*db_, s, "node-a", 0)), ip("10.0.0.10"));
  EXPECT_EQ(ok(assign(*db_, s, "node-a", 1, ip("10.0.0.200"))), ip("10.0.0.200"));  // fixed, outside pools
  EXPECT_EQ(ok(assign(*db_, s, "node-a", 2)), ip("10.0.0.11"));
  EXPECT_EQ(ok(assign(*db_, s, "node-a", 3)), ip("10.0.0.20"));
  expect_error(assign(*db_, s, "node-a", 4), Kind::conflict, "subnet_id",
               "allocation pools of subnet a (10.0.0.0/24) are exhausted: 3 of 3 addresses in use");
  // A failed operation stored nothing; the store sees exactly the claimed ports.
  network::PortFilter f;
  f.subnet_id = s.id;
  EXPECT_EQ(ok(store_->list_ports(f)).size(), 4u);
}

TEST_F(IpamTest, FixedAddressRules) {
  auto s = ok(store_->create_subnet(subnet_spec("a", "10.0.0.0/24", "10.0.0.1")));
  expect_error(assign(*db_, s, "node-a", 0, ip("10.0.0.1")), Kind::invalid, "ip_address", "gateway");
  expect_error(assign(*db_, s, "node-a", 0, ip("10.0.1.5")), Kind::invalid, "ip_address", "");
  expect_error(assign(*db_, s, "node-a", 0, ip("10.0.0.255")), Kind::invalid, "ip_address", "broadcast");
  ok(assign(*db_, s, "node-a", 0, ip("10.0.0.50")));
  expect_error(assign(*db_, s, "node-a", 1, ip("10.0.0.50")), Kind::conflict, "ip_address",
               "in use by port port-node-a-0 in subnet a");
}

// A port of node-a that wins an address against the operation under test.
Port rival_port(const Subnet& s, const std::string& id, int npu) {
  Port p;
  p.id = id;
  p.name = "winner";
  p.subnet_id = s.id;
  p.tenant = s.tenant;
  p.host = "node-a";
  p.npu = npu;
  p.created_at = "2026-11-29T16:47:53Z";
  return p;
}

// An AddressBook whose first claim loses: just before it, a rival port takes the same address in the
// same transaction, as a concurrent writer of a backend without a serialising write lock would.
class LosingFirstClaim final : public ipam::AddressBook {
 public:
  LosingFirstClaim(Connection& c, Port& port, Port rival) : c_(c), book_(c, port), rival_(std::move(rival)) {}
  StoreResult<void> scan_held(const IpRange& r, const std::function<bool(const IpAddress&)>& visit) override {
    return book_.scan_held(r, visit);
  }
  StoreResult<std::optional<ipam::AddressHolder>> holder(const IpAddress& a) override {
    return book_.holder(a);
  }
  StoreResult<bool> claim(const IpAddress& a) override {
    if (!rival_claimed_) {
      rival_claimed_ = true;
      SqlitePortAddressBook rival_book(c_, rival_);
      auto taken = rival_book.claim(a);
      if (!taken || !*taken) return tl::unexpected(StoreError::unavailable("the rival could not claim"));
    }
    return book_.claim(a);
  }

 private:
  Connection& c_;
  SqlitePortAddressBook book_;
  Port rival_;
  bool rival_claimed_ = false;
};

TEST_F(IpamTest, LostClaimMovesAllocationOnAndFailsAFixedAddress) {
  auto s = ok(
      store_->create_subnet(subnet_spec("a", "10.0.0.0/24", "10.0.0.1", {range("10.0.0.10", "10.0.0.12")})));
  auto allocated = sql::write(*db_, [&](Connection& c) -> StoreResult<IpAddress> {
    Port p = new_port(s, "node-a", 0, false);
    LosingFirstClaim book(c, p, rival_port(s, "rival-1", 7));
    return ipam::assign_address(s, std::nullopt, book);
  });
  EXPECT_EQ(ok(allocated), ip("10.0.0.11"));  // 10.0.0.10 went to the rival
  EXPECT_EQ(ok(store_->get_port("rival-1")).ip_address, ip("10.0.0.10"));
  EXPECT_EQ(ok(store_->get_port("port-node-a-0")).ip_address, ip("10.0.0.11"));

  auto fixed = sql::write(*db_, [&](Connection& c) -> StoreResult<IpAddress> {
    Port p = new_port(s, "node-a", 1, true);
    LosingFirstClaim book(c, p, rival_port(s, "rival-2", 6));
    return ipam::assign_address(s, ip("10.0.0.12"), book);
  });
  // The rival took 10.0.0.12 between the look-up and the claim: a conflict naming it, and the whole
  // operation (the rival's insert included) rolled back.
  expect_error(fixed, Kind::conflict, "ip_address", "in use by port rival-2 (winner)");
  expect_error(store_->get_port("rival-2"), Kind::not_found, "", "rival-2");
  expect_error(store_->get_port("port-node-a-1"), Kind::not_found, "", "port-node-a-1");
}

TEST_F(IpamTest, ManyThreadsOnSeparateConnectionsNeverShareAnAddress) {
  constexpr int kHosts = 8;
  constexpr int kNpus = 8;
  constexpr int kConnections = 4;  // separate writer connections to one file, like separate processes
  for (int h = 0; h < kHosts; ++h) ok(store_->put_host(registration("node-" + std::to_string(h), kNpus)));
  auto s = ok(store_->create_subnet(subnet_spec(
      "a", "10.0.0.0/24", "10.0.0.1", {range("10.0.0.10", "10.0.0.39"), range("10.0.0.100", "10.0.0.129")})));
  std::vector<std::unique_ptr<Database>> dbs;
  dbs.reserve(kConnections);
  for (int i = 0; i < kConnections; ++i) dbs.push_back(std::make_unique<Database>(options()));

  const auto outcomes = run_together<IpAddress>(kHosts * kNpus, [&](int i) {
    Database& db = *dbs[static_cast<std::size_t>(i) % dbs.size()];
    return assign(db, s, "node-" + std::to_string(i / kNpus), i % kNpus);
  });
  const auto& addresses = outcomes.values;
  const auto& errors = outcomes.errors;

  EXPECT_EQ(addresses.size(), 60u);
  EXPECT_EQ(std::set<IpAddress>(addresses.begin(), addresses.end()).size(), 60u);
  for (const auto& a : addresses) {
    EXPECT_TRUE(s.allocation_pools[0].contains(a) || s.allocation_pools[1].contains(a)) << a.to_string();
  }
  ASSERT_EQ(errors.size(), 4u);
  for (const auto& e : errors) {
    EXPECT_EQ(kind_name(e.kind), std::string("conflict")) << e.detail;
    EXPECT_EQ(e.field(), "subnet_id");
    EXPECT_NE(e.detail.find("60 of 60 addresses in use"), std::string::npos) << e.detail;
  }
  network::PortFilter f;
  f.subnet_id = s.id;
  EXPECT_EQ(ok(store_->list_ports(f)).size(), 60u);
}

}  // namespace
}  // namespace hsns::store
