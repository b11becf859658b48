// Store revisions: counters that say "the data changed", for caches of what the API renders from stored
// data (list bodies, desired-state ETags; docs/rest-api.md, "Conditional requests").
//
// Contract:
// - A revision is kept per domain of data: network (hosts, their NPUs, subnets, allocation pools, ports),
//   agents (agent status reports), lldp (LLDP observations), topology (the document and the device
//   states), jobs (registered jobs and the NPUs they hold). Besides caches of API bodies, the brain's
//   consumers of the topology and the jobs read the topology and jobs mirrors before every batch to learn
//   at once that they changed (an atomic load, where a query per batch would cost a read transaction). The
//   database bumps a domain's revision by triggers on every inserted, updated or deleted row of its tables,
//   so the bump is part of the very transaction that changes the data and commits or rolls back with it. A
//   revision never goes back and differs for every committed state of its domain.
// - The instance is a random name chosen when the database was created: two databases (a fresh one, one
//   restored elsewhere) whose counters happen to agree still get different tags.
// - revision() is the in-process mirror of the stored counter, refreshed by the writer after each commit
//   (sql::write), so it is an atomic load, never a query. It is published after the commit: a reader that
//   reads the mirror and then the data sees data at least as new as the mirror says (possibly newer, never
//   older), which is what a cache keyed by the mirror needs. Writes by another process to the same file
//   are not seen until this process writes (one aggregator per database file).
// - Thread-safe.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

namespace hsns::store {

enum class RevisionDomain : std::uint8_t { network = 0, agents = 1, lldp = 2, topology = 3, jobs = 4 };
inline constexpr std::size_t kRevisionDomains = 5;

class RevisionSource {
 public:
  virtual ~RevisionSource() = default;
  virtual const std::string& instance() const = 0;
  virtual std::int64_t revision(RevisionDomain domain) const = 0;
};

}  // namespace hsns::store
