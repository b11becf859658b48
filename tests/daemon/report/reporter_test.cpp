// The report uploader (daemon/report/reporter_component.h) against the real hsns-aggregator binary over
// loopback: batches arrive and acknowledged records leave the spool; with the aggregator down the spool
// grows and everything is delivered exactly once when it is back (counted in the aggregator's SQLite
// file); a token bound to another host is refused and nothing is dropped; a batch the aggregator calls bad
// is dropped and counted without holding up the rest; a record changed on disk is cut short while it is
// sent (the aggregator stores nothing of it), dropped and counted. Also the payloads (the streamed flow
// report equals the wire contract's encoding byte for byte) and the shared spool's seq-in-payload rule
// under two writers.
#include <gtest/gtest.h>
#include <prometheus/registry.h>
#include <prometheus/text_serializer.h>
#include <sqlite3.h>

#include <chrono>
#include <fstream>
#include <thread>

#include "agent_client.h"
#include "hsns/proto/codec.h"
#include "inventory.h"
#include "report_encoding.h"
#include "reporter_component.h"
#include "shared_spool.h"
#include "support/aggregator_process.h"
#include "support/metrics.h"
#include "support/report_sample.h"
#include "support/temp_dir.h"

namespace {

using namespace std::chrono_literals;
using hsns::daemon::AgentClient;
using hsns::daemon::DaemonConfig;
using hsns::daemon::report::ReporterComponent;
using hsns::daemon::report::ReportSources;
using hsns::daemon::report::SharedSpool;
using hsns::daemon::report::SpoolKind;
using hsns::testing::AggregatorProcess;
using hsns::testing::TempDir;

// SELECT COUNT(*) ... on the aggregator's database (read-only; the aggregator may be running, WAL mode).
std::int64_t count_rows(const std::filesystem::path& db, const std::string& sql) {
  sqlite3* h = nullptr;
  EXPECT_EQ(sqlite3_open_v2(db.c_str(), &h, SQLITE_OPEN_READONLY, nullptr), SQLITE_OK);
  sqlite3_busy_timeout(h, 5000);
  sqlite3_stmt* st = nullptr;
  std::int64_t n = -1;
  if (sqlite3_prepare_v2(h, sql.c_str(), -1, &st, nullptr) == SQLITE_OK && sqlite3_step(st) == SQLITE_ROW)
    n = sqlite3_column_int64(st, 0);
  else
    ADD_FAILURE() << sql << ": " << sqlite3_errmsg(h);
  sqlite3_finalize(st);
  sqlite3_close(h);
  return n;
}

std::string exposition(prometheus::Registry& registry) {
  return prometheus::TextSerializer().Serialize(registry.Collect());
}

double metric(prometheus::Registry& registry, const std::string& selector) {
  return hsns::testing::metric_value(exposition(registry), selector).value_or(-1);
}

template <typename Pred>
bool eventually(Pred pred, std::chrono::milliseconds limit = 20s) {
  const auto until = std::chrono::steady_clock::now() + limit;
  while (std::chrono::steady_clock::now() < until) {
    if (pred()) return true;
    std::this_thread::sleep_for(20ms);
  }
  return pred();
}

// A host with its spool, its configuration and sources whose ports change at every report (so every
// report_now() spools one report).
struct Host {
  Host(const TempDir& work, const std::string& name, const std::string& url, const std::string& token)
      : host(name) {
    const auto token_file = work.path() / (name + ".token");
    std::ofstream(token_file) << token << "\n";
    config.host = name;
    config.aggregator_url = url;
    config.token_file = token_file.string();
    config.request_timeout = 15000ms;  // a 5,000-flow part takes seconds to store under the sanitizers
    config.backoff_initial = 20ms;
    config.backoff_max = 200ms;
    config.state_dir = (work.path() / (name + "-state")).string();
    config.report.enabled = true;
    config.report.interval = 1h;  // reports come from report_now() only
    config.report.max_bytes = 8ULL << 20;
    config.report.upload_bytes = 64 << 10;
    spool = std::make_shared<SharedSpool>(hsns::daemon::report::spool_options(config));
  }

