#include "server/kafka_server.h"

#include <spdlog/spdlog.h>

#include "common/guard.h"
#include "common/text.h"
#include "server/handlers/registry.h"
#include "kafka/protocol/error_code.h"
#include "kafka/protocol/generated/api_keys.h"
#include "kafka/protocol/generated/api_versions.h"
#include "kafka/protocol/generated/metadata.h"
#include "kafka/protocol/generated/request_header.h"
#include "kafka/protocol/generated/response_header.h"
#include "metrics/bridge_metrics.h"
#include "net/tls.h"
#include "uvx/work_owner.h"
#include "server/security/sasl_session.h"

namespace kib::kafka {

namespace {
const RequestHeaderInfo kNoHeader{};

std::string request_context(const RequestHeaderInfo& h) {
  return fmt::format("api={} v={} client={} corr={}", msg::api_name(h.api_key), h.api_version, esc(h.client_id),
                     h.correlation_id);
}
}  // namespace

const RequestHeaderInfo& Responder::header() const { return state_ ? state_->header : kNoHeader; }

Responder::State::~State() {
  if (answered) return;
  auto c = conn.lock();
  if (!c || c->closed()) return;
  // Whatever held this request failed or forgot it; nothing will answer it now. Closing is
  // what lets the client see it at once (and retry) instead of waiting behind it.
  metrics::record_request_error(msg::api_name(header.api_key), "dropped");
  c->close("request dropped without a response (" + request_context(header) + ")");
}

void Responder::begin(ByteWriter& w) const {
  w.be<int32_t>(0);  // length, patched in finish()
  msg::ResponseHeader h;
  h.correlation_id = header().correlation_id;
  h.encode(w, state_ ? state_->response_header_version : 0);
}

void Responder::finish(ByteWriter&& w) const noexcept {
  if (!state_ || state_->answered) return;
  try {
    const size_t total = w.total_size();
    if (total - 4 > static_cast<size_t>(std::numeric_limits<int32_t>::max())) throw std::length_error("response frame over 2 GiB");
    w.patch_be<int32_t>(0, static_cast<int32_t>(total - 4));
    metrics::record_response(msg::api_name(state_->header.api_key),
                             std::chrono::steady_clock::now() - state_->header.received_at, total);
    state_->answered = true;
    auto shared = w.take_shared_spans();
    if (auto c = state_->conn.lock()) c->complete(state_->seq, net::OutFrame(w.take(), std::move(shared)));
  } catch (...) {
    encode_failed(std::current_exception());
  }
}

void Responder::encode_failed(std::exception_ptr e) const noexcept {
  if (!state_) return;
  state_->answered = true;
  std::string what = "unknown exception";
  try {
    std::rethrow_exception(e);
  } catch (const std::exception& ex) {
    what = ex.what();
  } catch (...) {
  }
  guard::run(guard::Boundary::kKafkaResponse, "encoding a response", [&] {
    metrics::record_request_error(msg::api_name(state_->header.api_key), "encode_failed");
    guard::detail::report(guard::Boundary::kKafkaResponse, request_context(state_->header), what);
    if (auto c = state_->conn.lock())
      c->close("response could not be encoded: " + escape(what, 1024) + " (" + request_context(state_->header) + ")");
  });
}

void Responder::charge(size_t bytes) const {
  if (!state_ || state_->answered) return;
  if (auto c = state_->conn.lock()) c->charge(state_->seq, bytes);
}

void Responder::no_response() const {
  if (!state_ || state_->answered) return;
  state_->answered = true;
  metrics::record_response(msg::api_name(state_->header.api_key),
                           std::chrono::steady_clock::now() - state_->header.received_at, 0);
  if (auto c = state_->conn.lock()) c->complete(state_->seq, std::nullopt);
}

void Responder::count_error(int16_t error_code) const {
  if (error_code != 0)
    metrics::record_request_error(msg::api_name(header().api_key), error_name(static_cast<ErrorCode>(error_code)));
}

void Responder::close(const std::string& reason) const {
  if (!state_) return;
  state_->answered = true;
  // `reason` may quote client input (an error message, a topic name): escaped for the log.
  if (auto c = state_->conn.lock())
    c->close(fmt::format("{} ({})", escape(reason, 2048), request_context(state_->header)));
}

KafkaServer::KafkaServer(const Services& services, uv_loop_t* loop, net::ServerLimits limits)
    : services_(services),
      tcp_(loop, limits, [this](const std::shared_ptr<net::Connection>& c, uint64_t seq, Bytes frame) {
        on_frame(c, seq, std::move(frame));
      }) {}

namespace {

// KIP-511: an ApiVersions request of a version we do not know is answered in the v0 layout
// with UNSUPPORTED_VERSION and our own ApiVersions range, so the client can retry lower.
void reply_unsupported_api_versions(const Responder& r, const HandlerSpec& spec) {
  msg::ApiVersionsResponse resp;
  resp.error_code = to_int16(ErrorCode::kUnsupportedVersion);
  resp.api_keys.push_back({spec.api_key, spec.advertised_min, spec.max_version});
  ByteWriter w(64);
  w.be<int32_t>(0);
  w.be<int32_t>(r.header().correlation_id);  // response header v0
  resp.encode(w, 0);
  r.finish(std::move(w));
}

// A request other than SaslAuthenticate after SaslHandshake: Kafka answers it with the
// request's getErrorResponse(ILLEGAL_SASL_STATE) before closing. Metadata (what a client sends
// first) gets that answer, as MetadataRequest.getErrorResponse builds it (each requested topic
// with the error, no brokers); false for the other APIs and for a body that does not decode, which
// the caller closes without an answer (docs/security.md).
bool answer_illegal_sasl_state(const std::shared_ptr<net::Connection>& conn, uint64_t seq, const RequestHeaderInfo& info,
                               const Bytes& frame, size_t body_offset) {
  if (info.api_key != msg::MetadataRequest::kApiKey) return false;
  msg::MetadataRequest req;
  try {
    ByteReader r(ByteSpan(frame).subspan(body_offset));
    req.decode(r, info.api_version);
  } catch (const DecodeError&) {
    return false;
  }
  msg::MetadataResponse resp;
  for (const auto& t : req.topics.value_or(std::vector<msg::MetadataRequest::MetadataRequestTopic>{})) {
    msg::MetadataResponse::MetadataResponseTopic out;
    out.error_code = to_int16(ErrorCode::kIllegalSaslState);
    out.name = t.name.value_or("");
    out.topic_id = t.topic_id;
    resp.topics.push_back(std::move(out));
  }
  Responder(conn, seq, info, msg::response_header_version(info.api_key, info.api_version)).send(resp);
  return true;
}

}  // namespace

Result<uint16_t> KafkaServer::listen(const config::ListenerConfig& listener, size_t index) {
  net::ListenOptions o;
  o.listener = static_cast<uint32_t>(index);
  o.authenticate = listener.protocol != config::SecurityProtocol::kPlaintext;
  if (config::uses_tls(listener.protocol)) {
    auto it = tls_.find(o.listener);
    if (it == tls_.end())
      return Error{ErrorDomain::kInvalid, 0, "listener " + listener.str() + " uses TLS and no [tls] context is loaded"};
    // On SSL the handshake is the authentication (and [tls] client_auth applies); on SASL_SSL
    // SASL is, and no client certificate is asked for: the context must have been made so.
    if (it->second->listener().authenticates != (listener.protocol == config::SecurityProtocol::kSsl))
      return Error{ErrorDomain::kInvalid, 0, "listener " + listener.str() + " given the TLS context of a " +
                                                 (it->second->listener().authenticates ? "SSL" : "SASL_SSL") + " listener"};
    o.tls = it->second;
  }
  auto port = tcp_.listen(listener.address, o);
  if (port && o.tls) tls_listening_.insert(o.listener);
  return port;
}

Status KafkaServer::set_tls_contexts(const std::vector<std::shared_ptr<const net::TlsContext>>& contexts) {
  Status result = ok_status();
  for (const auto& ctx : contexts) {
    uint32_t index = ctx->listener().index;
    // A listener already listening takes it at once (SIGHUP); before listen() it waits here.
    if (tls_listening_.count(index) != 0)
      if (auto st = tcp_.set_tls_context(ctx); !st) {
        if (result) result = st;
        continue;
      }
    tls_[index] = ctx;
  }
  return result;
}

std::shared_ptr<Session> KafkaServer::new_session(const net::Connection& conn) const {
  auto s = std::make_shared<Session>();
  const auto& listeners = services_.config.kafka.listeners;
  s->listener = conn.listener() < listeners.size() ? conn.listener() : 0;
  if (!listeners.empty()) s->protocol = listeners[s->listener].protocol;
  s->client_host = conn.ip();
  // SSL: the client certificate's subject through principal_mapping_rules (User:ANONYMOUS
  // without one). SASL_SSL takes its principal from SASL, never from a certificate.
  if (s->protocol == config::SecurityProtocol::kSsl)
    if (const net::TlsPeer* peer = conn.tls_peer()) s->principal = peer->principal;
  return s;
}

namespace {

// The request header's first fields, enough to find the handler and its versions; false (the
// connection closed) when the frame is too short for them.
bool peek_header(net::Connection& conn, const Bytes& frame, RequestHeaderInfo& info) {
  try {
    ByteReader peek(frame);
    info.api_key = peek.be<int16_t>("request_api_key");
    info.api_version = peek.be<int16_t>("request_api_version");
    info.correlation_id = peek.be<int32_t>("correlation_id");
    return true;
  } catch (const DecodeError& e) {
    conn.close(std::string("malformed request header: ") + e.what());
    return false;
  }
}

// The whole request header: the client id into `info`, and where the body starts; nullopt (the
// connection closed) when it does not decode.
std::optional<size_t> read_header(net::Connection& conn, const Bytes& frame, bool version_ok, RequestHeaderInfo& info) {
  try {
    // An unknown ApiVersions version has an unknown header layout too; v0-v2 headers agree
    // on everything up to client_id, which is all we need to answer it.
    int16_t hv = version_ok ? msg::request_header_version(info.api_key, info.api_version) : 1;
    ByteReader r(frame);
    msg::RequestHeader h;
    h.decode(r, hv);
    info.client_id = h.client_id.value_or("");
    return r.position();
  } catch (const DecodeError& e) {
    conn.close(fmt::format("malformed request header (api={} v={}): {}", info.api_key, info.api_version, e.what()));
    return std::nullopt;
  }
}

// A SASL listener serves only ApiVersions and the SASL requests until the connection
// authenticated, and nothing but a re-authentication once its session expired. True when the
// request is refused (answered if Kafka answers it, and the connection closed).
bool refused_by_sasl_gate(const std::shared_ptr<net::Connection>& conn, uint64_t seq, const RequestHeaderInfo& info,
                          const Bytes& frame, size_t body_offset, bool version_ok, const Session& session) {
  if (!config::uses_sasl(session.protocol)) return false;
  auto refusal = sasl_admission(session.sasl, info.api_key, sasl_clock_ms());
  if (!refusal) return false;
  metrics::record_request_error(msg::api_name(info.api_key), refusal->metric_reason);
  metrics::record_connection_closed(refusal->metric_reason);
  const std::string why = fmt::format("{} (v{} client={} principal={})", refusal->reason, info.api_version,
                                      esc(info.client_id), esc(session.principal.str()));
  if (refusal->answer_illegal_sasl_state && version_ok && answer_illegal_sasl_state(conn, seq, info, frame, body_offset))
    conn->close_after_responses(why);
  else
    conn->close(why);
  return true;
}

// A version the API does not serve: ApiVersions is answered (KIP-511), any other API's
// connection closed.
void refuse_version(const std::shared_ptr<net::Connection>& conn, uint64_t seq, const RequestHeaderInfo& info,
                    const HandlerSpec& spec) {
  metrics::record_request_error(msg::api_name(info.api_key), "unsupported_version");
  if (info.api_key == msg::ApiVersionsRequest::kApiKey) {
    Responder r(conn, seq, info, 0);
    reply_unsupported_api_versions(r, spec);
    return;
  }
  conn->close(fmt::format("unsupported version: api={} ({}) v{} served v{}-v{} client={}", msg::api_name(info.api_key),
                          info.api_key, info.api_version, spec.min_version, spec.max_version, esc(info.client_id)));
}

}  // namespace

void KafkaServer::on_frame(const std::shared_ptr<net::Connection>& conn, uint64_t seq, Bytes frame) {
  if (!conn->attachment) conn->attachment = new_session(*conn);
  auto* session = static_cast<Session*>(conn->attachment.get());

  RequestHeaderInfo info;
  info.received_at = std::chrono::steady_clock::now();
  metrics::record_frame_received(frame.size() + 4);
  // SASL (server/security/sasl_session.h): after SaslHandshake v0 the exchange's tokens come as bare
  // frames, without a request header.
  if (session->sasl.raw_tokens) return on_raw_sasl_token(conn, seq, std::move(frame), *session);
  if (!peek_header(*conn, frame, info)) return;

  const HandlerSpec* spec = find_handler(info.api_key);
  if (!spec) {
    metrics::record_request_error("Unknown", "unsupported_api");
    conn->close(fmt::format("unsupported api key {} v{} from client={}", info.api_key, info.api_version,
                            esc(session->client_id)));
    return;
  }
  const bool version_ok = info.api_version >= spec->min_version && info.api_version <= spec->max_version;
  const std::optional<size_t> body_offset = read_header(*conn, frame, version_ok, info);
  if (!body_offset) return;
  if (session->client_id.empty()) session->client_id = info.client_id;
  if (refused_by_sasl_gate(conn, seq, info, frame, *body_offset, version_ok, *session)) return;
  if (!version_ok) return refuse_version(conn, seq, info, *spec);
  dispatch(conn, seq, *spec, std::move(info), std::move(frame), *body_offset, session);
}

void KafkaServer::on_raw_sasl_token(const std::shared_ptr<net::Connection>& conn, uint64_t seq, Bytes frame,
                                    Session& session) {
  try {
    serve_raw_sasl_token(services_, conn, seq, std::move(frame), session);
  } catch (const std::exception& e) {
    spdlog::error("conn={} SASL token failed: {}", conn->id(), esc(e.what(), 1024));
    conn->close(std::string("internal error in a SASL token: ") + escape(e.what(), 1024));
  }
}

// Hands a request that passed every check to its handler. A handler that throws has its
// connection closed: a body that does not decode as malformed, anything else as an internal error.
void KafkaServer::dispatch(const std::shared_ptr<net::Connection>& conn, uint64_t seq, const HandlerSpec& spec,
                           RequestHeaderInfo info, Bytes frame, size_t body_offset, Session* session) {
  metrics::record_request(msg::api_name(info.api_key), info.api_version);
  Request req;
  req.body_offset = body_offset;
  req.header = info;
  req.frame = std::make_shared<const Bytes>(std::move(frame));
  req.conn = conn;
  req.session = session;
  req.authorizer = &services_.authorizer;
  req.respond = Responder(conn, seq, info, msg::response_header_version(info.api_key, info.api_version));
  spdlog::trace("conn={} client={} api={} v={} corr={}", conn->id(), esc(info.client_id), msg::api_name(info.api_key),
                info.api_version, info.correlation_id);
  Responder fallback = req.respond;
  try {
    uv::OwnerScope owner(conn->id());  // Iggy work this request starts is this connection's
    spec.handle(services_, std::move(req));
  } catch (const DecodeError& e) {
    metrics::record_request_error(msg::api_name(fallback.header().api_key), "malformed_request");
    fallback.close(std::string("malformed request: ") + escape(e.what(), 1024));
  } catch (const std::exception& e) {
    metrics::record_request_error(msg::api_name(fallback.header().api_key), "internal_error");
    spdlog::error("conn={} handler failed: {}", conn->id(), esc(e.what(), 1024));
    fallback.close(std::string("internal error: ") + escape(e.what(), 1024));
  } catch (...) {
    metrics::record_request_error(msg::api_name(fallback.header().api_key), "internal_error");
    spdlog::error("conn={} handler failed: unknown exception", conn->id());
    fallback.close("internal error: unknown exception");
  }
}

}  // namespace kib::kafka
