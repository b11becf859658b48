#include "scheduling/topology/import.h"

#include <yaml-cpp/yaml.h>

#include <cmath>
#include <memory>
#include <nlohmann/json.hpp>
#include <set>

namespace hsns::topology {
namespace {

using nlohmann::json;
using Errors = std::shared_ptr<std::vector<InvalidParam>>;

// Reads one object's fields; records errors with full paths; finish() flags keys never asked for.
class Reader {
 public:
  Reader(const json& object, std::string path, Errors errors)
      : object_(object), path_(std::move(path)), errors_(std::move(errors)) {}

  std::string path(std::string_view key) const {
    return path_.empty() ? std::string(key) : path_ + "." + std::string(key);
  }
  void fail(std::string_view key, std::string reason) { errors_->push_back({path(key), std::move(reason)}); }

  const json* get(std::string_view key, bool required) {
    seen_.insert(std::string(key));
    auto it = object_.find(std::string(key));
    if (it == object_.end() || it->is_null()) {
      if (required) fail(key, "is required");
      return nullptr;
    }
    return &*it;
  }
  std::optional<std::string> string(std::string_view key, bool required) {
    const json* v = get(key, required);
    if (v == nullptr) return std::nullopt;
    if (!v->is_string() || v->get_ref<const std::string&>().empty()) {
      fail(key, "must be a non-empty string");
      return std::nullopt;
    }
    return v->get<std::string>();
  }
  std::optional<double> number(std::string_view key, bool required, double min, bool min_exclusive) {
    const json* v = get(key, required);
    if (v == nullptr) return std::nullopt;
    if (!v->is_number() || !std::isfinite(v->get<double>())) {
      fail(key, "must be a number");
      return std::nullopt;
    }
    const double d = v->get<double>();
    if (min_exclusive ? !(d > min) : !(d >= min)) {
      fail(key, std::string("must be ") + (min_exclusive ? "> " : ">= ") + std::to_string(min));
      return std::nullopt;
    }
    return d;
  }
  std::optional<std::uint32_t> index(std::string_view key, bool required) {
    const json* v = get(key, required);
    if (v == nullptr) return std::nullopt;
    if (!v->is_number_integer() || v->get<std::int64_t>() < 0 || v->get<std::int64_t>() > 0xFFFFFF) {
      fail(key, "must be an integer in [0, 16777215]");
      return std::nullopt;
    }
    return static_cast<std::uint32_t>(v->get<std::int64_t>());
  }
  const json* array(std::string_view key, bool required) {
    const json* v = get(key, required);
    if (v != nullptr && !v->is_array()) {
      fail(key, "must be a list");
      return nullptr;
    }
    return v;
  }
  const json* object(std::string_view key, bool required) {
    const json* v = get(key, required);
    if (v != nullptr && !v->is_object()) {
      fail(key, "must be a mapping");
      return nullptr;
    }
    return v;
  }
  DeviceState state(std::string_view key) {
    auto text = string(key, false);
    if (!text) return DeviceState::kHealthy;
    auto s = parse_state(*text);
    if (!s) {
      fail(key, "must be one of healthy, sub-health, isolated, allocated");
      return DeviceState::kHealthy;
    }
    return *s;
  }
  void finish() {
    for (auto it = object_.begin(); it != object_.end(); ++it) {
      if (!seen_.count(it.key())) errors_->push_back({path(it.key()), "unknown key"});
    }
  }

