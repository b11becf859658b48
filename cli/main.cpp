// hsnsctl: the operator CLI of the hsns aggregator REST API (docs/rest-api.md).
#include <iostream>

#include "app.h"

int main(int argc, char** argv) {
  return hsnsctl::run_cli(argc, argv, std::cout, std::cerr);
}
