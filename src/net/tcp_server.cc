#include "net/tcp_server.h"

#include <spdlog/spdlog.h>

#include <sys/socket.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

#include "common/guard.h"
#include "common/text.h"
#include "net/tls.h"

namespace kib::net {
namespace {

uint64_t now_ms(uv_loop_t* loop) { return uv_now(loop); }

AcceptLimits accept_limits(const ServerLimits& l) { return {l.max_connections, l.max_connections_per_ip}; }

// Small answers queued behind a write are copied into one buffer of at most this many bytes;
// larger ones (and Fetch answers that refer to shared record batches) keep their own.
constexpr size_t kCoalesceBytes = 64 * 1024;
constexpr size_t kCoalesceAnswerBytes = 4 * 1024;
// Buffers one write takes (libuv writes more than IOV_MAX in several system calls itself; this
// bounds one write request's own array).
constexpr size_t kMaxWritePieces = 1024;
// The allocator's headers, the deque's share and the frame's own fields, per queued answer.
constexpr size_t kAnswerOverhead = 64;
// How often the total bound's warning may be logged.
constexpr uint64_t kTotalWarningEveryMs = 10000;

}  // namespace

// The one write in flight: the frames it writes (kept alive until the socket took them) and the
// buffers pointing into them.
struct Connection::WriteReq {
  uv_write_t req;
  std::vector<OutFrame> frames;
  std::vector<uv_buf_t> bufs;
  Connection* conn = nullptr;
};

size_t OutFrame::memory_cost() const {
  return head.capacity() + shared.capacity() * sizeof(ByteWriter::SharedAt) + (size_ - head.size()) + kAnswerOverhead;
}

void OutFrame::append(const OutFrame& small) {
  if (!shared.empty() || !small.shared.empty()) throw std::logic_error("OutFrame::append: shared pieces");
  head.insert(head.end(), small.head.begin(), small.head.end());
  size_ = head.size();
}

Connection::Connection(TcpServer& server, uint64_t id) : server_(server), id_(id), handle_(new uv_tcp_t) {
  uv_tcp_init(server_.loop_, handle_);
  handle_->data = this;
}

Connection::~Connection() = default;

uv_loop_t* Connection::loop() const { return server_.loop_; }

bool Connection::peer_gone() const {
  if (closing_) return true;
  uv_os_fd_t fd;
  if (reading_ || uv_fileno(reinterpret_cast<const uv_handle_t*>(handle_), &fd) != 0) return false;
  uint8_t b;
  const ssize_t n = ::recv(fd, &b, 1, MSG_PEEK | MSG_DONTWAIT);
  return n == 0 || (n < 0 && errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR);
}

const TlsPeer* Connection::tls_peer() const { return tls_ && tls_->established() ? &tls_->peer() : nullptr; }

size_t Connection::buffered_bytes() const {
  return pending_in_.size() - pending_off_ + (tls_ ? tls_->buffered() : 0);
}

void Connection::set_authenticated(bool yes) {
  // A re-authentication (KIP-368) starting: it must complete within authentication_timeout_ms.
  if (!yes && authenticated_) reauthentication_started_ms_ = now_ms(server_.loop_);
  authenticated_ = yes;
  if (yes) was_authenticated_ = true;
  // Reading follows when the request that changed it is answered (flush()).
}

void Connection::start() {
  uv_tcp_nodelay(handle_, 1);
  last_activity_ms_ = now_ms(server_.loop_);
  update_reading();
}

// Whether the connection may take more input: read the socket, or hand the next buffered
// frame to the frame callback. Requests already answered but queued behind an unfinished
// one count against max_inflight_requests (they hold a slot) and their responses against
// max_pending_response_bytes. The bytes bound is waived while nothing is unanswered, so a
// frame within max_frame_bytes can always be completed (even after SIGHUP lowered the bound).
//
// Before authentication a connection holds one request at a time, as Kafka's do (a channel is
// muted until its answer is sent): the next is read once the last answer was written. A client
// that does not read its answers stops being read once they cost max_pending_response_bytes, or
// once every connection's together cost max_pending_response_bytes_total.
Connection::Hold Connection::hold() const {
  const ServerLimits& l = server_.limits_;
  if (closing_ || closing_after_responses_ || server_.shutting_down_) return Hold::kClosing;
  const uint64_t pending = pending_response_cost();
  if (!authenticated_ && (!slots_.empty() || pending != 0)) return Hold::kUnauthenticated;
  if (slots_.size() >= l.max_inflight_requests) return Hold::kRequests;
  if (pending != 0 && pending > l.max_pending_response_bytes) return Hold::kPending;
  if (pending != 0 && server_.pending_cost_total_ > l.max_pending_response_bytes_total) return Hold::kPendingTotal;
  if (!slots_.empty() && inflight_request_bytes_ >= l.max_inflight_request_bytes) return Hold::kRequestBytes;
  return Hold::kNone;
}

bool Connection::can_take_more() const { return hold() == Hold::kNone; }

bool Connection::input_waiting() const {
  return pending_off_ < pending_in_.size() || (tls_ && tls_->input_ready());
}

void Connection::update_reading() {
  // Frames left over from an earlier read (and, on TLS, records not yet decrypted) are parsed
  // before the socket is read again. An answer written at once (the socket took it) frees the
  // bound that stopped the parse, so this goes on while it makes progress.
  while (!parsing_ && !in_tls_input_ && input_waiting() && can_take_more()) {
    const size_t before = buffered_bytes();
    drain_buffered();
    if (closing_ || buffered_bytes() == before) break;
  }
  const Hold why = hold();
  if (why == Hold::kPending && !paused_pending_) {
    paused_pending_ = true;
    ++server_.read_pauses_pending_;
    spdlog::debug("conn={} peer={} not read: {} bytes of answers its client has not taken (max_pending_response_bytes {})",
                  id_, peer_, pending_response_cost(), server_.limits_.max_pending_response_bytes);
  } else if (why != Hold::kPending) {
    paused_pending_ = false;
  }
  if (why != Hold::kPendingTotal) paused_total_ = false;
  if (why == Hold::kPendingTotal && !paused_total_) {
    paused_total_ = true;
    ++server_.read_pauses_pending_total_;
    server_.held_by_total_.emplace(id_, weak_from_this());
    const uint64_t now = now_ms(server_.loop_);
    if (server_.total_warned_ms_ == 0 || now - server_.total_warned_ms_ >= kTotalWarningEveryMs) {
      server_.total_warned_ms_ = now;
      spdlog::warn("{} bytes of answers pending in all connections pass max_pending_response_bytes_total ({}): "
                   "connections whose clients do not take their answers are not read (conn={} peer={} among them)",
                   server_.pending_cost_total_, server_.limits_.max_pending_response_bytes_total, id_, peer_);
    }
  }
  bool want = why == Hold::kNone && !input_waiting();
  if (want == reading_) return;
  reading_ = want;
  // The deadline of a frame being received runs only while the bridge reads: a frame paused
  // by backpressure gets the whole frame_read_timeout_ms again once reading resumes.
  if (want && in_frame_) frame_started_ms_ = now_ms(server_.loop_);
  if (want && partial_record_) partial_record_started_ms_ = now_ms(server_.loop_);
  auto* stream = reinterpret_cast<uv_stream_t*>(handle_);
  if (want) {
    uv_read_start(
        stream, &alloc_read_buffer,
        [](uv_stream_t* s, ssize_t nread, const uv_buf_t* buf) {
          auto* c = static_cast<Connection*>(s->data);
          guard::run(guard::Boundary::kKafkaConnection, "read", [&] { c->on_read(nread, buf); },
                     [&](std::string_view what) { c->close("internal error while reading: " + std::string(what)); });
        });
  } else {
    uv_read_stop(stream);
  }
}

void Connection::on_read(ssize_t nread, const uv_buf_t* buf) {
  if (nread < 0 && tls_ && !tls_->established())
    ++server_.tls_handshake_failures_[static_cast<size_t>(TlsFailure::kPeerClosed)];
  if (nread == UV_EOF) return close(tls_ && !tls_->established() ? "peer closed during the TLS handshake" : "peer closed");
  if (nread < 0) return close(std::string("read error: ") + uv_strerror(static_cast<int>(nread)));
  if (nread == 0) return;
  auto self = shared_from_this();  // the frame callback may close us
  const auto* p = reinterpret_cast<const uint8_t*>(buf->base);
  size_t n = static_cast<size_t>(nread);
  if (tls_) {
    // Ciphertext waits in the session until it can be decrypted and parsed; the socket is not
    // read again until it has been (input_waiting()).
    tls_->feed(p, n);
    tls_input();
    write_out();
    return update_reading();
  }
  size_t used = parse(p, n);
  // A bound was reached at a frame boundary: the rest of this read (at most kReadChunk bytes)
  // waits here, and the socket is not read, until slots free up.
  if (used < n && !closing_) {
    pending_in_.assign(p + used, p + n);
    pending_off_ = 0;
  }
  // Answers completed while parsing go out together.
  write_out();
  update_reading();
}

void Connection::drain_buffered() {
  auto self = shared_from_this();  // the frame callback may close us
  if (pending_off_ < pending_in_.size()) {
    size_t used = parse(pending_in_.data() + pending_off_, pending_in_.size() - pending_off_);
    pending_off_ += used;
    if (closing_ || pending_off_ == pending_in_.size()) {
      pending_in_ = Bytes();
      pending_off_ = 0;
    }
  }
  if (tls_ && !closing_ && pending_off_ == pending_in_.size()) tls_input();
  write_out();
}

void Connection::tls_input() {
  if (in_tls_input_ || closing_) return;
  in_tls_input_ = true;
  struct Reset {
    bool& flag;
    ~Reset() { flag = false; }
  } reset{in_tls_input_};
  if (!tls_->established()) {
    TlsSession::Status st = tls_->handshake();
    if (st == TlsSession::Status::kFailed) {
      ++server_.tls_handshake_failures_[static_cast<size_t>(tls_->failure())];
      // The alert OpenSSL queued is sent by close().
      // The error may quote the client certificate's subject.
      return close(std::string("TLS handshake failed (") + tls_failure_name(tls_->failure()) + "): " +
                   escape(tls_->error(), 1024));
    }
    send_tls_output();
    if (st != TlsSession::Status::kOk || closing_) return;
    const TlsPeer& peer = tls_->peer();
    ++server_.tls_handshakes_[peer.version];
    if (tls_authenticates_) set_authenticated(true);
    spdlog::debug("conn={} peer={} TLS handshake done: {} {}, client certificate {}, principal {}", id_, peer_,
                  peer.version, peer.cipher, esc(peer.subject ? *peer.subject : std::string("none"), 1024),
                  esc(peer.principal.str(), 1024));
  }
  // One record's plaintext at most; on the stack, since the frame callback may run another
  // connection's tls_input() before this one is done with it.
  uint8_t plain[16 * 1024];
  while (!closing_ && can_take_more() && pending_off_ == pending_in_.size() && tls_->input_ready()) {
    size_t n = 0;
    TlsSession::Status st = tls_->read(plain, sizeof plain, &n);
    if (st == TlsSession::Status::kWantInput) break;
    if (st == TlsSession::Status::kClosed) return close("peer closed (TLS close_notify)");
    if (st == TlsSession::Status::kFailed) {
      ++server_.tls_errors_;
      return close("TLS error: " + tls_->error());
    }
    size_t used = parse(plain, n);
    if (used < n && !closing_) {
      pending_in_.assign(plain + used, plain + n);
      pending_off_ = 0;
    }
  }
  if (closing_) return;
  bool partial = !in_frame_ && tls_->partial_record();
  if (partial && !partial_record_) partial_record_started_ms_ = now_ms(server_.loop_);
  partial_record_ = partial;
  send_tls_output();  // reading may have queued records (a TLS 1.3 KeyUpdate answer)
}

void Connection::send_tls_output() {
  if (tls_ && tls_->has_output()) send_raw(tls_->take_output());
  if (!parsing_) write_out();
}

size_t Connection::parse(const uint8_t* p, size_t n) {
  parsing_ = true;
  const size_t total = n;
  while (n > 0 && !closing_) {
    if (frame_len_ < 0) {
      if (!in_frame_) {
        // At a frame boundary: one read can hold thousands of small frames; stop handing them
        // over at the first bound reached (the caller keeps the rest).
        if (!can_take_more()) break;
        in_frame_ = true;
        frame_started_ms_ = now_ms(server_.loop_);
      }
      size_t take = std::min(n, sizeof(len_buf_) - len_have_);
      std::memcpy(len_buf_ + len_have_, p, take);
      len_have_ += take;
      p += take;
      n -= take;
      if (len_have_ < sizeof(len_buf_)) break;
      int32_t len = static_cast<int32_t>((uint32_t(len_buf_[0]) << 24) | (uint32_t(len_buf_[1]) << 16) |
                                         (uint32_t(len_buf_[2]) << 8) | uint32_t(len_buf_[3]));
      if (len < 0) {
        close("negative frame length " + std::to_string(len));
        break;
      }
      if (static_cast<uint64_t>(len) > server_.limits_.max_frame_bytes) {
        close("frame of " + std::to_string(len) + " bytes exceeds max_frame_bytes " +
              std::to_string(server_.limits_.max_frame_bytes));
        break;
      }
      if (!authenticated_ && static_cast<uint64_t>(len) > server_.limits_.max_unauthenticated_frame_bytes) {
        close("frame of " + std::to_string(len) + " bytes before authentication exceeds max_unauthenticated_frame_bytes " +
              std::to_string(server_.limits_.max_unauthenticated_frame_bytes));
        break;
      }
      frame_len_ = len;
      frame_.clear();
      frame_.reserve(std::min<size_t>(static_cast<size_t>(len), kReadChunk));
    }
    size_t want = static_cast<size_t>(frame_len_) - frame_.size();
    size_t take = std::min(n, want);
    // The first chunk is reserved when the length arrives; once the peer has sent past it, the
    // whole frame is reserved at once rather than doubling (each doubling copies the frame so
    // far). Pages of a large reservation become resident only as the bytes arrive.
    if (frame_.size() + take > frame_.capacity()) frame_.reserve(static_cast<size_t>(frame_len_));
    frame_.insert(frame_.end(), p, p + take);
    inflight_request_bytes_ += take;  // a frame being received holds memory too
    p += take;
    n -= take;
    if (frame_.size() == static_cast<size_t>(frame_len_)) {
      // A frame that completes after close_after_responses() is not handed over.
      if (closing_after_responses_) break;
      frame_len_ = -1;
      len_have_ = 0;
      in_frame_ = false;
      last_activity_ms_ = now_ms(server_.loop_);
      uint64_t seq = next_seq_++;
      if (slots_.empty()) first_slot_seq_ = seq;
      slots_.emplace_back().request_bytes = frame_.size();  // already in inflight_request_bytes_
      Bytes frame;
      frame.swap(frame_);
      server_.on_frame_(shared_from_this(), seq, std::move(frame));
    }
  }
  parsing_ = false;
  return total - n;
}

OutFrame::OutFrame(Bytes h, std::vector<ByteWriter::SharedAt> s) : head(std::move(h)), shared(std::move(s)) {
  size_t prev = 0;
  for (const auto& x : shared) {
    if (x.at < prev || x.at > head.size()) throw std::logic_error("OutFrame: shared span positions out of order");
    prev = x.at;
    size_ += x.span.bytes.size();
  }
}

void Connection::account(int64_t cost) {
  const uint64_t bound = server_.limits_.max_pending_response_bytes_total;
  const bool was_over = server_.pending_cost_total_ > bound;
  server_.pending_cost_total_ = static_cast<uint64_t>(static_cast<int64_t>(server_.pending_cost_total_) + cost);
  if (was_over && server_.pending_cost_total_ <= bound) server_.resume_held_by_total();
}

void Connection::complete(uint64_t seq, std::optional<OutFrame> framed) {
  if (closing_) return;
  if (seq < first_slot_seq_ || seq - first_slot_seq_ >= slots_.size()) {
    spdlog::error("conn={} completion for unknown request seq={}", id_, seq);
    return;
  }
  Slot& s = slots_[seq - first_slot_seq_];
  if (s.done) {
    spdlog::error("conn={} request seq={} completed twice", id_, seq);
    return;
  }
  s.done = true;
  s.data = std::move(framed);
  ++done_slots_;
  if (s.data) {
    queued_response_bytes_ += s.data->size();
    const size_t cost = s.data->memory_cost();
    queued_response_cost_ += cost;
    account(static_cast<int64_t>(cost));
  }
  inflight_request_bytes_ -= s.request_bytes;
  flush();
}

void Connection::charge(uint64_t seq, size_t bytes) {
  if (closing_ || seq < first_slot_seq_ || seq - first_slot_seq_ >= slots_.size()) return;
  Slot& s = slots_[seq - first_slot_seq_];
  if (s.done) return;
  s.request_bytes += bytes;
  inflight_request_bytes_ += bytes;
  update_reading();
}

void Connection::flush() {
  while (!slots_.empty() && slots_.front().done && !closing_) {
    std::optional<OutFrame> data = std::move(slots_.front().data);
    slots_.pop_front();
    ++first_slot_seq_;
    --done_slots_;
    if (data) {
      queued_response_bytes_ -= data->size();
      const size_t cost = data->memory_cost();
      queued_response_cost_ -= cost;
      account(-static_cast<int64_t>(cost));
    }
    if (!data || data->empty()) continue;
    if (tls_) {
      // Encrypted a chunk at a time, so that OpenSSL's buffer never holds a whole large
      // response beside its plaintext and ciphertext.
      constexpr size_t kChunk = 1u << 20;
      Bytes records;
      records.reserve(data->size() + (data->size() / (16 * 1024) + 1) * 64);
      bool failed = false;
      data->for_each_piece([&](ByteSpan piece) {
        for (size_t off = 0; off < piece.size() && !failed; off += kChunk) {
          if (!tls_->write(piece.data() + off, std::min(kChunk, piece.size() - off))) {
            failed = true;
            return;
          }
          Bytes out = tls_->take_output();
          records.insert(records.end(), out.begin(), out.end());
        }
      });
      if (failed) {
        ++server_.tls_errors_;
        return close("TLS error while encrypting a response: " + tls_->error());
      }
      data.reset();
      if (!send_raw(OutFrame(std::move(records)))) return;
    } else if (!send_raw(std::move(*data))) {
      return;
    }
  }
  // Inside parse() (answers completed as their requests were read) the caller writes them all
  // at once when it is done.
  if (!parsing_) write_out();
  if (closing_) return;
  update_reading();
  if (server_.shutting_down_ && slots_.empty() && pending_write_bytes() == 0) close("shutdown: drained");
  close_if_drained();
}

void Connection::close_after_responses(const std::string& reason) {
  if (closing_ || closing_after_responses_) return;
  closing_after_responses_ = true;
  close_reason_ = reason;
  update_reading();
  close_if_drained();
}

void Connection::close_if_drained() {
  if (!closing_after_responses_ || closing_ || !slots_.empty() || pending_write_bytes() != 0 || write_) return;
  if (delayed_close_armed_) return;
  const uint64_t delay_ms = server_.limits_.failed_authentication_delay_ms;
  if (delay_ms == 0) {
    close(close_reason_);
    return;
  }
  // Once the last answer is written the connection stays open, reading nothing,
  // failed_authentication_delay_ms before it closes: Kafka's
  // connection.failed.authentication.delay.ms (close_after_responses serves the SASL failures). A
  // client that handles end-of-stream before the data that came with it (kafka-python 3) would
  // otherwise report "socket disconnected" instead of the error it was answered, which it does
  // not with Kafka. The timer is the connection's: it goes with it.
  delayed_close_armed_ = true;
  delayed_close_ = std::make_unique<uv::Timer>(server_.loop(), "delayed close");
  delayed_close_->start(std::chrono::milliseconds(delay_ms), [this] { close(close_reason_); });
}

bool Connection::send_raw(OutFrame data) {
  if (closing_) return false;
  if (data.empty()) return true;
  const bool small = data.shared.empty() && data.size() <= kCoalesceAnswerBytes;
  if (small && !out_.empty() && out_.back().shared.empty() && out_.back().size() + data.size() <= kCoalesceBytes) {
    OutFrame& back = out_.back();
    const size_t before = back.memory_cost();
    back.append(data);
    const int64_t grew = static_cast<int64_t>(back.memory_cost()) - static_cast<int64_t>(before);
    out_bytes_ += data.size();
    out_cost_ += static_cast<uint64_t>(grew);
    account(grew);
    return true;
  }
  const size_t cost = data.memory_cost();
  out_bytes_ += data.size();
  out_cost_ += cost;
  account(static_cast<int64_t>(cost));
  out_.push_back(std::move(data));
  return true;
}

void Connection::write_out() {
  auto* stream = reinterpret_cast<uv_stream_t*>(handle_);
  while (!write_ && !out_.empty() && !closing_) {
    auto w = std::make_unique<WriteReq>();
    w->conn = this;
    w->req.data = w.get();
    size_t bytes = 0, cost = 0;
    while (!out_.empty() && w->bufs.size() < kMaxWritePieces) {
      OutFrame& f = out_.front();
      f.for_each_piece([&](ByteSpan p) {
        w->bufs.push_back(uv_buf_init(const_cast<char*>(reinterpret_cast<const char*>(p.data())),
                                      static_cast<unsigned>(p.size())));
      });
      bytes += f.size();
      cost += f.memory_cost();
      w->frames.push_back(std::move(f));  // the pieces stay where they are: bufs still point at them
      out_.pop_front();
    }
    out_bytes_ -= bytes;
    out_cost_ -= cost;
    write_cost_ = cost;
    // What the socket takes at once needs no write request.
    int n = uv_try_write(stream, w->bufs.data(), static_cast<unsigned>(w->bufs.size()));
    if (n == UV_EAGAIN) n = 0;
    if (n < 0) {
      write_cost_ = 0;
      account(-static_cast<int64_t>(cost));
      return close(std::string("write error: ") + uv_strerror(n));
    }
    size_t written = static_cast<size_t>(n);
    if (written == bytes) {
      write_cost_ = 0;
      account(-static_cast<int64_t>(cost));
      last_activity_ms_ = now_ms(server_.loop_);
      continue;
    }
    // The rest goes through libuv's write queue: skip what was written.
    size_t first = 0;
    while (written >= w->bufs[first].len) written -= w->bufs[first++].len;
    w->bufs[first].base += written;
    w->bufs[first].len -= static_cast<unsigned>(written);
    write_bytes_ = bytes - static_cast<size_t>(n);
    write_ = w.get();
    int rc = uv_write(&w->req, stream, w->bufs.data() + first, static_cast<unsigned>(w->bufs.size() - first),
                      [](uv_write_t* req, int status) {
                        std::unique_ptr<WriteReq> owned(static_cast<WriteReq*>(req->data));
                        Connection* c = owned->conn;
                        guard::run(guard::Boundary::kKafkaConnection, "write done",
                                   [&] { c->on_write_done(*owned, status); },
                                   [&](std::string_view what) { c->close("internal error after a write: " + std::string(what)); });
                      });
    if (rc != 0) {
      write_ = nullptr;
      write_bytes_ = 0;
      write_cost_ = 0;
      account(-static_cast<int64_t>(cost));
      return close(std::string("write error: ") + uv_strerror(rc));
    }
    w.release();  // the callback owns it now
  }
  // Everything went out at once (no write callback will come): what waited for the answers to
  // be written happens now.
  if (!closing_ && !write_ && out_.empty()) {
    if (server_.shutting_down_ && slots_.empty()) return close("shutdown: drained");
    close_if_drained();
  }
}

void Connection::on_write_done(WriteReq& w, int status) {
  if (write_ == &w) {
    write_ = nullptr;
    write_bytes_ = 0;
    account(-static_cast<int64_t>(write_cost_));
    write_cost_ = 0;
  }
  if (closing_) return;
  if (status != 0) return close(std::string("write error: ") + uv_strerror(status));
  last_activity_ms_ = now_ms(server_.loop_);
  write_out();
  if (closing_) return;
  update_reading();
  if (server_.shutting_down_ && slots_.empty() && pending_write_bytes() == 0 && !write_) close("shutdown: drained");
  close_if_drained();
}

void Connection::close(const std::string& reason) {
  if (closing_) return;
  closing_ = true;
  reading_ = false;
  slots_.clear();
  done_slots_ = 0;
  // What was pending no longer counts: the queued answers go now, the one being written when
  // libuv cancels its write (on_write_done then finds the connection closing).
  account(-static_cast<int64_t>(pending_response_cost()));
  queued_response_bytes_ = 0;
  queued_response_cost_ = 0;
  out_.clear();
  out_bytes_ = out_cost_ = 0;
  write_bytes_ = write_cost_ = 0;
  write_ = nullptr;
  inflight_request_bytes_ = 0;
  frame_ = Bytes();
  // Not freed while parse() may be reading it; drain_buffered() frees it after.
  if (!parsing_) {
    pending_in_ = Bytes();
    pending_off_ = 0;
  }
  server_.release_ip(this);
  spdlog::info("conn={} peer={} closed: {}", id_, peer_, reason);
  if (tls_) {
    // close_notify (or the alert of a failed handshake), where the socket takes it at once:
    // closing never waits for a peer that does not read.
    tls_->shutdown();
    Bytes last = tls_->take_output();
    if (!last.empty()) {
      uv_buf_t b = uv_buf_init(reinterpret_cast<char*>(last.data()), static_cast<unsigned>(last.size()));
      uv_try_write(reinterpret_cast<uv_stream_t*>(handle_), &b, 1);
    }
  }
  uv_close(reinterpret_cast<uv_handle_t*>(handle_), [](uv_handle_t* h) {
    auto* c = static_cast<Connection*>(h->data);
    delete reinterpret_cast<uv_tcp_t*>(h);
    guard::run(guard::Boundary::kKafkaConnection, "connection closed", [&] { c->server_.remove(c); });
  });
}

ServerLimits server_limits(const config::LimitsConfig& l) {
  ServerLimits s;
  s.max_frame_bytes = l.max_frame_bytes;
  s.max_connections = l.max_connections;
  s.idle_timeout_ms = l.idle_timeout_ms;
  s.max_pending_response_bytes = l.max_pending_response_bytes;
  s.max_inflight_requests = l.max_inflight_requests;
  s.max_inflight_request_bytes = l.max_inflight_request_bytes;
  s.frame_read_timeout_ms = l.frame_read_timeout_ms;
  s.max_connections_per_ip = l.max_connections_per_ip;
  s.authentication_timeout_ms = l.authentication_timeout_ms;
  s.max_pending_response_bytes_total = l.max_pending_response_bytes_total;
  s.max_unauthenticated_frame_bytes = l.max_unauthenticated_frame_bytes;
  s.failed_authentication_delay_ms = l.failed_authentication_delay_ms;
  return s;
}

TcpServer::TcpServer(uv_loop_t* loop, ServerLimits limits, FrameFn on_frame)
    : loop_(loop),
      limits_(limits),
      on_frame_(std::move(on_frame)),
      listener_(loop, guard::Boundary::kKafkaConnection, {"", "listening for Kafka clients on", ""},
                accept_limits(limits), [this](uv_stream_t* l) { accept_one(l); }),
      tasks_(std::make_unique<uv::Tasks>(loop)) {
  arm_idle_timer();
}

void TcpServer::resume_held_by_total() {
  if (resume_posted_ || held_by_total_.empty()) return;
  resume_posted_ = true;
  tasks_->post([this] {
    resume_posted_ = false;
    std::unordered_map<uint64_t, std::weak_ptr<Connection>> held;
    held.swap(held_by_total_);
    for (auto& [id, w] : held)
      if (auto c = w.lock()) {
        c->paused_total_ = false;
        if (!c->closing_) c->update_reading();
      }
  });
}

void TcpServer::arm_idle_timer() {
  // One sweep serves both deadlines, at a quarter of the shorter one (10 ms .. 1 s).
  uint64_t shortest = 0;
  for (uint64_t t : {limits_.idle_timeout_ms, limits_.frame_read_timeout_ms,
                     authenticating_listeners_.empty() ? uint64_t{0} : limits_.authentication_timeout_ms})
    if (t != 0 && (shortest == 0 || t < shortest)) shortest = t;
  if (shortest == 0) {
    if (idle_timer_) idle_timer_->stop();
    return;
  }
  if (!idle_timer_) {
    idle_timer_ = std::make_unique<uv::Timer>(loop_, "idle sweep");
    idle_timer_->unref();
  }
  uint64_t every = std::clamp<uint64_t>(shortest / 4, 10, 1000);
  idle_timer_->start_repeating(std::chrono::milliseconds(every), [this] { sweep_idle(); });
}

void TcpServer::set_limits(const ServerLimits& limits) {
  limits_ = limits;
  listener_.set_limits(accept_limits(limits));
  if (!shutting_down_) arm_idle_timer();
  // New backpressure bounds may let a paused connection read again (or pause a busy one).
  for (auto& [c, _] : connections_) c->update_reading();
}

TcpServer::~TcpServer() = default;

Result<uint16_t> TcpServer::listen(const config::HostPort& addr, uint32_t listener, bool authenticate) {
  ListenOptions o;
  o.listener = listener;
  o.authenticate = authenticate;
  return listen(addr, o);
}

Result<uint16_t> TcpServer::listen(const config::HostPort& addr, const ListenOptions& o) {
  // A context shared by two listeners would resume on one the sessions the other made, past
  // the client authentication the first asks for: each has its own.
  if (o.tls && o.tls->listener().index != o.listener)
    return Error{ErrorDomain::kInvalid, 0,
                 "listener " + std::to_string(o.listener) + " (" + addr.str() + ") given the TLS context of listener " +
                     std::to_string(o.tls->listener().index) + " (" + o.tls->listener().name + ")"};
  auto port = listener_.listen(addr, 1024, o.listener);
  if (!port) return port;
  if (o.authenticate) {
    authenticating_listeners_[o.listener] = true;
    arm_idle_timer();
  }
  if (o.tls) tls_listeners_[o.listener] = o.tls;
  return port;
}

Status TcpServer::set_tls_context(std::shared_ptr<const TlsContext> ctx) {
  const TlsListener& l = ctx->listener();
  auto it = tls_listeners_.find(l.index);
  if (it == tls_listeners_.end())
    return Error{ErrorDomain::kInvalid, 0, "no TLS listener " + std::to_string(l.index) + " (" + l.name + ")"};
  if (it->second->listener().authenticates != l.authenticates)
    return Error{ErrorDomain::kInvalid, 0, "listener " + std::to_string(l.index) + " (" + l.name +
                                               ") cannot change between SSL and SASL_SSL without a restart"};
  it->second = std::move(ctx);
  return ok_status();
}

ServerStats TcpServer::stats() const {
  ServerStats s;
  s.refused_max_connections = listener_.stats().refused_max_connections;
  s.refused_per_ip = listener_.stats().refused_per_ip;
  s.frame_read_timeouts = frame_read_timeouts_;
  s.idle_timeouts = idle_timeouts_;
  s.authentication_timeouts = authentication_timeouts_;
  s.tls_handshakes = tls_handshakes_;
  s.tls_handshake_failures = tls_handshake_failures_;
  s.tls_errors = tls_errors_;
  s.read_pauses_pending = read_pauses_pending_;
  s.read_pauses_pending_total = read_pauses_pending_total_;
  s.pending_response_cost = pending_cost_total_;
  return s;
}

void TcpServer::accept_one(uv_stream_t* listener) {
  auto conn = std::make_shared<Connection>(*this, next_conn_id_++);
  Accepted a = listener_.accept(listener, conn->handle_);
  if (!a.ok) {
    uv_close(reinterpret_cast<uv_handle_t*>(conn->handle_), [](uv_handle_t* h) { delete reinterpret_cast<uv_tcp_t*>(h); });
    conn->closing_ = true;
    return;
  }
  connections_[conn.get()] = conn;
  conn->ip_ = std::move(a.name.ip);
  conn->peer_ = std::move(a.name.peer);
  conn->listener_ = a.tag;
  conn->accepted_ms_ = now_ms(loop_);
  if (auto it = authenticating_listeners_.find(a.tag); it != authenticating_listeners_.end() && it->second)
    conn->authenticated_ = false;
  if (auto it = tls_listeners_.find(a.tag); it != tls_listeners_.end() && it->second) {
    // The listener's own context says what the handshake asks of the client: [tls]
    // client_auth where it authenticates (SSL), no certificate where SASL does (SASL_SSL).
    conn->tls_ = std::make_unique<TlsSession>(it->second);
    conn->tls_authenticates_ = it->second->listener().authenticates;
  }
  if (!a.refused.empty()) return conn->close(a.refused);
  conn->ip_counted_ = true;  // admitted: counts against the limits until it closes
  if (shutting_down_) return conn->close("refused: shutting down");
  conn->start();
}

void TcpServer::release_ip(Connection* c) {
  if (!c->ip_counted_) return;
  c->ip_counted_ = false;
  listener_.release(c->ip_);
}

void TcpServer::remove(Connection* c) {
  auto it = connections_.find(c);
  if (it == connections_.end()) return;
  auto keep = it->second;
  connections_.erase(it);
  if (on_close) on_close(keep);
  maybe_finish_shutdown();
}

void TcpServer::sweep_idle() {
  uint64_t now = now_ms(loop_);
  const uint64_t idle_ms = limits_.idle_timeout_ms, frame_ms = limits_.frame_read_timeout_ms;
  const uint64_t auth_ms = limits_.authentication_timeout_ms;
  std::vector<std::shared_ptr<Connection>> idle, slow, unauthenticated, reauthenticating;
  for (auto& [p, c] : connections_) {
    if (c->closing_) continue;
    // Never authenticated since accept (a re-authenticating connection was, and has its
    // session's own deadline): closed whatever it is doing.
    if (auth_ms != 0 && !c->authenticated_ && !c->was_authenticated_ && now - c->accepted_ms_ >= auth_ms) {
      unauthenticated.push_back(c);
      continue;
    }
    // A re-authentication (KIP-368) started and not completed is held to the same deadline.
    if (auth_ms != 0 && !c->authenticated_ && c->was_authenticated_ &&
        now - c->reauthentication_started_ms_ >= auth_ms) {
      reauthenticating.push_back(c);
      continue;
    }
    // A frame started and not finished while the bridge was reading: a slowloris client, or
    // one that stopped mid-request.
    if (frame_ms != 0 && c->reading_ &&
        ((c->in_frame_ && now - c->frame_started_ms_ >= frame_ms) ||
         (!c->in_frame_ && c->partial_record_ && now - c->partial_record_started_ms_ >= frame_ms)))
      slow.push_back(c);
    // Bytes of an unfinished frame are not activity: only whole requests and responses are.
    else if (idle_ms != 0 && c->slots_.empty() && now - c->last_activity_ms_ >= idle_ms)
      idle.push_back(c);
  }
  for (auto& c : slow) {
    ++frame_read_timeouts_;
    c->close("frame not completed within frame_read_timeout_ms " + std::to_string(frame_ms) + " (" +
             std::to_string(c->frame_.size() + c->len_have_) + " bytes of it received)");
  }
  for (auto& c : unauthenticated) {
    ++authentication_timeouts_;
    if (c->tls_ && !c->tls_->established()) ++tls_handshake_failures_[static_cast<size_t>(TlsFailure::kTimeout)];
    c->close("not authenticated within authentication_timeout_ms " + std::to_string(auth_ms));
  }
  for (auto& c : reauthenticating) {
    ++authentication_timeouts_;
    c->close("re-authentication not completed within authentication_timeout_ms " + std::to_string(auth_ms));
  }
  for (auto& c : idle) {
    ++idle_timeouts_;
    c->close("idle for " + std::to_string(idle_ms) + " ms");
  }
}

void TcpServer::shutdown(uint64_t deadline_ms, std::function<void()> done) {
  if (shutting_down_) return;
  shutting_down_ = true;
  shutdown_done_ = std::move(done);
  listener_.close();
  spdlog::info("shutdown: stopped accepting; draining {} connections (deadline {} ms)", connections_.size(), deadline_ms);
  std::vector<std::shared_ptr<Connection>> all;
  for (auto& [p, c] : connections_) all.push_back(c);
  for (auto& c : all) {
    c->update_reading();
    if (c->slots_.empty() && c->pending_write_bytes() == 0 && !c->write_) c->close("shutdown: drained");
  }
  shutdown_timer_ = std::make_unique<uv::Timer>(loop_, "shutdown deadline");
  shutdown_timer_->start(std::chrono::milliseconds(deadline_ms), [this] {
    std::vector<std::shared_ptr<Connection>> left;
    for (auto& [p, c] : connections_) left.push_back(c);
    for (auto& c : left)
      c->close("shutdown: deadline passed with " + std::to_string(c->inflight()) + " requests in flight");
  });
  maybe_finish_shutdown();
}

void TcpServer::maybe_finish_shutdown() {
  if (!shutting_down_ || !connections_.empty() || !shutdown_done_) return;
  shutdown_timer_.reset();
  idle_timer_.reset();
  auto done = std::move(shutdown_done_);
  shutdown_done_ = nullptr;
  done();
}

}  // namespace kib::net
