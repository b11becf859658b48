// Unit tests of hsnsctl's output and argument handling: table layout, the JSON-to-table views, error
// formatting, argument parsers, and the exit codes of run_cli that need no server.
#include "table.h"

#include <gtest/gtest.h>
#include <stdlib.h>
#include <unistd.h>

#include <cstdio>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <vector>

#include "app.h"
#include "args.h"
#include "output.h"
#include "support/temp_dir.h"
#include "views.h"

namespace hsnsctl {
namespace {

using nlohmann::json;

std::vector<std::string> lines_of(const std::string& text) {
  std::vector<std::string> lines;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) lines.push_back(line);
  return lines;
}

TEST(Table, AlignsColumnsUnderTheHeader) {
  Table table({"ID", "NAME", "MTU"});
  table.add_row({"1", "alpha-long-name", "9000"});
  table.add_row({"22", "b", "1500"});
  EXPECT_EQ(table.to_string(),
            "ID   NAME              MTU\n"
            "1    alpha-long-name   9000\n"
            "22   b                 1500\n");
}

TEST(Table, HeaderOnlyWhenThereAreNoRows) {
  Table table({"NAME", "NPUS"});
  EXPECT_TRUE(table.empty());
  EXPECT_EQ(table.to_string(), "NAME   NPUS\n");
}

TEST(Table, EmptyAndMissingCellsShowADash) {
  Table table({"A", "B", "C"});
  table.add_row({"", "x"});
  EXPECT_EQ(table.to_string(),
            "A   B   C\n"
            "-   x   -\n");
  EXPECT_EQ(table.rows().front().size(), 3u);
}

TEST(Table, NoTrailingBlanksAndSameFieldCountOnEveryLine) {
  Table table({"ID", "NAME", "GATEWAY"});
  table.add_row({"a", "", "198.18.0.1"});
  table.add_row({"bbbbbb", "n", ""});
  for (const auto& line : lines_of(table.to_string())) {
    ASSERT_FALSE(line.empty());
    EXPECT_NE(line.back(), ' ') << "'" << line << "'";
    std::istringstream fields(line);
    std::size_t count = 0;
    for (std::string field; fields >> field;) ++count;
    EXPECT_EQ(count, 3u) << line;
  }
}

TEST(Table, RejectsRowsWiderThanTheHeader) {
  Table table({"A"});
  EXPECT_THROW(table.add_row({"1", "2"}), std::invalid_argument);
  EXPECT_THROW(Table(std::vector<std::string>{}), std::invalid_argument);
}

TEST(Table, CountsUtf8CodePoints) {
  EXPECT_EQ(display_width("abc"), 3u);
  EXPECT_EQ(display_width("h\xC3\xA9llo"), 5u);  // "héllo"
  Table table({"NAME", "X"});
  table.add_row({"h\xC3\xA9", "1"});
  table.add_row({"abcd", "2"});
  auto lines = lines_of(table.to_string());
  ASSERT_EQ(lines.size(), 3u);
  EXPECT_EQ(lines[1], "h\xC3\xA9     1");
  EXPECT_EQ(lines[2], "abcd   2");
}

TEST(Views, CellText) {
  json object = {{"s", "text"}, {"n", 42}, {"b", true}, {"z", nullptr}, {"a", json::array({1, 2})}};
  EXPECT_EQ(cell_text(object, "s"), "text");
  EXPECT_EQ(cell_text(object, "n"), "42");
  EXPECT_EQ(cell_text(object, "b"), "true");
  EXPECT_EQ(cell_text(object, "z"), "");
  EXPECT_EQ(cell_text(object, "missing"), "");
  EXPECT_EQ(cell_text(object, "a"), "[1,2]");
  EXPECT_EQ(cell_text(json("not an object"), "s"), "");
}

TEST(Views, SpeedAndPools) {
  EXPECT_EQ(format_speed(0), "");
  EXPECT_EQ(format_speed(200000), "200G");
  EXPECT_EQ(format_speed(2500), "2500M");
  EXPECT_EQ(format_pools(json::array()), "");
  EXPECT_EQ(format_pools(json::parse(
                R"([{"start":"10.0.0.10","end":"10.0.0.20"},{"start":"10.0.0.30","end":"10.0.0.40"}])")),
            "10.0.0.10-10.0.0.20,10.0.0.30-10.0.0.40");
}

TEST(Views, SubnetsTable) {
  auto answer = json::parse(R"({"items": [
    {"id": "7c9e6679-7425-40de-944b-e07fc1f90ae7", "name": "train-a", "tenant": "default",
     "cidr": "198.18.0.0/24", "ip_version": 4, "gateway_ip": "198.18.0.1",
     "allocation_pools": [{"start": "198.18.0.10", "end": "198.18.0.200"}], "mtu": 9000, "port_count": 3},
    {"id": "16fd2706-8baf-433b-82eb-8c7fada847da", "name": "v6", "tenant": "t2", "cidr": "fd00:1::/64",
     "ip_version": 6, "gateway_ip": null, "allocation_pools": [], "mtu": 4200, "port_count": 0}]})");
  EXPECT_EQ(subnets_table(list_items(answer)).to_string(),
            "ID                                     NAME      TENANT    CIDR            GATEWAY      POOLS   "
            "                   MTU    PORTS\n"
            "7c9e6679-7425-40de-944b-e07fc1f90ae7   train-a   default   198.18.0.0/24   198.18.0.1   "
            "198.18.0.10-198.18.0.200   9000   3\n"
            "16fd2706-8baf-433b-82eb-8c7fada847da   v6        t2        fd00:1::/64     -            -       "
            "                   4200   0\n");
}

