// The response of a request whose entries (partitions, topics, resources) are answered by calls
// that complete apart: the response they fill in, and the Responder that sends it once the last
// is in (common/fan_in.h counts them). Fan-out's other half (server/handlers/fanout.h bounds the
// work and the answer; this gathers it).
//
//   auto call = std::make_shared<FanInAnswer<msg::FooResponse>>(req.respond);
//   ... per entry: call->add(); service.do(..., [call, i](...) { fill call->resp; call->done(); });
//   call->done();  // every entry has started
//
// A handler whose answer is more than "send the response" (acks=0, a size bound checked at the
// end) holds a FanIn of its own instead.
#pragma once

#include <cstddef>
#include <utility>

#include "common/fan_in.h"
#include "server/context/request.h"

namespace kib::kafka {

// Held by shared_ptr (each entry's callback keeps it) and never moved: its FanIn points back at it.
template <typename Response>
struct FanInAnswer {
  explicit FanInAnswer(Responder r) : respond(std::move(r)) {}
  FanInAnswer(const FanInAnswer&) = delete;
  FanInAnswer& operator=(const FanInAnswer&) = delete;

  // One more entry (or `n`) whose call is on its way.
  void add(size_t n = 1) { parts.add(n); }
  // One entry answered; the last sends the response.
  void done() { parts.done(); }

  Response resp;
  Responder respond;

 private:
  FanIn<> parts{[this] { respond.send(resp); }};
};

}  // namespace kib::kafka
