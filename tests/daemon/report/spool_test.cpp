// The report spool (daemon/report/spool.h) on real files: append/peek/ack across reopen, seq continuity,
// the byte bound and its drop order (flow batches last), refusals, corruption in the middle (a payload
// byte, a length field, a segment header), torn and bad-checksum tails, a missing or corrupt state file,
// the state file's two slots (written in place alternately, a torn or garbled slot falls back to the
// other, both bad counted, the older single-record format read and upgraded without loss), the directory
// lock and the oldest-record age; groups of parts (append_parts: streamed, all or nothing, a group cut by
// a crash removed on open, also across segments) and payloads read from the segment files (peek_payloads:
// checksum verified, readable after their segment was deleted; SpoolPayloadStream: read in pieces and
// checked on the way, a bad record refused at its last piece or, with a changed header, at its first).
#include "spool.h"

#include <gtest/gtest.h>
#include <sys/stat.h>
#include <zlib.h>

#include <filesystem>
#include <optional>
#include <random>
#include <string>
#include <vector>

#include "crc32.h"
#include "spool_files.h"
#include "support/temp_dir.h"

namespace {

namespace fs = std::filesystem;
namespace report = hsns::daemon::report;
using hsns::testing::TempDir;
using namespace hsns::testing::spool;
using report::SpoolKind;

std::string payload_of(std::uint64_t i, std::size_t size = 100) {
  std::string p(size, '\0');
  for (std::size_t k = 0; k < size; ++k) p[k] = static_cast<char>('a' + (i * 7 + k) % 26);
  return p;
}

std::vector<std::uint64_t> seqs(const std::vector<report::SpoolRecord>& records) {
  std::vector<std::uint64_t> out;
  out.reserve(records.size());
  for (const auto& r : records) out.push_back(r.seq);
  return out;
}

class SpoolTest : public ::testing::Test {
 protected:
  TempDir tmp{"hsns-spool"};
  report::SpoolOptions options(std::uint64_t max_bytes = 1 << 20, std::uint64_t segment_bytes = 1024) const {
    report::SpoolOptions o;
    o.dir = (tmp / "spool").string();
    o.max_bytes = max_bytes;
    o.segment_bytes = segment_bytes;
    return o;
  }
  // A spool of `n` reports of 100 bytes, closed again (the files are what the test looks at next).
  void write_reports(const report::SpoolOptions& o, std::uint64_t n) {
    auto s = open_spool(o);
    ASSERT_TRUE(s);
    append_reports(*s, n);
  }
  void append_reports(report::Spool& s, std::uint64_t n, std::size_t size = 100) {
    for (std::uint64_t i = 0; i < n; ++i) {
      auto r = s.append(SpoolKind::telemetry_report, 0, payload_of(s.last_seq() + 1, size));
      ASSERT_TRUE(r) << r.error().message();
    }
  }
};

TEST_F(SpoolTest, RecordsSurviveReopenInOrderAndAckedOnesDoNotComeBack) {
  {
    auto s = open_spool(options());
    ASSERT_TRUE(s);
    for (std::uint64_t i = 1; i <= 30; ++i) {
      const auto kind = i % 3 == 0 ? SpoolKind::flow_batch : SpoolKind::telemetry_report;
      auto seq = s->append(kind, kind == SpoolKind::flow_batch ? 100 + i : 0, payload_of(i));
      ASSERT_TRUE(seq) << seq.error().message();
      EXPECT_EQ(*seq, i);
    }
    ASSERT_TRUE(s->ack(10));
    EXPECT_GT(segment_sizes(tmp / "spool").size(), 2U) << "several segments of each kind";
  }
  auto s = open_spool(options());
  ASSERT_TRUE(s);
  const auto all = everything(*s);
  ASSERT_EQ(all.size(), 20U);
  for (std::size_t i = 0; i < all.size(); ++i) {
    const std::uint64_t seq = 11 + i;
    EXPECT_EQ(all[i].seq, seq);
    EXPECT_EQ(all[i].payload, payload_of(seq));
    EXPECT_EQ(all[i].kind, seq % 3 == 0 ? SpoolKind::flow_batch : SpoolKind::telemetry_report);
    EXPECT_EQ(all[i].epoch, seq % 3 == 0 ? 100 + seq : 0);
  }
  EXPECT_EQ(s->last_flow_epoch(), 130U);
  EXPECT_EQ(s->stats().records, 20U);
  EXPECT_EQ(s->stats().bytes, 2000U);
  EXPECT_EQ(s->stats().corrupt_records_total, 0U);
  EXPECT_EQ(s->stats().torn_tails_total, 0U);
}

TEST_F(SpoolTest, SeqIsNeverReusedAfterEverythingWasAcknowledged) {
  {
    auto s = open_spool(options());
    ASSERT_TRUE(s);
    append_reports(*s, 25);
    ASSERT_TRUE(s->ack(25));
    // Only the newest segment is left, and nothing in it is waiting.
    EXPECT_EQ(s->stats().segments, 1U);
    EXPECT_TRUE(everything(*s).empty());
  }
  {
    auto s = open_spool(options());
    ASSERT_TRUE(s);
    EXPECT_TRUE(everything(*s).empty());
    auto seq = s->append(SpoolKind::telemetry_report, 0, "x");
    ASSERT_TRUE(seq);
    EXPECT_EQ(*seq, 26U);
    ASSERT_TRUE(s->ack(26));
  }
  // Even with every segment gone the state file carries the highest seq.
  for (const auto& [name, size] : segment_sizes(tmp / "spool")) fs::remove(tmp / "spool" / name);
  auto s = open_spool(options());
  ASSERT_TRUE(s);
  auto seq = s->append(SpoolKind::telemetry_report, 0, "y");
  ASSERT_TRUE(seq);
  EXPECT_EQ(*seq, 27U);
}

TEST_F(SpoolTest, PeekHandsOutABatchWithinTheBudgetAndAtLeastOneRecord) {
  auto s = open_spool(options());
  ASSERT_TRUE(s);
  append_reports(*s, 10);
  auto batch = s->peek(350);
  ASSERT_TRUE(batch);
  EXPECT_EQ(seqs(*batch), (std::vector<std::uint64_t>{1, 2, 3}));
  batch = s->peek(10);
  ASSERT_TRUE(batch);
  EXPECT_EQ(seqs(*batch), (std::vector<std::uint64_t>{1})) << "a record larger than the budget goes alone";
  ASSERT_TRUE(s->ack(3));
  batch = s->peek(200);
  ASSERT_TRUE(batch);
  EXPECT_EQ(seqs(*batch), (std::vector<std::uint64_t>{4, 5}));
  EXPECT_TRUE(s->ack(2)) << "an older ack changes nothing";
  EXPECT_EQ(s->acked_seq(), 3U);
}

TEST_F(SpoolTest, RefusesWhatItCannotStore) {
  auto o = options(4096);
  o.max_record_bytes = 2000;
  auto s = open_spool(o);
  ASSERT_TRUE(s);
  auto r = s->append(SpoolKind::telemetry_report, 0, std::string(2001, 'x'));
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error().kind, hsns::Error::Kind::too_large);
  r = s->append(SpoolKind::telemetry_report, 5, "x");
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error().field(), "epoch");
  r = s->append(static_cast<SpoolKind>(9), 0, "x");
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error().field(), "kind");
  append_reports(*s, 2);
  auto a = s->ack(3);
  ASSERT_FALSE(a);
  EXPECT_EQ(a.error().field(), "seq");
  EXPECT_EQ(s->stats().drops_total, 0U);
  EXPECT_EQ(everything(*s).size(), 2U);

  o.max_bytes = 10;
  auto bad = report::Spool::open(o);
  ASSERT_FALSE(bad);
  EXPECT_EQ(bad.error().field(), "max_bytes");
}

