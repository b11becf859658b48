#include "topology/import.h"

#include <yaml-cpp/eventhandler.h>
#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <cmath>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <set>
#include <sstream>
#include <unordered_set>
#include <vector>

#include "hsns/utf8.h"

namespace hsns::topology {
namespace {

using nlohmann::json;
using Errors = std::shared_ptr<std::vector<FieldError>>;

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

std::string child_path(const std::string& path, const std::string& key) {
  return path.empty() ? key : path + "." + key;
}

// Thrown by the readers below to stop the parser at the first refused event; never leaves this file.
struct Refused {
  Error error;
};

// Where the reader is in the document: the open containers and, for mappings, the keys seen so far (a
// repeated key is an error: two readers of a document must not disagree on it). Paths are only spelled
// out for an error, so reading a large valid document builds no path strings.
class Position {
 public:
  Position(const DocumentLimits& limits, DocumentStats& stats) : limits_(limits), stats_(stats) {}

  // Every value (scalar, null, container; keys included) counts against the limit.
  void count_value() {
    if (++stats_.values > limits_.values) {
      throw Refused{Error::too_large("the topology document has more than " + std::to_string(limits_.values) +
                                     " values (scalars, lists and mappings), the server's limit")};
    }
  }
  bool in_map() const { return !frames_.empty() && frames_.back().map; }
  bool expecting_key() const { return in_map() && !frames_.back().has_key; }
  // The path of the container being read, and of the value about to be read in it.
  std::string container_path() const {
    std::string path;
    for (std::size_t i = 0; i + 1 < frames_.size(); ++i) path = step(path, frames_[i]);
    return path;
  }
  std::string next_path() const {
    if (frames_.empty()) return "";
    return step(container_path(), frames_.back());
  }
  void key(std::string name) {
    Frame& f = frames_.back();
    if (f.seen(name)) throw Refused{Error::invalid(child_path(container_path(), name), "duplicate key")};
    f.add(name);
    f.key = std::move(name);
    f.has_key = true;
  }
  void open(bool map) {
    if (frames_.size() >= limits_.depth) {
      throw Refused{Error::malformed("the topology document is nested deeper than " +
                                     std::to_string(limits_.depth) + " levels at '" + next_path() + "'")};
    }
    frames_.emplace_back();
    frames_.back().map = map;
    stats_.max_depth = std::max(stats_.max_depth, frames_.size());
  }
  void close() { frames_.pop_back(); }
  // After a value was read inside the current container.
  void advance() {
    if (frames_.empty()) return;
    Frame& f = frames_.back();
    if (f.map) {
      f.has_key = false;
    } else {
      ++f.index;
    }
  }
  const std::string& current_key() const { return frames_.back().key; }

 private:
  struct Frame {
    bool map = false;
    std::size_t index = 0;
    bool has_key = false;
    std::string key;  // the key whose value comes next (has_key)
    // Mappings of the file schema have a handful of keys: a linear scan; a large one gets a hash set.
    std::vector<std::string> few;
    std::unordered_set<std::string> many;
    bool seen(const std::string& name) const {
      if (!many.empty()) return many.contains(name);
      return std::find(few.begin(), few.end(), name) != few.end();
    }
    void add(const std::string& name) {
      if (many.empty() && few.size() < 16) {
        few.push_back(name);
        return;
      }
      if (many.empty()) many.insert(few.begin(), few.end());
      many.insert(name);
    }
  };
  static std::string step(const std::string& path, const Frame& f) {
    return f.map ? child_path(path, f.key) : item(path, f.index);
  }
  const DocumentLimits& limits_;
  DocumentStats& stats_;
  std::vector<Frame> frames_;
};

// Text from the parser (its messages quote the input) made safe for a problem document: ASCII only.
std::string printable(std::string_view text) {
  std::string out;
  for (char c : text) {
    const auto u = static_cast<unsigned char>(c);
    out += u >= 0x20 && u < 0x7F ? c : '?';
  }
  return out;
}

std::string at_mark(const YAML::Mark& mark) {
  return "line " + std::to_string(mark.line + 1) + ", column " + std::to_string(mark.column + 1);
}

// Plain YAML scalars that look like numbers or booleans are read as such (docs/topology.md); quoted ones
// (tag "!") are strings.
json scalar_value(const std::string& tag, const std::string& text) {
  if (tag == "!") return json(text);
  if (text == "true" || text == "false") return json(text == "true");
  if (text == "null" || text == "~") return json(nullptr);
  if (!text.empty() &&
      (std::isdigit(static_cast<unsigned char>(text[0])) || text[0] == '-' || text[0] == '+')) {
    std::size_t used = 0;
    try {
      const long long integer = std::stoll(text, &used);
      if (used == text.size()) return json(integer);
    } catch (const std::exception&) {
    }
    try {
      const double real = std::stod(text, &used);
      if (used == text.size()) return json(real);
    } catch (const std::exception&) {
    }
  }
  return json(text);
}

// Builds the JSON tree straight from yaml-cpp's parser events, never through YAML::Load: no node graph is
// built, anchors and aliases are refused at the first one (so no alias can be expanded), and the value
// count and depth are checked at every event, before the tree grows.
class YamlReader final : public YAML::EventHandler {
 public:
  YamlReader(const DocumentLimits& limits, DocumentStats& stats) : position_(limits, stats) {}

