#include "http/sessions.h"

#include <openssl/crypto.h>
#include <openssl/rand.h>
#include <openssl/sha.h>

#include <algorithm>
#include <cstring>
#include <stdexcept>

namespace hsns::http {
namespace {

// 32 random bytes as unpadded base64url: a cookie value and a header value without escaping.
std::string random_token() {
  std::array<unsigned char, 32> bytes{};
  if (RAND_bytes(bytes.data(), static_cast<int>(bytes.size())) != 1) {
    throw std::runtime_error("RAND_bytes failed: no session can be created");
  }
  static constexpr char kAlphabet[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";
  std::string out;
  std::uint32_t acc = 0;
  int bits = 0;
  for (const unsigned char b : bytes) {
    acc = (acc << 8U) | b;
    bits += 8;
    while (bits >= 6) {
      bits -= 6;
      out += kAlphabet[(acc >> static_cast<unsigned>(bits)) & 0x3FU];
    }
  }
  if (bits > 0) out += kAlphabet[(acc << static_cast<unsigned>(6 - bits)) & 0x3FU];
  return out;
}

std::array<unsigned char, 32> digest_of(std::string_view id) {
  std::array<unsigned char, 32> d{};
  SHA256(reinterpret_cast<const unsigned char*>(id.data()), id.size(), d.data());
  return d;
}

}  // namespace

std::size_t SessionTable::DigestHash::operator()(const Digest& d) const {
  std::size_t h = 0;
  std::memcpy(&h, d.data(), sizeof h);  // the digest is uniformly distributed already
  return h;
}

NewSession SessionTable::create(const Principal& principal) {
  NewSession made{random_token(),
                  {principal, random_token(), std::chrono::system_clock::now() + limits_.ttl}};
  const auto now = std::chrono::steady_clock::now();
  const auto digest = digest_of(made.id);
  const std::string& name = principal.name;
  const std::lock_guard lock(mutex_);
  const auto held_by = [&](const std::string& who) {
    const auto it = per_user_.find(who);
    return it == per_user_.end() ? std::size_t{0} : it->second;
  };
  const auto at_own_cap = [&] {
    return limits_.sessions_per_user > 0 && held_by(name) >= limits_.sessions_per_user;
  };
  if (sessions_.size() >= limits_.max_sessions || at_own_cap()) purge_expired(now);
  // This user's own oldest session makes room for its new one...
  while (at_own_cap()) erase_oldest_of(name);
  // ...and a full table is relieved by the user holding the most: never by one with a fair share.
  while (!sessions_.empty() && sessions_.size() >= limits_.max_sessions) {
    const auto most = std::max_element(per_user_.begin(), per_user_.end(),
                                       [](const auto& a, const auto& b) { return a.second < b.second; });
    erase_oldest_of(most->first);
  }
  order_.push_back(digest);
  sessions_.emplace(digest, Entry{made.info, now + limits_.ttl, std::prev(order_.end())});
  ++per_user_[name];
  return made;
}

void SessionTable::erase_oldest_of(const std::string& name) {
  for (const auto& digest : order_) {
    const auto it = sessions_.find(digest);
    if (it->second.info.principal.name == name) return erase(it);
  }
}

std::optional<SessionInfo> SessionTable::find(std::string_view id) {
  const auto digest = digest_of(id);
  const std::lock_guard lock(mutex_);
  const auto it = sessions_.find(digest);
  if (it == sessions_.end()) return std::nullopt;
  if (it->second.expires <= std::chrono::steady_clock::now()) {
    erase(it);
    return std::nullopt;
  }
  return it->second.info;
}

bool SessionTable::remove(std::string_view id) {
  const auto digest = digest_of(id);
  const std::lock_guard lock(mutex_);
  const auto it = sessions_.find(digest);
  if (it == sessions_.end()) return false;
  erase(it);
  return true;
}

bool SessionTable::csrf_matches(const SessionInfo& session, std::string_view presented) {
  if (presented.size() != session.csrf_token.size() || presented.empty()) return false;
  return CRYPTO_memcmp(presented.data(), session.csrf_token.data(), presented.size()) == 0;
}

std::size_t SessionTable::size() const {
  const std::lock_guard lock(mutex_);
  return sessions_.size();
}

void SessionTable::purge_expired(std::chrono::steady_clock::time_point now) {
  for (auto it = sessions_.begin(); it != sessions_.end();) {
    const auto next = std::next(it);
    if (it->second.expires <= now) erase(it);
    it = next;
  }
}

void SessionTable::erase(std::unordered_map<Digest, Entry, DigestHash>::iterator it) {
  const auto user = per_user_.find(it->second.info.principal.name);
  if (user != per_user_.end() && --user->second == 0) per_user_.erase(user);
  order_.erase(it->second.age);
  sessions_.erase(it);
}

std::optional<std::string_view> cookie_value(std::string_view header, std::string_view name) {
  while (!header.empty()) {
    const auto end = header.find(';');
    auto pair = header.substr(0, end);
    header = end == std::string_view::npos ? std::string_view{} : header.substr(end + 1);
    while (!pair.empty() && (pair.front() == ' ' || pair.front() == '\t')) pair.remove_prefix(1);
    while (!pair.empty() && (pair.back() == ' ' || pair.back() == '\t')) pair.remove_suffix(1);
    const auto eq = pair.find('=');
    if (eq == std::string_view::npos) continue;
    if (pair.substr(0, eq) == name) return pair.substr(eq + 1);
  }
  return std::nullopt;
}

}  // namespace hsns::http
