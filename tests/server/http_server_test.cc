// The HTTP transport (server/http_server.cc) end to end on loopback, with the bench client (tools/http_client.h)
// and with raw sockets: request bodies of hundreds of KB to MB (read past Beast's parser, straight into the
// request) arrive bit for bit in binary and JSON form, large binary answers reach the client intact, pipelined
// requests on one connection stay apart, chunked bodies still parse, "Expect: 100-continue" gets its interim
// answer, and the body limit still refuses an oversized Content-Length before any body is read. The model is
// y = Identity(x) on [N, 150528] floats (one 3x224x224 image per row, 602,112 bytes).
#include "server/http_server.h"

#include <gtest/gtest.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <unistd.h>

#include <boost/asio/connect.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/write.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>

#include <cerrno>
#include <chrono>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <future>
#include <sstream>
#include <thread>
#include <tuple>

#include <nlohmann/json.hpp>

#include "testing/model_builder.h"
#include "testing/random_values.h"
#include "tools/http_client.h"

namespace ferry::server {
namespace {

namespace fs = std::filesystem;
namespace asio = boost::asio;
namespace beast = boost::beast;
namespace http = beast::http;
using json = nlohmann::json;

constexpr int64_t kRow = 3 * 224 * 224;
constexpr size_t kBodyLimit = 4u << 20;  // 4 MiB: batch 4 (2.4 MB) fits, batch 8 (4.8 MB) does not

std::string IdentityModel() {
  testing::ModelBuilder b;
  b.InputSym("x", onnx::TensorProto::FLOAT, {-1, kRow}, "N");
  auto* out = b.graph().add_output();
  out->set_name("y");
  auto* tt = out->mutable_type()->mutable_tensor_type();
  tt->set_elem_type(onnx::TensorProto::FLOAT);
  tt->mutable_shape()->add_dim()->set_dim_param("N");
  tt->mutable_shape()->add_dim()->set_dim_value(kRow);
  b.Node("Identity", {"x"}, {"y"});
  return b.Bytes();
}

struct Server {
  fs::path repo;
  std::ostringstream log;
  std::shared_ptr<MetricsRegistry> metrics = std::make_shared<MetricsRegistry>();
  std::unique_ptr<ModelManager> manager;
  std::unique_ptr<InferenceService> service;
  std::unique_ptr<Router> router;
  std::unique_ptr<HttpServer> http;
  uint16_t port = 0;

  Server() {
    repo = fs::path(::testing::TempDir()) / ("ferry_http_repo_" + std::to_string(::getpid()));
    fs::remove_all(repo);
    fs::create_directories(repo / "ident" / "1");
    std::ofstream(repo / "ident" / "1" / "model.onnx", std::ios::binary) << IdentityModel();
    std::ofstream(repo / "ident" / "config.pbtxt") << "max_batch_size: 8\n";
    ManagerOptions mo;
    mo.repository = repo.string();
    mo.threads = 1;
    manager = std::make_unique<ModelManager>(mo, metrics, log);
    EXPECT_EQ(manager->Start(), 0) << log.str();
    service = std::make_unique<InferenceService>(*manager, metrics, ServiceOptions{});
    router = std::make_unique<Router>(*service);
    HttpOptions ho;
    ho.port = 0;
    ho.max_body_bytes = kBodyLimit;
    http = std::make_unique<HttpServer>(ho, *router);
    port = http->Start();
  }
  ~Server() {
    http->Stop(1000);
    manager->Shutdown();
    fs::remove_all(repo);
  }
};

class HttpTransport : public ::testing::Test {
 public:
  static void SetUpTestSuite() { server = new Server(); }
  static void TearDownTestSuite() {
    delete server;
    server = nullptr;
  }
  static Server* server;
};
Server* HttpTransport::server = nullptr;

uint16_t Port() { return HttpTransport::server->port; }

// A binary-extension infer request for `batch` rows of `values`, asking for the output in binary.
tools::HttpRequestBody BinaryRequest(const std::vector<float>& values, int64_t batch) {
  const json header = {{"inputs",
                        {{{"name", "x"},
                          {"datatype", "FP32"},
                          {"shape", {batch, kRow}},
                          {"parameters", {{"binary_data_size", values.size() * 4}}}}}},
                       {"outputs", {{{"name", "y"}, {"parameters", {{"binary_data", true}}}}}}};
  tools::HttpRequestBody body;
  body.body = header.dump();
  body.header_length = body.body.size();
  body.body.append(reinterpret_cast<const char*>(values.data()), values.size() * 4);
  body.content_type = "application/octet-stream";
  return body;
}

// The raw bytes of an HTTP/1.1 POST of `body` to the ident model.
std::string RawPost(const std::string& body, std::optional<size_t> header_length, const std::string& extra = "") {
  std::string r = "POST /v2/models/ident/infer HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: " +
                  std::to_string(body.size()) + "\r\n";
  if (header_length) r += "Inference-Header-Content-Length: " + std::to_string(*header_length) + "\r\n";
  return r + extra + "\r\n" + body;
}

// A blocking loopback connection for requests the bench client cannot send (pipelined, chunked, Expect). It reads
// with recv() under SO_RCVTIMEO (Asio's blocking reads would wait past it), so an answer that never comes fails
// the test (Receive throws) instead of hanging it.
struct Raw {
  asio::io_context ioc;
  asio::ip::tcp::socket socket{ioc};
  beast::flat_buffer buffer;

