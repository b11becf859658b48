// The single-pass JSON import (import.h, stream_import_json): parser events straight into a compact
// list of the document's switches, hosts, NPUs and links, then the builder calls of the checking path
// (import_topology_json) in the same order, so a document both accept gives the same model, ids included.
//
// Why two paths: the checking path holds the whole document as a JSON tree (an allocation per key and
// value: gigabytes for 100,000 hosts) and reads the text twice (limits, then the tree). This path reads
// the text once and keeps only what the model needs. It never reports an error itself: anything it does
// not recognise as plainly valid (an unknown or repeated key, a null, a wrong type, a value out of range,
// a name it cannot resolve, a limit reached, a build error) makes it give up, and the caller re-reads the
// document with the checking path, which names every problem exactly as before.
#include <cmath>
#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "topology/import.h"

namespace hsns::topology {
namespace {

using nlohmann::json;

// Where the reader is: the object or list being read.
enum class Scope : std::uint8_t {
  kStart,     // before the document
  kRoot,      // the document mapping
  kDefaults,  // defaults
  kSwitches,
  kSwitch,
  kHosts,
  kHost,
  kNpus,
  kNpu,
  kLinks,
  kLink,
  kDone,  // after the document
};

// Every key of the file schema; a mapping's seen keys are one bit each.
enum class Key : std::uint8_t {
  kNone,
  kVersion,
  kName,
  kDefaults,
  kSwitches,
  kHosts,
  kLinks,
  kBandwidth,
  kLatency,
  kTier,
  kState,
  kNpus,
  kIndex,
  kPort,
  kLeaf,
  kLeafPort,
  kLinkState,
  kLower,
  kUpper,
  kLowerPort,
  kUpperPort,
  kManagementAddress,
};

constexpr std::uint32_t bit(Key k) {
  return 1u << static_cast<unsigned>(k);
}

// The keys a scope allows (the checking path's Reader calls, per object).
Key key_of(Scope scope, std::string_view name) {
  struct Entry {
    std::string_view name;
    Key key;
  };
  static constexpr Entry kRoot[] = {{"version", Key::kVersion},   {"name", Key::kName},
                                    {"defaults", Key::kDefaults}, {"switches", Key::kSwitches},
                                    {"hosts", Key::kHosts},       {"links", Key::kLinks}};
  static constexpr Entry kDefaults[] = {{"bandwidth_gbps", Key::kBandwidth}, {"latency_us", Key::kLatency}};
  static constexpr Entry kSwitch[] = {{"name", Key::kName},
                                      {"tier", Key::kTier},
                                      {"state", Key::kState},
                                      {"management_address", Key::kManagementAddress}};
  static constexpr Entry kHost[] = {{"name", Key::kName}, {"state", Key::kState}, {"npus", Key::kNpus}};
  static constexpr Entry kNpu[] = {{"index", Key::kIndex},        {"port", Key::kPort},
                                   {"state", Key::kState},        {"leaf", Key::kLeaf},
                                   {"leaf_port", Key::kLeafPort}, {"bandwidth_gbps", Key::kBandwidth},
                                   {"latency_us", Key::kLatency}, {"link_state", Key::kLinkState}};
  static constexpr Entry kLink[] = {{"lower", Key::kLower},
                                    {"upper", Key::kUpper},
                                    {"lower_port", Key::kLowerPort},
                                    {"upper_port", Key::kUpperPort},
                                    {"bandwidth_gbps", Key::kBandwidth},
                                    {"latency_us", Key::kLatency},
                                    {"state", Key::kState}};
  auto find = [name](const auto& entries) {
    for (const Entry& e : entries) {
      if (e.name == name) return e.key;
    }
    return Key::kNone;
  };
  switch (scope) {
    case Scope::kRoot:
      return find(kRoot);
    case Scope::kDefaults:
      return find(kDefaults);
    case Scope::kSwitch:
      return find(kSwitch);
    case Scope::kHost:
      return find(kHost);
    case Scope::kNpu:
      return find(kNpu);
    case Scope::kLink:
      return find(kLink);
    default:
      return Key::kNone;
  }
}

constexpr std::uint32_t kNoName = 0xFFFFFFFFu;

// A link's optional numbers as the document gave them (defaults apply after the whole document is read:
// "defaults" may come after the links that use it).
struct LinkNumbers {
  double bandwidth_gbps = 0;
  double latency_us = 0;
  bool has_bandwidth = false;
  bool has_latency = false;
};

struct PendingSwitch {
  std::string name;
  Tier tier = Tier::kLeaf;
  DeviceState state = DeviceState::kHealthy;
  std::string management_address;
};

struct PendingHost {
  std::string name;
  DeviceState state = DeviceState::kHealthy;
  std::size_t first_npu = 0;
  std::size_t npu_count = 0;
};

struct PendingNpu {
  Npu npu;
  std::uint32_t leaf = kNoName;  // into Names
  std::string leaf_port;
  LinkNumbers numbers;
  DeviceState link_state = DeviceState::kHealthy;
};

struct PendingLink {
  std::uint32_t lower = kNoName;
  std::uint32_t upper = kNoName;
  std::string lower_port;
  std::string upper_port;
  LinkNumbers numbers;
  DeviceState state = DeviceState::kHealthy;
};

// The node names links refer to, each kept once (a leaf is named by every host of its rail).
class Names {
 public:
  std::uint32_t intern(const std::string& name) {
    auto it = ids_.find(std::string_view(name));
    if (it != ids_.end()) return it->second;
    const auto id = static_cast<std::uint32_t>(names_.size());
    names_.push_back(name);
    ids_.emplace(names_.back(), id);
    return id;
  }
  const std::string& name(std::uint32_t id) const { return names_[id]; }
  std::size_t size() const { return names_.size(); }

