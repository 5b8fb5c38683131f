// Every decoder of what iggy-server sends back (src/iggy/protocol.h). The first byte picks the
// decoder, the rest is its input: a reply payload, or for selector 0 a whole frame (256-byte
// header, then body) through decode_frame_header and reply_payload as the connection reads it.
// Decoders may refuse (ErrorDomain::kProtocol); they must never crash, read out of bounds, or
// throw.
#include <memory>

#include "iggy/errors.h"
#include "iggy/protocol.h"
#include "fuzz/targets/fuzz_targets.h"

namespace kib::fuzz {
namespace {

using namespace kib::iggy;

template <typename T>
void refused_cleanly(const Result<T>& r) {
  if (!r.ok()) FUZZ_CHECK(!r.error().message.empty(), "a decoder refused without saying why");
}

void frame(ByteSpan in) {
  const ByteSpan header = in.subspan(0, std::min(in.size(), wire::kHeaderSize));
  auto h = wire::decode_frame_header(header, 1u << 20);
  if (!h.ok()) return;
  FUZZ_CHECK(h->size >= wire::kHeaderSize && h->size <= (1u << 20), "a frame size out of bounds was accepted");
  if (h->command != wire::Command::kReply) {
    (void)wire::eviction_error(*h);
    return;
  }
  ByteSpan body = in.subspan(header.size());
  if (body.size() > h->body_size()) body = body.subspan(0, h->body_size());
  auto p = wire::reply_payload(*h, body);
  if (p.ok()) FUZZ_CHECK(p->data() >= body.data() && p->data() + p->size() <= body.data() + body.size(),
                         "reply_payload points outside the body");
}

}  // namespace

int fuzz_iggy_reply(const uint8_t* data, size_t size) {
  if (size < 1) return 0;
  const ByteSpan in(data + 1, size - 1);
  switch (data[0] % 22) {
    case 0: frame(in); break;
    case 1: refused_cleanly(wire::decode_login(in)); break;
    case 2: refused_cleanly(wire::decode_stream(in)); break;
    case 3: refused_cleanly(wire::decode_stream_details(in)); break;
    case 4: refused_cleanly(wire::decode_streams(in)); break;
    case 5: refused_cleanly(wire::decode_topic_details(in)); break;
    case 6: refused_cleanly(wire::decode_topics(in)); break;
    case 7: {
      uint32_t count = in.empty() ? 0 : in[0];
      // the low bit of the count byte picks the server generation
      refused_cleanly(wire::decode_send_confirmation(in.subspan(in.empty() ? 0 : 1), count,
                                                     count & 1 ? ServerGeneration::kEdge : ServerGeneration::kRelease));
      break;
    }
    case 8: {
      auto buffer = std::make_shared<const Bytes>(in.begin(), in.end());
      auto polled = wire::decode_polled_messages(buffer, *buffer);
      refused_cleanly(polled);
      if (polled.ok()) {
        for (const MessageView& m : polled->messages) {
          FUZZ_CHECK(m.payload.data() >= buffer->data() && m.payload.data() + m.payload.size() <= buffer->data() + buffer->size(),
                     "a polled payload points outside the buffer");
          FUZZ_CHECK(m.user_headers.empty() || (m.user_headers.data() >= buffer->data() &&
                                                m.user_headers.data() + m.user_headers.size() <= buffer->data() + buffer->size()),
                     "polled user headers point outside the buffer");
        }
      }
      break;
    }
    case 9: refused_cleanly(wire::decode_consumer_offset(in)); break;
    case 10: refused_cleanly(wire::decode_consumer_group_details(in)); break;
    case 11: refused_cleanly(wire::decode_consumer_groups(in)); break;
    case 12: refused_cleanly(wire::decode_consumer_group_assignment(in)); break;
    case 13: refused_cleanly(wire::decode_user_details(in)); break;
    case 14: refused_cleanly(wire::decode_users(in)); break;
    case 15: refused_cleanly(wire::decode_raw_personal_access_token(in)); break;
    case 16: refused_cleanly(wire::decode_personal_access_tokens(in)); break;
    case 17: refused_cleanly(wire::decode_stats(in)); break;
    case 18: refused_cleanly(wire::decode_client_info(in)); break;
    case 19: refused_cleanly(wire::decode_permissions(in)); break;
    case 20: {
      // A frame header as the connection sees it with the default frame limit.
      auto h = wire::decode_frame_header(in.subspan(0, std::min(in.size(), wire::kHeaderSize)));
      if (h.ok()) FUZZ_CHECK(h->size >= wire::kHeaderSize && h->size <= wire::kMaxFrameSize, "frame size out of bounds");
      break;
    }
    case 21:
      if (in.size() >= 4) {
        uint32_t code = uint32_t{in[0]} | uint32_t{in[1]} << 8 | uint32_t{in[2]} << 16 | uint32_t{in[3]} << 24;
        (void)wire::command_name(code);
        (void)wire::operation_for_code(code);
        (void)wire::reply_is_result_framed(in.size() > 4 ? in[4] : 0, in.size());
        (void)iggy_error(code, "fuzz");
      }
      break;
  }
  return 0;
}

}  // namespace kib::fuzz
