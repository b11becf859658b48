// Import of a topology file (YAML or JSON; schema in docs/topology.md).
//
// Contract: pure functions, thread-safe. Strict: unknown keys, wrong types, missing required keys,
// duplicate names, dangling references (a link or NPU naming a switch that is not declared) and links
// between non-adjacent tiers are errors. Every error is collected into one 400 Problem whose
// invalid_params name the field path ("links[2].upper", "hosts[0].npus[3].leaf"); nothing throws.
// YAML is read with yaml-cpp and converted to the same JSON tree the JSON reader produces, so both formats
// go through one validator. Plain YAML scalars that look like numbers or booleans are read as such.
#pragma once

#include <nlohmann/json_fwd.hpp>
#include <string_view>

#include "scheduling/topology/topology.h"

namespace hsns::topology {

enum class FileFormat { kAuto, kYaml, kJson };

// kAuto: JSON when the first non-blank character is '{', YAML otherwise.
tl::expected<Topology, Problem> import_topology(std::string_view text, FileFormat format = FileFormat::kAuto);
tl::expected<Topology, Problem> import_topology_json(const nlohmann::json& document);

}  // namespace hsns::topology
