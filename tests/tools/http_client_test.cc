// The bench's HTTP client (tools/http_client.h) against a scripted loopback server that answers with raw bytes:
// a Content-Length body (read past Beast's parser, straight into the answer) arrives whole when it comes in
// pieces, keep-alive answers stay apart, chunked answers and answers that end with the connection still parse,
// and an answer cut short is a transport error.
#include "tools/http_client.h"

#include <gtest/gtest.h>

#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/write.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>

#include <chrono>
#include <limits>
#include <sstream>
#include <thread>

namespace ferry::tools {
namespace {

namespace asio = boost::asio;
namespace beast = boost::beast;
namespace http = beast::http;
using tcp = asio::ip::tcp;

// One connection, one scripted answer per request: each answer is written in the pieces given, with a short pause
// between pieces; `close_after` closes the connection after the last answer.
class ScriptedServer {
 public:
  using Answer = std::vector<std::string>;
  explicit ScriptedServer(std::vector<Answer> answers) : acceptor_(ioc_, {asio::ip::make_address("127.0.0.1"), 0}) {
    port_ = acceptor_.local_endpoint().port();
    thread_ = std::thread([this, answers = std::move(answers)] {
      try {
        tcp::socket socket = acceptor_.accept();
        beast::flat_buffer buffer;
        for (const Answer& pieces : answers) {
          http::request<http::string_body> req;
          http::read(socket, buffer, req);
          for (const std::string& piece : pieces) {
            asio::write(socket, asio::buffer(piece));
            std::this_thread::sleep_for(std::chrono::milliseconds(5));
          }
        }
        socket.shutdown(tcp::socket::shutdown_both);
      } catch (const std::exception&) {
        // the client went away: its side of the test reports it
      }
    });
  }
  ~ScriptedServer() { thread_.join(); }
  HttpEndpoint Endpoint() const { return {"127.0.0.1", std::to_string(port_)}; }

 private:
  asio::io_context ioc_;
  tcp::acceptor acceptor_;
  uint16_t port_ = 0;
  std::thread thread_;
};

std::string Pattern(size_t n, char seed) {
  std::string s(n, '\0');
  for (size_t i = 0; i < n; ++i) s[i] = static_cast<char>(seed + i * 31 + i / 997);
  return s;
}

std::string Header(size_t length, const std::string& extra = "") {
  return "HTTP/1.1 200 OK\r\nContent-Type: application/octet-stream\r\nContent-Length: " + std::to_string(length) +
         "\r\n" + extra + "\r\n";
}

TEST(HttpClient, ContentLengthAnswersArriveWholeAndApart) {
  const std::string big = Pattern(1 << 20, 'a');  // 1 MiB, in three pieces, the first with the header
  const std::string small = "{\"ok\":true}";
  ScriptedServer server({{Header(big.size(), "Inference-Header-Content-Length: 7\r\n") + big.substr(0, 1000),
                          big.substr(1000, 300000), big.substr(301000)},
                         {Header(small.size()) + small}});
  HttpConnection client(server.Endpoint(), 10);
  HttpRequestBody body;
  body.body = Pattern(700000, 'q');  // a large request body too
  const HttpResponse a = client.Post("/v2/models/m/infer", body);
  EXPECT_EQ(a.status, 200);
  EXPECT_EQ(a.header_length, 7u);
  EXPECT_TRUE(a.body == big) << "the 1 MiB answer differs (" << a.body.size() << " bytes)";
  const HttpResponse b = client.Get("/v2/models/m");  // same connection: nothing of the first answer is left over
  EXPECT_EQ(b.status, 200);
  EXPECT_EQ(b.body, small);
}

TEST(HttpClient, InferenceHeaderLengthMustBeAWholeNumber) {
  // "7abc" is not 7 and "-1" is not a huge length: both read as SIZE_MAX, which CheckInferResponse reports.
  std::vector<ScriptedServer::Answer> answers;
  for (const char* v : {"7abc", "-1", "", "7"}) {
    answers.push_back({Header(2, std::string("Inference-Header-Content-Length: ") + v + "\r\n") + "{}"});
  }
  ScriptedServer server(answers);
  HttpConnection client(server.Endpoint(), 10);
  for (size_t want : {std::numeric_limits<size_t>::max(), std::numeric_limits<size_t>::max(),
                      std::numeric_limits<size_t>::max(), size_t{7}}) {
    EXPECT_EQ(client.Get("/m").header_length, want);
  }
}

TEST(HttpClient, ChunkedAndUntilCloseAnswersParse) {
  const std::string big = Pattern(200000, 'c');
  std::string chunked = "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n";
  for (size_t at = 0; at < big.size(); at += 70000) {
    const std::string part = big.substr(at, 70000);
    std::ostringstream size;
    size << std::hex << part.size();
    chunked += size.str() + "\r\n" + part + "\r\n";
  }
  chunked += "0\r\n\r\n";
  const std::string tail = Pattern(100000, 't');
  ScriptedServer server({{chunked}, {"HTTP/1.1 200 OK\r\nConnection: close\r\n\r\n" + tail.substr(0, 50000),
                                     tail.substr(50000)}});
  HttpConnection client(server.Endpoint(), 10);
  const HttpResponse a = client.Get("/a");
  EXPECT_EQ(a.status, 200);
  EXPECT_TRUE(a.body == big) << a.body.size();
  const HttpResponse b = client.Get("/b");  // no Content-Length: the body ends with the connection
  EXPECT_EQ(b.status, 200);
  EXPECT_TRUE(b.body == tail) << b.body.size();
}

TEST(HttpClient, AnAnswerCutShortIsATransportError) {
  ScriptedServer server({{Header(100000) + Pattern(5000, 'x')}});  // then the connection closes
  HttpConnection client(server.Endpoint(), 10);
  try {
    client.Get("/v2/models/m");
    FAIL() << "no error for an answer 95,000 bytes short";
  } catch (const HttpConnection::TransportError& e) {
    EXPECT_NE(std::string(e.what()).find("GET /v2/models/m to 127.0.0.1:"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace ferry::tools
