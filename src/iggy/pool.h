// IggyPool: N lockstep connections of one Iggy identity behind one fair queue.
//
// submit() queues a request in its owner's FIFO (uvx/work_owner.h: the Kafka connection it is done for,
// 0 for the bridge itself); whenever a connection is logged in with nothing in flight it takes
// the oldest request it may serve (any request, or one pinned to that connection) of the next
// owner in round-robin order, so one client's request with 100k partitions delays another
// client's by at most one request per owner ahead of it. One owner may queue at most
// max_queue_per_owner requests (beyond: fail at once, kTransport kQueueTimeout), and
// cancel_owner() drops an owner's queued cancellable requests when its connection closes. A
// request in flight on a connection that drops fails with ErrorDomain::kTransport (retriable);
// queued requests wait for a reconnect, up to queue_timeout. If the server refuses the
// credentials (bad password, token, inactive user, incompatible version) every queued request
// fails with that Iggy error, and new ones fail at once until some connection logs in again
// (connections keep retrying with backoff).
//
// IggyIdentityPools keeps one IggyPool per credentials (one Iggy user per Kafka principal).
//
// Thread-safety: none; loop thread only. Callbacks run on the loop thread, never inside submit()
// or close(). Close before destroying: close(done), run the loop until `done`, destroy, then run
// the loop once more so libuv can free the handles.
#pragma once

#include <chrono>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <uv.h>

#include "common/result.h"
#include "iggy/connection.h"
#include "uvx/tasks.h"
#include "uvx/timer.h"

namespace kib::iggy {

struct PoolConfig {
  ConnectionConfig connection;  // address, credentials, timeouts, backoff
  size_t connections = 4;
  std::chrono::milliseconds queue_timeout{30000};  // max wait for a connection
  size_t max_queue = 100000;                       // beyond: fail at once (kTransport kQueueTimeout)
  size_t max_queue_per_owner = 10000;              // one owner's share of it (0 = no bound); not owner 0
};

// For metrics.
struct PoolStats {
  size_t connections = 0;    // configured
  size_t connected = 0;      // logged in
  size_t busy = 0;           // with a request in flight
  size_t queued = 0;         // waiting for a connection
  uint64_t submitted = 0;
  uint64_t completed_ok = 0;
  uint64_t failed = 0;
  uint64_t transport_failures = 0;
  uint64_t reconnects = 0;   // successful re-logins after a drop
  uint64_t cancelled = 0;    // queued requests dropped because their owner went away
  uint64_t owner_queue_full = 0;  // requests refused because their owner's share was full
  bool login_refused = false;  // last login attempt was refused by the server
  uint64_t unconfirmed_sends = 0;  // SendMessages answered without a confirmation (never a success)
  // Every connection stopped because the server speaks another protocol (server_profile.h).
  bool unsupported_server = false;
  std::string unsupported_reason;
};

class IggyPool {
 public:
  IggyPool(uv_loop_t* loop, PoolConfig config);
  ~IggyPool();
  IggyPool(const IggyPool&) = delete;
  IggyPool& operator=(const IggyPool&) = delete;

  // Connects all connections. Implied by the first submit().
  void start();

  // `affinity` >= 0 pins the request to that connection (e.g. Iggy consumer-group membership is
  // per connection); -1 = any connection.
  void submit(wire::RequestFrame frame, ReplyCallback done, int affinity = -1);
  // The frame is encoded for the server of the connection that sends it (at first transmission).
  void submit_encoded(FrameEncoder encode, ReplyCallback done, int affinity = -1);

  // Fails the queued requests of `owner` that were submitted cancellable (uvx/work_owner.h) with
  // kTransport kClosed, without sending them: their Kafka connection closed. Others still run.
  void cancel_owner(uint64_t owner);

  // Fails queued and in-flight requests with kTransport kClosed and closes every connection.
  void close(std::function<void()> done = {});
  bool closed() const { return closed_; }

  PoolStats stats() const;
  // The server the pool's connections logged in to last (generation kUnknown before any login).
  ServerProfile server_profile() const;
  void note_unconfirmed_send() { ++counters_.unconfirmed_sends; }
  size_t size() const { return connections_.size(); }
  const IggyConnection& connection(size_t i) const { return *connections_[i]; }
  const PoolConfig& config() const { return config_; }
  // From now on (SIGHUP); requests already queued stay.
  void set_max_queue_per_owner(size_t n) { config_.max_queue_per_owner = n; }
  uv_loop_t* loop() const { return loop_; }

  // Runs `task` on a later loop iteration.
  void post(std::function<void()> task) { tasks_.post(std::move(task)); }

 private:
  void enqueue(std::unique_ptr<PendingRequest> req, ReplyCallback done, int affinity);
  void dispatch();
  void schedule_dispatch();
  void on_login_failed(const Error& e);
  void arm_queue_timer();
  void expire_queued();
  struct Queued {
    std::unique_ptr<PendingRequest> req;
    uint64_t owner = 0;
    bool cancellable = false;
  };
  void finish(uint64_t owner, ReplyCallback& done, Result<Reply> r);
  bool any_connected() const;
  std::deque<Queued> take_all();

  uv_loop_t* loop_;
  PoolConfig config_;
  std::vector<std::unique_ptr<IggyConnection>> connections_;
  std::map<uint64_t, std::deque<Queued>> lanes_;  // per owner, FIFO; no empty lane
  size_t queued_ = 0;                             // over every lane
  uint64_t next_owner_ = 0;                       // round-robin: serve owners >= it first
  uv::Tasks tasks_;
  uv::Timer queue_timer_;
  std::optional<Error> login_error_;
  bool started_ = false;
  bool closed_ = false;
  bool dispatch_scheduled_ = false;
  size_t next_connection_ = 0;  // round-robin start for fairness across connections
  PoolStats counters_;
};

// One pool per Iggy identity, created on first use with the base config's address and timeouts.
class IggyIdentityPools {
 public:
  IggyIdentityPools(uv_loop_t* loop, PoolConfig base);
  ~IggyIdentityPools();

  // `connections` 0 = base config's count.
  IggyPool& pool_for(const Credentials& credentials, size_t connections = 0);
  // Closes and forgets one identity's pool (e.g. the principal was removed).
  void release(const Credentials& credentials, std::function<void()> done = {});
  void close(std::function<void()> done = {});

  size_t identities() const { return pools_.size(); }
  // IggyPool::cancel_owner on every identity's pool.
  void cancel_owner(uint64_t owner);
  // Per identity (display name, never the secret) stats.
  std::vector<std::pair<std::string, PoolStats>> stats() const;

 private:
  uv_loop_t* loop_;
  PoolConfig base_;
  std::map<std::string, std::unique_ptr<IggyPool>> pools_;
  std::vector<std::unique_ptr<IggyPool>> retired_;  // closing; destroyed with this object
  uv::Tasks tasks_;
};

}  // namespace kib::iggy
