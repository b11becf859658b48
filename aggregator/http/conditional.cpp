#include "http/conditional.h"

#include <openssl/sha.h>

#include <array>
#include <charconv>
#include <cstdlib>

namespace hsns::http {
namespace {

std::string_view trimmed(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t')) s.remove_suffix(1);
  return s;
}

bool iequals(std::string_view a, std::string_view b) {
  if (a.size() != b.size()) return false;
  for (std::size_t i = 0; i < a.size(); ++i) {
    const auto lower = [](char c) { return (c >= 'A' && c <= 'Z') ? static_cast<char>(c - 'A' + 'a') : c; };
    if (lower(a[i]) != lower(b[i])) return false;
  }
  return true;
}

// The q-value of one Accept-Encoding element ("gzip;q=0.5"): 1 when absent, 0 when malformed.
double q_value(std::string_view params) {
  while (!params.empty()) {
    const auto semi = params.find(';');
    const auto param = trimmed(params.substr(0, semi));
    params = semi == std::string_view::npos ? std::string_view() : params.substr(semi + 1);
    if (param.size() < 2 || !iequals(param.substr(0, 2), "q=")) continue;
    const std::string value(param.substr(2));
    char* end = nullptr;
    const double q = std::strtod(value.c_str(), &end);
    return end == value.c_str() + value.size() ? q : 0;
  }
  return 1;
}

void append_hex(std::string& out, const unsigned char* p, std::size_t n) {
  static constexpr std::string_view kHex = "0123456789abcdef";
  for (std::size_t i = 0; i < n; ++i) {
    out.push_back(kHex[p[i] >> 4]);
    out.push_back(kHex[p[i] & 0xF]);
  }
}

// FNV-1a, 64 bits: a short stable name for a key inside an ETag (the revision makes the tag unique).
std::uint64_t fnv1a(std::string_view s) {
  std::uint64_t h = 0xcbf29ce484222325ULL;
  for (const char c : s) {
    h ^= static_cast<unsigned char>(c);
    h *= 0x100000001b3ULL;
  }
  return h;
}

std::string revision_tag(const DocumentVersion& v, std::int64_t revision) {
  std::array<char, 20> digits{};
  std::string tag = "l";
  tag.append(digits.data(), std::to_chars(digits.data(), digits.data() + digits.size(), revision).ptr);
  tag += '-';
  tag += v.instance;
  tag += '-';
  tag.append(digits.data(),
             std::to_chars(digits.data(), digits.data() + digits.size(), fnv1a(v.key), 16).ptr);
  return tag;
}

std::string digest_tag(std::string_view body) {
  std::array<unsigned char, SHA256_DIGEST_LENGTH> digest{};
  SHA256(reinterpret_cast<const unsigned char*>(body.data()), body.size(), digest.data());
  std::string tag = "b";
  append_hex(tag, digest.data(), 16);
  return tag;
}

std::string quoted(std::string_view tag, bool gzip) {
  std::string out = "\"";
  out += tag;
  if (gzip) out += "-gzip";
  out += '"';
  return out;
}

void set_validators(Response& res, const std::string& etag) {
  res.set(bhttp::field::etag, etag);
  res.set(bhttp::field::vary, "Accept-Encoding");
  res.set(bhttp::field::cache_control, "no-cache");
}

bool validated(const RequestContext& ctx, std::string_view tag) {
  const auto inm = ctx.request[bhttp::field::if_none_match];
  return !inm.empty() &&
         (if_none_match_matches(inm, quoted(tag, false)) || if_none_match_matches(inm, quoted(tag, true)));
}

// A 200 with `body` (set by the caller's `fill`: owned text, or shared with a cache entry).
template <class Fill>
Response body_response(const RequestContext& ctx, const std::string& etag, bool gzip, Fill fill) {
  Response res{bhttp::status::ok, ctx.request.version()};
  res.set(bhttp::field::content_type, "application/json");
  if (gzip) res.set(bhttp::field::content_encoding, "gzip");
  set_validators(res, etag);
  res.keep_alive(ctx.request.keep_alive());
  fill(res.body());
  res.prepare_payload();
  return res;
}

}  // namespace

bool if_none_match_matches(std::string_view header, std::string_view etag) {
  if (trimmed(header) == "*") return true;
  std::size_t pos = 0;
  while (pos <= header.size()) {
    auto comma = header.find(',', pos);
    if (comma == std::string_view::npos) comma = header.size();
    auto tag = trimmed(header.substr(pos, comma - pos));
    if (tag.starts_with("W/")) tag.remove_prefix(2);
    auto wanted = etag;
    if (wanted.starts_with("W/")) wanted.remove_prefix(2);
    if (!tag.empty() && tag == wanted) return true;
    pos = comma + 1;
  }
  return false;
}

bool accepts_gzip(std::string_view accept_encoding) {
  std::optional<double> gzip;
  std::optional<double> any;
  while (!accept_encoding.empty()) {
    const auto comma = accept_encoding.find(',');
    const auto element = accept_encoding.substr(0, comma);
    accept_encoding =
        comma == std::string_view::npos ? std::string_view() : accept_encoding.substr(comma + 1);
    const auto semi = element.find(';');
    const auto coding = trimmed(element.substr(0, semi));
    const double q = semi == std::string_view::npos ? 1 : q_value(element.substr(semi + 1));
    if (iequals(coding, "gzip") || iequals(coding, "x-gzip")) gzip = q;
    if (coding == "*") any = q;
  }
  if (gzip) return *gzip > 0;
  return any && *any > 0;
}

std::string normalised_key(const RequestContext& ctx, std::string_view route,
                           std::initializer_list<std::string_view> parameters) {
  std::string key(route);
  char separator = '?';
  for (const auto name : parameters) {
    const auto value = ctx.query(name);
    if (!value) continue;
    key += separator;
    key += name;
    key += '=';
    // A length prefix keeps values containing '&' or '=' from forging another key.
    key += std::to_string(value->size());
    key += ':';
    key += *value;
    separator = '&';
  }
  return key;
}

DocumentVersion document_version(const store::RevisionSource* revisions, std::string key,
                                 std::initializer_list<store::RevisionDomain> domains) {
  DocumentVersion v{std::move(key), std::nullopt, ""};
  if (revisions == nullptr) return v;
  std::int64_t sum = 0;
  for (const auto d : domains) sum += revisions->revision(d);
  v.revision = sum;
  v.instance = revisions->instance();
  return v;
}

Response conditional_get(const RequestContext& ctx, ResponseCache& cache, const DocumentVersion& version,
                         const Render& render) {
  const bool gzip = accepts_gzip(ctx.request[bhttp::field::accept_encoding]);
  if (!version.revision) {
    auto body = render();
    if (!body) return std::move(body).error();
    const auto tag = digest_tag(*body);
    if (validated(ctx, tag)) return not_modified(ctx, quoted(tag, gzip));
    return body_response(ctx, quoted(tag, gzip), gzip, [&](ResponseBody::value_type& out) {
      out = gzip ? gzip_compress(*body) : std::move(*body);
    });
  }
  const auto tag = revision_tag(version, *version.revision);
  if (validated(ctx, tag)) return not_modified(ctx, quoted(tag, gzip));
  auto entry = cache.find(version.key, *version.revision);
  if (!entry) {
    // Rendered after the revision was read: the data is at least that new (store/revision.h).
    auto body = render();
    if (!body) return std::move(body).error();
    entry = cache.put(version.key, *version.revision, quoted(tag, false), std::move(*body));
  }
  // The cached bytes go out as they are: no copy per response (http/response_body.h).
  return body_response(ctx, quoted(tag, gzip), gzip, [&](ResponseBody::value_type& out) {
    out.share(entry, gzip ? entry->gzipped() : entry->body());
  });
}

Response tagged_json(const RequestContext& ctx, std::string body, const std::string& etag) {
  Response res{bhttp::status::ok, ctx.request.version()};
  res.set(bhttp::field::content_type, "application/json");
  res.set(bhttp::field::etag, etag);
  res.set(bhttp::field::cache_control, "no-cache");
  res.keep_alive(ctx.request.keep_alive());
  res.body() = std::move(body);
  res.prepare_payload();
  return res;
}

Response not_modified(const RequestContext& ctx, const std::string& etag) {
  auto res = empty_response(ctx.request, bhttp::status::not_modified);
  set_validators(res, etag);
  return res;
}

}  // namespace hsns::http