TEST_F(SpoolTest, BoundDropsReportsFirstAndFlowBatchesLastCountingBoth) {
  auto o = options(4096, 512);
  auto s = open_spool(o);
  ASSERT_TRUE(s);
  ASSERT_TRUE(s->append(SpoolKind::flow_batch, 41, payload_of(1, 300)));
  ASSERT_TRUE(s->append(SpoolKind::flow_batch, 42, payload_of(2, 300)));
  append_reports(*s, 40);
  auto st = s->stats();
  EXPECT_LE(st.disk_bytes, o.max_bytes);
  EXPECT_GT(st.drops_total, 0U);
  EXPECT_EQ(st.flow_batch_drops_total, 0U);
  EXPECT_EQ(st.dropped_bytes_total, st.drops_total * 100);
  auto all = everything(*s);
  ASSERT_GE(all.size(), 2U);
  EXPECT_EQ(all[0].seq, 1U) << "the flow batches stay while reports can go";
  EXPECT_EQ(all[1].seq, 2U);
  EXPECT_EQ(all.back().seq, 42U);
  EXPECT_EQ(all.size() - 2 + st.drops_total, 40U) << "every report is either here or counted";

  // Flow batches alone over the bound: the reports go first, then the oldest flow batches, counted.
  for (std::uint64_t e = 43; e < 60; ++e)
    ASSERT_TRUE(s->append(SpoolKind::flow_batch, e, payload_of(e, 300)));
  st = s->stats();
  EXPECT_LE(st.disk_bytes, o.max_bytes);
  EXPECT_GT(st.flow_batch_drops_total, 0U);
  all = everything(*s);
  for (const auto& r : all) EXPECT_EQ(r.kind, SpoolKind::flow_batch) << r.seq;
  EXPECT_EQ(all.back().epoch, 59U);
  EXPECT_EQ(all.size() + st.drops_total, 59U);
  s.reset();
  s = open_spool(o);
  ASSERT_TRUE(s);
  EXPECT_EQ(s->last_flow_epoch(), 59U);
  EXPECT_EQ(everything(*s).size(), all.size());
}

TEST_F(SpoolTest, AcknowledgedSegmentsMakeRoomBeforeAnythingIsDropped) {
  auto o = options(4096, 512);
  auto s = open_spool(o);
  ASSERT_TRUE(s);
  append_reports(*s, 25);
  ASSERT_TRUE(s->ack(s->last_seq()));
  append_reports(*s, 25);
  EXPECT_EQ(s->stats().drops_total, 0U);
  EXPECT_EQ(everything(*s).size(), 25U);
}

TEST_F(SpoolTest, ACorruptPayloadInTheMiddleIsSkippedAndCounted) {
  write_reports(options(), 5);
  const auto segments = segment_sizes(tmp / "spool");
  ASSERT_EQ(segments.size(), 1U);
  const fs::path seg = tmp / "spool" / segments.begin()->first;
  // Record 2's payload.
  flip_byte(seg, kSegmentHeader + (kRecordHeader + 100) + kRecordHeader + 50);
  auto s = open_spool(options());
  ASSERT_TRUE(s);
  EXPECT_EQ(seqs(everything(*s)), (std::vector<std::uint64_t>{1, 3, 4, 5}));
  EXPECT_EQ(s->stats().corrupt_records_total, 1U);
  EXPECT_EQ(s->stats().torn_tails_total, 0U);
  auto seq = s->append(SpoolKind::telemetry_report, 0, "after");
  ASSERT_TRUE(seq);
  EXPECT_EQ(*seq, 6U);
}

