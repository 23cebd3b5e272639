// HTTP/1.1 transport on Boost.Beast: one io_context run by a few threads, every connection asynchronous (no
// thread per connection, so many keep-alive connections and slow clients cost no threads), keep-alive, a body
// size limit, timeouts, and cancellation of a queued inference when its client disconnects. Each request goes
// through ToHttpRequest (http_request.h: framing, target and size checks) to the Router; inference runs on the
// scheduler's threads, never on the I/O threads. Every request whose bytes arrived gets exactly one answer, also
// when the server stops (Stop).
#pragma once

#include <cstdint>
#include <memory>
#include <ostream>
#include <string>

#include "server/http_routes.h"

namespace ferry::server {

struct HttpOptions {
  std::string address = "127.0.0.1";
  uint16_t port = 8000;             // 0: any free port (Start returns it)
  int io_threads = 2;
  size_t max_body_bytes = 64u << 20;  // larger bodies get 413
  int idle_timeout_s = 60;          // a connection with no complete request for this long is closed
};

class HttpServer {
 public:
  HttpServer(HttpOptions options, Router& router);
  ~HttpServer();
  HttpServer(const HttpServer&) = delete;
  HttpServer& operator=(const HttpServer&) = delete;

  // Binds and starts serving; returns the port. Throws InvalidArgumentError when the address cannot be bound.
  uint16_t Start();
  // Stops accepting connections, waits (at most `drain_ms`) for requests in flight to be answered, then stops
  // the I/O threads. A request is in flight from its first byte: one being read, one whose bytes wait unread on
  // an idle keep-alive connection, and one on a connection still in the listen backlog are read and answered
  // (with "Connection: close"); idle connections with nothing waiting are closed at once. Returns the number of
  // requests still in flight when it gave up (0: drained).
  int Stop(int drain_ms);

  struct Impl;

 private:
  std::unique_ptr<Impl> impl_;
};

}  // namespace ferry::server
