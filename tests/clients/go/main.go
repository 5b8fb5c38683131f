// Transactions with franz-go for tests/clients/test_transactions.py; the Go twin of
// tests/clients/java/TxnClient.java with the same scenarios and the same JSON shape.
//
//	txclient BOOTSTRAP TAG
//
// "visibility" (topic TAG-go-vis, 1 partition): plain P0; txn A (A0..A2) committed; plain P1;
// txn B (B0, B1) flushed then aborted; plain P2; txn C (C0, C1) committed; plain END; then a
// read_committed and a read_uncommitted consumer read partition 0 until END.
//
// "fence_commit" / "fence_send" (topic and transactional id TAG-go-fence-commit or
// TAG-go-fence-send): client 1 begins and produces F0; client 2 with the same id produces G0
// and commits (its InitProducerID fences 1); client 1 tries to commit (fence_send: first
// produces F1), and to abort when the commit failed; the errors are reported (text and Kafka
// error code/name when there is one); a read_committed consumer reads until END.
//
// "eos": consume-transform-produce with a GroupTransactSession (see eos()).
//
//	txclient BOOTSTRAP read TOPIC LAST
//
// reads partition 0 of TOPIC from its start up to offset LAST (read_uncommitted) and prints
// {"records": [[offset, key, value], ...], "error": ...}, keys and values as strings, null for
// Kafka null: the franz-go reader of tests/clients/test_compaction_reads.py.
package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"strconv"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
)

var bootstrap string

type errInfo struct {
	Text string `json:"text"`
	Code int16  `json:"code"` // Kafka error code, 0 when the error is not a Kafka error
	Name string `json:"name"` // e.g. PRODUCER_FENCED; "" when not a Kafka error
}

func info(err error) *errInfo {
	if err == nil {
		return nil
	}
	e := &errInfo{Text: err.Error()}
	var ke *kerr.Error
	if errors.As(err, &ke) {
		e.Code, e.Name = ke.Code, ke.Message
	}
	return e
}

type consumed struct {
	Values  []string `json:"values"`
	Offsets []int64  `json:"offsets"`
	Error   *string  `json:"error"`
}

func client(opts ...kgo.Opt) *kgo.Client {
	base := []kgo.Opt{kgo.SeedBrokers(bootstrap), kgo.RequiredAcks(kgo.AllISRAcks()),
		kgo.RecordPartitioner(kgo.ManualPartitioner()), kgo.ProducerLinger(0),
		kgo.RecordDeliveryTimeout(30 * time.Second), kgo.RequestTimeoutOverhead(10 * time.Second)}
	cl, err := kgo.NewClient(append(base, opts...)...)
	if err != nil {
		panic(err)
	}
	return cl
}

func txClient(txid string) *kgo.Client {
	return client(kgo.TransactionalID(txid), kgo.TransactionTimeout(60*time.Second))
}

func rec(topic, v string) *kgo.Record {
	return &kgo.Record{Topic: topic, Partition: 0, Value: []byte(v)}
}

func createTopic(ctx context.Context, topic string) error {
	return createTopicN(ctx, topic, 1)
}

func createTopicN(ctx context.Context, topic string, partitions int32) error {
	cl := client()
	defer cl.Close()
	req := kmsg.NewPtrCreateTopicsRequest()
	t := kmsg.NewCreateTopicsRequestTopic()
	t.Topic, t.NumPartitions, t.ReplicationFactor = topic, partitions, 1
	req.Topics = append(req.Topics, t)
	req.TimeoutMillis = 30000
	resp, err := req.RequestWith(ctx, cl)
	if err != nil {
		return err
	}
	for _, rt := range resp.Topics {
		if err := kerr.ErrorForCode(rt.ErrorCode); err != nil {
			return fmt.Errorf("CreateTopics %s: %w", rt.Topic, err)
		}
	}
	return nil
}

func consume(ctx context.Context, topic string, level kgo.IsolationLevel) consumed {
	return consumeP(ctx, topic, 0, level)
}

func consumeP(ctx context.Context, topic string, partition int32, level kgo.IsolationLevel) consumed {
	cl := client(kgo.ConsumePartitions(map[string]map[int32]kgo.Offset{topic: {partition: kgo.NewOffset().AtStart()}}),
		kgo.FetchIsolationLevel(level))
	defer cl.Close()
	out := consumed{Values: []string{}, Offsets: []int64{}}
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	for {
		fs := cl.PollFetches(ctx)
		if ctx.Err() != nil {
			s := "no END record within 30 s"
			out.Error = &s
			return out
		}
		end := false
		fs.EachError(func(t string, p int32, err error) {
			if !errors.Is(err, context.DeadlineExceeded) {
				s := fmt.Sprintf("fetch %s/%d: %v", t, p, err)
				out.Error = &s
			}
		})
		fs.EachRecord(func(r *kgo.Record) {
			out.Values = append(out.Values, string(r.Value))
			out.Offsets = append(out.Offsets, r.Offset)
			if string(r.Value) == "END" {
				end = true
			}
		})
		if end {
			return out
		}
	}
}

