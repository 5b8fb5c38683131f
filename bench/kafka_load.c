/* kafka-load: librdkafka load generator for bench/run. Speaks only the Kafka protocol, so the
 * same binary drives the bridge and a Kafka broker. Prints one JSON line per run.
 *
 *   kafka-load produce  -b HOST:PORT -t TOPIC [-s SIZE] [-a ACKS] [-z none|lz4|zstd|gzip|snappy]
 *                       [-p PARTITIONS] [-d SECONDS] [-n MAX_MESSAGES] [-k KEYS]
 *       As fast as possible for SECONDS (or N messages), round-robin over the partitions;
 *       then flushes. Throughput counts delivered messages over first send .. last delivery.
 *       With -k, record n has the key "k<n mod KEYS>" (updates of KEYS keys, for compaction).
 *   kafka-load txproduce -b .. -t TOPIC [-s SIZE] [-z ..] [-p PARTITIONS] [-d SECONDS] [-i COMMIT_MS]
 *       As `produce`, in transactions (a transactional id of its own, acks=all): every COMMIT_MS
 *       (100, Kafka Streams' default commit interval) the open transaction is committed and the
 *       next one begun. Throughput counts committed messages over first send .. last commit;
 *       the commits' latency (commit_transaction, which flushes the transaction first) beside it.
 *   kafka-load consume  -b .. -t TOPIC [-p PARTITIONS] -n MESSAGES
 *       Reads MESSAGES from the beginning of every partition (assign, no group): catch-up.
 *   kafka-load tail     -b .. -t TOPIC [-s SIZE] [-a ACKS] [-p PARTITIONS] [-d SECONDS] [-n MAX_MESSAGES]
 *       Tailing: a consumer assigned at the end of every partition (its high watermark, queried
 *       first), polling for a second; then a producer thread in the same process writes as
 *       `produce` does (linger 5 ms, round-robin) for SECONDS, and the consumer reads until it
 *       has every delivered message. Throughput = messages consumed over first .. last consumed
 *       message; the producer's own rate and the consumer's lag behind the last delivery are
 *       printed beside it.
 *   kafka-load latency  -b .. -t TOPIC [-s SIZE] [-a ACKS] [-r RATE] [-d SECONDS]
 *       One producer (linger 0) at RATE msg/s to partition 0 and one consumer on the same
 *       partition: produce latency (send -> delivery report) and end-to-end latency (send ->
 *       consumed), p50/p99/p999, after a one-second warm-up.
 *   kafka-load commit   -b .. -t TOPIC [-c THREADS] [-d SECONDS]
 *       THREADS consumers, each of its own group, commit offsets synchronously in a loop
 *       (OffsetCommit as a simple consumer, generation -1): commits per second in total.
 *
 *   -X KEY=VALUE (repeatable, any mode) sets a librdkafka property on every client, e.g.
 *   -X security.protocol=ssl -X ssl.ca.location=ca.pem for the TLS rows of bench/run.
 *   -P letters|json (produce, tail) chooses the payloads:
 *
 * letters (the default): random capital letters (as kafka-producer-perf-test's), 1024 distinct
 * ones cycled, so compression works on realistic-ish data rather than one repeated record.
 * json: 1024 distinct JSON-like events of exactly SIZE bytes (repeated field names, varying
 * numbers, ids, timestamps and words from small vocabularies), which zstd compresses about 3-6x:
 * the storage rows of bench/run. */
