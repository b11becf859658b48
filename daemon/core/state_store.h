// The daemon's persistent state (<state_dir>/state.json): the last desired state it applied and what it
// added to the system (addresses per netdev, routing tables, rules), so a restart removes only its own
// additions and keeps serving the last configuration while the aggregator is away.
//
// Contract:
// - load() returns the stored state; a missing file is an empty state. A file that does not parse is
//   renamed to state.json.corrupt-<unix time> and load() returns an empty state with `set_aside` naming
//   the new path; the caller rebuilds ownership from the live system (labelled addresses, marked routes).
// - save() writes atomically: a temporary file in the same directory, fsync, rename, fsync of the directory.
//   A failed save leaves the previous file intact and returns the error.
// - Thread-compatible; one owner.
#pragma once

#include <map>
#include <optional>
#include <set>
#include <string>
#include <tl/expected.hpp>

namespace hsns::daemon {

struct OwnedPort {
  int npu = 0;
  std::set<std::string> addresses;  // "addr/len" that hsnsd added to this netdev
};

struct PersistentState {
  std::string desired_json;  // last desired state document ("" = none yet)
  std::string etag;
  std::map<std::string, OwnedPort> owned;  // netdev -> what hsnsd added there
};

struct LoadResult {
  PersistentState state;
  std::optional<std::string> set_aside;  // path the corrupt file was moved to
};

class StateStore {
 public:
  explicit StateStore(std::string state_dir);
  tl::expected<LoadResult, std::string> load() const;
  tl::expected<void, std::string> save(const PersistentState& state) const;
  // Writes any text file in the state dir with the same atomic procedure (used for status.json).
  // durable=false skips the fsyncs (readers still never see a torn file; a crash may lose the update).
  tl::expected<void, std::string> write_atomic(const std::string& name, const std::string& content,
                                               bool durable = true) const;
  std::string path() const { return dir_ + "/state.json"; }

 private:
  std::string dir_;
};

std::string state_to_json(const PersistentState& state);
tl::expected<PersistentState, std::string> state_from_json(const std::string& text);

}  // namespace hsns::daemon
