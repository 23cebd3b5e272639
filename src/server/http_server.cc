#include "server/http_server.h"

#include <boost/asio/dispatch.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/read.hpp>
#include <boost/asio/strand.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>

#include <sys/ioctl.h>
#include <sys/socket.h>

#include <atomic>
#include <cerrno>
#include <chrono>
#include <functional>
#include <mutex>
#include <optional>
#include <thread>
#include <unordered_map>
#include <vector>

#include "ferry/error.h"
#include "server/http_request.h"

namespace ferry::server {

namespace beast = boost::beast;
namespace http = beast::http;
namespace net = boost::asio;
using tcp = net::ip::tcp;

// The order of the members is their order of destruction, reversed: the io_context goes before what its pending
// handlers (which own the connections) still touch, and after the acceptor and threads that use it.
struct HttpServer::Impl {
  HttpOptions options;
  Router& router;
  std::atomic<bool> stopping{false};
  // Requests begun (a first byte read, or waiting in the socket when the server stops) and not answered yet.
  std::atomic<int> in_flight{0};
  // Since Stop began: the connections (and the acceptor) that have not yet decided whether a request has begun
  // on them. Stop waits for them before it trusts in_flight.
  std::atomic<int> stop_checks{0};
  std::mutex connections_mutex;  // connections, next_id, and `stopping` turning true
  std::unordered_map<uint64_t, std::function<void()>> connections;  // id -> "the server stops: look at your socket"
  uint64_t next_id = 0;
  net::io_context ioc;
  net::strand<net::io_context::executor_type> accept_strand{ioc.get_executor()};
  std::optional<tcp::acceptor> acceptor;
  std::optional<net::executor_work_guard<net::io_context::executor_type>> work;
  std::vector<std::thread> threads;

  Impl(HttpOptions o, Router& r) : options(std::move(o)), router(r) {}
  void Accept();
  void AcceptBacklog();
  void Serve(tcp::socket socket);
};

namespace {

// Bytes that have arrived on `socket` and are not read yet.
bool BytesWaiting(tcp::socket& socket) {
  int n = 0;
  return ::ioctl(socket.native_handle(), FIONREAD, &n) == 0 && n > 0;
}

class Connection : public std::enable_shared_from_this<Connection> {
 public:
  Connection(tcp::socket socket, HttpServer::Impl& server) : stream_(std::move(socket)), server_(server) {}

  ~Connection() {
    EndRequest();
    ResolveStopCheck();
    std::lock_guard lock(server_.connections_mutex);
    server_.connections.erase(id_);
  }

  void Start() {
    {
      std::lock_guard lock(server_.connections_mutex);
      id_ = server_.next_id++;
      server_.connections.emplace(id_, [weak = weak_from_this(), &server = server_] {
        auto self = weak.lock();
        if (!self) return void(--server.stop_checks);
        net::post(self->stream_.get_executor(), [self] { self->OnStopping(); });
      });
      // Accepted after Stop looked at the connections: this one decides for itself (in Read).
      if (server_.stopping) {
        stop_check_pending_ = true;
        ++server_.stop_checks;
      }
    }
    net::dispatch(stream_.get_executor(), beast::bind_front_handler(&Connection::Read, shared_from_this()));
  }

 private:
  // A request is read in three steps: a first read waits for its first bytes (the connection is idle until they
  // come: that is when the request begins and counts as in flight), then the header through Beast's parser, then
  // the body. A body with a Content-Length is read straight into the request's string, as few large reads as the
  // socket gives; only a chunked body goes through the parser. (Through the parser, Beast reads at most the free
  // space in `buffer_`, at least 512 bytes, and empties the buffer into the body as it goes: a 602 KB body took
  // ~1,200 reads of 512 bytes and ~8 ms on loopback.)
  void Read() {
    parser_.emplace();
    parser_->body_limit(server_.options.max_body_bytes);  // a larger Content-Length fails with the header
    parser_->header_limit(64 * 1024);
    direct_body_ = false;
    body_.clear();
    // Bytes of a pipelined request already read, or (once the server stops) waiting in the socket: a request
    // has begun, and is answered. Otherwise an idle connection is closed when the server stops.
    if (buffer_.size() > 0 || (server_.stopping && BytesWaiting(stream_.socket()))) {
      BeginRequest();
      return ReadHeader();
    }
    EndRequest();
    if (server_.stopping) return LingeringClose();
    buffer_.shrink_to_fit();  // an idle connection keeps no large buffer
    idle_ = true;
    stream_.expires_after(std::chrono::seconds(server_.options.idle_timeout_s));
    stream_.async_read_some(buffer_.prepare(kFirstReadBytes), [self = shared_from_this()](beast::error_code ec,
                                                                                          size_t n) {
      self->idle_ = false;
      self->buffer_.commit(n);
      if (n > 0) {
        self->BeginRequest();
        return self->ReadHeader();
      }
      // Woken by Stop (OnStopping): look at the socket again.
      if (ec == net::error::operation_aborted && self->server_.stopping) return self->Read();
      self->Close();
    });
  }

