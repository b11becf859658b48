#include "http/response_cache.h"

#include <zlib.h>

#include <stdexcept>

namespace hsns::http {

std::string gzip_compress(std::string_view data) {
  z_stream z{};
  constexpr int kGzipWindowBits = 15 + 16;  // 15: the largest window; +16: gzip header and trailer
  constexpr int kMemoryLevel = 8;           // zlib's default
  if (deflateInit2(&z, Z_DEFAULT_COMPRESSION, Z_DEFLATED, kGzipWindowBits, kMemoryLevel,
                   Z_DEFAULT_STRATEGY) != Z_OK) {
    throw std::runtime_error("gzip: deflateInit2 failed");
  }
  std::string out(deflateBound(&z, static_cast<uLong>(data.size())), '\0');
  // zlib's interface is not const-correct: next_in is only read.
  z.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(data.data()));
  z.avail_in = static_cast<uInt>(data.size());
  z.next_out = reinterpret_cast<Bytef*>(out.data());
  z.avail_out = static_cast<uInt>(out.size());
  const int rc = deflate(&z, Z_FINISH);
  out.resize(z.total_out);
  deflateEnd(&z);
  if (rc != Z_STREAM_END) throw std::runtime_error("gzip: deflate did not finish");
  return out;
}

const std::string& CachedBody::gzipped() const {
  std::call_once(gzip_once_, [this] { gzipped_ = gzip_compress(body_); });
  return gzipped_;
}

std::shared_ptr<const CachedBody> ResponseCache::find(const std::string& key, std::int64_t revision) {
  std::lock_guard<std::mutex> lock(mutex_);
  const auto it = slots_.find(key);
  if (it == slots_.end() || it->second.revision != revision) return nullptr;
  recency_.splice(recency_.begin(), recency_, it->second.recency);
  return it->second.body;
}

std::shared_ptr<const CachedBody> ResponseCache::put(const std::string& key, std::int64_t revision,
                                                     std::string etag, std::string body) {
  auto entry = std::make_shared<const CachedBody>(std::move(etag), std::move(body));
  const std::size_t cost = key.size() + entry->body().size();
  std::lock_guard<std::mutex> lock(mutex_);
  if (const auto it = slots_.find(key); it != slots_.end()) {
    // A slower renderer of an older revision must not replace a newer entry.
    if (it->second.revision > revision) return entry;
    drop(it);
  }
  if (cost > max_bytes_) return entry;
  while (bytes_ + cost > max_bytes_ && !recency_.empty()) drop(slots_.find(recency_.back()));
  recency_.push_front(key);
  slots_.emplace(key, Slot{revision, entry, recency_.begin()});
  bytes_ += cost;
  return entry;
}

void ResponseCache::drop(std::unordered_map<std::string, Slot>::iterator it) {
  bytes_ -= it->first.size() + it->second.body->body().size();
  recency_.erase(it->second.recency);
  slots_.erase(it);
}

std::size_t ResponseCache::size() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return slots_.size();
}

}  // namespace hsns::http
