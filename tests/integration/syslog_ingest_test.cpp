// Syslog ingest against the real hsns-aggregator on loopback: messages sent by util-linux `logger` over UDP
// and TCP (octet counting and LF framing, RFC 5424 and RFC 3164) and by a raw socket, found again through
// GET /api/v1/logs; the mapping to topology devices by hostname; malformed lines counted by reason; the
// query parameter checks; receivers off by default.
#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <chrono>
#include <nlohmann/json.hpp>
#include <regex>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "support/aggregator_process.h"
#include "support/metrics.h"
#include "support/raw_connection.h"
#include "support/shell.h"
#include "support/temp_dir.h"

namespace hsns::testing {
namespace {

using nlohmann::json;

class SyslogIngest : public ::testing::Test {
 protected:
  void SetUp() override {
    udp_port_ = free_loopback_port(SOCK_DGRAM);
    tcp_port_ = free_loopback_port(SOCK_STREAM);
    aggregator_.set_config("syslog:\n  udp_listen: \"127.0.0.1:" + std::to_string(udp_port_) +
                           "\"\n  tcp_listen: \"127.0.0.1:" + std::to_string(tcp_port_) +
                           "\"\n  messages_per_device: 50\n");
    aggregator_.start();
  }

  // The stored message whose text is `text`, waited for up to 10 s.
  json find_log(const std::string& text, const std::string& query = "") {
    json found;
    const bool ok = wait_for(
        [&] {
          auto r = aggregator_.client(kViewerToken).get("/api/v1/logs?limit=1000" + query);
          if (!r || r->status != 200) return false;
          const auto body = json::parse(r->body);
          for (const auto& item : body["items"]) {
            if (item["message"] == text) {
              found = item;
              return true;
            }
          }
          return false;
        },
        std::chrono::seconds(10));
    EXPECT_TRUE(ok) << "no stored message '" << text << "'; log:\n" << aggregator_.log();
    return found;
  }

  double metric(const std::string& selector) {
    auto r = aggregator_.client().get("/metrics");
    EXPECT_TRUE(r && r->status == 200);
    return metric_value(r ? r->body : "", selector).value_or(-1);
  }

