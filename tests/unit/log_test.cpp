// hsns::log (include/hsns/log.h): the prefix styles (journald priority under systemd, "program: level: "
// elsewhere), the threshold, level names, and one intact line per message from many threads. stderr is
// redirected to a real temporary file for each test and restored afterwards.
#include "hsns/log.h"

#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdlib>
#include <map>
#include <optional>
#include <regex>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "support/stderr_capture.h"

namespace {

namespace log = hsns::log;

// Points stderr at a fresh file for the lifetime of the fixture.
class LogTest : public ::testing::Test {
 protected:
  void SetUp() override {
    capture_.emplace(::testing::UnitTest::GetInstance()->current_test_info()->name());
    ::unsetenv("JOURNAL_STREAM");
  }
  void TearDown() override {
    capture_.reset();
    ::unsetenv("JOURNAL_STREAM");
    log::init("hsns", log::Level::info);
  }
  std::string output() const { return capture_->output(); }
  // "<device>:<inode>" of the file stderr now writes to, as systemd sets $JOURNAL_STREAM.
  static std::string stderr_identity() {
    struct stat st {};
    EXPECT_EQ(::fstat(STDERR_FILENO, &st), 0);
    return std::to_string(st.st_dev) + ":" + std::to_string(st.st_ino);
  }

  std::optional<hsns::testing::StderrCapture> capture_;
};

TEST_F(LogTest, OnAFileOrTerminalEachLineStartsWithProgramAndLevel) {
  log::init("hsnsd");
  HSNS_LOG(error) << "cannot open " << 42;
  HSNS_LOG(warning) << "drift repaired";
  HSNS_LOG(notice) << "batch removed";
  HSNS_LOG(info) << "started";
  log::write(log::Level::info, "with newline\n");
  EXPECT_EQ(output(),
            "hsnsd: error: cannot open 42\n"
            "hsnsd: warning: drift repaired\n"
            "hsnsd: notice: batch removed\n"
            "hsnsd: info: started\n"
            "hsnsd: info: with newline\n");
}

TEST_F(LogTest, UnderSystemdEachLineStartsWithTheJournalPriority) {
  ::setenv("JOURNAL_STREAM", stderr_identity().c_str(), 1);
  log::init("hsnsd", log::Level::debug);
  HSNS_LOG(error) << "e";
  HSNS_LOG(warning) << "w";
  HSNS_LOG(notice) << "n";
  HSNS_LOG(info) << "i";
  HSNS_LOG(debug) << "d";
  EXPECT_EQ(output(), "<3>e\n<4>w\n<5>n\n<6>i\n<7>d\n");
}

TEST_F(LogTest, AJournalStreamOfAnotherFileIsNotTrusted) {
  // A child that inherited $JOURNAL_STREAM but whose stderr was redirected elsewhere.
  ::setenv("JOURNAL_STREAM", "1:1", 1);
  log::init("hsns-aggregator");
  HSNS_LOG(info) << "listening";
  ::setenv("JOURNAL_STREAM", "not a device", 1);
  log::init("hsns-aggregator");
  HSNS_LOG(info) << "stopped";
  EXPECT_EQ(output(), "hsns-aggregator: info: listening\nhsns-aggregator: info: stopped\n");
}

TEST_F(LogTest, MessagesBelowTheThresholdAreNeitherWrittenNorFormatted) {
  log::init("hsnsd", log::Level::warning);
  int formatted = 0;
  auto count = [&] { return ++formatted; };
  HSNS_LOG(info) << "info " << count();
  HSNS_LOG(debug) << "debug " << count();
  HSNS_LOG(notice) << "notice " << count();
  HSNS_LOG(warning) << "warning " << count();
  HSNS_LOG(error) << "error " << count();
  EXPECT_EQ(formatted, 2);
  EXPECT_FALSE(log::enabled(log::Level::info));
  EXPECT_TRUE(log::enabled(log::Level::error));
  log::set_level(log::Level::debug);
  HSNS_LOG(debug) << "now visible";
  EXPECT_EQ(output(), "hsnsd: warning: warning 1\nhsnsd: error: error 2\nhsnsd: debug: now visible\n");
}

TEST_F(LogTest, LevelNamesParseForConfigurationAndFlags) {
  const std::map<std::string, log::Level> names = {{"error", log::Level::error},
                                                   {"warning", log::Level::warning},
                                                   {"notice", log::Level::notice},
                                                   {"info", log::Level::info},
                                                   {"debug", log::Level::debug}};
  for (const auto& [text, level] : names) {
    log::Level parsed = log::Level::error;
    EXPECT_TRUE(log::parse_level(text, parsed)) << text;
    EXPECT_EQ(parsed, level) << text;
  }
  for (const char* bad : {"", "INFO", "warn", "7", "info "}) {
    log::Level parsed = log::Level::notice;
    EXPECT_FALSE(log::parse_level(bad, parsed)) << bad;
    EXPECT_EQ(parsed, log::Level::notice) << "a rejected name leaves the level alone: " << bad;
  }
}

TEST_F(LogTest, ManyThreadsWriteWholeLinesThatNeverMix) {
  log::init("hsnsd");
  constexpr int kThreads = 8;
  constexpr int kMessages = 2000;
  std::vector<std::thread> threads;
  threads.reserve(kThreads);
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([t] {
      for (int m = 0; m < kMessages; ++m) {
        // Lengths from 1 to 600 characters, so some lines are longer than a small buffer.
        const std::string payload(static_cast<std::size_t>(1 + (m * 37 + t * 11) % 600),
                                  static_cast<char>('a' + t));
        HSNS_LOG(info) << "t" << t << " m" << m << " " << payload << " end";
      }
    });
  }
  for (auto& th : threads) th.join();

  const std::regex line_re(R"(hsnsd: info: t(\d+) m(\d+) ([a-z]+) end)");
  std::istringstream in(output());
  std::string line;
  std::vector<std::vector<bool>> seen(kThreads, std::vector<bool>(kMessages, false));
  int lines = 0;
  while (std::getline(in, line)) {
    ++lines;
    std::smatch m;
    ASSERT_TRUE(std::regex_match(line, m, line_re)) << "a mixed or torn line: " << line.substr(0, 120);
    const int t = std::stoi(m[1]);
    const int n = std::stoi(m[2]);
    ASSERT_LT(t, kThreads);
    ASSERT_LT(n, kMessages);
    const std::string payload = m[3];
    EXPECT_EQ(payload.size(), static_cast<std::size_t>(1 + (n * 37 + t * 11) % 600)) << line.substr(0, 120);
    EXPECT_EQ(payload.find_first_not_of(static_cast<char>('a' + t)), std::string::npos)
        << line.substr(0, 120);
    EXPECT_FALSE(seen[t][n]) << "written twice: " << line.substr(0, 120);
    seen[t][n] = true;
  }
  EXPECT_EQ(lines, kThreads * kMessages);
}

}  // namespace
