#include "scheduling/cost/calibration.h"

#include <cmath>
#include <fstream>
#include <nlohmann/json.hpp>
#include <set>
#include <sstream>

namespace hsns::cost {

namespace {

std::string tier_path(std::size_t i, std::string_view field) {
  return "tiers[" + std::to_string(i) + "]." + std::string(field);
}

tl::expected<void, std::string> check_tier(const Tier& t, std::size_t i) {
  if (t.name.empty()) return tl::unexpected(tier_path(i, "name") + ": must not be empty");
  if (!std::isfinite(t.alpha_us) || t.alpha_us < 0) {
    return tl::unexpected(tier_path(i, "alpha_us") + ": must be a finite number >= 0");
  }
  if (!std::isfinite(t.bandwidth_gbps) || t.bandwidth_gbps <= 0) {
    return tl::unexpected(tier_path(i, "bandwidth_gbps") + ": must be a finite number > 0");
  }
  if (!std::isfinite(t.oversubscription) || t.oversubscription < 1) {
    return tl::unexpected(tier_path(i, "oversubscription") + ": must be a finite number >= 1");
  }
  return {};
}

tl::expected<double, std::string> number(const nlohmann::json& obj, std::size_t i, const char* field,
                                         bool required, double fallback) {
  auto it = obj.find(field);
  if (it == obj.end()) {
    if (required) return tl::unexpected(tier_path(i, field) + ": required");
    return fallback;
  }
  if (!it->is_number()) return tl::unexpected(tier_path(i, field) + ": must be a number");
  return it->get<double>();
}

}  // namespace

tl::expected<void, std::string> validate(const Calibration& cal) {
  if (cal.tiers.empty()) return tl::unexpected(std::string("tiers: at least one tier is required"));
  for (std::size_t i = 0; i < cal.tiers.size(); ++i) {
    if (auto ok = check_tier(cal.tiers[i], i); !ok) return ok;
  }
  return {};
}

tl::expected<Calibration, std::string> parse_calibration(std::string_view json_text) {
  const auto doc = nlohmann::json::parse(json_text, nullptr, false);
  if (doc.is_discarded()) return tl::unexpected(std::string("calibration: not valid JSON"));
  if (!doc.is_object()) return tl::unexpected(std::string("calibration: must be a JSON object"));
  for (const auto& [key, value] : doc.items()) {
    if (key != "tiers") return tl::unexpected("calibration: unknown field \"" + key + "\"");
  }
  auto tiers = doc.find("tiers");
  if (tiers == doc.end() || !tiers->is_array()) {
    return tl::unexpected(std::string("tiers: required, must be an array"));
  }
  static const std::set<std::string> known = {"name", "alpha_us", "bandwidth_gbps", "oversubscription"};
  Calibration cal;
  for (std::size_t i = 0; i < tiers->size(); ++i) {
    const auto& obj = (*tiers)[i];
    if (!obj.is_object()) return tl::unexpected("tiers[" + std::to_string(i) + "]: must be an object");
    for (const auto& [key, value] : obj.items()) {
      if (known.count(key) == 0) return tl::unexpected(tier_path(i, key) + ": unknown field");
    }
    Tier t;
    auto name = obj.find("name");
    if (name == obj.end() || !name->is_string()) {
      return tl::unexpected(tier_path(i, "name") + ": required, must be a string");
    }
    t.name = name->get<std::string>();
    auto alpha = number(obj, i, "alpha_us", true, 0);
    if (!alpha) return tl::unexpected(alpha.error());
    auto bw = number(obj, i, "bandwidth_gbps", true, 0);
    if (!bw) return tl::unexpected(bw.error());
    auto over = number(obj, i, "oversubscription", false, 1);
    if (!over) return tl::unexpected(over.error());
    t.alpha_us = *alpha;
    t.bandwidth_gbps = *bw;
    t.oversubscription = *over;
    cal.tiers.push_back(std::move(t));
  }
  if (auto ok = validate(cal); !ok) return tl::unexpected(ok.error());
  return cal;
}

tl::expected<Calibration, std::string> load_calibration(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return tl::unexpected("calibration file " + path + ": cannot be opened");
  std::ostringstream text;
  text << in.rdbuf();
  if (in.bad()) return tl::unexpected("calibration file " + path + ": read error");
  auto cal = parse_calibration(text.str());
  if (!cal) return tl::unexpected("calibration file " + path + ": " + cal.error());
  return cal;
}

}  // namespace hsns::cost
