// Golden wire tier: the bridge's Iggy encoders and decoders against vectors the published
// iggy_binary_protocol crates produced (tools/iggy-golden). Run by `tools/run-tests --only golden`,
// which builds the generator and sets KIB_IGGY_GOLDEN_JSON; see docs/iggy-client.md.
#define BOOST_TEST_MODULE kafka_iggy_bridge_iggy_golden
#include <boost/test/unit_test.hpp>