TEST(Views, PortsTable) {
  auto ports =
      json::parse(R"([{"id": "p1", "name": "", "subnet_id": "s1", "tenant": "default", "host": "node-1",
                                "npu": 7, "ip_address": "198.18.0.10", "fixed_ip": false}])");
  EXPECT_EQ(ports_table(ports).to_string(),
            "ID   NAME   HOST     NPU   SUBNET   IP\n"
            "p1   -      node-1   7     s1       198.18.0.10\n");
}

TEST(Views, HostsAndNpusTables) {
  auto host = json::parse(R"({"name": "node-1", "generation": 4, "updated_at": "2026-11-29T16:47:53Z",
    "npus": [{"index": 0, "netdev": "eth2", "mac": "02:00:00:00:00:01", "rdma_device": "mlx5_0",
              "link_speed_mbps": 400000},
             {"index": 1, "netdev": "eth3", "mac": "02:00:00:00:00:02", "rdma_device": "", "link_speed_mbps": 0}]})");
  EXPECT_EQ(hosts_table(json::array({host})).to_string(),
            "NAME     NPUS   GENERATION   UPDATED\n"
            "node-1   2      4            2026-11-29T16:47:53Z\n");
  EXPECT_EQ(npus_table(host["npus"]).to_string(),
            "INDEX   NETDEV   MAC                 RDMA_DEVICE   SPEED\n"
            "0       eth2     02:00:00:00:00:01   mlx5_0        400G\n"
            "1       eth3     02:00:00:00:00:02   -             -\n");
}

TEST(Views, DesiredTableHasOneRowPerPort) {
  auto desired = json::parse(R"({"host": "node-1", "generation": 9, "ports": [
    {"port_id": "p1", "name": "rank0", "npu": 0, "netdev": "eth2", "mac": "02:00:00:00:00:01", "subnet_id": "s1",
     "subnet_name": "train-a", "tenant": "default", "address": "198.18.0.10", "prefix_length": 24,
     "cidr": "198.18.0.0/24", "mtu": 9000, "gateway_ip": null, "allowed_prefixes": ["198.18.0.0/24"]},
    {"port_id": "p2", "name": "", "npu": 3, "netdev": null, "mac": null, "subnet_id": "s2",
     "subnet_name": "v6", "tenant": "t2", "address": "fd00:1::a", "prefix_length": 64,
     "cidr": "fd00:1::/64", "mtu": 4200, "gateway_ip": "fd00:1::1", "allowed_prefixes": ["fd00:1::/64", "fd00:2::/64"]}]})");
  auto lines = lines_of(desired_table(desired).to_string());
  ASSERT_EQ(lines.size(), 3u);
  EXPECT_EQ(lines[0],
            "PORT_ID   NAME    NPU   NETDEV   MAC                 SUBNET    TENANT    ADDRESS          MTU   "
            " GATEWAY     ALLOWED");
  EXPECT_EQ(lines[1],
            "p1        rank0   0     eth2     02:00:00:00:00:01   train-a   default   198.18.0.10/24   9000  "
            " -           198.18.0.0/24");
  EXPECT_EQ(lines[2],
            "p2        -       3     -        -                   v6        t2        fd00:1::a/64     4200  "
            " fd00:1::1   fd00:1::/64,fd00:2::/64");
}