  json take() { return std::move(root_); }

  void OnDocumentStart(const YAML::Mark&) override {}
  void OnDocumentEnd() override {}
  void OnNull(const YAML::Mark& mark, YAML::anchor_t anchor) override {
    begin(mark, anchor);
    add(json(nullptr));
  }
  void OnAlias(const YAML::Mark& mark, YAML::anchor_t) override {
    throw Refused{
        Error::malformed("YAML aliases and anchors are not supported in a topology document (alias at " +
                         at_mark(mark) + "); write the values out")};
  }
  void OnAnchor(const YAML::Mark& mark, const std::string& name) override { refuse_anchor(mark, name); }
  void OnScalar(const YAML::Mark& mark, const std::string& tag, YAML::anchor_t anchor,
                const std::string& value) override {
    if (!valid_utf8(value))
      throw Refused{Error::malformed("the topology document is not valid UTF-8 at " + at_mark(mark))};
    if (position_.expecting_key()) {
      check_anchor(mark, anchor);
      position_.count_value();
      position_.key(value);
      return;
    }
    begin(mark, anchor);
    add(scalar_value(tag, value));
  }
  void OnSequenceStart(const YAML::Mark& mark, const std::string&, YAML::anchor_t anchor,
                       YAML::EmitterStyle::value) override {
    begin(mark, anchor);
    position_.open(false);
    stack_.push_back(json::array());
  }
  void OnSequenceEnd() override { end(); }
  void OnMapStart(const YAML::Mark& mark, const std::string&, YAML::anchor_t anchor,
                  YAML::EmitterStyle::value) override {
    begin(mark, anchor);
    position_.open(true);
    stack_.push_back(json::object());
  }
  void OnMapEnd() override { end(); }

 private:
  void refuse_anchor(const YAML::Mark& mark, const std::string& name) {
    throw Refused{
        Error::malformed("YAML anchors and aliases are not supported in a topology document (" +
                         (name.empty() ? std::string("anchor") : "anchor '&" + printable(name) + "'") +
                         " at " + at_mark(mark) + "); write the values out")};
  }
  void check_anchor(const YAML::Mark& mark, YAML::anchor_t anchor) {
    if (anchor != YAML::NullAnchor) refuse_anchor(mark, "");
  }
  // A value (not a key) starts.
  void begin(const YAML::Mark& mark, YAML::anchor_t anchor) {
    check_anchor(mark, anchor);
    if (position_.expecting_key()) {
      throw Refused{
          Error::invalid(position_.container_path(), "mapping keys must be scalars (" + at_mark(mark) + ")")};
    }
    position_.count_value();
  }
  void add(json value) {
    if (stack_.empty()) {
      root_ = std::move(value);
      return;
    }
    json& parent = stack_.back();
    if (parent.is_object()) {
      parent[position_.current_key()] = std::move(value);
    } else {
      parent.push_back(std::move(value));
    }
    position_.advance();
  }
  void end() {
    json value = std::move(stack_.back());
    stack_.pop_back();
    position_.close();
    add(std::move(value));
  }

  Position position_;
  std::vector<json> stack_;
  json root_;
};

// Checks JSON text before nlohmann builds a tree of it: values, depth and repeated keys, stopping at the
// first problem (returning false from a SAX callback ends the parse).
class JsonScanner final : public nlohmann::json_sax<json> {
 public:
  JsonScanner(const DocumentLimits& limits, DocumentStats& stats) : position_(limits, stats) {}

