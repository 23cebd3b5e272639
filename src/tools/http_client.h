// A small synchronous HTTP/1.1 client on Boost.Beast for `ferry bench --server`: one keep-alive connection per
// benchmark worker, with a deadline on every request.
#pragma once

#include <memory>
#include <optional>
#include <stdexcept>
#include <string>

namespace ferry::tools {

struct HttpEndpoint {
  std::string host;
  std::string port = "80";
};

// "http://HOST[:PORT][/]" (also "HOST:PORT"). Throws InvalidArgumentError naming --server for anything else
// (https, a path, an empty host or a bad port).
HttpEndpoint ParseHttpUrl(const std::string& url);

struct HttpRequestBody {
  std::string body;
  std::string content_type = "application/json";
  std::optional<size_t> header_length;  // sent as Inference-Header-Content-Length when set
};

struct HttpResponse {
  int status = 0;
  std::string body;
  std::optional<size_t> header_length;  // the response's Inference-Header-Content-Length
};

// One keep-alive HTTP/1.1 connection (Boost.Beast), used by one thread. Connects on the first request and again
// after the server closed the connection. Every request has a deadline of `timeout_s`; on a transport failure
// (refused, reset, timed out) it throws TransportError and closes the connection.
class HttpConnection {
 public:
  class TransportError : public std::runtime_error {
   public:
    explicit TransportError(const std::string& m) : std::runtime_error(m) {}
  };
  HttpConnection(HttpEndpoint endpoint, double timeout_s);
  ~HttpConnection();
  HttpConnection(const HttpConnection&) = delete;
  HttpConnection& operator=(const HttpConnection&) = delete;

  HttpResponse Get(const std::string& target);
  HttpResponse Post(const std::string& target, const HttpRequestBody& body);

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace ferry::tools
