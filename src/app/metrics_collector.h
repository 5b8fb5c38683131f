// What /metrics shows of the running bridge that its objects count themselves (the TCP and HTTP
// servers, the Iggy pool, the state store, the services): copied into the metric families at
// scrape time (metrics::Registry::on_collect), one function per area. The families are defined
// in metrics/; this is the one place that knows both them and the objects.
#pragma once

#include <memory>
#include <vector>

namespace kib {
namespace kafka {
class KafkaServer;
}
namespace http {
class HttpServer;
}
namespace iggy {
class IggyPool;
}
namespace state {
class StateStore;
}
namespace net {
class TlsContext;
}
class MemoryReleaser;
namespace app {
class ConsumerLagMonitor;
class ServiceGraph;
}  // namespace app

// The objects a scrape reads; those that may be absent (no HTTP listener, no TLS listener, not
// yet started) are pointers.
struct MetricSources {
  const kafka::KafkaServer* kafka = nullptr;
  const http::HttpServer* http = nullptr;
  const iggy::IggyPool* iggy = nullptr;
  const state::StateStore* state = nullptr;
  const app::ServiceGraph* services = nullptr;
  const MemoryReleaser* memory = nullptr;
  const app::ConsumerLagMonitor* lag = nullptr;
  const std::vector<std::shared_ptr<const net::TlsContext>>* tls = nullptr;
};

// Copies every source's counters into its families.
void collect_metrics(const MetricSources& s);

}  // namespace kib
