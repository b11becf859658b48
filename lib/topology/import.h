// Import of a topology file (YAML or JSON; schema in docs/topology.md).
//
// Contract: pure functions, thread-safe. Strict: unknown keys, wrong types, missing required keys,
// duplicate names, dangling references (a link or NPU naming a switch that is not declared) and links
// between non-adjacent tiers are errors. Every error is collected into one hsns::Error (kind invalid) whose
// fields name the field path ("links[2].upper", "hosts[0].npus[3].leaf"); nothing throws. The HTTP
// status numbers below are what the aggregator answers for each error kind (aggregator/http/errors.h):
// too_large 413, invalid and malformed 400.
// YAML is read with yaml-cpp's event parser straight into the same JSON tree the JSON reader produces, so
// both formats go through one validator. Plain YAML scalars that look like numbers or booleans are read as
// such. Only the first YAML document is read. import_topology reads JSON in one pass first
// (stream_import_json: no tree, the same model); what that pass does not accept goes through the tree and
// the validator, so every answer, error or model, is theirs.
//
// Bounds (limits.h), all checked before the model is allocated, so a hostile document costs at most its
// limits: the text's bytes (413); while parsing, the number of values (scalars, lists, mappings, keys
// included; 413) and the nesting depth (400), the parse stopping at the first value over a limit; YAML
// anchors and aliases are refused (400 naming the first one's line and column) because expanding aliases
// is what makes a few hundred bytes describe billions of values, and the file schema has no use for
// them (its `defaults` cover shared values); a repeated mapping key is a 400 naming its path; text that is
// not UTF-8 is a 400. Then the hosts, NPUs, NPUs per host, switches and links the tree describes are
// counted and checked against the model limits (400 naming "hosts", "switches", "links" or
// "hosts[i].npus"), and TopologyBuilder::build checks the index work.
#pragma once

#include <nlohmann/json_fwd.hpp>
#include <optional>
#include <string_view>

#include "topology/limits.h"
#include "topology/topology.h"

namespace hsns::topology {

enum class FileFormat { kAuto, kYaml, kJson };

// What reading a document touched (for tests and the fuzzer: refused documents stop early).
struct DocumentStats {
  std::size_t values = 0;     // values seen before the parse ended or was stopped
  std::size_t max_depth = 0;  // deepest container nesting seen
};

// kAuto: JSON when the first non-blank character is '{', YAML otherwise.
Result<Topology> import_topology(std::string_view text, FileFormat format = FileFormat::kAuto,
                                 const DocumentLimits& document_limits = kDocumentLimits,
                                 const ModelLimits& model_limits = kModelLimits);
// The single pass over JSON text that import_topology tries first (import_stream.cpp): parser events
// straight into the model, no JSON tree, the text read once; the same model import_topology_json builds
// from the same document, ids included. nullopt for any document it does not read as plainly valid (an
// error, a limit reached, a null, a value outside the schema's shape): the checking path then reads it and
// names the problems. Bytes are not checked here (import_topology checks them first).
std::optional<Topology> stream_import_json(std::string_view text,
                                           const DocumentLimits& document_limits = kDocumentLimits,
                                           const ModelLimits& model_limits = kModelLimits);
// A tree already parsed (the caller bounded its parse): the model-size checks and the validation.
Result<Topology> import_topology_json(const nlohmann::json& document,
                                      const ModelLimits& limits = kModelLimits);
// The model import_topology would read back from t's exported document (export_topology_document or
// export_topology_yaml), ids included, built directly from t: what the aggregator caches after a write
// without the cost of writing and re-reading the document.
Result<Topology> as_imported(const Topology& t, const ModelLimits& limits = kModelLimits);
// Only the bounded read of the text into the JSON tree import_topology_json validates.
Result<nlohmann::json> read_topology_document(std::string_view text, FileFormat format,
                                              const DocumentLimits& limits = kDocumentLimits,
                                              DocumentStats* stats = nullptr);

}  // namespace hsns::topology
