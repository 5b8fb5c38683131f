#!/usr/bin/env node
// kafkajs runner for the client test tier: scenario JSON on stdin -> result JSON on stdout.
// See tests/clients/scenario.py for both formats.
//
// kafkajs limits (reflected in runners' Caps): headers are an object, so duplicate names
// come back grouped (a, a, b), never interleaved; codecs: none, gzip, snappy (kafkajs-snappy,
// pure JS); lz4/zstd need native modules and are left out. kafkajs has no assign(): the
// consumer joins a one-off group (no commits) and reads from the beginning.
//
// Security: the request's "security" (tests/clients/runners/client_security.py has the format)
// becomes kafkajs's `ssl` ({ca, cert, key} read from the PEM files) and `sasl` ({mechanism,
// username, password}). "mode": "metadata" lists the topics the client is shown (admin
// listTopics) or reports the error it got.
'use strict'

const fs = require('fs')
const { Kafka, logLevel, CompressionTypes, CompressionCodecs } = require('kafkajs')
CompressionCodecs[CompressionTypes.Snappy] = require('kafkajs-snappy')
const kafkajsVersion = require('kafkajs/package.json').version

const CODECS = {
  none: CompressionTypes.None,
  gzip: CompressionTypes.GZIP,
  snappy: CompressionTypes.Snappy,
  lz4: CompressionTypes.LZ4,
  zstd: CompressionTypes.ZSTD,
}

const unhx = s => (s === null ? null : Buffer.from(s, 'hex'))
const hx = b => (b === null || b === undefined ? null : Buffer.from(b).toString('hex'))

async function readStdin() {
  const chunks = []
  for await (const c of process.stdin) chunks.push(c)
  return JSON.parse(Buffer.concat(chunks).toString('utf8'))
}

function headersObject(list) {
  const obj = {}
  for (const [name, value] of list) {
    const v = unhx(value)
    if (!(name in obj)) obj[name] = v
    else if (Array.isArray(obj[name])) obj[name].push(v)
    else obj[name] = [obj[name], v]
  }
  return obj
}

function headersList(obj) {
  const out = []
  for (const name of Object.keys(obj || {})) {
    const v = obj[name]
    if (Array.isArray(v)) for (const x of v) out.push([name, hx(x)])
    else out.push([name, hx(v)])
  }
  return out
}

function securityOptions(sec) {
  if (!sec || !sec.protocol || sec.protocol === 'PLAINTEXT') return {}
  const out = {}
  if (sec.protocol === 'SSL' || sec.protocol === 'SASL_SSL') {
    const ssl = {}
    if (sec.ca_file) ssl.ca = [fs.readFileSync(sec.ca_file, 'utf8')]
    if (sec.cert_file) {
      ssl.cert = fs.readFileSync(sec.cert_file, 'utf8')
      ssl.key = fs.readFileSync(sec.key_file, 'utf8')
    }
    out.ssl = Object.keys(ssl).length ? ssl : true
  }
  if (sec.mechanism) {
    out.sasl = { mechanism: sec.mechanism.toLowerCase(), username: sec.username, password: sec.password }
  }
  return out
}

async function listTopics(kafka, out) {
  const admin = kafka.admin()
  try {
    await admin.connect()
    out.topics = (await admin.listTopics()).sort()
  } catch (e) {
    out.errors.push(`${e.name}: ${e.message}`)
  } finally {
    await admin.disconnect()
  }
}

async function main() {
  const req = await readStdin()
  const timeout = req.timeout_ms
  const errors = []
  const out = { client: 'kafkajs', version: `kafkajs ${kafkajsVersion}`, produced: [], consumed: [], errors }
  const kafka = new Kafka({
    clientId: 'kib-client-tests',
    brokers: [req.bootstrap],
    logLevel: logLevel.ERROR,
    connectionTimeout: 10000,
    requestTimeout: timeout,
    // metadata mode reports what the first attempts got (a refused login is not retried anyway)
    retry: { retries: req.mode === 'metadata' ? 1 : 5 },
    ...securityOptions(req.security),
  })
  if (req.mode === 'metadata') {
    const md = { client: out.client, version: out.version, topics: null, errors }
    await listTopics(kafka, md)
    process.stdout.write(JSON.stringify(md))
    return
  }

  if (req.create_topic) {
    const admin = kafka.admin()
    try {
      await admin.connect()
      await admin.createTopics({
        topics: [{ topic: req.topic, numPartitions: 1, replicationFactor: 1 }],
        waitForLeaders: true,
        timeout,
      })
    } catch (e) {
      errors.push(`createTopics: ${e.name}: ${e.message}`)
    } finally {
      await admin.disconnect()
    }
  }

  const records = req.records
  const produced = records.map(() => ({ offset: null, error: 'not sent' }))
  const producer = kafka.producer({ allowAutoTopicCreation: true })
  await producer.connect()
  let i = 0
  while (i < records.length) {
    let j = i
    while (j < records.length && records[j].codec === records[i].codec) j++
    const group = records.slice(i, j)
    try {
      const res = await producer.send({
        topic: req.topic,
        acks: -1,
        timeout,
        compression: CODECS[records[i].codec],
        messages: group.map(r => {
          const m = { partition: req.partition, key: unhx(r.key), value: unhx(r.value), headers: headersObject(r.headers) }
          if (r.timestamp !== null) m.timestamp = String(r.timestamp)
          return m
        }),
      })
      const base = Number(res[0].baseOffset)
      group.forEach((_, k) => { produced[i + k] = { offset: base + k, error: res[0].errorCode ? `error ${res[0].errorCode}` : null } })
    } catch (e) {
      group.forEach((_, k) => { produced[i + k] = { offset: null, error: `${e.name}: ${e.message}` } })
    }
    i = j
  }
  await producer.disconnect()
  out.produced = produced

  const consumer = kafka.consumer({ groupId: `kib-kafkajs-${req.topic}-${process.pid}`, maxWaitTimeInMs: 500 })
  const consumed = out.consumed
  try {
    await consumer.connect()
    await consumer.subscribe({ topics: [req.topic], fromBeginning: true })
    await new Promise((resolve, reject) => {
      const timer = setTimeout(resolve, timeout)
      // A non-retriable error (e.g. TOPIC_AUTHORIZATION_FAILED on fetch) crashes the consumer
      // after run() resolved: report it and end the read instead of waiting for the deadline.
      consumer.on(consumer.events.CRASH, ({ payload }) => {
        clearTimeout(timer)
        reject(payload.error)
      })
      consumer.run({
        autoCommit: false,
        eachMessage: async ({ partition, message }) => {
          if (partition !== req.partition) return
          consumed.push({
            offset: Number(message.offset),
            key: hx(message.key),
            value: hx(message.value),
            headers: headersList(message.headers),
            timestamp: Number(message.timestamp),
            timestamp_type: null,
          })
          if (consumed.length >= (req.consume_count ?? records.length)) { clearTimeout(timer); resolve() }
        },
      }).catch(reject)
    })
  } catch (e) {
    errors.push(`consume: ${e.name}: ${e.message}`)
  } finally {
    await consumer.disconnect()
  }
  process.stdout.write(JSON.stringify(out))
}

main().catch(e => {
  process.stderr.write(`kafkajs runner failed: ${e.stack || e}\n`)
  process.exit(1)
})
