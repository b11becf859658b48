#include "support/metrics.h"

#include <cctype>
#include <cmath>
#include <limits>
#include <sstream>
#include <stdexcept>

namespace hsns::testing {
namespace {

bool name_char(char c, bool first) {
  return std::isalpha(static_cast<unsigned char>(c)) || c == '_' || c == ':' ||
         (!first && std::isdigit(static_cast<unsigned char>(c)));
}

// A cursor over one line; every read throws std::invalid_argument("...") on malformed text.
class Reader {
 public:
  explicit Reader(const std::string& text) : text_(text) {}

  bool done() const { return pos_ >= text_.size(); }
  bool peek(char c) const { return !done() && text_[pos_] == c; }
  void expect(char c) {
    if (!peek(c)) throw std::invalid_argument(std::string("expected '") + c + "'");
    ++pos_;
  }
  void skip_spaces() {
    while (!done() && (text_[pos_] == ' ' || text_[pos_] == '\t')) ++pos_;
  }
  std::string name() {
    const std::size_t start = pos_;
    while (!done() && name_char(text_[pos_], pos_ == start)) ++pos_;
    if (pos_ == start) throw std::invalid_argument("expected a name");
    return text_.substr(start, pos_ - start);
  }
  std::string quoted() {
    expect('"');
    std::string out;
    while (!peek('"')) {
      if (done()) throw std::invalid_argument("unterminated label value");
      char c = text_[pos_++];
      if (c == '\\') {
        if (done()) throw std::invalid_argument("unterminated escape");
        c = text_[pos_++];
        if (c == 'n')
          c = '\n';
        else if (c != '\\' && c != '"')
          throw std::invalid_argument("unknown escape");
      }
      out.push_back(c);
    }
    expect('"');
    return out;
  }
  std::map<std::string, std::string> labels() {
    std::map<std::string, std::string> out;
    if (!peek('{')) return out;
    expect('{');
    skip_spaces();
    while (!peek('}')) {
      std::string label = name();
      skip_spaces();
      expect('=');
      skip_spaces();
      if (!out.emplace(label, quoted()).second) throw std::invalid_argument("label " + label + " twice");
      skip_spaces();
      if (peek(',')) {
        ++pos_;
        skip_spaces();
      } else if (!peek('}')) {
        throw std::invalid_argument("expected ',' or '}'");
      }
    }
    expect('}');
    return out;
  }
  std::string word() {
    const std::size_t start = pos_;
    while (!done() && text_[pos_] != ' ' && text_[pos_] != '\t') ++pos_;
    return text_.substr(start, pos_ - start);
  }

 private:
  const std::string& text_;
  std::size_t pos_ = 0;
};

double parse_value(const std::string& word) {
  if (word == "+Inf" || word == "Inf") return std::numeric_limits<double>::infinity();
  if (word == "-Inf") return -std::numeric_limits<double>::infinity();
  if (word == "NaN") return std::numeric_limits<double>::quiet_NaN();
  std::size_t used = 0;
  double v = 0;
  try {
    v = std::stod(word, &used);
  } catch (const std::exception&) {
    used = 0;
  }
  if (word.empty() || used != word.size()) throw std::invalid_argument("bad value '" + word + "'");
  return v;
}

// `name` or `name{labels}` as a sample without a value.
MetricSample parse_selector(const std::string& selector) {
  Reader in(selector);
  MetricSample s;
  s.name = in.name();
  s.labels = in.labels();
  if (!in.done()) throw std::invalid_argument("bad selector '" + selector + "'");
  return s;
}

}  // namespace

Exposition Exposition::parse(const std::string& text) {
  Exposition e;
  std::istringstream lines(text);
  std::string line;
  int number = 0;
  while (std::getline(lines, line)) {
    ++number;
    if (!line.empty() && line.back() == '\r') line.pop_back();
    if (line.find_first_not_of(" \t") == std::string::npos || line[line.find_first_not_of(" \t")] == '#')
      continue;
    try {
      Reader in(line);
      in.skip_spaces();
      MetricSample s;
      s.name = in.name();
      s.labels = in.labels();
      in.skip_spaces();
      s.value = parse_value(in.word());
      in.skip_spaces();
      if (!in.done()) {
        const std::string timestamp = in.word();
        std::size_t used = 0;
        (void)std::stoll(timestamp, &used);
        if (used != timestamp.size()) throw std::invalid_argument("bad timestamp '" + timestamp + "'");
        in.skip_spaces();
        if (!in.done()) throw std::invalid_argument("text after the timestamp");
      }
      e.samples_.push_back(std::move(s));
    } catch (const std::exception& ex) {
      throw std::invalid_argument("exposition line " + std::to_string(number) + ": " + ex.what() + ": " +
                                  line);
    }
  }
  return e;
}

std::optional<double> Exposition::find(const std::string& name,
                                       const std::map<std::string, std::string>& labels) const {
  for (const auto& s : samples_)
    if (s.name == name && s.labels == labels) return s.value;
  return std::nullopt;
}

std::optional<double> Exposition::find(const std::string& selector) const {
  const auto wanted = parse_selector(selector);
  return find(wanted.name, wanted.labels);
}

std::vector<MetricSample> Exposition::all(const std::string& name) const {
  std::vector<MetricSample> out;
  for (const auto& s : samples_)
    if (s.name == name) out.push_back(s);
  return out;
}

std::optional<double> metric_value(const std::string& exposition_text, const std::string& selector) {
  return Exposition::parse(exposition_text).find(selector);
}

}  // namespace hsns::testing