TEST_F(SpoolTest, ACorruptLengthFieldIsSkippedByTheSyncMarker) {
  write_reports(options(), 5);
  const fs::path seg = tmp / "spool" / segment_sizes(tmp / "spool").begin()->first;
  flip_byte(seg, kSegmentHeader + 2 * (kRecordHeader + 100) + 5);  // record 3's length
  auto s = open_spool(options());
  ASSERT_TRUE(s);
  EXPECT_EQ(seqs(everything(*s)), (std::vector<std::uint64_t>{1, 2, 4, 5}));
  EXPECT_EQ(s->stats().corrupt_records_total, 1U);
}

TEST_F(SpoolTest, TornAndBadChecksumTailsAreTruncatedNotCounted) {
  write_reports(options(), 5);
  const fs::path seg = tmp / "spool" / segment_sizes(tmp / "spool").begin()->first;
  fs::resize_file(seg, fs::file_size(seg) - 30);  // record 5 cut in its payload
  {
    auto s = open_spool(options());
    ASSERT_TRUE(s);
    EXPECT_EQ(seqs(everything(*s)), (std::vector<std::uint64_t>{1, 2, 3, 4}));
    EXPECT_EQ(s->stats().torn_tails_total, 1U);
    EXPECT_EQ(s->stats().corrupt_records_total, 0U);
    EXPECT_EQ(fs::file_size(seg), kSegmentHeader + 4 * (kRecordHeader + 100));
    auto seq = s->append(SpoolKind::telemetry_report, 0, payload_of(5));
    ASSERT_TRUE(seq);
    EXPECT_EQ(*seq, 5U);
  }
  flip_byte(seg, fs::file_size(seg) - 1);  // the last record's checksum no longer holds
  auto s = open_spool(options());
  ASSERT_TRUE(s);
  EXPECT_EQ(seqs(everything(*s)), (std::vector<std::uint64_t>{1, 2, 3, 4}));
  EXPECT_EQ(s->stats().torn_tails_total, 1U);
  EXPECT_EQ(s->stats().corrupt_records_total, 0U);
}

TEST_F(SpoolTest, ASegmentCutInsideItsHeaderIsRemoved) {
  auto o = options();
  o.segment_bytes = 300;
  write_reports(o, 4);  // two records a segment
  const auto segments = segment_sizes(tmp / "spool");
  ASSERT_EQ(segments.size(), 2U);
  fs::resize_file(tmp / "spool" / segments.rbegin()->first, 3);
  auto s = open_spool(o);
  ASSERT_TRUE(s);
  EXPECT_EQ(seqs(everything(*s)), (std::vector<std::uint64_t>{1, 2}));
  EXPECT_EQ(s->stats().torn_tails_total, 1U);
  auto seq = s->append(SpoolKind::telemetry_report, 0, "x");
  ASSERT_TRUE(seq);
  EXPECT_EQ(*seq, 3U);
}

TEST_F(SpoolTest, ASegmentWithABadHeaderIsSetAsideNotDeleted) {
  auto o = options();
  o.segment_bytes = 300;
  write_reports(o, 6);
  const auto segments = segment_sizes(tmp / "spool");
  ASSERT_EQ(segments.size(), 3U);
  const std::string middle = std::next(segments.begin())->first;
  flip_byte(tmp / "spool" / middle, 0);
  auto s = open_spool(o);
  ASSERT_TRUE(s);
  EXPECT_EQ(seqs(everything(*s)), (std::vector<std::uint64_t>{1, 2, 5, 6}));
  EXPECT_EQ(s->stats().corrupt_records_total, 1U);
  EXPECT_TRUE(fs::exists(tmp / "spool" / (middle + ".corrupt")));
}

TEST_F(SpoolTest, AMissingOrCorruptStateFileResendsRatherThanLoses) {
  {
    auto s = open_spool(options());
    ASSERT_TRUE(s);
    append_reports(*s, 5);
    ASSERT_TRUE(s->ack(3));
  }
  const fs::path state = tmp / "spool" / "state";
  ASSERT_TRUE(fs::exists(state));
  const std::string saved = read_file(state);
  fs::remove(state);
  {
    auto s = open_spool(options());
    ASSERT_TRUE(s);
    EXPECT_EQ(seqs(everything(*s)), (std::vector<std::uint64_t>{1, 2, 3, 4, 5}));
    EXPECT_EQ(s->stats().corrupt_records_total, 0U);
    auto seq = s->append(SpoolKind::telemetry_report, 0, "x");
    ASSERT_TRUE(seq);
    EXPECT_EQ(*seq, 6U);
  }
  write_file(state, saved);
  flip_byte(state, 9);
  auto s = open_spool(options());
  ASSERT_TRUE(s);
  EXPECT_EQ(seqs(everything(*s)), (std::vector<std::uint64_t>{1, 2, 3, 4, 5, 6}));
  EXPECT_EQ(s->stats().corrupt_records_total, 1U);
}

// The state file's inode (a rename would change it).
ino_t inode_of(const fs::path& p) {
  struct stat st {};
  EXPECT_EQ(::stat(p.c_str(), &st), 0) << p;
  return st.st_ino;
}

// Sets bytes [from, to) of a file to zero (a write cut short leaves such a stretch).
void zero_bytes(const fs::path& p, std::uint64_t from, std::uint64_t to) {
  std::string bytes = read_file(p);
  ASSERT_LE(to, bytes.size()) << p;
  std::fill(bytes.begin() + static_cast<std::ptrdiff_t>(from),
            bytes.begin() + static_cast<std::ptrdiff_t>(to), '\0');
  write_file(p, bytes);
}

