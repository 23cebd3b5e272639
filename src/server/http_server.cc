#include "server/http_server.h"

#include <boost/asio/dispatch.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/read.hpp>
#include <boost/asio/strand.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>

#include <sys/socket.h>

#include <atomic>
#include <cerrno>
#include <chrono>
#include <optional>
#include <thread>
#include <vector>

#include "ferry/error.h"

namespace ferry::server {

namespace beast = boost::beast;
namespace http = beast::http;
namespace net = boost::asio;
using tcp = net::ip::tcp;

struct HttpServer::Impl {
  HttpOptions options;
  Router& router;
  net::io_context ioc;
  std::optional<tcp::acceptor> acceptor;
  std::vector<std::thread> threads;
  std::atomic<bool> stopping{false};
  std::atomic<int> in_flight{0};
  std::optional<net::executor_work_guard<net::io_context::executor_type>> work;

  Impl(HttpOptions o, Router& r) : options(std::move(o)), router(r) {}
  void Accept();
};

namespace {

class Connection : public std::enable_shared_from_this<Connection> {
 public:
  Connection(tcp::socket socket, HttpServer::Impl& server) : stream_(std::move(socket)), server_(server) {}

  void Start() {
    net::dispatch(stream_.get_executor(), beast::bind_front_handler(&Connection::Read, shared_from_this()));
  }

 private:
  // A request is read in two steps: the header through Beast's parser, then the body. A body with a
  // Content-Length is read straight into the request's string, as few large reads as the socket gives; only a
  // chunked body goes through the parser. (Through the parser, Beast reads at most the free space in `buffer_`,
  // at least 512 bytes, and empties the buffer into the body as it goes: a 602 KB body took ~1,200 reads of 512
  // bytes and ~8 ms on loopback.)
  void Read() {
    if (server_.stopping) return Close();
    parser_.emplace();
    parser_->body_limit(server_.options.max_body_bytes);  // a larger Content-Length fails with the header
    parser_->header_limit(64 * 1024);
    direct_body_ = false;
    body_.clear();
    buffer_.shrink_to_fit();  // an idle connection keeps no large buffer (bytes of a pipelined request stay)
    stream_.expires_after(std::chrono::seconds(server_.options.idle_timeout_s));
    http::async_read_header(stream_, buffer_, *parser_,
                            beast::bind_front_handler(&Connection::OnHeader, shared_from_this()));
  }

  void OnHeader(beast::error_code ec, size_t) {
    if (ec || parser_->is_done()) return OnRead(ec, 0);
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
                     false, false);
    }
    if (ec) return Respond(ErrorReply(400, "malformed HTTP request: " + ec.message()), false, false);
    auto req = parser_->release();
    keep_alive_ = req.keep_alive();
    HttpRequest r;
    r.method = std::string(req.method_string());
    r.target = std::string(req.target());
    if (auto h = req.find("Inference-Header-Content-Length"); h != req.end()) {
      const std::string v(h->value());
      if (v.empty() || v.size() > 15 || v.find_first_not_of("0123456789") != std::string::npos) {
        return Respond(ErrorReply(400, "Inference-Header-Content-Length '" + v + "' is not a byte count"), keep_alive_,
                       false);
      }
      r.header_length = std::stoull(v);
    }
    r.body = direct_body_ ? std::move(body_) : std::move(req.body());
    cancelled_ = std::make_shared<std::atomic<bool>>(false);
    ++server_.in_flight;
    counted_ = true;
    answered_ = false;
    stream_.expires_never();  // inference may take long; the client waits
    WatchDisconnect();
    auto self = shared_from_this();
    server_.router.Handle(r, cancelled_, [self](HttpReply reply) {
      net::post(self->stream_.get_executor(), [self, reply = std::move(reply)]() mutable {
        self->Respond(std::move(reply), self->keep_alive_, true);
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

  void Respond(HttpReply reply, bool keep_alive, bool from_router) {
    answered_ = true;
    ++generation_;
    beast::error_code ignored;
    stream_.socket().cancel(ignored);  // the disconnect watch
    auto res = std::make_shared<http::response<http::string_body>>(static_cast<http::status>(reply.status), 11);
    res->set(http::field::server, "ferry");
    res->set(http::field::content_type, reply.content_type);
    if (reply.header_length) res->set("Inference-Header-Content-Length", std::to_string(*reply.header_length));
    res->body() = std::move(reply.body);
    res->keep_alive(keep_alive && !server_.stopping);
    res->prepare_payload();
    stream_.expires_after(std::chrono::seconds(server_.options.idle_timeout_s));
    http::async_write(stream_, *res, [self = shared_from_this(), res, from_router](beast::error_code ec, size_t) {
      if (from_router && self->counted_) {
        self->counted_ = false;
        --self->server_.in_flight;
      }
      if (ec || !res->keep_alive()) return self->Close();
      self->Read();
    });
  }

  void Close() {
    beast::error_code ignored;
    stream_.socket().shutdown(tcp::socket::shutdown_send, ignored);
    stream_.socket().close(ignored);
  }

  beast::tcp_stream stream_;
  HttpServer::Impl& server_;
  static constexpr size_t kChunkedReadBytes = 64 * 1024;  // Beast's largest read
  beast::flat_buffer buffer_;
  std::optional<http::request_parser<http::string_body>> parser_;
  std::string body_;          // a Content-Length body, read past the parser
  size_t body_length_ = 0;    // its Content-Length
  bool direct_body_ = false;  // the request's body is in body_, not in the parser's message
  std::shared_ptr<std::atomic<bool>> cancelled_;
  bool keep_alive_ = true;
  bool counted_ = false;
  bool answered_ = true;
  uint64_t generation_ = 0;
};

}  // namespace

void HttpServer::Impl::Accept() {
  acceptor->async_accept(net::make_strand(ioc), [this](beast::error_code ec, tcp::socket socket) {
    if (!ec) {
      // Answers go out as soon as they are written, not held back for the client's ACK (Nagle's algorithm).
      beast::error_code ignored;
      socket.set_option(tcp::no_delay(true), ignored);
      std::make_shared<Connection>(std::move(socket), *this)->Start();
    }
    if (!stopping && acceptor->is_open()) Accept();
  });
}

HttpServer::HttpServer(HttpOptions options, Router& router) : impl_(std::make_unique<Impl>(std::move(options), router)) {}

HttpServer::~HttpServer() { Stop(0); }

uint16_t HttpServer::Start() {
  auto& s = *impl_;
  beast::error_code ec;
  const auto address = net::ip::make_address(s.options.address, ec);
  if (ec) throw InvalidArgumentError("--address '" + s.options.address + "' is not an IP address");
  const tcp::endpoint endpoint(address, s.options.port);
  s.acceptor.emplace(s.ioc);
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
  s.stopping = true;
  net::post(s.ioc, [&s] {
    beast::error_code ignored;
    if (s.acceptor) s.acceptor->close(ignored);
  });
  const auto until = std::chrono::steady_clock::now() + std::chrono::milliseconds(drain_ms);
  while (s.in_flight.load() > 0 && std::chrono::steady_clock::now() < until) {
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
