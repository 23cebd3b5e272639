// ToHttpRequest (server/http_request.h): raw bytes through Beast's request parser, then the transport's checks,
// in memory, the way a fuzz target runs them: framing refusals (Transfer-Encoding other than a single final
// chunked, or with Content-Length), the target, Inference-Header-Content-Length, the body limit, and a good request
// converted with its body moved.
#include "server/http_request.h"

#include <gtest/gtest.h>

#include <boost/asio/buffer.hpp>
#include <boost/beast/http/parser.hpp>

#include <nlohmann/json.hpp>

namespace ferry::server {
namespace {

namespace http = boost::beast::http;

HttpOptions Options() {
  HttpOptions o;
  o.max_body_bytes = 1000;
  return o;
}

// Beast's parser over `raw` (all of it at once, as a fuzz target feeds it); the message, or nullopt when Beast
// itself refuses the bytes.
std::optional<BeastRequest> Parse(const std::string& raw) {
  http::request_parser<http::string_body> parser;
  parser.eager(true);
  parser.body_limit(1u << 20);
  boost::beast::error_code ec;
  size_t at = 0;
  while (!ec && !parser.is_done() && at < raw.size()) {
    at += parser.put(boost::asio::buffer(raw.data() + at, raw.size() - at), ec);
  }
  if (ec == http::error::need_more) ec = {};
  if (!ec && !parser.is_done()) parser.put_eof(ec);
  if (ec || !parser.is_done()) return std::nullopt;
  return parser.release();
}

// The request's reply when ToHttpRequest refuses it: (status, error message, closes the connection).
struct Refusal {
  int status = 0;
  std::string error;
  bool close = false;
};
std::optional<Refusal> RefusalOf(const std::string& raw) {
  auto m = Parse(raw);
  EXPECT_TRUE(m) << "Beast refused: " << raw;
  if (!m) return std::nullopt;
  auto r = ToHttpRequest(std::move(*m), Options());
  if (std::holds_alternative<HttpRequest>(r)) return std::nullopt;
  const auto& reply = std::get<HttpReply>(r);
  return Refusal{reply.status, nlohmann::json::parse(reply.body).at("error").get<std::string>(),
                 reply.close_connection};
}

const std::string kPost = "POST /v2/models/m/infer HTTP/1.1\r\nHost: h\r\n";

TEST(ServerHttpRequest, ConvertsAGoodRequestWithItsBody) {
  auto m = Parse(kPost + "Content-Length: 7\r\nInference-Header-Content-Length: 2\r\n\r\n{}abcde");
  ASSERT_TRUE(m);
  auto r = ToHttpRequest(std::move(*m), Options());
  ASSERT_TRUE(std::holds_alternative<HttpRequest>(r));
  const auto& q = std::get<HttpRequest>(r);
  EXPECT_EQ(q.method, "POST");
  EXPECT_EQ(q.target, "/v2/models/m/infer");
  EXPECT_EQ(q.body, "{}abcde");
  EXPECT_EQ(q.header_length, 2u);
}

TEST(ServerHttpRequest, ChunkedBodyIsJoined) {
  auto m = Parse(kPost + "Transfer-Encoding: chunked\r\n\r\n3\r\nabc\r\n2\r\nde\r\n0\r\n\r\n");
  ASSERT_TRUE(m);
  auto r = ToHttpRequest(std::move(*m), Options());
  ASSERT_TRUE(std::holds_alternative<HttpRequest>(r));
  EXPECT_EQ(std::get<HttpRequest>(r).body, "abcde");
  EXPECT_FALSE(std::get<HttpRequest>(r).header_length);
}

TEST(ServerHttpRequest, TransferEncodingNotEndingInChunkedIs400) {
  // Beast takes this as a request without a body; the gzip bytes would be read as the next request.
  auto r = RefusalOf(kPost + "Transfer-Encoding: gzip\r\n\r\n");
  ASSERT_TRUE(r);
  EXPECT_EQ(r->status, 400);
  EXPECT_EQ(r->error, "Transfer-Encoding 'gzip' does not end with chunked: the body length cannot be determined "
                      "(RFC 9112 6.1)");
  EXPECT_TRUE(r->close);
  r = RefusalOf(kPost + "Transfer-Encoding: chunked, gzip\r\nContent-Length: 2\r\n\r\nab");
  ASSERT_TRUE(r);
  EXPECT_EQ(r->status, 400);
  EXPECT_TRUE(r->close);
  r = RefusalOf(kPost + "Transfer-Encoding:\r\n\r\n");
  ASSERT_TRUE(r);
  EXPECT_EQ(r->status, 400);
}

TEST(ServerHttpRequest, UnknownCodingBeforeChunkedIs501) {
  auto r = RefusalOf(kPost + "Transfer-Encoding: gzip, chunked\r\n\r\n0\r\n\r\n");
  ASSERT_TRUE(r);
  EXPECT_EQ(r->status, 501);
  EXPECT_EQ(r->error, "transfer coding 'gzip' is not implemented (Ferry reads chunked only)");
  EXPECT_TRUE(r->close);
  // Two fields make one list.
  r = RefusalOf(kPost + "Transfer-Encoding: deflate\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n");
  ASSERT_TRUE(r);
  EXPECT_EQ(r->status, 501);
}

TEST(ServerHttpRequest, ChunkedTwiceOrWithContentLengthIs400) {
  auto r = RefusalOf(kPost + "Transfer-Encoding: chunked, chunked\r\n\r\n0\r\n\r\n");
  ASSERT_TRUE(r);
  EXPECT_EQ(r->status, 400);
  EXPECT_EQ(r->error, "Transfer-Encoding 'chunked, chunked' applies chunked more than once (RFC 9112 7)");
  // Beast accepts a non-chunked coding followed by Content-Length (it reads Content-Length bytes).
  r = RefusalOf(kPost + "Transfer-Encoding: identity\r\nContent-Length: 2\r\n\r\nab");
  ASSERT_TRUE(r);
  EXPECT_EQ(r->status, 400);
  EXPECT_TRUE(r->close);
  // Built directly: chunked with Content-Length.
  BeastRequest m{http::verb::post, "/v2/models/m/infer", 11};
  m.set(http::field::transfer_encoding, "chunked");
  m.set(http::field::content_length, "2");
  m.body() = "ab";
  auto c = ToHttpRequest(std::move(m), Options());
  ASSERT_TRUE(std::holds_alternative<HttpReply>(c));
  EXPECT_EQ(std::get<HttpReply>(c).status, 400);
  EXPECT_NE(std::get<HttpReply>(c).body.find("ambiguous"), std::string::npos);
}

TEST(ServerHttpRequest, TransferEncodingInHttp10Is400) {
  BeastRequest m{http::verb::post, "/v2/models/m/infer", 10};
  m.set(http::field::transfer_encoding, "chunked");
  auto c = ToHttpRequest(std::move(m), Options());
  ASSERT_TRUE(std::holds_alternative<HttpReply>(c));
  EXPECT_EQ(std::get<HttpReply>(c).status, 400);
  EXPECT_TRUE(std::get<HttpReply>(c).close_connection);
}

TEST(ServerHttpRequest, TargetMustBeAPath) {
  auto r = RefusalOf("GET http://h/v2/health/live HTTP/1.1\r\nHost: h\r\n\r\n");
  ASSERT_TRUE(r);
  EXPECT_EQ(r->status, 400);
  EXPECT_EQ(r->error, "request target 'http://h/v2/health/live' is not a path (origin-form, '/...')");
  EXPECT_FALSE(r->close);
  EXPECT_FALSE(RefusalOf("GET /v2/health/live HTTP/1.1\r\nHost: h\r\n\r\n"));
}

TEST(ServerHttpRequest, InferenceHeaderContentLengthIsOneByteCount) {
  auto r = RefusalOf(kPost + "Content-Length: 2\r\nInference-Header-Content-Length: 1x\r\n\r\n{}");
  ASSERT_TRUE(r);
  EXPECT_EQ(r->status, 400);
  EXPECT_EQ(r->error, "Inference-Header-Content-Length '1x' is not a byte count");
  r = RefusalOf(kPost + "Content-Length: 2\r\nInference-Header-Content-Length: 1234567890123456\r\n\r\n{}");
  ASSERT_TRUE(r);
  EXPECT_EQ(r->status, 400);
  r = RefusalOf(kPost + "Content-Length: 2\r\nInference-Header-Content-Length: 1\r\n"
                        "Inference-Header-Content-Length: 2\r\n\r\n{}");
  ASSERT_TRUE(r);
  EXPECT_EQ(r->status, 400);
  EXPECT_EQ(r->error, "Inference-Header-Content-Length is given more than once");
}

TEST(ServerHttpRequest, BodyOverTheLimitIs413) {
  auto r = RefusalOf(kPost + "Transfer-Encoding: chunked\r\n\r\n3e9\r\n" + std::string(1001, 'a') + "\r\n0\r\n\r\n");
  ASSERT_TRUE(r);
  EXPECT_EQ(r->status, 413);
  EXPECT_EQ(r->error, "request body exceeds the limit of 1000 bytes (ferry serve --max-body-bytes)");
  EXPECT_TRUE(r->close);
}

TEST(ServerHttpRequest, HeaderCheckAloneSeesFramingBeforeTheBody) {
  http::request_parser<http::string_body> parser;
  boost::beast::error_code ec;
  const std::string head = kPost + "Transfer-Encoding: gzip\r\nContent-Length: 100\r\n\r\n";
  parser.put(boost::asio::buffer(head), ec);
  ASSERT_FALSE(ec) << ec.message();
  ASSERT_TRUE(parser.is_header_done());
  const auto r = CheckRequestHeader(parser.get(), Options());
  ASSERT_TRUE(r);
  EXPECT_EQ(r->status, 400);
  EXPECT_TRUE(r->close_connection);
}

}  // namespace
}  // namespace ferry::server
