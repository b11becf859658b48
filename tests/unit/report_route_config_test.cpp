// The pieces of the report route that need no server: agent tokens bound to a host (http/auth.h), the
// route's own body limit (a "*" segment in http::ServerLimits' path limits) and the telemetry retention
// settings of the configuration (config.h).
#include <gtest/gtest.h>

#include "config.h"
#include "http/auth.h"
#include "http/server.h"

namespace hsns {
namespace {

const char* kTokens = R"(tokens:
  - {name: ops, role: operator, token: operator-token-0123456789}
  - {name: hsnsd, role: agent, token: agent-token-0123456789ab}
  - {name: hsnsd-n1, role: agent, host: node-1, token: agent-node-1-token-0123}
)";

TEST(TokenHostBinding, AgentTokensMayBeBoundToAHost) {
  auto auth = TokenAuthenticator::load_yaml(kTokens);
  ASSERT_TRUE(auth) << auth.error();
  EXPECT_EQ(auth->unbound_agents(), std::vector<std::string>{"hsnsd"});
  const auto bound = auth->authenticate("Bearer agent-node-1-token-0123");
  ASSERT_TRUE(bound);
  EXPECT_EQ(bound->host, "node-1");
  EXPECT_FALSE(host_binding_refusal(*bound, {{"host", "node-1"}}));
  const auto refused = host_binding_refusal(*bound, {{"host", "node-2"}});
  ASSERT_TRUE(refused);
  EXPECT_EQ(refused->status, 403);
  EXPECT_NE(refused->detail.find("bound to host node-1"), std::string::npos) << refused->detail;
  // Routes without {host} are not concerned; unbound tokens act for every host.
  EXPECT_FALSE(host_binding_refusal(*bound, {{"port_id", "x"}}));
  const auto unbound = auth->authenticate("Bearer agent-token-0123456789ab");
  ASSERT_TRUE(unbound);
  EXPECT_EQ(unbound->host, "");
  EXPECT_FALSE(host_binding_refusal(*unbound, {{"host", "node-2"}}));
}

TEST(TokenHostBinding, BadBindingsAreStartUpErrorsNamingTheEntry) {
  auto operator_bound = TokenAuthenticator::load_yaml(
      "tokens:\n  - {name: ops, role: operator, host: n1, token: operator-token-0123456789}\n");
  ASSERT_FALSE(operator_bound);
  EXPECT_NE(operator_bound.error().find("tokens[0]: only agent tokens are bound to a host"),
            std::string::npos)
      << operator_bound.error();
  auto bad_name = TokenAuthenticator::load_yaml(
      "tokens:\n  - {name: a, role: agent, host: 'no/slash', token: agent-token-0123456789ab}\n");
  ASSERT_FALSE(bad_name);
  EXPECT_NE(bad_name.error().find("tokens[0]: host:"), std::string::npos) << bad_name.error();
}

TEST(ReportBodyLimit, TheReportRouteHasItsOwnLimitThroughAWildcardSegment) {
  const auto limits = with_report_body_limit(with_topology_body_limit({}, 8 << 20), 4 << 20);
  EXPECT_EQ(limits.body_limit_for("/api/v1/agents/node-1/reports"), std::size_t{4} << 20);
  EXPECT_EQ(limits.body_limit_for("/api/v1/agents/node-1/reports?x=1"), std::size_t{4} << 20);
  EXPECT_EQ(limits.body_limit_for("/api/v1/agents/node-1/status"), limits.body_limit);
  EXPECT_EQ(limits.body_limit_for("/api/v1/agents//reports"), limits.body_limit);
  EXPECT_EQ(limits.body_limit_for("/api/v1/agents/node-1/reportsx"), limits.body_limit);
  EXPECT_EQ(limits.body_limit_for("/api/v1/topology/devices"), std::size_t{8} << 20);
  EXPECT_EQ(limits.largest_body_limit(), std::size_t{8} << 20);
  // Set again: one entry, the new value.
  const auto again = with_report_body_limit(limits, 2048);
  EXPECT_EQ(again.path_body_limits.size(), limits.path_body_limits.size());
  EXPECT_EQ(again.body_limit_for("/api/v1/agents/h/reports"), 2048U);
}

TEST(TelemetryConfig, RetentionSettingsAreReadAndCheckedByName) {
  auto c = load_config_yaml(
      "http:\n  report_body_limit_bytes: 1048576\ntelemetry:\n  max_age_s: 3600\n  max_bytes: 1000000\n"
      "  prune_interval_ms: 500\n",
      {});
  ASSERT_TRUE(c) << c.error();
  EXPECT_EQ(c->telemetry_max_age, std::chrono::seconds(3600));
  EXPECT_EQ(c->telemetry_max_bytes, 1'000'000U);
  EXPECT_EQ(c->telemetry_prune_interval, std::chrono::milliseconds(500));
  EXPECT_EQ(c->limits.body_limit_for("/api/v1/agents/h/reports"), 1048576U);
  auto unknown = load_config_yaml("telemetry:\n  max_rows: 5\n", {});
  ASSERT_FALSE(unknown);
  EXPECT_NE(unknown.error().find("telemetry.max_rows"), std::string::npos) << unknown.error();
  auto range = load_config_yaml("telemetry:\n  prune_interval_ms: 5\n", {});
  ASSERT_FALSE(range);
  EXPECT_NE(range.error().find("telemetry.prune_interval_ms"), std::string::npos) << range.error();
}

}  // namespace
}  // namespace hsns
