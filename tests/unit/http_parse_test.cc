#include <boost/test/unit_test.hpp>

#include "http/bridge_status.h"
#include "http/http_client.h"
#include "http/http_server.h"

using namespace kib::http;

BOOST_AUTO_TEST_SUITE(http_parsing)

BOOST_AUTO_TEST_CASE(complete_get_is_parsed_with_path_query_and_lowercased_headers) {
  auto r = parse_request("GET /metrics?name=x HTTP/1.1\r\nHost: localhost:9644\r\nAccept:  text/plain \r\n\r\n", 8192);
  BOOST_REQUIRE(r.status == ParseStatus::kComplete);
  BOOST_TEST(r.request.method == "GET");
  BOOST_TEST(r.request.path == "/metrics");
  BOOST_TEST(r.request.query == "name=x");
  BOOST_TEST(r.request.version == "HTTP/1.1");
  BOOST_TEST(r.request.headers.at("host") == "localhost:9644");
  BOOST_TEST(r.request.headers.at("accept") == "text/plain");
}

BOOST_AUTO_TEST_CASE(head_without_blank_line_is_incomplete) {
  BOOST_TEST((parse_request("GET /healthz HTTP/1.1\r\nHost: x\r\n", 8192).status == ParseStatus::kIncomplete));
  BOOST_TEST((parse_request("", 8192).status == ParseStatus::kIncomplete));
  BOOST_TEST((parse_request("GE", 8192).status == ParseStatus::kIncomplete));
}

BOOST_AUTO_TEST_CASE(bare_lf_line_endings_are_tolerated) {
  auto r = parse_request("GET /healthz HTTP/1.0\nUser-Agent: nc\n\n", 8192);
  BOOST_REQUIRE(r.status == ParseStatus::kComplete);
  BOOST_TEST(r.request.headers.at("user-agent") == "nc");
}

BOOST_AUTO_TEST_CASE(oversized_head_is_refused_before_it_completes) {
  std::string big = "GET / HTTP/1.1\r\nX: " + std::string(9000, 'a');
  BOOST_TEST((parse_request(big, 8192).status == ParseStatus::kTooLarge));
  BOOST_TEST((parse_request(big + "\r\n\r\n", 8192).status == ParseStatus::kTooLarge));
  BOOST_TEST((parse_request("GET / HTTP/1.1\r\n\r\n", 18).status == ParseStatus::kComplete));
  BOOST_TEST((parse_request("GET / HTTP/1.1\r\n\r\n", 17).status == ParseStatus::kTooLarge));
}

BOOST_AUTO_TEST_CASE(malformed_requests_are_bad_requests) {
  for (const char* raw : {"GET\r\n\r\n", "GET /x\r\n\r\n", "GET  /x HTTP/1.1\r\n\r\n", "GET x HTTP/1.1\r\n\r\n",
                          "GET /x HTTP/1.1 extra\r\n\r\n", "GET /x HTTX/1.1\r\n\r\n", "G(T /x HTTP/1.1\r\n\r\n",
                          "GET /x HTTP/1.1\r\nNoColon\r\n\r\n", "GET /x HTTP/1.1\r\nA: b\r\n folded\r\n\r\n",
                          "GET /x HTTP/1.1\r\nBad Name: v\r\n\r\n", "GET /a\x01 HTTP/1.1\r\n\r\n"}) {
    BOOST_TEST_CONTEXT(raw) { BOOST_TEST((parse_request(raw, 8192).status == ParseStatus::kBadRequest)); }
  }
}

BOOST_AUTO_TEST_CASE(other_http_versions_are_not_supported) {
  BOOST_TEST((parse_request("GET / HTTP/2.0\r\n\r\n", 8192).status == ParseStatus::kVersionNotSupported));
}

