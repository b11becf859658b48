# Writes OUTPUT, a C++ file defining hsns::embedded::openapi_document() that returns the text of INPUT.
file(READ ${INPUT} content)
string(LENGTH "${content}" length)
set(chunks "")
set(pos 0)
# Raw string literals have a per-literal length limit on some compilers: emit 8 KiB pieces.
while(pos LESS length)
  string(SUBSTRING "${content}" ${pos} 8192 piece)
  string(APPEND chunks "R\"hsns_embed(${piece})hsns_embed\"\n")
  math(EXPR pos "${pos} + 8192")
endwhile()
file(WRITE ${OUTPUT} "// Generated from ${INPUT}; do not edit.\n#include <string_view>\nnamespace hsns::embedded {\nstd::string_view openapi_document() {\n  // An array, not a constexpr string_view: its length is known without a constexpr scan, which\n  // compilers cap (GCC: 262,144 iterations).\n  static constexpr char text[] =\n${chunks};\n  return std::string_view(text, sizeof text - 1);\n}\n}  // namespace hsns::embedded\n")
