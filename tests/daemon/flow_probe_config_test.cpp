// Unit tests of the `flow_probe:` section of hsnsd.yaml as hsnsd's load_config reads it: off when absent,
// empty or without interfaces; every key carried into DaemonConfig::flow_probe; unknown keys, wrong types
// and out-of-range values are errors naming the key and the file; the comparisons SIGHUP uses to decide
// whether the probe must be restarted.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <string>

#include "config.h"
#include "support/temp_dir.h"

namespace hsns::daemon {
namespace {

using hsns::testing::TempDir;
using std::chrono::milliseconds;

class FlowProbeSection : public ::testing::Test {
 protected:
  tl::expected<DaemonConfig, std::string> load(const std::string& text) {
    const auto path = (dir.path() / "hsnsd.yaml").string();
    std::ofstream(path, std::ios::trunc) << text;
    return load_config(path, true);
  }
  // The error of loading `text`, which must fail.
  std::string error_of(const std::string& text) {
    auto c = load(text);
    EXPECT_FALSE(c) << "accepted:\n" << text;
    return c ? std::string() : c.error();
  }

  TempDir dir;
};

TEST_F(FlowProbeSection, AbsentEmptyNullOrWithoutInterfacesIsOff) {
  for (const std::string text : {"host: h\n", "flow_probe:\n", "flow_probe: {}\n", "flow_probe: ~\n",
                                 "flow_probe: {interval_ms: 500, interfaces: []}\n"}) {
    SCOPED_TRACE(text);
    auto c = load(text);
    ASSERT_TRUE(c) << c.error();
    EXPECT_FALSE(flow_probe_enabled(*c));
  }
  auto c = load("flow_probe: {interval_ms: 500, interfaces: []}\n");
  ASSERT_TRUE(c) << c.error();
  EXPECT_EQ(c->flow_probe.interval, milliseconds(500));
  // Defaults of the probe when the section is absent.
  auto d = load_config("/nonexistent/hsnsd.yaml", false);
  ASSERT_TRUE(d) << d.error();
  EXPECT_FALSE(flow_probe_enabled(*d));
  EXPECT_EQ(d->flow_probe.interval, milliseconds(1000));
  EXPECT_EQ(d->flow_probe.pin_dir, "/sys/fs/bpf/hsns/roce_flow");
  EXPECT_EQ(d->flow_probe.sink, "/var/lib/hsns/flows.jsonl");
}

TEST_F(FlowProbeSection, EveryKeyIsCarriedBesideTheOtherSections) {
  auto c = load(
      "host: node-7\n"
      "isolation: {enabled: true, pin_dir: /sys/fs/bpf/iso}\n"
      "flow_probe:\n"
      "  interval_ms: 250\n"
      "  table_size: 8192\n"
      "  ring_buffer_bytes: 65536\n"
      "  pin_dir: /sys/fs/bpf/hsns/rf\n"
      "  sink: /var/lib/hsns/f.jsonl\n"
      "  interfaces:\n"
      "    - {name: rxe0, attach: tc, direction: both}\n"
      "    - {name: span0, attach: tc, direction: ingress, mirror: true}\n"
      "    - name: mirror0\n"
      "      attach: xdp\n"
      "      mirror: true\n"
      "npus: [{index: 0, netdev: eth1}]\n");
  ASSERT_TRUE(c) << c.error();
  EXPECT_EQ(c->host, "node-7");
  EXPECT_TRUE(c->isolation_enabled);
  EXPECT_EQ(c->npus.at(0), "eth1");
  ASSERT_TRUE(flow_probe_enabled(*c));
  const auto& f = c->flow_probe;
  EXPECT_EQ(f.interval, milliseconds(250));
  EXPECT_EQ(f.table_size, 8192u);
  EXPECT_EQ(f.ring_buffer_bytes, 65536u);
  EXPECT_EQ(f.pin_dir, "/sys/fs/bpf/hsns/rf");
  EXPECT_EQ(f.sink, "/var/lib/hsns/f.jsonl");
  ASSERT_EQ(f.interfaces.size(), 3u);
  EXPECT_EQ(f.interfaces[0].name, "rxe0");
  EXPECT_EQ(f.interfaces[0].attach, AttachMode::tc);
  EXPECT_TRUE(f.interfaces[0].ingress);
  EXPECT_TRUE(f.interfaces[0].egress);
  EXPECT_FALSE(f.interfaces[0].mirror);
  EXPECT_EQ(f.interfaces[1].name, "span0");
  EXPECT_TRUE(f.interfaces[1].ingress);
  EXPECT_FALSE(f.interfaces[1].egress);
  EXPECT_TRUE(f.interfaces[1].mirror);
  EXPECT_EQ(f.interfaces[2].name, "mirror0");
  EXPECT_EQ(f.interfaces[2].attach, AttachMode::xdp);
  EXPECT_TRUE(f.interfaces[2].ingress);
  EXPECT_FALSE(f.interfaces[2].egress);
  EXPECT_TRUE(f.interfaces[2].mirror);
}

TEST_F(FlowProbeSection, BadInputIsAnErrorNamingTheKeyAndTheFile) {
  const std::string file = (dir.path() / "hsnsd.yaml").string();
  struct Case {
    std::string yaml;
    std::string error;
  };
  const Case cases[] = {
      {"flow_probe: {interval_ms: 1000, sampling: 10}\n", "flow_probe.sampling: unknown key"},
      {"flow_probe:\n  interfaces:\n    - {name: a0}\n    - {name: b0, speed: 100}\n",
       "flow_probe.interfaces[1].speed: unknown key"},
      // A nested section is not unwrapped: it is an unknown key inside flow_probe.
      {"flow_probe: {flow_probe: {interval_ms: 200}}\n", "flow_probe.flow_probe: unknown key"},
      {"flow_probe: {interfaces: [{name: a0, attach: ebpf}]}\n",
       "flow_probe.interfaces[0].attach: expected tc or xdp"},
      {"flow_probe: {interfaces: [{name: a0, attach: xdp, direction: egress}]}\n",
       "flow_probe.interfaces[0].direction: xdp sees ingress only"},
      {"flow_probe: {interfaces: [{name: a0}, {name: a0}]}\n", "flow_probe.interfaces[1].name: duplicate"},
      {"flow_probe: {interfaces: [{attach: tc}]}\n", "flow_probe.interfaces[0].name: required"},
      {"flow_probe: {interfaces: rxe0}\n", "flow_probe.interfaces: expected a list"},
      {"flow_probe: {interval_ms: 5}\n", "flow_probe.interval_ms: must be between 100 and 3600000"},
      {"flow_probe: {interval_ms: soon}\n", "flow_probe.interval_ms: expected an integer"},
      {"flow_probe: {table_size: 100}\n", "flow_probe.table_size: must be between"},
      {"flow_probe: {ring_buffer_bytes: 5000}\n", "flow_probe.ring_buffer_bytes: must be a power of two"},
      {"flow_probe: {pin_dir: /tmp/pins}\n", "flow_probe.pin_dir: must be under /sys/fs/bpf/"},
      {"flow_probe: {interfaces: [{name: a0, mirror: maybe}]}\n",
       "flow_probe.interfaces[0].mirror: expected true or false"},
      {"flow_probe: 3\n", "flow_probe: expected a mapping"},
      {"flow_probe: [a, b]\n", "flow_probe: expected a mapping"},
      // YAML allows a mapping or a list as a key; no setting is named so (found by fuzz_daemon_inputs).
      {"flow_probe: {interfaces: [{name: a0, {attach: tc}: x}]}\n",
       "flow_probe.interfaces[0]: a key must be a plain name, not a mapping or list"},
      {"flow_probe: {[a, b]: 1}\n", "flow_probe: a key must be a plain name"},
      // Still checked by hsnsd's own parser around the section.
      {"flow_probes: {}\n", "unknown key 'flow_probes'"},
      {"{a: 1}: 2\n", "a key must be a plain name"},
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(c.yaml);
    const auto e = error_of(c.yaml);
    EXPECT_NE(e.find(c.error), std::string::npos) << e;
    EXPECT_EQ(e.rfind(file + ": ", 0), 0u) << e;
  }
}

TEST(FlowProbeCompare, SameAttachmentIgnoresOnlyIntervalAndSink) {
  FlowProbeConfig a;
  a.interfaces = {{"rxe0", AttachMode::tc, true, true, false}, {"m0", AttachMode::xdp, true, false, true}};
  FlowProbeConfig b = a;
  EXPECT_TRUE(same_flow_probe(a, b));
  EXPECT_TRUE(same_flow_probe_attachment(a, b));
  b.interval = milliseconds(200);
  b.sink = "/tmp/other.jsonl";
  EXPECT_FALSE(same_flow_probe(a, b));
  EXPECT_TRUE(same_flow_probe_attachment(a, b));
  auto differs = [&](auto change) {
    FlowProbeConfig c = a;
    change(c);
    return !same_flow_probe_attachment(a, c) && !same_flow_probe(a, c);
  };
  EXPECT_TRUE(differs([](FlowProbeConfig& c) { c.table_size = 1024; }));
  EXPECT_TRUE(differs([](FlowProbeConfig& c) { c.ring_buffer_bytes = 4096; }));
  EXPECT_TRUE(differs([](FlowProbeConfig& c) { c.pin_dir = "/sys/fs/bpf/x"; }));
  EXPECT_TRUE(differs([](FlowProbeConfig& c) { c.interfaces.pop_back(); }));
  EXPECT_TRUE(differs([](FlowProbeConfig& c) { c.interfaces[0].name = "rxe1"; }));
  EXPECT_TRUE(differs([](FlowProbeConfig& c) { c.interfaces[0].attach = AttachMode::xdp; }));
  EXPECT_TRUE(differs([](FlowProbeConfig& c) { c.interfaces[0].egress = false; }));
  EXPECT_TRUE(differs([](FlowProbeConfig& c) { c.interfaces[1].mirror = false; }));
  EXPECT_TRUE(differs([](FlowProbeConfig& c) { std::swap(c.interfaces[0], c.interfaces[1]); }));
}

}  // namespace
}  // namespace hsns::daemon