  std::optional<Error> error;

  bool null() override { return value(); }
  bool boolean(bool) override { return value(); }
  bool number_integer(number_integer_t) override { return value(); }
  bool number_unsigned(number_unsigned_t) override { return value(); }
  bool number_float(number_float_t, const string_t&) override { return value(); }
  bool string(string_t&) override { return value(); }
  bool binary(binary_t&) override { return value(); }
  bool start_object(std::size_t) override { return open(true); }
  bool end_object() override { return close(); }
  bool start_array(std::size_t) override { return open(false); }
  bool end_array() override { return close(); }
  bool key(string_t& name) override {
    return guard([&] {
      position_.count_value();
      position_.key(name);
    });
  }
  bool parse_error(std::size_t position, const std::string&, const nlohmann::detail::exception&) override {
    error = Error::malformed("the topology document is not valid JSON: error at byte " +
                             std::to_string(position));
    return false;
  }

 private:
  template <typename F>
  bool guard(F&& f) {
    try {
      f();
      return true;
    } catch (Refused& r) {
      error = std::move(r.error);
      return false;
    }
  }
  bool value() {
    return guard([&] {
      position_.count_value();
      position_.advance();
    });
  }
  bool open(bool map) {
    return guard([&] {
      position_.count_value();
      position_.open(map);
    });
  }
  bool close() {
    position_.close();
    position_.advance();
    return true;
  }

