#include "server/http_request.h"

#include <boost/beast/core/string.hpp>
#include <boost/beast/http/field.hpp>

#include <string>
#include <string_view>
#include <vector>

namespace ferry::server {
namespace {

namespace http = boost::beast::http;

bool IsTokenChar(char c) {
  return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
         std::string_view("!#$%&'*+-.^_`|~").find(c) != std::string_view::npos;
}

std::string_view Trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t')) s.remove_suffix(1);
  return s;
}

// The transfer codings of every Transfer-Encoding field, in order, without their parameters ("gzip;q=1" ->
// "gzip"). False when a list element is not a token.
bool TransferCodings(const http::request_header<>& header, std::vector<std::string>* codings) {
  const auto fields = header.equal_range(http::field::transfer_encoding);
  for (auto f = fields.first; f != fields.second; ++f) {
    std::string_view v(f->value().data(), f->value().size());
    while (true) {
      const size_t comma = v.find(',');
      std::string_view element = Trim(v.substr(0, comma));
      element = Trim(element.substr(0, element.find(';')));
      if (!element.empty()) {
        for (char c : element) {
          if (!IsTokenChar(c)) return false;
        }
        codings->emplace_back(element);
      }
      if (comma == std::string_view::npos) break;
      v.remove_prefix(comma + 1);
    }
  }
  return true;
}

HttpReply Refuse(int status, const std::string& message) {
  HttpReply r = ErrorReply(status, message);
  r.close_connection = true;
  return r;
}

}  // namespace

std::optional<HttpReply> CheckRequestHeader(const http::request_header<>& header, const HttpOptions&) {
  // 1. Framing.
  if (header.find(http::field::transfer_encoding) != header.end()) {
    std::vector<std::string> codings;
    if (!TransferCodings(header, &codings)) return Refuse(400, "Transfer-Encoding is not a list of transfer codings");
    std::string all;
    for (const auto& c : codings) all += (all.empty() ? "" : ", ") + c;
    if (header.version() < 11) {
      return Refuse(400, "Transfer-Encoding in an HTTP/1.0 request: the body length cannot be determined "
                         "(RFC 9112 6.1)");
    }
    if (codings.empty() || !boost::beast::iequals(codings.back(), "chunked")) {
      return Refuse(400, "Transfer-Encoding '" + all +
                             "' does not end with chunked: the body length cannot be determined (RFC 9112 6.1)");
    }
    for (size_t i = 0; i + 1 < codings.size(); ++i) {
      if (boost::beast::iequals(codings[i], "chunked")) {
        return Refuse(400, "Transfer-Encoding '" + all + "' applies chunked more than once (RFC 9112 7)");
      }
    }
    if (codings.size() > 1) {
      return Refuse(501, "transfer coding '" + codings.front() + "' is not implemented (Ferry reads chunked only)");
    }
    if (header.find(http::field::content_length) != header.end()) {
      return Refuse(400, "Transfer-Encoding together with Content-Length: the body length is ambiguous "
                         "(RFC 9112 6.3)");
    }
  }
  // 2. The target.
  const auto target = header.target();
  if (target.empty() || target.front() != '/') {
    return ErrorReply(400, "request target '" + std::string(target) + "' is not a path (origin-form, '/...')");
  }
  // 3. Inference-Header-Content-Length.
  const auto lengths = header.equal_range("Inference-Header-Content-Length");
  if (lengths.first != lengths.second) {
    if (std::next(lengths.first) != lengths.second) {
      return ErrorReply(400, "Inference-Header-Content-Length is given more than once");
    }
    const std::string v(lengths.first->value());
    if (v.empty() || v.size() > 15 || v.find_first_not_of("0123456789") != std::string::npos) {
      return ErrorReply(400, "Inference-Header-Content-Length '" + v + "' is not a byte count");
    }
  }
  return std::nullopt;
}

std::variant<HttpRequest, HttpReply> ToHttpRequest(BeastRequest request, const HttpOptions& options) {
  if (auto refused = CheckRequestHeader(request, options)) return std::move(*refused);
  // 4. The body limit.
  if (request.body().size() > options.max_body_bytes) {
    return Refuse(413, "request body exceeds the limit of " + std::to_string(options.max_body_bytes) +
                           " bytes (ferry serve --max-body-bytes)");
  }
  HttpRequest r;
  r.method = std::string(request.method_string());
  r.target = std::string(request.target());
  if (auto h = request.find("Inference-Header-Content-Length"); h != request.end()) {
    r.header_length = std::stoull(std::string(h->value()));  // checked above: 1-15 digits
  }
  r.body = std::move(request.body());
  return r;
}

}  // namespace ferry::server
