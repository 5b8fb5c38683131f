// Escaping client strings for logs and terminals, and bounding strings sent back to clients.
#include <boost/test/unit_test.hpp>

#include <string>

#include <fmt/format.h>

#include "common/text.h"

using kib::esc;
using kib::escape;
using kib::truncate_message;
using kib::utf8_prefix;

BOOST_AUTO_TEST_SUITE(common_text)

BOOST_AUTO_TEST_CASE(printable_ascii_and_valid_utf8_pass_unchanged) {
  BOOST_TEST(escape("consumer-1 (orders) \\ x") == "consumer-1 (orders) \\ x");
  BOOST_TEST(escape("gr\u00fc\u00dfe-\u20ac-\U0001F600") == "gr\u00fc\u00dfe-\u20ac-\U0001F600");
  BOOST_TEST(escape("") == "");
}

BOOST_AUTO_TEST_CASE(control_characters_and_del_become_hex) {
  BOOST_TEST(escape(std::string("a\x1b[2Jb")) == "a\\x1b[2Jb");
  BOOST_TEST(escape("line1\nINFO forged line\r\t") == "line1\\x0aINFO forged line\\x0d\\x09");
  BOOST_TEST(escape(std::string("nul\0x", 5)) == "nul\\x00x");
  BOOST_TEST(escape("del\x7f") == "del\\x7f");
}

BOOST_AUTO_TEST_CASE(c1_controls_and_bidi_overrides_become_hex_bytes) {
  BOOST_TEST(escape("csi\u009b31m") == "csi\\xc2\\x9b31m");          // U+009B, a one-character CSI
  BOOST_TEST(escape("evil\u202etxt.exe") == "evil\\xe2\\x80\\xaetxt.exe");  // RIGHT-TO-LEFT OVERRIDE
  BOOST_TEST(escape("iso\u2066late") == "iso\\xe2\\x81\\xa6late");
}

BOOST_AUTO_TEST_CASE(invalid_utf8_becomes_hex_byte_by_byte) {
  BOOST_TEST(escape("\xff\xfe") == "\\xff\\xfe");
  BOOST_TEST(escape("\xc3(") == "\\xc3(");               // truncated 2-byte sequence
  BOOST_TEST(escape("\xc0\xaf") == "\\xc0\\xaf");        // overlong '/'
  BOOST_TEST(escape("\xed\xa0\x80") == "\\xed\\xa0\\x80");  // UTF-16 surrogate
  BOOST_TEST(escape("\xf4\x90\x80\x80") == "\\xf4\\x90\\x80\\x80");  // above U+10FFFF
}

BOOST_AUTO_TEST_CASE(escaping_is_idempotent) {
  const std::string once = escape("a\x1b\n\xff\u202e b");
  BOOST_TEST(escape(once) == once);
}

BOOST_AUTO_TEST_CASE(long_input_is_cut_with_its_size) {
  const std::string s(1000, 'x');
  BOOST_TEST(escape(s, 10) == "xxxxxxxxxx\u2026(1000 bytes)");
  // The cut never splits a character.
  BOOST_TEST(escape("aaaaaaaaa\u20ac", 10) == "aaaaaaaaa\u2026(12 bytes)");
  // The default bound for one log field.
  BOOST_TEST(escape(std::string(32'700, 'c')).size() < 300u);
}

BOOST_AUTO_TEST_CASE(esc_formats_lazily_in_fmt) {
  BOOST_TEST(fmt::format("client={}", esc("a\nb")) == "client=a\\x0ab");
  BOOST_TEST(fmt::format("client={}", esc(std::string(600, 'y'), 4)) == "client=yyyy\u2026(600 bytes)");
}

BOOST_AUTO_TEST_CASE(utf8_prefix_cuts_at_character_boundaries) {
  BOOST_TEST(utf8_prefix("abc", 10) == "abc");
  BOOST_TEST(utf8_prefix("abc", 2) == "ab");
  BOOST_TEST(utf8_prefix("a\u20ac", 3) == "a");       // 1 + 3 bytes: the euro sign would be split
  BOOST_TEST(utf8_prefix("a\u20ac", 4) == "a\u20ac");
  BOOST_TEST(utf8_prefix("\xff\xff\xff", 2) == "\xff\xff");  // invalid bytes count one each
}

BOOST_AUTO_TEST_CASE(truncated_messages_fit_the_bound_and_say_how_long_they_were) {
  BOOST_TEST(truncate_message("short") == "short");
  const std::string big = "Invalid value " + std::string(40'000, 'v');
  const std::string t = truncate_message(big);
  BOOST_TEST(t.size() <= kib::kMaxErrorMessageBytes);
  BOOST_TEST(t.rfind("Invalid value vvv", 0) == 0);
  BOOST_TEST(t.find("\u2026(40014 bytes)") != std::string::npos);
  // UTF-8 safe: a message of 3-byte characters is cut between characters.
  std::string euros;
  for (int i = 0; i < 1000; ++i) euros += "\u20ac";
  const std::string te = truncate_message(euros, 100);
  BOOST_TEST(te.size() <= 100u);
  BOOST_TEST(escape(te, 1000).find("\\x") == std::string::npos);  // still valid UTF-8
}

BOOST_AUTO_TEST_SUITE_END()
