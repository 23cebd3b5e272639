#include "tools/http_client.h"

#include <boost/asio/connect.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/read.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>
#include <chrono>
#include <limits>
#include <optional>
#include <string_view>

#include "core/parse_number.h"
#include "ferry/error.h"

namespace ferry::tools {
namespace {

namespace asio = boost::asio;
namespace beast = boost::beast;
namespace http = beast::http;
using tcp = asio::ip::tcp;

bool ValidPort(const std::string& p) {
  if (p.empty() || p.size() > 5 || p.find_first_not_of("0123456789") != std::string::npos) return false;
  const int v = std::stoi(p);
  return v >= 1 && v <= 65535;
}

}  // namespace

HttpEndpoint ParseHttpUrl(const std::string& url) {
  std::string rest = url;
  if (rest.rfind("https://", 0) == 0) {
    throw InvalidArgumentError("--server '" + url + "': https is not supported; give http://HOST:PORT");
  }
  if (rest.rfind("http://", 0) == 0) rest = rest.substr(7);
  if (rest.find("://") != std::string::npos) {
    throw InvalidArgumentError("--server '" + url + "': only http:// URLs are supported");
  }
  if (!rest.empty() && rest.back() == '/') rest.pop_back();
  if (rest.find('/') != std::string::npos) {
    throw InvalidArgumentError("--server '" + url + "': give the server's root, http://HOST:PORT, without a path");
  }
  HttpEndpoint ep;
  std::string host = rest;
  if (!rest.empty() && rest.front() == '[') {  // [::1]:8000
    const size_t close = rest.find(']');
    if (close == std::string::npos) throw InvalidArgumentError("--server '" + url + "': unclosed '[' in the host");
    host = rest.substr(1, close - 1);
    const std::string after = rest.substr(close + 1);
    if (!after.empty()) {
      if (after.front() != ':') throw InvalidArgumentError("--server '" + url + "': expected ':PORT' after ']'");
      ep.port = after.substr(1);
    }
  } else if (const size_t colon = rest.rfind(':'); colon != std::string::npos) {
    host = rest.substr(0, colon);
    ep.port = rest.substr(colon + 1);
  }
  if (host.empty()) throw InvalidArgumentError("--server '" + url + "': no host (expected http://HOST:PORT)");
  if (!ValidPort(ep.port)) {
    throw InvalidArgumentError("--server '" + url + "': port '" + ep.port + "' is not a number in 1..65535");
  }
  ep.host = host;
  return ep;
}

struct HttpConnection::Impl {
  HttpEndpoint endpoint;
  std::chrono::steady_clock::duration timeout;
  asio::io_context ioc;
  std::optional<beast::tcp_stream> stream;
  beast::flat_buffer buffer;

  std::string Where() const { return endpoint.host + ":" + endpoint.port; }

  void Close() {
    if (stream) {
      beast::error_code ignored;
      stream->socket().shutdown(tcp::socket::shutdown_both, ignored);
      stream->close();
    }
    stream.reset();
    buffer.clear();
  }

  // Runs the asynchronous operations started on `ioc` until they finish (each has the stream's deadline).
  void RunIo() {
    ioc.restart();
    ioc.run();
  }

  void Connect() {
    beast::error_code ec;
    tcp::resolver resolver(ioc);
    const auto results = resolver.resolve(endpoint.host, endpoint.port, ec);
    if (ec) throw TransportError("cannot resolve " + Where() + ": " + ec.message());
    stream.emplace(ioc);
    stream->expires_after(timeout);
    stream->async_connect(results, [&](beast::error_code e, const tcp::endpoint&) { ec = e; });
    RunIo();
    if (ec) {
      Close();
      throw TransportError("cannot connect to " + Where() + ": " + ec.message());
    }
    stream->socket().set_option(tcp::no_delay(true), ec);
  }

