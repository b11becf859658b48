// The dashboard's static assets (web/, built by esbuild into the build tree and installed under
// /usr/share/hsns/web): GET / answers index.html, GET /ui/{file} the named file of the web root.
//
// Contract:
// - Only plain files directly inside the web root are served: a name (after percent-decoding) that is
//   empty, starts with '.', or holds '/', '\\' or NUL is refused with 404, and so is anything whose
//   canonical path is not inside the canonical web root (a symlink pointing out of it), so no request
//   reaches a file outside the root. Unknown extensions are refused (404): only the asset types the
//   dashboard ships are served, each with its own Content-Type.
// - Every answer (200 and 304) carries the security headers of the dashboard: Content-Security-Policy
//   (scripts from this origin only: no inline or eval'd script; connections to this origin; no framing),
//   X-Content-Type-Options: nosniff, Referrer-Policy: no-referrer, X-Frame-Options: DENY.
// - Caching: the ETag is a digest of the file's content; Cache-Control: no-cache, so a browser revalidates
//   every asset (a 304 costs a stat, no read) and a rebuilt or upgraded dashboard is picked up at once.
//   File contents are kept in memory per (name, size, mtime), at most kMaxCachedFiles entries, and written
//   without a copy (http/response_body.h).
// - A missing web root is not a start-up error (an aggregator without the dashboard package keeps serving
//   the API): GET / then answers 404 naming the configured web_root.
// - Public routes (the login page must load before any token is given); thread-safe.
#pragma once

#include <string>

#include "http/router.h"

namespace hsns::http {

inline constexpr std::string_view kContentSecurityPolicy =
    "default-src 'self'; script-src 'self'; style-src 'self' 'unsafe-inline'; img-src 'self' data: blob:; "
    "connect-src 'self'; font-src 'self'; object-src 'none'; base-uri 'none'; frame-ancestors 'none'; "
    "form-action 'self'";

void register_static_routes(Router& router, std::string web_root);

}  // namespace hsns::http
