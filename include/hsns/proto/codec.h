// The wire contract between hsnsd, hsns-aggregator and hsnsctl: encodings, media types, versions, limits.
//
// Contract (every document kind of hsns/proto/agent.h and hsns/proto/flows.h):
// - One data model, two encodings: JSON (RFC 8259) and CBOR (RFC 8949, nlohmann's to_cbor/from_cbor of
//   the same value). decode<T>() reads bytes strictly in either encoding: the size limit of the kind is
//   checked before any byte is decoded (Error kind too_large), then parse_json_strict() /
//   parse_cbor_strict() (hsns/json_fields.h: nesting at most kMaxJsonDepth, no repeated key, checked
//   before the document is built), then the kind's reader with FieldReader. Nothing throws; a refusal is
//   an hsns::Error naming every offending field by its path ("ports[2].mtu").
// - Versions. Each kind has a major version, v1 today. The version is carried by the media type, not by a
//   member of the document: application/vnd.hsns.<kind>.v1+json and ...+cbor (media_type()). For JSON,
//   plain application/json means v1, so a v1 JSON document is byte for byte the REST API's body
//   (docs/rest-api.md, aggregator/openapi.json) and older peers keep working. parse_media_type() refuses a
//   version this build does not know (naming "Content-Type").
// - Unknown members are refused, by every reader, in both directions (the REST API's rule for request
//   bodies). Therefore anything a v1 reader would refuse (a new member, a new enumeration value, a wider
//   range) is a new version: the sender writes v2 only to a peer that said it reads v2 (Accept), and
//   readers keep reading every version they list. Members that v1 marks optional may be omitted or null.
// - encode<T>() writes the canonical document of a value; decode<T>(encode<T>(v)) == v for every valid v
//   (tests/unit/proto_test.cpp checks both encodings).
// Values only; thread-safe.
#pragma once

#include <cstddef>
#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>

#include "hsns/error.h"

namespace hsns::proto {

enum class Encoding { json, cbor };

inline constexpr int kVersion = 1;

// "application/vnd.hsns.<kind>.v1+json" (or +cbor).
std::string media_type(std::string_view kind, Encoding encoding);

// The encoding of a Content-Type for `kind`: application/json (v1), application/cbor (v1) or the kind's
// vnd media type of a known version; parameters after ';' are ignored. Anything else is an Error naming
// "Content-Type" (kind invalid).
Result<Encoding> parse_media_type(std::string_view content_type, std::string_view kind);

// Bytes → the strict DOM (size limit, then the strict parse of the encoding); Error on refusal.
Result<nlohmann::json> decode_document(std::string_view bytes, Encoding encoding, std::size_t max_bytes);
std::string encode_document(const nlohmann::json& document, Encoding encoding);

// Each document kind specialises Kind<T> with: kName (the media type's <kind>), kMaxBytes, read (DOM → T)
// and write (T → DOM). See agent.h and flows.h.
template <typename T>
struct Kind;

template <typename T>
Result<T> decode(std::string_view bytes, Encoding encoding = Encoding::json) {
  auto doc = decode_document(bytes, encoding, Kind<T>::kMaxBytes);
  if (!doc) return tl::unexpected(std::move(doc.error()));
  return Kind<T>::read(*doc);
}

template <typename T>
std::string encode(const T& value, Encoding encoding = Encoding::json) {
  return encode_document(Kind<T>::write(value), encoding);
}

}  // namespace hsns::proto
