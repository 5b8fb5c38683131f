// Integration tier: real iggy-server started by tests/support/iggy_harness, the bridge driven
// over TCP. Tests that need Iggy are skipped (and say "SKIPPED: no iggy-server") without one.
#define BOOST_TEST_MODULE kafka_iggy_bridge_integration
#include <boost/test/unit_test.hpp>
