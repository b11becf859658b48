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
# The length comes from sizeof, not from a constexpr strlen: that one's loop has a compile-time step limit
# (GCC: 262,144) a large document exceeds.
file(WRITE ${OUTPUT} "// Generated from ${INPUT}; do not edit.\n#include <string_view>\nnamespace hsns::embedded {\nstd::string_view openapi_document() {\n  static constexpr char data[] =\n${chunks};\n  return std::string_view(data, sizeof data - 1);\n}\n}  // namespace hsns::embedded\n")