  void ReadHeader() {
    stream_.expires_after(std::chrono::seconds(server_.options.idle_timeout_s));
    http::async_read_header(stream_, buffer_, *parser_,
                            beast::bind_front_handler(&Connection::OnHeader, shared_from_this()));
  }

  // Stop asks every connection once: an idle one is woken to look at its socket (Read), a busy one is counted
  // in flight already.
  void OnStopping() {
    stop_check_pending_ = true;
    if (!idle_) return ResolveStopCheck();
    beast::error_code ignored;
    stream_.socket().cancel(ignored);
  }

  void OnHeader(beast::error_code ec, size_t) {
    if (ec) return OnRead(ec, 0);
    // The framing is checked before any body byte is read: a body whose length cannot be known is never read.
    if (auto refused = CheckRequestHeader(parser_->get(), server_.options)) {
      return Respond(std::move(*refused), false);
    }
    if (parser_->is_done()) return OnRead(ec, 0);
    // A client that asks to be told before it sends the body (curl does for bodies over 1 MB) would otherwise
    // wait for its own timeout (1 s for curl) first.
    if (beast::iequals(parser_->get()[http::field::expect], "100-continue")) {
      auto go_on = std::make_shared<http::response<http::empty_body>>(http::status::continue_, 11);
      http::async_write(stream_, *go_on, [self = shared_from_this(), go_on](beast::error_code e, size_t) {
        if (e) return self->Close();
        self->ReadBody();
      });
      return;
    }
    ReadBody();
  }

  void ReadBody() {
    const auto length = parser_->content_length();
    if (parser_->chunked() || !length) {
      buffer_.reserve(kChunkedReadBytes);
      return http::async_read(stream_, buffer_, *parser_,
                              beast::bind_front_handler(&Connection::OnRead, shared_from_this()));
    }
    // `length` is within the body limit (the parser checked it with the header). The string grows as bytes
    // arrive, not to `length` at once: a client that announces 64 MiB and sends nothing holds 64 KiB.
    direct_body_ = true;
    body_length_ = static_cast<size_t>(*length);
    body_.resize(std::min(body_length_, std::max(buffer_.size(), kChunkedReadBytes)));
    const size_t have = net::buffer_copy(net::buffer(body_), buffer_.data());  // bytes read with the header
    buffer_.consume(have);
    ReadMoreBody(have);
  }

  void ReadMoreBody(size_t have) {
    if (have == body_length_) return OnRead({}, 0);
    if (have == body_.size()) body_.resize(std::min(body_length_, body_.size() * 2));
    stream_.async_read_some(net::buffer(body_.data() + have, body_.size() - have),
                            [self = shared_from_this(), have](beast::error_code ec, size_t n) {
                              if (ec) return self->OnRead(ec, 0);
                              self->ReadMoreBody(have + n);
                            });
  }

  void OnRead(beast::error_code ec, size_t) {
    if (ec == http::error::end_of_stream || ec == beast::error::timeout || ec == net::error::operation_aborted ||
        ec == net::error::connection_reset || ec == net::error::eof) {
      return Close();
    }
    if (ec == http::error::body_limit) {
      return Respond(ErrorReply(413, "request body exceeds the limit of " +
                                         std::to_string(server_.options.max_body_bytes) +
                                         " bytes (ferry serve --max-body-bytes)"),
                     false);
    }
    if (ec) return Respond(ErrorReply(400, "malformed HTTP request: " + ec.message()), false);
    auto message = parser_->release();
    keep_alive_ = message.keep_alive();
    if (direct_body_) message.body() = std::move(body_);
    auto converted = ToHttpRequest(std::move(message), server_.options);
    if (auto* refused = std::get_if<HttpReply>(&converted)) return Respond(std::move(*refused), keep_alive_);
    cancelled_ = std::make_shared<std::atomic<bool>>(false);
    answered_ = false;
    stream_.expires_never();  // inference may take long; the client waits
    WatchDisconnect();
    auto self = shared_from_this();
    server_.router.Handle(std::get<HttpRequest>(converted), cancelled_, [self](HttpReply reply) {
      net::post(self->stream_.get_executor(), [self, reply = std::move(reply)]() mutable {
        self->Respond(std::move(reply), self->keep_alive_);
      });
    });
  }

