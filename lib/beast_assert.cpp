// Boost's assertion handler for the targets that parse HTTP with Beast (BOOST_ENABLE_ASSERT_HANDLER is
// a PUBLIC definition of hsns_beast_assert, so every translation unit that can instantiate Beast's parser
// in those binaries calls this instead of assert()).
//
// Why: Beast 1.81's chunked-body parser asserts `n >= 5` when the last chunk arrives split so that only
// "0\r\n" or "0\r\n\r" is buffered on a later call; the code after the assertion handles that case
// correctly (it waits for more data), and Beast 1.86 corrected the assertion to `n >= 3` for a last chunk
// not preceded by a data chunk (boostorg/beast pull request 2861). In a build with assertions on, a
// 5-byte sequence from any client would otherwise abort the aggregator. That one assertion is let pass;
// every other failed assertion aborts, as assert() does.
#include <boost/assert.hpp>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string_view>

namespace {

bool is_beast_last_chunk_assertion(const char* expr, const char* file) {
  const std::string_view path(file);
  return std::strcmp(expr, "n >= 5") == 0 && path.ends_with("boost/beast/http/impl/basic_parser.ipp");
}

}  // namespace

namespace boost {

void assertion_failed(char const* expr, char const* function, char const* file, long line) {
  if (is_beast_last_chunk_assertion(expr, file)) return;
  std::fprintf(stderr, "%s:%ld: %s: Assertion `%s' failed.\n", file, line, function, expr);
  std::abort();
}

void assertion_failed_msg(char const* expr, char const* msg, char const* function, char const* file,
                          long line) {
  std::fprintf(stderr, "%s:%ld: %s: Assertion `%s' failed: %s\n", file, line, function, expr, msg);
  std::abort();
}

}  // namespace boost