  ReportSources sources() {
    ReportSources s;
    s.ports = [this] {
      hsns::proto::PortOperState p;
      p.name = "ens1f0np0";
      p.oper_state = "up";
      p.speed_mbps = static_cast<std::uint32_t>(1000 * ++reports);
      return std::vector{p};
    };
    return s;
  }

  void register_with(const std::string& url) {
    DaemonConfig c = config;
    c.aggregator_url = url;
    std::ofstream(c.token_file + ".reg") << hsns::testing::kAgentToken << "\n";
    c.token_file += ".reg";
    auto client = AgentClient::make(c, host);
    ASSERT_TRUE(client) << client.error();
    const hsns::daemon::Inventory inv;
    auto r = (*client)->register_host(hsns::daemon::registration_body(inv));
    ASSERT_TRUE(r) << hsns::daemon::describe(r.error());
  }

  std::uint64_t waiting() const { return spool->stats() ? spool->stats()->records : 999; }

  std::string host;
  DaemonConfig config;
  std::shared_ptr<SharedSpool> spool;
  int reports = 0;
};

std::string batches_of(const std::string& host) {
  return "SELECT COUNT(*) FROM telemetry_batches WHERE host = '" + host + "'";
}

TEST(Reporter, BatchesArriveAndAcknowledgedRecordsLeaveTheSpool) {
  TempDir work;
  AggregatorProcess aggregator(work.path());
  aggregator.start();
  Host h(work, "node-a", aggregator.url(), hsns::testing::kAgentToken);
  h.register_with(aggregator.url());
  prometheus::Registry registry;
  ReporterComponent reporter(h.config, h.host, h.spool, h.sources(), registry);
  ASSERT_TRUE(reporter.start());
  for (int i = 0; i < 3; ++i) ASSERT_TRUE(reporter.report_now());
  ASSERT_TRUE(eventually([&] { return h.waiting() == 0; })) << aggregator.log();
  EXPECT_EQ(count_rows(aggregator.database(), batches_of("node-a")), 3);
  EXPECT_EQ(count_rows(aggregator.database(), "SELECT COUNT(*) FROM telemetry_ports WHERE speed_mbps = 3000"),
            1);
  // The seqs the aggregator stored are the spool's.
  EXPECT_EQ(count_rows(aggregator.database(), "SELECT SUM(seq) FROM telemetry_batches WHERE host = 'node-a'"),
            1 + 2 + 3);
  EXPECT_TRUE(eventually([&] { return metric(registry, "hsns_report_batches_sent_total") == 3; }));
  EXPECT_GT(metric(registry, "hsns_report_last_success_timestamp_seconds"), 1.7e9);
  EXPECT_EQ(metric(registry, "hsns_report_upload_duration_seconds_count"), 3);
  reporter.tick(std::chrono::steady_clock::now());
  EXPECT_EQ(metric(registry, "hsns_report_spool_records"), 0);
  // A report with no section due is not written: nothing changed.
  ReportSources none;
  ReporterComponent idle(h.config, h.host,
                         std::make_shared<SharedSpool>(hsns::daemon::report::spool_options([&] {
                           auto c = h.config;
                           c.report.spool_dir = (work.path() / "idle").string();
                           return c;
                         }())),
                         none, registry);
  EXPECT_FALSE(idle.report_now());
  reporter.stop();
}

TEST(Reporter, AggregatorDownTheSpoolGrowsThenEverythingIsDeliveredOnce) {
  TempDir work;
  AggregatorProcess aggregator(work.path());
  aggregator.start();
  const int port = aggregator.port();
  Host h(work, "node-b", aggregator.url(), hsns::testing::kAgentToken);
  h.register_with(aggregator.url());
  prometheus::Registry registry;
  ReporterComponent reporter(h.config, h.host, h.spool, h.sources(), registry);
  ASSERT_TRUE(reporter.start());
  ASSERT_TRUE(reporter.report_now());
  ASSERT_TRUE(eventually([&] { return h.waiting() == 0; })) << aggregator.log();

  aggregator.kill9();
  for (int i = 0; i < 6; ++i) ASSERT_TRUE(reporter.report_now());
  ASSERT_TRUE(eventually(
      [&] { return metric(registry, "hsns_report_send_failures_total{reason=\"transport\"}") >= 2; }));
  EXPECT_EQ(h.waiting(), 6u) << "nothing leaves the spool while the aggregator is away";
  reporter.tick(std::chrono::steady_clock::now());
  EXPECT_EQ(metric(registry, "hsns_report_spool_records"), 6);
  EXPECT_GT(metric(registry, "hsns_report_spool_bytes"), 0);

  aggregator.set_listen("127.0.0.1", port);
  aggregator.start();
  reporter.trigger();
  ASSERT_TRUE(eventually([&] { return h.waiting() == 0; })) << aggregator.log();
  EXPECT_EQ(count_rows(aggregator.database(), batches_of("node-b")), 7) << "each batch stored once";
  EXPECT_EQ(count_rows(aggregator.database(),
                       "SELECT COUNT(DISTINCT seq) FROM telemetry_batches WHERE host = 'node-b'"),
            7);
  // The counter follows the acknowledgement in the spool.
  EXPECT_TRUE(eventually([&] { return metric(registry, "hsns_report_batches_sent_total") == 7; }));
  reporter.stop();
}

TEST(Reporter, AnotherHostsTokenIsRefusedAndNothingIsDropped) {
  TempDir work;
  AggregatorProcess aggregator(work.path());
  aggregator.start();
  // node-c reports with the token bound to node-1.
  Host h(work, "node-c", aggregator.url(), hsns::testing::kBoundAgentToken);
  h.register_with(aggregator.url());
  prometheus::Registry registry;
  ReporterComponent reporter(h.config, h.host, h.spool, h.sources(), registry);
  ASSERT_TRUE(reporter.start());
  ASSERT_TRUE(reporter.report_now());
  ASSERT_TRUE(reporter.report_now());
  ASSERT_TRUE(eventually(
      [&] { return metric(registry, "hsns_report_send_failures_total{reason=\"unauthorized\"}") >= 1; }));
  EXPECT_EQ(h.waiting(), 2u);
  EXPECT_EQ(count_rows(aggregator.database(), batches_of("node-c")), 0);
  EXPECT_EQ(metric(registry, "hsns_report_batches_rejected_total"), 0);
  reporter.stop();
  // The records are still there for the next start.
  EXPECT_EQ(h.waiting(), 2u);
}

TEST(Reporter, ABatchTheAggregatorCallsBadIsDroppedAndCountedAndTheRestGoesOn) {
  TempDir work;
  AggregatorProcess aggregator(work.path());
  aggregator.start();
  Host h(work, "node-d", aggregator.url(), hsns::testing::kAgentToken);
  h.register_with(aggregator.url());
  ASSERT_TRUE(h.spool->open());
  // Not a report: the aggregator answers 400.
  ASSERT_TRUE(h.spool->append(SpoolKind::telemetry_report, 0,
                              [](std::uint64_t) { return std::string("\xa1\x61x\x01"); }));
  prometheus::Registry registry;
  ReporterComponent reporter(h.config, h.host, h.spool, h.sources(), registry);
  ASSERT_TRUE(reporter.start());
  ASSERT_TRUE(reporter.report_now());
  ASSERT_TRUE(eventually([&] { return h.waiting() == 0; })) << aggregator.log();
  EXPECT_TRUE(eventually([&] { return metric(registry, "hsns_report_batches_rejected_total") == 1; }));
  EXPECT_EQ(metric(registry, "hsns_report_send_failures_total{reason=\"rejected\"}"), 1);
  EXPECT_EQ(count_rows(aggregator.database(), "SELECT seq FROM telemetry_batches WHERE host = 'node-d'"), 2);
  reporter.stop();
}

TEST(Reporter, AFlowBatchSplitIntoPartsIsStreamedFromItsSegmentAndARecordChangedOnDiskIsDropped) {
  TempDir work;
  AggregatorProcess aggregator(work.path());
  aggregator.start();
  Host h(work, "node-e", aggregator.url(), hsns::testing::kAgentToken);
  h.register_with(aggregator.url());
  ASSERT_TRUE(h.spool->open());
  // One harvest of 15,000 flows as a group of three reports of 5,000 (each about 0.4 MB, far over the
  // upload's 64 KiB budget and over the HTTP client's 64 KiB piece), encoded straight into the spool.
  std::vector<hsns::daemon::report::FlowReportEncoder> parts;
  for (std::size_t p = 0; p < 3; ++p)
    parts.emplace_back(1'764'640'000'000, 11, 5000, [p](std::size_t i, hsns::daemon::report::FlowRow& r) {
      r = hsns::daemon::report::flow_row_of(hsns::testing::sample_report_flow(11, p * 5000 + i));
    });
  hsns::daemon::report::SpoolParts group;
  group.count = parts.size();
  group.size = [&](std::uint64_t seq, std::size_t p) { return parts[p].size(seq); };
  group.write = [&](std::uint64_t seq, std::size_t p, hsns::daemon::report::SpoolSink& sink) {
    return parts[p].write(seq, [&](std::string_view b) { return sink.write(b); });
  };
  ASSERT_TRUE(h.spool->append_parts(SpoolKind::flow_batch, 11, group));
  // A fourth record whose bytes change on disk after the spool took it: it fails its checksum. It spans
  // several of the HTTP client's pieces and the change is in its last one, so the pieces before it are
  // sent before the checksum can tell: the request must be cut short, and nothing of it stored.
  std::size_t changed_size = 0;
  ASSERT_TRUE(h.spool->append(SpoolKind::flow_batch, 12, [&changed_size](std::uint64_t seq) {
    auto payload =
        hsns::daemon::report::encode_flow_report(seq, 1'764'640'000'000, 12, 3000, [](std::size_t i) {
          return hsns::daemon::report::flow_row_of(hsns::testing::sample_report_flow(12, i));
        });
    changed_size = payload.size();
    return payload;
  }));
  ASSERT_GT(changed_size, 3U * 64 * 1024) << "several of the HTTP client's 64 KiB pieces";
  std::filesystem::path newest;
  for (const auto& e : std::filesystem::directory_iterator(h.spool->dir()))
    if (e.path().filename().string().rfind("flow-", 0) == 0 && (newest.empty() || e.path() > newest))
      newest = e.path();
  {
    std::fstream f(newest, std::ios::in | std::ios::out | std::ios::binary);
    f.seekp(-3, std::ios::end);
    f.put('\x7f');
  }
  prometheus::Registry registry;
  ReporterComponent reporter(h.config, h.host, h.spool, h.sources(), registry);
  ASSERT_TRUE(reporter.start());
  ASSERT_TRUE(reporter.report_now());
  ASSERT_TRUE(eventually([&] { return h.waiting() == 0; }, 90s)) << aggregator.log();
  EXPECT_EQ(count_rows(aggregator.database(), batches_of("node-e")), 4) << "three parts and the report";
  EXPECT_EQ(count_rows(aggregator.database(),
                       "SELECT COUNT(*) FROM telemetry_flows f JOIN telemetry_batches b ON f.batch_id = b.id "
                       "WHERE b.host = 'node-e'"),
            15000);
  EXPECT_EQ(count_rows(aggregator.database(),
                       "SELECT COUNT(*) FROM telemetry_flow_batches fb JOIN telemetry_batches b ON "
                       "fb.batch_id = b.id WHERE b.host = 'node-e' AND fb.epoch = 11"),
            3);
  EXPECT_EQ(count_rows(aggregator.database(),
                       "SELECT COUNT(*) FROM telemetry_flow_batches fb JOIN telemetry_batches b ON "
                       "fb.batch_id = b.id WHERE b.host = 'node-e' AND fb.epoch = 12"),
            0)
      << "the changed record is never sent";
  EXPECT_EQ(
      count_rows(aggregator.database(),
                 "SELECT SUM(f.packets) FROM telemetry_flows f JOIN telemetry_batches b ON f.batch_id = "
                 "b.id WHERE b.host = 'node-e'"),
      15000 * 1000 + 15000 * 14999 / 2);
  EXPECT_TRUE(eventually([&] { return metric(registry, "hsns_report_batches_corrupt_total") == 1; }));
  EXPECT_EQ(metric(registry, "hsns_report_batches_sent_total"), 4);
  EXPECT_EQ(metric(registry, "hsns_report_send_failures_total{reason=\"transport\"}"), 0)
      << "the cut-short request is a corrupt record, not a failed upload to retry";
  reporter.stop();
}

// The flow report in the rows form decodes to the contract's records (without host, with the batch's
// epoch), and is well under half the size of the same report with a document per record.
TEST(ReportEncoding, TheStreamedFlowReportDecodesToTheContractsRecordsInLessThanHalfTheBytes) {
  hsns::proto::Report r;
  r.seq = 77;
  r.ts_ms = 1'764'640'000'123;
  hsns::proto::ReportFlowBatch b;
  b.epoch = 9;
  for (std::size_t i = 0; i < 300; ++i) {
    b.records.push_back(hsns::testing::sample_report_flow(9, i));
    b.records.back().host.clear();
  }
  r.flows.push_back(b);
  const std::string streamed = hsns::daemon::report::encode_flow_report(
      r.seq, r.ts_ms, b.epoch, b.records.size(),
      [&](std::size_t i) { return hsns::daemon::report::flow_row_of(b.records[i]); });
  auto back = hsns::proto::decode<hsns::proto::Report>(streamed, hsns::proto::Encoding::cbor);
  ASSERT_TRUE(back) << back.error().message();
  EXPECT_EQ(*back, r);
  const std::string records_form = hsns::proto::encode<hsns::proto::Report>(r, hsns::proto::Encoding::cbor);
  EXPECT_LT(streamed.size() * 2, records_form.size()) << streamed.size() << " bytes of rows";
}

// The telemetry report's document, checked once and encoded with its spool seq: the contract's encoding.
TEST(ReportEncoding, TheTelemetryDocumentWithItsSeqIsTheContractsEncoding) {
  hsns::proto::Report r;
  r.ts_ms = 1'764'640'000'456;
  r.ports.push_back({"npu0", "up", 400000});
  r.ports.push_back({"npu1", "down", std::nullopt});
  nlohmann::json document = hsns::proto::to_json(r);
  const std::string bytes = hsns::daemon::report::encode_telemetry_report(document, 4242);
  r.seq = 4242;
  EXPECT_EQ(bytes, hsns::proto::encode<hsns::proto::Report>(r, hsns::proto::Encoding::cbor));
  auto back = hsns::proto::decode<hsns::proto::Report>(bytes, hsns::proto::Encoding::cbor);
  ASSERT_TRUE(back) << back.error().message();
  EXPECT_EQ(*back, r);
}

TEST(ReportEncoding, EveryShapeOfValueReadsBackFromItsRow) {
  std::vector<hsns::proto::FlowRecord> shapes;
  auto f = hsns::testing::sample_report_flow(3, 5);
  shapes.push_back(f);
  f.psn.reset();
  f.epoch.reset();
  shapes.push_back(f);
  f.first_ns = -1;
  f.last_ns = -1'000'000'000'000;
  f.host = std::string(300, 'h');  // text heads of 1 and 2 length bytes
  f.ifname = "x";
  f.family = 6;
  f.src = "2001:db8::1";
  f.dst = "fe80::ffff:ffff:ffff:ffff";
  for (auto& v : f.op) v = UINT64_MAX;
  for (std::size_t i = 0; i < f.nak.size(); ++i) f.nak[i] = std::uint64_t{1} << (8 * i);
  f.packets = 23;
  f.bytes = 24;
  f.ect = 255;
  f.ce = 256;
  f.cnp = 65536;
  f.psn_regressions = 0xffffffffULL + 1;
  f.dest_qp = 0xffffff;
  f.sport = 65535;
  f.ifindex = 0;
  f.direction = hsns::proto::FlowDirection::xdp;
  f.epoch = UINT64_MAX;
  f.psn = hsns::proto::FlowPsn{0, 0xffffff, 24};
  shapes.push_back(f);
  for (auto shape : shapes) {
    const std::uint64_t epoch = shape.epoch.value_or(4);
    const auto row = hsns::daemon::report::flow_row_of(shape);
    EXPECT_EQ(hsns::daemon::report::flow_record_of(row, epoch).ifname, shape.ifname);
    const std::string bytes = hsns::daemon::report::encode_flow_report(1, 1'764'640'000'123, epoch, 1,
                                                                       [&](std::size_t) { return row; });
    auto back = hsns::proto::decode<hsns::proto::Report>(bytes, hsns::proto::Encoding::cbor);
    ASSERT_TRUE(back) << back.error().message();
    ASSERT_EQ(back->flows.size(), 1U);
    ASSERT_EQ(back->flows[0].records.size(), 1U);
    shape.host.clear();  // a row has none: the report's host is the URL's
    shape.epoch = epoch;
    EXPECT_EQ(back->flows[0].records[0], shape);
  }
  // The streamed encoder: its size is exact and its pieces make the whole report.
  hsns::daemon::report::FlowReportEncoder encoder(
      1'764'640'000'123, 9, 10000, [](std::size_t i, hsns::daemon::report::FlowRow& r) {
        r = hsns::daemon::report::flow_row_of(hsns::testing::sample_report_flow(9, i));
      });
  std::string pieces;
  std::size_t count = 0;
  ASSERT_TRUE(encoder.write(70000, [&](std::string_view b) -> hsns::Result<void> {
    pieces.append(b);
    ++count;
    return {};
  }));
  EXPECT_EQ(pieces.size(), encoder.size(70000));
  EXPECT_GT(count, 1U) << "written in pieces";
  auto back = hsns::proto::decode<hsns::proto::Report>(pieces, hsns::proto::Encoding::cbor);
  ASSERT_TRUE(back) << back.error().message();
  EXPECT_EQ(back->seq, 70000U);
  ASSERT_EQ(back->flows.size(), 1U);
  EXPECT_EQ(back->flows[0].records.size(), 10000U);
  auto last = hsns::testing::sample_report_flow(9, 9999);
  last.host.clear();
  EXPECT_EQ(back->flows[0].records[9999], last);
}

// A one-report harvest is encoded once: size() encodes the records into the kept bytes and write() sends
// them (each record filled once), byte-identical to the two-pass encoder; kept bytes shared by several
// encoders hold the last one sized, and an encoder whose bytes were taken encodes again.
TEST(ReportEncoding, KeptBytesAreEncodedOnceAndMatchTheTwoPassEncoder) {
  const auto fill = [](std::size_t i, hsns::daemon::report::FlowRow& r) {
    r = hsns::daemon::report::flow_row_of(hsns::testing::sample_report_flow(9, i));
  };
  const auto collect = [](hsns::daemon::report::FlowReportEncoder& e, std::uint64_t seq, std::string& into,
                          std::size_t& pieces) {
    return e.write(seq, [&](std::string_view b) -> hsns::Result<void> {
      into.append(b);
      ++pieces;
      return {};
    });
  };
  hsns::daemon::report::FlowReportEncoder two_pass(1'764'640'000'123, 9, 10000, fill);
  std::string want;
  std::size_t pieces = 0;
  ASSERT_TRUE(collect(two_pass, 70000, want, pieces));
  ASSERT_EQ(want.size(), two_pass.size(70000));

  hsns::daemon::report::FlowReportBytes kept;
  std::size_t fills = 0;
  hsns::daemon::report::FlowReportEncoder once(
      1'764'640'000'123, 9, 10000,
      [&](std::size_t i, hsns::daemon::report::FlowRow& r) {
        ++fills;
        fill(i, r);
      },
      &kept);
  EXPECT_EQ(once.size(70000), want.size());
  EXPECT_EQ(once.size(70000), want.size()) << "sized again: not encoded again";
  std::string got;
  pieces = 0;
  ASSERT_TRUE(collect(once, 70000, got, pieces));
  EXPECT_EQ(got, want);
  EXPECT_EQ(fills, 10000U) << "every record filled and encoded once";
  EXPECT_GT(pieces, 3U) << "the records go out in pieces of at most kFlowReportChunk";

  // The same kept bytes for the next harvest (fewer records: the buffer is reused, not reallocated), and two
  // encoders sharing them: the first's bytes are taken by the second's size(), so it encodes again.
  const std::size_t capacity = kept.capacity();
  hsns::daemon::report::FlowReportEncoder a(1'764'640'000'200, 9, 100, fill, &kept);
  hsns::daemon::report::FlowReportEncoder b(1'764'640'000'200, 9, 50, fill, &kept);
  hsns::daemon::report::FlowReportEncoder a_ref(1'764'640'000'200, 9, 100, fill);
  hsns::daemon::report::FlowReportEncoder b_ref(1'764'640'000'200, 9, 50, fill);
  const auto a_size = a.size(5);
  const auto b_size = b.size(6);
  EXPECT_EQ(kept.capacity(), capacity);
  std::string a_bytes, b_bytes, a_want, b_want;
  ASSERT_TRUE(collect(a, 5, a_bytes, pieces));
  ASSERT_TRUE(collect(b, 6, b_bytes, pieces));
  ASSERT_TRUE(collect(a_ref, 5, a_want, pieces));
  ASSERT_TRUE(collect(b_ref, 6, b_want, pieces));
  EXPECT_EQ(a_bytes, a_want);
  EXPECT_EQ(b_bytes, b_want);
  EXPECT_EQ(a_bytes.size(), a_size);
  EXPECT_EQ(b_bytes.size(), b_size);
  auto back = hsns::proto::decode<hsns::proto::Report>(b_bytes, hsns::proto::Encoding::cbor);
  ASSERT_TRUE(back) << back.error().message();  // the records' epoch is the batch's (9)
  EXPECT_EQ(back->seq, 6U);
  ASSERT_EQ(back->flows.size(), 1U);
  EXPECT_EQ(back->flows[0].records.size(), 50U);
}

TEST(SharedSpool, TwoWritersEachPayloadCarriesItsOwnSeq) {
  TempDir work;
  hsns::daemon::report::SpoolOptions o;
  o.dir = (work.path() / "spool").string();
  SharedSpool spool(o);
  EXPECT_FALSE(spool.append(SpoolKind::telemetry_report, 0, [](std::uint64_t) { return std::string("x"); }))
      << "not open yet";
  ASSERT_TRUE(spool.open());
  int woken = 0;
  spool.on_append([&] { ++woken; });
  const auto writer = [&](SpoolKind kind) {
    for (int i = 0; i < 200; ++i) {
      auto seq = spool.append(kind, kind == SpoolKind::flow_batch ? static_cast<std::uint64_t>(i + 1) : 0,
                              [](std::uint64_t s) { return std::to_string(s); });
      ASSERT_TRUE(seq) << seq.error().message();
    }
  };
  std::thread a(writer, SpoolKind::telemetry_report);
  std::thread b(writer, SpoolKind::flow_batch);
  a.join();
  b.join();
  spool.on_append({});
  auto records = spool.peek(1ULL << 30);
  ASSERT_TRUE(records);
  ASSERT_EQ(records->size(), 400u);
  for (const auto& r : *records) EXPECT_EQ(r.payload, std::to_string(r.seq));
  EXPECT_EQ(spool.last_flow_epoch(), 200u);
  EXPECT_EQ(woken, 400);
}

}  // namespace

