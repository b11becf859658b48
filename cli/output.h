// hsnsctl's output conventions: the output format, the errors a command ends with, and how server
// errors are reported.
//
// Contract:
// - Exit codes: 0 success, 1 the server refused the request or answered something unusable, 2 the server
//   could not be reached (connect/TLS/timeout), 64 usage error (EX_USAGE: bad arguments or configuration).
// - A command reports failure by throwing CliError; the text is printed to stderr as it is (it already
//   starts with "error: " and may span several lines), then the process exits with the error's code.
// - Server problem documents are shown as "error: <title> (<status>): <detail>" followed by one line
//   "  <name>: <reason>" per invalid_params entry. Other error bodies are shown as
//   "error: HTTP <status>: <first line of the body>".
// Values and pure functions; thread-safe.
#pragma once

#include <nlohmann/json_fwd.hpp>
#include <ostream>
#include <stdexcept>
#include <string>
#include <string_view>

namespace hsnsctl {

enum class OutputFormat { table, json };

enum ExitCode : int {
  kExitOk = 0,
  kExitFailure = 1,
  kExitConnection = 2,
  kExitUsage = 64,
};

class CliError : public std::runtime_error {
 public:
  CliError(int exit_code, const std::string& message) : std::runtime_error(message), exit_code_(exit_code) {}
  int exit_code() const { return exit_code_; }

 private:
  int exit_code_;
};

// "error: <message>" with the matching exit code.
CliError usage_error(const std::string& message);
CliError connection_error(const std::string& message);
CliError failure(const std::string& message);

// The stderr text for a non-success HTTP answer (see the contract above); ends with a newline.
std::string format_http_error(int status, std::string_view body);

// Pretty-prints JSON (two-space indent, invalid UTF-8 replaced) followed by a newline.
void print_json(std::ostream& out, const nlohmann::json& value);

}  // namespace hsnsctl