BOOST_AUTO_TEST_CASE(routing_gives_404_for_unknown_paths_and_405_for_other_methods) {
  Handlers h{{"/healthz", [](const Request&) { return Response{200, "text/plain", "ok\n", {}}; }},
             {"/boom", [](const Request&) -> Response { throw std::runtime_error("x"); }}};
  Request req;
  req.method = "GET";
  req.path = "/nope";
  BOOST_TEST(route(h, req).status == 404);
  req.method = "POST";
  BOOST_TEST(route(h, req).status == 404);
  req.path = "/healthz";
  Response r = route(h, req);
  BOOST_TEST(r.status == 405);
  BOOST_REQUIRE(r.headers.size() == 1u);
  BOOST_TEST(r.headers[0].first == "Allow");
  req.method = "HEAD";
  BOOST_TEST(route(h, req).status == 200);
  req.method = "GET";
  req.path = "/boom";
  BOOST_TEST(route(h, req).status == 500);
}

BOOST_AUTO_TEST_CASE(serialized_response_has_length_and_connection_close_and_head_has_no_body) {
  Response r{503, "text/plain; charset=utf-8", "not ready: x\n", {}};
  std::string wire = serialize(r);
  BOOST_TEST(wire.starts_with("HTTP/1.1 503 Service Unavailable\r\n"));
  BOOST_TEST(wire.find("\r\nContent-Length: 13\r\n") != std::string::npos);
  BOOST_TEST(wire.find("\r\nConnection: close\r\n\r\nnot ready: x\n") != std::string::npos);
  std::string head = serialize(r, true);
  BOOST_TEST(head.ends_with("\r\n\r\n"));
  BOOST_TEST(head.find("Content-Length: 13") != std::string::npos);
}

BOOST_AUTO_TEST_CASE(client_parses_its_servers_responses) {
  auto r = parse_response(serialize(Response{200, "text/plain; version=0.0.4", "a 1\n", {{"Allow", "GET"}}}));
  BOOST_REQUIRE(r.ok());
  BOOST_TEST(r->status == 200);
  BOOST_TEST(r->content_type == "text/plain; version=0.0.4");
  BOOST_TEST(r->body == "a 1\n");
  BOOST_TEST(!parse_response("HTTP/1.1 200 OK\r\nContent-Length: 10\r\n\r\nshort").ok());
  BOOST_TEST(!parse_response("SSH-2.0-OpenSSH\r\n\r\n").ok());
  BOOST_TEST(!parse_response("HTTP/1.1 200 OK\r\n").ok());
}

BOOST_AUTO_TEST_CASE(status_sums_samples_by_name_and_reads_the_version) {
  std::string version;
  auto t = sum_samples(
      "# HELP kib_requests_total x\n# TYPE kib_requests_total counter\n"
      "kib_requests_total{api=\"Produce\",version=\"9\"} 3\n"
      "kib_requests_total{api=\"We}ird\\\"\",version=\"1\"} 4\n"
      "kib_connections 2\nkib_build_info{version=\"0.1.0\"} 1\nbroken{a=\"x 1\n",
      &version);
  BOOST_TEST(t.at("kib_requests_total") == 7);
  BOOST_TEST(t.at("kib_connections") == 2);
  BOOST_TEST(version == "0.1.0");
  BOOST_TEST(!t.count("broken"));
}

BOOST_AUTO_TEST_CASE(status_renders_unreachable_and_ready_bridges) {
  BridgeStatus down;
  down.address = "127.0.0.1:1";
  down.error = "connection refused";
  BOOST_TEST(render_status_table(down).find("reachable     no: connection refused") != std::string::npos);
  BOOST_TEST(render_status_json(down) ==
             "{\"address\":\"127.0.0.1:1\",\"reachable\":false,\"error\":\"connection refused\"}\n");
  BridgeStatus up;
  up.address = "127.0.0.1:9644";
  up.reachable = up.ready = true;
  up.totals = {{"kib_connections", 3}, {"kib_iggy_pool_connected", 4}, {"kib_iggy_pool_connections", 4}};
  std::string table = render_status_table(up);
  BOOST_TEST(table.find("ready         yes") != std::string::npos);
  BOOST_TEST(table.find("iggy pool     4/4 connected") != std::string::npos);
  BOOST_TEST(render_status_json(up).find("\"connections\":3,") != std::string::npos);
}

BOOST_AUTO_TEST_SUITE_END()
