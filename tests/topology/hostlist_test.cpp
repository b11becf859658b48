#include "topology/hostlist.h"

#include <gtest/gtest.h>

namespace hsns::topology {
namespace {

std::vector<std::string> numbered(const std::string& prefix, int from, int to, int width) {
  std::vector<std::string> out;
  for (int i = from; i <= to; ++i) {
    std::string digits = std::to_string(i);
    out.push_back(prefix + std::string(width - digits.size(), '0') + digits);
  }
  return out;
}

TEST(Hostlist, CompressesConsecutiveRuns) {
  EXPECT_EQ(compress_hostlist(numbered("host", 1, 16, 3)), "host[001-016]");
  auto names = numbered("host", 1, 4, 3);
  names.push_back("host012");
  names.push_back("host018");
  names.push_back("host019");
  names.push_back("host020");
  EXPECT_EQ(compress_hostlist(names), "host[001-004,012,018-020]");
}

TEST(Hostlist, KeepsSinglesAndLiteralsAndSortsAndDeduplicates) {
  EXPECT_EQ(compress_hostlist({"tux7"}), "tux7");
  EXPECT_EQ(compress_hostlist({"login", "tux2", "tux1", "tux2"}), "login,tux[1-2]");
  EXPECT_EQ(compress_hostlist({"su1", "su0", "pod0"}), "pod0,su[0-1]");
  EXPECT_EQ(compress_hostlist({}), "");
  // Different widths are different groups: host9 and host010 are not a run.
  EXPECT_EQ(compress_hostlist({"host9", "host010", "host011"}), "host9,host[010-011]");
}

TEST(Hostlist, ExpandsSlurmExamples) {
  auto tux = expand_hostlist("tux[0-3,12,18-20]");
  ASSERT_TRUE(tux.has_value()) << tux.error();
  EXPECT_EQ(*tux,
            (std::vector<std::string>{"tux0", "tux1", "tux2", "tux3", "tux12", "tux18", "tux19", "tux20"}));
  auto mixed = expand_hostlist("login,host[08-10],rack[1-2]-a");
  ASSERT_TRUE(mixed.has_value()) << mixed.error();
  EXPECT_EQ(*mixed, (std::vector<std::string>{"login", "host08", "host09", "host10", "rack1-a", "rack2-a"}));
}

TEST(Hostlist, RoundTrip) {
  auto names = numbered("host", 1, 1000, 4);
  names.erase(names.begin() + 500, names.begin() + 510);
  auto expanded = expand_hostlist(compress_hostlist(names));
  ASSERT_TRUE(expanded.has_value());
  EXPECT_EQ(*expanded, names);
  EXPECT_EQ(compress_hostlist(names), "host[0001-0500,0511-1000]");
}

TEST(Hostlist, RejectsMalformedExpressions) {
  for (const char* bad :
       {"", "host[1-", "host[3-1]", "host[a-b]", "[1-2]", "host[]", "a,,b", "host[1,]", "a,"}) {
    auto result = expand_hostlist(bad);
    EXPECT_FALSE(result.has_value()) << bad;
    if (!result) {
      EXPECT_NE(result.error().find("hostlist '"), std::string::npos);
    }
  }
}

}  // namespace
}  // namespace hsns::topology