  // While a request is being answered, a socket whose peer closed it (a peek reads 0 bytes) cancels the request.
  // Bytes waiting mean the client sent its next request already: it is read after this answer. A wakeup with
  // nothing to read re-arms the watch; a watch from an earlier request (`generation`) does nothing.
  void WatchDisconnect() {
    auto self = shared_from_this();
    stream_.socket().async_wait(tcp::socket::wait_read, [self, generation = generation_](beast::error_code ec) {
      if (ec || self->answered_ || generation != self->generation_) return;
      char byte;
      const ssize_t n = ::recv(self->stream_.socket().native_handle(), &byte, 1, MSG_PEEK | MSG_DONTWAIT);
      if (n == 0 || (n < 0 && errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR)) {
        self->cancelled_->store(true);
      } else if (n < 0) {
        self->WatchDisconnect();
      }
    });
  }

  // Sends the answer to the request in flight. Once it is written the request ends: the connection reads the
  // next one, or (not keep-alive, the reply says close, or the server stops) closes.
  void Respond(HttpReply reply, bool keep_alive) {
    answered_ = true;
    ++generation_;
    beast::error_code ignored;
    stream_.socket().cancel(ignored);  // the disconnect watch
    auto res = std::make_shared<http::response<http::string_body>>(static_cast<http::status>(reply.status), 11);
    res->set(http::field::server, "ferry");
    res->set(http::field::content_type, reply.content_type);
    if (reply.header_length) res->set("Inference-Header-Content-Length", std::to_string(*reply.header_length));
    res->body() = std::move(reply.body);
    res->keep_alive(keep_alive && !reply.close_connection && !server_.stopping);
    res->prepare_payload();
    stream_.expires_after(std::chrono::seconds(server_.options.idle_timeout_s));
    http::async_write(stream_, *res, [self = shared_from_this(), res](beast::error_code ec, size_t) {
      if (ec) return self->Close();
      if (!res->keep_alive()) return self->LingeringClose();
      self->Read();  // ends this request, unless the next one has begun
    });
  }

  void BeginRequest() {
    if (!counted_) {
      counted_ = true;
      ++server_.in_flight;
    }
    ResolveStopCheck();
  }

  void EndRequest() {
    if (counted_) {
      counted_ = false;
      --server_.in_flight;
    }
  }

  void ResolveStopCheck() {
    if (stop_check_pending_) {
      stop_check_pending_ = false;
      --server_.stop_checks;
    }
  }

  // Closes after an answer: the FIN goes out behind the answer, then what the client still sends is read and
  // dropped for a moment before the socket is closed. Closing a socket with unread bytes sends a reset, which can
  // destroy the answer before the client has read it.
  void LingeringClose() {
    EndRequest();
    ResolveStopCheck();
    if (closing_) return;
    closing_ = true;
    beast::error_code ignored;
    stream_.socket().shutdown(tcp::socket::shutdown_send, ignored);
    buffer_.clear();
    stream_.expires_after(std::chrono::seconds(kLingerSeconds));
    Discard();
  }

  void Discard() {
    stream_.async_read_some(buffer_.prepare(kChunkedReadBytes), [self = shared_from_this()](beast::error_code ec,
                                                                                            size_t) {
      if (ec) return self->Close();
      self->Discard();
    });
  }

  void Close() {
    EndRequest();
    ResolveStopCheck();
    beast::error_code ignored;
    stream_.socket().shutdown(tcp::socket::shutdown_send, ignored);
    stream_.socket().close(ignored);
  }