TEST(Views, ReachabilityTable) {
  auto answer =
      json::parse(R"({"src_port": "a", "dst_port": "b", "reachable": false, "reason": "different subnets"})");
  EXPECT_EQ(reachability_table(answer).to_string(),
            "SRC_PORT   DST_PORT   REACHABLE   REASON\n"
            "a          b          false       different subnets\n");
}

TEST(Views, ToleratesUnexpectedShapes) {
  EXPECT_TRUE(list_items(json::object()).empty());
  EXPECT_TRUE(list_items(json::parse(R"({"items": 5})")).empty());
  EXPECT_TRUE(subnets_table(json("x")).empty());
  EXPECT_TRUE(desired_table(json::array()).empty());
  auto odd = json::parse(R"([{"id": 5, "allocation_pools": "none"}, 17])");
  EXPECT_EQ(subnets_table(odd).rows().size(), 2u);
  EXPECT_EQ(hosts_table(json::parse(R"([{"name": "h", "npus": null}])")).rows().front()[1], "0");
}

TEST(Output, ProblemDocumentWithInvalidParams) {
  std::string body =
      R"({"type": "urn:hsns:problem:invalid-request", "title": "Invalid request", "status": 400,
    "detail": "field 'cidr': host bits set", "invalid_params": [{"name": "cidr", "reason": "host bits set"},
    {"name": "allocation_pools[1].start", "reason": "outside the CIDR"}]})";
  EXPECT_EQ(format_http_error(400, body),
            "error: Invalid request (400): field 'cidr': host bits set\n"
            "  cidr: host bits set\n"
            "  allocation_pools[1].start: outside the CIDR\n");
}

TEST(Output, ProblemDocumentWithoutDetail) {
  EXPECT_EQ(format_http_error(403, R"({"title": "Not permitted for this role", "status": 403})"),
            "error: Not permitted for this role (403)\n");
}

TEST(Output, NonProblemBodies) {
  EXPECT_EQ(format_http_error(502, "Bad Gateway\r\nmore"), "error: HTTP 502: Bad Gateway\n");
  EXPECT_EQ(format_http_error(500, ""), "error: HTTP 500\n");
  EXPECT_EQ(format_http_error(500, std::string(300, 'x')),
            "error: HTTP 500: " + std::string(200, 'x') + "...\n");
  EXPECT_EQ(format_http_error(404, R"({"message": "no"})"), "error: HTTP 404: {\"message\": \"no\"}\n");
}

TEST(Output, ErrorKindsCarryExitCodes) {
  EXPECT_EQ(usage_error("x").exit_code(), 64);
  EXPECT_EQ(connection_error("x").exit_code(), 2);
  EXPECT_EQ(failure("x").exit_code(), 1);
  EXPECT_STREQ(failure("boom").what(), "error: boom");
}

TEST(Args, NpuSpecs) {
  auto full = parse_npu_spec("3:eth5:02:AB:cd:00:00:0f:mlx5_3:200000");
  ASSERT_TRUE(full) << full.error();
  EXPECT_EQ(full->index, 3);
  EXPECT_EQ(full->netdev, "eth5");
  EXPECT_EQ(full->mac, "02:AB:cd:00:00:0f");
  EXPECT_EQ(full->rdma_device, "mlx5_3");
  EXPECT_EQ(full->link_speed_mbps, 200000);
  EXPECT_EQ(full->to_json(), json::parse(R"({"index": 3, "netdev": "eth5", "mac": "02:AB:cd:00:00:0f",
                                             "rdma_device": "mlx5_3", "link_speed_mbps": 200000})"));

  auto minimal = parse_npu_spec("0:eth2:02:00:00:00:00:01");
  ASSERT_TRUE(minimal);
  EXPECT_EQ(minimal->to_json(), json::parse(R"({"index": 0, "netdev": "eth2", "mac": "02:00:00:00:00:01"})"));

  auto with_rdma = parse_npu_spec("1:eth3:02:00:00:00:00:02:mlx5_1");
  ASSERT_TRUE(with_rdma);
  EXPECT_EQ(with_rdma->rdma_device, "mlx5_1");
  EXPECT_FALSE(with_rdma->link_speed_mbps);

  for (const char* bad :
       {"", "0:eth2", "0:eth2:02:00:00:00:01", "x:eth2:02:00:00:00:00:01", "-1:eth2:02:00:00:00:00:01",
        "0::02:00:00:00:00:01", "0:eth2:02:00:00:00:00:zz", "0:eth2:2:00:00:00:00:01",
        "0:eth2:02:00:00:00:00:01:mlx5_0:fast", "0:eth2:02:00:00:00:00:01:m:1:extra"}) {
    auto parsed = parse_npu_spec(bad);
    EXPECT_FALSE(parsed) << bad;
    if (!parsed) {
      EXPECT_NE(parsed.error().find("INDEX:NETDEV:MAC"), std::string::npos);
    }
  }
}