 private:
  struct Hash {
    using is_transparent = void;
    std::size_t operator()(std::string_view s) const { return std::hash<std::string_view>{}(s); }
  };
  std::vector<std::string> names_;
  std::unordered_map<std::string, std::uint32_t, Hash, std::equal_to<>> ids_;
};

class StreamReader final : public nlohmann::json_sax<json> {
 public:
  StreamReader(const DocumentLimits& document_limits, const ModelLimits& model_limits)
      : document_limits_(document_limits), model_limits_(model_limits) {}

  bool null() override { return false; }
  bool boolean(bool) override { return false; }
  bool binary(binary_t&) override { return false; }
  bool number_integer(number_integer_t v) override {
    // Negative: never a valid version or index; a valid number anywhere else.
    if (!count() || key_ == Key::kVersion || key_ == Key::kIndex) return false;
    return number(static_cast<double>(v));
  }
  bool number_unsigned(number_unsigned_t v) override {
    if (!count()) return false;
    if (key_ == Key::kVersion) return scope_ == Scope::kRoot && v == 1 && done_value();
    if (key_ == Key::kIndex) {
      if (scope_ != Scope::kNpu || v > 0xFFFFFF) return false;
      npus_.back().npu.index = static_cast<std::uint32_t>(v);
      return done_value();
    }
    return number(static_cast<double>(v));
  }
  bool number_float(number_float_t v, const string_t&) override {
    if (!count() || key_ == Key::kVersion || key_ == Key::kIndex) return false;
    return number(v);
  }
  bool string(string_t& v) override;
  bool key(string_t& name) override {
    if (!count()) return false;
    key_ = key_of(scope_, name);
    if (key_ == Key::kNone || (seen_ & bit(key_)) != 0) return false;  // unknown or repeated
    seen_ |= bit(key_);
    return true;
  }
  bool start_object(std::size_t) override;
  bool end_object() override;
  bool start_array(std::size_t) override;
  bool end_array() override;
  bool parse_error(std::size_t, const std::string&, const nlohmann::detail::exception&) override {
    return false;
  }

  // After a complete parse: the model, or nullopt (the checking path decides).
  std::optional<Topology> build() &&;