TEST_F(SpoolTest, StateSlotsAreWrittenInPlaceInTurnAndAcksPersistAcrossReopen) {
  const auto o = options(1 << 20, 1 << 20);  // one segment: no ack deletes one
  const fs::path state = tmp / "spool" / "state";
  {
    auto s = open_spool(o);
    ASSERT_TRUE(s);
    append_reports(*s, 6);
    EXPECT_FALSE(fs::exists(state)) << "nothing to remember before the first ack";
    ASSERT_TRUE(s->ack(1));
    const auto size = fs::file_size(state);
    EXPECT_EQ(size, kStateSlotOffset[1] + kStateSlotSize) << "created at its full size";
    const ino_t inode = inode_of(state);
    auto file = read_file(state);
    ASSERT_TRUE(state_slot(file, 0));
    EXPECT_EQ(state_slot(file, 0)->generation, 1U);
    EXPECT_EQ(state_slot(file, 0)->acked, 1U);
    EXPECT_FALSE(state_slot(file, 1));
    // Each ack goes to the slot that does not hold the current state; the other keeps the one before.
    const std::uint64_t acks[] = {2, 4, 5};
    for (std::size_t i = 0; i < 3; ++i) {
      ASSERT_TRUE(s->ack(acks[i]));
      file = read_file(state);
      const int written = (i % 2 == 0) ? 1 : 0;
      ASSERT_TRUE(state_slot(file, written)) << i;
      ASSERT_TRUE(state_slot(file, 1 - written)) << i;
      EXPECT_EQ(state_slot(file, written)->generation, i + 2);
      EXPECT_EQ(state_slot(file, written)->acked, acks[i]);
      EXPECT_EQ(state_slot(file, 1 - written)->generation, i + 1);
      EXPECT_EQ(state_slot(file, 1 - written)->acked, i == 0 ? 1U : acks[i - 1]);
      EXPECT_EQ(inode_of(state), inode) << "written in place, never replaced";
      EXPECT_EQ(fs::file_size(state), size);
      EXPECT_FALSE(fs::exists(tmp / "spool" / "state.tmp"));
    }
  }
  {
    auto s = open_spool(o);
    ASSERT_TRUE(s);
    EXPECT_EQ(s->acked_seq(), 5U);
    EXPECT_EQ(seqs(everything(*s)), (std::vector<std::uint64_t>{6}));
    ASSERT_TRUE(s->ack(6));  // generation 5, in slot 0
  }
  auto s = open_spool(o);
  ASSERT_TRUE(s);
  EXPECT_EQ(s->acked_seq(), 6U);
  EXPECT_TRUE(everything(*s).empty());
  EXPECT_EQ(s->stats().corrupt_records_total, 0U);
  const auto file = read_file(state);
  ASSERT_TRUE(state_slot(file, 0));
  EXPECT_EQ(state_slot(file, 0)->generation, 5U);
  EXPECT_EQ(state_slot(file, 0)->acked, 6U);
}

TEST_F(SpoolTest, ATornOrGarbledStateSlotFallsBackToTheOtherAndBothBadResendEverything) {
  const auto o = options(1 << 20, 1 << 20);
  const fs::path state = tmp / "spool" / "state";
  {
    auto s = open_spool(o);
    ASSERT_TRUE(s);
    append_reports(*s, 6);
    ASSERT_TRUE(s->ack(2));  // slot 0, generation 1
    ASSERT_TRUE(s->ack(4));  // slot 1, generation 2
  }
  const std::string saved = read_file(state);
  // The newest slot torn (its second half never reached the disk): the state before it holds.
  zero_bytes(state, kStateSlotOffset[1] + 20, kStateSlotOffset[1] + kStateSlotSize);
  {
    auto s = open_spool(o);
    ASSERT_TRUE(s);
    EXPECT_EQ(s->acked_seq(), 2U);
    EXPECT_EQ(seqs(everything(*s)), (std::vector<std::uint64_t>{3, 4, 5, 6}));
    EXPECT_EQ(s->stats().corrupt_records_total, 0U) << "a torn slot is a crash, not corruption";
    // The next write goes to the torn slot again, never over the valid one.
    ASSERT_TRUE(s->ack(3));
    const auto file = read_file(state);
    ASSERT_TRUE(state_slot(file, 0));
    EXPECT_EQ(state_slot(file, 0)->acked, 2U);
    ASSERT_TRUE(state_slot(file, 1));
    EXPECT_EQ(state_slot(file, 1)->acked, 3U);
    EXPECT_EQ(state_slot(file, 1)->generation, 2U);
  }
  {
    auto s = open_spool(o);
    ASSERT_TRUE(s);
    EXPECT_EQ(s->acked_seq(), 3U);
  }
  // The older slot garbled: the newer holds.
  write_file(state, saved);
  flip_byte(state, kStateSlotOffset[0] + 17);
  {
    auto s = open_spool(o);
    ASSERT_TRUE(s);
    EXPECT_EQ(s->acked_seq(), 4U);
    EXPECT_EQ(seqs(everything(*s)), (std::vector<std::uint64_t>{5, 6}));
    EXPECT_EQ(s->stats().corrupt_records_total, 0U);
  }
  // Both garbled: counted, nothing acknowledged, everything resent; the file is written again.
  write_file(state, saved);
  flip_byte(state, kStateSlotOffset[0] + 3);
  flip_byte(state, kStateSlotOffset[1] + 30);
  {
    auto s = open_spool(o);
    ASSERT_TRUE(s);
    EXPECT_EQ(s->acked_seq(), 0U);
    EXPECT_EQ(seqs(everything(*s)), (std::vector<std::uint64_t>{1, 2, 3, 4, 5, 6}));
    EXPECT_EQ(s->stats().corrupt_records_total, 1U);
    EXPECT_EQ(s->last_seq(), 6U);
    ASSERT_TRUE(s->ack(1));
  }
  auto s = open_spool(o);
  ASSERT_TRUE(s);
  EXPECT_EQ(s->acked_seq(), 1U);
  EXPECT_EQ(s->stats().corrupt_records_total, 0U);
}

