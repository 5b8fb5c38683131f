// Iggy user-header TLV blocks as they come back from iggy-server (any client may have written
// them). The parser accepts every known kind with a 1..255-byte key and value and does not
// check fixed widths (the server does not either; map_iggy_to_record checks the one fixed-width
// header it reads, kafka.ts). A block whose pairs all have their kind's width must be built
// again, pair by pair, by UserHeadersBuilder to the same bytes (the format has one encoding).
#include <algorithm>

#include "iggy/user_headers.h"
#include "fuzz/targets/fuzz_targets.h"

namespace kib::fuzz {

int fuzz_user_headers(const uint8_t* data, size_t size) {
  const ByteSpan in(data, size);
  auto parsed = iggy::parse_user_headers(in);
  if (!parsed.ok()) return 0;
  iggy::UserHeadersBuilder b;
  for (const iggy::HeaderEntry& e : *parsed) {
    FUZZ_CHECK(e.key.data() >= data && e.key.data() + e.key.size() <= data + size, "a key points outside the block");
    FUZZ_CHECK(e.value.data() >= data && e.value.data() + e.value.size() <= data + size, "a value points outside the block");
    FUZZ_CHECK(!e.key.empty() && e.key.size() <= iggy::kMaxHeaderFieldLength, "a key length out of range parsed");
    FUZZ_CHECK(!e.value.empty() && e.value.size() <= iggy::kMaxHeaderFieldLength, "a value length out of range parsed");
    const size_t kw = iggy::header_kind_width(e.key_kind), vw = iggy::header_kind_width(e.value_kind);
    if ((kw != 0 && e.key.size() != kw) || (vw != 0 && e.value.size() != vw)) return 0;
    auto added = b.add(e.key_kind, e.key, e.value_kind, e.value);
    FUZZ_CHECK(added.ok(), "a parsed pair of the right widths cannot be built again");
  }
  FUZZ_CHECK(std::equal(b.bytes().begin(), b.bytes().end(), in.begin(), in.end()), "rebuilding changed the block");
  return 0;
}

}  // namespace kib::fuzz