#include <errno.h>
#include <inttypes.h>
#include <librdkafka/rdkafka.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static double now_s(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}
static int64_t now_ns(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

struct args {
  const char *mode, *brokers, *topic, *acks, *compression, *payload;
  int size, partitions, threads;
  long long keys; /* -k: record n gets key "k<n % keys>" (0: keyless) */
  double seconds, rate, commit_ms;
  long long messages;
  int nprops;
  const char *props[32];  /* -X KEY=VALUE */
};

static void die(const char *what, const char *why) {
  fprintf(stderr, "kafka-load: %s: %s\n", what, why);
  exit(1);
}

static void set(rd_kafka_conf_t *conf, const char *k, const char *v) {
  char err[512];
  if (rd_kafka_conf_set(conf, k, v, err, sizeof err) != RD_KAFKA_CONF_OK) die(k, err);
}

static void quiet_log(const rd_kafka_t *rk, int level, const char *fac, const char *buf) {
  (void)rk;
  if (level <= 3) fprintf(stderr, "librdkafka %s: %s\n", fac, buf);
}

static rd_kafka_conf_t *base_conf(const struct args *a) {
  rd_kafka_conf_t *conf = rd_kafka_conf_new();
  set(conf, "bootstrap.servers", a->brokers);
  set(conf, "client.id", "kafka-load");
  for (int i = 0; i < a->nprops; ++i) {
    char kv[1024];
    snprintf(kv, sizeof kv, "%s", a->props[i]);
    char *eq = strchr(kv, '=');
    if (!eq) die("-X", "expected KEY=VALUE");
    *eq = 0;
    set(conf, kv, eq + 1);
  }
  rd_kafka_conf_set_log_cb(conf, quiet_log);
  return conf;
}

#define PAYLOADS 1024
static const char *const kEvents[] = {"page_view", "search", "add_to_cart", "remove_from_cart", "checkout",
                                      "purchase", "login", "logout", "refund", "review"};
static const char *const kNames[] = {"alice", "bob", "carol", "dave", "erin", "frank", "grace", "heidi",
                                     "ivan", "judy", "mallory", "niaj", "oscar", "peggy", "rupert", "sybil"};
static const char *const kCountries[] = {"DE", "FR", "US", "GB", "NL", "PL", "ES", "IT", "SE", "JP", "BR", "IN"};
static const char *const kDevices[] = {"ios", "android", "web", "desktop", "tablet"};
static const char *const kWords[] = {"wireless", "cotton", "classic", "organic", "premium", "compact", "blue",
                                     "black", "large", "small", "gift", "sale", "new", "vintage", "steel", "travel"};
#define PICK(arr, s) (arr[(s) % (sizeof arr / sizeof arr[0])])

static unsigned next_rand(unsigned *s) {
  *s = *s * 1103515245u + 12345u;
  return *s >> 8;
}

/* One JSON-like event of exactly `size` bytes (truncated if size is below its fixed fields). */
static void json_payload(char *out, int size, unsigned *s, unsigned i) {
  char buf[16384];
  size_t cap = sizeof buf, n;
  unsigned user = next_rand(s) % 100000, amount = 0;
  n = (size_t)snprintf(buf, cap,
                       "{\"event_id\":%u,\"ts\":\"2026-12-%02uT%02u:%02u:%02u.%03uZ\",\"type\":\"%s\","
                       "\"user\":{\"id\":%u,\"name\":\"%s\",\"email\":\"%s.%u@example.com\",\"country\":\"%s\","
                       "\"device\":\"%s\",\"premium\":%s},\"session\":\"%08x\",\"items\":[",
                       1000000 + i, 1 + next_rand(s) % 28, next_rand(s) % 24, next_rand(s) % 60, next_rand(s) % 60,
                       next_rand(s) % 1000, PICK(kEvents, next_rand(s)), user, PICK(kNames, user), PICK(kNames, user),
                       user, PICK(kCountries, next_rand(s)), PICK(kDevices, next_rand(s)),
                       next_rand(s) % 4 ? "false" : "true", next_rand(s));
  for (int item = 0; n + 160 < (size_t)size && n + 200 < cap; ++item) {
    unsigned qty = 1 + next_rand(s) % 5, cents = 199 + next_rand(s) % 20000;
    amount += qty * cents;
    n += (size_t)snprintf(buf + n, cap - n,
                          "%s{\"sku\":\"SKU-%05u\",\"name\":\"%s %s\",\"qty\":%u,\"price\":%u.%02u,"
                          "\"category\":\"%s\"}",
                          item ? "," : "", next_rand(s) % 20000, PICK(kWords, next_rand(s)),
                          PICK(kWords, next_rand(s)), qty, cents / 100, cents % 100, PICK(kWords, next_rand(s)));
  }
  n += (size_t)snprintf(buf + n, cap - n, "],\"total\":%u.%02u,\"note\":\"", amount / 100, amount % 100);
  while (n + 24 < cap && n + 2 < (size_t)size) {
    n += (size_t)snprintf(buf + n, cap - n, "%s ", PICK(kWords, next_rand(s)));
  }
  /* The words reached size - 2 (or the fixed fields alone exceed size): cut there and close. */
  if (size >= 2) memcpy(buf + size - 2, "\"}", 2);
  memcpy(out, buf, (size_t)size);
}

static char *make_payloads(const struct args *a) {
  int size = a->size;
  char *p = malloc((size_t)size * PAYLOADS + 1);
  unsigned s = 12345;
  if (a->payload && !strcmp(a->payload, "json")) {
    if (size > 8192) die("-P json", "at most 8192 bytes per record");
    for (unsigned i = 0; i < PAYLOADS; ++i) json_payload(p + (size_t)i * (size_t)size, size, &s, i);
    return p;
  }
  if (a->payload && strcmp(a->payload, "letters")) die("-P", "expected letters or json");
  for (size_t i = 0; i < (size_t)size * PAYLOADS; ++i) {
    s = s * 1103515245u + 12345u;
    p[i] = (char)('A' + (s >> 16) % 26);
  }
  return p;
}

static int cmp_i64(const void *x, const void *y) {
  int64_t a = *(const int64_t *)x, b = *(const int64_t *)y;
  return a < b ? -1 : a > b;
}
static double pct_ms(int64_t *v, size_t n, double q) {
  if (n == 0) return -1;
  size_t i = (size_t)(q * (double)(n - 1) + 0.5);
  return (double)v[i] / 1e6;
}

/* ---- produce ------------------------------------------------------------------------------ */

struct produce_state {
  long long delivered, failed;
  double last_delivery;
  char first_error[256];
};

static void produce_dr(rd_kafka_t *rk, const rd_kafka_message_t *m, void *opaque) {
  (void)rk;
  struct produce_state *st = opaque;
  if (m->err) {
    if (!st->failed++) snprintf(st->first_error, sizeof st->first_error, "%s", rd_kafka_err2str(m->err));
  } else {
    st->delivered++;
  }
  st->last_delivery = now_s();
}

/* The producer of `produce`, `tail` and `txproduce`: linger 5 ms, delivery reports counted in
 * `st`; `max_messages` NULL keeps librdkafka's default; `txid` NULL: not transactional. */
static rd_kafka_t *new_producer(const struct args *a, struct produce_state *st, const char *acks,
                                const char *max_messages, const char *max_kbytes, const char *txid) {
  rd_kafka_conf_t *conf = base_conf(a);
  if (txid) set(conf, "transactional.id", txid);
  set(conf, "acks", acks);
  set(conf, "compression.codec", a->compression);
  set(conf, "linger.ms", "5");
  if (max_messages) set(conf, "queue.buffering.max.messages", max_messages);
  set(conf, "queue.buffering.max.kbytes", max_kbytes);
  rd_kafka_conf_set_dr_msg_cb(conf, produce_dr);
  rd_kafka_conf_set_opaque(conf, st);
  char err[512];
  rd_kafka_t *rk = rd_kafka_new(RD_KAFKA_PRODUCER, conf, err, sizeof err);
  if (!rk) die("producer", err);
  return rk;
}

/* Sends record number *sent, round-robin over the partitions. Returns 0 when librdkafka's queue
 * was full (it was polled; try again). */
static int produce_next(rd_kafka_t *rk, rd_kafka_topic_t *t, char *payloads, const struct args *a, long long *sent) {
  char *payload = payloads + (size_t)(*sent % PAYLOADS) * (size_t)a->size;
  int32_t partition = (int32_t)(*sent % a->partitions);
  char key[32];
  int key_len = a->keys > 0 ? snprintf(key, sizeof key, "k%lld", *sent % a->keys) : 0;
  if (rd_kafka_produce(t, partition, 0, payload, (size_t)a->size, key_len ? key : NULL, (size_t)key_len, NULL) == -1) {
    rd_kafka_resp_err_t e = rd_kafka_last_error();
    if (e != RD_KAFKA_RESP_ERR__QUEUE_FULL) die("produce", rd_kafka_err2str(e));
    rd_kafka_poll(rk, 1);
    return 0;
  }
  ++*sent;
  if ((*sent & 1023) == 0) rd_kafka_poll(rk, 0);
  return 1;
}

/* Produces as fast as possible for a->seconds (or a->messages), round-robin over the partitions,
 * then flushes; returns the time of the first send. `produce` and the producer of `tail`. */
static double produce_run(const struct args *a, struct produce_state *st) {
  rd_kafka_t *rk = new_producer(a, st, a->acks, "1000000", "262144", NULL);
  rd_kafka_topic_t *t = rd_kafka_topic_new(rk, a->topic, NULL);
  char *payloads = make_payloads(a);
  long long sent = 0;
  double t0 = now_s(), stop = t0 + a->seconds;
  while ((a->messages <= 0 || sent < a->messages) && (a->seconds <= 0 || (sent & 255) || now_s() < stop))
    produce_next(rk, t, payloads, a, &sent);
  rd_kafka_flush(rk, 120000);
  free(payloads);
  rd_kafka_topic_destroy(t);
  rd_kafka_destroy(rk);
  return t0;
}

static int run_produce(const struct args *a) {
  struct produce_state st = {0};
  double t0 = produce_run(a, &st);
  double elapsed = st.last_delivery - t0;
  printf("{\"tool\": \"librdkafka\", \"mode\": \"produce\", \"topic\": \"%s\", \"size\": %d, \"acks\": \"%s\", "
         "\"compression\": \"%s\", \"partitions\": %d, \"messages\": %lld, \"failed\": %lld, \"seconds\": %.3f, "
         "\"msgs_per_s\": %.1f, \"mb_per_s\": %.3f%s%s%s}\n",
         a->topic, a->size, a->acks, a->compression, a->partitions, st.delivered, st.failed, elapsed,
         st.delivered / elapsed, (double)st.delivered * a->size / 1e6 / elapsed,
         st.failed ? ", \"error\": \"" : "", st.failed ? st.first_error : "", st.failed ? "\"" : "");
  return st.failed ? 1 : 0;
}

/* ---- transactional produce ---------------------------------------------------------------- */

static void tx_check(const char *what, rd_kafka_error_t *e) {
  if (!e) return;
  char why[512];
  snprintf(why, sizeof why, "%s", rd_kafka_error_string(e));
  rd_kafka_error_destroy(e);
  die(what, why);
}

static int run_txproduce(const struct args *a) {
  struct produce_state st = {0};
  char txid[300];
  snprintf(txid, sizeof txid, "kafka-load-%s-%d", a->topic, (int)getpid());
  /* A transaction holds what was sent in its 100 ms plus what waits in the local queue: 8 MiB
   * (not produce's 256 MiB) keeps a commit from flushing seconds of backlog, as an application
   * that produces what it processes would not have. */
  rd_kafka_t *rk = new_producer(a, &st, "all", NULL, "8192", txid);
  tx_check("init_transactions", rd_kafka_init_transactions(rk, 60000));
  rd_kafka_topic_t *t = rd_kafka_topic_new(rk, a->topic, NULL);
  char *payloads = make_payloads(a);
  size_t cap = 4096, ncommits = 0;
  int64_t *commit_ns = malloc(cap * sizeof *commit_ns);
  long long sent = 0;
  double t0 = now_s(), stop = t0 + a->seconds, next_commit = t0 + a->commit_ms / 1000.0, last_commit = t0;
  tx_check("begin_transaction", rd_kafka_begin_transaction(rk));
  for (;;) {
    double now = now_s();
    if (now >= next_commit || now >= stop) {
      int64_t c0 = now_ns();
      tx_check("commit_transaction", rd_kafka_commit_transaction(rk, 60000));
      if (ncommits == cap) commit_ns = realloc(commit_ns, (cap *= 2) * sizeof *commit_ns);
      commit_ns[ncommits++] = now_ns() - c0;
      last_commit = now_s();
      if (last_commit >= stop) break;
      next_commit = last_commit + a->commit_ms / 1000.0;
      tx_check("begin_transaction", rd_kafka_begin_transaction(rk));
    }
    produce_next(rk, t, payloads, a, &sent);
  }
  qsort(commit_ns, ncommits, sizeof *commit_ns, cmp_i64);
  double elapsed = last_commit - t0;
  printf("{\"tool\": \"librdkafka\", \"mode\": \"txproduce\", \"topic\": \"%s\", \"size\": %d, \"acks\": \"all\", "
         "\"compression\": \"%s\", \"partitions\": %d, \"commit_ms\": %.0f, \"messages\": %lld, \"failed\": %lld, "
         "\"transactions\": %zu, \"seconds\": %.3f, \"msgs_per_s\": %.1f, \"mb_per_s\": %.3f, "
         "\"commit_p50_ms\": %.2f, \"commit_p99_ms\": %.2f%s%s%s}\n",
         a->topic, a->size, a->compression, a->partitions, a->commit_ms, st.delivered, st.failed, ncommits, elapsed,
         st.delivered / elapsed, (double)st.delivered * a->size / 1e6 / elapsed, pct_ms(commit_ns, ncommits, 0.5),
         pct_ms(commit_ns, ncommits, 0.99), st.failed ? ", \"error\": \"" : "", st.failed ? st.first_error : "",
         st.failed ? "\"" : "");
  free(commit_ns);
  free(payloads);
  rd_kafka_topic_destroy(t);
  rd_kafka_destroy(rk);
  return st.failed ? 1 : 0;
}

/* ---- consume ------------------------------------------------------------------------------ */

static rd_kafka_t *new_consumer(const struct args *a, const char *group, int fast_fetch) {
  rd_kafka_conf_t *conf = base_conf(a);
  set(conf, "group.id", group);
  set(conf, "enable.auto.commit", "false");
  set(conf, "enable.auto.offset.store", "false");
  set(conf, "enable.partition.eof", "false");
  if (fast_fetch) set(conf, "fetch.wait.max.ms", "100");
  char err[512];
  rd_kafka_t *rk = rd_kafka_new(RD_KAFKA_CONSUMER, conf, err, sizeof err);
  if (!rk) die("consumer", err);
  rd_kafka_poll_set_consumer(rk);
  return rk;
}

static void assign_all(rd_kafka_t *rk, const char *topic, int partitions, int64_t offset) {
  rd_kafka_topic_partition_list_t *l = rd_kafka_topic_partition_list_new(partitions);
  for (int p = 0; p < partitions; ++p) rd_kafka_topic_partition_list_add(l, topic, p)->offset = offset;
  rd_kafka_resp_err_t e = rd_kafka_assign(rk, l);
  if (e) die("assign", rd_kafka_err2str(e));
  rd_kafka_topic_partition_list_destroy(l);
}

static int run_consume(const struct args *a) {
  rd_kafka_t *rk = new_consumer(a, "kafka-load-consume", 0);
  double t0 = now_s(), last = t0, deadline = t0 + 120;
  assign_all(rk, a->topic, a->partitions, RD_KAFKA_OFFSET_BEGINNING);
  long long got = 0, bytes = 0;
  while (got < a->messages && now_s() < deadline) {
    rd_kafka_message_t *m = rd_kafka_consumer_poll(rk, 100);
    if (!m) continue;
    if (m->err) {
      fprintf(stderr, "consume: %s\n", rd_kafka_message_errstr(m));
    } else {
      ++got;
      bytes += (long long)m->len;
      last = now_s();
    }
    rd_kafka_message_destroy(m);
  }
  double elapsed = last - t0;
  printf("{\"tool\": \"librdkafka\", \"mode\": \"consume\", \"topic\": \"%s\", \"partitions\": %d, "
         "\"messages\": %lld, \"seconds\": %.3f, \"msgs_per_s\": %.1f, \"mb_per_s\": %.3f}\n",
         a->topic, a->partitions, got, elapsed, got / elapsed, (double)bytes / 1e6 / elapsed);
  rd_kafka_consumer_close(rk);
  rd_kafka_destroy(rk);
  return got == a->messages ? 0 : 1;
}

/* ---- tail --------------------------------------------------------------------------------- */

struct tail_producer {
  const struct args *a;
  struct produce_state st;
  double t0;
  atomic_int done;
};

static void *tail_produce(void *arg) {
  struct tail_producer *p = arg;
  p->t0 = produce_run(p->a, &p->st);
  atomic_store(&p->done, 1);
  return NULL;
}

static int run_tail(const struct args *a) {
  rd_kafka_t *rk = new_consumer(a, "kafka-load-tail", 0);
  /* Assign at the end: each partition's high watermark, asked of the leader first, so the
   * consumer fetches from there at once (no offset reset in between). */
  rd_kafka_topic_partition_list_t *l = rd_kafka_topic_partition_list_new(a->partitions);
  for (int p = 0; p < a->partitions; ++p) {
    int64_t lo = 0, hi = 0;
    rd_kafka_resp_err_t e = rd_kafka_query_watermark_offsets(rk, a->topic, p, &lo, &hi, 10000);
    if (e) die("query_watermark_offsets", rd_kafka_err2str(e));
    rd_kafka_topic_partition_list_add(l, a->topic, p)->offset = hi;
  }
  rd_kafka_resp_err_t e = rd_kafka_assign(rk, l);
  if (e) die("assign", rd_kafka_err2str(e));
  rd_kafka_topic_partition_list_destroy(l);
  /* A second of polling: the consumer is connected and waiting in a fetch at the end. */
  long long got = 0, bytes = 0;
  for (int i = 0; i < 10; ++i) {
    rd_kafka_message_t *m = rd_kafka_consumer_poll(rk, 100);
    if (!m) continue;
    if (!m->err) ++got;  /* nothing is expected: the topic is empty and nobody writes yet */
    rd_kafka_message_destroy(m);
  }
  long long early = got;
  got = 0;

  struct tail_producer prod = {.a = a};
  atomic_init(&prod.done, 0);
  pthread_t th;
  pthread_create(&th, NULL, tail_produce, &prod);
  double first = 0, last = 0, idle_since = now_s(), deadline = now_s() + a->seconds + 180;
  for (;;) {
    int done = atomic_load(&prod.done);
    if (done && got >= prod.st.delivered) break;
    double now = now_s();
    if (now > deadline || (done && now - idle_since > 15)) break;
    rd_kafka_message_t *m = rd_kafka_consumer_poll(rk, 100);
    if (!m) continue;
    if (m->err) {
      fprintf(stderr, "tail: %s\n", rd_kafka_message_errstr(m));
    } else {
      last = idle_since = now_s();
      if (!got++) first = last;
      bytes += (long long)m->len;
    }
    rd_kafka_message_destroy(m);
  }
  pthread_join(th, NULL);
  double elapsed = last > first ? last - first : 1e-9, produced_s = prod.st.last_delivery - prod.t0;
  printf("{\"tool\": \"librdkafka\", \"mode\": \"tail\", \"topic\": \"%s\", \"size\": %d, \"acks\": \"%s\", "
         "\"partitions\": %d, \"messages\": %lld, \"produced\": %lld, \"failed\": %lld, \"early\": %lld, "
         "\"seconds\": %.3f, \"msgs_per_s\": %.1f, \"mb_per_s\": %.3f, \"producer_msgs_per_s\": %.1f, "
         "\"first_message_after_ms\": %.1f, \"lag_after_last_delivery_ms\": %.1f}\n",
         a->topic, a->size, a->acks, a->partitions, got, prod.st.delivered, prod.st.failed, early, elapsed,
         got / elapsed, (double)bytes / 1e6 / elapsed, produced_s > 0 ? prod.st.delivered / produced_s : 0.0,
         (first - prod.t0) * 1e3, (last - prod.st.last_delivery) * 1e3);
  rd_kafka_consumer_close(rk);
  rd_kafka_destroy(rk);
  return got == prod.st.delivered && !prod.st.failed && !early ? 0 : 1;
}

/* ---- latency ------------------------------------------------------------------------------ */

struct latency_state {
  int64_t *produce, *e2e;
  size_t n_produce, n_e2e, cap;
  int64_t warm_until_ns;
  volatile int done;
  long long failed;
};

static void latency_dr(rd_kafka_t *rk, const rd_kafka_message_t *m, void *opaque) {
  (void)rk;
  struct latency_state *st = opaque;
  if (m->err) {
    st->failed++;
    return;
  }
  int64_t sent;
  memcpy(&sent, m->payload, sizeof sent);
  if (sent >= st->warm_until_ns && st->n_produce < st->cap) st->produce[st->n_produce++] = now_ns() - sent;
}

struct latency_consumer {
  rd_kafka_t *rk;
  struct latency_state *st;
  long long expected;
};

static void *latency_consume(void *arg) {
  struct latency_consumer *c = arg;
  long long got = 0;
  while (!c->st->done || got < c->expected) {
    rd_kafka_message_t *m = rd_kafka_consumer_poll(c->rk, 50);
    if (!m) {
      if (c->st->done == 2) break;
      continue;
    }
    if (!m->err && m->len >= sizeof(int64_t)) {
      int64_t sent;
      memcpy(&sent, m->payload, sizeof sent);
      ++got;
      if (sent >= c->st->warm_until_ns && c->st->n_e2e < c->st->cap) c->st->e2e[c->st->n_e2e++] = now_ns() - sent;
    }
    rd_kafka_message_destroy(m);
  }
  return NULL;
}

static int run_latency(const struct args *a) {
  struct latency_state st = {0};
  st.cap = (size_t)(a->rate * (a->seconds + 2)) + 16;
  st.produce = calloc(st.cap, sizeof(int64_t));
  st.e2e = calloc(st.cap, sizeof(int64_t));

  rd_kafka_t *consumer = new_consumer(a, "kafka-load-latency", 1);
  assign_all(consumer, a->topic, 1, RD_KAFKA_OFFSET_END);
  /* Let the consumer resolve the end offset before the first timed message. */
  for (int i = 0; i < 10; ++i) {
    rd_kafka_message_t *m = rd_kafka_consumer_poll(consumer, 100);
    if (m) rd_kafka_message_destroy(m);
  }

  rd_kafka_conf_t *conf = base_conf(a);
  set(conf, "acks", a->acks);
  set(conf, "linger.ms", "0");
  rd_kafka_conf_set_dr_msg_cb(conf, latency_dr);
  rd_kafka_conf_set_opaque(conf, &st);
  char err[512];
  rd_kafka_t *rk = rd_kafka_new(RD_KAFKA_PRODUCER, conf, err, sizeof err);
  if (!rk) die("producer", err);
  rd_kafka_topic_t *t = rd_kafka_topic_new(rk, a->topic, NULL);

  long long total = (long long)(a->rate * (a->seconds + 1));
  struct latency_consumer lc = {consumer, &st, total};
  pthread_t th;
  pthread_create(&th, NULL, latency_consume, &lc);

  char *payload = make_payloads(a);
  int64_t start = now_ns();
  st.warm_until_ns = start + 1000000000LL;
  const double interval_ns = 1e9 / a->rate;
  for (long long i = 0; i < total; ++i) {
    int64_t due = start + (int64_t)(i * interval_ns);
    int64_t now;
    while ((now = now_ns()) < due) {
      rd_kafka_poll(rk, 0);
      int64_t left = due - now;
      if (left > 200000) usleep((useconds_t)(left / 2000));
    }
    memcpy(payload, &now, sizeof now);
    if (rd_kafka_produce(t, 0, RD_KAFKA_MSG_F_COPY, payload, (size_t)a->size, NULL, 0, NULL) == -1)
      die("produce", rd_kafka_err2str(rd_kafka_last_error()));
    rd_kafka_poll(rk, 0);
  }
  rd_kafka_flush(rk, 60000);
  st.done = 1;
  /* Give the consumer up to 10 s for the tail, then stop it. */
  double wait_until = now_s() + 10;
  while (now_s() < wait_until && st.n_e2e + 16 < st.n_produce) usleep(10000);
  st.done = 2;
  pthread_join(th, NULL);

  qsort(st.produce, st.n_produce, sizeof(int64_t), cmp_i64);
  qsort(st.e2e, st.n_e2e, sizeof(int64_t), cmp_i64);
  printf("{\"tool\": \"librdkafka\", \"mode\": \"latency\", \"topic\": \"%s\", \"size\": %d, \"acks\": \"%s\", "
         "\"rate\": %.0f, \"samples\": %zu, \"e2e_samples\": %zu, \"failed\": %lld, "
         "\"produce_p50_ms\": %.3f, \"produce_p99_ms\": %.3f, \"produce_p999_ms\": %.3f, "
         "\"e2e_p50_ms\": %.3f, \"e2e_p99_ms\": %.3f, \"e2e_p999_ms\": %.3f}\n",
         a->topic, a->size, a->acks, a->rate, st.n_produce, st.n_e2e, st.failed,
         pct_ms(st.produce, st.n_produce, 0.5), pct_ms(st.produce, st.n_produce, 0.99),
         pct_ms(st.produce, st.n_produce, 0.999), pct_ms(st.e2e, st.n_e2e, 0.5), pct_ms(st.e2e, st.n_e2e, 0.99),
         pct_ms(st.e2e, st.n_e2e, 0.999));
  free(payload);
  rd_kafka_topic_destroy(t);
  rd_kafka_destroy(rk);
  rd_kafka_consumer_close(consumer);
  rd_kafka_destroy(consumer);
  return st.failed ? 1 : 0;
}

/* ---- commit ------------------------------------------------------------------------------- */

struct committer {
  const struct args *a;
  int index;
  long long commits, failed;
  double stop;
};

static void *commit_loop(void *arg) {
  struct committer *c = arg;
  char group[64];
  snprintf(group, sizeof group, "kafka-load-commit-%d-%d", (int)getpid(), c->index);
  rd_kafka_t *rk = new_consumer(c->a, group, 0);
  rd_kafka_topic_partition_list_t *l = rd_kafka_topic_partition_list_new(1);
  rd_kafka_topic_partition_t *tp = rd_kafka_topic_partition_list_add(l, c->a->topic, 0);
  int64_t offset = 0;
  while (now_s() < c->stop) {
    tp->offset = ++offset;
    rd_kafka_resp_err_t e = rd_kafka_commit(rk, l, 0);
    if (e) {
      if (!c->failed++) fprintf(stderr, "commit: %s\n", rd_kafka_err2str(e));
    } else {
      c->commits++;
    }
  }
  rd_kafka_topic_partition_list_destroy(l);
  rd_kafka_destroy(rk);
  return NULL;
}

static int run_commit(const struct args *a) {
  struct committer cs[64];
  pthread_t th[64];
  int n = a->threads < 1 ? 1 : a->threads > 64 ? 64 : a->threads;
  double t0 = now_s();
  for (int i = 0; i < n; ++i) {
    cs[i] = (struct committer){a, i, 0, 0, t0 + a->seconds};
    pthread_create(&th[i], NULL, commit_loop, &cs[i]);
  }
  long long commits = 0, failed = 0;
  for (int i = 0; i < n; ++i) {
    pthread_join(th[i], NULL);
    commits += cs[i].commits;
    failed += cs[i].failed;
  }
  double elapsed = now_s() - t0;
  printf("{\"tool\": \"librdkafka\", \"mode\": \"commit\", \"topic\": \"%s\", \"threads\": %d, \"commits\": %lld, "
         "\"failed\": %lld, \"seconds\": %.3f, \"commits_per_s\": %.1f}\n",
         a->topic, n, commits, failed, elapsed, commits / elapsed);
  return failed ? 1 : 0;
}

int main(int argc, char **argv) {
  struct args a = {.brokers = "127.0.0.1:9092", .acks = "1", .compression = "none", .size = 1024,
                   .partitions = 1, .threads = 4, .seconds = 3, .rate = 1000, .commit_ms = 100, .messages = 0};
  if (argc < 2) die("usage", "kafka-load produce|txproduce|consume|tail|latency|commit [options]");
  a.mode = argv[1];
  int opt;
  optind = 2;
  while ((opt = getopt(argc, argv, "b:t:s:a:z:p:d:n:r:c:i:k:X:P:")) != -1) {
    switch (opt) {
      case 'b': a.brokers = optarg; break;
      case 't': a.topic = optarg; break;
      case 's': a.size = atoi(optarg); break;
      case 'a': a.acks = optarg; break;
      case 'z': a.compression = optarg; break;
      case 'p': a.partitions = atoi(optarg); break;
      case 'd': a.seconds = atof(optarg); break;
      case 'n': a.messages = atoll(optarg); break;
      case 'r': a.rate = atof(optarg); break;
      case 'c': a.threads = atoi(optarg); break;
      case 'i': a.commit_ms = atof(optarg); break;
      case 'P': a.payload = optarg; break;
      case 'k': a.keys = atoll(optarg); break;
      case 'X':
        if (a.nprops == (int)(sizeof a.props / sizeof a.props[0])) die("-X", "too many");
        a.props[a.nprops++] = optarg;
        break;
      default: die("usage", "unknown option");
    }
  }
  if (!a.topic) die("usage", "-t TOPIC is required");
  if (a.size < (int)sizeof(int64_t)) a.size = sizeof(int64_t);
  if (a.partitions < 1) a.partitions = 1;
  if (!strcmp(a.mode, "produce")) return run_produce(&a);
  if (!strcmp(a.mode, "txproduce")) return run_txproduce(&a);
  if (!strcmp(a.mode, "consume")) return run_consume(&a);
  if (!strcmp(a.mode, "tail")) return run_tail(&a);
  if (!strcmp(a.mode, "latency")) return run_latency(&a);
  if (!strcmp(a.mode, "commit")) return run_commit(&a);
  die("usage", "mode must be produce, txproduce, consume, tail, latency or commit");
  return 2;
}
