#include "http/static_files.h"

#include <openssl/sha.h>

#include <array>
#include <filesystem>
#include <fstream>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <sstream>
#include <tuple>

#include "hsns/log.h"
#include "http/conditional.h"

namespace hsns::http {
namespace {

namespace fs = std::filesystem;

constexpr std::size_t kMaxCachedFiles = 256;
constexpr std::uintmax_t kMaxFileBytes = std::uintmax_t{64} << 20;

// The asset types the dashboard ships; anything else is not served.
std::optional<std::string_view> content_type_of(std::string_view name) {
  static const std::array<std::pair<std::string_view, std::string_view>, 11> kTypes{{
      {".html", "text/html; charset=utf-8"},
      {".js", "text/javascript; charset=utf-8"},
      {".css", "text/css; charset=utf-8"},
      {".map", "application/json"},
      {".json", "application/json"},
      {".svg", "image/svg+xml"},
      {".png", "image/png"},
      {".ico", "image/x-icon"},
      {".woff2", "font/woff2"},
      {".txt", "text/plain; charset=utf-8"},
      {".webmanifest", "application/manifest+json"},
  }};
  for (const auto& [ext, type] : kTypes) {
    if (name.size() > ext.size() && name.substr(name.size() - ext.size()) == ext) return type;
  }
  return std::nullopt;
}

bool safe_name(std::string_view name) {
  if (name.empty() || name.front() == '.') return false;
  return name.find_first_of(std::string_view("/\\\0", 3)) == std::string_view::npos;
}

struct CachedFile {
  std::string bytes;
  std::string etag;
};

class StaticFiles {
 public:
  explicit StaticFiles(std::string root) : root_(std::move(root)) {
    std::error_code ec;
    canonical_root_ = fs::canonical(root_, ec);
    if (ec) {
      HSNS_LOG(warning) << "web_root " << root_ << " does not exist: the dashboard is not served";
    }
  }

  Response serve(const RequestContext& ctx, std::string_view name) {
    const auto type = content_type_of(name);
    if (!safe_name(name) || !type) return not_found(ctx, name);
    if (canonical_root_.empty()) {
      return problem_response(ctx.request, Problem::not_found("the dashboard is not installed: web_root " +
                                                              root_ + " does not exist"));
    }
    std::error_code ec;
    const auto path = fs::canonical(canonical_root_ / std::string(name), ec);
    if (ec || path.parent_path() != canonical_root_ || !fs::is_regular_file(path, ec)) {
      return not_found(ctx, name);
    }
    auto file = load(path);
    if (!file) return not_found(ctx, name);
    const auto inm = ctx.request[bhttp::field::if_none_match];
    Response res{bhttp::status::ok, ctx.request.version()};
    if (!inm.empty() && if_none_match_matches(inm, file->etag)) {
      res = empty_response(ctx.request, bhttp::status::not_modified);
    } else {
      res.set(bhttp::field::content_type, *type);
      res.keep_alive(ctx.request.keep_alive());
      res.body().share(file, file->bytes);
      res.prepare_payload();
    }
    res.set(bhttp::field::etag, file->etag);
    res.set(bhttp::field::cache_control, "no-cache");
    set_security_headers(res);
    return res;
  }

  static void set_security_headers(Response& res) {
    res.set("Content-Security-Policy", kContentSecurityPolicy);
    res.set("X-Content-Type-Options", "nosniff");
    res.set("Referrer-Policy", "no-referrer");
    res.set("X-Frame-Options", "DENY");
  }

 private:
  Response not_found(const RequestContext& ctx, std::string_view name) {
    auto res = problem_response(ctx.request,
                                Problem::not_found("no dashboard file " + std::string(name.substr(0, 64))));
    set_security_headers(res);
    return res;
  }

  std::shared_ptr<const CachedFile> load(const fs::path& path) {
    std::error_code ec;
    const auto size = fs::file_size(path, ec);
    if (ec || size > kMaxFileBytes) return nullptr;
    const auto mtime = fs::last_write_time(path, ec);
    if (ec) return nullptr;
    const Key key{path.string(), size, static_cast<long long>(mtime.time_since_epoch().count())};
    {
      const std::lock_guard lock(mutex_);
      if (auto it = cache_.find(key); it != cache_.end()) return it->second;
    }
    std::ifstream in(path, std::ios::binary);
    if (!in) return nullptr;
    std::ostringstream ss;
    ss << in.rdbuf();
    auto file = std::make_shared<CachedFile>();
    file->bytes = std::move(ss).str();
    std::array<unsigned char, 32> digest{};
    SHA256(reinterpret_cast<const unsigned char*>(file->bytes.data()), file->bytes.size(), digest.data());
    static constexpr char kHex[] = "0123456789abcdef";
    file->etag = "\"";
    for (std::size_t i = 0; i < 12; ++i) {
      file->etag += kHex[digest[i] >> 4U];
      file->etag += kHex[digest[i] & 0xFU];
    }
    file->etag += "\"";
    const std::lock_guard lock(mutex_);
    // Older versions of the same file (a rebuild) and, beyond the bound, everything: the directory holds
    // a handful of assets, so a full cache means churn and starting over is cheap.
    std::erase_if(cache_, [&](const auto& kv) { return std::get<0>(kv.first) == std::get<0>(key); });
    if (cache_.size() >= kMaxCachedFiles) cache_.clear();
    cache_.emplace(key, file);
    return file;
  }

  using Key = std::tuple<std::string, std::uintmax_t, long long>;
  std::string root_;
  fs::path canonical_root_;
  std::mutex mutex_;
  std::map<Key, std::shared_ptr<const CachedFile>> cache_;
};

}  // namespace

void register_static_routes(Router& router, std::string web_root) {
  auto files = std::make_shared<StaticFiles>(std::move(web_root));
  router.add(bhttp::verb::get, "/", kPublic,
             [files](RequestContext& ctx) { return files->serve(ctx, "index.html"); });
  router.add(bhttp::verb::get, "/ui/{file}", kPublic,
             [files](RequestContext& ctx) { return files->serve(ctx, ctx.path_param("file")); });
}

}  // namespace hsns::http
