// parse_json_strict() against nlohmann::json::parse() of the same text: a POST /api/v1/kpis-shaped body
// of N samples, N from 2,000 to 128,000. Prints CPU milliseconds of both (median of --repeat runs), their
// ratio, and the strict parse's time per element, which stays flat when the parse is linear.
// Usage: hsns_bench_json_strict [--repeat R]
#include <cstdlib>
#include <cstring>
#include <iomanip>
#include <iostream>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "bench_timing.h"
#include "hsns/json_fields.h"

namespace {

std::string kpi_body(int samples) {
  std::string s = R"({"samples":[)";
  for (int i = 0; i < samples; ++i) {
    if (i > 0) s += ',';
    s += R"({"entity":"leaf01/Ethernet)" + std::to_string(i) +
         R"(","metric":"if_in_octets_per_s","ts":1764640000000,"value":12.5})";
  }
  s += "]}";
  return s;
}

template <typename F>
double median_cpu_ms(int repeat, F&& f) {
  std::vector<double> ms;
  for (int r = 0; r < repeat; ++r) {
    const double t0 = hsns::bench::thread_cpu_ms();
    f();
    ms.push_back(hsns::bench::thread_cpu_ms() - t0);
  }
  return hsns::bench::percentile(ms, 0.5);
}

}  // namespace

int main(int argc, char** argv) {
  int repeat = 5;
  for (int i = 1; i < argc; ++i) {
    if (std::strcmp(argv[i], "--repeat") == 0 && i + 1 < argc) {
      repeat = std::atoi(argv[++i]);
    } else {
      std::cerr << "usage: hsns_bench_json_strict [--repeat R]\n";
      return 64;
    }
  }
  std::cout << "elements  bytes       nlohmann ms  strict ms  strict/nlohmann  strict us/element\n";
  for (int n : {2000, 8000, 32000, 128000}) {
    const std::string body = kpi_body(n);
    const double plain = median_cpu_ms(repeat, [&] {
      if (nlohmann::json::parse(body).is_null()) std::abort();
    });
    const double strict = median_cpu_ms(repeat, [&] {
      if (!hsns::parse_json_strict(body)) std::abort();
    });
    std::cout << std::setw(8) << n << "  " << std::setw(10) << body.size() << "  " << std::fixed
              << std::setprecision(1) << std::setw(11) << plain << "  " << std::setw(9) << strict << "  "
              << std::setprecision(2) << std::setw(15) << strict / plain << "  " << std::setprecision(3)
              << std::setw(17) << strict * 1000.0 / n << "\n";
  }
  return 0;
}
