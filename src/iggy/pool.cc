#include "iggy/pool.h"

#include <algorithm>

#include <fmt/format.h>

#include "common/guard.h"
#include "iggy/errors.h"

namespace kib::iggy {

IggyPool::IggyPool(uv_loop_t* loop, PoolConfig config)
    : loop_(loop), config_(std::move(config)), tasks_(loop), queue_timer_(loop) {
  counters_.connections = std::max<size_t>(1, config_.connections);
  for (size_t i = 0; i < counters_.connections; ++i) {
    IggyConnection::Listener l;
    l.on_available = [this] { schedule_dispatch(); };
    l.on_login_failed = [this](const Error& e) { on_login_failed(e); };
    l.on_state = [this](ConnectionState s) {
      if (s == ConnectionState::kReady) login_error_.reset();
    };
    connections_.push_back(std::make_unique<IggyConnection>(loop_, config_.connection, std::move(l)));
  }
}

IggyPool::~IggyPool() = default;

void IggyPool::start() {
  if (started_ || closed_) return;
  started_ = true;
  for (auto& c : connections_) c->start();
}

bool IggyPool::any_connected() const {
  return std::any_of(connections_.begin(), connections_.end(),
                     [](const auto& c) { return c->state() == ConnectionState::kReady; });
}

void IggyPool::submit(wire::RequestFrame frame, ReplyCallback done, int affinity) {
  ++counters_.submitted;
  auto fail_later = [this, &done](Error e) {
    tasks_.post([this, done = std::move(done), e = std::move(e)]() mutable { finish(done, std::move(e)); });
  };
  if (closed_) return fail_later(transport_error(TransportCode::kClosed, "Iggy pool is closed"));
  if (affinity >= static_cast<int>(connections_.size()))
    return fail_later(invalid_argument(fmt::format("connection {} does not exist (pool of {})", affinity,
                                                   connections_.size())));
  start();
  if (login_error_ && !any_connected()) return fail_later(*login_error_);
  if (queue_.size() >= config_.max_queue)
    return fail_later(transport_error(TransportCode::kQueueTimeout,
                                      fmt::format("request queue full ({} requests)", config_.max_queue)));
  auto req = std::make_unique<PendingRequest>();
  req->frame = std::move(frame);
  req->done = std::move(done);
  req->affinity = affinity;
  req->deadline_ms = uv_now(loop_) + static_cast<uint64_t>(std::max<int64_t>(0, config_.queue_timeout.count()));
  queue_.push_back(std::move(req));
  arm_queue_timer();
  schedule_dispatch();
}

void IggyPool::schedule_dispatch() {
  if (dispatch_scheduled_ || closed_) return;
  dispatch_scheduled_ = true;
  tasks_.post([this] { dispatch(); });
}

void IggyPool::dispatch() {
  dispatch_scheduled_ = false;
  const size_t n = connections_.size();
  const size_t first = next_connection_;
  for (size_t k = 0; k < n && !queue_.empty() && !closed_; ++k) {
    const size_t i = (first + k) % n;
    IggyConnection& c = *connections_[i];
    if (!c.available()) continue;
    auto it = std::find_if(queue_.begin(), queue_.end(),
                           [i](const auto& r) { return r->affinity < 0 || static_cast<size_t>(r->affinity) == i; });
    if (it == queue_.end()) continue;
    std::unique_ptr<PendingRequest> req = std::move(*it);
    queue_.erase(it);
    req->done = [this, user = std::move(req->done)](Result<Reply> r) mutable { finish(user, std::move(r)); };
    next_connection_ = (i + 1) % n;
    c.send(std::move(req));
  }
}

void IggyPool::finish(ReplyCallback& done, Result<Reply> r) {
  if (r.ok()) {
    ++counters_.completed_ok;
  } else {
    ++counters_.failed;
    if (is_transport(r.error())) ++counters_.transport_failures;
  }
  // The one place every pool completion passes: a callback that throws fails only itself (the
  // Kafka request it served is closed when its Responder is dropped), never the pool.
  if (done) guard::run(guard::Boundary::kIggyCompletion, "Iggy reply", [&] { done(std::move(r)); });
}

void IggyPool::on_login_failed(const Error& e) {
  if (is_transport(e)) return;
  login_error_ = e;
  if (any_connected()) return;  // an older session may still serve the queue
  std::deque<std::unique_ptr<PendingRequest>> failed;
  failed.swap(queue_);
  queue_timer_.stop();
  for (auto& r : failed) finish(r->done, e);
}

void IggyPool::arm_queue_timer() {
  if (queue_.empty() || queue_timer_.active() || closed_) return;
  const uint64_t now = uv_now(loop_);
  const uint64_t deadline = queue_.front()->deadline_ms;
  queue_timer_.start(std::chrono::milliseconds(deadline > now ? deadline - now : 0), [this] { expire_queued(); });
}

void IggyPool::expire_queued() {
  const uint64_t now = uv_now(loop_);
  std::vector<std::unique_ptr<PendingRequest>> expired;
  while (!queue_.empty() && queue_.front()->deadline_ms <= now) {
    expired.push_back(std::move(queue_.front()));
    queue_.pop_front();
  }
  arm_queue_timer();
  for (auto& r : expired)
    finish(r->done, transport_error(TransportCode::kQueueTimeout,
                                    fmt::format("no Iggy connection available within {} ms ({})",
                                                config_.queue_timeout.count(), wire::command_name(r->frame.code))));
}

void IggyPool::close(std::function<void()> done) {
  if (closed_) {
    if (done) tasks_.post(std::move(done));
    return;
  }
  closed_ = true;
  queue_timer_.stop();
  std::deque<std::unique_ptr<PendingRequest>> pending;
  pending.swap(queue_);
  for (auto& r : pending) {
    auto shared = std::shared_ptr<PendingRequest>(std::move(r));
    tasks_.post([this, shared] { finish(shared->done, transport_error(TransportCode::kClosed, "Iggy pool closed")); });
  }
  auto remaining = std::make_shared<size_t>(connections_.size());
  auto on_done = std::make_shared<std::function<void()>>(std::move(done));
  for (auto& c : connections_) {
    c->close([this, remaining, on_done] {
      if (--*remaining == 0 && *on_done) tasks_.post(std::move(*on_done));
    });
  }
}

PoolStats IggyPool::stats() const {
  PoolStats s = counters_;
  s.connected = 0;
  s.busy = 0;
  s.reconnects = 0;
  for (const auto& c : connections_) {
    if (c->state() == ConnectionState::kReady) ++s.connected;
    if (c->busy()) ++s.busy;
    s.reconnects += c->reconnects();
  }
  s.queued = queue_.size();
  s.login_refused = login_error_.has_value();
  return s;
}

// ---- IggyIdentityPools ------------------------------------------------------------------------

IggyIdentityPools::IggyIdentityPools(uv_loop_t* loop, PoolConfig base)
    : loop_(loop), base_(std::move(base)), tasks_(loop) {}

IggyIdentityPools::~IggyIdentityPools() = default;

IggyPool& IggyIdentityPools::pool_for(const Credentials& credentials, size_t connections) {
  const std::string key = credentials.identity_key();
  auto it = pools_.find(key);
  if (it != pools_.end()) return *it->second;
  PoolConfig cfg = base_;
  cfg.connection.credentials = credentials;
  if (connections > 0) cfg.connections = connections;
  auto [pos, inserted] = pools_.emplace(key, std::make_unique<IggyPool>(loop_, std::move(cfg)));
  (void)inserted;
  return *pos->second;
}

void IggyIdentityPools::release(const Credentials& credentials, std::function<void()> done) {
  auto it = pools_.find(credentials.identity_key());
  if (it == pools_.end()) {
    if (done) tasks_.post(std::move(done));
    return;
  }
  IggyPool* p = it->second.get();
  retired_.push_back(std::move(it->second));
  pools_.erase(it);
  p->close(std::move(done));
}

void IggyIdentityPools::close(std::function<void()> done) {
  std::vector<IggyPool*> all;
  for (auto& [k, p] : pools_) all.push_back(p.get());
  for (auto& p : retired_) all.push_back(p.get());
  if (all.empty()) {
    if (done) tasks_.post(std::move(done));
    return;
  }
  auto remaining = std::make_shared<size_t>(all.size());
  auto on_done = std::make_shared<std::function<void()>>(std::move(done));
  for (IggyPool* p : all) {
    p->close([this, remaining, on_done] {
      if (--*remaining == 0 && *on_done) tasks_.post(std::move(*on_done));
    });
  }
}

std::vector<std::pair<std::string, PoolStats>> IggyIdentityPools::stats() const {
  std::vector<std::pair<std::string, PoolStats>> out;
  for (const auto& [k, p] : pools_) out.emplace_back(p->config().connection.credentials.display_name(), p->stats());
  return out;
}

}  // namespace kib::iggy