TEST(Args, PoolSpecs) {
  auto v4 = parse_pool_spec("198.18.0.10-198.18.0.20");
  ASSERT_TRUE(v4);
  EXPECT_EQ(v4->to_json(), json::parse(R"({"start": "198.18.0.10", "end": "198.18.0.20"})"));
  auto v6 = parse_pool_spec("fd00::10-fd00::ff");
  ASSERT_TRUE(v6);
  EXPECT_EQ(v6->start, "fd00::10");
  EXPECT_EQ(v6->end, "fd00::ff");
  for (const char* bad : {"", "10.0.0.1", "-10.0.0.1", "10.0.0.1-", "1-2-3"})
    EXPECT_FALSE(parse_pool_spec(bad)) << bad;
}

TEST(Args, Uuids) {
  EXPECT_TRUE(is_uuid("7c9e6679-7425-40de-944b-e07fc1f90ae7"));
  EXPECT_TRUE(is_uuid("7C9E6679-7425-40DE-944B-E07FC1F90AE7"));
  EXPECT_FALSE(is_uuid("train-a"));
  EXPECT_FALSE(is_uuid("7c9e6679-7425-40de-944b-e07fc1f90ae"));
  EXPECT_FALSE(is_uuid("7c9e6679x7425-40de-944b-e07fc1f90ae7"));
  EXPECT_FALSE(is_uuid("7c9e6679-7425-40de-944b-e07fc1f90aeg"));
}

TEST(Args, TokenFile) {
  std::string path = ::testing::TempDir() + "hsnsctl_token_test";
  {
    std::ofstream out(path);
    out << "  s3cret-token\n\n";
  }
  auto token = read_token_file(path);
  ASSERT_TRUE(token) << token.error();
  EXPECT_EQ(*token, "s3cret-token");
  {
    std::ofstream out(path);
    out << " \n";
  }
  EXPECT_FALSE(read_token_file(path));
  std::remove(path.c_str());
  EXPECT_FALSE(read_token_file(path));
}

struct CliRun {
  int code;
  std::string out;
  std::string err;
};

CliRun run(std::vector<std::string> args) {
  args.insert(args.begin(), "hsnsctl");
  std::vector<const char*> argv;
  for (const auto& arg : args) argv.push_back(arg.c_str());
  std::ostringstream out;
  std::ostringstream err;
  int code = run_cli(static_cast<int>(argv.size()), argv.data(), out, err);
  return {code, out.str(), err.str()};
}

