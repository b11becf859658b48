#include "topology/hostlist.h"

#include <algorithm>
#include <charconv>
#include <map>
#include <utility>

namespace hsns::topology {
namespace {

bool is_digit(char c) {
  return c >= '0' && c <= '9';
}

std::string pad(unsigned long value, std::size_t width) {
  std::string digits = std::to_string(value);
  if (digits.size() < width) digits.insert(0, width - digits.size(), '0');
  return digits;
}

}  // namespace

std::string compress_hostlist(std::vector<std::string> names) {
  std::sort(names.begin(), names.end());
  names.erase(std::unique(names.begin(), names.end()), names.end());
  // (prefix, width) -> numbers; literal names kept aside.
  std::map<std::pair<std::string, std::size_t>, std::vector<unsigned long>> groups;
  std::vector<std::string> literal;
  for (const std::string& name : names) {
    std::size_t start = name.size();
    while (start > 0 && is_digit(name[start - 1])) --start;
    const std::size_t width = name.size() - start;
    if (width == 0 || width > 9 || start == 0) {
      literal.push_back(name);
      continue;
    }
    groups[{name.substr(0, start), width}].push_back(std::stoul(name.substr(start)));
  }
  std::vector<std::string> parts = literal;
  for (auto& [key, numbers] : groups) {
    const auto& [prefix, width] = key;
    std::sort(numbers.begin(), numbers.end());
    if (numbers.size() == 1) {
      parts.push_back(prefix + pad(numbers[0], width));
      continue;
    }
    std::string ranges;
    for (std::size_t i = 0; i < numbers.size();) {
      std::size_t j = i;
      while (j + 1 < numbers.size() && numbers[j + 1] == numbers[j] + 1) ++j;
      if (!ranges.empty()) ranges += ',';
      ranges += pad(numbers[i], width);
      if (j > i) ranges += '-' + pad(numbers[j], width);
      i = j + 1;
    }
    parts.push_back(prefix + "[" + ranges + "]");
  }
  std::sort(parts.begin(), parts.end());
  std::string out;
  for (const std::string& part : parts) {
    if (!out.empty()) out += ',';
    out += part;
  }
  return out;
}

tl::expected<std::vector<std::string>, std::string> expand_hostlist(std::string_view expression) {
  std::vector<std::string> out;
  std::size_t pos = 0;
  auto fail = [&](const std::string& what) {
    return tl::unexpected("hostlist '" + std::string(expression) + "' at " + std::to_string(pos) + ": " +
                          what);
  };
  if (expression.empty()) return fail("empty");
  while (pos <= expression.size()) {
    std::size_t open = pos;
    while (open < expression.size() && expression[open] != '[' && expression[open] != ',') ++open;
    const std::string prefix(expression.substr(pos, open - pos));
    if (open == expression.size() || expression[open] == ',') {
      if (prefix.empty()) return fail("empty name");
      out.push_back(prefix);
      pos = open + 1;
      if (open == expression.size()) break;
      continue;
    }
    if (prefix.empty()) return fail("range without a prefix");
    const std::size_t close = expression.find(']', open);
    if (close == std::string_view::npos) return fail("missing ']'");
    std::size_t end = close + 1;
    while (end < expression.size() && expression[end] != ',') ++end;
    const std::string suffix(expression.substr(close + 1, end - close - 1));
    if (suffix.find_first_of("[]") != std::string::npos) return fail("nested brackets");
    std::string_view body = expression.substr(open + 1, close - open - 1);
    if (body.empty()) return fail("empty range");
    while (!body.empty()) {
      const std::size_t comma = body.find(',');
      const std::string_view item = body.substr(0, comma);
      const std::size_t dash = item.find('-');
      const std::string_view lo_text = item.substr(0, dash);
      const std::string_view hi_text = dash == std::string_view::npos ? lo_text : item.substr(dash + 1);
      unsigned long lo = 0;
      unsigned long hi = 0;
      auto bad = [](std::string_view t) { return t.empty() || !std::all_of(t.begin(), t.end(), is_digit); };
      if (bad(lo_text) || bad(hi_text)) return fail("range item '" + std::string(item) + "' is not N or N-M");
      std::from_chars(lo_text.data(), lo_text.data() + lo_text.size(), lo);
      std::from_chars(hi_text.data(), hi_text.data() + hi_text.size(), hi);
      if (hi < lo) return fail("range '" + std::string(item) + "' runs backwards");
      if (hi - lo > 1'000'000) return fail("range '" + std::string(item) + "' is too large");
      for (unsigned long v = lo; v <= hi; ++v) out.push_back(prefix + pad(v, lo_text.size()) + suffix);
      if (comma == std::string_view::npos) break;
      body.remove_prefix(comma + 1);
      if (body.empty()) return fail("trailing ',' in range");
    }
    pos = end + 1;
    if (end == expression.size()) break;
  }
  return out;
}

}  // namespace hsns::topology
