// Property test over the whole documented range of every numeric field of the topology search and schedule
// request bodies. The ranges are read from the OpenAPI document (aggregator/openapi.json), so the test
// follows the API reference rather than a copy of it. Each sample goes the way a request goes: strict body
// parsing (400), cost::check (422 naming a field), communication volume, collective time per algorithm, and
// the search and placement libraries on a small generated cluster. The properties: nothing crashes or hits
// undefined behaviour (the asan-ubsan build aborts on the first report), every refusal names a field, and
// every accepted sample gives finite, non-negative numbers.
//
// Sampling is deterministic (splitmix64 with a fixed seed) and biased to the edges of each range: min, max,
// max - 1, min + 1, powers of two and their neighbours, plus log-uniform values. Half of the samples draw
// every size as a power of two, which satisfies most divisibility rules, so that a fair share of the samples
// pass validation at the extremes (e.g. layers = pp * virtual_stages = 65536, world size 2^24). One sample in
// ten puts one field just outside its range, which must be a 400 naming it.
#include <gtest/gtest.h>

#include <bit>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <set>
#include <string>
#include <vector>

#include "api/scheduling/requests.h"
#include "scheduling/cost/collective_time.h"
#include "scheduling/cost/comm_volume.h"
#include "scheduling/placement/schedule.h"
#include "scheduling/search/search.h"
#include "topology/generator.h"

