#include "request.h"

#include <fstream>
#include <sstream>

namespace hsnsctl {

hsns::HttpResponse send_request(Context& ctx, std::string_view method, const std::string& target,
                                const std::string& body, std::string_view content_type) {
  auto res = ctx.client.request(method, target, body, body.empty() ? "" : content_type);
  if (!res) throw connection_error(res.error());
  return std::move(*res);
}

CliError server_error(const Context& ctx, const hsns::HttpResponse& res) {
  std::string text = format_http_error(res.status, res.body);
  if (res.status == 401 && !ctx.token_configured) {
    text += "hint: no token was given; use --token-file PATH or set HSNS_TOKEN\n";
  }
  text.pop_back();  // the trailing newline; main() ends the message
  return CliError(kExitFailure, text);
}

hsns::HttpResponse request_ok(Context& ctx, std::string_view method, const std::string& target,
                              const std::string& body, std::string_view content_type) {
  auto res = send_request(ctx, method, target, body, content_type);
  if (res.status < 200 || res.status > 299) throw server_error(ctx, res);
  return res;
}

nlohmann::json parse_json_answer(const hsns::HttpResponse& res, std::string_view what) {
  auto doc = nlohmann::json::parse(res.body, nullptr, false);
  if (doc.is_discarded()) {
    throw failure(std::string(what) + ": the server answered " + std::to_string(res.status) +
                  " with a body that is not JSON");
  }
  return doc;
}

nlohmann::json call_json(Context& ctx, std::string_view method, const std::string& target,
                         const std::string& body) {
  auto res = request_ok(ctx, method, target, body);
  if (res.body.empty()) return nullptr;
  return parse_json_answer(res, std::string(method) + " " + target);
}

std::string read_text_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw usage_error("cannot read " + path);
  std::ostringstream text;
  text << in.rdbuf();
  if (in.bad()) throw usage_error("cannot read " + path);
  return text.str();
}

std::string number_text(const nlohmann::json& value) {
  if (!value.is_number()) return "";
  if (value.is_number_integer()) return value.dump();
  std::ostringstream s;
  s << value.get<double>();
  return s.str();
}

}  // namespace hsnsctl
