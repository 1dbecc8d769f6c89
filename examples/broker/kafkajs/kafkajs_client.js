// kafkajs against kaas-broker (run by ../kafkajs_test.sh):
//   node kafkajs_client.js BOOTSTRAP produce|group|txn|admin
// Prints "ok: ..." lines and exits 0, or prints "FAIL: ..." and exits 1.
// No sleeps: every wait is on an event (a group join, a message count) with
// a timeout.
'use strict';

const {Kafka, CompressionTypes, logLevel} = require('kafkajs');

const [bootstrap, section] = process.argv.slice(2);
const kafka = new Kafka({
  clientId: 'kaas-kafkajs-test',
  brokers: [bootstrap],
  logLevel: process.env.KAFKAJS_DEBUG ? logLevel.DEBUG : logLevel.WARN,
  retry: {retries: 5},
});

function fail(msg) {
  console.log(`FAIL: ${msg}`);
  process.exit(1);
}

// Resolves when check() is true, re-evaluated by poke(); rejects after ms.
function waiter(what, ms, check) {
  let poke;
  const p = new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`timed out: ${what}`)), ms);
    poke = () => {
      if (check()) {
        clearTimeout(timer);
        resolve();
      }
    };
  });
  return {promise: p, poke: () => poke()};
}

function recordString(key, value, headers) {
  const h = Object.keys(headers || {}).sort().map(
      (k) => `${k}=${headers[k] === null ? 'null' : headers[k].toString()}`);
  return `key=${key === null ? 'null' : key.toString()} value=${
    value === null ? 'null' : value.toString()} headers=[${h.join(',')}]`;
}

// Consumes `topic` from the beginning in `groupId` until `want` records
// arrived; returns their recordString()s.
async function consumeAll(topic, groupId, want, opts = {}) {
  const consumer = kafka.consumer({groupId, ...opts});
  const got = [];
  const w = waiter(`${want} records of ${topic}`, 60000, () => got.length >= want);
  await consumer.connect();
  await consumer.subscribe({topics: [topic], fromBeginning: true});
  await consumer.run({
    eachMessage: async ({message}) => {
      got.push(recordString(message.key, message.value, message.headers));
      w.poke();
    },
  });
  await w.promise;
  await consumer.disconnect();
  return got;
}

async function produce() {
  const topic = 'kafkajs-produce';
  const producer = kafka.producer({allowAutoTopicCreation: true});
  await producer.connect();
  const want = [];
  const cases = [
    {acks: -1, compression: CompressionTypes.None},
    {acks: 1, compression: CompressionTypes.None},
    {acks: 0, compression: CompressionTypes.None},
    {acks: -1, compression: CompressionTypes.GZIP},
  ];
  for (const [c, {acks, compression}] of cases.entries()) {
    const messages = [];
    for (let i = 0; i < 5; i++) {
      const m = {
        key: i % 2 === 0 ? `k${c}-${i}` : null,
        value: `case ${c} acks ${acks} codec ${compression} msg ${i}`,
        partition: 0,
      };
      if (i % 3 !== 2) m.headers = {h1: `v${i}`, 'h-two': `c${c}`};
      messages.push(m);
      want.push(recordString(m.key, m.value, m.headers));
    }
    const res = await producer.send({topic, acks, compression, messages});
    if (acks !== 0 && !(res.length === 1 && res[0].errorCode === 0)) {
      fail(`produce acks=${acks}: ${JSON.stringify(res)}`);
    }
  }
  await producer.disconnect();
  console.log(`ok: produced ${want.length} records with acks -1, 1, 0 and gzip`);
  const got = await consumeAll(topic, 'kafkajs-produce-group', want.length);
  if (JSON.stringify(got) !== JSON.stringify(want)) {
    fail(`consumed records differ:\n got ${got.join('\n     ')}\n want ${
      want.join('\n     ')}`);
  }
  console.log(`ok: a group consumer read all ${got.length} records back, ` +
              'keys, values and headers equal');
}

