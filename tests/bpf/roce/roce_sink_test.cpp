// The flow sink's harvest batches (daemon/flows/flow_sink.h): opening and closing epoch markers, the
// truncation of a batch a crash cut short when the sink is opened again, readers that count only complete
// batches, files of earlier versions, and the test-only crash hook (no root needed).
#include <gtest/gtest.h>
#include <signal.h>
#include <stdlib.h>
#include <unistd.h>

#include <cstdio>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "flow_sink.h"
#include "support/shell.h"
#include "support/temp_dir.h"

namespace {

using hsns::daemon::FlowBatch;
using hsns::daemon::FlowRecord;
using hsns::daemon::FlowSink;
using hsns::daemon::read_sink_batches;
using nlohmann::json;

using hsns::testing::read_file;

std::vector<std::string> lines_of(const std::string& text) {
  std::vector<std::string> out;
  std::istringstream in(text);
  for (std::string l; std::getline(in, l);) out.push_back(l);
  return out;
}

FlowBatch batch_of(std::uint64_t epoch, std::uint32_t n) {
  FlowBatch b;
  b.epoch = epoch;
  for (std::uint32_t i = 0; i < n; ++i) {
    FlowRecord r;
    r.key.ifindex = 3;
    r.key.family = 4;
    r.key.src[0] = 198;
    r.key.dst[0] = 198;
    r.key.sport = static_cast<std::uint16_t>(49152 + i);
    r.key.dest_qp = 100 + i;
    r.stats.packets = 10 + i;
    r.stats.bytes = 1000 + i;
    r.stats.op[ROCE_OP_SEND] = 10 + i;
    r.ifname = "rxe0";
    b.records.push_back(r);
  }
  return b;
}

class FlowSinkTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = tmp_.string();
    path_ = dir_ + "/flows.jsonl";
  }
  FlowSink open() {
    auto s = FlowSink::open(path_, "h1");
    EXPECT_TRUE(s) << s.error();
    return std::move(*s);
  }
  void append(const std::string& text) { std::ofstream(path_, std::ios::app) << text; }

  hsns::testing::TempDir tmp_{"hsns-sink-test"};
  std::string dir_;
  std::string path_;
  std::array<std::uint64_t, ROCE_CNT_MAX> counters_{};
};

TEST_F(FlowSinkTest, BatchIsOpenedAndClosedByEpochMarkers) {
  {
    auto sink = open();
    EXPECT_EQ(sink.last_epoch(), 0u);
    ASSERT_TRUE(sink.write(batch_of(5, 2), counters_));
    ASSERT_TRUE(sink.write(batch_of(6, 0), counters_));
    EXPECT_EQ(sink.last_epoch(), 6u);
  }
  const auto lines = lines_of(read_file(path_));
  ASSERT_EQ(lines.size(), 6u);
  const auto first = json::parse(lines[0]);
  EXPECT_EQ(first.at("type"), "batch");
  EXPECT_EQ(first.at("epoch"), 5);
  EXPECT_EQ(first.at("records"), 2);
  EXPECT_EQ(first.at("host"), "h1");
  for (int i : {1, 2}) {
    const auto f = json::parse(lines[static_cast<std::size_t>(i)]);
    EXPECT_EQ(f.at("type"), "flow");
    EXPECT_EQ(f.at("epoch"), 5);
  }
  const auto close = json::parse(lines[3]);
  EXPECT_EQ(close.at("type"), "counters");
  EXPECT_EQ(close.at("epoch"), 5);
  EXPECT_EQ(close.at("records"), 2);
  EXPECT_EQ(json::parse(lines[4]).at("epoch"), 6);
  EXPECT_EQ(json::parse(lines[5]).at("type"), "counters");
  std::size_t ignored = 9;
  const auto batches = read_sink_batches(read_file(path_), &ignored);
  ASSERT_EQ(batches.size(), 2u);
  EXPECT_EQ(batches[0].epoch, 5u);
  EXPECT_EQ(batches[0].flows.size(), 2u);
  EXPECT_EQ(batches[1].epoch, 6u);
  EXPECT_TRUE(batches[1].flows.empty());
  EXPECT_EQ(ignored, 0u);
  // Reopened: the last complete epoch, nothing cut.
  auto again = open();
  EXPECT_EQ(again.last_epoch(), 6u);
  EXPECT_EQ(again.truncated_bytes(), 0u);
}

TEST_F(FlowSinkTest, OpenTruncatesATornBatch) {
  { ASSERT_TRUE(open().write(batch_of(7, 3), counters_)); }
  const std::string complete = read_file(path_);
  // Epoch 8 cut short: its opening marker, one flow line and half of the next.
  auto lines = lines_of(complete);
  const std::string torn = R"({"epoch":8,"host":"h1","records":3,"type":"batch"})"
                           "\n" +
                           lines[1] + "\n" + lines[2].substr(0, lines[2].size() / 2);
  append(torn);
  std::size_t ignored = 0;
  const auto before = read_sink_batches(read_file(path_), &ignored);
  ASSERT_EQ(before.size(), 1u);  // readers skip the torn batch even before the truncation
  EXPECT_EQ(before[0].epoch, 7u);
  EXPECT_EQ(ignored, 3u);
  auto sink = open();
  EXPECT_EQ(sink.last_epoch(), 7u);
  EXPECT_EQ(sink.truncated_bytes(), torn.size());
  EXPECT_EQ(read_file(path_), complete);
  // The batch written again after the restart follows the complete one.
  ASSERT_TRUE(sink.write(batch_of(8, 3), counters_));
  const auto after = read_sink_batches(read_file(path_), &ignored);
  ASSERT_EQ(after.size(), 2u);
  EXPECT_EQ(after[1].epoch, 8u);
  EXPECT_EQ(after[1].flows.size(), 3u);
  EXPECT_EQ(ignored, 0u);
}