  // Reads the header through Beast's parser, then a Content-Length body straight into `body` (`direct`), in as
  // few large reads as the socket gives; other bodies (chunked, or up to the end of the connection) go through
  // the parser. Through the parser, Beast reads at most the free space in `buffer` (at least 512 bytes) and
  // empties the buffer into the body as it goes: 512-byte reads, about 1,200 of them for a 602 KB answer.
  void ReadResponse(http::response_parser<http::string_body>& parser, std::string& body, bool& direct,
                    beast::error_code& ec) {
    http::async_read_header(*stream, buffer, parser, [&](beast::error_code e, size_t) { ec = e; });
    RunIo();
    if (ec || parser.is_done()) return;
    const auto length = parser.content_length();
    if (parser.chunked() || !length) {
      buffer.reserve(64 * 1024);  // Beast's largest read
      http::async_read(*stream, buffer, parser, [&](beast::error_code e, size_t) { ec = e; });
      RunIo();
      return;
    }
    direct = true;
    body.resize(static_cast<size_t>(*length));
    const size_t have = asio::buffer_copy(asio::buffer(body), buffer.data());  // bytes read with the header
    buffer.consume(have);
    asio::async_read(*stream, asio::buffer(body.data() + have, body.size() - have),
                     [&](beast::error_code e, size_t) { ec = e; });
    RunIo();
  }

  template <class Body>
  HttpResponse Do(http::request<Body>& req) {
    req.set(http::field::host, endpoint.host);
    req.keep_alive(true);
    req.prepare_payload();
    for (int attempt = 0;; ++attempt) {
      const bool fresh = !stream;
      if (fresh) Connect();
      beast::error_code ec;
      bool read_started = false;
      http::response_parser<http::string_body> parser;
      parser.body_limit(std::numeric_limits<std::uint64_t>::max());
      stream->expires_after(timeout);
      http::async_write(*stream, req, [&](beast::error_code e, size_t) { ec = e; });
      RunIo();
      std::string body;  // a Content-Length body, read past the parser
      bool direct = false;
      if (!ec) {
        read_started = true;
        ReadResponse(parser, body, direct, ec);
      }
      if (ec) {
        // A kept-alive connection the server closed meanwhile: connect again once, when nothing was answered.
        const bool stale = !fresh && attempt == 0 &&
                           (ec == http::error::end_of_stream || ec == asio::error::connection_reset ||
                            ec == asio::error::broken_pipe || ec == asio::error::eof) &&
                           (!read_started || !parser.got_some());
        Close();
        if (stale) continue;
        const std::string what = ec == beast::error::timeout ? "no answer within the request timeout" : ec.message();
        throw TransportError(std::string(req.method_string()) + " " + std::string(req.target()) + " to " + Where() +
                             ": " + what);
      }
      http::response<http::string_body> res = parser.release();
      HttpResponse out;
      out.status = static_cast<int>(res.result_int());
      if (auto h = res.find("Inference-Header-Content-Length"); h != res.end()) {
        // Not a whole non-negative number ("7abc", "-1", ""): SIZE_MAX, which CheckInferResponse reports.
        const std::optional<int64_t> n = ParseInt64(std::string_view(h->value().data(), h->value().size()));
        out.header_length = n && *n >= 0 ? static_cast<size_t>(*n) : std::numeric_limits<size_t>::max();
      }
      out.body = direct ? std::move(body) : std::move(res.body());
      if (!res.keep_alive()) Close();
      return out;
    }
  }
};

HttpConnection::HttpConnection(HttpEndpoint endpoint, double timeout_s) : impl_(std::make_unique<Impl>()) {
  impl_->endpoint = std::move(endpoint);
  impl_->timeout = std::chrono::duration_cast<std::chrono::steady_clock::duration>(
      std::chrono::duration<double>(timeout_s > 0 ? timeout_s : 1e6));
}

HttpConnection::~HttpConnection() { impl_->Close(); }

HttpResponse HttpConnection::Get(const std::string& target) {
  http::request<http::empty_body> req{http::verb::get, target, 11};
  return impl_->Do(req);
}

HttpResponse HttpConnection::Post(const std::string& target, const HttpRequestBody& body) {
  // The body is sent from the caller's string, not copied (ResNet-50's input is 600 KB).
  http::request<http::span_body<const char>> req{http::verb::post, target, 11};
  req.set(http::field::content_type, body.content_type);
  if (body.header_length) req.set("Inference-Header-Content-Length", std::to_string(*body.header_length));
  req.body() = {body.body.data(), body.body.size()};
  return impl_->Do(req);
}

}  // namespace ferry::tools
