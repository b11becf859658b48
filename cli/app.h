// hsnsctl's command line: global options, the command tree (CLI11) and the mapping of failures to exit
// codes (see output.h). main() is a call to run_cli().
//
// Contract: run_cli parses argv, opens one HttpClient to --server and runs the chosen command. Normal
// output (tables, JSON, help, --version) goes to `out`, error messages to `err`. It never throws; the
// return value is the process exit code (0, 1, 2 or 64). Environment: HSNS_SERVER (default for
// --server), HSNS_TOKEN (the token itself, used when --token-file is not given). Each call is
// independent (its own client and option values), so calls on different threads do not interfere.
#pragma once

#include <ostream>

namespace hsnsctl {

int run_cli(int argc, const char* const* argv, std::ostream& out, std::ostream& err);

}  // namespace hsnsctl
