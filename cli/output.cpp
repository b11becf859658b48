#include "output.h"

#include <nlohmann/json.hpp>

namespace hsnsctl {

namespace {

constexpr std::size_t kMaxBodyExcerpt = 200;

std::string string_field(const nlohmann::json& object, const char* key) {
  auto it = object.find(key);
  return it != object.end() && it->is_string() ? it->get<std::string>() : std::string();
}

}  // namespace

CliError usage_error(const std::string& message) {
  return CliError(kExitUsage, "error: " + message);
}

CliError connection_error(const std::string& message) {
  return CliError(kExitConnection, "error: " + message);
}

CliError failure(const std::string& message) {
  return CliError(kExitFailure, "error: " + message);
}

std::string format_http_error(int status, std::string_view body) {
  auto doc = nlohmann::json::parse(body, nullptr, false);
  if (doc.is_object() && doc.contains("title") && doc["title"].is_string()) {
    int shown_status =
        doc.contains("status") && doc["status"].is_number_integer() ? doc["status"].get<int>() : status;
    std::string text =
        "error: " + doc["title"].get<std::string>() + " (" + std::to_string(shown_status) + ")";
    if (auto detail = string_field(doc, "detail"); !detail.empty()) text += ": " + detail;
    text += '\n';
    auto params = doc.find("invalid_params");
    if (params != doc.end() && params->is_array()) {
      for (const auto& param : *params) {
        if (!param.is_object()) continue;
        text += "  " + string_field(param, "name") + ": " + string_field(param, "reason") + '\n';
      }
    }
    return text;
  }
  std::string_view excerpt = body.substr(0, body.find('\n'));
  while (!excerpt.empty() && (excerpt.back() == '\r' || excerpt.back() == ' ')) excerpt.remove_suffix(1);
  std::string text = "error: HTTP " + std::to_string(status);
  if (excerpt.empty()) return text + '\n';
  text += ": ";
  text += excerpt.substr(0, kMaxBodyExcerpt);
  if (excerpt.size() > kMaxBodyExcerpt) text += "...";
  return text + '\n';
}

void print_json(std::ostream& out, const nlohmann::json& value) {
  out << value.dump(2, ' ', false, nlohmann::json::error_handler_t::replace) << '\n';
}

}  // namespace hsnsctl