// A state file as older versions wrote it: "HSNSSTA1" | acked | highest seq | highest flow epoch | CRC-32.
std::string old_state_file(std::uint64_t acked, std::uint64_t last_seq, std::uint64_t epoch) {
  std::string f = "HSNSSTA1";
  for (const std::uint64_t v : {acked, last_seq, epoch})
    for (int i = 0; i < 8; ++i) f.push_back(static_cast<char>(v >> (8 * i)));
  const std::uint32_t crc =
      report::crc32_update(0, reinterpret_cast<const unsigned char*>(f.data()), f.size());
  for (int i = 0; i < 4; ++i) f.push_back(static_cast<char>(crc >> (8 * i)));
  return f;
}

TEST_F(SpoolTest, AnOldFormatStateFileIsReadAndUpgradedWithoutLoss) {
  const auto o = options(1 << 20, 1 << 20);
  const fs::path state = tmp / "spool" / "state";
  write_reports(o, 6);
  const std::string old = old_state_file(3, 30, 17);
  ASSERT_EQ(old.size(), 36U);
  write_file(state, old);
  write_file(tmp / "spool" / "state.tmp", "left by an older version's crash");
  {
    auto s = open_spool(o);
    ASSERT_TRUE(s);
    EXPECT_FALSE(fs::exists(tmp / "spool" / "state.tmp")) << "a leftover temporary file is removed";
    EXPECT_EQ(s->acked_seq(), 3U);
    EXPECT_EQ(seqs(everything(*s)), (std::vector<std::uint64_t>{4, 5, 6}));
    EXPECT_EQ(s->last_seq(), 30U) << "the highest seq of the old file is a floor";
    EXPECT_EQ(s->last_flow_epoch(), 17U);
    EXPECT_EQ(s->stats().corrupt_records_total, 0U);
    // The first write goes to slot 1: the old record stays as it was until then.
    ASSERT_TRUE(s->ack(4));
    const auto file = read_file(state);
    EXPECT_EQ(file.substr(0, old.size()), old);
    ASSERT_TRUE(state_slot(file, 1));
    EXPECT_EQ(state_slot(file, 1)->generation, 1U);
    EXPECT_EQ(state_slot(file, 1)->acked, 4U);
  }
  const std::string upgraded = read_file(state);
  {
    auto s = open_spool(o);
    ASSERT_TRUE(s);
    EXPECT_EQ(s->acked_seq(), 4U);
    EXPECT_EQ(s->last_seq(), 30U);
    EXPECT_EQ(s->last_flow_epoch(), 17U);
  }
  // That first new write torn: the old record still holds.
  zero_bytes(state, kStateSlotOffset[1], kStateSlotOffset[1] + kStateSlotSize);
  {
    auto s = open_spool(o);
    ASSERT_TRUE(s);
    EXPECT_EQ(s->acked_seq(), 3U);
    EXPECT_EQ(s->stats().corrupt_records_total, 0U);
  }
  write_file(state, upgraded);
  {
    auto s = open_spool(o);
    ASSERT_TRUE(s);
    ASSERT_TRUE(s->ack(5));  // slot 0: the old record replaced by a new one
    auto seq = s->append(SpoolKind::telemetry_report, 0, "after");
    ASSERT_TRUE(seq);
    EXPECT_EQ(*seq, 31U);
  }
  const auto file = read_file(state);
  ASSERT_TRUE(state_slot(file, 0));
  EXPECT_EQ(state_slot(file, 0)->generation, 2U);
  auto s = open_spool(o);
  ASSERT_TRUE(s);
  EXPECT_EQ(s->acked_seq(), 5U);
  EXPECT_EQ(seqs(everything(*s)), (std::vector<std::uint64_t>{6, 31}));
  EXPECT_EQ(s->last_flow_epoch(), 17U);
}

TEST_F(SpoolTest, OneSpoolADirectory) {
  auto s = open_spool(options());
  ASSERT_TRUE(s);
  auto second = report::Spool::open(options());
  ASSERT_FALSE(second);
  EXPECT_EQ(second.error().kind, hsns::Error::Kind::conflict);
  s.reset();
  EXPECT_TRUE(report::Spool::open(options()));
}

TEST_F(SpoolTest, StatsSayHowOldTheOldestWaitingRecordIs) {
  std::int64_t now = 1'000'000;
  auto o = options();
  o.now_ms = [&now] { return now; };
  auto s = open_spool(o);
  ASSERT_TRUE(s);
  EXPECT_EQ(s->stats().oldest_unacked_age_ms, 0);
  append_reports(*s, 1);
  now += 5000;
  append_reports(*s, 1);
  now += 1000;
  EXPECT_EQ(s->stats().oldest_unacked_age_ms, 6000);
  ASSERT_TRUE(s->ack(1));
  EXPECT_EQ(s->stats().oldest_unacked_age_ms, 1000);
  const auto all = everything(*s);
  ASSERT_EQ(all.size(), 1U);
  EXPECT_EQ(all[0].appended_at_ms, 1'005'000);
}

// A group of `parts` flow-batch parts of `size` bytes each, streamed in pieces of 7 bytes.
report::SpoolParts group_of(std::size_t parts, std::size_t size,
                            std::vector<std::string>* written = nullptr) {
  report::SpoolParts g;
  g.count = parts;
  g.size = [size](std::uint64_t, std::size_t) { return std::uint64_t{size}; };
  g.write = [size, written](std::uint64_t seq, std::size_t, report::SpoolSink& sink) -> hsns::Result<void> {
    const std::string p = payload_of(seq, size);
    if (written != nullptr) written->push_back(p);
    for (std::size_t at = 0; at < p.size(); at += 7)
      if (auto r = sink.write(std::string_view(p).substr(at, 7)); !r) return r;
    return {};
  };
  return g;
}