// readTo: every record of partition 0 from its start until offset last, as [offset, key, value].
func readTo(ctx context.Context, topic string, last int64) map[string]any {
	cl := client(kgo.ConsumePartitions(map[string]map[int32]kgo.Offset{topic: {0: kgo.NewOffset().AtStart()}}))
	defer cl.Close()
	records := [][]any{}
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	text := func(b []byte) any {
		if b == nil {
			return nil
		}
		return string(b)
	}
	for {
		fs := cl.PollFetches(ctx)
		if ctx.Err() != nil {
			return map[string]any{"records": records, "error": fmt.Sprintf("offset %d not reached within 30 s", last)}
		}
		var failed error
		fs.EachError(func(t string, p int32, err error) {
			if !errors.Is(err, context.DeadlineExceeded) {
				failed = fmt.Errorf("fetch %s/%d: %w", t, p, err)
			}
		})
		if failed != nil {
			return map[string]any{"records": records, "error": failed.Error()}
		}
		done := false
		fs.EachRecord(func(r *kgo.Record) {
			records = append(records, []any{r.Offset, text(r.Key), text(r.Value)})
			done = done || r.Offset >= last
		})
		if done {
			return map[string]any{"records": records, "error": nil}
		}
	}
}

func must(err error, what string) {
	if err != nil {
		panic(fmt.Errorf("%s: %w", what, err))
	}
}

func visibility(ctx context.Context, tag string) (res map[string]any) {
	defer func() {
		if r := recover(); r != nil {
			res = map[string]any{"error": fmt.Sprint(r)}
		}
	}()
	topic := tag + "-go-vis"
	must(createTopic(ctx, topic), "create topic")
	plain, tx := client(), txClient(tag+"-go-vis")
	defer plain.Close()
	defer tx.Close()
	var txnOffsets []int64
	send := func(cl *kgo.Client, vs ...string) {
		for _, v := range vs {
			r, err := cl.ProduceSync(ctx, rec(topic, v)).First()
			must(err, "produce "+v)
			if cl == tx {
				txnOffsets = append(txnOffsets, r.Offset)
			}
		}
	}
	txn := func(commit kgo.TransactionEndTry, vs ...string) {
		must(tx.BeginTransaction(), "begin")
		n := len(txnOffsets)
		send(tx, vs...)
		must(tx.Flush(ctx), "flush")
		must(tx.EndTransaction(ctx, commit), "end transaction")
		if commit == kgo.TryAbort {
			txnOffsets = txnOffsets[:n]
		}
	}
	send(plain, "P0")
	txn(kgo.TryCommit, "A0", "A1", "A2")
	send(plain, "P1")
	txn(kgo.TryAbort, "B0", "B1")
	send(plain, "P2")
	txn(kgo.TryCommit, "C0", "C1")
	send(plain, "END")
	return map[string]any{
		"txn_offsets":      txnOffsets,
		"read_committed":   consume(ctx, topic, kgo.ReadCommitted()),
		"read_uncommitted": consume(ctx, topic, kgo.ReadUncommitted()),
	}
}

func fencing(ctx context.Context, tag string, sendFirst bool) (res map[string]any) {
	defer func() {
		if r := recover(); r != nil {
			res = map[string]any{"error": fmt.Sprint(r)}
		}
	}()
	topic := tag + "-go-fence-commit"
	if sendFirst {
		topic = tag + "-go-fence-send"
	}
	txid := topic
	must(createTopic(ctx, topic), "create topic")
	p1 := txClient(txid)
	defer p1.Close()
	must(p1.BeginTransaction(), "p1 begin")
	_, err := p1.ProduceSync(ctx, rec(topic, "F0")).First()
	must(err, "p1 produce F0")
	p2 := txClient(txid)
	must(p2.BeginTransaction(), "p2 begin")
	_, err = p2.ProduceSync(ctx, rec(topic, "G0")).First()
	must(err, "p2 produce G0")
	must(p2.EndTransaction(ctx, kgo.TryCommit), "p2 commit")
	p2.Close()

	var sendErr error
	if sendFirst {
		sctx, cancel := context.WithTimeout(ctx, 30*time.Second)
		_, sendErr = p1.ProduceSync(sctx, rec(topic, "F1")).First()
		cancel()
	}
	cctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	commitErr := p1.EndTransaction(cctx, kgo.TryCommit)
	cancel()
	var abortErr error
	if commitErr != nil {
		actx, cancel := context.WithTimeout(ctx, 30*time.Second)
		abortErr = p1.EndTransaction(actx, kgo.TryAbort)
		cancel()
	}
	plain := client()
	_, err = plain.ProduceSync(ctx, rec(topic, "END")).First()
	plain.Close()
	must(err, "produce END")
	return map[string]any{
		"send": info(sendErr), "commit": info(commitErr), "committed": commitErr == nil, "abort": info(abortErr),
		"read_committed": consume(ctx, topic, kgo.ReadCommitted()),
	}
}

