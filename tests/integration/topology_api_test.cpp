// The topology model over REST against the real aggregator: import, restart, generate, exports checked
// with the library's own readers, LLDP merge (conflicts reported, not applied), validation that changes
// nothing, roles, hsnsctl end to end, and the size limits (hostile documents and parameters refused,
// the largest allowed cluster served while readers keep being answered).
#include <gtest/gtest.h>
#include <yaml-cpp/yaml.h>

#include <atomic>
#include <chrono>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <regex>
#include <set>
#include <sstream>
#include <thread>

#include "support/aggregator_process.h"
#include "topology/hostlist.h"
#include "topology/import.h"

namespace hsns::testing {
namespace {

using nlohmann::json;

// host1..host3, two NPUs each; host2 NPU 1 has no leaf port (LLDP completes it), host3 NPU 0 no link
// (LLDP adds it). leaf1 carries 3 x 400 down and 800 up: 1.5:1.
constexpr const char* kSmallTopology = R"(version: 1
name: lab
defaults: {bandwidth_gbps: 400, latency_us: 0.5}
switches:
  - {name: leaf0, tier: leaf}
  - {name: leaf1, tier: leaf}
  - {name: spine0, tier: spine}
hosts:
  - name: host1
    npus:
      - {index: 0, port: eth0, leaf: leaf0, leaf_port: Eth1/1}
      - {index: 1, port: eth1, leaf: leaf1, leaf_port: Eth1/1}
  - name: host2
    npus:
      - {index: 0, port: eth0, leaf: leaf0, leaf_port: Eth1/2}
      - {index: 1, port: eth1, leaf: leaf1}
  - name: host3
    npus:
      - {index: 0, port: eth0}
      - {index: 1, port: eth1, leaf: leaf1, leaf_port: Eth1/3}
links:
  - {lower: leaf0, upper: spine0, bandwidth_gbps: 800}
  - {lower: leaf1, upper: spine0, bandwidth_gbps: 800}
)";

HttpClient::Response put_yaml(HttpClient& c, const std::string& body) {
  auto r = c.request("PUT", "/api/v1/topology", body, "application/yaml");
  EXPECT_TRUE(r.has_value()) << r.error();
  return *r;
}

json get_json(HttpClient& c, const std::string& target, int expected = 200) {
  auto r = c.get(target);
  EXPECT_TRUE(r.has_value());
  EXPECT_EQ(r->status, expected) << target << ": " << r->body;
  return json::parse(r->body, nullptr, false);
}

// What a client sees of the stored state: the summary and the full model in the file schema.
std::string observable_state(HttpClient& c) {
  auto summary = c.get("/api/v1/topology");
  auto yaml = c.get("/api/v1/topology/export?format=yaml");
  return std::to_string(summary->status) + summary->body + "\n" + std::to_string(yaml->status) + yaml->body;
}

// Slurm topology.conf as the tree and block plugins read it: every line a known statement whose node and
// switch lists are hostlist expressions the library expands; every listed host exists.
void check_slurm(const std::string& text, bool block, std::size_t hosts) {
  std::istringstream in(text);
  std::string line;
  std::set<std::string> nodes;
  bool block_sizes = false;
  while (std::getline(in, line)) {
    if (line.empty() || line[0] == '#') continue;
    std::smatch m;
    if (block) {
      if (std::regex_match(line, std::regex("BlockSizes=[0-9]+(,[0-9]+)*"))) {
        block_sizes = true;
        continue;
      }
      ASSERT_TRUE(std::regex_match(line, m, std::regex("BlockName=([A-Za-z0-9_-]+) Nodes=(\\S+)"))) << line;
    } else {
      ASSERT_TRUE(
          std::regex_match(line, m, std::regex("SwitchName=([A-Za-z0-9_-]+) (Nodes|Switches)=(\\S+)")))
          << line;
      if (m[2] == "Switches") {
        ASSERT_TRUE(topology::expand_hostlist(m[3].str()).has_value()) << line;
        continue;
      }
    }
    auto expanded = topology::expand_hostlist(m[m.size() - 1].str());
    ASSERT_TRUE(expanded.has_value()) << line << ": " << expanded.error();
    nodes.insert(expanded->begin(), expanded->end());
  }
  EXPECT_EQ(nodes.size(), hosts) << text;
  if (block) {
    EXPECT_TRUE(block_sizes) << text;
  }
}

// The host link of (host, npu) in a topology read back with the library: "leaf/port", "" when none.
std::string npu_link(const topology::Topology& t, const std::string& host, std::uint32_t npu) {
  auto id = t.find(host);
  if (!id) return "?";
  const auto* n = t.npu({*id, npu});
  if (!n || n->link == topology::kNoLink) return "";
  const auto& l = t.link(n->link);
  return t.node(l.upper).name + "/" + l.upper_port;
}

TEST(TopologyApi, ImportSurvivesRestartAndLldpMergeReportsConflicts) {
  TempDir dir;
  AggregatorProcess agg(dir.path());
  agg.start();
  auto ops = agg.client();
  auto viewer = agg.client(kViewerToken);
  auto agent = agg.client(kAgentToken);

  EXPECT_EQ(get_json(ops, "/api/v1/topology", 404)["status"], 404);
  EXPECT_EQ(ops.get("/api/v1/topology/export?format=json")->status, 404);

  // Viewers cannot write; nothing is stored by a forbidden request.
  EXPECT_EQ(viewer.request("PUT", "/api/v1/topology", kSmallTopology, "application/yaml")->status, 403);
  EXPECT_EQ(agent.request("PUT", "/api/v1/topology", kSmallTopology, "application/yaml")->status, 403);
  EXPECT_EQ(ops.get("/api/v1/topology")->status, 404);

  auto put = put_yaml(ops, kSmallTopology);
  ASSERT_EQ(put.status, 200) << put.body;
  auto s = json::parse(put.body);
  EXPECT_EQ(s["revision"], 1);
  EXPECT_EQ(s["name"], "lab");
  EXPECT_EQ(s["source"], "import");
  EXPECT_EQ(s["hosts"], 3);
  EXPECT_EQ(s["npus"], 6);
  EXPECT_EQ(s["switches"], json::parse(R"({"leaf":2,"spine":1,"core":0})"));
  EXPECT_EQ(s["links"], 7);
  EXPECT_DOUBLE_EQ(s["oversubscription"]["leaf"].get<double>(), 1.5);
  EXPECT_DOUBLE_EQ(s["oversubscription"]["spine"].get<double>(), 0.0);
  EXPECT_EQ(s["top_tier"], "spine");
  EXPECT_EQ(get_json(viewer, "/api/v1/topology"), s);

  // Restart: the same topology, revision and answers.
  const std::string before_restart = observable_state(ops);
  ASSERT_EQ(agg.stop(), 0) << agg.log();
  agg.start();
  ops = agg.client();
  agent = agg.client(kAgentToken);
  viewer = agg.client(kViewerToken);
  EXPECT_EQ(observable_state(ops), before_restart);

  // LLDP: 0 confirmed, 1 completes a leaf port, 2 adds a link, 3 contradicts the file, 4 is unknown.
  const json lldp = {
      {"observations",
       {{{"host", "host1"}, {"port", "eth0"}, {"neighbor_system", "leaf0"}, {"neighbor_port", "Eth1/1"}},
        {{"host", "host2"}, {"npu", 1}, {"neighbor_system", "leaf1"}, {"neighbor_port", "Eth1/2"}},
        {{"host", "host3"}, {"port", "eth0"}, {"neighbor_system", "leaf0"}, {"neighbor_port", "Eth1/3"}},
        {{"host", "host1"}, {"port", "eth1"}, {"neighbor_system", "leaf0"}, {"neighbor_port", "Eth1/9"}},
        {{"host", "host9"}, {"port", "eth0"}, {"neighbor_system", "leaf0"}, {"neighbor_port", "Eth1/4"}}}}};
  EXPECT_EQ(viewer.post("/api/v1/topology/lldp", lldp.dump())->status, 403);
  auto merged = agent.post("/api/v1/topology/lldp", lldp.dump());
  ASSERT_EQ(merged->status, 200) << merged->body;
  auto report = json::parse(merged->body);
  EXPECT_EQ(report["revision"], 2);
  EXPECT_EQ(report["confirmed"], 2);  // the completed one counts as confirmed too
  EXPECT_EQ(report["completed"], 1);
  EXPECT_EQ(report["added"], 1);
  ASSERT_EQ(report["conflicts"].size(), 1u) << report.dump();
  EXPECT_EQ(report["conflicts"][0]["observation"], 3);
  EXPECT_NE(report["conflicts"][0]["field"].get<std::string>().find("observations[3]"), std::string::npos);
  ASSERT_EQ(report["unresolved"].size(), 1u) << report.dump();
  EXPECT_EQ(report["unresolved"][0]["field"], "observations[4].host");

  auto yaml = ops.get("/api/v1/topology/export?format=yaml");
  ASSERT_EQ(yaml->status, 200);
  auto model = topology::import_topology(yaml->body);
  ASSERT_TRUE(model.has_value()) << yaml->body;
  EXPECT_EQ(npu_link(*model, "host1", 1), "leaf1/Eth1/1");  // the conflict was not applied
  EXPECT_EQ(npu_link(*model, "host2", 1), "leaf1/Eth1/2");  // completed
  EXPECT_EQ(npu_link(*model, "host3", 0), "leaf0/Eth1/3");  // added
  EXPECT_EQ(get_json(ops, "/api/v1/topology")["links"], 8);
  auto observed = get_json(ops, "/api/v1/topology/lldp");
  EXPECT_EQ(observed["items"].size(), 5u);

  // Device state: a host, an NPU, a switch.
  auto patched = ops.patch("/api/v1/topology/devices/host2", R"({"state":"isolated"})");
  ASSERT_EQ(patched->status, 200) << patched->body;
  EXPECT_EQ(json::parse(patched->body)["tier"], "host");
  ASSERT_EQ(ops.patch("/api/v1/topology/devices/host1", R"({"state":"allocated","npu":1})")->status, 200);
  ASSERT_EQ(ops.patch("/api/v1/topology/devices/spine0", R"({"state":"sub-health"})")->status, 200);
  auto states = get_json(ops, "/api/v1/topology")["states"];
  EXPECT_EQ(states["hosts"]["isolated"], 1);
  EXPECT_EQ(states["npus"]["allocated"], 1);
  EXPECT_EQ(states["switches"]["sub-health"], 1);
  EXPECT_EQ(get_json(ops, "/api/v1/topology")["revision"], 5);
  EXPECT_EQ(viewer.patch("/api/v1/topology/devices/host2", R"({"state":"healthy"})")->status, 403);

  // Rejected requests name the field and change nothing.
  const std::string stable = observable_state(ops);
  struct Bad {
    std::string method, target, content_type, body, field;
    int status = 400;
  };
  const std::vector<Bad> bad = {
      {"PUT", "/api/v1/topology", "application/json", R"({"version":1,"switches":[],"hosts":[],"bogus":1})",
       "bogus"},
      {"PUT", "/api/v1/topology", "application/yaml",
       "version: 1\nswitches: [{name: leaf0, tier: leaf}]\nhosts: []\nlinks: [{lower: leaf0, upper: nope, "
       "bandwidth_gbps: 100}]\n",
       "links[0].upper"},
      {"PUT", "/api/v1/topology", "application/json", R"({"version":2,"switches":[],"hosts":[]})", "version"},
      {"PUT", "/api/v1/topology", "text/plain", "version: 1", "Content-Type", 415},
      {"POST", "/api/v1/topology/generate", "application/json", R"({"hosts":0})", "hosts"},
      {"POST", "/api/v1/topology/generate", "application/json", R"({"hosts":8,"racks":2})", "racks"},
      {"POST", "/api/v1/topology/generate", "application/json", R"({"hosts":8,"leaf_oversubscription":"2"})",
       "leaf_oversubscription"},
      {"POST", "/api/v1/topology/generate", "application/json", R"({"hosts":1000000})", "hosts"},
      {"POST", "/api/v1/topology/lldp", "application/json",
       R"({"observations":[{"host":"host1","port":"eth0"}]})", "observations[0].neighbor_system"},
      {"POST", "/api/v1/topology/lldp", "application/json", R"({"observations":[],"extra":1})", "extra"},
      {"PATCH", "/api/v1/topology/devices/host1", "application/json", R"({"state":"broken"})", "state"},
      {"PATCH", "/api/v1/topology/devices/host1", "application/json", R"({"state":"healthy","npu":7})", "npu",
       422},
      {"PATCH", "/api/v1/topology/devices/leaf0", "application/json", R"({"state":"healthy","npu":0})",
       "npu"},
      {"PATCH", "/api/v1/topology/devices/nosuch", "application/json", R"({"state":"healthy"})", "nosuch",
       404},
      {"GET", "/api/v1/topology/export?format=dot", "", "", "format"},
      {"GET", "/api/v1/topology?verbose=1", "", "", "verbose"},
  };
  for (const auto& b : bad) {
    auto r = ops.request(b.method, b.target, b.body, b.content_type);
    ASSERT_TRUE(r.has_value());
    EXPECT_EQ(r->status, b.status) << b.method << " " << b.target << " " << b.body << ": " << r->body;
    EXPECT_TRUE(r->is_problem()) << r->content_type;
    EXPECT_NE(r->body.find(b.field), std::string::npos) << b.body << ": " << r->body;
  }
  EXPECT_EQ(observable_state(ops), stable);
}

TEST(TopologyApi, GeneratesAndExportsEveryFormat) {
  TempDir dir;
  AggregatorProcess agg(dir.path());
  agg.start();
  auto ops = agg.client();
  EXPECT_EQ(agg.client(kViewerToken).post("/api/v1/topology/generate", R"({"hosts":64})")->status, 403);

  const json params = {
      {"hosts", 64},    {"npus_per_host", 8}, {"hosts_per_su", 16},         {"spines_per_plane", 4},
      {"superpods", 2}, {"cores", 2},         {"leaf_oversubscription", 2}, {"name", "c64"}};
  auto gen = ops.post("/api/v1/topology/generate", params.dump());
  ASSERT_EQ(gen->status, 200) << gen->body;
  auto s = json::parse(gen->body);
  EXPECT_EQ(s["source"], "generate");
  EXPECT_EQ(s["hosts"], 64);
  EXPECT_EQ(s["npus"], 512);
  EXPECT_EQ(s["switches"], json::parse(R"({"leaf":32,"spine":8,"core":2})"));  // 4 SUs x 8 rails
  // 512 host links, 32 leaves x 4 spines, 8 spines x 2 cores.
  EXPECT_EQ(s["links"], 512 + 128 + 16);
  EXPECT_DOUBLE_EQ(s["oversubscription"]["leaf"].get<double>(), 2.0);
  EXPECT_EQ(s["domains"]["scalable_units"], 4);
  EXPECT_EQ(s["domains"]["superpods"], 2);
  EXPECT_EQ(s["top_tier"], "core");

  auto get = [&](const std::string& format) {
    auto r = ops.get("/api/v1/topology/export?format=" + format);
    EXPECT_TRUE(r.has_value());
    EXPECT_EQ(r->status, 200) << format << ": " << r->body;
    return *r;
  };
  auto graph = get("json");
  EXPECT_EQ(graph.content_type, "application/json");
  auto g = json::parse(graph.body);
  EXPECT_EQ(g["version"], 1);
  EXPECT_EQ(g["links"].size(), 656u);
  EXPECT_EQ(g["nodes"].size(), 64u + 32 + 8 + 2);
  EXPECT_EQ(ops.get("/api/v1/topology/export")->content_type, "application/json");  // the default
  EXPECT_EQ(ops.get("/api/v1/topology/export?format=")->status, 400);

  auto tree = get("slurm-tree");
  EXPECT_EQ(tree.content_type.rfind("text/plain", 0), 0u) << tree.content_type;
  check_slurm(tree.body, false, 64);
  EXPECT_NE(tree.body.find("SwitchName=fabric0 Switches=pod[0-1]"), std::string::npos) << tree.body;
  auto block = get("slurm-block");
  EXPECT_EQ(block.content_type.rfind("text/plain", 0), 0u) << block.content_type;
  check_slurm(block.body, true, 64);

  for (const std::string format : {"volcano", "kueue", "node-labels"}) {
    auto r = get(format);
    EXPECT_EQ(r.content_type, "application/yaml") << format;
    std::vector<YAML::Node> docs;
    ASSERT_NO_THROW(docs = YAML::LoadAll(r.body)) << r.body;
    ASSERT_FALSE(docs.empty()) << format;
    for (const auto& d : docs) {
      EXPECT_TRUE(d["apiVersion"].IsScalar()) << format;
      EXPECT_TRUE(d["kind"].IsScalar()) << format;
    }
    if (format == "volcano") {
      EXPECT_EQ(docs.front()["kind"].as<std::string>(), "HyperNode");
      EXPECT_EQ(docs.size(), 4u + 2 + 1);  // SUs, super-pods, fabric
    }
    if (format == "kueue") {
      EXPECT_EQ(docs.front()["kind"].as<std::string>(), "Topology");
    }
    if (format == "node-labels") {
      EXPECT_EQ(docs.size(), 64u);
    }
  }
  auto yaml = get("yaml");
  EXPECT_EQ(yaml.content_type, "application/yaml");
  auto model = topology::import_topology(yaml.body);
  ASSERT_TRUE(model.has_value()) << model.error().detail;
  EXPECT_EQ(model->hosts().size(), 64u);
  EXPECT_EQ(model->links().size(), 656u);
  EXPECT_EQ(model->name(), "c64");

  // Generating again replaces the topology and moves the revision on.
  auto again = ops.post("/api/v1/topology/generate", R"({"hosts":8,"npus_per_host":2})");
  ASSERT_EQ(again->status, 200) << again->body;
  EXPECT_EQ(json::parse(again->body)["revision"], 2);
  EXPECT_EQ(json::parse(again->body)["hosts"], 8);
}

TEST(TopologyApi, HsnsctlImportsShowsExportsAndSetsState) {
  TempDir dir;
  AggregatorProcess agg(dir.path());
  agg.start();
  std::ofstream(dir.path() / "token") << kOperatorToken << "\n";
  std::ofstream(dir.path() / "topology.yaml") << kSmallTopology;
  auto ctl = [&](std::vector<std::string> args) {
    std::vector<std::string> argv = {build_path("cli/hsnsctl").string(), "--server", agg.url(),
                                     "--token-file", (dir.path() / "token").string()};
    argv.insert(argv.end(), args.begin(), args.end());
    return run_command(argv);
  };
  auto shown = ctl({"topology", "show"});
  EXPECT_EQ(shown.status, 1) << shown.output;  // nothing imported yet
  EXPECT_NE(shown.output.find("404"), std::string::npos) << shown.output;

  auto imported = ctl({"topology", "import", (dir.path() / "topology.yaml").string()});
  ASSERT_EQ(imported.status, 0) << imported.output;
  EXPECT_NE(imported.output.find("REVISION"), std::string::npos) << imported.output;
  EXPECT_NE(imported.output.find("lab"), std::string::npos) << imported.output;

  auto js = ctl({"-o", "json", "topology", "show"});
  ASSERT_EQ(js.status, 0) << js.output;
  EXPECT_EQ(json::parse(js.output)["hosts"], 3);

  auto tree = ctl({"topology", "export", "--format", "slurm-tree"});
  ASSERT_EQ(tree.status, 0) << tree.output;
  check_slurm(tree.output, false, 3);
  auto yaml = ctl({"topology", "export", "--format", "yaml"});
  ASSERT_EQ(yaml.status, 0) << yaml.output;
  EXPECT_TRUE(topology::import_topology(yaml.output).has_value()) << yaml.output;
  EXPECT_EQ(ctl({"topology", "export", "--format", "dot"}).status, 64);

  auto set = ctl({"topology", "set-state", "host1", "allocated", "--npu", "0"});
  ASSERT_EQ(set.status, 0) << set.output;
  EXPECT_NE(set.output.find("allocated"), std::string::npos) << set.output;
  auto bad = ctl({"topology", "set-state", "nosuch", "isolated"});
  EXPECT_EQ(bad.status, 1) << bad.output;

  // A JSON file goes in as JSON; a broken file is refused naming the field.
  std::ofstream(dir.path() / "bad.json") << R"({"version":1,"switches":[],"hosts":[],"oops":true})";
  auto rejected = ctl({"topology", "import", (dir.path() / "bad.json").string()});
  EXPECT_EQ(rejected.status, 1) << rejected.output;
  EXPECT_NE(rejected.output.find("oops"), std::string::npos) << rejected.output;

  auto gen = ctl({"-o", "json", "topology", "generate", "--hosts", "64", "--npus-per-host", "8",
                  "--hosts-per-su", "32", "--spines", "4", "--oversubscription", "2"});
  ASSERT_EQ(gen.status, 0) << gen.output;
  auto g = json::parse(gen.output);
  EXPECT_EQ(g["hosts"], 64);
  EXPECT_DOUBLE_EQ(g["oversubscription"]["leaf"].get<double>(), 2.0);
  EXPECT_EQ(agg.stop(), 0) << agg.log();
}

// The largest generate request the limits admit (docs/topology.md, "Limits").
const json kMaximumCluster = {{"hosts", 16384},         {"npus_per_host", 8}, {"hosts_per_su", 32},
                              {"spines_per_plane", 16}, {"superpods", 4},     {"cores", 16}};

// "Billion laughs": nine levels of nine aliases, 9^9 strings once expanded, in about 440 bytes.
std::string yaml_alias_bomb() {
  std::string text =
      "version: 1\na: &a [\"lol\",\"lol\",\"lol\",\"lol\",\"lol\",\"lol\",\"lol\",\"lol\",\"lol\"]\n";
  for (char c = 'b'; c <= 'i'; ++c) {
    text += std::string(1, c) + ": &" + c + " [";
    for (int k = 0; k < 9; ++k) text += std::string(k ? "," : "") + "*" + static_cast<char>(c - 1);
    text += "]\n";
  }
  text += "switches: []\nhosts: []\n";
  return text;
}

TEST(TopologyApiLimits, YamlAliasBombIsRefusedAndTheServerStaysResponsive) {
  TempDir dir;
  AggregatorProcess agg(dir.path());
  agg.start();
  const std::string bomb = yaml_alias_bomb();
  ASSERT_LT(bomb.size(), 500u);
  // Two at once, as in the report; both are refused at the first anchor.
  std::vector<std::thread> senders;
  std::vector<HttpClient::Response> answers(2);
  for (std::size_t i = 0; i < answers.size(); ++i) {
    senders.emplace_back([&, i] {
      auto c = agg.client();
      auto r = c.request("PUT", "/api/v1/topology", bomb, "application/yaml");
      if (r) answers[i] = *r;
    });
  }
  for (auto& t : senders) t.join();
  for (const auto& r : answers) {
    EXPECT_EQ(r.status, 400) << r.body;
    EXPECT_TRUE(r.is_problem()) << r.content_type;
    EXPECT_NE(r.body.find("aliases"), std::string::npos) << r.body;
  }
  auto health = agg.client().get("/healthz");
  ASSERT_TRUE(health.has_value());
  EXPECT_EQ(health->status, 200);
  // Nothing was stored; a deep document and a JSON duplicate key are refused the same way.
  EXPECT_EQ(agg.client().get("/api/v1/topology")->status, 404);
  auto ops = agg.client();
  auto deep = ops.request("PUT", "/api/v1/topology", std::string(5000, '[') + std::string(5000, ']'),
                          "application/yaml");
  EXPECT_EQ(deep->status, 400) << deep->body;
  EXPECT_NE(deep->body.find("nested deeper than 32"), std::string::npos) << deep->body;
  auto dup = ops.request("PUT", "/api/v1/topology", R"({"version":1,"switches":[],"hosts":[],"hosts":[]})",
                         "application/json");
  EXPECT_EQ(dup->status, 400) << dup->body;
  EXPECT_NE(dup->body.find("duplicate key"), std::string::npos) << dup->body;
  EXPECT_EQ(agg.stop(), 0) << agg.log();
}

TEST(TopologyApiLimits, DerivedCountsAreCheckedBeforeGenerating) {
  TempDir dir;
  AggregatorProcess agg(dir.path());
  agg.start();
  auto ops = agg.client();
  // The security test's request: parallel fabric links with a vanishing spine oversubscription.
  const json attack = {
      {"hosts", 256},   {"npus_per_host", 8}, {"hosts_per_su", 32},      {"spines_per_plane", 8},
      {"superpods", 2}, {"cores", 4},         {"fabric_link_gbps", 400}, {"spine_oversubscription", 1e-9}};
  auto r = ops.post("/api/v1/topology/generate", attack.dump());
  ASSERT_TRUE(r.has_value());
  EXPECT_EQ(r->status, 400) << r->body;
  EXPECT_TRUE(r->is_problem()) << r->content_type;
  auto p = json::parse(r->body);
  EXPECT_EQ(p["invalid_params"][0]["name"], "spine_oversubscription") << r->body;
  EXPECT_NE(p["detail"].get<std::string>().find("links, more than the server's limit of 262144"),
            std::string::npos)
      << r->body;
  // The old documented maximum (16,384 hosts x 64 NPUs) is now over the NPU limit.
  auto old_max = ops.post("/api/v1/topology/generate", R"({"hosts":16384,"npus_per_host":64})");
  EXPECT_EQ(old_max->status, 400) << old_max->body;
  EXPECT_NE(old_max->body.find("npus_per_host"), std::string::npos) << old_max->body;
  EXPECT_EQ(ops.get("/api/v1/topology")->status, 404);
  EXPECT_EQ(agg.stop(), 0) << agg.log();
}

// The generator's parameters are answered with these exact problem documents (status, title, detail and
// every invalid_params entry in order): the wording clients have seen since the endpoint existed.
TEST(TopologyApi, GenerateParameterErrorsAreWordedExactly) {
  TempDir dir;
  AggregatorProcess agg(dir.path());
  agg.start();
  auto ops = agg.client();
  struct Case {
    std::string body;
    std::vector<std::pair<std::string, std::string>> params;  // name, reason
  };
  const std::vector<Case> cases = {
      {R"({"hosts":"8"})", {{"hosts", "must be an integer"}}},
      {R"({"hosts":1.5})", {{"hosts", "must be an integer"}}},
      {R"({"hosts":null})", {{"hosts", "must be an integer"}}},
      {R"({"hosts":0})", {{"hosts", "must be between 1 and 16384"}}},
      {R"({"hosts":-3})", {{"hosts", "must be between 1 and 16384"}}},
      {R"({"hosts":18446744073709551615})", {{"hosts", "must be between 1 and 16384"}}},
      {R"({"spines_per_plane":1025})", {{"spines_per_plane", "must be between 0 and 1024"}}},
      {R"({"npus_per_host":65})", {{"npus_per_host", "must be between 1 and 64"}}},
      {R"({"leaf_oversubscription":"2"})", {{"leaf_oversubscription", "must be a number"}}},
      {R"({"leaf_oversubscription":null})", {{"leaf_oversubscription", "must be a number"}}},
      {R"({"host_link_gbps":0})", {{"host_link_gbps", "must be > 0 and <= 100000"}}},
      {R"({"fabric_link_gbps":-1})", {{"fabric_link_gbps", "must be >= 0 and <= 100000"}}},
      {R"({"host_link_latency_us":2e6})", {{"host_link_latency_us", "must be >= 0 and <= 1e+06"}}},
      {R"({"spine_oversubscription":0.0})", {{"spine_oversubscription", "must be > 0 and <= 1000"}}},
      {R"({"fabric_link_gbps":0.5})", {{"fabric_link_gbps", "must be 0 or >= 1"}}},
      {R"({"name":""})", {{"name", "must be 1 to 128 characters"}}},
      {R"({"name":")" + std::string(129, 'n') + R"("})", {{"name", "must be 1 to 128 characters"}}},
      {R"({"name":5})", {{"name", "must be a string"}}},
      {R"({"name":null})", {{"name", "must be a string"}}},
      {R"({"racks":2})", {{"racks", "is not a known field"}}},
      {R"({"racks":1,"name":"","hosts":"x","cores":2000})",
       {{"hosts", "must be an integer"},
        {"cores", "must be between 0 and 1024"},
        {"name", "must be 1 to 128 characters"},
        {"racks", "is not a known field"}}},
  };
  for (const auto& c : cases) {
    auto r = ops.post("/api/v1/topology/generate", c.body);
    ASSERT_TRUE(r.has_value());
    EXPECT_EQ(r->status, 400) << c.body << ": " << r->body;
    EXPECT_TRUE(r->is_problem()) << r->content_type;
    const auto p = json::parse(r->body);
    EXPECT_EQ(p["title"], "Invalid request") << r->body;
    EXPECT_EQ(p["status"], 400) << r->body;
    std::string detail = "field '" + c.params.front().first + "': " + c.params.front().second;
    if (c.params.size() > 1)
      detail += " (and " + std::to_string(c.params.size() - 1) + " more in invalid_params)";
    EXPECT_EQ(p["detail"], detail) << r->body;
    json expected = json::array();
    for (const auto& [name, reason] : c.params) expected.push_back({{"name", name}, {"reason", reason}});
    EXPECT_EQ(p["invalid_params"], expected) << c.body;
  }
  EXPECT_EQ(ops.get("/api/v1/topology")->status, 404);
  EXPECT_EQ(agg.stop(), 0) << agg.log();
}

TEST(TopologyApiLimits, MaximumGenerateSucceedsWhileReadersAreAnswered) {
  TempDir dir;
  AggregatorProcess agg(dir.path());
  agg.start();
  auto ops = agg.client();
  auto first = ops.post("/api/v1/topology/generate", R"({"hosts":8,"npus_per_host":2})");
  ASSERT_EQ(first->status, 200) << first->body;
  ASSERT_EQ(json::parse(first->body)["revision"], 1);

  std::atomic<bool> generated{false};
  HttpClient::Response big;
  std::thread generator([&] {
    // The sanitizer build is some twenty times slower than a release build (docs/topology.md, "Limits").
    HttpClient::Options options;
    options.bearer_token = kOperatorToken;
    options.timeout = std::chrono::seconds(240);
    HttpClient c(agg.url(), options);
    auto r = c.post("/api/v1/topology/generate", kMaximumCluster.dump());
    if (r) big = *r;
    generated = true;
  });
  // Readers on other connections are answered while the generate runs, with the previous revision until
  // the new one is committed. An answer with revision 1 was given before the commit; one that came back
  // while the generate's own response had not yet arrived, at least 50 ms after the generate was sent,
  // was given while the generate was being served. No duration is asserted.
  auto reader = agg.client(kViewerToken);
  int answered_during_generate = 0;
  int last_revision = 1;
  while (!generated) {
    auto g = reader.get("/api/v1/topology");
    ASSERT_TRUE(g.has_value()) << g.error();
    ASSERT_EQ(g->status, 200) << g->body;
    const auto revision = json::parse(g->body)["revision"].get<int>();
    EXPECT_TRUE(revision == 1 || revision == 2) << g->body;
    EXPECT_GE(revision, last_revision);  // never back to the old model once the new one is visible
    last_revision = revision;
    if (revision == 1 && !generated) {
      ++answered_during_generate;
      auto health = reader.get("/healthz");
      ASSERT_TRUE(health.has_value());
      EXPECT_EQ(health->status, 200);
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(50));  // leave the cores to the generate
  }
  generator.join();
  EXPECT_GE(answered_during_generate, 2);
  ASSERT_EQ(big.status, 200) << big.body;
  auto s = json::parse(big.body);
  EXPECT_EQ(s["revision"], 2);
  EXPECT_EQ(s["hosts"], 16384);
  EXPECT_EQ(s["npus"], 131072);
  EXPECT_EQ(s["links"], 131072 + 4096 * 16 + 64 * 16);
  EXPECT_EQ(get_json(reader, "/api/v1/topology")["revision"], 2);
  EXPECT_EQ(agg.stop(), 0) << agg.log();
}

}  // namespace
}  // namespace hsns::testing
