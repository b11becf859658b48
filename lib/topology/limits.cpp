#include "topology/limits.h"

#include <limits>
#include <vector>

namespace hsns::topology {

std::optional<Error> check_model_size(const ModelSize& size, const SizeFields& fields,
                                      const ModelLimits& limits) {
  std::vector<FieldError> errors;
  auto check = [&](const std::string& field, const char* what, std::uint64_t value, std::uint64_t limit) {
    if (value <= limit) return;
    const std::string shown =
        value == std::numeric_limits<std::uint64_t>::max() ? "more than 2^64" : std::to_string(value);
    errors.push_back({field, std::string("the topology would have ") + shown + " " + what +
                                 ", more than the server's limit of " + std::to_string(limit)});
  };
  check(fields.hosts, "hosts", size.hosts, limits.hosts);
  check(fields.npus, "NPUs", size.npus, limits.npus);
  check(fields.npus_per_host, "NPUs on one host", size.max_npus_per_host, limits.npus_per_host);
  check(fields.switches, "switches", size.switches, limits.switches);
  check(fields.links, "links", size.links, limits.links);
  check(fields.index_work, "host-under-switch index entries (switches above leaves x hosts and leaves)",
        size.index_work, limits.index_work);
  if (errors.empty()) return std::nullopt;
  return Error::invalid(std::move(errors));
}

}  // namespace hsns::topology