// `hsnsctl flows` counts complete harvest batches only: a batch without its closing marker (cut short by a
// crash, or being written) is skipped and reported, even when complete batches follow it.
TEST(RunCli, FlowsIgnoresAnUnterminatedBatch) {
  const hsns::testing::TempDir dir("hsnsctl-flows");
  const std::string path = (dir / "flows.jsonl").string();
  const auto flow = [](int epoch, int packets) {
    // A complete flow record (the wire contract's, hsns/proto/flows.h): hsnsctl refuses partial ones.
    json j = {
        {"type", "flow"},
        {"host", "h1"},
        {"ifindex", 3},
        {"ifname", "rxe0"},
        {"direction", "ingress"},
        {"family", 4},
        {"src", "198.18.40.1"},
        {"dst", "198.18.40.2"},
        {"sport", 49152},
        {"dest_qp", 7},
        {"packets", packets},
        {"bytes", packets * 100},
        {"ce", 0},
        {"ect", 0},
        {"cnp", 0},
        {"op",
         {{"send", packets},
          {"write", 0},
          {"read_req", 0},
          {"read_resp", 0},
          {"ack", 0},
          {"atomic", 0},
          {"cnp", 0},
          {"other", 0}}},
        {"nak", {{"psn_seq", 0}, {"inv_req", 0}, {"rem_access", 0}, {"rem_op", 0}, {"rnr", 0}, {"other", 0}}},
        {"psn_regressions", 0},
        {"epoch", epoch}};
    return j.dump() + "\n";
  };
  const auto open_marker = [](int epoch, int records) {
    return json{{"type", "batch"}, {"epoch", epoch}, {"records", records}}.dump() + "\n";
  };
  const auto close_marker = [](int epoch, int records) {
    return json{{"type", "counters"}, {"epoch", epoch}, {"records", records}, {"counters", json::object()}}
               .dump() +
           "\n";
  };
  // Epoch 1 complete (10 packets); epoch 2 torn (1000); epoch 2 written again complete (20); epoch 3 being
  // written (its opening marker, a flow line and half of the next).
  std::ofstream(path) << open_marker(1, 1) << flow(1, 10) << close_marker(1, 1) << open_marker(2, 2)
                      << flow(2, 1000) << open_marker(2, 1) << flow(2, 20) << close_marker(2, 1)
                      << open_marker(3, 2) << flow(3, 5000) << flow(3, 7000).substr(0, 40);
  auto r = run({"-o", "json", "flows", "--file", path});
  ASSERT_EQ(r.code, 0) << r.err;
  const auto out = json::parse(r.out);
  ASSERT_EQ(out.size(), 1u) << r.out;
  EXPECT_EQ(out[0]["packets"], 30);
  EXPECT_EQ(out[0]["bytes"], 3000);
  auto table = run({"flows", "--file", path});
  ASSERT_EQ(table.code, 0) << table.err;
  EXPECT_NE(table.out.find("incomplete harvest batches skipped"), std::string::npos) << table.out;
  // A file of an earlier version (no epochs): each harvest closed by a counters line, the last one torn.
  json legacy = json::parse(flow(0, 4));
  legacy.erase("epoch");
  std::ofstream(path, std::ios::trunc) << legacy.dump() << "\n"
                                       << json{{"type", "counters"}, {"records", 1}}.dump() << "\n"
                                       << legacy.dump() << "\n";
  auto old = run({"-o", "json", "flows", "--file", path});
  ASSERT_EQ(old.code, 0) << old.err;
  EXPECT_EQ(json::parse(old.out)[0]["packets"], 4);
}

TEST(RunCli, VersionAndHelpExitZero) {
  auto version = run({"--version"});
  EXPECT_EQ(version.code, 0);
  EXPECT_EQ(version.out.rfind("hsnsctl ", 0), 0u) << version.out;
  auto help = run({"subnets", "create", "--help"});
  EXPECT_EQ(help.code, 0);
  EXPECT_NE(help.out.find("--cidr"), std::string::npos);
}

TEST(RunCli, UsageErrorsExit64) {
  EXPECT_EQ(run({}).code, 64);
  EXPECT_EQ(run({"subnets"}).code, 64);
  EXPECT_EQ(run({"bogus"}).code, 64);
  EXPECT_EQ(run({"-o", "yaml", "hosts", "list"}).code, 64);
  EXPECT_EQ(run({"subnets", "create", "--name", "a"}).code, 64);  // --cidr missing
  EXPECT_EQ(run({"ports", "create", "--subnet", "s", "--host", "h", "--npu", "-1"}).code, 64);
  EXPECT_EQ(run({"--server", "ftp://example", "hosts", "list"}).code, 64);
  EXPECT_EQ(
      run({"--server", "http://127.0.0.1:1", "--token-file", "/nonexistent/token", "hosts", "list"}).code,
      64);
  auto npu = run({"--server", "http://127.0.0.1:1", "hosts", "register", "h1", "--npu", "0:eth2"});
  EXPECT_EQ(npu.code, 64);
  EXPECT_EQ(npu.err.rfind("error: --npu '0:eth2'", 0), 0u) << npu.err;
  auto pool = run({"--server", "http://127.0.0.1:1", "subnets", "create", "--name", "a", "--cidr",
                   "10.0.0.0/24", "--pool", "10.0.0.5"});
  EXPECT_EQ(pool.code, 64);
  EXPECT_EQ(
      run({"--server", "http://127.0.0.1:1", "subnets", "update", "7c9e6679-7425-40de-944b-e07fc1f90ae7"})
          .code,
      64);
}

TEST(RunCli, UnreachableServerExits2) {
  auto result = run({"--server", "http://127.0.0.1:1", "-o", "json", "subnets", "list"});
  EXPECT_EQ(result.code, 2);
  EXPECT_TRUE(result.out.empty());
  EXPECT_EQ(result.err.rfind("error: GET http://127.0.0.1:1/api/v1/subnets: connect: ", 0), 0u) << result.err;
  // Global options are accepted after the command too.
  EXPECT_EQ(run({"health", "--server", "http://127.0.0.1:1"}).code, 2);
}

}  // namespace
}  // namespace hsnsctl