TEST_F(SpoolTest, AGroupOfPartsIsStoredWholeWithItsFlagsAndEpoch) {
  auto s = open_spool(options(1 << 20, 4096));
  ASSERT_TRUE(s);
  append_reports(*s, 1);
  std::vector<std::string> written;
  auto first = s->append_parts(SpoolKind::flow_batch, 42, group_of(5, 1500, &written));
  ASSERT_TRUE(first) << first.error().message();
  EXPECT_EQ(*first, 2U);
  EXPECT_EQ(s->last_seq(), 6U);
  EXPECT_EQ(s->last_flow_epoch(), 42U);
  auto entries = s->peek_payloads(std::numeric_limits<std::uint64_t>::max());
  ASSERT_TRUE(entries);
  ASSERT_EQ(entries->size(), 6U);
  for (std::size_t i = 1; i < 6; ++i) {
    const auto& e = (*entries)[i];
    EXPECT_EQ(e.seq, i + 1);
    EXPECT_EQ(e.epoch, 42U);
    EXPECT_EQ(e.more_parts, i < 5) << "every part but the last says more follow";
    EXPECT_TRUE(e.payload.verify());
    EXPECT_EQ(e.payload.read_all().value(), written[i - 1]);
  }
  EXPECT_GT(segment_sizes(tmp / "spool").size(), 3U) << "the group spans flow segments";
  s.reset();
  s = open_spool(options(1 << 20, 4096));
  ASSERT_TRUE(s);
  EXPECT_EQ(everything(*s).size(), 6U);
  EXPECT_EQ(s->last_flow_epoch(), 42U);
  EXPECT_EQ(s->stats().torn_tails_total, 0U);
}

TEST_F(SpoolTest, AGroupWhoseLastPartACrashCutOffIsRemovedOnOpenAcrossSegments) {
  const auto o = options(1 << 20, 4096);
  {
    auto s = open_spool(o);
    ASSERT_TRUE(s);
    ASSERT_TRUE(s->append_parts(SpoolKind::flow_batch, 7, group_of(2, 1000)));
    append_reports(*s, 1);
    ASSERT_TRUE(s->append_parts(SpoolKind::flow_batch, 8, group_of(4, 1500)));
  }
  // Cut the newest flow segment inside its last record, as a kill -9 before the last part's header was
  // written (and synced) leaves it: the parts before it are whole and checksummed, but flagged `more`.
  const auto sizes = segment_sizes(tmp / "spool");
  std::string newest_flow;
  for (const auto& [name, size] : sizes)
    if (name.rfind("flow-", 0) == 0) newest_flow = name;
  const auto path = tmp / "spool" / newest_flow;
  const std::string bytes = read_file(path);
  write_file(path, bytes.substr(0, bytes.size() - 100));
  auto s = open_spool(o);
  ASSERT_TRUE(s);
  const auto all = everything(*s);
  ASSERT_EQ(seqs(all), (std::vector<std::uint64_t>{1, 2, 3})) << "epoch 8's parts are all gone";
  EXPECT_EQ(s->last_flow_epoch(), 7U) << "epoch 8 is harvested again";
  EXPECT_GE(s->stats().torn_tails_total, 1U);
  // Appends go on after the cut; the group's seqs are not handed out to anything the aggregator saw.
  auto again = s->append_parts(SpoolKind::flow_batch, 8, group_of(4, 1500));
  ASSERT_TRUE(again) << again.error().message();
  EXPECT_EQ(everything(*s).size(), 7U);
  s.reset();
  s = open_spool(o);
  ASSERT_TRUE(s);
  EXPECT_EQ(everything(*s).size(), 7U);
  EXPECT_EQ(s->last_flow_epoch(), 8U);
}

TEST_F(SpoolTest, AGroupWhoseWriterFailsLeavesNothing) {
  auto s = open_spool(options(1 << 20, 4096));
  ASSERT_TRUE(s);
  ASSERT_TRUE(s->append_parts(SpoolKind::flow_batch, 1, group_of(1, 100)));
  const auto before = segment_sizes(tmp / "spool");
  auto g = group_of(4, 1500);
  auto inner = g.write;
  g.write = [inner](std::uint64_t seq, std::size_t part, report::SpoolSink& sink) -> hsns::Result<void> {
    if (part == 3) return tl::unexpected(hsns::Error::internal("encoder failed"));
    return inner(seq, part, sink);
  };
  EXPECT_FALSE(s->append_parts(SpoolKind::flow_batch, 2, g));
  // A writer that writes fewer or more bytes than it announced is refused the same way.
  auto short_write = group_of(1, 100);
  short_write.size = [](std::uint64_t, std::size_t) { return std::uint64_t{101}; };
  EXPECT_FALSE(s->append_parts(SpoolKind::flow_batch, 2, short_write));
  auto long_write = group_of(1, 100);
  long_write.size = [](std::uint64_t, std::size_t) { return std::uint64_t{99}; };
  EXPECT_FALSE(s->append_parts(SpoolKind::flow_batch, 2, long_write));
  EXPECT_EQ(seqs(everything(*s)), (std::vector<std::uint64_t>{1}));
  EXPECT_EQ(s->last_flow_epoch(), 1U);
  EXPECT_EQ(segment_sizes(tmp / "spool"), before) << "cut back, and the segments the group opened are gone";
  ASSERT_TRUE(s->append_parts(SpoolKind::flow_batch, 2, group_of(3, 1500)));
  s.reset();
  s = open_spool(options(1 << 20, 4096));
  ASSERT_TRUE(s);
  EXPECT_EQ(everything(*s).size(), 4U);
  EXPECT_EQ(s->stats().corrupt_records_total + s->stats().torn_tails_total, 0U);
}

