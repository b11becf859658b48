// The body type of every response the aggregator writes (http::Response): either text the response owns,
// or bytes shared with a longer-lived owner and written without a copy (a cached list body, its gzip form:
// http/response_cache.h), so that serving an unchanged 200 KB collection costs no allocation and no copy.
//
// Contract:
// - value_type holds one of the two. Assigning a std::string makes it owned; share(owner, bytes) makes it
//   refer to `bytes`, which `owner` keeps alive and unchanged for as long as the response exists.
// - view() is the bytes either way; size(), empty(), clear() and comparison with text act on them.
// - Serialisation only (Beast's BodyWriter: one buffer); a response is never parsed into this type.
#pragma once

#include <boost/asio/buffer.hpp>
#include <boost/beast/core/error.hpp>
#include <boost/beast/http/message.hpp>
#include <boost/optional.hpp>
#include <cstdint>
#include <memory>
#include <ostream>
#include <string>
#include <string_view>
#include <utility>

namespace hsns::http {

struct ResponseBody {
  class value_type {
   public:
    value_type() = default;
    value_type& operator=(std::string text) {
      owned_ = std::move(text);
      owner_.reset();
      shared_ = {};
      return *this;
    }
    // Refers to `bytes` without copying them; `owner` keeps them alive and unchanged.
    void share(std::shared_ptr<const void> owner, std::string_view bytes) {
      owned_.clear();
      owner_ = std::move(owner);
      shared_ = bytes;
    }
    std::string_view view() const { return owner_ ? shared_ : std::string_view(owned_); }
    std::size_t size() const { return view().size(); }
    bool empty() const { return view().empty(); }
    void clear() { *this = std::string(); }

    friend bool operator==(const value_type& body, std::string_view text) { return body.view() == text; }
    friend std::ostream& operator<<(std::ostream& out, const value_type& body) { return out << body.view(); }

   private:
    std::string owned_;
    std::shared_ptr<const void> owner_;
    std::string_view shared_;
  };

  static std::uint64_t size(const value_type& body) { return body.size(); }

  class writer {
   public:
    using const_buffers_type = boost::asio::const_buffer;
    template <bool IsRequest, class Fields>
    writer(const boost::beast::http::header<IsRequest, Fields>& /*header*/, const value_type& body)
        : body_(body) {}
    void init(boost::beast::error_code& ec) { ec = {}; }
    boost::optional<std::pair<const_buffers_type, bool>> get(boost::beast::error_code& ec) {
      ec = {};
      const auto bytes = body_.view();
      return std::pair{const_buffers_type(bytes.data(), bytes.size()), false};
    }

   private:
    const value_type& body_;
  };
};

}  // namespace hsns::http
