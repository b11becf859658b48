#include "hsns/proto/codec.h"

#include <algorithm>
#include <cctype>

#include "hsns/json_fields.h"

namespace hsns::proto {
namespace {

// The strict parsers answer the REST API's Problem; the contract answers an Error with the same findings.
Error to_error(const Problem& p) {
  if (!p.invalid_params.empty()) {
    std::vector<FieldError> fields;
    fields.reserve(p.invalid_params.size());
    for (const auto& ip : p.invalid_params) fields.push_back({ip.name, ip.reason});
    return Error::invalid(std::move(fields));
  }
  if (p.status == 413) return Error::too_large(p.detail);
  return Error::malformed(p.detail);
}

std::string lower_trimmed(std::string_view s) {
  std::string out(s.substr(0, s.find(';')));
  std::transform(out.begin(), out.end(), out.begin(), [](unsigned char c) { return std::tolower(c); });
  while (!out.empty() && out.back() == ' ') out.pop_back();
  while (!out.empty() && out.front() == ' ') out.erase(out.begin());
  return out;
}

}  // namespace

std::string media_type(std::string_view kind, Encoding encoding) {
  return "application/vnd.hsns." + std::string(kind) + ".v" + std::to_string(kVersion) +
         (encoding == Encoding::json ? "+json" : "+cbor");
}

Result<Encoding> parse_media_type(std::string_view content_type, std::string_view kind) {
  const std::string media = lower_trimmed(content_type);
  if (media == "application/json" || media == media_type(kind, Encoding::json)) return Encoding::json;
  if (media == "application/cbor" || media == media_type(kind, Encoding::cbor)) return Encoding::cbor;
  return tl::unexpected(Error::invalid(
      "Content-Type", "must be application/json, application/cbor or " + media_type(kind, Encoding::json) +
                          " (or +cbor), not '" + std::string(content_type) + "'"));
}

Result<nlohmann::json> decode_document(std::string_view bytes, Encoding encoding, std::size_t max_bytes) {
  if (bytes.size() > max_bytes) {
    return tl::unexpected(Error::too_large("the document is " + std::to_string(bytes.size()) +
                                           " bytes; at most " + std::to_string(max_bytes) + " are accepted"));
  }
  auto doc = encoding == Encoding::json ? parse_json_strict(bytes) : parse_cbor_strict(bytes);
  if (!doc) return tl::unexpected(to_error(doc.error()));
  if (!doc->is_object()) return tl::unexpected(Error::malformed("the document is not a JSON object"));
  return std::move(*doc);
}

std::string encode_document(const nlohmann::json& document, Encoding encoding) {
  if (encoding == Encoding::json) return document.dump();
  const auto bytes = nlohmann::json::to_cbor(document);
  return std::string(bytes.begin(), bytes.end());
}

}  // namespace hsns::proto
