#include "iggy/pool.h"

#include <algorithm>

#include <fmt/format.h>

#include "common/guard.h"
#include "iggy/errors.h"
#include "uvx/work_owner.h"

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
  auto req = std::make_unique<PendingRequest>();
  req->frame = std::move(frame);
  enqueue(std::move(req), std::move(done), affinity);
}

void IggyPool::submit_encoded(FrameEncoder encode, ReplyCallback done, int affinity) {
  auto req = std::make_unique<PendingRequest>();
  req->encode = std::move(encode);
  enqueue(std::move(req), std::move(done), affinity);
}

ServerProfile IggyPool::server_profile() const {
  const ServerProfile* best = nullptr;
  for (const auto& c : connections_) {
    if (c->server_profile().generation == ServerGeneration::kUnknown) continue;
    if (c->state() == ConnectionState::kReady) return c->server_profile();
    if (!best) best = &c->server_profile();
  }
  return best ? *best : ServerProfile{};
}

void IggyPool::enqueue(std::unique_ptr<PendingRequest> req, ReplyCallback done, int affinity) {
  ++counters_.submitted;
  const uv::WorkOwner owner = uv::current_owner();
  auto fail_later = [this, &done, owner](Error e) {
    tasks_.post([this, done = std::move(done), e = std::move(e), owner]() mutable {
      finish(owner.id, done, std::move(e));
    });
  };
  if (closed_) return fail_later(transport_error(TransportCode::kClosed, "Iggy pool is closed"));
  if (affinity >= static_cast<int>(connections_.size()))
    return fail_later(invalid_argument(fmt::format("connection {} does not exist (pool of {})", affinity,
                                                   connections_.size())));
  start();
  if (login_error_ && !any_connected()) return fail_later(*login_error_);
  if (queued_ >= config_.max_queue)
    return fail_later(transport_error(TransportCode::kQueueTimeout,
                                      fmt::format("request queue full ({} requests)", config_.max_queue)));
  auto lane = lanes_.find(owner.id);
  if (owner.id != 0 && config_.max_queue_per_owner > 0 && lane != lanes_.end() &&
      lane->second.size() >= config_.max_queue_per_owner) {
    ++counters_.owner_queue_full;
    return fail_later(transport_error(
        TransportCode::kQueueTimeout,
        fmt::format("this client's share of the Iggy request queue is full ({} requests)", config_.max_queue_per_owner)));
  }
  req->done = std::move(done);
  req->affinity = affinity;
  req->deadline_ms = uv_now(loop_) + static_cast<uint64_t>(std::max<int64_t>(0, config_.queue_timeout.count()));
  lanes_[owner.id].push_back(Queued{std::move(req), owner.id, owner.cancellable});
  ++queued_;
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
  for (size_t k = 0; k < n && queued_ > 0 && !closed_; ++k) {
    const size_t i = (first + k) % n;
    IggyConnection& c = *connections_[i];
    if (!c.available()) continue;
    // The next owner, round-robin from next_owner_, with a request this connection may serve.
    auto eligible = [i](const Queued& q) {
      return q.req->affinity < 0 || static_cast<size_t>(q.req->affinity) == i;
    };
    auto lane = lanes_.lower_bound(next_owner_);
    std::deque<Queued>::iterator it;
    bool found = false;
    for (size_t scanned = 0; scanned < lanes_.size() && !found; ++scanned, ++lane) {
      if (lane == lanes_.end()) lane = lanes_.begin();
      it = std::find_if(lane->second.begin(), lane->second.end(), eligible);
      found = it != lane->second.end();
      if (found) break;
    }
    if (!found) continue;
    Queued q = std::move(*it);
    lane->second.erase(it);
    --queued_;
    next_owner_ = q.owner + 1;
    if (lane->second.empty()) lanes_.erase(lane);
    std::unique_ptr<PendingRequest> req = std::move(q.req);
    req->done = [this, owner = q.owner, user = std::move(req->done)](Result<Reply> r) mutable {
      finish(owner, user, std::move(r));
    };
    next_connection_ = (i + 1) % n;
    c.send(std::move(req));
  }
}

