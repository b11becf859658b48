// The telemetry report batch (hsns/proto/report.h): round trips in JSON and CBOR with every section,
// sections only when present, each section read by its own reader with findings named under the
// section, and the report's own limits.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>

#include "hsns/proto/codec.h"
#include "hsns/proto/report.h"
#include "support/aggregator_process.h"
#include "support/report_sample.h"

namespace hsns::proto {
namespace {

using hsns::testing::sample_report;
using nlohmann::json;

::testing::AssertionResult names(const Error& e, const std::string& field, const std::string& part = "") {
  for (const auto& f : e.fields) {
    if (f.field == field && f.reason.find(part) != std::string::npos) return ::testing::AssertionSuccess();
  }
  return ::testing::AssertionFailure() << "no field '" << field << "' with '" << part
                                       << "' in: " << e.message() << " (" << e.fields.size() << " findings)";
}

Result<Report> read_text(const json& document) {
  return decode<Report>(document.dump(), Encoding::json);
}

TEST(ProtoReport, RoundTripsEverySectionThroughJsonAndCbor) {
  const Report report = sample_report(42, 5, 3);
  ASSERT_TRUE(report.counters && report.qp && report.optics && report.lldp);
  ASSERT_EQ(report.flow_records(), 5U);
  for (const auto encoding : {Encoding::json, Encoding::cbor}) {
    const auto bytes = encode(report, encoding);
    auto back = decode<Report>(bytes, encoding);
    ASSERT_TRUE(back) << back.error().message();
    EXPECT_EQ(*back, report);
    EXPECT_EQ(encode(*back, encoding), bytes) << "the canonical document is stable";
  }
  EXPECT_EQ(media_type(Kind<Report>::kName, Encoding::cbor), "application/vnd.hsns.report.v1+cbor");
  EXPECT_EQ(*parse_media_type("application/vnd.hsns.report.v1+cbor", "report"), Encoding::cbor);
}

TEST(ProtoReport, SectionsArePresentOnlyWhenThereIsSomething) {
  Report heartbeat;
  heartbeat.seq = 1;
  heartbeat.ts_ms = 5;
  const json doc = to_json(heartbeat);
  EXPECT_EQ(doc, json({{"seq", 1}, {"ts_ms", 5}}));
  auto back = read_report(doc);
  ASSERT_TRUE(back) << back.error().message();
  EXPECT_EQ(*back, heartbeat);

  json empty_lists = doc;
  empty_lists["flows"] = json::array();
  empty_lists["ports"] = json::array();
  auto refused = read_text(empty_lists);
  ASSERT_FALSE(refused);
  EXPECT_TRUE(names(refused.error(), "flows", "must not be empty"));
  EXPECT_TRUE(names(refused.error(), "ports", "must not be empty"));

  json empty_batch = doc;
  empty_batch["flows"] = json::array({{{"epoch", 3}, {"records", json::array()}}});
  refused = read_text(empty_batch);
  ASSERT_FALSE(refused);
  EXPECT_TRUE(names(refused.error(), "flows[0].records", "must not be empty"));
}

TEST(ProtoReport, RefusesBadTopLevelMembersNamingEach) {
  json doc = to_json(sample_report(1));
  doc["seq"] = 0;
  doc["ts_ms"] = -1;
  doc["extra"] = true;
  auto r = read_text(doc);
  ASSERT_FALSE(r);
  EXPECT_TRUE(names(r.error(), "seq", ">= 1"));
  EXPECT_TRUE(names(r.error(), "ts_ms"));
  EXPECT_TRUE(names(r.error(), "extra", "not a known field"));

  json no_seq = to_json(sample_report(1));
  no_seq.erase("seq");
  r = read_text(no_seq);
  ASSERT_FALSE(r);
  EXPECT_TRUE(names(r.error(), "seq", "required"));
}

TEST(ProtoReport, FindingsInsideSectionsAreNamedUnderTheSection) {
  json doc = to_json(sample_report(1, 3, 2));
  doc["qp"]["qps"][0]["lqpn"] = 0x1000000;                  // beyond 24 bits
  doc["counters"]["rdma"][0]["port"] = 0;                   // ports are 1..255
  doc["optics"]["modules"][0]["status"] = "broken";         // not a status
  doc["lldp"]["neighbors"][0]["source_mac"] = "not-a-mac";  // not a MAC
  doc["flows"][0]["records"][2]["sport"] = "x";             // not a number
  doc["flows"][0]["records"][1]["epoch"] = 999;             // another batch's epoch
  doc["ports"][1]["oper_state"] = "sideways";               // not an operstate word
  doc["ports"][0]["unknown"] = 1;
  auto r = read_text(doc);
  ASSERT_FALSE(r);
  EXPECT_TRUE(names(r.error(), "qp.qps[0].lqpn"));
  EXPECT_TRUE(names(r.error(), "counters.rdma[0].port"));
  EXPECT_TRUE(names(r.error(), "optics.modules[0].status"));
  EXPECT_TRUE(names(r.error(), "lldp.neighbors[0].source_mac"));
  EXPECT_TRUE(names(r.error(), "flows[0].records[2].sport"));
  EXPECT_TRUE(names(r.error(), "flows[0].records[1].epoch", "batch's epoch"));
  EXPECT_TRUE(names(r.error(), "ports[1].oper_state", "one of"));
  EXPECT_TRUE(names(r.error(), "ports[0].unknown", "not a known field"));

  json cbor_doc = to_json(sample_report(1));
  cbor_doc["qp"] = "not an object";
  r = decode<Report>(encode_document(cbor_doc, Encoding::cbor), Encoding::cbor);
  ASSERT_FALSE(r);
  EXPECT_TRUE(names(r.error(), "qp", "object"));
}

// The rows form of a flow batch (flows.h): fields named once, a row of values per record; addresses as
// bytes (CBOR) or text (JSON); read into the same records as a document per record, without host.
TEST(ProtoReport, FlowRowsReadToTheSameRecordsInJsonAndCbor) {
  const Report sample = sample_report(5, 40, 1);
  const Report want = testing::rows_form_report(sample);
  auto text = read_text(testing::rows_form(to_json(sample), false));
  ASSERT_TRUE(text) << text.error().message();
  EXPECT_EQ(*text, want);
  auto cbor = decode<Report>(encode_document(testing::rows_form(to_json(sample), true), Encoding::cbor),
                             Encoding::cbor);
  ASSERT_TRUE(cbor) << cbor.error().message();
  EXPECT_EQ(*cbor, want);

  // IPv6, no PSN, negative times, extremes; the fields in another order.
  Report r;
  r.seq = 3;
  FlowRecord f = testing::sample_report_flow(3, 0);
  f.family = 6;
  f.src = "2001:db8::1";
  f.dst = "::ffff:198.18.0.1";
  f.psn.reset();
  f.first_ns = -5;
  f.op[7] = UINT64_MAX;
  f.direction = FlowDirection::xdp;
  r.flows.push_back({3, {f}});
  json doc = testing::rows_form(to_json(r), true);
  json& batch = doc["flows"][0];
  std::reverse(batch["fields"].begin(), batch["fields"].end());
  std::reverse(batch["rows"][0].begin(), batch["rows"][0].end());
  auto six = decode<Report>(encode_document(doc, Encoding::cbor), Encoding::cbor);
  ASSERT_TRUE(six) << six.error().message();
  EXPECT_EQ(*six, testing::rows_form_report(r));
}

TEST(ProtoReport, FlowRowFindingsNameTheRowAndTheField) {
  const json good = testing::rows_form(to_json(sample_report(1, 4, 1)), true);
  const auto column = [&](const std::string& name) {
    const auto& fields = good["flows"][0]["fields"];
    return static_cast<std::size_t>(std::find(fields.begin(), fields.end(), name) - fields.begin());
  };
  // The findings of a document that must be refused (none when it was accepted).
  const auto refused = [](const json& doc) {
    auto r = decode<Report>(encode_document(doc, Encoding::cbor), Encoding::cbor);
    return r ? Error{} : r.error();
  };

  json doc = good;
  auto& rows = doc["flows"][0]["rows"];
  rows[1][column("sport")] = 70000;
  rows[2][column("src")] = json::binary({1, 2, 3});
  rows[3][column("dst")] = json::binary(std::vector<std::uint8_t>(16, 1));  // IPv6 beside an IPv4 src
  rows[0][column("last_psn")] = nullptr;                                    // one of three PSNs
  rows[0][column("direction")] = 3;
  rows[0][column("first_ns")] = "soon";
  rows[0][column("ifname")] = std::string(16, 'n');
  Error r = refused(doc);
  EXPECT_TRUE(names(r, "flows[0].rows[1].sport", "65535"));
  EXPECT_TRUE(names(r, "flows[0].rows[2].src", "4 or 16 bytes"));
  EXPECT_TRUE(names(r, "flows[0].rows[3].dst", "family of src"));
  EXPECT_TRUE(names(r, "flows[0].rows[0].first_psn", "all null or all set"));
  EXPECT_TRUE(names(r, "flows[0].rows[0].direction"));
  EXPECT_TRUE(names(r, "flows[0].rows[0].first_ns"));
  EXPECT_TRUE(names(r, "flows[0].rows[0].ifname", "15 bytes"));

  doc = good;
  doc["flows"][0]["rows"][2].erase(0);
  EXPECT_TRUE(names(refused(doc), "flows[0].rows[2]", "32 values"));

  doc = good;
  doc["flows"][0]["fields"][4] = "hops";
  doc["flows"][0]["fields"][5] = "ifindex";
  r = refused(doc);
  EXPECT_TRUE(names(r, "flows[0].fields[4]", "not a flow row field"));
  EXPECT_TRUE(names(r, "flows[0].fields[5]", "repeats"));

  doc = good;
  doc["flows"][0]["fields"].erase(31);
  EXPECT_TRUE(names(refused(doc), "flows[0].fields", "must name"));

  doc = good;
  doc["flows"][0]["records"] = to_json(sample_report(1, 4, 1))["flows"][0]["records"];
  EXPECT_TRUE(names(refused(doc), "flows[0].records", "one form per batch"));

  doc = good;
  doc["flows"][0]["rows"] = json::array();
  EXPECT_TRUE(names(refused(doc), "flows[0].rows", "must not be empty"));
}

TEST(ProtoReport, PortNamesAreNetdevsAndUnique) {
  json doc = to_json(sample_report(1, 1, 2));
  doc["ports"][1]["name"] = doc["ports"][0]["name"];
  auto r = read_text(doc);
  ASSERT_FALSE(r);
  EXPECT_TRUE(names(r.error(), "ports[1].name", "repeats"));

  doc = to_json(sample_report(1, 1, 2));
  doc["ports"][0]["name"] = "a/b";
  doc["ports"][1]["speed_mbps"] = 0;
  r = read_text(doc);
  ASSERT_FALSE(r);
  EXPECT_TRUE(names(r.error(), "ports[0].name", "interface name"));
  EXPECT_TRUE(names(r.error(), "ports[1].speed_mbps"));
}

TEST(ProtoReport, LimitsOfBatchesRecordsAndBytes) {
  Report many;
  many.seq = 1;
  for (std::size_t i = 0; i <= kMaxReportFlowBatches; ++i)
    many.flows.push_back({i, {testing::sample_report_flow(i, 0)}});
  auto r = read_text(to_json(many));
  ASSERT_FALSE(r);
  EXPECT_TRUE(names(r.error(), "flows", "at most"));

  // More records in all than a report may hold, spread over batches each within its own limit: refused
  // by counting before any record is read (the elements need not even be records).
  json doc = {{"seq", 1}, {"ts_ms", 0}};
  const std::size_t per_batch = kMaxReportFlowRecords / 2 + 1;
  const json records(per_batch, json(nullptr));
  doc["flows"] = json::array({{{"epoch", 0}, {"records", records}}, {{"epoch", 1}, {"records", records}}});
  auto over = read_report(doc);
  ASSERT_FALSE(over);
  EXPECT_TRUE(names(over.error(), "flows", "at most " + std::to_string(kMaxReportFlowRecords)));

  const std::string big(Kind<Report>::kMaxBytes + 1, ' ');
  auto too_large = decode<Report>(big, Encoding::json);
  ASSERT_FALSE(too_large);
  EXPECT_EQ(too_large.error().kind, Error::Kind::too_large);
}

// The seeds of tests/fuzz/fuzz_report.cpp are these samples, one encoding byte ('j' or 'c') before the
// document. HSNS_WRITE_REPORT_SEEDS=1 (re)writes tests/fuzz/corpus_report; every run checks that each
// committed seed still reads back to its sample.
TEST(ProtoReport, FuzzSeedsAreTheRoundTripSamples) {
  Report heartbeat;
  heartbeat.seq = 1;
  Report ports_only;
  ports_only.seq = 2;
  ports_only.ports = sample_report(2, 0, 3).ports;
  const std::vector<std::tuple<std::string, Encoding, Report>> seeds = {
      {"full_json", Encoding::json, sample_report(1, 3, 2)},
      {"full_cbor", Encoding::cbor, sample_report(2, 3, 2)},
      {"heartbeat_json", Encoding::json, heartbeat},
      {"ports_only_cbor", Encoding::cbor, ports_only},
  };
  // The rows form as hsnsd sends it (CBOR, addresses as bytes) and in JSON.
  const std::vector<std::tuple<std::string, Encoding, Report>> row_seeds = {
      {"flow_rows_cbor", Encoding::cbor, sample_report(3, 5, 1)},
      {"flow_rows_json", Encoding::json, sample_report(4, 2, 0)},
  };
  const auto dir = hsns::testing::source_path("tests/fuzz/corpus_report");
  const char* write = std::getenv("HSNS_WRITE_REPORT_SEEDS");
  std::vector<std::tuple<std::string, Encoding, Report, std::string>> all;
  all.reserve(seeds.size() + row_seeds.size());
  for (const auto& [name, encoding, report] : seeds)
    all.emplace_back(name, encoding, report, encode(report, encoding));
  for (const auto& [name, encoding, report] : row_seeds)
    all.emplace_back(
        name, encoding, testing::rows_form_report(report),
        encode_document(testing::rows_form(to_json(report), encoding == Encoding::cbor), encoding));
  for (const auto& [name, encoding, report, document] : all) {
    const auto path = dir / name;
    if (write != nullptr && std::string(write) == "1") {
      std::filesystem::create_directories(dir);
      std::ofstream(path, std::ios::binary) << (encoding == Encoding::cbor ? 'c' : 'j') << document;
    }
    std::ifstream in(path, std::ios::binary);
    ASSERT_TRUE(in) << path << " is missing: run with HSNS_WRITE_REPORT_SEEDS=1";
    std::stringstream bytes;
    bytes << in.rdbuf();
    const std::string seed = bytes.str();
    ASSERT_FALSE(seed.empty()) << path;
    auto back = decode<Report>(std::string_view(seed).substr(1),
                               (seed[0] & 1) != 0 ? Encoding::cbor : Encoding::json);
    ASSERT_TRUE(back) << path << ": " << back.error().message();
    EXPECT_EQ(*back, report) << path;
  }
}

}  // namespace
}  // namespace hsns::proto
