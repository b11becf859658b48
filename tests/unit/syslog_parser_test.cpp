// The syslog parser and the RFC 6587 stream framing (aggregator/ingest/syslog_parser.h, syslog_framing.h) on
// lines written the way Cisco, Arista, SONiC and Huawei switches send them, and on every malformed case.
#include "ingest/syslog_parser.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "ingest/log_buffer.h"
#include "ingest/syslog_framing.h"

namespace hsns::ingest {
namespace {

// 2026-12-02T05:07:56.000Z: the receive time of every test line.
const std::int64_t kReceived = utc_civil_to_ms(2026, 12, 2, 5, 7, 56);

SyslogMessage parse_ok(std::string_view line) {
  const auto r = parse_syslog(line, SyslogContext{kReceived, "192.0.2.7", {}});
  EXPECT_TRUE(r.has_value()) << line << ": " << (r ? "" : r.error().detail);
  return r ? *r : SyslogMessage{};
}

SyslogFault parse_fault(std::string_view line, SyslogLimits limits = {}) {
  const auto r = parse_syslog(line, SyslogContext{kReceived, "192.0.2.7", limits});
  EXPECT_FALSE(r.has_value()) << line;
  if (r) return SyslogFault::empty;
  EXPECT_NE(r.error().detail.find(std::string(fault_name(r.error().fault))), std::string::npos);
  return r.error().fault;
}

TEST(Rfc5424, FullLineWithFractionOffsetStructuredDataAndBom) {
  const auto m = parse_ok(
      "<165>1 2026-12-02T07:07:56.123456+02:00 sonic-leaf01.dc1 bgpd 2042 BGP_NBR "
      "[origin ip=\"10.0.0.1\" software=\"SONiC\"][exampleSDID@32473 iut=\"3\" note=\"a \\\"q\\\" \\] \\\\ "
      "\\x\"] "
      "\xEF\xBB\xBF"
      "neighbor 10.0.0.2 Down\n");
  EXPECT_EQ(m.format, SyslogFormat::rfc5424);
  EXPECT_EQ(m.facility, 20);
  EXPECT_EQ(m.severity, 5);
  EXPECT_EQ(m.timestamp_ms, utc_civil_to_ms(2026, 12, 2, 5, 7, 56) + 123);
  EXPECT_FALSE(m.timestamp_from_receipt);
  EXPECT_EQ(m.hostname, "sonic-leaf01.dc1");
  EXPECT_EQ(m.app, "bgpd");
  EXPECT_EQ(m.procid, "2042");
  EXPECT_EQ(m.msgid, "BGP_NBR");
  ASSERT_EQ(m.structured_data.size(), 2U);
  EXPECT_EQ(m.structured_data[0].id, "origin");
  ASSERT_EQ(m.structured_data[0].params.size(), 2U);
  EXPECT_EQ(m.structured_data[0].params[1].name, "software");
  EXPECT_EQ(m.structured_data[0].params[1].value, "SONiC");
  EXPECT_EQ(m.structured_data[1].id, "exampleSDID@32473");
  EXPECT_EQ(m.structured_data[1].params[1].value, "a \"q\" ] \\ \\x");
  EXPECT_EQ(m.message, "neighbor 10.0.0.2 Down");
  EXPECT_EQ(m.source, "192.0.2.7");
}

TEST(Rfc5424, NilValuesAndNoMessage) {
  const auto m = parse_ok("<0>1 - - - - - -");
  EXPECT_EQ(m.facility, 0);
  EXPECT_EQ(m.severity, 0);
  EXPECT_TRUE(m.timestamp_from_receipt);
  EXPECT_EQ(m.timestamp_ms, kReceived);
  EXPECT_EQ(m.hostname, "");
  EXPECT_EQ(m.app, "");
  EXPECT_TRUE(m.structured_data.empty());
  EXPECT_EQ(m.message, "");
}

TEST(Rfc5424, ZuluTimeAndNegativeOffsetAndIllFormedUtf8WithoutBom) {
  EXPECT_EQ(parse_ok("<14>1 2026-12-02T05:07:56Z h a p m - x").timestamp_ms, kReceived);
  EXPECT_EQ(parse_ok("<14>1 2026-12-02T00:07:56.5-05:00 h a p m - x").timestamp_ms, kReceived + 500);
  EXPECT_EQ(parse_ok("<14>1 - h a p m - bad \xFF byte").message, "bad \xEF\xBF\xBD byte");
}

TEST(Rfc5424, MalformedLines) {
  EXPECT_EQ(parse_fault(""), SyslogFault::empty);
  EXPECT_EQ(parse_fault("\r\n"), SyslogFault::empty);
  EXPECT_EQ(parse_fault("14>1 - - - - - -"), SyslogFault::bad_pri);
  EXPECT_EQ(parse_fault("<>1 - - - - - -"), SyslogFault::bad_pri);
  EXPECT_EQ(parse_fault("<192>1 - - - - - -"), SyslogFault::bad_pri);
  EXPECT_EQ(parse_fault("<014>1 - - - - - -"), SyslogFault::bad_pri);
  EXPECT_EQ(parse_fault("<1234>1 - - - - - -"), SyslogFault::bad_pri);
  EXPECT_EQ(parse_fault("<14"), SyslogFault::bad_pri);
  EXPECT_EQ(parse_fault("<14>2 - - - - - -"), SyslogFault::unsupported_version);
  EXPECT_EQ(parse_fault("<14>1 2026-13-02T05:07:56Z h a p m -"), SyslogFault::bad_timestamp);
  EXPECT_EQ(parse_fault("<14>1 2026-02-30T05:07:56Z h a p m -"), SyslogFault::bad_timestamp);
  EXPECT_EQ(parse_fault("<14>1 2026-12-02T05:07:60Z h a p m -"), SyslogFault::bad_timestamp);
  EXPECT_EQ(parse_fault("<14>1 2026-12-02T05:07:56 h a p m -"), SyslogFault::bad_timestamp);  // no offset
  EXPECT_EQ(parse_fault("<14>1 2026-12-02T05:07:56.1234567Z h a p m -"), SyslogFault::bad_timestamp);
  EXPECT_EQ(parse_fault("<14>1 -"), SyslogFault::bad_timestamp);
  EXPECT_EQ(parse_fault("<14>1 - "), SyslogFault::bad_hostname);
  EXPECT_EQ(parse_fault("<14>1 - " + std::string(256, 'h') + " a p m -"), SyslogFault::bad_hostname);
  EXPECT_EQ(parse_fault("<14>1 - h\x01x a p m -"), SyslogFault::bad_hostname);
  EXPECT_EQ(parse_fault("<14>1 - h " + std::string(49, 'a') + " p m -"), SyslogFault::bad_app_name);
  EXPECT_EQ(parse_fault("<14>1 - h a " + std::string(129, 'p') + " m -"), SyslogFault::bad_procid);
  EXPECT_EQ(parse_fault("<14>1 - h a p " + std::string(33, 'm') + " -"), SyslogFault::bad_msgid);
  EXPECT_EQ(parse_fault("<14>1 - h a p m"), SyslogFault::bad_header);
  EXPECT_EQ(parse_fault("<14>1 - h a p m x"), SyslogFault::bad_structured_data);
  EXPECT_EQ(parse_fault("<14>1 - h a p m [id"), SyslogFault::bad_structured_data);
  EXPECT_EQ(parse_fault("<14>1 - h a p m [id a=\"b]"), SyslogFault::bad_structured_data);
  EXPECT_EQ(parse_fault("<14>1 - h a p m [id a=b]"), SyslogFault::bad_structured_data);
  EXPECT_EQ(parse_fault("<14>1 - h a p m []"), SyslogFault::bad_structured_data);
  EXPECT_EQ(parse_fault("<14>1 - h a p m [" + std::string(33, 'i') + "]"), SyslogFault::bad_structured_data);
  EXPECT_EQ(parse_fault("<14>1 - h a p m [id]x"), SyslogFault::bad_structured_data);
  std::string many;
  for (int i = 0; i < 33; ++i) many += "[e]";
  EXPECT_EQ(parse_fault("<14>1 - h a p m " + many), SyslogFault::bad_structured_data);
  EXPECT_EQ(parse_fault("<14>1 - h a p m - \xEF\xBB\xBF"
                        "bad \xC0\xAF"),
            SyslogFault::bad_utf8);
  EXPECT_EQ(parse_fault("<14>1 - h a p m - " + std::string(100, 'x'), SyslogLimits{.max_line = 100}),
            SyslogFault::too_long);
}

TEST(Rfc3164, AristaLineResolvesTheYearAgainstTheReceiveTime) {
  const auto m = parse_ok(
      "<189>Dec  2 05:07:50 leaf01 Ebra: %LINEPROTO-5-UPDOWN: Line protocol on Interface Ethernet1, changed "
      "state "
      "to down");
  EXPECT_EQ(m.format, SyslogFormat::rfc3164);
  EXPECT_EQ(m.facility, 23);
  EXPECT_EQ(m.severity, 5);
  EXPECT_EQ(m.timestamp_ms, kReceived - 6000);
  EXPECT_EQ(m.hostname, "leaf01");
  EXPECT_EQ(m.app, "Ebra");
  EXPECT_EQ(m.procid, "");
  EXPECT_EQ(m.message, "%LINEPROTO-5-UPDOWN: Line protocol on Interface Ethernet1, changed state to down");
  // Received on 2 December, a 31 December timestamp is last year's; a 1 January one received on 31 December
  // is next year's.
  EXPECT_EQ(parse_ok("<13>Dec 31 23:59:59 h t: x").timestamp_ms, utc_civil_to_ms(2025, 12, 31, 23, 59, 59));
  const auto r = parse_syslog("<13>Jan  1 00:00:01 h t: x",
                              SyslogContext{utc_civil_to_ms(2026, 12, 31, 23, 59, 59), "", {}});
  ASSERT_TRUE(r);
  EXPECT_EQ(r->timestamp_ms, utc_civil_to_ms(2027, 1, 1, 0, 0, 1));
}

TEST(Rfc3164, TagWithPid) {
  const auto m = parse_ok("<30>Oct 12 09:15:02 spine02 lldpd[1234]: LLDP neighbor changed on Ethernet8");
  EXPECT_EQ(m.hostname, "spine02");
  EXPECT_EQ(m.app, "lldpd");
  EXPECT_EQ(m.procid, "1234");
  EXPECT_EQ(m.message, "LLDP neighbor changed on Ethernet8");
}

TEST(Rfc3164, SonicLevelWordFractionAndContainerTag) {
  const auto m = parse_ok(
      "<190>Dec  2 05:07:55.123456 sonic-leaf02 INFO swss#orchagent[88]: :- doPortTask: Port Ethernet0 oper "
      "down");
  EXPECT_EQ(m.timestamp_ms, kReceived - 1000 + 123);
  EXPECT_EQ(m.hostname, "sonic-leaf02");
  EXPECT_EQ(m.app, "swss#orchagent");
  EXPECT_EQ(m.procid, "88");
  EXPECT_EQ(m.message, ":- doPortTask: Port Ethernet0 oper down");
}

TEST(Rfc3164, HuaweiYearAndTagWithoutSpace) {
  const auto m = parse_ok(
      "<187>Oct 12 2023 09:15:02 SW-CORE-01 %%01IFNET/4/LINK_STATE(l)[12]:The line protocol IP on the "
      "interface "
      "10GE1/0/1 has entered the DOWN state.");
  EXPECT_EQ(m.timestamp_ms, utc_civil_to_ms(2023, 10, 12, 9, 15, 2));
  EXPECT_EQ(m.hostname, "SW-CORE-01");
  // The mnemonic stays in the message, as the vendor's catalogue writes it.
  EXPECT_EQ(m.app, "");
  EXPECT_EQ(m.message,
            "%%01IFNET/4/LINK_STATE(l)[12]:The line protocol IP on the interface 10GE1/0/1 has entered the "
            "DOWN state.");
}

TEST(Rfc3164, HuaweiZoneOffsetGivesUtcAndKeepsTheHostname) {
  const auto m = parse_ok(
      "<187>Dec  2 2026 13:07:56+08:00 leaf03 %%01IFNET/2/linkDown_active(l)[4]:The interface status "
      "changes. (ifName=100GE1/0/3, AdminStatus=UP, OperStatus=DOWN, Reason=PHY down)");
  EXPECT_EQ(m.timestamp_ms, kReceived);
  EXPECT_EQ(m.hostname, "leaf03");
  EXPECT_TRUE(m.message.starts_with("%%01IFNET/2/linkDown_active(l)[4]:The interface status changes."));
  const auto dst =
      parse_ok("<187>Dec  2 2026 14:07:56+09:00 DST leaf03 %%01DEVM/1/hwPowerInvalid_active(l)[9]:x");
  EXPECT_EQ(dst.timestamp_ms, kReceived);
  EXPECT_EQ(dst.hostname, "leaf03");
  const auto west = parse_ok("<187>Dec  2 2026 00:07:56-0500 leaf03 %%01IFPDT/4/IF_STATE(l)[1]:y");
  EXPECT_EQ(west.timestamp_ms, kReceived);
  EXPECT_EQ(west.hostname, "leaf03");
}

TEST(Rfc3164, NxosDefaultHeaderHasNoHostname) {
  // NX-OS's default logging format: "<PRI>: YYYY Mmm dd hh:mm:ss ZONE: %FAC-SEV-MNEMONIC: text".
  const auto m = parse_ok(
      "<189>: 2026 Dec  2 05:07:56 UTC: %ETHPORT-5-IF_DOWN_LINK_FAILURE: Interface Ethernet1/5 is "
      "down (Link failure)");
  EXPECT_EQ(m.timestamp_ms, kReceived);
  EXPECT_EQ(m.hostname, "");
  EXPECT_EQ(m.app, "");
  EXPECT_EQ(m.message, "%ETHPORT-5-IF_DOWN_LINK_FAILURE: Interface Ethernet1/5 is down (Link failure)");
  EXPECT_EQ(m.source, "192.0.2.7");
}

TEST(Rfc3164, CiscoSequenceNumberSyncMarkMillisecondsZoneAndNoHostname) {
  const auto m = parse_ok(
      "<187>4711: *Dec  2 05:07:56.250 UTC: %LINK-3-UPDOWN: Interface GigabitEthernet0/1, changed state to "
      "down");
  EXPECT_EQ(m.timestamp_ms, kReceived + 250);
  EXPECT_EQ(m.hostname, "");
  EXPECT_EQ(m.app, "");
  EXPECT_EQ(m.message, "%LINK-3-UPDOWN: Interface GigabitEthernet0/1, changed state to down");
}

TEST(Rfc3164, NxosYearFirstAndIsoTimestamps) {
  const auto nxos =
      parse_ok("<187>2026 Dec  2 05:07:56 UTC: n9k-01 %ETHPORT-5-IF_DOWN_LINK_FAILURE: Ethernet1/1 is down");
  EXPECT_EQ(nxos.timestamp_ms, kReceived);
  EXPECT_EQ(nxos.hostname, "n9k-01");
  EXPECT_EQ(nxos.app, "");
  EXPECT_EQ(nxos.message, "%ETHPORT-5-IF_DOWN_LINK_FAILURE: Ethernet1/1 is down");
  const auto iso = parse_ok("<13>2026-12-02T06:07:56.5+01:00 leaf03 kernel: eth0 link down");
  EXPECT_EQ(iso.timestamp_ms, kReceived + 500);
  EXPECT_EQ(iso.hostname, "leaf03");
  EXPECT_EQ(iso.app, "kernel");
  const auto iso_no_zone = parse_ok("<13>2026-12-02T05:07:56 leaf03 kernel: x");
  EXPECT_EQ(iso_no_zone.timestamp_ms, kReceived);
}

TEST(Rfc3164, NoTimestampNoTagAndLoggerStyle) {
  const auto bare = parse_ok("<13>just a message");
  EXPECT_TRUE(bare.timestamp_from_receipt);
  EXPECT_EQ(bare.hostname, "");
  EXPECT_EQ(bare.app, "");
  EXPECT_EQ(bare.message, "just a message");
  const auto untagged = parse_ok("<13>Dec  2 05:07:56 leaf04 link flap on port 3");
  EXPECT_EQ(untagged.hostname, "leaf04");
  EXPECT_EQ(untagged.app, "");
  EXPECT_EQ(untagged.message, "link flap on port 3");
  const auto tag_only = parse_ok("<13>Dec  2 05:07:56 root: hello");
  EXPECT_EQ(tag_only.hostname, "");
  EXPECT_EQ(tag_only.app, "root");
  EXPECT_EQ(tag_only.message, "hello");
}

TEST(Rfc3164, MalformedLines) {
  EXPECT_EQ(parse_fault("<13>Dec 32 05:07:56 h t: x"), SyslogFault::bad_timestamp);
  EXPECT_EQ(parse_fault("<13>Dec  2 25:07:56 h t: x"), SyslogFault::bad_timestamp);
  EXPECT_EQ(parse_fault("<13>Dec  2 05:07 h t: x"), SyslogFault::bad_timestamp);
  EXPECT_EQ(parse_fault("<13>Dec x 05:07:56 h t: x"), SyslogFault::bad_timestamp);
  EXPECT_EQ(parse_fault("<13>Feb 30 2023 05:07:56 h t: x"), SyslogFault::bad_timestamp);
  EXPECT_EQ(parse_fault("<13>2026 Dec 2 x"), SyslogFault::bad_timestamp);
  EXPECT_EQ(parse_fault("<13>2026-12-02T25:00:00Z h t: x"), SyslogFault::bad_timestamp);
  EXPECT_EQ(parse_fault("<13>Dec  2 05:07:56 " + std::string(256, 'h') + " x"), SyslogFault::bad_hostname);
  EXPECT_EQ(parse_fault("<13>Dec  2 05:07:56 h\x7F"
                        "x t: x"),
            SyslogFault::bad_hostname);
  EXPECT_EQ(parse_fault("<13>Dec  2 05:07:56 h t: \xEF\xBB\xBF\xFF"), SyslogFault::bad_utf8);
}

TEST(Rfc3339, WholeText) {
  EXPECT_EQ(parse_rfc3339_ms("2026-12-02T05:07:56Z"), kReceived);
  EXPECT_FALSE(parse_rfc3339_ms("2026-12-02T05:07:56Zx"));
  EXPECT_FALSE(parse_rfc3339_ms("2026-12-02"));
  EXPECT_FALSE(parse_rfc3339_ms(""));
}

std::vector<std::string> frames_of(SyslogStreamFramer& framer, std::string_view bytes,
                                   bool expect_ok = true) {
  std::vector<std::string> frames;
  const auto ok = framer.feed(bytes, [&](std::string_view f) { frames.emplace_back(f); });
  EXPECT_EQ(ok.has_value(), expect_ok);
  return frames;
}

TEST(Framing, OctetCountingAndLfFramingMixedAndSplitAnywhere) {
  const std::string stream = "11 <13>1 - - -<13>lf framed\n\n5 <13>a<14>second\r\n";
  const std::vector<std::string> expected = {"<13>1 - - -", "<13>lf framed", "<13>a", "<14>second\r"};
  for (std::size_t cut = 0; cut <= stream.size(); ++cut) {
    SyslogStreamFramer framer(64);
    auto frames = frames_of(framer, stream.substr(0, cut));
    for (auto& f : frames_of(framer, stream.substr(cut))) frames.push_back(f);
    EXPECT_EQ(frames, expected) << "cut at " << cut;
    EXPECT_EQ(framer.buffered(), 0U);
  }
}

TEST(Framing, Errors) {
  SyslogStreamFramer a(64);
  frames_of(a, "65 x", false);  // count above the limit
  SyslogStreamFramer b(64);
  frames_of(b, "012 x", false);  // leading zero
  SyslogStreamFramer c(64);
  frames_of(c, "12x", false);  // no SP after the count
  SyslogStreamFramer d(64);
  frames_of(d, "1234567890", false);  // too many digits
  SyslogStreamFramer e(64);
  frames_of(e, std::string(65, 'a'), false);  // LF frame over the limit, no LF yet
  SyslogStreamFramer f(64);
  frames_of(f, std::string(65, 'a') + "\n", false);
  SyslogStreamFramer g(64);
  EXPECT_EQ(frames_of(g, std::string(64, 'a') + "\n").size(), 1U);
  EXPECT_EQ(frame_fault_name(FrameFault::bad_octet_count), "bad_octet_count");
}

IngestedLog log_of(std::string device, bool known, std::int64_t ts_ms, std::string text = "") {
  IngestedLog log;
  log.device = std::move(device);
  log.known_device = known;
  log.received_ms = ts_ms;
  log.message.timestamp_ms = ts_ms;
  log.message.message = std::move(text);
  return log;
}

TEST(LogBuffer, RingPerDeviceDeviceLimitSinceAndLimit) {
  LogBuffer buffer({.per_device = 3, .max_devices = 1, .unknown_devices = 1, .window = {}});
  for (int i = 0; i < 5; ++i) {
    EXPECT_TRUE(buffer.add(log_of("leaf01", true, std::int64_t{i} * 1000, std::to_string(i))).stored);
  }
  EXPECT_TRUE(buffer.add(log_of("unknown:x", false, 10'000)).stored);
  EXPECT_FALSE(buffer.add(log_of("leaf02", true, 10'000)).stored);  // known device limit: refused
  EXPECT_EQ(buffer.devices(), 2U);
  const auto leaf = buffer.query({"leaf01", std::nullopt, 100});
  ASSERT_EQ(leaf.size(), 3U);
  EXPECT_EQ(leaf.front().message.message, "2");
  EXPECT_EQ(leaf.back().message.message, "4");
  EXPECT_LT(leaf.front().sequence, leaf.back().sequence);
  EXPECT_EQ(buffer.query({"leaf01", 3000, 100}).size(), 2U);
  const auto all = buffer.query({std::nullopt, std::nullopt, 2});
  ASSERT_EQ(all.size(), 2U);
  EXPECT_EQ(all[0].message.message, "4");
  EXPECT_EQ(all[1].device, "unknown:x");
  EXPECT_TRUE(buffer.query({"nobody", std::nullopt, 100}).empty());
}

// Issue 31: 104 MB of 8 KB lines from 13 invented hosts stayed resident, and 6,000 spoofed hostnames
// filled the device slots so that a real switch's lines were dropped until a restart. The buffer is
// bounded in bytes, unknown senders live in their own pool and age out, and a flooding device loses
// its own history first.
TEST(LogBuffer, BytesAreBoundedAndUnknownSendersCannotCrowdOutKnownDevices) {
  const LogBufferLimits limits{.per_device = 100'000,
                               .max_devices = 16,
                               .max_bytes = std::size_t{4} << 20,
                               .unknown_devices = 8,
                               .unknown_bytes = std::size_t{1} << 20,
                               .window = {}};
  LogBuffer buffer(limits);
  const std::string line(8192, 'x');
  // A real switch speaks first, then 6,000 invented hostnames flood with 8 KB lines.
  ASSERT_TRUE(buffer.add(log_of("leaf01", true, 1000, "link down")).stored);
  for (int i = 0; i < 6000; ++i) {
    const auto added = buffer.add(log_of("unknown:spoof" + std::to_string(i), false, 2000 + i, line));
    ASSERT_TRUE(added.stored);  // a newcomer takes the place of the unknown sender heard least recently
  }
  auto usage = buffer.usage();
  EXPECT_LE(usage.unknown_bytes, limits.unknown_bytes);
  EXPECT_LE(usage.unknown_devices, limits.unknown_devices);
  EXPECT_EQ(usage.known_devices, 1U);
  // The real switch is kept and still takes new lines.
  EXPECT_EQ(buffer.query({"leaf01", std::nullopt, 10}).size(), 1U);
  EXPECT_TRUE(buffer.add(log_of("leaf01", true, 9000, "link up")).stored);
  // The invented names that remain are the last ones heard.
  EXPECT_FALSE(buffer.query({"unknown:spoof5999", std::nullopt, 1}).empty());
  EXPECT_TRUE(buffer.query({"unknown:spoof0", std::nullopt, 1}).empty());

  // A known device that floods stays within the known pool, and loses its own oldest lines first: a
  // quieter device keeps every line.
  for (int i = 0; i < 50; ++i) ASSERT_TRUE(buffer.add(log_of("leaf02", true, 10'000 + i, "quiet")).stored);
  for (int i = 0; i < 2000; ++i) ASSERT_TRUE(buffer.add(log_of("spine01", true, 20'000 + i, line)).stored);
  usage = buffer.usage();
  EXPECT_LE(usage.known_bytes, limits.max_bytes - limits.unknown_bytes);
  EXPECT_EQ(buffer.query({"leaf02", std::nullopt, 1000}).size(), 50U);
  EXPECT_EQ(buffer.query({"leaf01", std::nullopt, 1000}).size(), 2U);
  const auto spine = buffer.query({"spine01", std::nullopt, 100'000});
  ASSERT_FALSE(spine.empty());
  EXPECT_LT(spine.size(), 2000U);
  EXPECT_EQ(spine.back().message.timestamp_ms, 20'000 + 1999);  // the newest are kept
  // The costs add up: what usage says is what the messages cost.
  std::size_t total = 0;
  for (const auto& l : buffer.query({std::nullopt, std::nullopt, 1'000'000})) total += log_cost(l);
  EXPECT_EQ(total, usage.known_bytes + usage.unknown_bytes);
}

// Issue 31: one line dated 9999-12-31 moved the alarm engine's clock. A time outside the window around
// the receive time is replaced by the receive time before the observer (the brain) sees it.
TEST(LogBuffer, DataTimeOutsideTheWindowTakesTheReceiveTime) {
  LogBuffer buffer({.window = {.max_future = std::chrono::minutes(5), .max_past = std::chrono::hours(24)}});
  std::vector<std::int64_t> seen;
  buffer.set_observer([&](const IngestedLog& log) { seen.push_back(log.message.timestamp_ms); });
  const std::int64_t now = 1'796'000'000'000;
  auto future = log_of("leaf01", true, now);
  future.message.timestamp_ms = 253'402'300'799'000;  // 9999-12-31
  auto past = log_of("leaf01", true, now);
  past.message.timestamp_ms = 0;  // a switch without NTP
  auto skewed = log_of("leaf01", true, now);
  skewed.message.timestamp_ms = now + 60'000;  // a minute ahead: believed
  EXPECT_EQ(buffer.add(future).time, TimeVerdict::future);
  EXPECT_EQ(buffer.add(past).time, TimeVerdict::past);
  EXPECT_EQ(buffer.add(skewed).time, TimeVerdict::inside);
  EXPECT_EQ(seen, (std::vector<std::int64_t>{now, now, now + 60'000}));
  const auto kept = buffer.query({"leaf01", std::nullopt, 10});
  ASSERT_EQ(kept.size(), 3U);
  EXPECT_TRUE(kept[0].timestamp_clamped);
  EXPECT_TRUE(kept[1].timestamp_clamped);
  EXPECT_FALSE(kept[2].timestamp_clamped);
  EXPECT_EQ(judge_data_time({}, std::numeric_limits<std::int64_t>::min(), now), TimeVerdict::past);
  EXPECT_EQ(judge_data_time({.max_past = std::chrono::milliseconds(0)}, 0, now), TimeVerdict::inside);
}

}  // namespace
}  // namespace hsns::ingest
