// Well-formed UTF-8 (RFC 3629: no overlong forms, no surrogates, nothing above U+10FFFF), as the JSON
// parser accepts it and the JSON writers can write it. One definition for every reader and writer of
// outside text (JSON fields, CBOR text, topology documents, streamed JSON bodies).
//
// Contract: utf8_sequence_length(s, i) is the length (1 to 4) of the well-formed sequence starting at
// s[i], 0 when the bytes there are not one (cut short included); i < s.size(). valid_utf8(s) is true when
// the whole of s is such sequences. Pure; thread-safe.
#pragma once

#include <cstddef>
#include <string_view>

namespace hsns {

std::size_t utf8_sequence_length(std::string_view s, std::size_t i);
bool valid_utf8(std::string_view s);

}  // namespace hsns
