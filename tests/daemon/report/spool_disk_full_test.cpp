// The report spool on a full filesystem (root): a small tmpfs the test mounts in its own temporary
// directory, filled by a file of the test and then by appends. The failing append returns an error naming
// the segment's path, every record stored before is intact (also after a reopen), and once the test frees
// space appends work again. With not one page left, an acknowledgement fails and changes nothing. Not being
// able to mount is a failure, not a skip.
#include <gtest/gtest.h>
#include <sys/mount.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <string>

#include "spool.h"
#include "spool_files.h"
#include "support/temp_dir.h"

namespace {

namespace fs = std::filesystem;
namespace report = hsns::daemon::report;
using hsns::testing::TempDir;
using namespace hsns::testing::spool;
using report::SpoolKind;

class SpoolDiskFullTest : public ::testing::Test {
 protected:
  void SetUp() override {
    mount_point_ = tmp_ / "fs";
    fs::create_directory(mount_point_);
    if (::mount("tmpfs", mount_point_.c_str(), "tmpfs", MS_NOSUID | MS_NODEV, "size=256k,mode=0700") != 0) {
      FAIL() << "cannot mount a tmpfs on " << mount_point_
             << " (the test needs root): " << std::strerror(errno);
    }
    mounted_ = true;
  }
  void TearDown() override {
    if (mounted_ && ::umount2(mount_point_.c_str(), MNT_DETACH) != 0) {
      ADD_FAILURE() << "cannot unmount " << mount_point_ << ": " << std::strerror(errno);
    }
  }

  TempDir tmp_{"hsns-spool-full"};
  fs::path mount_point_;
  bool mounted_ = false;
};

TEST_F(SpoolDiskFullTest, AppendFailsWithTheErrorNamingThePathLosesNothingAndRecoversWithSpace) {
  report::SpoolOptions o;
  o.dir = (mount_point_ / "spool").string();
  o.max_bytes = 16 << 20;  // far above the filesystem: the filesystem is what runs out
  o.segment_bytes = 64 << 10;
  const fs::path filler = mount_point_ / "filler";
  write_file(filler, std::string(160 << 10, 'f'));
  ASSERT_EQ(fs::file_size(filler), 160U << 10);

  auto s = open_spool(o);
  ASSERT_TRUE(s);
  const std::string payload(1000, 'r');
  std::uint64_t stored = 0;
  hsns::Result<std::uint64_t> r;
  for (int i = 0; i < 1000; ++i) {
    r = s->append(i % 4 == 0 ? SpoolKind::flow_batch : SpoolKind::telemetry_report, i % 4 == 0 ? 1 + i : 0,
                  payload);
    if (!r) break;
    stored = *r;
  }
  ASSERT_FALSE(r) << "256 KiB of tmpfs never filled up";
  EXPECT_GT(stored, 10U);
  EXPECT_EQ(r.error().kind, hsns::Error::Kind::unavailable);
  EXPECT_NE(r.error().message().find(o.dir + "/"), std::string::npos) << r.error().message();
  EXPECT_NE(r.error().message().find(std::strerror(ENOSPC)), std::string::npos) << r.error().message();

  // Everything stored before is there, in order, also after more appends on the full filesystem (one
  // may still fit in the slack of a segment's last page).
  auto check_all = [&](const report::Spool& spool) {
    const auto all = everything(spool);
    ASSERT_EQ(all.size(), stored);
    for (std::uint64_t i = 0; i < stored; ++i) {
      EXPECT_EQ(all[i].seq, i + 1);
      EXPECT_EQ(all[i].payload, payload);
    }
  };
  check_all(*s);
  for (int i = 0; i < 8; ++i) {
    auto again = s->append(SpoolKind::telemetry_report, 0, payload);
    if (again) {
      EXPECT_EQ(*again, ++stored);
    } else {
      EXPECT_EQ(again.error().kind, hsns::Error::Kind::unavailable) << again.error().message();
    }
  }
  check_all(*s);
  EXPECT_EQ(s->stats().drops_total, 0U);

  // Not one page left: an acknowledgement cannot be stored either, and changes nothing.
  {
    std::ofstream last(mount_point_ / "filler-last", std::ios::binary);
    const std::string page(4096, 'p');
    for (int i = 0; i < 1024 && last.write(page.data(), static_cast<std::streamsize>(page.size())); ++i) {
      last.flush();
    }
  }
  auto acked = s->ack(1);
  ASSERT_FALSE(acked) << "the state file was written on a full filesystem";
  EXPECT_EQ(acked.error().kind, hsns::Error::Kind::unavailable) << acked.error().message();
  EXPECT_NE(acked.error().message().find(o.dir + "/state.tmp"), std::string::npos) << acked.error().message();
  EXPECT_EQ(s->acked_seq(), 0U);
  check_all(*s);

  // A restart on the full filesystem reads it all back.
  s.reset();
  s = open_spool(o);
  ASSERT_TRUE(s);
  check_all(*s);
  EXPECT_EQ(s->stats().corrupt_records_total, 0U);

  // Space comes back: appends work and continue the seq.
  fs::remove(filler);
  fs::remove(mount_point_ / "filler-last");
  for (int i = 0; i < 20; ++i) {
    auto seq = s->append(SpoolKind::telemetry_report, 0, payload);
    ASSERT_TRUE(seq) << seq.error().message();
    EXPECT_EQ(*seq, stored + 1 + i);
  }
  ASSERT_TRUE(s->ack(stored));
  const auto rest = everything(*s);
  ASSERT_EQ(rest.size(), 20U);
  EXPECT_EQ(rest.front().seq, stored + 1);
  s.reset();
  s = open_spool(o);
  ASSERT_TRUE(s);
  EXPECT_EQ(everything(*s).size(), 20U);
}

}  // namespace
