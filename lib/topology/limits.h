// Size limits of one topology model and of the documents a model is read from.
//
// Why: every way a model comes into being (import of a client document, the Clos generator, the stored
// document read back, an LLDP merge) costs time and memory in proportion to the model's size, and the
// index building in TopologyBuilder::build grows with switches x hosts. One request must stay within a
// few seconds on a small machine, so each entry point computes the size it would build *before* building
// it and refuses what is over these limits. The numbers are justified in docs/topology.md ("Limits").
//
// Contract:
// - ModelSize counts what a model holds: hosts, NPUs (= NPU ports), switches (leaf + spine + core),
//   links (host links + switch links), the largest NPU count of one host, and index_work: the elements
//   TopologyBuilder::build touches to compute the hosts and leaves under every switch (see
//   index_work_of). All counts are 64-bit; producers compute them in wide or saturating arithmetic from
//   their inputs, so a count can be compared against a limit before anything of that size is allocated.
// - check_model_size returns nullopt when every count is within the limits, else an hsns::Error
//   (kind invalid) whose fields name, per exceeded count, the field the caller says drives it, with a reason
//   that names the count, its value and the limit ("the cluster would have 2000000 links, more than the limit
//   of 262144").
// - DocumentLimits bound the text and the parsed tree of a topology document (YAML or JSON) before the
//   tree is converted: bytes (413; YAML has its own, lower, limit), values (scalars, mappings, lists,
//   keys; 413) and nesting depth (400).
// - Pure values and functions; thread-safe.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>

#include "hsns/error.h"

namespace hsns::topology {

struct ModelSize {
  std::uint64_t hosts = 0;
  std::uint64_t npus = 0;
  std::uint64_t max_npus_per_host = 0;
  std::uint64_t switches = 0;
  std::uint64_t links = 0;
  std::uint64_t index_work = 0;
};

// Sized for imports of 100,000 hosts x 8 NPUs with their rail leaves, spines and cores.
struct ModelLimits {
  std::uint64_t hosts = 131'072;
  std::uint64_t npus = 1'048'576;
  std::uint64_t npus_per_host = 64;
  std::uint64_t switches = 65'536;
  std::uint64_t links = 2'097'152;
  std::uint64_t index_work = 67'108'864;
};

// The limits every server-side model applies (import, read-back, LLDP merge, the write of a generated
// model).
inline constexpr ModelLimits kModelLimits{};
// The Clos generator's parameters (POST /api/v1/topology/generate) stay within these: 16,384 hosts.
inline constexpr ModelLimits kGenerateLimits{16'384, 131'072, 64, 8'192, 262'144, 16'777'216};

struct DocumentLimits {
  std::size_t bytes = 256u << 20;     // JSON; 100,000 hosts x 8 NPUs measured 115.5 MB
  std::size_t yaml_bytes = 8u << 20;  // YAML parses several times slower than JSON (docs/topology.md)
  std::size_t values = 24'000'000;
  std::size_t depth = 32;
};

// Client documents (import).
inline constexpr DocumentLimits kDocumentLimits{};
// Documents the aggregator stored itself (JSON, or a client's JSON import as received) or an older
// version stored (YAML, written for models of up to the same size): read back on start and after another
// process wrote.
inline constexpr DocumentLimits kStoredDocumentLimits{256u << 20, 64u << 20, 24'000'000, 32};

// The field each count is blamed on in an Error (e.g. "hosts" for hosts, "fabric_link_gbps" for links).
struct SizeFields {
  std::string hosts = "hosts";
  std::string npus = "hosts";
  std::string npus_per_host = "hosts";
  std::string switches = "switches";
  std::string links = "links";
  std::string index_work = "switches";
};

std::optional<Error> check_model_size(const ModelSize& size, const SizeFields& fields,
                                      const ModelLimits& limits = kModelLimits);

}  // namespace hsns::topology