void IggyPool::finish(uint64_t owner, ReplyCallback& done, Result<Reply> r) {
  if (r.ok()) {
    ++counters_.completed_ok;
  } else {
    ++counters_.failed;
    if (is_transport(r.error())) ++counters_.transport_failures;
  }
  // What the reply's callback starts is still done for the request's owner (uvx/work_owner.h). This is
  // the one place every pool completion passes: a callback that throws fails only itself (the
  // Kafka request it served is closed when its Responder is dropped), never the pool.
  uv::OwnerScope scope(uv::WorkOwner{owner, false});
  if (done) guard::run(guard::Boundary::kIggyCompletion, "Iggy reply", [&] { done(std::move(r)); });
}

std::deque<IggyPool::Queued> IggyPool::take_all() {
  std::deque<Queued> all;
  for (auto& [owner, lane] : lanes_)
    for (auto& q : lane) all.push_back(std::move(q));
  lanes_.clear();
  queued_ = 0;
  return all;
}

void IggyPool::cancel_owner(uint64_t owner) {
  if (owner == 0) return;
  auto lane = lanes_.find(owner);
  if (lane == lanes_.end()) return;
  std::vector<std::shared_ptr<PendingRequest>> dropped;
  auto& q = lane->second;
  for (auto it = q.begin(); it != q.end();) {
    if (it->cancellable) {
      dropped.push_back(std::shared_ptr<PendingRequest>(std::move(it->req)));
      it = q.erase(it);
      --queued_;
    } else {
      ++it;
    }
  }
  if (q.empty()) lanes_.erase(lane);
  counters_.cancelled += dropped.size();
  for (auto& r : dropped)
    tasks_.post([this, r, owner] {
      finish(owner, r->done, transport_error(TransportCode::kClosed, "cancelled: its Kafka connection closed"));
    });
}

void IggyPool::on_login_failed(const Error& e) {
  if (is_transport(e)) return;
  login_error_ = e;
  if (any_connected()) return;  // an older session may still serve the queue
  std::deque<Queued> failed = take_all();
  queue_timer_.stop();
  for (auto& q : failed) finish(q.owner, q.req->done, e);
}

void IggyPool::arm_queue_timer() {
  if (queued_ == 0 || queue_timer_.active() || closed_) return;
  const uint64_t now = uv_now(loop_);
  uint64_t deadline = UINT64_MAX;
  for (const auto& [owner, lane] : lanes_) deadline = std::min(deadline, lane.front().req->deadline_ms);
  queue_timer_.start(std::chrono::milliseconds(deadline > now ? deadline - now : 0), [this] { expire_queued(); });
}

void IggyPool::expire_queued() {
  const uint64_t now = uv_now(loop_);
  std::vector<Queued> expired;
  for (auto lane = lanes_.begin(); lane != lanes_.end();) {
    auto& q = lane->second;
    while (!q.empty() && q.front().req->deadline_ms <= now) {
      expired.push_back(std::move(q.front()));
      q.pop_front();
      --queued_;
    }
    lane = q.empty() ? lanes_.erase(lane) : std::next(lane);
  }
  arm_queue_timer();
  for (auto& q : expired)
    finish(q.owner, q.req->done,
           transport_error(TransportCode::kQueueTimeout,
                           fmt::format("no Iggy connection available within {} ms ({})", config_.queue_timeout.count(),
                                       wire::command_name(q.req->frame.code))));
}

void IggyPool::close(std::function<void()> done) {
  if (closed_) {
    if (done) tasks_.post(std::move(done));
    return;
  }
  closed_ = true;
  queue_timer_.stop();
  std::deque<Queued> pending = take_all();
  for (auto& q : pending) {
    auto shared = std::shared_ptr<PendingRequest>(std::move(q.req));
    tasks_.post([this, shared, owner = q.owner] {
      finish(owner, shared->done, transport_error(TransportCode::kClosed, "Iggy pool closed"));
    });
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
  s.queued = queued_;
  s.login_refused = login_error_.has_value();
  s.unsupported_server = !connections_.empty();
  for (const auto& c : connections_) {
    if (c->state() != ConnectionState::kUnsupported) s.unsupported_server = false;
    else if (s.unsupported_reason.empty()) s.unsupported_reason = c->unsupported_reason();
  }
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

void IggyIdentityPools::cancel_owner(uint64_t owner) {
  for (auto& [k, p] : pools_) p->cancel_owner(owner);
}

std::vector<std::pair<std::string, PoolStats>> IggyIdentityPools::stats() const {
  std::vector<std::pair<std::string, PoolStats>> out;
  for (const auto& [k, p] : pools_) out.emplace_back(p->config().connection.credentials.display_name(), p->stats());
  return out;
}

}  // namespace kib::iggy
