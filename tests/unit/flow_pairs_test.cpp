// The flow pairing of GET /api/v1/flows (aggregator/api/telemetry/flow_pairs.h): which directions become
// one row, which stay alone, the orientation of a pair and the order of the rows.
#include "api/telemetry/flow_pairs.h"

#include <gtest/gtest.h>

namespace hsns::telemetry_api {
namespace {

using store::FlowDirectionTotals;

FlowDirectionTotals direction(std::string host, std::string src, std::string dst, std::uint32_t dest_qp,
                              std::optional<std::uint32_t> src_qp, std::uint64_t bytes) {
  FlowDirectionTotals d;
  d.host = std::move(host);
  d.src = std::move(src);
  d.dst = std::move(dst);
  d.dest_qp = dest_qp;
  d.src_qp = src_qp;
  d.bytes = bytes;
  d.packets = bytes / 100;
  return d;
}

TEST(FlowPairs, SwappedAddressesAndQpsOfOneHostAreOneRow) {
  const std::vector<FlowDirectionTotals> dirs = {
      direction("h1", "10.0.0.2", "10.0.0.1", 0x101, std::nullopt, 500),  // b -> a, source QP unknown
      direction("h1", "10.0.0.1", "10.0.0.2", 0x202, 0x101, 1000),        // a -> b
  };
  const auto pairs = pair_flow_directions(dirs);
  ASSERT_EQ(pairs.size(), 1U);
  EXPECT_EQ(pairs[0].bytes, 1500U);
  EXPECT_EQ(pairs[0].packets, 15U);
  EXPECT_EQ(pairs[0].forward->src, "10.0.0.1");  // the smaller src is forward
  ASSERT_NE(pairs[0].reverse, nullptr);
  const auto row = flow_pair_json(pairs[0]);
  EXPECT_EQ(row["src_qp"], 0x101);
  EXPECT_EQ(row["dst_qp"], 0x202);
  EXPECT_EQ(row["reverse"]["dest_qp"], 0x101);
}

TEST(FlowPairs, WhatDoesNotMatchStaysAlone) {
  const std::vector<FlowDirectionTotals> dirs = {
      direction("h1", "10.0.0.1", "10.0.0.2", 0x202, 0x101, 1000),
      direction("h2", "10.0.0.2", "10.0.0.1", 0x101, 0x202, 900),  // another reporting host
      direction("h1", "10.0.0.2", "10.0.0.1", 0x101, 0x303, 800),  // its source QP is not 0x202
      direction("h1", "10.0.0.3", "10.0.0.4", 0x404, std::nullopt, 700),
      direction("h1", "10.0.0.4", "10.0.0.3", 0x505, std::nullopt, 600),  // neither source QP known
  };
  const auto pairs = pair_flow_directions(dirs);
  ASSERT_EQ(pairs.size(), 5U);
  for (const auto& p : pairs) EXPECT_EQ(p.reverse, nullptr);
  // Most bytes first.
  EXPECT_EQ(pairs.front().bytes, 1000U);
  EXPECT_EQ(pairs.back().bytes, 600U);
  EXPECT_TRUE(flow_pair_json(pairs.back())["src_qp"].is_null());
  EXPECT_TRUE(flow_pair_json(pairs.back())["src_process"].is_null());
}

TEST(FlowPairs, ProcessesComeFromEitherDirection) {
  std::vector<FlowDirectionTotals> dirs = {
      direction("h1", "10.0.0.1", "10.0.0.2", 0x202, 0x101, 1000),
      direction("h1", "10.0.0.2", "10.0.0.1", 0x101, 0x202, 10),
  };
  dirs[1].src_process = store::QpOwner{"h2", "mlx5_0", 0x202, 7, "b", false, 1};  // b's QP: the row's dst
  dirs[1].dst_process = store::QpOwner{"h1", "mlx5_0", 0x101, 6, "a", false, 1};  // a's QP: the row's src
  const auto pairs = pair_flow_directions(dirs);
  ASSERT_EQ(pairs.size(), 1U);
  const auto row = flow_pair_json(pairs[0]);
  EXPECT_EQ(row["src"], "10.0.0.1");
  EXPECT_EQ(row["src_process"]["comm"], "a");
  EXPECT_EQ(row["dst_process"]["comm"], "b");
  EXPECT_EQ(row["dst_process"]["pid"], 7);
}

}  // namespace
}  // namespace hsns::telemetry_api
