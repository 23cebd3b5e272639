// One request as Beast parsed it -> the Router's HttpRequest, or the error reply that refuses it: every check the
// HTTP transport makes on a request between Beast's parser and the Router, as pure functions (no socket, no
// state), so that a test or a fuzz target can run Beast's request_parser over raw bytes, then ToHttpRequest, then
// Router::Handle, all in memory. http_server.cc runs exactly these steps on every request.
//
// The checks, in order (each failure is one reply, with the status and a KServe error body {"error": "..."}):
//   1. Framing (CheckRequestHeader, also run on the header alone before any body byte is read):
//      Transfer-Encoding whose final coding is not chunked, chunked given twice, or Transfer-Encoding together
//      with Content-Length: 400 (RFC 9112 6.1 and 6.3: the body length cannot be determined); any coding before
//      the final chunked (gzip, deflate, ...): 501 (not implemented). These close the connection.
//   2. The target is a path (origin-form, starting with '/'); else 400.
//   3. Inference-Header-Content-Length, when present, is one decimal byte count of at most 15 digits; else 400.
//   4. The body is at most options.max_body_bytes; else 413, closing the connection (Beast's body limit refuses
//      a larger Content-Length with the header already; this holds for a message built any other way).
// The method is not checked here: the Router answers 404 / 405 for what it does not serve.
#pragma once

#include <boost/beast/http/message.hpp>
#include <boost/beast/http/string_body.hpp>

#include <optional>
#include <variant>

#include "server/http_routes.h"
#include "server/http_server.h"

namespace ferry::server {

using BeastRequest = boost::beast::http::request<boost::beast::http::string_body>;

// Checks 1-3 on the header alone. nullopt: the header is acceptable.
std::optional<HttpReply> CheckRequestHeader(const boost::beast::http::request_header<>& header,
                                            const HttpOptions& options);

// Converts one complete request (checks 1-4); the body is moved, not copied. Returns the HttpRequest for
// Router::Handle, or the reply that refuses it (reply.close_connection says whether the connection must close).
std::variant<HttpRequest, HttpReply> ToHttpRequest(BeastRequest request, const HttpOptions& options);

}  // namespace ferry::server
