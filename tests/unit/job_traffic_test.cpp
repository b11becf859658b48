// The per-pair traffic of a job's ranks (aggregator/services/job_traffic.h, the job diagnosis' volumes):
// one direction per pair, a direction several hosts reported counted once, addresses outside the job and
// pairs the job does not have left out.
#include "services/job_traffic.h"

#include <gtest/gtest.h>

namespace hsns::services {
namespace {

using store::FlowDirectionTotals;

FlowDirectionTotals direction(std::string host, std::string src, std::string dst, std::uint32_t sport,
                              std::uint64_t bytes) {
  FlowDirectionTotals d;
  d.host = std::move(host);
  d.src = std::move(src);
  d.dst = std::move(dst);
  d.sport = sport;
  d.dest_qp = 0x101;
  d.bytes = bytes;
  d.packets = bytes / 100;
  return d;
}

// Rank 0 on 10.0.0.1 (and its second port 10.0.1.1), rank 1 on 10.0.0.2, rank 2 on 10.0.0.3.
const RankAddresses kAddresses = {{0, {"10.0.0.1", "10.0.1.1"}}, {1, {"10.0.0.2"}}, {2, {"10.0.0.3"}}};

TEST(JobTraffic, OneDirectionPerPairEachFlowOnce) {
  const std::vector<FlowDirectionTotals> dirs = {
      direction("h1", "10.0.0.1", "10.0.0.2", 1, 1000),  // 0 -> 1, the sender's report
      direction("h2", "10.0.0.1", "10.0.0.2", 1, 900),   // the same packets at the receiver
      direction("h1", "10.0.1.1", "10.0.0.2", 2, 50),    // 0 -> 1 from rank 0's other port
      direction("h2", "10.0.0.2", "10.0.0.1", 3, 7),     // 1 -> 0: not the pair (0, 1)
      direction("h1", "10.0.0.1", "10.9.9.9", 4, 5000),  // to an address outside the job
      direction("h3", "10.0.0.3", "10.0.0.1", 5, 300),   // 2 -> 0: the job has no such pair
  };
  const auto traffic = pair_traffic(dirs, kAddresses, {{0, 1}, {1, 0}, {1, 2}});
  ASSERT_EQ(traffic.size(), 2U);
  const auto& forward = traffic.at({0, 1});
  EXPECT_EQ(forward.bytes, 1050U);
  EXPECT_EQ(forward.packets, 10U);
  EXPECT_EQ(forward.flows, 2U);
  EXPECT_EQ(traffic.at({1, 0}).bytes, 7U);
  EXPECT_FALSE(traffic.contains({1, 2}));  // no flow data: absent, not zero
}

TEST(JobTraffic, TheLargestReportOfADirectionCountsWhicheverComesFirst) {
  const std::vector<FlowDirectionTotals> dirs = {
      direction("h2", "10.0.0.1", "10.0.0.2", 1, 900),
      direction("h1", "10.0.0.1", "10.0.0.2", 1, 1000),
      direction("h3", "10.0.0.1", "10.0.0.2", 1, 950),
  };
  const auto traffic = pair_traffic(dirs, kAddresses, {{0, 1}});
  EXPECT_EQ(traffic.at({0, 1}).bytes, 1000U);
  EXPECT_EQ(traffic.at({0, 1}).flows, 1U);
  EXPECT_TRUE(pair_traffic({}, kAddresses, {{0, 1}}).empty());
}

}  // namespace
}  // namespace hsns::services
