#include "bridge/log/read_ahead.h"

#include <algorithm>

#include "uvx/work_owner.h"

namespace kib::bridge {

ReadAheads::Entry* ReadAheads::find(const PartitionOffsets& p) {
  auto it = entries_.find(&p);
  return it == entries_.end() ? nullptr : it->second.get();
}

void ReadAheads::drop(const PartitionOffsets& p) {
  auto it = entries_.find(&p);
  if (it == entries_.end()) return;
  bytes_ -= it->second->budget_bytes;
  entries_.erase(it);
}

void ReadAheads::poll(PartitionOffsets& p, int64_t offset, uint32_t count, uint64_t owner,
                      iggy::Callback<iggy::PolledMessages> cb, iggy::IggyPool* as) {
  Entry* ra = find(p);
  if (ra && ra->as == as && ra->offset == offset && ra->count >= count &&
      uv_now(loop_) - ra->started_ms <= kReadAheadMaxAgeMs) {
    if (!ra->reply) {
      ra->waiting.push_back(std::move(cb));
      return;
    }
    if (*ra->reply) {
      Result<iggy::PolledMessages> reply = std::move(*ra->reply);
      drop(p);
      tasks_.post([cb = std::move(cb), reply = std::move(reply)]() mutable { cb(std::move(reply)); });
      return;
    }
  }
  if (ra && ra->reply) drop(p);  // stale or for another offset
  // Only this fetch waits for this poll: it may be dropped unsent when the fetch's connection
  // closes (IggyPool::cancel_owner).
  uv::OwnerScope scope(uv::WorkOwner{owner, owner != 0});
  offsets_.poll(p, iggy::PollingStrategy::offset(static_cast<uint64_t>(offset)), count, std::move(cb), as);
}

void ReadAheads::start(PartitionOffsets& p, int64_t offset, uint32_t count, iggy::IggyPool* as) {
  if (find(p) || offset >= p.high_watermark()) return;
  const uint64_t bytes = static_cast<uint64_t>(count) * std::max<uint64_t>(p.avg_message_bytes, 1);
  if (bytes_ + bytes > kReadAheadBudgetBytes) {
    // Read-aheads nobody came for (a consumer that stopped or moved) give their room back.
    const uint64_t now = uv_now(loop_);
    for (auto it = entries_.begin(); it != entries_.end();) {
      const Entry& other = *it->second;
      if (other.reply && now - other.started_ms > kReadAheadMaxAgeMs) {
        bytes_ -= other.budget_bytes;
        it = entries_.erase(it);
      } else {
        ++it;
      }
    }
    if (bytes_ + bytes > kReadAheadBudgetBytes) return;
  }
  bytes_ += bytes;
  auto entry = std::make_unique<Entry>();
  Entry* ra = entry.get();
  entries_[&p] = std::move(entry);
  ra->offset = offset;
  ra->count = count;
  ra->started_ms = uv_now(loop_);
  ra->budget_bytes = bytes;
  ra->as = as;
  offsets_.poll(p, iggy::PollingStrategy::offset(static_cast<uint64_t>(offset)), count,
                [this, pp = &p, ra, as](Result<iggy::PolledMessages> r) {
                  PartitionOffsets& p = *pp;
                  if (find(p) != ra) return;  // dropped meanwhile
                  if (r) observe_poll(p, *r);
                  if (ra->waiting.empty()) {
                    ra->reply = std::move(r);
                    return;
                  }
                  // Fetches already wait for it: the first takes the reply, any other polls for
                  // itself, and after a failure every one of them does (their own poll reports
                  // real errors).
                  auto waiting = std::move(ra->waiting);
                  const int64_t offset = ra->offset;
                  const uint32_t count = ra->count;
                  drop(p);
                  size_t first = 0;
                  if (r) waiting[first++](std::move(r));
                  for (size_t i = first; i < waiting.size(); ++i)
                    offsets_.poll(p, iggy::PollingStrategy::offset(static_cast<uint64_t>(offset)), count,
                                  std::move(waiting[i]), as);
                }, as);
}

}  // namespace kib::bridge
