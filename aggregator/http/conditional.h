// Conditional and compressed GET answers for documents rendered from stored data (docs/rest-api.md,
// "Conditional requests"): ETag / If-None-Match (RFC 9110 13.1.2) and Content-Encoding: gzip.
//
// Contract:
// - if_none_match_matches: "*" or a comma-separated list of entity tags, weak comparison (W/ ignored), as
//   RFC 9110 prescribes for If-None-Match on GET.
// - accepts_gzip: whether Accept-Encoding allows gzip (gzip or x-gzip, or "*", with a q-value above 0 and
//   gzip not refused with q=0). No Accept-Encoding: identity only.
// - conditional_get answers a GET of a document identified by a DocumentVersion:
//   * with a revision (the store keeps revisions, store/revision.h): the ETag is derived from the instance,
//     the revision and the key alone, so If-None-Match is answered 304 before anything is read or
//     rendered; otherwise the body comes from the ResponseCache for (key, revision) or is rendered once
//     and stored there;
//   * without one: the body is rendered for every request and the ETag is a digest of it.
//   The identity and gzip forms are two representations with two tags ("<tag>" and "<tag>-gzip"); either
//   tag in If-None-Match validates, since both name the same data. Every answer carries ETag, Vary:
//   Accept-Encoding and Cache-Control: no-cache (a cache must revalidate, which costs a 304); a 200 in gzip
//   carries Content-Encoding: gzip. The render's error (a problem response) is answered as it is.
// - Stateless apart from the cache given; thread-safe.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <tl/expected.hpp>

#include "http/response_cache.h"
#include "http/router.h"
#include "store/revision.h"

namespace hsns::http {

bool if_none_match_matches(std::string_view header, std::string_view etag);
bool accepts_gzip(std::string_view accept_encoding);

struct DocumentVersion {
  std::string key;                       // route and normalised query, e.g. "/api/v1/ports?host=h1"
  std::optional<std::int64_t> revision;  // nullopt: the store keeps no revisions
  std::string instance;                  // the store's instance name (store/revision.h)
};

// The version of a document rendered from the given domains of a store: their revisions summed (each only
// grows, so the sum changes whenever one does); no revision when revisions is null.
DocumentVersion document_version(const store::RevisionSource* revisions, std::string key,
                                 std::initializer_list<store::RevisionDomain> domains);

// "<route>?<name>=<value>&..." over the given query parameters in the given order, those present only,
// values as decoded: two requests naming the same filters in any order or encoding get one key.
std::string normalised_key(const RequestContext& ctx, std::string_view route,
                           std::initializer_list<std::string_view> parameters);

using Render = std::function<tl::expected<std::string, Response>()>;

Response conditional_get(const RequestContext& ctx, ResponseCache& cache, const DocumentVersion& version,
                         const Render& render);

// A 200 application/json answer with the given ETag (no caching, no compression): for documents whose tag
// is derived elsewhere (desired state).
Response tagged_json(const RequestContext& ctx, std::string body, const std::string& etag);
// A 304 with the given ETag.
Response not_modified(const RequestContext& ctx, const std::string& etag);

}  // namespace hsns::http