  explicit Raw(uint16_t port = Port()) {
    socket.connect({asio::ip::make_address("127.0.0.1"), port});
    const timeval timeout{10, 0};
    ::setsockopt(socket.native_handle(), SOL_SOCKET, SO_RCVTIMEO, &timeout, sizeof timeout);
  }
  void Send(const std::string& bytes) { asio::write(socket, asio::buffer(bytes)); }
  // recv() into the buffer: the bytes read, 0 at end of stream. Throws when nothing comes within the timeout.
  size_t Fill() {
    auto space = buffer.prepare(64 * 1024);
    const ssize_t n = ::recv(socket.native_handle(), space.data(), space.size(), 0);
    if (n < 0) {
      throw std::runtime_error(errno == EAGAIN || errno == EWOULDBLOCK ? "no answer within 10 s"
                                                                       : std::string("recv: ") + std::strerror(errno));
    }
    buffer.commit(static_cast<size_t>(n));
    return static_cast<size_t>(n);
  }
  http::response<http::string_body> Receive() {
    http::response_parser<http::string_body> parser;
    parser.body_limit(64u << 20);
    parser.eager(true);
    beast::error_code ec;
    while (!parser.is_done()) {
      if (buffer.size() > 0) {
        const size_t used = parser.put(buffer.data(), ec);
        buffer.consume(used);
        if (ec == http::error::need_more) ec = {};
        if (ec) throw beast::system_error(ec);
        if (parser.is_done() || (used > 0 && buffer.size() > 0)) continue;
      }
      if (Fill() == 0) {
        parser.put_eof(ec);
        if (ec) throw beast::system_error(ec);
      }
    }
    return parser.release();
  }
  // Whether the server closed the connection (end of stream) with nothing more sent.
  bool ClosedByServer() {
    buffer.consume(buffer.size());
    try {
      return Fill() == 0;
    } catch (const std::exception&) {
      return false;  // reset, or nothing within the timeout
    }
  }
};

std::vector<float> BinaryOutput(const std::string& body, std::optional<size_t> header_length) {
  EXPECT_TRUE(header_length);
  if (!header_length) return {};
  const json header = json::parse(body.substr(0, *header_length));
  EXPECT_EQ(header["outputs"][0]["name"], "y");
  const size_t n = body.size() - *header_length;
  EXPECT_EQ(header["outputs"][0]["parameters"]["binary_data_size"], n);
  std::vector<float> out(n / 4);
  std::memcpy(out.data(), body.data() + *header_length, out.size() * 4);
  return out;
}

TEST_F(HttpTransport, LargeBinaryBodiesRoundTripBitForBit) {
  tools::HttpConnection client({"127.0.0.1", std::to_string(Port())}, 30);
  for (int64_t batch : {1, 4}) {  // 602 KB and 2.4 MB of tensor data, twice each on one keep-alive connection
    for (uint32_t round = 0; round < 2; ++round) {
      const auto values = testing::UniformFloats(static_cast<size_t>(batch * kRow),
                                                 static_cast<uint32_t>(batch) * 10 + round, -1e3f, 1e3f);
      const tools::HttpResponse r = client.Post("/v2/models/ident/infer", BinaryRequest(values, batch));
      ASSERT_EQ(r.status, 200) << r.body.substr(0, 300);
      const auto out = BinaryOutput(r.body, r.header_length);
      ASSERT_EQ(out.size(), values.size());
      EXPECT_EQ(std::memcmp(out.data(), values.data(), values.size() * 4), 0) << "batch " << batch;
    }
  }
}

TEST_F(HttpTransport, LargeJsonBodyRoundTrips) {
  // Integers written as JSON numbers: exact in float and in JSON. About 1 MB of text, JSON answer.
  std::vector<float> values(kRow);
  for (int64_t i = 0; i < kRow; ++i) values[i] = static_cast<float>((i * 7919) % 100003 - 50000);
  const json request = {{"inputs", {{{"name", "x"}, {"datatype", "FP32"}, {"shape", {1, kRow}}, {"data", values}}}}};
  tools::HttpRequestBody body;
  body.body = request.dump();
  ASSERT_GT(body.body.size(), 512u * 1024);
  tools::HttpConnection client({"127.0.0.1", std::to_string(Port())}, 30);
  const tools::HttpResponse r = client.Post("/v2/models/ident/infer", body);
  ASSERT_EQ(r.status, 200) << r.body.substr(0, 300);
  EXPECT_FALSE(r.header_length);
  const json answer = json::parse(r.body);
  EXPECT_EQ(answer["outputs"][0]["shape"], json({1, kRow}));
  EXPECT_EQ(answer["outputs"][0]["data"].get<std::vector<float>>(), values);
}

TEST_F(HttpTransport, PipelinedRequestsOnOneConnectionStayApart) {
  // Two binary requests in one write: the first body ends where the second request's header begins.
  const auto a = testing::UniformFloats(kRow, 1, -1e3f, 1e3f), b = testing::UniformFloats(kRow, 2, -1e3f, 1e3f);
  const auto ra = BinaryRequest(a, 1), rb = BinaryRequest(b, 1);
  Raw raw;
  raw.Send(RawPost(ra.body, ra.header_length) + RawPost(rb.body, rb.header_length));
  for (const auto* want : {&a, &b}) {
    const auto res = raw.Receive();
    ASSERT_EQ(res.result_int(), 200u) << res.body().substr(0, 300);
    const auto h = res.find("Inference-Header-Content-Length");
    ASSERT_NE(h, res.end());
    EXPECT_EQ(BinaryOutput(res.body(), std::stoull(std::string(h->value()))), *want);
  }
}

TEST_F(HttpTransport, ChunkedBodyStillParses) {
  const auto values = testing::UniformFloats(kRow, 3, -1e3f, 1e3f);
  const auto req = BinaryRequest(values, 1);
  std::string chunked;
  for (size_t at = 0; at < req.body.size(); at += 100000) {
    const std::string part = req.body.substr(at, 100000);
    std::ostringstream size;
    size << std::hex << part.size();
    chunked += size.str() + "\r\n" + part + "\r\n";
  }
  chunked += "0\r\n\r\n";
  Raw raw;
  raw.Send("POST /v2/models/ident/infer HTTP/1.1\r\nHost: 127.0.0.1\r\nTransfer-Encoding: chunked\r\n"
           "Inference-Header-Content-Length: " +
           std::to_string(*req.header_length) + "\r\n\r\n" + chunked);
  const auto res = raw.Receive();
  ASSERT_EQ(res.result_int(), 200u) << res.body().substr(0, 300);
  EXPECT_EQ(BinaryOutput(res.body(), std::stoull(std::string(res["Inference-Header-Content-Length"]))), values);
}

TEST_F(HttpTransport, ExpectContinueGetsAnInterimAnswerBeforeTheBody) {
  const auto values = testing::UniformFloats(kRow, 4, -1e3f, 1e3f);
  const auto req = BinaryRequest(values, 1);
  const std::string all = RawPost(req.body, req.header_length, "Expect: 100-continue\r\n");
  const size_t header_end = all.find("\r\n\r\n") + 4;
  Raw raw;
  raw.Send(all.substr(0, header_end));
  const auto interim = raw.Receive();  // before any body byte was sent
  EXPECT_EQ(interim.result_int(), 100u);
  raw.Send(all.substr(header_end));
  const auto res = raw.Receive();
  ASSERT_EQ(res.result_int(), 200u) << res.body().substr(0, 300);
  EXPECT_EQ(BinaryOutput(res.body(), std::stoull(std::string(res["Inference-Header-Content-Length"]))), values);
}

TEST_F(HttpTransport, BodyLimitRefusesTheHeaderBeforeAnyBody) {
  Raw raw;
  // Only the header is sent: the answer must not wait for a body that is over the limit.
  raw.Send("POST /v2/models/ident/infer HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: " +
           std::to_string(kBodyLimit + 1) + "\r\n\r\n");
  const auto res = raw.Receive();
  EXPECT_EQ(res.result_int(), 413u);
  EXPECT_NE(res.body().find("exceeds the limit of " + std::to_string(kBodyLimit) + " bytes"), std::string::npos)
      << res.body();
  EXPECT_FALSE(res.keep_alive());
}

TEST_F(HttpTransport, EmptyAndTruncatedBodiesAreRefused) {
  {
    Raw raw;
    raw.Send(RawPost("", std::nullopt));
    const auto res = raw.Receive();
    EXPECT_EQ(res.result_int(), 400u);
    EXPECT_NE(res.body().find("not valid JSON"), std::string::npos) << res.body();
  }
  {
    // The binary part is one byte short of what the header announces.
    const auto values = testing::UniformFloats(kRow, 5, -1e3f, 1e3f);
    auto req = BinaryRequest(values, 1);
    req.body.pop_back();
    Raw raw;
    raw.Send(RawPost(req.body, req.header_length));
    const auto res = raw.Receive();
    EXPECT_EQ(res.result_int(), 400u);
    EXPECT_NE(res.body().find("binary_data_size 602112 runs past the body (602111 bytes left)"), std::string::npos)
        << res.body();
  }
}


// Invalid UTF-8 in the JSON of a request (in a string, or raw tensor bytes read as JSON when
// Inference-Header-Content-Length is too long) is answered 400 like any bad JSON: the error reply quotes the bad
// bytes, and building it must not throw (nlohmann's dump() does on invalid UTF-8) and drop the answer.
TEST_F(HttpTransport, InvalidUtf8InTheJsonIsA400) {
  const std::string bad_string =
      "{\"inputs\":[{\"name\":\"x\xff\xfe\",\"datatype\":\"FP32\",\"shape\":[1,1],\"data\":[1]}]}";
  std::string header = "{\"inputs\":[{\"name\":\"x\",\"datatype\":\"FP32\",\"shape\":[1," + std::to_string(kRow) +
                       "],\"parameters\":{\"binary_data_size\":" + std::to_string(kRow * 4) + "}}]}";
  std::string binary(kRow * 4, '\0');
  binary[0] = '\xff';  // the first float's bytes: not UTF-8
  binary[1] = '\xc3';
  for (const auto& [body, header_length] :
       {std::pair<std::string, std::optional<size_t>>{bad_string, std::nullopt},
        std::pair<std::string, std::optional<size_t>>{header + binary, header.size() + 4}}) {
    Raw raw;
    raw.Send(RawPost(body, header_length));
    const auto res = raw.Receive();
    EXPECT_EQ(res.result_int(), 400u);
    const json error = json::parse(res.body());  // valid JSON: the bad bytes are replaced
    EXPECT_NE(error["error"].get<std::string>().find("not valid JSON"), std::string::npos) << res.body();
  }
  // In the target: the 404 names it.
  Raw raw;
  raw.Send("GET /v2/m\xff\xfe HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n");
  const auto res = raw.Receive();
  EXPECT_EQ(res.result_int(), 404u) << res.body();
  EXPECT_NE(json::parse(res.body())["error"].get<std::string>().find("no endpoint /v2/m\xef\xbf\xbd"),
            std::string::npos)
      << res.body();
}

// Every request is answered once and leaves the in-flight count: a server whose only requests were bad ones
// drains at once on Stop, with none in flight (the issue saw 103 in flight after 100 of them).
TEST_F(HttpTransport, BadRequestsLeaveNothingInFlight) {
  HttpOptions ho;
  ho.port = 0;
  HttpServer second(ho, *server->router);
  const uint16_t port = second.Start();
  for (int i = 0; i < 20; ++i) {
    Raw raw(port);
    raw.Send(RawPost(i % 2 ? "{\"inputs\":\"\xff\"}" : "{\"inputs\":[]", std::nullopt));
    EXPECT_EQ(raw.Receive().result_int(), 400u);
  }
  const auto started = std::chrono::steady_clock::now();
  EXPECT_EQ(second.Stop(5000), 0);
  EXPECT_LT(std::chrono::steady_clock::now() - started, std::chrono::seconds(4));
}


// A Transfer-Encoding Ferry cannot decode is refused from the header, and the connection closed (RFC 9112 6.1):
// Beast alone reads "gzip" without chunked as a request without a body (or with Content-Length bytes of one),
// and would read the rest as the next request.
TEST_F(HttpTransport, TransferEncodingOtherThanChunkedIsRefused) {
  const std::string head = "POST /v2/models/ident/infer HTTP/1.1\r\nHost: 127.0.0.1\r\n";
  for (const auto& [fields, status, message] :
       {std::tuple<std::string, unsigned, std::string>{"Transfer-Encoding: gzip\r\n", 400, "does not end with chunked"},
        {"Transfer-Encoding: gzip\r\nContent-Length: 5\r\n", 400, "does not end with chunked"},
        {"Transfer-Encoding: gzip, chunked\r\n", 501, "transfer coding 'gzip' is not implemented"}}) {
    Raw raw;
    raw.Send(head + fields + "\r\nhello");
    const auto res = raw.Receive();
    EXPECT_EQ(res.result_int(), status) << fields;
    EXPECT_NE(res.body().find(message), std::string::npos) << fields << res.body();
    EXPECT_FALSE(res.keep_alive()) << fields;
    EXPECT_TRUE(raw.ClosedByServer()) << fields;  // and no second answer (to "hello")
  }
}

// SIGTERM's drain (HttpServer::Stop) answers a request whose bytes had begun to arrive: here the second request
// on a keep-alive connection, half sent when Stop begins and finished after. Before, Stop counted only requests
// read completely, found none, and closed the connection without an answer.
TEST_F(HttpTransport, StopAnswersARequestAlreadyArriving) {
  HttpOptions ho;
  ho.port = 0;
  HttpServer second(ho, *server->router);
  const uint16_t port = second.Start();
  Raw raw(port);
  const auto values = testing::UniformFloats(kRow, 6, -1e3f, 1e3f);
  const auto req = BinaryRequest(values, 1);
  raw.Send(RawPost(req.body, req.header_length));
  const auto first = raw.Receive();
  ASSERT_EQ(first.result_int(), 200u);
  ASSERT_TRUE(first.keep_alive());
  const std::string next = RawPost(req.body, req.header_length);
  raw.Send(next.substr(0, next.size() / 2));
  auto stopped = std::async(std::launch::async, [&] { return second.Stop(10000); });
  std::this_thread::sleep_for(std::chrono::milliseconds(200));
  raw.Send(next.substr(next.size() / 2));
  const auto res = raw.Receive();
  EXPECT_EQ(res.result_int(), 200u);
  EXPECT_FALSE(res.keep_alive());  // the server is stopping: it says so and closes
  EXPECT_EQ(BinaryOutput(res.body(), std::stoull(std::string(res["Inference-Header-Content-Length"]))), values);
  EXPECT_EQ(stopped.get(), 0);
}

// ... while idle keep-alive connections are closed at once: they do not hold the drain.
TEST_F(HttpTransport, StopClosesIdleConnectionsAtOnce) {
  HttpOptions ho;
  ho.port = 0;
  HttpServer second(ho, *server->router);
  const uint16_t port = second.Start();
  Raw idle(port);
  idle.Send("GET /v2/health/live HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n");
  EXPECT_EQ(idle.Receive().result_int(), 200u);
  const auto started = std::chrono::steady_clock::now();
  EXPECT_EQ(second.Stop(10000), 0);
  EXPECT_LT(std::chrono::steady_clock::now() - started, std::chrono::seconds(5));
  EXPECT_TRUE(idle.ClosedByServer());
}

}  // namespace
}  // namespace ferry::server