  beast::tcp_stream stream_;
  HttpServer::Impl& server_;
  uint64_t id_ = 0;
  static constexpr size_t kChunkedReadBytes = 64 * 1024;  // Beast's largest read
  static constexpr size_t kFirstReadBytes = 4 * 1024;     // an idle connection's buffer
  static constexpr int kLingerSeconds = 2;
  beast::flat_buffer buffer_;
  std::optional<http::request_parser<http::string_body>> parser_;
  std::string body_;          // a Content-Length body, read past the parser
  size_t body_length_ = 0;    // its Content-Length
  bool direct_body_ = false;  // the request's body is in body_, not in the parser's message
  std::shared_ptr<std::atomic<bool>> cancelled_;
  bool keep_alive_ = true;
  bool idle_ = false;                // waiting for the first byte of a request
  bool counted_ = false;             // a request has begun (counted in in_flight)
  bool stop_check_pending_ = false;  // Stop waits for this connection to decide (counted in stop_checks)
  bool closing_ = false;
  bool answered_ = true;
  uint64_t generation_ = 0;
};

}  // namespace

void HttpServer::Impl::Serve(tcp::socket socket) {
  // Answers go out as soon as they are written, not held back for the client's ACK (Nagle's algorithm).
  beast::error_code ignored;
  socket.set_option(tcp::no_delay(true), ignored);
  std::make_shared<Connection>(std::move(socket), *this)->Start();
}

void HttpServer::Impl::Accept() {
  acceptor->async_accept(net::make_strand(ioc), [this](beast::error_code ec, tcp::socket socket) {
    if (!ec) Serve(std::move(socket));
    if (!stopping && acceptor->is_open()) Accept();
  });
}

// On the accept strand, once stopping: the connections the kernel has accepted and that wait in the listen
// backlog are taken and served too (their requests may be there already), then the listener closes.
void HttpServer::Impl::AcceptBacklog() {
  beast::error_code ec;
  acceptor->cancel(ec);
  ec = {};
  acceptor->non_blocking(true, ec);
  while (!ec) {
    tcp::socket socket(net::make_strand(ioc));
    acceptor->accept(socket, ec);
    if (!ec) Serve(std::move(socket));
  }
  acceptor->close(ec);
  --stop_checks;
}

HttpServer::HttpServer(HttpOptions options, Router& router) : impl_(std::make_unique<Impl>(std::move(options), router)) {}

HttpServer::~HttpServer() { Stop(0); }

uint16_t HttpServer::Start() {
  auto& s = *impl_;
  beast::error_code ec;
  const auto address = net::ip::make_address(s.options.address, ec);
  if (ec) throw InvalidArgumentError("--address '" + s.options.address + "' is not an IP address");
  const tcp::endpoint endpoint(address, s.options.port);
  s.acceptor.emplace(s.accept_strand);
  s.acceptor->open(endpoint.protocol(), ec);
  if (!ec) s.acceptor->set_option(net::socket_base::reuse_address(true), ec);
  if (!ec) s.acceptor->bind(endpoint, ec);
  if (!ec) s.acceptor->listen(net::socket_base::max_listen_connections, ec);
  if (ec) {
    throw InvalidArgumentError("cannot listen for HTTP on " + s.options.address + ":" +
                               std::to_string(s.options.port) + ": " + ec.message());
  }
  const uint16_t port = s.acceptor->local_endpoint().port();
  s.work.emplace(s.ioc.get_executor());
  s.Accept();
  for (int i = 0; i < std::max(1, s.options.io_threads); ++i) s.threads.emplace_back([&s] { s.ioc.run(); });
  return port;
}

int HttpServer::Stop(int drain_ms) {
  auto& s = *impl_;
  if (s.threads.empty()) return 0;
  std::vector<std::function<void()>> checks;
  {
    std::lock_guard lock(s.connections_mutex);
    s.stopping = true;
    s.stop_checks += 1 + static_cast<int>(s.connections.size());  // the backlog, and each connection
    for (const auto& [id, check] : s.connections) checks.push_back(check);
  }
  net::post(s.accept_strand, [&s] { s.AcceptBacklog(); });
  for (auto& check : checks) check();
  const auto until = std::chrono::steady_clock::now() + std::chrono::milliseconds(drain_ms);
  while ((s.stop_checks.load() > 0 || s.in_flight.load() > 0) && std::chrono::steady_clock::now() < until) {
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  const int left = s.in_flight.load();
  s.work.reset();
  s.ioc.stop();
  for (auto& t : s.threads) t.join();
  s.threads.clear();
  return left;
}

}  // namespace ferry::server