// eos: a GroupTransactSession (group member + transactional producer) reads i0..i2 from
// TAG-go-eos-in, writes o0, o2 to partition 0 and o1 to partition 1 of TAG-go-eos-out and commits
// the group's offset with the transaction (AddOffsetsToTxn + TxnOffsetCommit with the member's
// generation). Reports whether End committed, the group's committed offset (OffsetFetch) and
// what read_committed sees in each output partition.
func eos(ctx context.Context, tag string) (res map[string]any) {
	defer func() {
		if r := recover(); r != nil {
			res = map[string]any{"error": fmt.Sprint(r)}
		}
	}()
	in, out, group := tag+"-go-eos-in", tag+"-go-eos-out", tag+"-go-eos-group"
	must(createTopic(ctx, in), "create input topic")
	must(createTopicN(ctx, out, 2), "create output topic")
	plain := client()
	for i := 0; i < 3; i++ {
		_, err := plain.ProduceSync(ctx, rec(in, fmt.Sprintf("i%d", i))).First()
		must(err, "produce input")
	}
	sess, err := kgo.NewGroupTransactSession(kgo.SeedBrokers(bootstrap), kgo.TransactionalID(tag+"-go-eos"),
		kgo.TransactionTimeout(60*time.Second), kgo.ConsumerGroup(group), kgo.ConsumeTopics(in),
		kgo.FetchIsolationLevel(kgo.ReadCommitted()), kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()),
		kgo.RequireStableFetchOffsets(), kgo.RecordPartitioner(kgo.ManualPartitioner()),
		kgo.RequiredAcks(kgo.AllISRAcks()))
	must(err, "new group transact session")
	var got []*kgo.Record
	pctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	for len(got) < 3 && pctx.Err() == nil {
		fs := sess.PollFetches(pctx)
		fs.EachRecord(func(r *kgo.Record) { got = append(got, r) })
	}
	cancel()
	if len(got) < 3 {
		sess.Close()
		panic(fmt.Sprintf("the session read %d of 3 records", len(got)))
	}
	must(sess.Begin(), "begin")
	for _, r := range got {
		var i int32
		fmt.Sscanf(string(r.Value), "i%d", &i)
		_, err := sess.ProduceSync(ctx, &kgo.Record{Topic: out, Partition: i % 2, Value: []byte(fmt.Sprintf("o%d", i))}).First()
		must(err, "produce output")
	}
	committed, endErr := sess.End(ctx, kgo.TryCommit)
	sess.Close()
	req := kmsg.NewPtrOffsetFetchRequest()
	req.Group = group
	t := kmsg.NewOffsetFetchRequestTopic()
	t.Topic, t.Partitions = in, []int32{0}
	req.Topics = append(req.Topics, t)
	resp, err := req.RequestWith(ctx, plain)
	must(err, "offset fetch")
	offset := int64(-2)
	for _, rt := range resp.Topics {
		for _, rp := range rt.Partitions {
			offset = rp.Offset
		}
	}
	for _, p := range []int32{0, 1} {
		_, err := plain.ProduceSync(ctx, &kgo.Record{Topic: out, Partition: p, Value: []byte("END")}).First()
		must(err, "produce END")
	}
	plain.Close()
	return map[string]any{"end_committed": committed, "end_error": info(endErr), "committed": offset,
		"out0": consumeP(ctx, out, 0, kgo.ReadCommitted()), "out1": consumeP(ctx, out, 1, kgo.ReadCommitted())}
}

func main() {
	bootstrap = os.Args[1]
	tag := os.Args[2]
	ctx, cancel := context.WithTimeout(context.Background(), 150*time.Second)
	defer cancel()
	if tag == "read" && len(os.Args) == 5 {
		last, err := strconv.ParseInt(os.Args[4], 10, 64)
		must(err, "LAST")
		b, _ := json.Marshal(readTo(ctx, os.Args[3], last))
		fmt.Println(string(b))
		return
	}
	out := map[string]any{"visibility": visibility(ctx, tag), "fence_commit": fencing(ctx, tag, false),
		"fence_send": fencing(ctx, tag, true), "eos": eos(ctx, tag)}
	b, _ := json.Marshal(out)
	fmt.Println(string(b))
}
