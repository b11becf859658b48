// Rendered response bodies kept per store revision, so an unchanged collection is served without reading
// the store or serialising again (the list endpoints; docs/rest-api.md, "Conditional requests").
//
// Contract:
// - An entry is keyed by a string naming the document (the route and its normalised query) and holds the
//   body rendered at one revision with its ETag. find(key, revision) returns it only when it was stored
//   for exactly that revision: a newer revision makes it stale (replaced by the next put), so
//   invalidation needs no notification. Entries are immutable once stored and shared: a response being
//   built from one is not disturbed by a put replacing it.
// - The gzip form of a body (RFC 1952, zlib) is made on first demand, once per entry.
// - Memory is bounded: when the bodies stored exceed max_bytes, the least recently used entries are
//   dropped (a body larger than the bound is not kept at all).
// - Thread-safe.
#pragma once

#include <cstddef>
#include <cstdint>
#include <list>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <unordered_map>

namespace hsns::http {

// RFC 1952 gzip of data (zlib, default level).
std::string gzip_compress(std::string_view data);

class CachedBody {
 public:
  CachedBody(std::string etag, std::string body) : etag_(std::move(etag)), body_(std::move(body)) {}
  const std::string& etag() const { return etag_; }
  const std::string& body() const { return body_; }
  // The body gzipped, computed on the first call.
  const std::string& gzipped() const;

 private:
  std::string etag_;
  std::string body_;
  mutable std::once_flag gzip_once_;
  mutable std::string gzipped_;
};

class ResponseCache {
 public:
  explicit ResponseCache(std::size_t max_bytes = std::size_t{64} << 20) : max_bytes_(max_bytes) {}

  std::shared_ptr<const CachedBody> find(const std::string& key, std::int64_t revision);
  // Stores (replacing any entry of the key) and returns the entry.
  std::shared_ptr<const CachedBody> put(const std::string& key, std::int64_t revision, std::string etag,
                                        std::string body);
  std::size_t size() const;

 private:
  struct Slot {
    std::int64_t revision = 0;
    std::shared_ptr<const CachedBody> body;
    std::list<std::string>::iterator recency;  // position in recency_ (front: most recent)
  };
  void drop(std::unordered_map<std::string, Slot>::iterator it);

  const std::size_t max_bytes_;
  mutable std::mutex mutex_;
  std::unordered_map<std::string, Slot> slots_;
  std::list<std::string> recency_;
  std::size_t bytes_ = 0;
};

}  // namespace hsns::http
