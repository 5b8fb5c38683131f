// Unit-test tier: no network peers, no Iggy server. Run: build/<BUILD>/unit-tests
#define BOOST_TEST_MODULE kafka_iggy_bridge_unit
#include <boost/test/unit_test.hpp>
