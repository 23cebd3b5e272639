// The HTTP/1.1 transport and the KServe v2 REST routes, in memory: the bytes go through Beast's request_parser
// with the server's limits (pipelined requests one after another, as a keep-alive connection delivers them), then
// ToHttpRequest (src/server/http_request.h: the framing, target and header checks http_server.cc makes), then
// Router::Handle against a real InferenceService serving one small model ("fuzz": y = Relu(x) for x FP32
// [-1, 4], z = ids for ids INT64 [-1, 3]; max_batch_size 8; no model control, so runs stay deterministic).
//
// Invariants beyond "no crash": every request gets exactly one reply, within 20 s (a reply that never comes is
// how the invalid-UTF-8 fault of issue 22 showed), and every JSON reply body is valid JSON.
#include <onnx/onnx_pb.h>

#include <boost/beast/core/flat_buffer.hpp>
#include <boost/beast/http/parser.hpp>
#include <boost/beast/http/string_body.hpp>

#include <chrono>
#include <condition_variable>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <mutex>
#include <nlohmann/json.hpp>
#include <sstream>
#include <thread>

#include "fuzz_util.h"
#include "server/http_request.h"
#include "server/http_routes.h"
#include "server/inference_service.h"
#include "server/metrics.h"
#include "server/model_manager.h"

namespace http = boost::beast::http;
namespace fs = std::filesystem;

namespace {

std::string ServedModel() {
  onnx::ModelProto m;
  m.set_ir_version(8);
  m.add_opset_import()->set_version(17);
  onnx::GraphProto* g = m.mutable_graph();
  g->set_name("fuzz");
  auto io = [](onnx::ValueInfoProto* v, const char* name, int elem, int64_t last) {
    v->set_name(name);
    auto* t = v->mutable_type()->mutable_tensor_type();
    t->set_elem_type(elem);
    t->mutable_shape()->add_dim()->set_dim_param("batch");
    t->mutable_shape()->add_dim()->set_dim_value(last);
  };
  io(g->add_input(), "x", onnx::TensorProto::FLOAT, 4);
  io(g->add_input(), "ids", onnx::TensorProto::INT64, 3);
  io(g->add_output(), "y", onnx::TensorProto::FLOAT, 4);
  io(g->add_output(), "z", onnx::TensorProto::INT64, 3);
  auto node = [&](const char* op, const char* in, const char* out) {
    onnx::NodeProto* n = g->add_node();
    n->set_op_type(op);
    n->set_name(out);
    n->add_input(in);
    n->add_output(out);
  };
  node("Relu", "x", "y");
  node("Identity", "ids", "z");
  return m.SerializeAsString();
}

struct Service {
  std::ostringstream log;
  std::shared_ptr<ferry::server::MetricsRegistry> metrics = std::make_shared<ferry::server::MetricsRegistry>();
  std::unique_ptr<ferry::server::ModelManager> manager;
  std::unique_ptr<ferry::server::InferenceService> service;
  std::unique_ptr<ferry::server::Router> router;
  ferry::server::HttpOptions http;

  Service() {
    const fs::path repo = fs::path(ferry::fuzz::ScratchDir()) / "repository";
    fs::create_directories(repo / "fuzz" / "1");
    std::ofstream(repo / "fuzz" / "1" / "model.onnx", std::ios::binary) << ServedModel();
    std::ofstream(repo / "fuzz" / "config.pbtxt") << "max_batch_size: 8\n";
    ferry::server::ManagerOptions options;
    options.repository = repo.string();
    options.threads = 1;
    manager = std::make_unique<ferry::server::ModelManager>(options, metrics, log);
    if (manager->Start() != 0) ferry::fuzz::Fail("the fuzz model did not load: " + log.str());
    for (int i = 0; i < 600 && !manager->AllReady(); ++i) std::this_thread::sleep_for(std::chrono::milliseconds(100));
    if (!manager->AllReady()) ferry::fuzz::Fail("the fuzz model is not ready after 60 s: " + log.str());
    service = std::make_unique<ferry::server::InferenceService>(*manager, metrics, ferry::server::ServiceOptions{});
    router = std::make_unique<ferry::server::Router>(*service);
    http.max_body_bytes = 1 << 20;
  }
};

Service& TheService() {
  static Service* service = new Service();  // never destroyed: instance threads outlive static destruction order
  return *service;
}

void CheckReply(const ferry::server::HttpReply& reply) {
  if (reply.status < 100 || reply.status > 599) ferry::fuzz::Fail("reply status " + std::to_string(reply.status));
  if (reply.content_type != "application/json") return;
  const size_t json_bytes = reply.header_length ? *reply.header_length : reply.body.size();
  if (json_bytes > reply.body.size()) ferry::fuzz::Fail("reply header length past its body");
  if (!nlohmann::json::accept(reply.body.substr(0, json_bytes))) {
    ferry::fuzz::Fail("reply body is not valid JSON: " + reply.body.substr(0, 200));
  }
}

// Hands the request to the Router and waits for its one reply.
void Answer(ferry::server::HttpRequest request) {
  struct Wait {
    std::mutex mu;
    std::condition_variable cv;
    int replies = 0;
    ferry::server::HttpReply reply;
  };
  auto wait = std::make_shared<Wait>();
  auto cancelled = std::make_shared<std::atomic<bool>>(false);
  TheService().router->Handle(request, cancelled, [wait](ferry::server::HttpReply reply) {
    std::lock_guard<std::mutex> lock(wait->mu);
    if (++wait->replies > 1) ferry::fuzz::Fail("a request was answered twice");
    wait->reply = std::move(reply);
    wait->cv.notify_all();
  });
  std::unique_lock<std::mutex> lock(wait->mu);
  if (!wait->cv.wait_for(lock, std::chrono::seconds(20), [&] { return wait->replies > 0; })) {
    ferry::fuzz::Fail("a request got no reply within 20 s: " + request.method + " " + request.target);
  }
  CheckReply(wait->reply);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size == 0) return 0;
  Service& service = TheService();
  boost::beast::flat_buffer buffer;
  auto in = buffer.prepare(size);
  std::memcpy(in.data(), data, size);
  buffer.commit(size);
  // Requests one after another, as on one keep-alive connection; the first framing error ends the connection.
  for (int requests = 0; requests < 16 && buffer.size() > 0; ++requests) {
    http::request_parser<http::string_body> parser;
    parser.body_limit(service.http.max_body_bytes);
    parser.header_limit(64 * 1024);
    parser.eager(true);
    boost::system::error_code ec;
    bool header_checked = false;
    while (!parser.is_done() && buffer.size() > 0) {
      const size_t used = parser.put(buffer.data(), ec);
      buffer.consume(used);
      if (ec == http::error::need_more) {
        ec = {};
        if (used == 0) break;
        continue;
      }
      if (ec) break;
      if (parser.is_header_done() && !header_checked) {
        // As the server does before it reads any body byte.
        header_checked = true;
        if (auto refused = ferry::server::CheckRequestHeader(parser.get().base(), service.http)) {
          CheckReply(*refused);
          return 0;
        }
      }
    }
    if (ec || !parser.is_done()) {
      if (!ec) parser.put_eof(ec);  // the connection closed: a body without a length ends here
      if (ec || !parser.is_done()) return 0;
    }
    auto converted = ferry::server::ToHttpRequest(parser.release(), service.http);
    if (auto* reply = std::get_if<ferry::server::HttpReply>(&converted)) {
      CheckReply(*reply);
      if (reply->close_connection) return 0;
      continue;
    }
    Answer(std::move(std::get<ferry::server::HttpRequest>(converted)));
  }
  return 0;
}