  Position position_;
};

// The model size a document describes, counted from the tree alone (before anything is built).
std::optional<Error> check_document_model(const json& document, const ModelLimits& limits) {
  ModelSize size;
  SizeFields fields;
  if (auto it = document.find("switches"); it != document.end() && it->is_array()) size.switches = it->size();
  std::uint64_t npu_links = 0;
  if (auto it = document.find("hosts"); it != document.end() && it->is_array()) {
    size.hosts = it->size();
    for (std::size_t i = 0; i < it->size(); ++i) {
      const json& host = (*it)[i];
      if (!host.is_object()) continue;
      auto npus = host.find("npus");
      if (npus == host.end() || !npus->is_array()) continue;
      size.npus += npus->size();
      if (npus->size() > size.max_npus_per_host) {
        size.max_npus_per_host = npus->size();
        fields.npus_per_host = item("hosts", i) + ".npus";
      }
      for (const json& npu : *npus) {
        if (npu.is_object() && npu.contains("leaf")) ++npu_links;
      }
    }
  }
  std::uint64_t switch_links = 0;
  if (auto it = document.find("links"); it != document.end() && it->is_array()) switch_links = it->size();
  size.links = npu_links + switch_links;
  fields.links = npu_links > switch_links ? "hosts" : "links";
  return check_model_size(size, fields, limits);
}

// kAuto resolved: JSON when the first non-blank character is '{', YAML otherwise.
FileFormat resolved_format(std::string_view text, FileFormat format) {
  if (format != FileFormat::kAuto) return format;
  const std::size_t first = text.find_first_not_of(" \t\r\n");
  return first != std::string_view::npos && text[first] == '{' ? FileFormat::kJson : FileFormat::kYaml;
}

struct Defaults {
  double bandwidth_gbps = 0;
  double latency_us = 0;
  bool has_bandwidth = false;
};

}  // namespace

Result<Topology> import_topology_json(const json& document, const ModelLimits& limits) {
  if (!document.is_object()) return tl::unexpected(Error::malformed("a topology document must be a mapping"));
  if (auto problem = check_document_model(document, limits)) return tl::unexpected(std::move(*problem));
  auto errors = std::make_shared<std::vector<FieldError>>();
  Reader top(document, "", errors);
  TopologyBuilder b;
  b.set_limits(limits);
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
      auto management_address = r.string("management_address", false);
      r.finish();
      if (name && tier && *tier != Tier::kHost) {
        const NodeId id = b.add_switch(*name, *tier, state, where);
        if (management_address) b.set_management_address(id, std::move(*management_address));
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
  if (!errors->empty()) return tl::unexpected(Error::invalid(std::move(*errors)));
  return std::move(b).build();
}

Result<Topology> as_imported(const Topology& t, const ModelLimits& limits) {
  // Mirrors import_topology_json over export_topology_document(t): switches core, spine, leaf (each in
  // id order), hosts in id order with their NPUs, then the NPU links in host order, then the switch
  // links in id order; exactly the fields the document carries.
  TopologyBuilder b;
  b.set_limits(limits);
  if (!t.name().empty()) b.set_name(t.name());
  std::vector<NodeId> renamed(t.nodes().size(), kNoNode);
  for (Tier tier : {Tier::kCore, Tier::kSpine, Tier::kLeaf}) {
    for (NodeId id : t.switches(tier)) {
      const Node& sw = t.node(id);
      renamed[id] = b.add_switch(sw.name, tier, sw.state);
      if (!sw.management_address.empty()) b.set_management_address(renamed[id], sw.management_address);
    }
  }
  // A link of t with its ends renamed into the builder (the builder assigns the id).
  auto relinked = [&renamed](const Link& from) {
    Link link = from;
    link.lower = renamed[from.lower];
    link.upper = renamed[from.upper];
    return link;
  };
  std::vector<Link> npu_links;
  for (NodeId id : t.hosts()) {
    const Node& host = t.node(id);
    const NodeId copy = b.add_host(host.name, host.state);
    renamed[id] = copy;
    for (const Npu& npu : host.npus) {
      b.add_npu(copy, Npu{npu.index, npu.port, npu.state, kNoLink});
      if (npu.link == kNoLink) continue;
      // The document names an NPU link's lower end by the NPU's port and index.
      Link link = relinked(t.link(npu.link));
      link.lower_port = npu.port;
      link.npu = npu.index;
      npu_links.push_back(std::move(link));
    }
  }
  for (auto& link : npu_links) b.add_link(std::move(link));
  for (const Link& from : t.links()) {
    if (t.node(from.lower).tier == Tier::kHost) continue;
    b.add_link(relinked(from));
  }
  return std::move(b).build();
}

Result<json> read_topology_document(std::string_view text, FileFormat format, const DocumentLimits& limits,
                                    DocumentStats* stats) {
  DocumentStats local;
  DocumentStats& counted = stats != nullptr ? *stats : local;
  counted = {};
  format = resolved_format(text, format);
  const std::size_t max_bytes = format == FileFormat::kJson ? limits.bytes : limits.yaml_bytes;
  if (text.size() > max_bytes) {
    return tl::unexpected(Error::too_large("the topology document is " + std::to_string(text.size()) +
                                           " bytes, more than the server's limit of " +
                                           std::to_string(max_bytes) + " for " +
                                           (format == FileFormat::kJson ? "JSON" : "YAML")));
  }
  if (format == FileFormat::kJson) {
    JsonScanner scanner(limits, counted);
    // The scan stops at the first problem, so a refused document costs at most its limit of values.
    if (!json::sax_parse(text, &scanner) || scanner.error) {
      return tl::unexpected(
          scanner.error.value_or(Error::malformed("the topology document is not valid JSON")));
    }
    json document = json::parse(text, nullptr, false);
    if (document.is_discarded())
      return tl::unexpected(Error::malformed("the topology document is not valid JSON"));
    return document;
  }
  YamlReader reader(limits, counted);
  try {
    std::string copy(text);
    std::istringstream in(copy);
    YAML::Parser parser(in);
    // The first document only, as YAML::Load reads it.
    parser.HandleNextDocument(reader);
  } catch (Refused& r) {
    return tl::unexpected(std::move(r.error));
  } catch (const YAML::Exception& e) {
    return tl::unexpected(
        Error::malformed("the topology document is not valid YAML: " + printable(e.what())));
  }
  return reader.take();
}

Result<Topology> import_topology(std::string_view text, FileFormat format,
                                 const DocumentLimits& document_limits, const ModelLimits& model_limits) {
  // JSON within its byte limit is read in one pass first; what that pass does not accept (every invalid
  // document among others) is read again below, so the answers are those of the checking path.
  const bool json_text = resolved_format(text, format) == FileFormat::kJson;
  if (json_text && text.size() <= document_limits.bytes) {
    if (auto model = stream_import_json(text, document_limits, model_limits)) return std::move(*model);
  }
  auto document = read_topology_document(text, format, document_limits);
  if (!document) return tl::unexpected(std::move(document.error()));
  return import_topology_json(*document, model_limits);
}

}  // namespace hsns::topology
