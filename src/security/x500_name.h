// A certificate's subject as Java's X500Principal.getName() writes it (RFC 2253), the string
// Kafka's DefaultKafkaPrincipalBuilder hands to ssl.principal.mapping.rules: the RDNs last to
// first, joined by ","; the AVAs of a multi-valued RDN joined by "+" in their encoded order;
// the keywords CN, C, L, ST, O, OU, STREET, DC and UID, any other attribute as its dotted OID
// with the value's DER encoding in lower-case hex ("1.2.840.113549.1.9.1=#1611...");
// string values with , = + < > # ; " \ escaped by a backslash, leading and trailing spaces too.
#pragma once

#include <openssl/x509.h>

#include <string>

namespace kib::security {

std::string rfc2253_name(const X509_NAME* name);

}  // namespace kib::security