namespace hsns::cost {
namespace {

using nlohmann::json;

constexpr int kIterations = 4000;
constexpr int kMaxPlacements = 60;
constexpr std::uint64_t kSeed = 0x5eed'c057'0001;

class Rng {
 public:
  explicit Rng(std::uint64_t seed) : s_(seed) {}
  std::uint64_t next() {
    std::uint64_t z = (s_ += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
  }
  std::uint64_t below(std::uint64_t n) { return next() % n; }
  bool chance(unsigned percent) { return below(100) < percent; }

 private:
  std::uint64_t s_;
};

// One numeric request field: where it sits in the bodies and its documented range.
struct Field {
  std::string schema;  // OpenAPI schema holding the property
  std::string name;    // property name
  std::string path;    // field path in the request body (also the name in a 400's invalid_params)
  bool in_search = false;
  bool in_schedule = false;
  std::int64_t lo = 0, hi = 0;
  std::vector<std::int64_t> allowed;  // an enumeration, when the schema has one
  bool required = false;
};

json openapi() {
  std::ifstream in(std::string(HSNS_TEST_SOURCE_DIR) + "/aggregator/openapi.json");
  EXPECT_TRUE(in) << "aggregator/openapi.json";
  return json::parse(in);
}

// Every integer property of the schemas the two bodies use; the test fails when the document gains one
// that the table below does not place.
std::vector<Field> documented_fields() {
  const json doc = openapi();
  const json& schemas = doc["components"]["schemas"];
  struct Place {
    const char* schema;
    const char* prefix;
    bool search, schedule;
  };
  const Place places[] = {
      {"ModelSpec", "model.", true, true},          {"ParallelSpec", "parallel.", true, true},
      {"SearchRequest", "", true, false},           {"ScheduleRequest", "", false, true},
      {"EcmpHashModel", "ecmp_hash.", false, true}, {"PortRange", "source_ports.", false, true}};
  std::vector<Field> out;
  for (const Place& p : places) {
    const json& s = schemas.at(p.schema);
    std::set<std::string> required;
    if (s.contains("required")) {
      for (const auto& r : s["required"]) required.insert(r.get<std::string>());
    }
    for (const auto& [name, prop] : s.at("properties").items()) {
      if (prop.value("type", "") != "integer") continue;
      Field f;
      f.schema = p.schema;
      f.name = name;
      f.path = p.prefix + name;
      f.in_search = p.search;
      f.in_schedule = p.schedule;
      f.required = required.count(name) > 0;
      if (prop.contains("enum")) {
        for (const auto& v : prop["enum"]) f.allowed.push_back(v.get<std::int64_t>());
        f.lo = f.allowed.front();
        f.hi = f.allowed.back();
      } else {
        EXPECT_TRUE(prop.contains("minimum") && prop.contains("maximum"))
            << f.path << " has no documented range";
        f.lo = prop.value("minimum", std::int64_t{0});
        f.hi = prop.value("maximum", std::int64_t{0});
      }
      out.push_back(f);
    }
  }
  return out;
}

// A power of two in [lo, hi] (lo itself when the range holds none), edge exponents one time in three.
std::int64_t power_of_two(const Field& f, Rng& rng) {
  const auto lo = static_cast<std::uint64_t>(std::max<std::int64_t>(f.lo, 1));
  const auto hi = static_cast<std::uint64_t>(f.hi);
  if (lo > hi) return f.lo;
  const int e_lo = std::bit_width(lo - 1);  // smallest e with 2^e >= lo
  const int e_hi = std::bit_width(hi) - 1;
  if (e_lo > e_hi) return f.lo;
  int e = e_lo + static_cast<int>(rng.below(static_cast<std::uint64_t>(e_hi - e_lo + 1)));
  if (rng.chance(33)) e = rng.chance(50) ? e_lo : e_hi;
  return std::int64_t{1} << e;
}

// A value in [lo, hi], biased to the edges.
std::int64_t edge_biased(const Field& f, Rng& rng) {
  if (!f.allowed.empty()) return f.allowed[rng.below(f.allowed.size())];
  const std::int64_t lo = f.lo, hi = f.hi;
  switch (rng.below(9)) {
    case 0:
      return lo;
    case 1:
      return hi;
    case 2:
      return std::max(lo, hi - 1);
    case 3:
      return std::min(hi, lo + 1);
    case 4:
    case 5:
      return power_of_two(f, rng);
    case 6: {
      const std::int64_t v = power_of_two(f, rng) + (rng.chance(50) ? 1 : -1);
      return std::clamp(v, lo, hi);
    }
    case 7: {  // uniform
      return lo + static_cast<std::int64_t>(rng.below(static_cast<std::uint64_t>(hi - lo) + 1));
    }
    default: {  // log-uniform: an exponent first, then a value of that magnitude
      const int bits = std::bit_width(static_cast<std::uint64_t>(hi));
      const int e = static_cast<int>(rng.below(static_cast<std::uint64_t>(bits) + 1));
      const std::int64_t base = e == 0 ? 0 : std::int64_t{1} << (e - 1);
      const std::int64_t v =
          base + static_cast<std::int64_t>(rng.below(static_cast<std::uint64_t>(base) + 1));
      return std::clamp(v, lo, hi);
    }
  }
}

// An exponent in [0, max] (0 when max < 0), an edge one time in three.
int exponent(Rng& rng, int max) {
  if (max <= 0) return 0;
  if (rng.chance(33)) return rng.chance(50) ? 0 : max;
  return static_cast<int>(rng.below(static_cast<std::uint64_t>(max) + 1));
}

// Overwrites the sizes of `model` and `parallel` with powers of two that satisfy every rule of cost::check
// (but the expert-parameter bound, which large MoE models miss): the extremes of valid requests, such as
// layers = pp * virtual_stages = 65536 or a world of 2^24 NPUs.
void coherent(json& model, json& par, Rng& rng) {
  const auto pow2 = [](int e) { return std::int64_t{1} << e; };
  const int layers = exponent(rng, 16);
  const int pp = exponent(rng, layers);
  const int vs = pp == 0 ? 0 : exponent(rng, layers - pp);
  const int hidden = exponent(rng, 20);
  const int heads = exponent(rng, hidden);
  const int kv = exponent(rng, heads);
  const int tp = exponent(rng, std::min(kv, 24 - pp));
  const int seq = exponent(rng, 24);
  const bool sp = rng.chance(30);
  const int cp = exponent(rng, std::min({seq - (sp ? tp : 0), 24 - pp - tp, 20}));
  const int mb = exponent(rng, std::min(24, 28 - seq));
  const int gb = mb + exponent(rng, 24 - mb);
  const int dp = exponent(rng, std::min({gb - mb, 24 - pp - tp - cp, 20}));
  model["layers"] = pow2(layers);
  model["hidden"] = pow2(hidden);
  model["heads"] = pow2(heads);
  model["kv_heads"] = rng.chance(30) && kv == heads ? 0 : pow2(kv);
  model["seq_len"] = pow2(seq);
  model["micro_batch"] = pow2(mb);
  model["global_batch"] = pow2(gb);
  par["pp"] = pow2(pp);
  par["virtual_stages"] = pow2(vs);
  par["tp"] = pow2(tp);
  par["cp"] = pow2(cp);
  par["dp"] = pow2(dp);
  par["sequence_parallel"] = sp && seq - cp >= tp;
  // Expert parameters L * E * 8 h^2 must stay below the parameters (<= 2^50).
  const int experts = rng.chance(50) ? -1 : exponent(rng, std::min(16, 46 - layers - 2 * hidden));
  if (experts < 0) {
    model["moe_experts"] = 0;
    model["moe_top_k"] = 0;
    par["ep"] = 1;
  } else {
    model["moe_experts"] = pow2(experts);
    model["moe_top_k"] = pow2(exponent(rng, std::min(experts, 8)));
    par["ep"] = pow2(exponent(rng, std::min({experts, dp + cp, 20})));
  }
  model["parameters"] =
      pow2(std::max(exponent(rng, 50), std::min(50, layers + 2 * hidden + 3 + experts + 1)));
}

void put(json& body, const std::string& path, std::int64_t v) {
  json* at = &body;
  std::size_t start = 0;
  for (std::size_t dot; (dot = path.find('.', start)) != std::string::npos; start = dot + 1) {
    at = &(*at)[path.substr(start, dot - start)];
  }
  (*at)[path.substr(start)] = v;
}

std::set<std::string> invalid_names(const Problem& p) {
  std::set<std::string> out;
  for (const auto& i : p.invalid_params) out.insert(i.name);
  return out;
}

bool finite_non_negative(double v) {
  return std::isfinite(v) && v >= 0;
}

// Every field a library error may name: a model or parallel field, the parallelism, or a request field.
bool names_a_field(const std::string& field) {
  return !field.empty() && field.find(' ') == std::string::npos;
}

// 8 hosts x 8 NPUs in two SUs of 4 hosts, two spines: small enough to search and place thousands of times.
const topology::Topology& cluster() {
  static const topology::Topology t = [] {
    topology::ClosParams p;
    p.hosts = 8;
    p.npus_per_host = 8;
    p.hosts_per_su = 4;
    p.spines_per_plane = 2;
    p.fabric_link_gbps = 400;
    auto g = topology::generate_clos(p);
    EXPECT_TRUE(g);
    return std::move(*g);
  }();
  return t;
}

placement::NpuIpMap npu_ips() {
  placement::NpuIpMap m;
  for (std::uint32_t h = 1; h <= 8; ++h) {
    const std::string name = "host00" + std::to_string(h);
    for (std::uint32_t n = 0; n < 8; ++n) {
      m[{name, n}] = *IpAddress::parse("10.0." + std::to_string(h) + "." + std::to_string(n + 1));
    }
  }
  return m;
}

struct Tally {
  int parse_rejected = 0;
  int check_rejected = 0;
  int volumes = 0;
  int searched = 0;
  int placed = 0;
  std::uint64_t largest_world = 0;
  std::uint64_t largest_chunks = 0;
  std::set<std::string> check_fields;
};

// Communication volume and collective time of a sample cost::check accepted.
void expect_finite_cost(const ModelSpec& m, const ParallelSpec& p, Rng& rng, Tally& tally,
                        const std::string& where) {
  auto v = communication_volume(m, p);
  ASSERT_TRUE(v) << where << v.error();
  ++tally.volumes;
  tally.largest_world = std::max(tally.largest_world, std::uint64_t{p.tp} * p.pp * p.dp * p.cp);
  tally.largest_chunks = std::max(tally.largest_chunks, std::uint64_t{p.pp} * p.virtual_stages);
  EXPECT_GE(v->micro_batches, 1u) << where;
  EXPECT_LE(v->params_per_rank, m.parameters) << where;
  for (const auto& op : v->ops) {
    EXPECT_GE(op.group_size, 2u) << where << op.what;
    EXPECT_GT(op.bytes, 0u) << where << op.what;
    EXPECT_GT(op.count, 0u) << where << op.what;
    EXPECT_TRUE(finite_non_negative(op.total_bytes())) << where << op.what;
  }
  const Calibration cal = search::default_calibration();
  DimensionSpans spans{};
  for (auto& s : spans) s = GroupSpan{rng.below(cal.tiers.size()), 1};
  for (auto a : {Algorithm::automatic, Algorithm::ring, Algorithm::halving_doubling, Algorithm::tree,
                 Algorithm::hierarchical}) {
    auto t = iteration_comm_time(*v, spans, cal, a);
    if (!t) {
      // Only an algorithm that does not do one of the collectives may refuse; automatic never does.
      EXPECT_TRUE(a == Algorithm::tree || a == Algorithm::hierarchical) << where << t.error();
      continue;
    }
    EXPECT_TRUE(finite_non_negative(t->total_seconds)) << where << to_string(a) << " " << t->total_seconds;
    for (double d : t->per_dimension_seconds) EXPECT_TRUE(finite_non_negative(d)) << where << to_string(a);
  }
}

TEST(RequestProperty, EveryDocumentedRangeGivesAFieldErrorOrFiniteCosts) {
  const std::vector<Field> fields = documented_fields();
  // The table must place every numeric field of the two bodies (a new one needs a place above).
  std::set<std::string> paths;
  for (const auto& f : fields) paths.insert(f.path);
  for (const char* p : {"model.parameters",
                        "model.layers",
                        "model.hidden",
                        "model.heads",
                        "model.kv_heads",
                        "model.seq_len",
                        "model.micro_batch",
                        "model.global_batch",
                        "model.dtype_bytes",
                        "model.moe_experts",
                        "model.moe_top_k",
                        "parallel.tp",
                        "parallel.pp",
                        "parallel.dp",
                        "parallel.cp",
                        "parallel.ep",
                        "parallel.zero_stage",
                        "parallel.virtual_stages",
                        "npus",
                        "npus_per_host",
                        "answers",
                        "qps_per_pair",
                        "ecmp_seeds",
                        "master_port",
                        "ecmp_hash.seed",
                        "source_ports.first",
                        "source_ports.last"}) {
    EXPECT_TRUE(paths.count(p)) << p << " is not documented as an integer with a range";
  }
  const topology::Topology& topo = cluster();
  const placement::NpuIpMap ips = npu_ips();
  Rng rng(kSeed);
  Tally tally;

  for (int it = 0; it < kIterations; ++it) {
    const std::string where = "sample " + std::to_string(it) + ": ";
    // Styles: 40 % edge-biased values, 40 % powers of two, 20 % small parallel sizes (jobs that fit the
    // 64-NPU cluster, so that search and placement run to the end).
    const std::uint64_t style = rng.below(10);
    const bool powers = style >= 4;
    const bool small = style >= 8;
    json search_body = json::object();
    json schedule_body = {{"job_name", "prop"}};
    const Field* broken = nullptr;
    if (rng.chance(10)) broken = &fields[rng.below(fields.size())];
    for (const Field& f : fields) {
      if (!f.required && f.allowed.empty() && &f != broken && rng.chance(15))
        continue;  // the library default
      Field range = f;
      if (small && f.schema == "ParallelSpec" && f.name != "zero_stage") range.hi = 4;
      if (small && f.name == "npus") range.hi = 0;
      std::int64_t v = powers && f.allowed.empty() ? power_of_two(range, rng) : edge_biased(range, rng);
      if (&f == broken) v = !f.allowed.empty() ? 3 : (rng.chance(50) ? f.lo - 1 : f.hi + 1);
      if (f.in_search) put(search_body, f.path, v);
      if (f.in_schedule) put(schedule_body, f.path, v);
    }
    search_body["parallel"]["sequence_parallel"] = rng.chance(30);
    const bool broken_model =
        broken != nullptr && (broken->schema == "ModelSpec" || broken->schema == "ParallelSpec");
    if (powers && !small && !broken_model && rng.chance(80)) {
      coherent(search_body["model"], search_body["parallel"], rng);
    }
    schedule_body["model"] = search_body["model"];
    schedule_body["parallel"] = search_body["parallel"];
    // first > last is a 400 of its own (naming source_ports.last); most samples get an ordered range.
    bool ports_reversed = false;
    if (auto& sp = schedule_body["source_ports"]; !(broken != nullptr && broken->schema == "PortRange")) {
      const auto a = sp["first"].get<std::int64_t>(), b = sp["last"].get<std::int64_t>();
      if (a > b && rng.chance(80)) {
        sp = {{"first", b}, {"last", a}};
      } else {
        ports_reversed = a > b;
      }
    }
    // The placement fields below are set for the cluster; keep a field that is meant to be out of range.
    const bool keep_npus_per_host =
        broken != nullptr && broken->path == "npus_per_host" && broken->in_schedule;
    const bool keep_seeds = broken != nullptr && broken->path == "ecmp_seeds";
    schedule_body["hosts"] = json::array();

    // Parsing: a field outside its range is a 400 naming it; otherwise both bodies parse.
    auto search_req = scheduling_api::parse_search_request(search_body);
    const bool broken_search = broken != nullptr && broken->in_search;
    if (!search_req) {
      ++tally.parse_rejected;
      EXPECT_EQ(search_req.error().status, 400) << where;
      ASSERT_TRUE(broken_search) << where << search_req.error().detail << " " << search_body.dump();
      EXPECT_TRUE(invalid_names(search_req.error()).count(broken->path))
          << where << search_req.error().detail;
      continue;
    }
    ASSERT_FALSE(broken_search) << where << broken->path << " outside its range was accepted";

    const ModelSpec& m = search_req->model;
    const ParallelSpec& p = search_req->parallel;
    auto checked = check(m, p);
    if (!checked) {
      ++tally.check_rejected;
      tally.check_fields.insert(checked.error().field());
      EXPECT_TRUE(names_a_field(checked.error().field())) << where << checked.error().detail;
      EXPECT_TRUE(checked.error().field().starts_with("model.") ||
                  checked.error().field().starts_with("parallel"))
          << where << checked.error().field();
      EXPECT_EQ(checked.error().detail.rfind(checked.error().field(), 0), 0u)
          << where << checked.error().detail;
      EXPECT_FALSE(communication_volume(m, p)) << where;
    } else {
      expect_finite_cost(m, p, rng, tally, where);
    }

    // Search on the small cluster: an answer with finite times, or an error naming a field.
    auto found = search::search_topology(topo, *search_req);
    if (found) {
      ++tally.searched;
      for (const auto& c : found->candidates) {
        EXPECT_TRUE(finite_non_negative(c.total_seconds)) << where;
      }
    } else {
      EXPECT_TRUE(names_a_field(found.error().field())) << where << found.error().field();
      if (!checked) {
        EXPECT_EQ(found.error().field(), checked.error().field()) << where;
      }
    }

    // Placement: the hosts the world size needs (all 8 when it does not fit, a "parallel" refusal).
    const std::uint64_t world = std::uint64_t{p.tp} * p.pp * p.dp * p.cp;
    const std::uint64_t hosts = world % 8 == 0 && world / 8 >= 1 && world / 8 <= 8 ? world / 8 : 8;
    for (std::uint64_t h = 1; h <= hosts; ++h) schedule_body["hosts"].push_back("host00" + std::to_string(h));
    if (!keep_npus_per_host) schedule_body["npus_per_host"] = world < 8 ? world : 8;
    if (world < 8) schedule_body["hosts"] = {"host001"};
    if (!keep_seeds) schedule_body["ecmp_seeds"] = 1;  // bounded run time: one random-ECMP draw
    auto schedule_req = scheduling_api::parse_schedule_request(schedule_body);
    const bool broken_schedule = (broken != nullptr && broken->in_schedule) || ports_reversed;
    if (!schedule_req) {
      EXPECT_EQ(schedule_req.error().status, 400) << where;
      ASSERT_TRUE(broken_schedule) << where << schedule_req.error().detail << " " << schedule_body.dump();
      continue;
    }
    ASSERT_FALSE(broken_schedule) << where << "a field outside its range was accepted";
    // The route plan simulation dominates a placement: enough of them to cover the edges, not all.
    if (tally.placed >= kMaxPlacements) continue;
    schedule_req->npu_ips = ips;
    auto placed = placement::schedule_job(topo, *schedule_req);
    if (placed) {
      ++tally.placed;
      const auto& c = placed->route.comparison;
      for (double s : {c.planned_seconds, c.ecmp_mean_seconds, c.non_blocking_seconds}) {
        EXPECT_TRUE(finite_non_negative(s)) << where;
      }
    } else {
      EXPECT_TRUE(names_a_field(placed.error().field())) << where << placed.error().message();
    }
  }

  std::string fields_seen;
  for (const auto& f : tally.check_fields) fields_seen += f + " ";
  std::printf(
      "[property] %d samples: %d refused by parsing, %d by cost::check (fields: %s), %d volumes, "
      "%d searches answered, %d placements; largest world %llu, largest pp*virtual_stages %llu\n",
      kIterations, tally.parse_rejected, tally.check_rejected, fields_seen.c_str(), tally.volumes,
      tally.searched, tally.placed, static_cast<unsigned long long>(tally.largest_world),
      static_cast<unsigned long long>(tally.largest_chunks));
  // The sampling must reach every stage, at the extremes, or the properties above say little.
  EXPECT_GT(tally.parse_rejected, kIterations / 40);
  EXPECT_GT(tally.volumes, kIterations / 20);
  EXPECT_GT(tally.searched, 0);
  EXPECT_GT(tally.placed, 0);
  EXPECT_GE(tally.largest_chunks, 65536u);
  EXPECT_GE(tally.largest_world, std::uint64_t{1} << 20);
  EXPECT_TRUE(tally.check_fields.count("parallel"));
  EXPECT_TRUE(tally.check_fields.count("parallel.virtual_stages") || tally.check_fields.count("parallel.pp"));
  EXPECT_TRUE(tally.check_fields.count("model.global_batch"));
}

// The reported request, through the same path: 422 material naming parallel.virtual_stages, no SIGFPE.
TEST(RequestProperty, ReportedRequestIsRefusedNamingTheField) {
  const json model = {{"parameters", 1000000000}, {"layers", 65536},  {"hidden", 2048},    {"heads", 16},
                      {"seq_len", 2048},          {"micro_batch", 1}, {"global_batch", 64}};
  const json parallel = {{"pp", 65536}, {"virtual_stages", 65536}};
  auto req = scheduling_api::parse_search_request({{"model", model}, {"parallel", parallel}});
  ASSERT_TRUE(req) << req.error().detail;  // every field inside its range: not a 400
  auto found = search::search_topology(cluster(), *req);
  ASSERT_FALSE(found);
  EXPECT_EQ(found.error().field(), "parallel.virtual_stages");
  auto sched = scheduling_api::parse_schedule_request(
      {{"job_name", "j"}, {"hosts", {"host001"}}, {"model", model}, {"parallel", parallel}});
  ASSERT_TRUE(sched) << sched.error().detail;
  sched->npu_ips = npu_ips();
  auto placed = placement::schedule_job(cluster(), *sched);
  ASSERT_FALSE(placed);
  EXPECT_EQ(placed.error().field(), "parallel.virtual_stages");
}

}  // namespace
}  // namespace hsns::cost
