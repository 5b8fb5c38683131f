#include "support/iggy_harness.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <random>
#include <sstream>
#include <thread>
#include <vector>

#include "iggy/protocol.h"

extern char** environ;

namespace kib::test {
namespace {

namespace fs = std::filesystem;
using namespace std::chrono_literals;

// The child pid, for the signal handler (async-signal-safe access only).
std::atomic<pid_t> g_child{-1};

void on_fatal_signal(int sig) {
  pid_t p = g_child.load();
  if (p > 0) ::kill(p, SIGKILL);
  std::signal(sig, SIG_DFL);
  std::raise(sig);
}

void at_exit() { IggyServer::instance().shutdown(); }

std::string find_binary() {
  if (const char* env = std::getenv("IGGY_SERVER"); env && *env) {
    if (::access(env, X_OK) == 0) return env;
    return {};
  }
  if (const char* path = std::getenv("PATH")) {
    std::stringstream ss(path);
    std::string dir;
    while (std::getline(ss, dir, ':')) {
      if (dir.empty()) continue;
      fs::path p = fs::path(dir) / "iggy-server";
      if (::access(p.c_str(), X_OK) == 0) return p.string();
    }
  }
  if (::access("/usr/local/bin/iggy-server", X_OK) == 0) return "/usr/local/bin/iggy-server";
  return {};
}

// Blocking I/O helpers for the readiness probe.
bool write_all(int fd, const uint8_t* p, size_t n) {
  while (n > 0) {
    ssize_t w = ::send(fd, p, n, MSG_NOSIGNAL);
    if (w <= 0) {
      if (w < 0 && errno == EINTR) continue;
      return false;
    }
    p += w;
    n -= static_cast<size_t>(w);
  }
  return true;
}

bool read_all(int fd, uint8_t* p, size_t n) {
  while (n > 0) {
    ssize_t r = ::recv(fd, p, n, 0);
    if (r <= 0) {
      if (r < 0 && errno == EINTR) continue;
      return false;
    }
    p += r;
    n -= static_cast<size_t>(r);
  }
  return true;
}

std::optional<uint16_t> port_from_runtime_config(const std::string& data_dir) {
  std::ifstream in(data_dir + "/runtime/current_config.toml");
  if (!in) return std::nullopt;
  std::string line;
  bool in_tcp = false;
  while (std::getline(in, line)) {
    if (!line.empty() && line[0] == '[') {
      in_tcp = line.rfind("[tcp]", 0) == 0;
      continue;
    }
    if (!in_tcp || line.rfind("address", 0) != 0) continue;
    auto q1 = line.find('"');
    auto q2 = line.rfind('"');
    if (q1 == std::string::npos || q2 <= q1) continue;
    std::string addr = line.substr(q1 + 1, q2 - q1 - 1);
    auto colon = addr.rfind(':');
    if (colon == std::string::npos) continue;
    int port = std::atoi(addr.c_str() + colon + 1);
    if (port > 0 && port < 65536) return static_cast<uint16_t>(port);
  }
  return std::nullopt;
}

}  // namespace

IggyServer& IggyServer::instance() {
  static IggyServer server;
  return server;
}

bool IggyServer::available() {
  if (!attempted_) {
    attempted_ = true;
    ok_ = first_start();
  }
  return ok_;
}

bool IggyServer::first_start() {
  if (const char* ext = std::getenv("IGGY_ADDRESS"); ext && *ext) {
    std::string a = ext;
    auto colon = a.rfind(':');
    if (colon == std::string::npos) {
      skip_reason_ = "IGGY_ADDRESS must be host:port";
      return false;
    }
    external_ = true;
    host_ = a.substr(0, colon);
    port_ = static_cast<uint16_t>(std::atoi(a.c_str() + colon + 1));
    if (const char* u = std::getenv("IGGY_USERNAME")) username_ = u;
    if (const char* p = std::getenv("IGGY_PASSWORD")) password_ = p;
    std::string why;
    if (!login_works(&why)) {
      skip_reason_ = "cannot log in to IGGY_ADDRESS " + a + ": " + why;
      return false;
    }
    return true;
  }

  binary_ = find_binary();
  if (binary_.empty()) {
    const char* env = std::getenv("IGGY_SERVER");
    skip_reason_ = env && *env ? std::string("no iggy-server (IGGY_SERVER=") + env + " is not executable)"
                               : "no iggy-server (set IGGY_SERVER or put iggy-server on PATH)";
    return false;
  }
  char tmpl[] = "/tmp/kib-iggy-XXXXXX";
  if (!::mkdtemp(tmpl)) {
    skip_reason_ = std::string("mkdtemp failed: ") + std::strerror(errno);
    return false;
  }
  root_dir_ = tmpl;
  data_dir_ = root_dir_ + "/data";
  log_path_ = root_dir_ + "/server.log";

  std::atexit(at_exit);
  for (int sig : {SIGINT, SIGTERM, SIGHUP}) std::signal(sig, on_fatal_signal);

  if (!spawn(/*fresh=*/true, "127.0.0.1:0") || !wait_ready(60s, /*discover_port=*/true)) {
    print_log_tail();
    skip_reason_ = "iggy-server " + binary_ + " did not start (log: " + log_path_ + ")";
    ::kill(pid_, SIGKILL);
    if (pid_ > 0) ::waitpid(pid_, nullptr, 0);
    pid_ = -1;
    g_child = -1;
    return false;
  }
  ::setenv("IGGY_HARNESS_ADDRESS", address().c_str(), 1);
  ::setenv("IGGY_HARNESS_USERNAME", username_.c_str(), 1);
  ::setenv("IGGY_HARNESS_PASSWORD", password_.c_str(), 1);
  return true;
}

bool IggyServer::spawn(bool fresh, const std::string& tcp_address) {
  std::vector<std::string> env_store;
  const std::vector<std::pair<std::string, std::string>> overrides = {
      {"IGGY_ROOT_USERNAME", username_},
      {"IGGY_ROOT_PASSWORD", password_},
      {"IGGY_SYSTEM_PATH", data_dir_},
      {"IGGY_TCP_ADDRESS", tcp_address},
      {"IGGY_HTTP_ENABLED", "false"},
      {"IGGY_QUIC_ENABLED", "false"},
      {"IGGY_WEBSOCKET_ENABLED", "false"},
      {"IGGY_SYSTEM_SHARDING_CPU_ALLOCATION", "1"},
      {"IGGY_CONFIG_PATH", "/nonexistent"},
      {"IGGY_ENV_PATH", "/nonexistent"},
  };
  for (char** e = environ; *e; ++e) {
    std::string kv = *e;
    bool overridden = false;
    for (const auto& [k, v] : overrides)
      if (kv.rfind(k + "=", 0) == 0) overridden = true;
    if (!overridden) env_store.push_back(std::move(kv));
  }
  for (const auto& [k, v] : overrides) env_store.push_back(k + "=" + v);
  std::vector<char*> envp;
  for (auto& s : env_store) envp.push_back(s.data());
  envp.push_back(nullptr);

  std::string bin = binary_;
  std::string fresh_flag = "--fresh";
  std::vector<char*> argv = {bin.data()};
  if (fresh) argv.push_back(fresh_flag.data());
  argv.push_back(nullptr);

  int log_fd = ::open(log_path_.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
  if (log_fd < 0) return false;
  const pid_t parent = ::getpid();
  pid_t pid = ::fork();
  if (pid < 0) {
    ::close(log_fd);
    return false;
  }
  if (pid == 0) {
    ::prctl(PR_SET_PDEATHSIG, SIGKILL);
    if (::getppid() != parent) ::_exit(127);
    ::dup2(log_fd, STDOUT_FILENO);
    ::dup2(log_fd, STDERR_FILENO);
    int devnull = ::open("/dev/null", O_RDONLY);
    if (devnull >= 0) ::dup2(devnull, STDIN_FILENO);
    if (::chdir(root_dir_.c_str()) != 0) ::_exit(127);
    ::execve(bin.c_str(), argv.data(), envp.data());
    ::_exit(127);
  }
  ::close(log_fd);
  pid_ = pid;
  g_child = pid;
  return true;
}

bool IggyServer::wait_ready(std::chrono::milliseconds limit, bool discover_port) {
  auto deadline = std::chrono::steady_clock::now() + limit;
  std::string why;
  while (std::chrono::steady_clock::now() < deadline) {
    int status = 0;
    if (pid_ > 0 && ::waitpid(pid_, &status, WNOHANG) == pid_) {
      std::cerr << "iggy-server exited during startup (status " << status << ")\n";
      pid_ = -1;
      g_child = -1;
      return false;
    }
    if (discover_port) {
      if (auto p = port_from_runtime_config(data_dir_)) port_ = *p;
    }
    if (port_ != 0 && login_works(&why)) return true;
    std::this_thread::sleep_for(50ms);
  }
  std::cerr << "iggy-server not ready after " << limit.count() << " ms: " << why << "\n";
  return false;
}

bool IggyServer::login_works(std::string* why) const {
  auto fail = [&](const std::string& w) {
    if (why) *why = w;
    return false;
  };
  int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return fail("socket");
  timeval tv{2, 0};
  ::setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
  ::setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof tv);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_port = htons(port_);
  if (::inet_pton(AF_INET, host_.c_str(), &addr.sin_addr) != 1) {
    ::close(fd);
    return fail("host is not an IPv4 literal: " + host_);
  }
  if (::connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0) {
    std::string e = std::strerror(errno);
    ::close(fd);
    return fail("connect: " + e);
  }
  auto frame = kib::iggy::wire::encode_login_password(username_, password_, {"kib-test-harness", "0.1"});
  if (!frame) {
    ::close(fd);
    return fail(frame.error().message);
  }
  std::mt19937_64 rng(std::random_device{}());
  kib::iggy::U128 client{rng() | 1, rng()};
  kib::iggy::wire::stamp_request(frame->bytes, client, 0, 0);
  uint8_t header[kib::iggy::wire::kHeaderSize];
  if (!write_all(fd, frame->bytes.data(), frame->bytes.size()) || !read_all(fd, header, sizeof header)) {
    ::close(fd);
    return fail("no login reply");
  }
  auto h = kib::iggy::wire::decode_frame_header(kib::ByteSpan(header, sizeof header));
  if (!h) {
    ::close(fd);
    return fail(h.error().message);
  }
  kib::Bytes body(h->body_size());
  if (!body.empty() && !read_all(fd, body.data(), body.size())) {
    ::close(fd);
    return fail("truncated login reply");
  }
  ::close(fd);
  auto payload = kib::iggy::wire::reply_payload(*h, body);
  if (!payload) return fail(payload.error().message);
  auto info = kib::iggy::wire::decode_login(*payload);
  if (!info) return fail(info.error().message);
  return true;
}

bool IggyServer::running() {
  if (pid_ <= 0) return false;
  int status = 0;
  if (::waitpid(pid_, &status, WNOHANG) == pid_) {
    std::cerr << "iggy-server (pid " << pid_ << ") exited on its own, status " << status << "\n";
    pid_ = -1;
    g_child = -1;
    return false;
  }
  return true;
}

bool IggyServer::kill(int sig) {
  if (external_ || pid_ <= 0) return false;
  ::kill(pid_, sig);
  int status = 0;
  auto deadline = std::chrono::steady_clock::now() + 30s;
  while (::waitpid(pid_, &status, WNOHANG) == 0) {
    if (std::chrono::steady_clock::now() > deadline) {
      ::kill(pid_, SIGKILL);
      ::waitpid(pid_, &status, 0);
      break;
    }
    std::this_thread::sleep_for(10ms);
  }
  pid_ = -1;
  g_child = -1;
  return true;
}

bool IggyServer::start() {
  if (external_ || !ok_) return false;
  if (running()) return true;
  // The listener may need a moment to become bindable again after a kill; retry a few times.
  for (int attempt = 0; attempt < 5; ++attempt) {
    if (!spawn(/*fresh=*/false, address())) return false;
    if (wait_ready(60s, /*discover_port=*/false)) return true;
    if (pid_ > 0) kill(SIGKILL);
    std::this_thread::sleep_for(500ms);
  }
  print_log_tail();
  return false;
}

void IggyServer::shutdown() {
  if (pid_ > 0) kill(SIGTERM);
  if (!root_dir_.empty() && !std::getenv("IGGY_HARNESS_KEEP")) {
    std::error_code ec;
    fs::remove_all(root_dir_, ec);
    root_dir_.clear();
  }
}

void IggyServer::print_log_tail() const {
  std::ifstream in(log_path_);
  std::vector<std::string> lines;
  std::string line;
  while (std::getline(in, line)) lines.push_back(line);
  size_t from = lines.size() > 40 ? lines.size() - 40 : 0;
  std::cerr << "---- tail of " << log_path_ << " ----\n";
  for (size_t i = from; i < lines.size(); ++i) std::cerr << lines[i] << "\n";
  std::cerr << "----\n";
}

boost::test_tools::assertion_result iggy_available(boost::unit_test::test_unit_id) {
  static bool reported = false;
  IggyServer& s = IggyServer::instance();
  if (s.available()) return true;
  if (!reported) {
    reported = true;
    std::cout << "SKIPPED: " << s.skip_reason() << std::endl;
  }
  boost::test_tools::assertion_result r(false);
  r.message() << s.skip_reason();
  return r;
}

boost::test_tools::assertion_result iggy_restartable(boost::unit_test::test_unit_id id) {
  auto r = iggy_available(id);
  if (!r) return r;
  if (IggyServer::instance().external()) {
    boost::test_tools::assertion_result no(false);
    no.message() << "external iggy-server (IGGY_ADDRESS) cannot be restarted";
    return no;
  }
  return true;
}

kib::iggy::PoolConfig harness_pool_config(size_t connections, std::optional<kib::iggy::Credentials> credentials) {
  IggyServer& s = IggyServer::instance();
  kib::iggy::PoolConfig cfg;
  cfg.connections = connections;
  cfg.connection.host = s.host();
  cfg.connection.port = s.port();
  cfg.connection.credentials =
      credentials ? *credentials : kib::iggy::Credentials::password_login(s.username(), s.password());
  cfg.connection.client_version = {"kib-tests", "0.1"};
  cfg.connection.connect_timeout = 5s;
  cfg.connection.request_timeout = 20s;
  cfg.connection.reconnect_backoff_initial = 20ms;
  cfg.connection.reconnect_backoff_max = 500ms;
  cfg.queue_timeout = 30s;
  return cfg;
}

std::string unique_name(std::string_view prefix) {
  static int counter = 0;
  return std::string(prefix) + "-" + std::to_string(::getpid()) + "-" + std::to_string(++counter);
}

IggyTestContext::IggyTestContext(kib::iggy::PoolConfig config)
    : pool_((uv_loop_init(&loop_), std::make_unique<kib::iggy::IggyPool>(&loop_, std::move(config)))),
      client_(*pool_) {}

IggyTestContext::~IggyTestContext() {
  bool closed = false;
  pool_->close([&closed] { closed = true; });
  run_until([&] { return closed; }, 10s);
  pool_.reset();
  uv_run(&loop_, UV_RUN_DEFAULT);  // let libuv free the closed handles
  if (uv_loop_close(&loop_) != 0) std::cerr << "IggyTestContext: loop still has open handles\n";
}

bool IggyTestContext::run_until(const std::function<bool()>& done, std::chrono::milliseconds limit) {
  if (done()) return true;
  bool expired = false;
  uv_timer_t guard;
  uv_timer_init(&loop_, &guard);
  guard.data = &expired;
  uv_timer_start(
      &guard, [](uv_timer_t* t) { *static_cast<bool*>(t->data) = true; }, static_cast<uint64_t>(limit.count()), 0);
  while (!done() && !expired) uv_run(&loop_, UV_RUN_ONCE);
  uv_timer_stop(&guard);
  bool closed_guard = false;
  guard.data = &closed_guard;
  uv_close(reinterpret_cast<uv_handle_t*>(&guard), [](uv_handle_t* h) { *static_cast<bool*>(h->data) = true; });
  while (!closed_guard) uv_run(&loop_, UV_RUN_ONCE);
  return done();
}

}  // namespace kib::test
