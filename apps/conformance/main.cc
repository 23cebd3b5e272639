// ferry-conformance: runs ONNX backend test cases, each in a forked child with a time limit, so a crash or a
// hang in one case never stops the run. Ends with "N passed, M failed"; writes per-case JSON; checks the
// expected-failure list (a ratchet: new failures and stale entries both fail).
#include <poll.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <fstream>
#include <iomanip>
#include <iostream>
#include <map>
#include <nlohmann/json.hpp>
#include <regex>
#include <set>
#include <thread>

#include "backends/backend.h"
#include "ferry/error.h"
#include "schemas/schema.h"
#include "tools/conformance_report.h"
#include "tools/onnx_test_case.h"

#if defined(__SANITIZE_ADDRESS__)
#include <sanitizer/lsan_interface.h>
#endif

namespace {

using ferry::tools::CaseResult;
using ferry::tools::OnnxTestCase;

std::vector<std::string> DefaultDataDirs() {
  return {std::string(FERRY_SOURCE_DIR) + "/../shared/onnx-tests/node",
          "/usr/share/libonnx-testdata/data/pytorch-converted", "/usr/share/libonnx-testdata/data/pytorch-operator",
          "/usr/share/libonnx-testdata/data/simple"};
}

struct Running {
  pid_t pid;
  int fd;
  size_t index;
  std::chrono::steady_clock::time_point start;
  std::string output;
};

// Child: run the case, write "pass" or "fail\t<reason>" to fd, exit.
[[noreturn]] void RunChild(const OnnxTestCase& c, const std::vector<std::string>& backends, int threads, int fd) {
  std::string msg;
  try {
    std::string why = ferry::tools::RunOnnxTestCase(c, backends, threads, {});
    msg = why.empty() ? "pass" : "fail\t" + why;
  } catch (const ferry::Error& e) {
    msg = std::string("fail\t") + ferry::ErrorCategoryName(e.category()) + ": " + e.what();
  } catch (const std::exception& e) {
    msg = std::string("fail\tuncaught exception: ") + e.what();
  }
#if defined(__SANITIZE_ADDRESS__)
  // _exit() skips LeakSanitizer's at-exit check: run it here, so a leak fails the case that caused it.
  if (__lsan_do_recoverable_leak_check() != 0) msg = "fail\tLeakSanitizer: memory leaked (report on stderr)";
#endif
  for (char& ch : msg) {
    if (ch == '\n') ch = ' ';
  }
  size_t off = 0;
  while (off < msg.size()) {
    ssize_t n = write(fd, msg.data() + off, msg.size() - off);
    if (n <= 0) break;
    off += static_cast<size_t>(n);
  }
  _exit(0);
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"Run ONNX backend test cases on Ferry"};
  std::vector<std::string> data_dirs;
  std::string backend_list = "ref", json_path, filter, expected_path, write_expected, markdown_path;
  double timeout_s = 60;
  int jobs = static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  int threads = 1;
  bool verbose = false;
  app.add_option("--data", data_dirs, "folder of test cases (repeatable; default: the ONNX node tests and libonnx-testdata)");
  app.add_option("--backend", backend_list, "backends in priority order, comma-separated");
  app.add_option("--json", json_path, "write per-case results to this JSON file");
  app.add_option("--filter", filter, "run only cases whose id (category/name) matches this regex (search)");
  app.add_option("--timeout", timeout_s, "seconds allowed per case");
  app.add_option("-j,--jobs", jobs, "cases run at once");
  app.add_option("--threads", threads, "intra-op threads per case");
  app.add_option("--expected-failures", expected_path, "fail when a case outside this list fails or a listed case passes");
  app.add_option("--write-expected-failures", write_expected, "write the failing cases of this run as a new list");
  app.add_option("--markdown", markdown_path, "write the conformance summary (docs/conformance.md) here");
  app.add_flag("-v,--verbose", verbose, "print passing cases too");
  CLI11_PARSE(app, argc, argv);
  if (data_dirs.empty()) data_dirs = DefaultDataDirs();
  std::vector<std::string> backends;
  {
    std::stringstream ss(backend_list);
    std::string b;
    while (std::getline(ss, b, ',')) {
      if (!b.empty()) backends.push_back(b);
    }
  }
  for (const auto& b : backends) {
    if (!ferry::FindBackend(b)) {
      std::cerr << "ferry-conformance: unknown backend '" << b << "'\n";
      return 2;
    }
  }
  std::optional<std::regex> re;
  try {
    if (!filter.empty()) re.emplace(filter);
  } catch (const std::regex_error& e) {
    std::cerr << "ferry-conformance: bad --filter regex: " << e.what() << "\n";
    return 2;
  }
  std::vector<OnnxTestCase> cases;
  for (const auto& dir : data_dirs) {
    auto found = ferry::tools::ListOnnxTestCases(dir);
    if (found.empty()) std::cerr << "ferry-conformance: warning: no test cases in '" << dir << "'\n";
    for (auto& c : found) {
      if (!re || std::regex_search(c.id(), *re)) cases.push_back(std::move(c));
    }
  }
  // Build shared state once, before forking, so children do not redo it.
  (void)ferry::schemas::SchemaRegistry::Get();
  signal(SIGPIPE, SIG_IGN);

