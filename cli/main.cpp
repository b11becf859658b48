// hsnsctl: the operator CLI of the hsns aggregator REST API (docs/rest-api.md).
//
// What hsnsctl prints for its user (results on stdout, error messages and usage on stderr) is command
// output, written by run_cli; only library log lines (none today) go through hsns::log under this name.
#include <iostream>

#include "app.h"
#include "hsns/log.h"

int main(int argc, char** argv) {
  hsns::log::init("hsnsctl");
  return hsnsctl::run_cli(argc, argv, std::cout, std::cerr);
}