async function group() {
  const topic = 'kafkajs-group';
  const groupId = 'kafkajs-two-members';
  const partitions = 4;
  const admin = kafka.admin();
  await admin.connect();
  const created = await admin.createTopics(
      {topics: [{topic, numPartitions: partitions}], waitForLeaders: true});
  if (!created) fail('createTopics returned false');
  const meta = await admin.fetchTopicMetadata({topics: [topic]});
  if (meta.topics[0].partitions.length !== partitions) {
    fail(`metadata has ${meta.topics[0].partitions.length} partitions`);
  }
  console.log(`ok: admin created ${topic} with ${partitions} partitions`);

  const producer = kafka.producer();
  await producer.connect();
  const total = 200;

  // Two members; each records its assignment at every group join.
  const seen = new Map();  // value -> count
  const perMember = [0, 0];
  const assignments = [{}, {}];
  const consumed = waiter(`${total} records by two members`, 60000,
                          () => seen.size >= total);
  const balanced = waiter('both members assigned', 60000, () => {
    const a = assignments.map((x) => (x[topic] || []).length);
    return a[0] > 0 && a[1] > 0 && a[0] + a[1] === partitions;
  });
  const members = [0, 1].map((n) => {
    const c = kafka.consumer({groupId, heartbeatInterval: 500,
                              sessionTimeout: 10000, rebalanceTimeout: 20000});
    c.on(c.events.GROUP_JOIN, (e) => {
      assignments[n] = e.payload.memberAssignment;
      balanced.poke();
    });
    return c;
  });
  let stopCounting = false;
  for (const c of members) {
    await c.connect();
    await c.subscribe({topics: [topic], fromBeginning: true});
  }
  // The records are produced once both members hold partitions, to every
  // partition, so each member must get some; each value exactly once.
  for (const [n, c] of members.entries()) {
    await c.run({
      eachMessage: async ({message}) => {
        if (stopCounting) return;
        const v = message.value.toString();
        seen.set(v, (seen.get(v) || 0) + 1);
        perMember[n]++;
        consumed.poke();
      },
    });
  }
  await balanced.promise;
  console.log(`ok: both members assigned after the rebalance: ${
    assignments.map((a) => JSON.stringify(a[topic].slice().sort())).join(' and ')}`);
  const messages = [];
  for (let i = 0; i < total; i++) {
    messages.push({key: `key-${i}`, value: `m${i}`, partition: i % partitions});
  }
  await producer.send({topic, acks: -1, messages});
  await consumed.promise;
  if (perMember[0] === 0 || perMember[1] === 0) {
    fail(`one member consumed nothing: ${JSON.stringify(perMember)}`);
  }
  const dups = [...seen.entries()].filter(([, n]) => n !== 1);
  if (dups.length) fail(`consumed more than once: ${JSON.stringify(dups.slice(0, 5))}`);
  console.log(`ok: the two members consumed all ${total} records exactly once ` +
              `(${perMember[0]} and ${perMember[1]})`);
  stopCounting = true;
  for (const c of members) await c.disconnect();

  // Committed offsets: the group's offsets are the ends of the partitions.
  const offsets = await admin.fetchOffsets({groupId, topics: [topic]});
  const sum = offsets[0].partitions.reduce((s, p) => s + Number(p.offset), 0);
  if (sum !== total) fail(`committed offsets sum to ${sum}: ${JSON.stringify(offsets)}`);

  // More records, then a new member of the same group: it must get only them.
  const more = [];
  for (let i = 0; i < 20; i++) {
    more.push({key: `late-${i}`, value: `late${i}`, partition: i % partitions});
  }
  await producer.send({topic, acks: -1, messages: more});
  const late = kafka.consumer({groupId});
  const lateGot = [];
  const lateW = waiter('the new member\'s 20 records', 60000,
                       () => lateGot.length >= more.length);
  await late.connect();
  await late.subscribe({topics: [topic], fromBeginning: true});
  await late.run({
    eachMessage: async ({message}) => {
      lateGot.push(message.value.toString());
      lateW.poke();
    },
  });
  await lateW.promise;
  await late.disconnect();
  const bad = lateGot.filter((v) => !v.startsWith('late'));
  if (bad.length || new Set(lateGot).size !== more.length) {
    fail(`the new member read ${JSON.stringify(lateGot)}`);
  }
  console.log('ok: a new member of the group resumed at the committed offsets ' +
              `(${lateGot.length} new records, none of the old)`);
  await producer.disconnect();
  await admin.disconnect();
}

async function txn() {
  const topic = 'kafkajs-txn';
  const producer = kafka.producer({
    transactionalId: 'kafkajs-txn-producer',
    idempotent: true,
    maxInFlightRequests: 1,
  });
  await producer.connect();
  const send = async (label, commit) => {
    const t = await producer.transaction();
    const messages = [];
    for (let i = 0; i < 5; i++) {
      messages.push({key: `${label}-${i}`, value: `${label} ${i}`, partition: 0});
    }
    await t.send({topic, messages});
    if (commit) await t.commit(); else await t.abort();
  };
  await send('committed-1', true);
  await send('aborted-1', false);
  await send('committed-2', true);
  await producer.disconnect();
  console.log('ok: the transactional producer committed two transactions ' +
              'and aborted one');
  // read_committed is kafkajs's default isolation level.
  const got = await consumeAll(topic, 'kafkajs-txn-group', 10);
  const values = got.map((r) => r.replace(/.* value=(.*) headers=.*/, '$1'));
  const want = [0, 1, 2, 3, 4].map((i) => `committed-1 ${i}`)
                   .concat([0, 1, 2, 3, 4].map((i) => `committed-2 ${i}`));
  if (JSON.stringify(values) !== JSON.stringify(want)) {
    fail(`read_committed saw ${JSON.stringify(values)}`);
  }
  console.log('ok: a read_committed consumer saw exactly the 10 committed records');
}

// Topic configs: kept by the engine (the shell checks the topic's
// .config.json), and a config the broker cannot honour refused.
async function admin() {
  const admin = kafka.admin();
  await admin.connect();
  await admin.createTopics({
    topics: [{
      topic: 'kafkajs-configured',
      numPartitions: 1,
      configEntries: [
        {name: 'retention.ms', value: '86400000'},
        {name: 'cleanup.policy', value: 'compact,delete'},
      ],
    }],
  });
  console.log('ok: admin created kafkajs-configured with retention.ms and ' +
              'cleanup.policy');
  let refused = null;
  try {
    await admin.createTopics({
      topics: [{
        topic: 'kafkajs-zipped',
        configEntries: [{name: 'compression.type', value: 'lz4'}],
      }],
    });
  } catch (err) {
    refused = err;
  }
  const errors = refused && refused.errors || [];
  if (errors.length !== 1 || errors[0].type !== 'INVALID_CONFIG') {
    fail(`compression.type was not refused with INVALID_CONFIG: ${refused}`);
  }
  const topics = await admin.listTopics();
  if (topics.includes('kafkajs-zipped')) fail('the refused topic exists');
  console.log('ok: a config the broker does not serve is refused ' +
              `(INVALID_CONFIG: ${errors[0].message})`);
  await admin.disconnect();
}

const sections = {produce, group, txn, admin};
if (!sections[section]) fail(`unknown section ${section}`);
const guard = setTimeout(() => fail(`${section} took more than 240 s`), 240000);
sections[section]().then(() => {
  clearTimeout(guard);
  process.exit(0);
}, (err) => fail(`${section}: ${err && err.stack || err}`));
