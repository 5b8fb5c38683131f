#!/usr/bin/env node
// kafkajs's transactional producer for tests/clients/test_transactions.py (the visibility
// scenario): request JSON on stdin {bootstrap, topic, transactional_id, timeout_ms}; on partition
// 0 of `topic` (created by the caller) it produces plain P0, transaction A (A0..A2) committed,
// plain P1, transaction B (B0, B1) aborted, plain P2, transaction C (C0, C1) committed, plain END.
// Each record is its own send (its own batch), so the offset reported for it is the base offset
// the broker answered for it. Result JSON on stdout: {version, txn_offsets (A0..A2, C0, C1, as
// kafkajs reported them), plain_offsets, errors}. Reading is the caller's.
'use strict'

const { Kafka, logLevel } = require('kafkajs')
const kafkajsVersion = require('kafkajs/package.json').version

async function readStdin() {
  const chunks = []
  for await (const c of process.stdin) chunks.push(c)
  return JSON.parse(Buffer.concat(chunks).toString('utf8'))
}

async function main() {
  const req = await readStdin()
  const out = { version: `kafkajs ${kafkajsVersion}`, txn_offsets: [], plain_offsets: [], errors: [] }
  const kafka = new Kafka({
    clientId: 'kib-txn-tests',
    brokers: [req.bootstrap],
    logLevel: logLevel.ERROR,
    connectionTimeout: 10000,
    requestTimeout: req.timeout_ms,
  })
  const plain = kafka.producer()
  const tx = kafka.producer({ transactionalId: req.transactional_id, idempotent: true, maxInFlightRequests: 1 })
  const one = async (sender, value) => {
    const res = await sender.send({ topic: req.topic, acks: -1, messages: [{ partition: 0, value }] })
    if (res[0].errorCode) throw new Error(`error code ${res[0].errorCode}`)
    return Number(res[0].baseOffset)
  }
  const txn = async (values, commit) => {
    const t = await tx.transaction()
    const offsets = []
    for (const v of values) offsets.push(await one(t, v))
    if (commit) {
      await t.commit()
      out.txn_offsets.push(...offsets)
    } else {
      await t.abort()
    }
  }
  try {
    await plain.connect()
    await tx.connect()
    out.plain_offsets.push(await one(plain, 'P0'))
    await txn(['A0', 'A1', 'A2'], true)
    out.plain_offsets.push(await one(plain, 'P1'))
    await txn(['B0', 'B1'], false)
    out.plain_offsets.push(await one(plain, 'P2'))
    await txn(['C0', 'C1'], true)
    out.plain_offsets.push(await one(plain, 'END'))
  } catch (e) {
    out.errors.push(`${e.name}: ${e.message}`)
  } finally {
    await plain.disconnect()
    await tx.disconnect()
  }
  process.stdout.write(JSON.stringify(out))
}

main().catch(e => {
  process.stderr.write(`kafkajs txn runner failed: ${e.stack || e}\n`)
  process.exit(1)
})
