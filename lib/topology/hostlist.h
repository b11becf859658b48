// Slurm hostlist expressions: "host[001-016,020],gpu7" <-> the list of names it stands for.
//
// Contract: pure functions, thread-safe. compress() groups names by alphabetic prefix and zero-padded
// numeric suffix width, sorts and deduplicates each group, and writes runs of consecutive numbers as
// "lo-hi" (the form Slurm's hostlist parser reads in topology.conf Nodes= and Switches=). Names without a
// numeric suffix, and groups of one, are written as they are. expand() is the inverse for the subset
// compress() writes plus a text suffix after the bracket ("rack[1-2]-a"); malformed input is an error
// value whose text names the offending position.
#pragma once

#include <string>
#include <string_view>
#include <tl/expected.hpp>
#include <vector>

namespace hsns::topology {

std::string compress_hostlist(std::vector<std::string> names);
tl::expected<std::vector<std::string>, std::string> expand_hostlist(std::string_view expression);

}  // namespace hsns::topology