  const auto run_started = std::chrono::steady_clock::now();
  std::vector<CaseResult> results(cases.size());
  std::vector<Running> running;
  size_t next = 0;
  auto start_case = [&](size_t i) {
    int fds[2];
    if (pipe(fds) != 0) {
      results[i] = {cases[i], "fail", "runner: pipe() failed", 0, {}};
      return;
    }
    std::cout.flush();
    pid_t pid = fork();
    if (pid == 0) {
      close(fds[0]);
      RunChild(cases[i], backends, threads, fds[1]);
    }
    close(fds[1]);
    if (pid < 0) {
      close(fds[0]);
      results[i] = {cases[i], "fail", "runner: fork() failed", 0, {}};
      return;
    }
    running.push_back({pid, fds[0], i, std::chrono::steady_clock::now(), {}});
  };
  auto finish = [&](Running& r, bool timed_out) {
    double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - r.start).count();
    int status = 0;
    if (timed_out) kill(r.pid, SIGKILL);
    waitpid(r.pid, &status, 0);
    close(r.fd);
    CaseResult& res = results[r.index];
    res.test = cases[r.index];
    res.seconds = secs;
    if (timed_out) {
      res.status = "fail";
      res.reason = "timeout after " + std::to_string(static_cast<int>(timeout_s)) + " s";
    } else if (WIFSIGNALED(status)) {
      res.status = "fail";
      res.reason = std::string("crash: ") + strsignal(WTERMSIG(status));
    } else if (r.output.rfind("pass", 0) == 0) {
      res.status = "pass";
    } else if (r.output.rfind("fail\t", 0) == 0) {
      res.status = "fail";
      res.reason = r.output.substr(5);
    } else {
      res.status = "fail";
      res.reason = "crash: the case exited without a result";
    }
    if (res.status != "pass" || verbose) {
      std::cout << (res.status == "pass" ? "PASS " : "FAIL ") << res.test.id()
                << (res.reason.empty() ? "" : ": " + res.reason.substr(0, 600)) << "\n";
    }
  };
  while (next < cases.size() || !running.empty()) {
    while (next < cases.size() && static_cast<int>(running.size()) < std::max(1, jobs)) start_case(next++);
    std::vector<pollfd> fds;
    for (const auto& r : running) fds.push_back({r.fd, POLLIN, 0});
    poll(fds.data(), fds.size(), 100);
    auto now = std::chrono::steady_clock::now();
    for (size_t k = running.size(); k-- > 0;) {
      Running& r = running[k];
      bool done = false;
      if (fds[k].revents & (POLLIN | POLLHUP | POLLERR)) {
        char buf[4096];
        ssize_t n = read(r.fd, buf, sizeof buf);
        if (n > 0) r.output.append(buf, static_cast<size_t>(n));
        else done = true;
      }
      bool timed_out = !done && std::chrono::duration<double>(now - r.start).count() > timeout_s;
      if (done || timed_out) {
        finish(r, timed_out);
        running.erase(running.begin() + static_cast<std::ptrdiff_t>(k));
      }
    }
  }
  for (size_t i = 0; i < cases.size(); ++i) {
    auto model = ferry::tools::ReadOnnxTestCaseModel(cases[i]);
    results[i].ops = std::move(model.ops);
    results[i].opset = model.opset;
  }

  int passed = 0, failed = 0;
  for (const auto& r : results) (r.status == "pass" ? passed : failed)++;
  try {
    if (!json_path.empty()) ferry::tools::WriteConformanceJson(json_path, backend_list, results);
    if (!markdown_path.empty()) {
      std::map<std::string, std::string> reasons;
      if (!expected_path.empty()) reasons = ferry::tools::ReadExpectedFailures(expected_path);
      ferry::tools::WriteConformanceMarkdown(markdown_path, backend_list, results, reasons);
    }
    if (!write_expected.empty()) ferry::tools::WriteExpectedFailures(write_expected, backend_list, results);
  } catch (const ferry::Error& e) {
    std::cerr << "ferry-conformance: " << e.what() << "\n";
    return 1;
  }
  int rc = 0;
  if (!expected_path.empty()) {
    try {
      auto verdict = ferry::tools::CheckExpectedFailures(expected_path, results);
      for (const auto& s : verdict.regressions) std::cout << "REGRESSION " << s << "\n";
      for (const auto& s : verdict.stale) std::cout << "STALE (now passes; remove from the list) " << s << "\n";
      if (!verdict.regressions.empty() || !verdict.stale.empty()) {
        std::cout << verdict.regressions.size() << " regression(s), " << verdict.stale.size()
                  << " stale expected failure(s) against " << expected_path << "\n";
        rc = 1;
      }
    } catch (const ferry::Error& e) {
      std::cerr << "ferry-conformance: " << e.what() << "\n";
      return 1;
    }
  }
  // Where the time went: the floor is the whole suite in minutes on 2 cores and no case over 2 s.
  std::vector<const CaseResult*> slowest;
  for (const auto& r : results) slowest.push_back(&r);
  std::sort(slowest.begin(), slowest.end(), [](const auto* a, const auto* b) { return a->seconds > b->seconds; });
  slowest.resize(std::min<size_t>(slowest.size(), 5));
  std::cout << "wall time " << std::fixed << std::setprecision(1)
            << std::chrono::duration<double>(std::chrono::steady_clock::now() - run_started).count() << " s with "
            << jobs << " job(s); slowest cases:";
  for (const auto* r : slowest) std::cout << " " << r->test.id() << " " << std::setprecision(2) << r->seconds << " s;";
  std::cout << "\n" << passed << " passed, " << failed << " failed\n";
  return rc;
}