 private:
  const json& object_;
  std::string path_;
  Errors errors_;
  std::set<std::string> seen_;
};

std::string item(const std::string& list, std::size_t i) {
  return list + "[" + std::to_string(i) + "]";
}

tl::expected<json, Problem> yaml_to_json(const YAML::Node& node, const std::string& path, int depth) {
  if (depth > 32) return tl::unexpected(Problem::malformed("YAML nested deeper than 32 levels at " + path));
  switch (node.Type()) {
    case YAML::NodeType::Null:
    case YAML::NodeType::Undefined:
      return json(nullptr);
    case YAML::NodeType::Scalar: {
      const std::string& text = node.Scalar();
      if (node.Tag() == "!") return json(text);  // quoted
      if (text == "true" || text == "false") return json(text == "true");
      if (text == "null" || text == "~") return json(nullptr);
      if (!text.empty() &&
          (std::isdigit(static_cast<unsigned char>(text[0])) || text[0] == '-' || text[0] == '+')) {
        std::size_t used = 0;
        try {
          const long long integer = std::stoll(text, &used);
          if (used == text.size()) return json(integer);
          const double real = std::stod(text, &used);
          if (used == text.size()) return json(real);
        } catch (const std::exception&) {
        }
      }
      return json(text);
    }
    case YAML::NodeType::Sequence: {
      json out = json::array();
      std::size_t i = 0;
      for (const auto& child : node) {
        auto value = yaml_to_json(child, item(path, i++), depth + 1);
        if (!value) return value;
        out.push_back(std::move(*value));
      }
      return out;
    }
    case YAML::NodeType::Map: {
      json out = json::object();
      for (const auto& kv : node) {
        if (!kv.first.IsScalar())
          return tl::unexpected(Problem::invalid(path, "mapping keys must be scalars"));
        const std::string key = kv.first.Scalar();
        const std::string child_path = path.empty() ? key : path + "." + key;
        if (out.contains(key)) return tl::unexpected(Problem::invalid(child_path, "duplicate key"));
        auto value = yaml_to_json(kv.second, child_path, depth + 1);
        if (!value) return value;
        out[key] = std::move(*value);
      }
      return out;
    }
  }
  return json(nullptr);
}

struct Defaults {
  double bandwidth_gbps = 0;
  double latency_us = 0;
  bool has_bandwidth = false;
};

}  // namespace

tl::expected<Topology, Problem> import_topology_json(const json& document) {
  if (!document.is_object())
    return tl::unexpected(Problem::malformed("a topology document must be a mapping"));
  auto errors = std::make_shared<std::vector<InvalidParam>>();
  Reader top(document, "", errors);
  TopologyBuilder b;
  if (const json* version = top.get("version", true)) {
    if (!version->is_number_integer() || version->get<std::int64_t>() != 1) top.fail("version", "must be 1");
  }
  if (auto name = top.string("name", false)) b.set_name(*name);
  Defaults defaults;
  if (const json* d = top.object("defaults", false)) {
    Reader r(*d, "defaults", errors);
    if (auto bw = r.number("bandwidth_gbps", false, 0, true)) {
      defaults.bandwidth_gbps = *bw;
      defaults.has_bandwidth = true;
    }
    if (auto lat = r.number("latency_us", false, 0, false)) defaults.latency_us = *lat;
    r.finish();
  }
  auto link_numbers = [&](Reader& r, Link& link) {
    auto bw = r.number("bandwidth_gbps", !defaults.has_bandwidth, 0, true);
    link.bandwidth_gbps = bw.value_or(defaults.has_bandwidth ? defaults.bandwidth_gbps : 1.0);
    link.latency_us = r.number("latency_us", false, 0, false).value_or(defaults.latency_us);
  };

  std::vector<Tier> tier_of;  // by NodeId
  // Switches first, so hosts and links can name them in any order.
  if (const json* switches = top.array("switches", true)) {
    for (std::size_t i = 0; i < switches->size(); ++i) {
      const std::string where = item("switches", i);
      if (!(*switches)[i].is_object()) {
        errors->push_back({where, "must be a mapping"});
        continue;
      }
      Reader r((*switches)[i], where, errors);
      auto name = r.string("name", true);
      auto tier_text = r.string("tier", true);
      std::optional<Tier> tier = tier_text ? parse_tier(*tier_text) : std::nullopt;
      if (tier_text && (!tier || *tier == Tier::kHost)) r.fail("tier", "must be one of leaf, spine, core");
      const DeviceState state = r.state("state");
      r.finish();
      if (name && tier && *tier != Tier::kHost) {
        b.add_switch(*name, *tier, state, where);
        tier_of.push_back(*tier);
      }
    }
  }
  auto resolve = [&](Reader& r, std::string_view key,
                     const std::optional<std::string>& name) -> std::optional<NodeId> {
    if (!name) return std::nullopt;
    auto id = b.find(*name);
    if (!id) r.fail(key, "names unknown node '" + *name + "'");
    return id;
  };

  struct PendingNpuLink {
    NodeId host;
    Link link;
    std::string where;
  };
  std::vector<PendingNpuLink> npu_links;
  if (const json* hosts = top.array("hosts", true)) {
    for (std::size_t i = 0; i < hosts->size(); ++i) {
      const std::string where = item("hosts", i);
      if (!(*hosts)[i].is_object()) {
        errors->push_back({where, "must be a mapping"});
        continue;
      }
      Reader r((*hosts)[i], where, errors);
      auto name = r.string("name", true);
      const DeviceState state = r.state("state");
      const json* npus = r.array("npus", false);
      if (!name) {
        r.finish();
        continue;
      }
      if (auto existing = b.find(*name)) {
        r.fail("name", "duplicate name '" + *name + "'");
        r.finish();
        continue;
      }
      const NodeId host = b.add_host(*name, state, where);
      tier_of.push_back(Tier::kHost);
      for (std::size_t k = 0; npus != nullptr && k < npus->size(); ++k) {
        const std::string npu_where = item(where + ".npus", k);
        if (!(*npus)[k].is_object()) {
          errors->push_back({npu_where, "must be a mapping"});
          continue;
        }
        Reader n((*npus)[k], npu_where, errors);
        auto index = n.index("index", true);
        auto port = n.string("port", true);
        const DeviceState npu_state = n.state("state");
        auto leaf_name = n.string("leaf", false);
        auto leaf = resolve(n, "leaf", leaf_name);
        if (leaf && tier_of.at(*leaf) != Tier::kLeaf) {
          n.fail("leaf", "names '" + *leaf_name + "', which is a " +
                             std::string(to_string(tier_of.at(*leaf))) + ", not a leaf");
          leaf.reset();
        }
        Link link;
        link.upper_port = n.string("leaf_port", false).value_or("");
        const bool has_link_fields = (*npus)[k].contains("bandwidth_gbps") ||
                                     (*npus)[k].contains("latency_us") || (*npus)[k].contains("link_state") ||
                                     (*npus)[k].contains("leaf_port");
        if (leaf_name) {
          link_numbers(n, link);
          link.state = n.state("link_state");
        } else if (has_link_fields) {
          n.fail("leaf", "is required when link fields are given");
          for (const char* key : {"bandwidth_gbps", "latency_us", "link_state"}) n.get(key, false);
        }
        n.finish();
        if (!index || !port) continue;
        b.add_npu(host, Npu{*index, *port, npu_state, kNoLink}, npu_where);
        if (leaf) {
          link.lower = host;
          link.upper = *leaf;
          link.npu = *index;
          link.lower_port = *port;
          npu_links.push_back({host, std::move(link), npu_where});
        }
      }
      r.finish();
    }
  }
  for (auto& pending : npu_links) b.add_link(std::move(pending.link), pending.where);

  if (const json* links = top.array("links", false)) {
    for (std::size_t i = 0; i < links->size(); ++i) {
      const std::string where = item("links", i);
      if (!(*links)[i].is_object()) {
        errors->push_back({where, "must be a mapping"});
        continue;
      }
      Reader r((*links)[i], where, errors);
      Link link;
      auto lower = resolve(r, "lower", r.string("lower", true));
      auto upper = resolve(r, "upper", r.string("upper", true));
      link.lower_port = r.string("lower_port", false).value_or("");
      link.upper_port = r.string("upper_port", false).value_or("");
      link_numbers(r, link);
      link.state = r.state("state");
      r.finish();
      if (lower && upper) {
        link.lower = *lower;
        link.upper = *upper;
        b.add_link(std::move(link), where);
      }
    }
  }
  top.finish();
  if (!errors->empty()) return tl::unexpected(Problem::invalid(std::move(*errors)));
  return std::move(b).build();
}

tl::expected<Topology, Problem> import_topology(std::string_view text, FileFormat format) {
  if (format == FileFormat::kAuto) {
    const std::size_t first = text.find_first_not_of(" \t\r\n");
    format = first != std::string_view::npos && text[first] == '{' ? FileFormat::kJson : FileFormat::kYaml;
  }
  if (format == FileFormat::kJson) {
    json document = json::parse(text, nullptr, false);
    if (document.is_discarded())
      return tl::unexpected(Problem::malformed("the topology file is not valid JSON"));
    return import_topology_json(document);
  }
  YAML::Node root;
  try {
    root = YAML::Load(std::string(text));
  } catch (const YAML::Exception& e) {
    return tl::unexpected(
        Problem::malformed("the topology file is not valid YAML: " + std::string(e.what())));
  }
  auto document = yaml_to_json(root, "", 0);
  if (!document) return tl::unexpected(std::move(document.error()));
  return import_topology_json(*document);
}

}  // namespace hsns::topology