  TempDir dir_{"hsns-syslog"};
  AggregatorProcess aggregator_{dir_.path()};
  int udp_port_ = 0;
  int tcp_port_ = 0;
};

TEST_F(SyslogIngest, LoggerOverUdpAndTcpInBothFormatsAndFramings) {
  const auto port = [](int p) { return std::to_string(p); };
  must({"logger", "--rfc5424", "-n", "127.0.0.1", "-P", port(udp_port_), "-d", "-t", "bgpd", "--msgid", "NBR",
        "--sd-id", "origin@32473", "--sd-param", "software=\"test\"", "-p", "local4.warning",
        "udp 5424 message"});
  must({"logger", "--rfc5424", "-n", "127.0.0.1", "-P", port(tcp_port_), "-T", "--octet-count", "-t", "lldpd",
        "tcp octet-counted message"});
  must({"logger", "--rfc3164", "-n", "127.0.0.1", "-P", port(tcp_port_), "-T", "-t", "swss",
        "tcp lf message"});
  must({"logger", "--rfc3164", "-n", "127.0.0.1", "-P", port(udp_port_), "-d", "-t", "kernel",
        "udp 3164 message"});

  const auto udp5424 = find_log("udp 5424 message");
  EXPECT_EQ(udp5424["format"], "rfc5424");
  EXPECT_EQ(udp5424["facility"], 20);
  EXPECT_EQ(udp5424["severity"], 4);
  EXPECT_EQ(udp5424["severity_name"], "warning");
  EXPECT_EQ(udp5424["app"], "bgpd");
  EXPECT_EQ(udp5424["msgid"], "NBR");
  EXPECT_EQ(udp5424["source"], "127.0.0.1");
  EXPECT_EQ(udp5424["known_device"], false);
  EXPECT_EQ(udp5424["device"], "unknown:" + udp5424["hostname"].get<std::string>());
  bool has_origin = false;
  for (const auto& sd : udp5424["structured_data"]) {
    if (sd["id"] == "origin@32473" && sd["params"].size() == 1 && sd["params"][0]["value"] == "test")
      has_origin = true;
  }
  EXPECT_TRUE(has_origin) << udp5424.dump();
  EXPECT_EQ(find_log("tcp octet-counted message")["app"], "lldpd");
  const auto lf = find_log("tcp lf message");
  EXPECT_EQ(lf["format"], "rfc3164");
  EXPECT_EQ(lf["app"], "swss");
  EXPECT_EQ(find_log("udp 3164 message")["format"], "rfc3164");

  // The device filter answers that device's messages only.
  const std::string device = udp5424["device"];
  auto r = aggregator_.client(kViewerToken).get("/api/v1/logs?device=" + device + "&limit=1000");
  ASSERT_TRUE(r && r->status == 200);
  const auto filtered = json::parse(r->body);
  for (const auto& item : filtered["items"]) EXPECT_EQ(item["device"], device);

  EXPECT_GE(metric("hsns_syslog_received_total{transport=\"udp\"}"), 2);
  EXPECT_GE(metric("hsns_syslog_received_total{transport=\"tcp\"}"), 2);
  EXPECT_GE(metric("hsns_syslog_parsed_total{format=\"rfc5424\"}"), 2);
  EXPECT_GE(metric("hsns_syslog_parsed_total{format=\"rfc3164\"}"), 2);
  EXPECT_GE(metric("hsns_syslog_unknown_device_total"), 4);
}

TEST_F(SyslogIngest, HostnameMapsToTopologyDeviceAndMalformedLinesAreCounted) {
  const std::string name = generate_small_fabric_leaf(aggregator_);
  ASSERT_FALSE(name.empty());
  // The resolver reads the topology at most once a second.
  std::this_thread::sleep_for(std::chrono::milliseconds(1100));
  send_udp(udp_port_, "<187>Dec  2 05:07:56 " + name + " Ebra: %LINEPROTO-5-UPDOWN: mapped by hostname");
  const auto mapped = find_log("%LINEPROTO-5-UPDOWN: mapped by hostname", "&device=" + name);
  EXPECT_EQ(mapped["device"], name);
  EXPECT_EQ(mapped["known_device"], true);
  EXPECT_EQ(mapped["hostname"], name);

  send_udp(udp_port_, "<999>1 - - - - - -");
  send_udp(udp_port_, "<14>1 2026-13-01T00:00:00Z h a p m -");
  send_udp(udp_port_, std::string(9000, 'x'));
  ASSERT_TRUE(wait_for([&] { return metric("hsns_syslog_malformed_total{reason=\"too_long\"}") >= 1; },
                       std::chrono::seconds(10)));
  EXPECT_EQ(metric("hsns_syslog_malformed_total{reason=\"bad_pri\"}"), 1);
  EXPECT_EQ(metric("hsns_syslog_malformed_total{reason=\"bad_timestamp\"}"), 1);
  // A bad octet count closes that connection; the receiver goes on.
  must("printf '99999999 x' | timeout 5 bash -c 'cat > /dev/tcp/127.0.0.1/" + std::to_string(tcp_port_) +
       "'");
  ASSERT_TRUE(wait_for([&] { return metric("hsns_syslog_malformed_total{reason=\"frame_too_long\"}") >= 1; },
                       std::chrono::seconds(10)));
  send_udp(udp_port_, "<13>still receiving");
  find_log("still receiving");
  EXPECT_EQ(aggregator_.stop(), 0);
}

TEST_F(SyslogIngest, BadQueryParametersAreNamed) {
  for (const auto& [query, field] :
       std::vector<std::pair<std::string, std::string>>{{"limit=0", "limit"},
                                                        {"limit=1001", "limit"},
                                                        {"limit=x", "limit"},
                                                        {"since=yesterday", "since"},
                                                        {"device=", "device"},
                                                        {"colour=red", "colour"}}) {
    auto r = aggregator_.client(kViewerToken).get("/api/v1/logs?" + query);
    ASSERT_TRUE(r);
    EXPECT_EQ(r->status, 400) << query;
    EXPECT_NE(r->body.find(field), std::string::npos) << query << ": " << r->body;
  }
  auto unauthorised = aggregator_.client("").get("/api/v1/logs");
  ASSERT_TRUE(unauthorised);
  EXPECT_EQ(unauthorised->status, 401);
  send_udp(udp_port_, "<13>Dec  2 05:07:56 leafX t: old");
  find_log("old");
  auto since = aggregator_.client(kViewerToken).get("/api/v1/logs?since=2999-01-01T00:00:00Z");
  ASSERT_TRUE(since && since->status == 200);
  EXPECT_EQ(json::parse(since->body)["items"].size(), 0U);
}

TEST(SyslogIngestOff, ReceiversAreOffByDefaultAndTheRouteAnswersEmpty) {
  TempDir dir("hsns-syslog-off");
  AggregatorProcess aggregator(dir.path());
  aggregator.start();
  auto r = aggregator.client(kViewerToken).get("/api/v1/logs");
  ASSERT_TRUE(r && r->status == 200);
  EXPECT_EQ(json::parse(r->body)["items"].size(), 0U);
  EXPECT_EQ(aggregator.log().find("syslog over"), std::string::npos);
}

}  // namespace
}  // namespace hsns::testing