TEST_F(FlowSinkTest, TornFirstBatchAndTornClosingMarker) {
  { ASSERT_TRUE(open().write(batch_of(1, 2), counters_)); }
  const std::string text = read_file(path_);
  // Cut inside the closing marker: no complete batch at all.
  std::ofstream(path_, std::ios::trunc) << text.substr(0, text.size() - 20);
  auto sink = open();
  EXPECT_EQ(sink.last_epoch(), 0u);
  EXPECT_EQ(sink.truncated_bytes(), text.size() - 20);
  EXPECT_EQ(read_file(path_), "");
}

TEST_F(FlowSinkTest, ForeignContentAfterTheLastBatchIsNotTruncated) {
  { ASSERT_TRUE(open().write(batch_of(3, 1), counters_)); }
  append("{\"type\":\"something else\"}\n");
  const std::string text = read_file(path_);
  auto s = FlowSink::open(path_, "h1");
  ASSERT_FALSE(s);
  EXPECT_NE(s.error().find("not truncated"), std::string::npos) << s.error();
  EXPECT_EQ(read_file(path_), text);
}

TEST_F(FlowSinkTest, ReadersCountOnlyCompleteBatches) {
  { ASSERT_TRUE(open().write(batch_of(1, 2), counters_)); }
  const auto one = lines_of(read_file(path_));
  std::string text = read_file(path_);
  // Epoch 2 without its closing marker, then epoch 3 complete: 2 is skipped.
  text += R"({"epoch":2,"host":"h1","records":2,"type":"batch"})"
          "\n" +
          one[1] + "\n";
  text += R"({"epoch":3,"host":"h1","records":1,"type":"batch"})"
          "\n";
  auto f3 = json::parse(one[1]);
  f3["epoch"] = 3;
  text += f3.dump() + "\n" + R"({"counters":{},"epoch":3,"records":1,"type":"counters"})" + "\n";
  // Epoch 4 whose closing marker names another epoch, epoch 5 with a missing flow line.
  text += R"({"epoch":4,"records":0,"type":"batch"})"
          "\n"
          R"({"epoch":9,"records":0,"type":"counters"})"
          "\n";
  text += R"({"epoch":5,"records":2,"type":"batch"})"
          "\n" +
          one[1] + "\n" + R"({"epoch":5,"records":2,"type":"counters"})" + "\n";
  std::size_t ignored = 0;
  const auto batches = read_sink_batches(text, &ignored);
  ASSERT_EQ(batches.size(), 2u);
  EXPECT_EQ(batches[0].epoch, 1u);
  EXPECT_EQ(batches[1].epoch, 3u);
  EXPECT_EQ(ignored, 2u + 2u + 3u);
}

TEST_F(FlowSinkTest, FilesOfEarlierVersions) {
  // Flow lines without epoch closed by a counters line without epoch; then a harvest cut short.
  const std::string flow = R"({"type":"flow","packets":1,"bytes":2})";
  std::ofstream(path_) << flow << "\n"
                       << flow << "\n"
                       << R"({"type":"counters","records":2})"
                       << "\n"
                       << flow << "\n";
  std::size_t ignored = 0;
  const auto batches = read_sink_batches(read_file(path_), &ignored);
  ASSERT_EQ(batches.size(), 1u);
  EXPECT_EQ(batches[0].epoch, 0u);
  EXPECT_EQ(batches[0].flows.size(), 2u);
  EXPECT_EQ(ignored, 1u);
  auto sink = open();
  EXPECT_EQ(sink.last_epoch(), 0u);
  EXPECT_EQ(sink.truncated_bytes(), flow.size() + 1);
}

TEST_F(FlowSinkTest, TestCrashHookKillsInTheMiddleOfABatch) {
  { ASSERT_TRUE(open().write(batch_of(1, 4), counters_)); }
  const std::string complete = read_file(path_);
  EXPECT_EXIT(
      {
        setenv("HSNS_TEST_CRASH_AFTER_DRAIN", "partial-write", 1);
        auto s = FlowSink::open(path_, "h1");
        if (s) (void)s->write(batch_of(2, 4), counters_);
        _exit(0);
      },
      ::testing::KilledBySignal(SIGKILL), "");
  const std::string torn = read_file(path_);
  ASSERT_GT(torn.size(), complete.size());
  EXPECT_NE(torn.back(), '\n');  // half a line
  EXPECT_EQ(read_sink_batches(torn).size(), 1u);
  auto sink = open();
  EXPECT_EQ(sink.last_epoch(), 1u);
  EXPECT_EQ(read_file(path_), complete);
}

}  // namespace