namespace {

TEST(ReportConfig, TheSectionTurnsReportingOnWithDefaultsAndErrorsNameTheKey) {
  using hsns::daemon::parse_config_text;
  auto off = parse_config_text("host: h\n", "t");
  ASSERT_TRUE(off) << off.error();
  EXPECT_FALSE(off->report.enabled);
  auto on = parse_config_text("state_dir: /var/lib/x\nreport: {}\n", "t");
  ASSERT_TRUE(on) << on.error();
  EXPECT_TRUE(on->report.enabled);
  EXPECT_EQ(hsns::daemon::report_spool_dir(*on), "/var/lib/x/report-spool");
  EXPECT_EQ(on->report.interval, 10000ms);
  auto set = parse_config_text(
      "report: {spool_dir: /s, max_bytes: 2097152, interval_ms: 1000, upload_bytes: 4096, enabled: false}\n",
      "t");
  ASSERT_TRUE(set) << set.error();
  EXPECT_FALSE(set->report.enabled);
  EXPECT_EQ(hsns::daemon::report_spool_dir(*set), "/s");
  EXPECT_EQ(set->report.max_bytes, 2097152u);
  EXPECT_EQ(set->report.upload_bytes, 4096u);
  const std::pair<const char*, const char*> bad[] = {
      {"report: {spool: /x}\n", "report: unknown key 'spool'"},
      {"report: {interval_ms: 10}\n", "report.interval_ms must be between 100 and 3600000"},
      {"report: {max_bytes: 1000}\n", "report.max_bytes must be between"},
      {"report: {upload_bytes: 10}\n", "report.upload_bytes must be between 1024 and report.max_bytes"},
      {"report: {interval_ms: soon}\n", "report.interval_ms: wrong type"},
      {"report: {}\nflow_probe: {table_size: 200000, interfaces: [{name: eth0}]}\n",
       "flow_probe.table_size must be at most 174762 while reporting is on"},
  };
  for (const auto& [yaml, message] : bad) {
    auto r = parse_config_text(yaml, "t");
    ASSERT_FALSE(r) << yaml;
    EXPECT_NE(r.error().find(message), std::string::npos) << r.error();
  }
  // Without reporting, the large table stays allowed.
  EXPECT_TRUE(parse_config_text("flow_probe: {table_size: 200000, interfaces: [{name: eth0}]}\n", "t"));
}

TEST(ReportUploader, FailuresAreClassifiedByTheAggregatorsAnswer) {
  using hsns::daemon::AgentError;
  using hsns::daemon::report::classify;
  using hsns::daemon::report::failure_reason;
  using hsns::daemon::report::SendVerdict;
  const auto status = [](int s) { return AgentError{AgentError::Kind::http_status, s, "x"}; };
  for (int s : {400, 413, 415, 422}) EXPECT_EQ(classify(status(s)), SendVerdict::drop) << s;
  for (int s : {401, 403}) EXPECT_EQ(classify(status(s)), SendVerdict::unauthorized) << s;
  for (int s : {404, 408, 429, 500, 503}) EXPECT_EQ(classify(status(s)), SendVerdict::retry) << s;
  EXPECT_EQ(classify(AgentError{AgentError::Kind::timeout, 0, "t"}), SendVerdict::retry);
  EXPECT_STREQ(failure_reason(status(404)), "unregistered");
  EXPECT_STREQ(failure_reason(status(429)), "throttled");
  EXPECT_STREQ(failure_reason(status(502)), "server");
  EXPECT_STREQ(failure_reason(AgentError{AgentError::Kind::transport, 0, "t"}), "transport");
}

TEST(ReportUploader, PortStatesComeFromSysfs) {
  TempDir root;
  const auto dev = root.path() / "class/net/eth9";
  std::filesystem::create_directories(dev);
  std::ofstream(dev / "operstate") << "up\n";
  std::ofstream(dev / "speed") << "100000\n";
  const auto down = root.path() / "class/net/eth8";
  std::filesystem::create_directories(down);
  std::ofstream(down / "operstate") << "down\n";
  std::ofstream(down / "speed") << "-1\n";
  const auto ports = hsns::daemon::report::read_port_states(root.path().string(), {"eth9", "eth8", "gone0"});
  ASSERT_EQ(ports.size(), 3u);
  EXPECT_EQ(ports[0].oper_state, "up");
  EXPECT_EQ(ports[0].speed_mbps, 100000u);
  EXPECT_EQ(ports[1].oper_state, "down");
  EXPECT_FALSE(ports[1].speed_mbps);
  EXPECT_EQ(ports[2].oper_state, "notpresent");
}

}  // namespace