TEST_F(SpoolTest, AGroupTooLargeForTheBoundIsRefusedWhole) {
  auto s = open_spool(options(10'000, 4096));
  ASSERT_TRUE(s);
  auto r = s->append_parts(SpoolKind::flow_batch, 1, group_of(4, 3000));
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error().kind, hsns::Error::Kind::too_large);
  EXPECT_TRUE(everything(*s).empty());
}

TEST_F(SpoolTest, APeekedPayloadIsReadFromItsSegmentVerifiedAndOutlivesTheSegment) {
  auto s = open_spool(options(1 << 20, 1024));
  ASSERT_TRUE(s);
  append_reports(*s, 3, 300);
  auto entries = s->peek_payloads(std::numeric_limits<std::uint64_t>::max());
  ASSERT_TRUE(entries);
  ASSERT_EQ(entries->size(), 3U);
  const auto& first = (*entries)[0].payload;
  EXPECT_EQ(first.size(), 300U);
  char buf[64];
  auto n = first.read(290, buf, sizeof buf);
  ASSERT_TRUE(n);
  EXPECT_EQ(*n, 10U) << "a read stops at the payload's end";
  EXPECT_EQ(std::string(buf, *n), payload_of(1, 300).substr(290));
  // Acknowledged and its segment deleted: what was peeked is still readable (the file stays open).
  ASSERT_TRUE(s->ack(3));
  EXPECT_EQ(first.read_all().value(), payload_of(1, 300));
  EXPECT_TRUE(first.verify());
  // A payload byte that changed on disk after the spool indexed it fails verify().
  append_reports(*s, 1, 300);
  auto later = s->peek_payloads(1);
  ASSERT_TRUE(later);
  ASSERT_EQ(later->size(), 1U);
  std::string seg;
  for (const auto& [name, size] : segment_sizes(tmp / "spool"))
    if (name.rfind("report-", 0) == 0) seg = name;
  const auto bytes = read_file(tmp / "spool" / seg);
  flip_byte(tmp / "spool" / seg, bytes.size() - 5);
  auto bad = (*later)[0].payload.verify();
  ASSERT_FALSE(bad);
  EXPECT_NE(bad.error().message().find("checksum"), std::string::npos) << bad.error().message();
}

// Reads a whole stream in pieces of `piece` bytes; stops at the first failing read. Returns the bytes
// handed out and that failure, if any.
struct Streamed {
  std::string bytes;
  std::optional<hsns::Error> error;
  std::size_t pieces = 0;  // reads that succeeded
};
Streamed stream_all(report::SpoolPayloadStream& stream, std::size_t piece) {
  Streamed out;
  std::string buf(piece, '\0');
  while (out.bytes.size() < stream.size()) {
    auto n = stream.read(out.bytes.size(), buf.data(), buf.size());
    if (!n) {
      out.error = n.error();
      break;
    }
    out.bytes.append(buf.data(), *n);
    ++out.pieces;
  }
  return out;
}

// The name of the newest report segment (names sort by first seq).
std::string newest_report_segment(const fs::path& dir) {
  std::string seg;
  for (const auto& [name, size] : segment_sizes(dir))
    if (name.rfind("report-", 0) == 0) seg = name;
  return seg;
}

TEST_F(SpoolTest, APayloadStreamReadInPiecesIsThePayloadAndStartsOverAtZero) {
  auto s = open_spool(options(1 << 20, 1024));
  ASSERT_TRUE(s);
  append_reports(*s, 2, 100'000);
  auto entries = s->peek_payloads(std::numeric_limits<std::uint64_t>::max());
  ASSERT_TRUE(entries);
  ASSERT_EQ(entries->size(), 2U);
  report::SpoolPayloadStream stream((*entries)[1].payload);
  EXPECT_EQ(stream.size(), 100'000U);
  const auto whole = stream_all(stream, 7000);
  ASSERT_FALSE(whole.error) << whole.error->message();
  EXPECT_EQ(whole.bytes, payload_of(2, 100'000));
  EXPECT_EQ(whole.pieces, 15U);
  EXPECT_FALSE(stream.corrupt());
  // Started over at 0 (an HTTP client resending on a new connection), after a part or after the whole.
  char buf[5000];
  ASSERT_TRUE(stream.read(0, buf, sizeof buf));
  ASSERT_TRUE(stream.read(5000, buf, sizeof buf));
  const auto again = stream_all(stream, 65536);
  ASSERT_FALSE(again.error) << again.error->message();
  EXPECT_EQ(again.bytes, payload_of(2, 100'000));
  // Reads elsewhere than where the last one ended are refused, and say nothing about the record.
  ASSERT_TRUE(stream.read(0, buf, sizeof buf));
  EXPECT_FALSE(stream.read(4000, buf, sizeof buf));
  EXPECT_FALSE(stream.read(6000, buf, sizeof buf));
  EXPECT_FALSE(stream.corrupt());
  auto next = stream.read(5000, buf, sizeof buf);
  ASSERT_TRUE(next) << "the refused reads did not move the stream";
  EXPECT_EQ(std::string(buf, *next), payload_of(2, 100'000).substr(5000, 5000));
  report::SpoolPayloadStream fresh((*entries)[0].payload);
  EXPECT_FALSE(fresh.read(100, buf, sizeof buf)) << "not before its start";
  EXPECT_FALSE(fresh.corrupt());
  const auto first = stream_all(fresh, 100'000);
  ASSERT_FALSE(first.error);
  EXPECT_EQ(first.bytes, payload_of(1, 100'000));
  EXPECT_EQ(first.pieces, 1U);
  EXPECT_FALSE(fresh.read(100'000, buf, sizeof buf)) << "past the end";
}

TEST_F(SpoolTest, APayloadStreamRefusesTheLastPieceOfAChangedRecordAndAChangedHeaderAtOnce) {
  auto s = open_spool(options(1 << 20, 1024));  // a segment for each record
  ASSERT_TRUE(s);
  append_reports(*s, 1, 100'000);
  auto entries = s->peek_payloads(std::numeric_limits<std::uint64_t>::max());
  ASSERT_TRUE(entries);
  ASSERT_EQ(entries->size(), 1U);
  const fs::path seg = tmp / "spool" / newest_report_segment(tmp / "spool");
  // A payload byte early in the record changed on disk: every piece but the last is handed out (nothing in
  // them can tell), the last is refused.
  flip_byte(seg, kSegmentHeader + kRecordHeader + 1234);
  report::SpoolPayloadStream stream((*entries)[0].payload);
  for (int round = 0; round < 2; ++round) {
    const auto r = stream_all(stream, 7000);
    ASSERT_TRUE(r.error) << "a changed record was handed out whole";
    EXPECT_NE(r.error->message().find("checksum"), std::string::npos) << r.error->message();
    EXPECT_EQ(r.pieces, 14U) << "the pieces before the last are not held back";
    EXPECT_EQ(r.bytes.size(), 98'000U);
    EXPECT_TRUE(stream.corrupt());
    // Starting over reads it again (and clears the verdict until the end says it again).
    char buf[16];
    ASSERT_TRUE(stream.read(0, buf, sizeof buf));
    EXPECT_FALSE(stream.corrupt());
    ASSERT_TRUE(stream.read(16, buf, sizeof buf));
    stream = report::SpoolPayloadStream((*entries)[0].payload);
  }
  // One piece for the whole record: refused at once.
  const auto one = stream_all(stream, 200'000);
  ASSERT_TRUE(one.error);
  EXPECT_EQ(one.pieces, 0U);
  EXPECT_TRUE(stream.corrupt());

  // A changed header (the seq field) fails the first read, before any byte is handed out.
  ASSERT_TRUE(s->ack(1));
  append_reports(*s, 1, 100'000);
  auto later = s->peek_payloads(1);
  ASSERT_TRUE(later);
  ASSERT_EQ(later->size(), 1U);
  EXPECT_EQ((*later)[0].seq, 2U);
  flip_byte(tmp / "spool" / newest_report_segment(tmp / "spool"), kSegmentHeader + 16);
  report::SpoolPayloadStream header((*later)[0].payload);
  char buf[4096];
  auto n = header.read(0, buf, sizeof buf);
  ASSERT_FALSE(n);
  EXPECT_NE(n.error().message().find("header"), std::string::npos) << n.error().message();
  EXPECT_TRUE(header.corrupt());
  EXPECT_FALSE(header.read(4096, buf, sizeof buf)) << "nothing to continue after a failed start";
  EXPECT_TRUE(header.corrupt()) << "a refused read keeps the record's verdict";

  // A record cut short on disk (shorter than the index says) cannot be read: the record's fault too.
  ASSERT_TRUE(s->ack(2));
  append_reports(*s, 1, 100'000);
  auto cut = s->peek_payloads(1);
  ASSERT_TRUE(cut);
  const fs::path cut_seg = tmp / "spool" / newest_report_segment(tmp / "spool");
  fs::resize_file(cut_seg, kSegmentHeader + kRecordHeader + 50'000);
  report::SpoolPayloadStream shortened((*cut)[0].payload);
  const auto r = stream_all(shortened, 7000);
  ASSERT_TRUE(r.error);
  EXPECT_EQ(r.bytes.size(), 49'000U);
  EXPECT_TRUE(shortened.corrupt());
}

}  // namespace

// The spool's checksum (ISA-L) is zlib's CRC-32, bit for bit: every length around ISA-L's 16- and 64-byte
// folding steps, every alignment, any start value, chained pieces, and a large buffer.
TEST(SpoolCrc32, IsZlibsChecksumForEveryLengthAlignmentStartAndChaining) {
  std::mt19937_64 rng(5);
  std::vector<unsigned char> buf((1 << 20) + 64);
  for (auto& b : buf) b = static_cast<unsigned char>(rng());
  const auto zlib = [](std::uint32_t crc, const unsigned char* p, std::size_t n) {
    return static_cast<std::uint32_t>(crc32_z(crc, p, n));
  };
  for (std::size_t len = 0; len < 600; ++len)
    for (const std::size_t offset :
         {std::size_t{0}, std::size_t{1}, std::size_t{3}, std::size_t{8}, std::size_t{15}}) {
      const auto start = len % 4 == 0 ? 0U : static_cast<std::uint32_t>(rng());
      const unsigned char* p = buf.data() + offset;
      ASSERT_EQ(report::crc32_update(start, p, len), zlib(start, p, len)) << len << " at +" << offset;
    }
  // Chained in uneven pieces, as the spool's sink and verifier feed it.
  std::uint32_t chained = 0;
  for (std::size_t at = 0, step = 1; at < buf.size(); at += step, step = step * 3 % 70001 + 1)
    chained = report::crc32_update(chained, buf.data() + at, std::min(step, buf.size() - at));
  EXPECT_EQ(chained, zlib(0, buf.data(), buf.size()));
  // All ones and all zeros (carries through every folding constant).
  std::vector<unsigned char> ones(4096, 0xff), zeros(4096, 0);
  EXPECT_EQ(report::crc32_update(0, ones.data(), ones.size()), zlib(0, ones.data(), ones.size()));
  EXPECT_EQ(report::crc32_update(0xffffffffU, zeros.data(), zeros.size()),
            zlib(0xffffffffU, zeros.data(), zeros.size()));
  const unsigned char check[] = "123456789";
  EXPECT_EQ(report::crc32_update(0, check, 9), 0xCBF43926U);
}
