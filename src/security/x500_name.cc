#include "security/x500_name.h"

#include <openssl/asn1.h>
#include <openssl/objects.h>

#include <array>
#include <cstdint>
#include <string_view>

namespace kib::security {
namespace {

// The attributes Java's AVAKeyword marks RFC 2253 compliant, by NID.
const char* rfc2253_keyword(int nid) {
  switch (nid) {
    case NID_commonName: return "CN";
    case NID_countryName: return "C";
    case NID_localityName: return "L";
    case NID_stateOrProvinceName: return "ST";
    case NID_organizationName: return "O";
    case NID_organizationalUnitName: return "OU";
    case NID_streetAddress: return "STREET";
    case NID_domainComponent: return "DC";
    case NID_userId: return "UID";
    default: return nullptr;
  }
}

// The value types Java writes as strings (AVA.isDerString, not canonical).
bool is_der_string(int type) {
  switch (type) {
    case V_ASN1_PRINTABLESTRING:
    case V_ASN1_T61STRING:
    case V_ASN1_IA5STRING:
    case V_ASN1_GENERALSTRING:
    case V_ASN1_BMPSTRING:
    case V_ASN1_UTF8STRING: return true;
    default: return false;
  }
}

std::string dotted_oid(const ASN1_OBJECT* obj) {
  std::array<char, 128> buf{};
  int n = OBJ_obj2txt(buf.data(), static_cast<int>(buf.size()), obj, 1);
  if (n < 0) return "?";
  if (static_cast<size_t>(n) < buf.size()) return std::string(buf.data(), static_cast<size_t>(n));
  std::string big(static_cast<size_t>(n) + 1, '\0');
  OBJ_obj2txt(big.data(), n + 1, obj, 1);
  big.resize(static_cast<size_t>(n));
  return big;
}

// The DER encoding of the value (tag, length, contents) in lower-case hex, after "#".
std::string hex_der(const ASN1_STRING* value) {
  std::string out = "#";
  ASN1_TYPE* t = ASN1_TYPE_new();
  if (!t) return out;
  if (ASN1_TYPE_set1(t, ASN1_STRING_type(value), value) == 1) {
    unsigned char* der = nullptr;
    int n = i2d_ASN1_TYPE(t, &der);
    static constexpr char kHex[] = "0123456789abcdef";
    for (int i = 0; i < n; ++i) {
      out += kHex[der[i] >> 4];
      out += kHex[der[i] & 0xf];
    }
    OPENSSL_free(der);
  }
  ASN1_TYPE_free(t);
  return out;
}

// AVA.toRFC2253String's escaping of a string value: the escapees get a backslash, NUL is "\00",
// leading and trailing spaces and carriage returns get a backslash.
std::string escape_value(std::string_view v) {
  static constexpr std::string_view kEscapees = ",=+<>#;\"\\";
  std::string s;
  for (char c : v) {
    if (kEscapees.find(c) != std::string_view::npos) {
      s += '\\';
      s += c;
    } else if (c == '\0') {
      s += "\\00";
    } else {
      s += c;
    }
  }
  size_t lead = 0;
  while (lead < s.size() && (s[lead] == ' ' || s[lead] == '\r')) ++lead;
  size_t trail = s.size();
  while (trail > 0 && (s[trail - 1] == ' ' || s[trail - 1] == '\r')) --trail;
  if (lead == 0 && trail == s.size()) return s;
  std::string out;
  for (size_t i = 0; i < s.size(); ++i) {
    if (i < lead || i >= trail) out += '\\';
    out += s[i];
  }
  return out;
}

std::string ava(const X509_NAME_ENTRY* e) {
  const ASN1_OBJECT* obj = X509_NAME_ENTRY_get_object(e);
  const ASN1_STRING* value = X509_NAME_ENTRY_get_data(e);
  const char* keyword = rfc2253_keyword(OBJ_obj2nid(obj));
  std::string out = keyword ? keyword : dotted_oid(obj);
  out += '=';
  if (!keyword || !is_der_string(ASN1_STRING_type(value))) return out + hex_der(value);
  // Java decodes the value's bytes as UTF-8 whatever the string type.
  std::string_view bytes(reinterpret_cast<const char*>(ASN1_STRING_get0_data(value)),
                         static_cast<size_t>(ASN1_STRING_length(value)));
  return out + escape_value(bytes);
}

}  // namespace

std::string rfc2253_name(const X509_NAME* name) {
  std::string out;
  int n = X509_NAME_entry_count(name);
  // Entries are stored first RDN first; an RDN's AVAs share its set number.
  int i = n - 1;
  while (i >= 0) {
    int set = X509_NAME_ENTRY_set(X509_NAME_get_entry(name, i));
    int first = i;
    while (first > 0 && X509_NAME_ENTRY_set(X509_NAME_get_entry(name, first - 1)) == set) --first;
    if (!out.empty()) out += ',';
    for (int j = first; j <= i; ++j) {
      if (j > first) out += '+';
      out += ava(X509_NAME_get_entry(name, j));
    }
    i = first - 1;
  }
  return out;
}

}  // namespace kib::security