 private:
  // Every value (keys and containers included) counts against the document's limit, as in the checking
  // path; over it, that path reports the error.
  bool count() { return ++values_ <= document_limits_.values; }
  bool done_value() {
    key_ = Key::kNone;
    return true;
  }
  bool number(double v);
  // Opens a nested scope inside the current one (the mapping's keys seen so far are saved).
  bool enter(Scope scope) {
    if (++depth_ > document_limits_.depth) return false;
    stack_.push_back({scope_, seen_});
    scope_ = scope;
    seen_ = 0;
    key_ = Key::kNone;
    return true;
  }
  void leave() {
    --depth_;
    scope_ = stack_.back().scope;
    seen_ = stack_.back().seen;
    stack_.pop_back();
    key_ = Key::kNone;
  }

  struct Frame {
    Scope scope;
    std::uint32_t seen;
  };
  const DocumentLimits& document_limits_;
  const ModelLimits& model_limits_;
  std::size_t values_ = 0;
  std::size_t depth_ = 0;
  Scope scope_ = Scope::kStart;
  Key key_ = Key::kNone;
  std::uint32_t seen_ = 0;
  std::vector<Frame> stack_;

  std::optional<std::string> name_;
  LinkNumbers defaults_;
  std::vector<PendingSwitch> switches_;
  std::vector<PendingHost> hosts_;
  std::vector<PendingNpu> npus_;
  std::vector<PendingLink> links_;
  Names names_;
  std::uint64_t npu_links_ = 0;
};

bool StreamReader::number(double v) {
  if (!std::isfinite(v)) return false;
  LinkNumbers* numbers = nullptr;
  switch (scope_) {
    case Scope::kDefaults:
      numbers = &defaults_;
      break;
    case Scope::kNpu:
      numbers = &npus_.back().numbers;
      break;
    case Scope::kLink:
      numbers = &links_.back().numbers;
      break;
    default:
      return false;
  }
  if (key_ == Key::kBandwidth) {
    if (!(v > 0)) return false;
    numbers->bandwidth_gbps = v;
    numbers->has_bandwidth = true;
  } else if (key_ == Key::kLatency) {
    if (!(v >= 0)) return false;
    numbers->latency_us = v;
    numbers->has_latency = true;
  } else {
    return false;
  }
  return done_value();
}

bool StreamReader::string(string_t& v) {
  if (!count() || v.empty()) return false;
  auto state = [&v](DeviceState& out) {
    const auto s = parse_state(v);
    if (s) out = *s;
    return s.has_value();
  };
  bool ok = false;
  switch (scope_) {
    case Scope::kRoot:
      if (key_ == Key::kName) {
        name_ = v;
        ok = true;
      }
      break;
    case Scope::kSwitch: {
      PendingSwitch& s = switches_.back();
      if (key_ == Key::kName) {
        s.name = v;
        ok = true;
      } else if (key_ == Key::kTier) {
        const auto tier = parse_tier(v);
        ok = tier && *tier != Tier::kHost;
        if (ok) s.tier = *tier;
      } else if (key_ == Key::kState) {
        ok = state(s.state);
      } else if (key_ == Key::kManagementAddress) {
        s.management_address = v;
        ok = true;
      }
      break;
    }
    case Scope::kHost:
      if (key_ == Key::kName) {
        hosts_.back().name = v;
        ok = true;
      } else if (key_ == Key::kState) {
        ok = state(hosts_.back().state);
      }
      break;
    case Scope::kNpu: {
      PendingNpu& n = npus_.back();
      ok = true;
      if (key_ == Key::kPort) {
        n.npu.port = v;
      } else if (key_ == Key::kLeaf) {
        n.leaf = names_.intern(v);
      } else if (key_ == Key::kLeafPort) {
        n.leaf_port = v;
      } else if (key_ == Key::kState) {
        ok = state(n.npu.state);
      } else if (key_ == Key::kLinkState) {
        ok = state(n.link_state);
      } else {
        ok = false;
      }
      break;
    }
    case Scope::kLink: {
      PendingLink& l = links_.back();
      ok = true;
      if (key_ == Key::kLower) {
        l.lower = names_.intern(v);
      } else if (key_ == Key::kUpper) {
        l.upper = names_.intern(v);
      } else if (key_ == Key::kLowerPort) {
        l.lower_port = v;
      } else if (key_ == Key::kUpperPort) {
        l.upper_port = v;
      } else if (key_ == Key::kState) {
        ok = state(l.state);
      } else {
        ok = false;
      }
      break;
    }
    default:
      break;
  }
  return ok && done_value();
}

bool StreamReader::start_object(std::size_t) {
  if (!count()) return false;
  switch (scope_) {
    case Scope::kStart:
      return enter(Scope::kRoot);
    case Scope::kRoot:
      return key_ == Key::kDefaults && enter(Scope::kDefaults);
    case Scope::kSwitches:
      if (switches_.size() >= model_limits_.switches) return false;
      switches_.emplace_back();
      return enter(Scope::kSwitch);
    case Scope::kHosts:
      if (hosts_.size() >= model_limits_.hosts) return false;
      hosts_.push_back({{}, DeviceState::kHealthy, npus_.size(), 0});
      return enter(Scope::kHost);
    case Scope::kNpus:
      if (npus_.size() >= model_limits_.npus || hosts_.back().npu_count >= model_limits_.npus_per_host) {
        return false;
      }
      npus_.emplace_back();
      ++hosts_.back().npu_count;
      return enter(Scope::kNpu);
    case Scope::kLinks:
      if (links_.size() >= model_limits_.links) return false;
      links_.emplace_back();
      return enter(Scope::kLink);
    default:
      return false;
  }
}

bool StreamReader::end_object() {
  const std::uint32_t seen = seen_;
  auto has = [seen](Key k) { return (seen & bit(k)) != 0; };
  bool ok = true;
  switch (scope_) {
    case Scope::kRoot:
      ok = has(Key::kVersion) && has(Key::kSwitches) && has(Key::kHosts);
      leave();
      scope_ = Scope::kDone;
      return ok;
    case Scope::kSwitch:
      ok = has(Key::kName) && has(Key::kTier);
      break;
    case Scope::kHost:
      ok = has(Key::kName);
      break;
    case Scope::kNpu:
      ok = has(Key::kIndex) && has(Key::kPort);
      if (has(Key::kLeaf)) {
        ++npu_links_;
      } else {
        // Link fields without a leaf are an error of the checking path's.
        ok = ok && !has(Key::kLeafPort) && !has(Key::kBandwidth) && !has(Key::kLatency) &&
             !has(Key::kLinkState);
      }
      break;
    case Scope::kLink:
      ok = has(Key::kLower) && has(Key::kUpper);
      break;
    case Scope::kDefaults:
      break;
    default:
      return false;
  }
  leave();
  return ok && done_value();
}

bool StreamReader::start_array(std::size_t) {
  if (!count()) return false;
  if (scope_ == Scope::kRoot) {
    if (key_ == Key::kSwitches) return enter(Scope::kSwitches);
    if (key_ == Key::kHosts) return enter(Scope::kHosts);
    if (key_ == Key::kLinks) return enter(Scope::kLinks);
    return false;
  }
  return scope_ == Scope::kHost && key_ == Key::kNpus && enter(Scope::kNpus);
}

bool StreamReader::end_array() {
  if (scope_ != Scope::kSwitches && scope_ != Scope::kHosts && scope_ != Scope::kNpus &&
      scope_ != Scope::kLinks) {
    return false;
  }
  leave();
  return done_value();
}

std::optional<Topology> StreamReader::build() && {
  if (scope_ != Scope::kDone) return std::nullopt;
  // The model size, as the checking path counts it before building (its error names the fields).
  ModelSize size;
  size.hosts = hosts_.size();
  size.npus = npus_.size();
  size.switches = switches_.size();
  size.links = npu_links_ + links_.size();
  for (const PendingHost& h : hosts_)
    size.max_npus_per_host = std::max<std::uint64_t>(size.max_npus_per_host, h.npu_count);
  if (check_model_size(size, SizeFields{}, model_limits_)) return std::nullopt;
  // A link's numbers without a bandwidth of its own need the document's default.
  auto finish = [this](const LinkNumbers& given, Link& link) {
    if (!given.has_bandwidth && !defaults_.has_bandwidth) return false;
    link.bandwidth_gbps = given.has_bandwidth ? given.bandwidth_gbps : defaults_.bandwidth_gbps;
    link.latency_us = given.has_latency ? given.latency_us : defaults_.latency_us;
    return true;
  };

  // The builder calls of import_topology_json, in its order. Their field paths only name errors, and any
  // error sends the document to the checking path, so a short placeholder saves formatting one per element.
  const std::string where = "-";
  TopologyBuilder b;
  b.set_limits(model_limits_);
  if (name_) b.set_name(std::move(*name_));
  // Node ids are dense: switches first, then hosts; a resolved id below the switch count is a switch.
  std::vector<Tier> switch_tier;
  switch_tier.reserve(switches_.size());
  for (PendingSwitch& s : switches_) {
    switch_tier.push_back(s.tier);
    const NodeId id = b.add_switch(std::move(s.name), s.tier, s.state, where);
    if (!s.management_address.empty()) b.set_management_address(id, std::move(s.management_address));
  }
  switches_ = {};
  // Each distinct name is resolved once; the builder's answer for it cannot change while hosts are added
  // (a later host of the same name is a duplicate: an error either way).
  constexpr NodeId kUnresolved = kNoNode - 1;
  std::vector<NodeId> resolved(names_.size(), kUnresolved);
  auto resolve = [&](std::uint32_t ref) {
    if (resolved[ref] == kUnresolved) resolved[ref] = b.find(names_.name(ref)).value_or(kNoNode);
    return resolved[ref];
  };
  for (PendingHost& h : hosts_) {
    if (b.find(h.name)) return std::nullopt;  // a duplicate name
    const NodeId host = b.add_host(std::move(h.name), h.state, where);
    for (std::size_t k = h.first_npu; k < h.first_npu + h.npu_count; ++k) {
      PendingNpu& n = npus_[k];
      if (n.leaf == kNoName) {
        b.add_npu(host, std::move(n.npu), where);
        continue;
      }
      const NodeId leaf = resolve(n.leaf);
      if (leaf >= switch_tier.size() || switch_tier[leaf] != Tier::kLeaf) return std::nullopt;
      // The NPU links follow every host in the checking path; no other link is added in between, so
      // adding each now gives it the same id.
      Link link;
      link.lower = host;
      link.upper = leaf;
      link.npu = n.npu.index;
      link.lower_port = n.npu.port;
      link.upper_port = std::move(n.leaf_port);
      link.state = n.link_state;
      if (!finish(n.numbers, link)) return std::nullopt;
      b.add_npu(host, std::move(n.npu), where);
      b.add_link(std::move(link), where);
    }
  }
  hosts_ = {};
  npus_ = {};
  for (PendingLink& l : links_) {
    Link link;
    link.lower = resolve(l.lower);
    link.upper = resolve(l.upper);
    if (link.lower == kNoNode || link.upper == kNoNode) return std::nullopt;
    link.lower_port = std::move(l.lower_port);
    link.upper_port = std::move(l.upper_port);
    link.state = l.state;
    if (!finish(l.numbers, link)) return std::nullopt;
    b.add_link(std::move(link), where);
  }
  links_ = {};
  auto built = std::move(b).build();
  if (!built) return std::nullopt;
  return std::move(*built);
}

}  // namespace

std::optional<Topology> stream_import_json(std::string_view text, const DocumentLimits& document_limits,
                                           const ModelLimits& model_limits) {
  StreamReader reader(document_limits, model_limits);
  if (!json::sax_parse(text, &reader)) return std::nullopt;
  return std::move(reader).build();
}

}  // namespace hsns::topology
