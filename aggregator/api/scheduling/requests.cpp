#include "api/scheduling/requests.h"

#include <cstdint>
#include <optional>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "api/network/requests.h"
#include "hsns/json_fields.h"
#include "scheduling/cost/calibration.h"

namespace hsns::scheduling_api {
namespace {

using nlohmann::json;

constexpr std::int64_t kMaxParallel = cost::kMaxParallelSize;
constexpr std::size_t kMaxHostNameLength = 253;

// Reads the integer field `name`, which must lie in [Lo, Hi], into `out`. The range is checked at compile
// time to fit T, so the conversion never changes the value: request numbers reach the libraries exactly.
template <std::int64_t Lo, std::int64_t Hi, typename T>
void read_int(FieldReader& r, std::string_view name, bool required, T& out) {
  static_assert(Lo <= Hi && std::in_range<T>(Lo) && std::in_range<T>(Hi), "range does not fit the field");
  if (auto v = r.integer(name, required, Lo, Hi)) out = static_cast<T>(*v);
}

cost::ModelSpec read_model(FieldReader& parent) {
  cost::ModelSpec m;
  const json* obj = parent.object("model", true);
  if (!obj) return m;
  FieldReader r = parent.child(*obj, parent.field_path("model"));
  read_int<1, cost::kMaxParameters>(r, "parameters", true, m.parameters);
  read_int<1, cost::kMaxLayers>(r, "layers", true, m.layers);
  read_int<1, cost::kMaxHidden>(r, "hidden", true, m.hidden);
  read_int<1, cost::kMaxHidden>(r, "heads", true, m.heads);
  read_int<0, cost::kMaxHidden>(r, "kv_heads", false, m.kv_heads);
  read_int<1, cost::kMaxSeqLen>(r, "seq_len", true, m.seq_len);
  read_int<1, std::int64_t{1} << 24>(r, "micro_batch", true, m.micro_batch);
  read_int<1, cost::kMaxGlobalBatch>(r, "global_batch", true, m.global_batch);
  if (auto d = r.integer("dtype_bytes", false, 1, 8)) {
    if (*d == 1 || *d == 2 || *d == 4 || *d == 8) {
      m.dtype_bytes = static_cast<std::uint32_t>(*d);
    } else {
      r.fail("dtype_bytes", "must be 1, 2, 4 or 8");
    }
  }
  read_int<0, cost::kMaxExperts>(r, "moe_experts", false, m.moe_experts);
  read_int<0, cost::kMaxTopK>(r, "moe_top_k", false, m.moe_top_k);
  (void)r.finish();
  return m;
}

cost::ParallelSpec read_parallel(FieldReader& parent) {
  cost::ParallelSpec p;
  const json* obj = parent.object("parallel", true);
  if (!obj) return p;
  FieldReader r = parent.child(*obj, parent.field_path("parallel"));
  read_int<1, kMaxParallel>(r, "tp", false, p.tp);
  read_int<1, kMaxParallel>(r, "pp", false, p.pp);
  read_int<1, kMaxParallel>(r, "dp", false, p.dp);
  read_int<1, kMaxParallel>(r, "cp", false, p.cp);
  read_int<1, kMaxParallel>(r, "ep", false, p.ep);
  read_int<0, 3>(r, "zero_stage", false, p.zero_stage);
  if (auto sp = r.boolean("sequence_parallel", false)) p.sequence_parallel = *sp;
  read_int<1, kMaxParallel>(r, "virtual_stages", false, p.virtual_stages);
  (void)r.finish();
  return p;
}

std::optional<cost::Algorithm> read_algorithm_field(FieldReader& r, std::string_view name) {
  auto i = r.one_of(name, false, {"auto", "ring", "halving-doubling", "tree", "hierarchical"});
  if (!i) return std::nullopt;
  static constexpr cost::Algorithm kAlgorithms[] = {cost::Algorithm::automatic, cost::Algorithm::ring,
                                                    cost::Algorithm::halving_doubling, cost::Algorithm::tree,
                                                    cost::Algorithm::hierarchical};
  return kAlgorithms[*i];
}

std::optional<cost::Algorithm> read_algorithm(FieldReader& r) {
  return read_algorithm_field(r, "algorithm");
}

// The search's "algorithm": one name for every dimension, or an object naming one per dimension
// ({"tp": "ring", "dp": "tree"}; dimensions left out use automatic).
void read_search_algorithm(FieldReader& r, const json& body, search::SearchRequest& req) {
  const auto it = body.is_object() ? body.find("algorithm") : body.end();
  if (it == body.end() || !it->is_object()) {
    if (auto a = read_algorithm(r)) req.algorithm = *a;
    return;
  }
  r.known("algorithm");
  FieldReader ar = r.child(*it, r.field_path("algorithm"));
  for (auto d : {cost::Dimension::tp, cost::Dimension::pp, cost::Dimension::dp, cost::Dimension::ep,
                 cost::Dimension::cp}) {
    if (auto a = read_algorithm_field(ar, dimension_name(d))) {
      req.dimension_algorithm[static_cast<std::size_t>(d)] = *a;
    }
  }
  (void)ar.finish();
}

// A calibration object ({"tiers": [...]}, cost::parse_calibration's format), its errors named under
// "calibration" ("calibration.tiers[1].bandwidth_gbps").
std::optional<cost::Calibration> read_calibration(FieldReader& r, const json& value) {
  constexpr std::size_t kMaxTiers = 16;
  const auto tiers = value.find("tiers");
  if (tiers != value.end() && tiers->is_array() && tiers->size() > kMaxTiers) {
    r.fail("calibration.tiers", "at most " + std::to_string(kMaxTiers) + " tiers");
    return std::nullopt;
  }
  auto parsed = cost::parse_calibration(value.dump());
  if (parsed) return std::move(*parsed);
  const std::string& error = parsed.error();
  const auto colon = error.find(": ");
  std::string field = colon == std::string::npos ? "" : error.substr(0, colon);
  const std::string reason = colon == std::string::npos ? error : error.substr(colon + 2);
  field = field.empty() || field == "calibration" ? "calibration" : "calibration." + field;
  r.fail(field, reason);
  return std::nullopt;
}

// A list of host names (non-empty strings, each at most 253 characters, no duplicates).
std::vector<std::string> read_host_list(FieldReader& r, std::string_view name, bool required,
                                        std::size_t min_items) {
  std::vector<std::string> out;
  const json* arr = r.array(name, required, kMaxRequestHosts);
  if (!arr) return out;
  if (arr->size() < min_items) {
    r.fail(name, "must have at least " + std::to_string(min_items) + " item" + (min_items == 1 ? "" : "s"));
    return out;
  }
  std::set<std::string, std::less<>> seen;
  for (std::size_t i = 0; i < arr->size(); ++i) {
    const std::string item = std::string(name) + "[" + std::to_string(i) + "]";
    const auto& v = (*arr)[i];
    if (!v.is_string()) {
      r.fail(item, "must be a string (a host name)");
      continue;
    }
    const auto& s = v.get_ref<const std::string&>();
    if (s.empty() || s.size() > kMaxHostNameLength) {
      r.fail(item, "must be 1 to 253 characters");
      continue;
    }
    if (!seen.insert(s).second) {
      r.fail(item, "host '" + s + "' is listed twice");
      continue;
    }
    out.push_back(s);
  }
  return out;
}

}  // namespace

std::string_view dimension_name(cost::Dimension d) {
  switch (d) {
    case cost::Dimension::tp:
      return "tp";
    case cost::Dimension::pp:
      return "pp";
    case cost::Dimension::dp:
      return "dp";
    case cost::Dimension::ep:
      return "ep";
    case cost::Dimension::cp:
      return "cp";
  }
  return "?";
}

bool valid_job_name(std::string_view name) {
  if (name.empty() || name.size() > kMaxJobNameLength) return false;
  for (std::size_t i = 0; i < name.size(); ++i) {
    const char c = name[i];
    const bool alnum = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9');
    if (!alnum && (i == 0 || (c != '.' && c != '_' && c != '-'))) return false;
  }
  return true;
}

tl::expected<search::SearchRequest, Problem> parse_search_request(const json& body) {
  search::SearchRequest req;
  FieldReader r(body);
  req.model = read_model(r);
  req.parallel = read_parallel(r);
  read_int<0, cost::kMaxWorldSize>(r, "npus", false, req.npus);
  read_int<0, network::kMaxNpusPerHost>(r, "npus_per_host", false, req.npus_per_host);
  if (const json* res = r.object("resources", false)) {
    FieldReader rr = r.child(*res, "resources");
    req.resources.hosts = read_host_list(rr, "hosts", false, 0);
    (void)rr.finish();
  }
  if (const json* con = r.object("constraints", false)) {
    FieldReader cr = r.child(*con, "constraints");
    if (auto i = cr.one_of("max_tier", false, {"host", "leaf", "spine", "core"})) {
      req.constraints.max_tier = static_cast<search::Tier>(*i);
    }
    req.constraints.exclude_hosts = read_host_list(cr, "exclude_hosts", false, 0);
    (void)cr.finish();
  }
  read_int<1, 1000>(r, "answers", false, req.answers);
  read_search_algorithm(r, body, req);
  if (const json* cal = r.object("calibration", false)) {
    if (auto parsed = read_calibration(r, *cal)) req.calibration = std::move(*parsed);
  }
  if (auto e = r.boolean("explain", false)) req.explain = *e;
  if (auto p = r.finish()) return tl::unexpected(*p);
  return req;
}

tl::expected<ScheduleBody, Problem> parse_schedule_request(const json& body) {
  ScheduleBody req;
  FieldReader r(body);
  if (auto name = r.string("job_name", true, kMaxJobNameLength + 1)) {
    if (valid_job_name(*name)) {
      req.job_name = *name;
    } else {
      r.fail("job_name", "must be 1 to 63 characters of [A-Za-z0-9._-], starting with a letter or digit");
    }
  }
  req.hosts = read_host_list(r, "hosts", true, 1);
  read_int<0, network::kMaxNpusPerHost>(r, "npus_per_host", false, req.npus_per_host);
  req.model = read_model(r);
  req.parallel = read_parallel(r);
  if (auto a = read_algorithm(r)) req.algorithm = *a;
  if (auto f = r.one_of("framework", false, {"pytorch", "megatron", "deepspeed", "mindspore"})) {
    static constexpr placement::Framework kFrameworks[] = {
        placement::Framework::pytorch, placement::Framework::megatron, placement::Framework::deepspeed,
        placement::Framework::mindspore};
    req.framework = kFrameworks[*f];
  }
  if (const json* hash = r.object("ecmp_hash", false)) {
    FieldReader hr = r.child(*hash, "ecmp_hash");
    if (const json* fields = hr.array("fields", false, 5)) {
      cost::HashFields selected{false, false, false, false, false};
      if (fields->empty()) hr.fail("fields", "must name at least one header field");
      std::set<std::string, std::less<>> seen;
      for (std::size_t i = 0; i < fields->size(); ++i) {
        const std::string item = "fields[" + std::to_string(i) + "]";
        const auto& v = (*fields)[i];
        const std::string s = v.is_string() ? v.get<std::string>() : std::string();
        if (!seen.insert(s).second && !s.empty()) {
          hr.fail(item, "'" + s + "' is listed twice");
        } else if (s == "src_ip") {
          selected.src_ip = true;
        } else if (s == "dst_ip") {
          selected.dst_ip = true;
        } else if (s == "src_port") {
          selected.src_port = true;
        } else if (s == "dst_port") {
          selected.dst_port = true;
        } else if (s == "protocol") {
          selected.protocol = true;
        } else {
          hr.fail(item, "must be one of src_ip, dst_ip, src_port, dst_port, protocol");
        }
      }
      req.ecmp_hash.fields = selected;
    }
    if (auto f = hr.one_of("function", false, {"crc32", "crc32c", "crc32_bzip2", "xor_fold"})) {
      static constexpr cost::HashFunction kFunctions[] = {
          cost::HashFunction::crc32, cost::HashFunction::crc32c, cost::HashFunction::crc32_bzip2,
          cost::HashFunction::xor_fold};
      req.ecmp_hash.function = kFunctions[*f];
    }
    read_int<0, 0xFFFFFFFF>(hr, "seed", false, req.ecmp_hash.seed);
    (void)hr.finish();
  }
  if (const json* ports = r.object("source_ports", false)) {
    FieldReader pr = r.child(*ports, "source_ports");
    auto first = pr.integer("first", true, 0, 65535);
    auto last = pr.integer("last", true, 0, 65535);
    if (first && last) {
      if (*first > *last) {
        pr.fail("last", "must be >= first");
      } else {
        req.source_ports = {static_cast<std::uint16_t>(*first), static_cast<std::uint16_t>(*last)};
      }
    }
    (void)pr.finish();
  }
  read_int<1, 64>(r, "qps_per_pair", false, req.qps_per_pair);
  read_int<1, 100>(r, "ecmp_seeds", false, req.ecmp_seeds);
  read_int<1, 65535>(r, "master_port", false, req.master_port);
  if (auto v = r.one_of("rank_table_version", false, {"auto", "1.0", "1.2"})) {
    static constexpr placement::RankTableVersion kVersions[] = {placement::RankTableVersion::automatic,
                                                                placement::RankTableVersion::v1_0,
                                                                placement::RankTableVersion::v1_2};
    req.rank_table_version = kVersions[*v];
  }
  if (auto a = r.boolean("allow_unreachable", false)) req.allow_unreachable = *a;
  if (auto p = r.finish()) return tl::unexpected(*p);
  return req;
}

}  // namespace hsns::scheduling_api
