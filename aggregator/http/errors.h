// The one place where library and store errors become problem documents (RFC 9457). Handlers return
// hsns::Error from the layers below unchanged and call to_problem() on the way out (http/json_io.h's
// problem() does both).
#pragma once

#include "hsns/error.h"
#include "hsns/problem.h"

namespace hsns::http {

// invalid → 400 invalid-request (every field in invalid_params), malformed → 400, not_found → 404,
// conflict → 409, too_large → 413, unprocessable → 422, unavailable → 503, internal → 500.
// conflict and unprocessable name their first field in the detail and list every field with its own
// reason in invalid_params (one field: its reason is the detail).
Problem to_problem(const Error& error);

}  // namespace hsns::http
