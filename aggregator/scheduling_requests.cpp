#include "scheduling_requests.h"

#include <cstdint>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "hsns/json_fields.h"
#include "network/requests.h"

namespace hsns::scheduling_api {
namespace {

using nlohmann::json;

constexpr std::int64_t kMaxParallel = std::int64_t{1} << 20;
constexpr std::size_t kMaxHostNameLength = 253;

template <typename T>
void set_if(std::optional<std::int64_t> v, T& out) {
  if (v) out = static_cast<T>(*v);
}

// One enumerated string field: its value must be one of `allowed`; returns the position.
std::optional<std::size_t> choice(FieldReader& r, std::string_view name, bool required,
                                  std::initializer_list<std::string_view> allowed) {
  auto s = r.string(name, required, 64);
  if (!s) return std::nullopt;
  std::size_t i = 0;
  std::string list;
  for (auto a : allowed) {
    if (*s == a) return i;
    list += (i == 0 ? "" : ", ") + std::string(a);
    ++i;
  }
  r.fail(name, "must be one of " + list);
  return std::nullopt;
}

cost::ModelSpec read_model(FieldReader& parent) {
  cost::ModelSpec m;
  const json* obj = parent.object("model", true);
  if (!obj) return m;
  FieldReader r = parent.child(*obj, parent.field_path("model"));
  set_if(r.integer("parameters", true, 1, std::int64_t{1} << 50), m.parameters);
  set_if(r.integer("layers", true, 1, 65536), m.layers);
  set_if(r.integer("hidden", true, 1, std::int64_t{1} << 20), m.hidden);
  set_if(r.integer("heads", true, 1, std::int64_t{1} << 20), m.heads);
  set_if(r.integer("kv_heads", false, 0, std::int64_t{1} << 20), m.kv_heads);
  set_if(r.integer("seq_len", true, 1, std::int64_t{1} << 24), m.seq_len);
  set_if(r.integer("micro_batch", true, 1, std::int64_t{1} << 24), m.micro_batch);
  set_if(r.integer("global_batch", true, 1, std::int64_t{1} << 24), m.global_batch);
  if (auto d = r.integer("dtype_bytes", false, 1, 8)) {
    if (*d == 1 || *d == 2 || *d == 4 || *d == 8) {
      m.dtype_bytes = static_cast<std::uint32_t>(*d);
    } else {
      r.fail("dtype_bytes", "must be 1, 2, 4 or 8");
    }
  }
  set_if(r.integer("moe_experts", false, 0, 65536), m.moe_experts);
  set_if(r.integer("moe_top_k", false, 0, 256), m.moe_top_k);
  (void)r.finish();
  return m;
}

cost::ParallelSpec read_parallel(FieldReader& parent) {
  cost::ParallelSpec p;
  const json* obj = parent.object("parallel", true);
  if (!obj) return p;
  FieldReader r = parent.child(*obj, parent.field_path("parallel"));
  set_if(r.integer("tp", false, 1, kMaxParallel), p.tp);
  set_if(r.integer("pp", false, 1, kMaxParallel), p.pp);
  set_if(r.integer("dp", false, 1, kMaxParallel), p.dp);
  set_if(r.integer("cp", false, 1, kMaxParallel), p.cp);
  set_if(r.integer("ep", false, 1, kMaxParallel), p.ep);
  set_if(r.integer("zero_stage", false, 0, 3), p.zero_stage);
  if (auto sp = r.boolean("sequence_parallel", false)) p.sequence_parallel = *sp;
  set_if(r.integer("virtual_stages", false, 1, kMaxParallel), p.virtual_stages);
  (void)r.finish();
  return p;
}

std::optional<cost::Algorithm> read_algorithm(FieldReader& r) {
  auto i = choice(r, "algorithm", false, {"auto", "ring", "halving-doubling", "tree", "hierarchical"});
  if (!i) return std::nullopt;
  static constexpr cost::Algorithm kAlgorithms[] = {cost::Algorithm::automatic, cost::Algorithm::ring,
                                                    cost::Algorithm::halving_doubling, cost::Algorithm::tree,
                                                    cost::Algorithm::hierarchical};
  return kAlgorithms[*i];
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
  set_if(r.integer("npus", false, 0, std::int64_t{1} << 24), req.npus);
  set_if(r.integer("npus_per_host", false, 0, network::kMaxNpusPerHost), req.npus_per_host);
  if (const json* res = r.object("resources", false)) {
    FieldReader rr = r.child(*res, "resources");
    req.resources.hosts = read_host_list(rr, "hosts", false, 0);
    (void)rr.finish();
  }
  if (const json* con = r.object("constraints", false)) {
    FieldReader cr = r.child(*con, "constraints");
    if (auto i = choice(cr, "max_tier", false, {"host", "leaf", "spine", "core"})) {
      req.constraints.max_tier = static_cast<search::Tier>(*i);
    }
    req.constraints.exclude_hosts = read_host_list(cr, "exclude_hosts", false, 0);
    (void)cr.finish();
  }
  set_if(r.integer("answers", false, 1, 1000), req.answers);
  if (auto a = read_algorithm(r)) req.algorithm = *a;
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
  set_if(r.integer("npus_per_host", false, 0, network::kMaxNpusPerHost), req.npus_per_host);
  req.model = read_model(r);
  req.parallel = read_parallel(r);
  if (auto a = read_algorithm(r)) req.algorithm = *a;
  if (auto f = choice(r, "framework", false, {"pytorch", "megatron", "deepspeed", "mindspore"})) {
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
    if (auto f = choice(hr, "function", false, {"crc32", "crc32c", "crc32_bzip2", "xor_fold"})) {
      static constexpr cost::HashFunction kFunctions[] = {
          cost::HashFunction::crc32, cost::HashFunction::crc32c, cost::HashFunction::crc32_bzip2,
          cost::HashFunction::xor_fold};
      req.ecmp_hash.function = kFunctions[*f];
    }
    set_if(hr.integer("seed", false, 0, 0xFFFFFFFF), req.ecmp_hash.seed);
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
  set_if(r.integer("qps_per_pair", false, 1, 64), req.qps_per_pair);
  set_if(r.integer("ecmp_seeds", false, 1, 100), req.ecmp_seeds);
  set_if(r.integer("master_port", false, 1, 65535), req.master_port);
  if (auto v = choice(r, "rank_table_version", false, {"auto", "1.0", "1.2"})) {
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
