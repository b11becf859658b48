// libFuzzer target over the topology import (lib/topology/import.h): the bytes are read
// as a YAML and as a JSON topology document, with the server's limits and with small ones (so the limit
// paths are reached with short inputs). Run under -rss_limit_mb and -timeout: an input whose cost is not
// bounded by its limits (an alias expanded, a nesting not cut, a model not counted before it is built)
// fails as out-of-memory or timeout.
//
// Checked on every input: nothing throws; a refusal is a 400 or 413 Problem with a detail; the parse
// never counted more values than the limit allows (plus the one that tripped it) nor nested deeper than
// the depth limit; an accepted model is within the model limits and its stored document (JSON tree)
// reads back to a model of the same size. A violated invariant is __builtin_trap().
#include <cstddef>
#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>

#include "hsns/error.h"
#include "topology/export.h"
#include "topology/import.h"
#include "topology/limits.h"

namespace {

namespace topo = hsns::topology;

void check(bool ok) {
  if (!ok) __builtin_trap();
}

// Every refusal is one of the kinds the API answers with 400 or 413, says why, and its texts are valid
// UTF-8 (the API puts them in a JSON problem document).
void check_problem(const hsns::Error& e) {
  using Kind = hsns::Error::Kind;
  check(e.kind == Kind::invalid || e.kind == Kind::malformed || e.kind == Kind::too_large);
  check(!e.detail.empty());
  try {
    nlohmann::json texts = {e.detail};
    for (const auto& f : e.fields) texts.push_back({f.field, f.reason});
    (void)texts.dump();
  } catch (...) {
    __builtin_trap();
  }
}

void run(std::string_view text, topo::FileFormat format, const topo::DocumentLimits& limits) {
  topo::DocumentStats stats;
  auto document = topo::read_topology_document(text, format, limits, &stats);
  check(stats.values <= limits.values + 1);
  check(stats.max_depth <= limits.depth);
  if (!document) {
    check_problem(document.error());
    return;
  }
  auto model = topo::import_topology_json(*document);
  if (!model) {
    check_problem(model.error());
    return;
  }
  check(model->hosts().size() <= topo::kModelLimits.hosts);
  check(model->links().size() <= topo::kModelLimits.links);
  check(model->nodes().size() - model->hosts().size() <= topo::kModelLimits.switches);
  // What the aggregator stores reads back to the same model.
  nlohmann::json stored;
  std::string text_stored;
  try {
    stored = topo::export_topology_document(*model);
    text_stored = stored.dump();
  } catch (...) {
    __builtin_trap();
  }
  auto back = topo::import_topology(text_stored);
  check(back.has_value());
  check(back->nodes().size() == model->nodes().size());
  check(back->links().size() == model->links().size());
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  topo::DocumentLimits small;
  small.bytes = 4096;
  small.yaml_bytes = 2048;
  small.values = 256;
  small.depth = 8;
  for (auto format : {topo::FileFormat::kYaml, topo::FileFormat::kJson}) {
    run(text, format, topo::kDocumentLimits);
    run(text, format, small);
  }
  return 0;
}
