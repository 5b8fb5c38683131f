"""Client-neutral security settings -> each client's own configuration.

A scenario request may carry "security" (harness/security.py builds it):

    {"protocol": "SASL_SSL" | "SSL" | "SASL_PLAINTEXT" | "PLAINTEXT",
     "mechanism": "SCRAM-SHA-512" | "SCRAM-SHA-256" | "PLAIN" | None,
     "username": str | None, "password": str | None,
     "ca_file": PEM path | None,            # the CA the server certificate is checked against
     "cert_file": PEM path | None, "key_file": PEM path | None,   # client certificate and key
     "keystore_file": PEM path | None}      # key + certificate in one file (Java's PEM keystore)

No "security" (or None) means PLAINTEXT with nothing set, as before. Every runner maps it with
the functions here (kcat and confluent-kafka share librdkafka's names; the Java runner and the
console tools share kafka-clients' properties); kafkajs's mapping is in node/scenario.js.

This module has no package-relative imports: the out-of-process runners import it as a
top-level module (their directory is on sys.path when run as scripts).
"""
from __future__ import annotations


def _protocol(sec: dict | None) -> str:
    return (sec or {}).get("protocol") or "PLAINTEXT"


def librdkafka(sec: dict | None) -> dict[str, str]:
    """librdkafka properties (kcat -X, confluent-kafka): security.protocol, sasl.mechanisms,
    sasl.username/password, ssl.ca.location, ssl.certificate.location, ssl.key.location."""
    if not sec:
        return {}
    out = {"security.protocol": _protocol(sec).lower()}
    if sec.get("mechanism"):
        out["sasl.mechanisms"] = sec["mechanism"]
        out["sasl.username"] = sec["username"]
        out["sasl.password"] = sec["password"]
    if sec.get("ca_file"):
        out["ssl.ca.location"] = sec["ca_file"]
    if sec.get("cert_file"):
        out["ssl.certificate.location"] = sec["cert_file"]
        out["ssl.key.location"] = sec["key_file"]
    return out


def _jaas_quote(s: str) -> str:
    return '"' + s.replace("\\", "\\\\").replace('"', '\\"') + '"'


def java_properties(sec: dict | None) -> dict[str, str]:
    """kafka-clients properties (Scenario.java, the console tools' --producer.config /
    --consumer.config / --command-config): security.protocol, sasl.mechanism, sasl.jaas.config,
    ssl.truststore.type=PEM + location, ssl.keystore.type=PEM + location."""
    if not sec:
        return {}
    out = {"security.protocol": _protocol(sec)}
    mech = sec.get("mechanism")
    if mech:
        module = ("org.apache.kafka.common.security.plain.PlainLoginModule" if mech == "PLAIN"
                  else "org.apache.kafka.common.security.scram.ScramLoginModule")
        out["sasl.mechanism"] = mech
        out["sasl.jaas.config"] = (f"{module} required username={_jaas_quote(sec['username'])} "
                                   f"password={_jaas_quote(sec['password'])};")
    if sec.get("ca_file"):
        out["ssl.truststore.type"] = "PEM"
        out["ssl.truststore.location"] = sec["ca_file"]
    if sec.get("keystore_file"):
        out["ssl.keystore.type"] = "PEM"
        out["ssl.keystore.location"] = sec["keystore_file"]
    return out


def properties_text(props: dict[str, str]) -> str:
    """A java.util.Properties file: keys and values escaped as Properties.load reads them."""
    def esc(s: str, key: bool) -> str:
        out = []
        for i, ch in enumerate(s):
            if ch in "\\#!=:" or (ch == " " and (key or i == 0)):
                out.append("\\" + ch)
            elif ch == "\n":
                out.append("\\n")
            elif ch == "\t":
                out.append("\\t")
            elif ord(ch) > 0x7e or ord(ch) < 0x20:
                out.append(f"\\u{ord(ch):04x}")
            else:
                out.append(ch)
        return "".join(out)
    return "".join(f"{esc(k, True)}={esc(v, False)}\n" for k, v in props.items())


def kafka_python(sec: dict | None) -> dict:
    """kafka-python keyword arguments: security_protocol, sasl_mechanism,
    sasl_plain_username/password, ssl_cafile, ssl_certfile, ssl_keyfile."""
    if not sec:
        return {}
    out: dict = {"security_protocol": _protocol(sec)}
    if sec.get("mechanism"):
        out["sasl_mechanism"] = sec["mechanism"]
        out["sasl_plain_username"] = sec["username"]
        out["sasl_plain_password"] = sec["password"]
    if sec.get("ca_file"):
        out["ssl_cafile"] = sec["ca_file"]
    if sec.get("cert_file"):
        out["ssl_certfile"] = sec["cert_file"]
        out["ssl_keyfile"] = sec["key_file"]
    return out
