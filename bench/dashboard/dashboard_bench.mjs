// Dashboard benchmark (issue 13; figures in docs/performance.md): the real hsns-aggregator on loopback
// serving the built bundle, a synthetic fabric per size (POST /api/v1/topology/generate: HOSTS hosts × 8
// NPUs, 32 hosts per SU, 8 spines per plane), and Debian's chromium (playwright-core, headless, WebGL
// through SwiftShader: software rendering) driven the way an operator opens the pages. Per size:
//   - the raw API: GET /api/v1/topology/layout, /overlays/summary, /export?format=json and /links from Node
//     (bytes, median time): the baselines of the page figures below;
//   - the first complete site view (a fresh browser context: nothing cached): bytes transferred (every
//     response of the page, headers included, as chromium counts them) and the time from navigation
//     start to the view drawn (its status line set and two animation frames later); median of RUNS;
//   - the site view coloured by the alarm overlay, the leaf × spine matrix and the host × NPU port matrix
//     under the alarm overlay, likewise;
//   - an SU drill-down from the site view (a click on SU 0's toggle, 1 s after the view was drawn, until
//     SU 0 is drawn as its leaves and hosts in the same graph and two animation frames painted): time and
//     bytes; median of RUNS; and the same click at once, in the first frames after the view's status line
//     (while sigma.js may still be drawing its first frame);
//   - at the largest size: 1,000 alarm changes per second for SECONDS (POST /api/v1/events: "Link down"
//     lines the shipped nic-link-down pattern raises, and "Link up" lines that clear them 1 s later, 100
//     every 100 ms, on distinct NPU ports) while a page follows the alarm stream: the changes the brain
//     made per second (hsns_alarms_changes_total, the baseline), the WebSocket messages the page received
//     per second, the deltas it applied per second (the page's data-deltas counter, where it has one), the
//     frames it painted per second, and whether the server closed its stream as a slow consumer;
//   - at the largest size: the live metric overlay grade stream (GET /api/v1/overlays/util/stream). Every
//     host's NPU port is given an rx_bytes_per_s reading first (every link graded), then RATE of them a
//     second get a new value (POST /api/v1/kpis, RATE/10 samples every 100 ms, values across the
//     utilisation thresholds) for SECONDS, with nobody following (the writes' own cost), with a Node client
//     following the stream (every link, as the site view), and with the site view and the host × NPU port
//     matrix under the util overlay following it. Per phase: the notifier's gradings per second and their
//     mean time per step (hsns_overlay_grading_seconds: KPI read, grading, sending), the aggregator's CPU
//     (% of one core), the messages and bytes per second the follower received, the links a message names,
//     the deltas the page applied per second and the frames it painted (and, its baseline, painted in 3 s
//     before the readings start). Baselines: GET
//     /api/v1/overlays/util/grades (time and bytes: one full grade set) and the stream's full set at open.
//
// Usage: node bench/dashboard/dashboard_bench.mjs --build <build dir> [--hosts 1000,10000] [--runs 5]
//        [--seconds 10] [--rate 1000] [--db-dir DIR] [--only grades]   (bench/dashboard.sh builds the
//        release tree and runs it; --db-dir: where the aggregator's database lives, default the temporary
//        directory; /dev/shm takes the disk's fsync out of the alarm path; --only grades: the grade stream
//        phase alone, at the largest size)
import { spawn } from 'node:child_process';
import crypto from 'node:crypto';
import fs from 'node:fs';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import { createRequire } from 'node:module';
import { fileURLToPath } from 'node:url';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..');
// playwright-core comes from the dashboard's pinned node_modules (web/package-lock.json).
const { chromium } = createRequire(path.join(ROOT, 'web', 'package.json'))('playwright-core');

function args() {
  const a = { build: '', hosts: [1000, 10000], runs: 5, seconds: 10, rate: 1000, dbDir: os.tmpdir(), only: '' };
  const argv = process.argv.slice(2);
  for (let i = 0; i < argv.length; i += 2) {
    const [k, v] = [argv[i], argv[i + 1]];
    if (v === undefined) throw new Error(`${k} needs a value`);
    if (k === '--build') a.build = v;
    else if (k === '--hosts') a.hosts = v.split(',').map(Number);
    else if (k === '--runs') a.runs = Number(v);
    else if (k === '--seconds') a.seconds = Number(v);
    else if (k === '--rate') a.rate = Number(v);
    else if (k === '--db-dir') a.dbDir = v;
    else if (k === '--only' && v === 'grades') a.only = v;
    else throw new Error(`unknown argument ${k}`);
  }
  if (!a.build) throw new Error('--build <build dir> is required');
  if (a.hosts.some((h) => !(h > 0)) || !(a.runs > 0) || !(a.seconds > 0) || !(a.rate >= 20)) throw new Error('bad numbers');
  return a;
}

const opt = args();
const AGGREGATOR = path.join(opt.build, 'aggregator', 'hsns-aggregator');
const WEB_ROOT = path.join(opt.build, 'web', 'dist');
const CHROMIUM = process.env.HSNS_CHROMIUM ?? '/usr/bin/chromium';
const TOKEN = 'dashboard-bench-operator-token-01';
const median = (xs) => { const s = [...xs].sort((x, y) => x - y); return s[Math.floor((s.length - 1) / 2)] ?? NaN; };
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
const mb = (bytes) => (bytes / 1e6).toFixed(2);

async function startServer() {
  const dir = fs.mkdtempSync(path.join(opt.dbDir, 'hsns-dash-bench-'));
  const file = (n) => path.join(dir, n);
  fs.writeFileSync(file('config.yaml'), `brain:\n  patterns_dir: "${path.join(ROOT, 'patterns')}"\n`);
  fs.writeFileSync(file('tokens.yaml'), `tokens:\n  - {name: bench, role: operator, token: "${TOKEN}"}\n`, { mode: 0o600 });
  const proc = spawn(AGGREGATOR, ['run', '--config', file('config.yaml'), '--listen', '127.0.0.1:0', '--database', file('a.db'),
    '--tokens-file', file('tokens.yaml'), '--ready-file', file('ready'), '--web-root', WEB_ROOT, '--threads', '2'],
  { stdio: ['ignore', 'ignore', 'pipe'] });
  let log = '';
  proc.stderr.setEncoding('utf8');
  proc.stderr.on('data', (c) => { log = (log + c).slice(-8192); });
  proc.on('exit', (code, signal) => { if (code !== 0) console.error(`hsns-aggregator exited (${code ?? signal}):\n${log}`); });
  for (let i = 0; i < 600; ++i) {
    if (proc.exitCode !== null) throw new Error(`hsns-aggregator exited: ${log}`);
    const m = /^(\S+)\s+(\d+)$/.exec(fs.existsSync(file('ready')) ? fs.readFileSync(file('ready'), 'utf8').trim() : '');
    if (m) return { proc, dir, base: `http://${m[1]}:${m[2]}` };
    await sleep(50);
  }
  throw new Error(`no ready file: ${log}`);
}

async function stopServer(s) {
  if (s.proc.exitCode === null) {
    s.proc.kill('SIGTERM');
    await new Promise((r) => { s.proc.on('exit', r); setTimeout(r, 20_000).unref(); });
  }
  fs.rmSync(s.dir, { recursive: true, force: true });
}

async function api(base, method, target, body) {
  const init = { method, headers: { Authorization: `Bearer ${TOKEN}`, ...(body ? { 'Content-Type': 'application/json' } : {}) },
    body: body ? JSON.stringify(body) : undefined };
  // A kept-alive connection the server closed as idle just as it was reused fails once: sent again.
  const res = await fetch(base + target, init).catch(() => fetch(base + target, init));
  const text = await res.text();
  if (!res.ok) throw new Error(`${method} ${target}: ${res.status} ${text.slice(0, 500)}`);
  return text;
}

// The median time and the body size of a GET from Node (the raw API, no browser).
async function rawFetch(base, target, runs) {
  const times = [];
  let bytes = 0;
  for (let i = 0; i < runs; ++i) {
    const t0 = performance.now();
    bytes = Buffer.byteLength(await api(base, 'GET', target));
    times.push(performance.now() - t0);
  }
  return { ms: median(times), bytes };
}

async function metric(base, name) {
  const text = await (await fetch(`${base}/metrics`, { headers: { Authorization: `Bearer ${TOKEN}` } })).text();
  let sum = 0;
  for (const line of text.split('\n')) if (line.startsWith(name)) sum += Number(line.split(' ').pop());
  return sum;
}

// A fresh context (empty cache) logged in through the session route (the cookie the login form gets),
// with chromium's own count of bytes received.
async function freshPage(browser, base) {
  const context = await browser.newContext({ viewport: { width: 1400, height: 900 } });
  const res = await context.request.post(`${base}/api/v1/session`, { data: { token: TOKEN } });
  if (!res.ok()) throw new Error(`login: ${res.status()}`);
  const page = await context.newPage();
  const errors = [];
  page.on('pageerror', (e) => errors.push(e.message));
  page.on('console', (m) => { if (m.type() === 'error') errors.push(m.text()); });
  const cdp = await context.newCDPSession(page);
  await cdp.send('Network.enable');
  const counter = { bytes: 0, requests: 0 };
  cdp.on('Network.loadingFinished', (e) => { counter.bytes += e.encodedDataLength; counter.requests += 1; });
  cdp.on('Network.webSocketFrameReceived', (e) => { counter.bytes += e.response.payloadData.length; });
  return { context, page, counter, errors };
}

// In the page: resolves with performance.now() once the status line starts with `prefix` (and differs from
// `not`) and two animation frames have been painted after it.
const READY = ({ prefix, not }) => new Promise((resolve) => {
  const check = () => {
    const s = document.getElementById('status')?.textContent ?? '';
    if (s.startsWith(prefix) && s !== not) requestAnimationFrame(() => requestAnimationFrame(() => resolve({ at: performance.now(), status: s })));
    else requestAnimationFrame(check);
  };
  check();
});

// Time from navigation start to the page drawn, and the bytes it took.
async function firstView(browser, base, hash, prefix) {
  const { context, page, counter, errors } = await freshPage(browser, base);
  try {
    await page.goto(`${base}/${hash}`, { waitUntil: 'commit' });
    const done = await page.evaluate(READY, { prefix, not: '' });
    await sleep(200); // late responses counted (none expected)
    if (errors.length) throw new Error(`${hash}: ${errors.join('; ')}`);
    return { ms: done.at, bytes: counter.bytes, requests: counter.requests, status: done.status };
  } finally {
    await context.close();
  }
}

// From a drawn site view, a click on SU 0's toggle (`waitMs` after the view's status line) until SU 0 is
// drawn expanded.
async function drillDown(browser, base, waitMs) {
  const { context, page, counter, errors } = await freshPage(browser, base);
  try {
    await page.goto(`${base}/#/site`, { waitUntil: 'commit' });
    const first = await page.evaluate(READY, { prefix: 'Site view', not: '' });
    // An operator clicks once the view is on screen (1 s); a click at once lands while sigma.js and
    // SwiftShader may still be drawing the first frame.
    await sleep(waitMs);
    const before = counter.bytes;
    const t = await page.evaluate(({ not }) => new Promise((resolve) => {
      const t0 = performance.now();
      document.querySelector('button[data-group="su:0"]').click();
      const check = () => {
        const s = document.getElementById('status')?.textContent ?? '';
        if (s.startsWith('Site view') && s !== not) requestAnimationFrame(() => requestAnimationFrame(() => resolve({ ms: performance.now() - t0, status: s })));
        else requestAnimationFrame(check);
      };
      check();
    }), { not: first.status });
    await sleep(200);
    if (errors.length) throw new Error(`drill-down: ${errors.join('; ')}`);
    return { ms: t.ms, bytes: counter.bytes - before, status: t.status };
  } finally {
    await context.close();
  }
}

// Every host's NPU ports from the export (the alarm driver's entities).
function portsOf(exportText) {
  const graph = JSON.parse(exportText);
  const out = [];
  for (const n of graph.nodes) if (n.tier === 'host') for (const p of n.npus ?? []) out.push([n.name, p.port]);
  // Spread the changes over the fabric: every SU gets some.
  for (let i = out.length - 1; i > 0; --i) {
    const j = (i * 2654435761) % (i + 1);
    [out[i], out[j]] = [out[j], out[i]];
  }
  return out;
}

const nicLine = ([host, port], up, ts) => ({ entity: host, type: 'kernel', severity: up ? 'notice' : 'error', ts,
  message: `mlx5_core 0000:3b:00.${port.replace(/\D/g, '') || '0'} ${port}: Link ${up ? 'up' : 'down'}` });

// Calls `tick(t)` every 100 ms for `seconds` + 1 s (t = 0, 1, ...) and `onSecond(second)` after each
// tenth tick; answers how late the driver fell behind at most (ms).
async function paced(seconds, tick, onSecond) {
  const ticks = seconds * 10 + 10;
  const start = performance.now();
  let late = 0;
  for (let t = 0; t < ticks; ++t) {
    const wait = start + t * 100 - performance.now();
    if (wait > 0) await sleep(wait);
    else late = Math.max(late, -wait);
    await tick(t, ticks);
    if (t % 10 === 9) await onSecond(Math.floor(t / 10));
  }
  return { late };
}

// `rate` alarm changes a second for `seconds`: every 100 ms, rate/20 ports go down (raised) and the ports
// that went down 1 s earlier come up (cleared). The first second only raises; it is left out of the rates.
async function driveAlarms(base, ports, rate, seconds, onSecond) {
  const perTick = Math.round(rate / 20);
  let next = 0;
  return paced(seconds, async (t, ticks) => {
    const now = Date.now();
    const events = [];
    for (let k = 0; k < perTick && t < ticks - 10; ++k) events.push(nicLine(ports[(next + k) % ports.length], false, now));
    if (t >= 10) {
      const from = next - 10 * perTick;
      for (let k = 0; k < perTick; ++k) events.push(nicLine(ports[(from + k) % ports.length], true, now));
    }
    next += perTick;
    if (events.length) await api(base, 'POST', '/api/v1/events', { events });
  }, onSecond);
}

async function deltaRate(browser, base, ports, hash, prefix) {
  const { context, page, errors } = await freshPage(browser, base);
  const frames = { received: 0, closed: 0, closeCodes: [] };
  page.on('websocket', (ws) => {
    if (!ws.url().includes('/alarms/stream')) return;
    ws.on('framereceived', () => { frames.received += 1; });
    ws.on('close', () => { frames.closed += 1; });
  });
  try {
    await page.goto(`${base}/${hash}`, { waitUntil: 'commit' });
    await page.evaluate(READY, { prefix, not: '' });
    await sleep(1500); // the streams open
    // The page's painted frames, counted in the page.
    await page.evaluate(() => { window.__frames = 0; const f = () => { window.__frames += 1; requestAnimationFrame(f); }; requestAnimationFrame(f); });
    const deltasOf = () => page.evaluate(() => Number(document.querySelector('[data-deltas]')?.getAttribute('data-deltas') ?? 'NaN'));
    const samples = [];
    const sample = async () => ({ t: performance.now(), changes: await metric(base, 'hsns_alarms_changes_total'),
      received: frames.received, deltas: await deltasOf(), painted: await page.evaluate(() => window.__frames) });
    const { late } = await driveAlarms(base, ports, opt.rate, opt.seconds, async (second) => {
      if (second === 0 || second === opt.seconds) samples.push(await sample());
    });
    await sleep(2000); // the tail arrives
    const end = await sample();
    const [a, b] = samples;
    const s = (b.t - a.t) / 1000;
    const tail = (end.t - b.t) / 1000;
    if (errors.length) throw new Error(`${hash}: ${errors.join('; ')}`);
    return {
      changes: (b.changes - a.changes) / s,
      received: (b.received - a.received) / s,
      deltas: (b.deltas - a.deltas) / s,
      painted: (b.painted - a.painted) / s,
      backlog: end.received - b.received,
      tail,
      closed: frames.closed,
      late,
    };
  } finally {
    await context.close();
  }
}

// --- The live metric overlay grade stream (GET /api/v1/overlays/{id}/stream) ---

const GRADED = 'util';
const LINK_BYTES_PER_S = 400e9 / 8; // the generated NPU links' 400 Gb/s
// A utilisation reading uniform over 0..100 % of the link: 70 % of them ok, 20 % warning, 10 % bad.
const rxSample = ([host, port], ts) => ({ entity: `${host}/${port}`, metric: 'rx_bytes_per_s', ts, value: Math.random() * LINK_BYTES_PER_S });

// A WebSocket client of the aggregator's streams (Node 20 has none without a flag): the upgrade with the
// bearer token, then each text message (server frames are unmasked; fragments joined) handed to
// `onMessage` as a Buffer. Answers { close, closed } (closed: the server's close code and reason, once).
function followStream(base, target, onMessage) {
  const url = new URL(base);
  const masked = (op, payload) => {
    const mask = crypto.randomBytes(4);
    const body = Buffer.from(payload);
    for (let i = 0; i < body.length; ++i) body[i] ^= mask[i % 4];
    return Buffer.concat([Buffer.from([0x80 | op, 0x80 | body.length]), mask, body]);
  };
  return new Promise((resolve, reject) => {
    const req = http.request({ host: url.hostname, port: url.port, path: target, agent: false, headers: {
      Authorization: `Bearer ${TOKEN}`, Connection: 'Upgrade', Upgrade: 'websocket', 'Sec-WebSocket-Version': '13',
      'Sec-WebSocket-Key': crypto.randomBytes(16).toString('base64') } });
    req.on('response', (res) => reject(new Error(`${target}: the upgrade answered ${res.statusCode}`)));
    req.on('error', reject);
    req.on('upgrade', (_, socket, head) => {
      const state = { closed: null };
      let buf = head;
      let parts = [];
      const parse = () => {
        for (;;) {
          if (buf.length < 2) return;
          const fin = (buf[0] & 0x80) !== 0;
          const op = buf[0] & 0x0f;
          let len = buf[1] & 0x7f;
          let at = 2;
          if (len === 126) { if (buf.length < 4) return; len = buf.readUInt16BE(2); at = 4; }
          else if (len === 127) { if (buf.length < 10) return; len = Number(buf.readBigUInt64BE(2)); at = 10; }
          if (buf.length < at + len) return;
          const payload = buf.subarray(at, at + len);
          buf = buf.subarray(at + len);
          if (op === 8) {
            state.closed = { code: payload.length >= 2 ? payload.readUInt16BE(0) : 1005, reason: payload.subarray(2).toString() };
            socket.end(masked(8, payload.subarray(0, 2)));
            return;
          }
          if (op === 9) socket.write(masked(10, payload));
          else if (op <= 2) {
            parts.push(payload);
            if (fin) { onMessage(Buffer.concat(parts)); parts = []; }
          }
        }
      };
      socket.on('data', (c) => { buf = buf.length ? Buffer.concat([buf, c]) : c; parse(); });
      socket.on('error', () => undefined);
      parse();
      resolve({ state, close: () => socket.end(masked(8, Buffer.from([0x03, 0xe8]))) });
    });
    req.end();
  });
}

// The notifier's gradings of the overlay so far, per step: { read: { sum, count }, grade, send }.
async function gradingStats(base) {
  const text = await (await fetch(`${base}/metrics`, { headers: { Authorization: `Bearer ${TOKEN}` } })).text();
  const out = { read: { sum: 0, count: 0 }, grade: { sum: 0, count: 0 }, send: { sum: 0, count: 0 } };
  for (const line of text.split('\n')) {
    const m = /^hsns_overlay_grading_seconds_(sum|count)\{(.*)\} (\S+)$/.exec(line);
    if (!m || !m[2].includes(`overlay="${GRADED}"`)) continue;
    const step = /step="(\w+)"/.exec(m[2])?.[1];
    if (out[step]) out[step][m[1]] = Number(m[3]);
  }
  return out;
}

const CLOCK_TICKS = 100; // USER_HZ: /proc/PID/stat's unit on Linux
// The aggregator's CPU time so far (s): utime + stime, /proc/PID/stat fields 14 and 15.
function cpuSeconds(pid) {
  const stat = fs.readFileSync(`/proc/${pid}/stat`, 'utf8');
  const f = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return (Number(f[11]) + Number(f[12])) / CLOCK_TICKS;
}

// Every NPU port's reading once (every link graded), 10,000 samples a request.
async function seedReadings(base, ports) {
  const now = Date.now();
  for (let i = 0; i < ports.length; i += 10_000) {
    await api(base, 'POST', '/api/v1/kpis', { samples: ports.slice(i, i + 10_000).map((p) => rxSample(p, now)) });
  }
}

// `rate` new readings a second for `seconds` (after 1 s not counted), cycling through the ports; `sample`
// is taken at the first counted second and at the end. Answers the two samples and the driver's lateness.
async function driveReadings(base, ports, sample) {
  const perTick = Math.round(opt.rate / 10);
  let next = 0;
  let accepted = 0;
  const samples = [];
  const { late } = await paced(opt.seconds, async () => {
    const now = Date.now();
    const samplesOut = [];
    for (let k = 0; k < perTick; ++k) samplesOut.push(rxSample(ports[(next + k) % ports.length], now));
    next += perTick;
    accepted += JSON.parse(await api(base, 'POST', '/api/v1/kpis', { samples: samplesOut })).accepted;
  }, async (second) => {
    if (second === 0 || second === opt.seconds) samples.push({ ...(await sample()), accepted });
  });
  return { a: samples[0], b: samples[1], late };
}

// One phase: readings driven while `follower` (or nobody) follows; the server-side figures and the
// follower's own (counters it keeps in `seen`).
async function gradePhase(server, ports, seen, extra = async () => ({})) {
  const sample = async () => ({ t: performance.now(), cpu: cpuSeconds(server.proc.pid), grading: await gradingStats(server.base),
    messages: seen.messages, bytes: seen.bytes, links: seen.links, ...(await extra()) });
  const { a, b, late } = await driveReadings(server.base, ports, sample);
  const s = (b.t - a.t) / 1000;
  const count = b.grading.read.count - a.grading.read.count;
  const step = (k) => (count ? ((b.grading[k].sum - a.grading[k].sum) / count) * 1000 : NaN);
  return { s, a, b, late, written: (b.accepted - a.accepted) / s, cpu: ((b.cpu - a.cpu) / s) * 100, gradings: count / s,
    read: step('read'), grade: step('grade'), send: step('send'), messages: (b.messages - a.messages) / s,
    bytes: (b.bytes - a.bytes) / s, links: b.links - a.links, count: b.messages - a.messages };
}

function phaseLine(what, r, page) {
  const ms = (x) => (Number.isNaN(x) ? '  n/a' : x.toFixed(1).padStart(6));
  console.log(`grades ${what.padEnd(28)} written ${r.written.toFixed(0).padStart(5)}/s  gradings ${r.gradings.toFixed(1).padStart(4)}/s ` +
    `(read ${ms(r.read)} + grade ${ms(r.grade)} + send ${ms(r.send)} ms)  aggregator CPU ${r.cpu.toFixed(0).padStart(3)} %  ` +
    `received ${r.messages.toFixed(1).padStart(5)} messages/s ${(r.bytes / 1e3).toFixed(1).padStart(7)} kB/s ` +
    `(${r.count ? (r.links / r.count).toFixed(0) : 0} links a message)` +
    `${page ? `  applied ${page.deltas.toFixed(0).padStart(5)} changes/s  painted ${page.painted.toFixed(0)} frames/s (idle ${page.idle.toFixed(0)})  stream closes: ${page.closed}` : ''}` +
    `  driver late by up to ${r.late.toFixed(0)} ms`);
}

async function gradeStream(browser, server, exportText) {
  const ports = portsOf(exportText);
  const seeded = performance.now();
  await seedReadings(server.base, ports);
  console.log(`grade stream (${GRADED}): ${ports.length} NPU ports given a reading in ${(performance.now() - seeded).toFixed(0)} ms; ` +
    `then ${opt.rate} new readings/s for ${opt.seconds} s per phase; load average ${os.loadavg().map((l) => l.toFixed(1)).join(' ')}`);
  const rest = await rawFetch(server.base, `/api/v1/overlays/${GRADED}/grades`, opt.runs);
  line(`raw GET overlays/${GRADED}/grades (Node)`, rest);
  const restLeaf = await rawFetch(server.base, `/api/v1/overlays/${GRADED}/grades?upper=leaf`, opt.runs);
  line(`raw GET …/grades?upper=leaf (Node)`, restLeaf);

  phaseLine('nobody following', await gradePhase(server, ports, { messages: 0, bytes: 0, links: 0 }));

  const seen = { messages: 0, bytes: 0, links: 0, first: [] };
  const opened = performance.now();
  const stream = await followStream(server.base, `/api/v1/overlays/${GRADED}/stream`, (m) => {
    if (seen.first.length < 2) {
      seen.first.push({ bytes: m.length, ms: performance.now() - opened });
      return;
    }
    seen.messages += 1;
    seen.bytes += m.length;
    seen.links += JSON.parse(m.toString()).links.index.length;
  });
  try {
    while (seen.first.length < 2) await sleep(20);
    console.log(`grade stream open (Node): groups ${seen.first[0].bytes} B, full grade set ${mb(seen.first[1].bytes)} MB ` +
      `${seen.first[1].ms.toFixed(0)} ms after the upgrade`);
    phaseLine('Node client (every link)', await gradePhase(server, ports, seen));
    if (stream.state.closed) console.log(`  the stream was closed: ${JSON.stringify(stream.state.closed)}`);
  } finally {
    stream.close();
  }
  await sleep(1500); // the notifier sees nobody follows any more

  for (const [hash, prefix] of [[`#/site?overlay=${GRADED}`, 'Site view'], [`#/matrix?view=host-port&overlay=${GRADED}`, 'Matrix']]) {
    const { context, page, errors } = await freshPage(browser, server.base);
    const onPage = { messages: 0, bytes: 0, links: 0, closed: 0 };
    page.on('websocket', (ws) => {
      if (!ws.url().includes(`/overlays/${GRADED}/stream`)) return;
      ws.on('framereceived', (f) => {
        onPage.messages += 1;
        onPage.bytes += Buffer.byteLength(f.payload);
        if (f.payload.includes('"kind":"changes"')) onPage.links += JSON.parse(f.payload).links.index.length;
      });
      ws.on('close', () => { onPage.closed += 1; });
    });
    try {
      await page.goto(`${server.base}/${hash}`, { waitUntil: 'commit' });
      await page.evaluate(READY, { prefix, not: '' });
      await sleep(1500); // the stream opens and its full set is applied
      await page.evaluate(() => { window.__frames = 0; const f = () => { window.__frames += 1; requestAnimationFrame(f); }; requestAnimationFrame(f); });
      // The baseline: the frames it paints with no reading arriving.
      const idleFrom = await page.evaluate(() => window.__frames);
      await sleep(3000);
      const idle = ((await page.evaluate(() => window.__frames)) - idleFrom) / 3;
      const pageCounts = async () => ({ deltas: await page.evaluate(() => Number(document.querySelector('[data-deltas]')?.getAttribute('data-deltas') ?? 'NaN')),
        painted: await page.evaluate(() => window.__frames) });
      const r = await gradePhase(server, ports, onPage, pageCounts);
      if (errors.length) throw new Error(`${hash}: ${errors.join('; ')}`);
      phaseLine(hash.replace('#/', ''), r, { deltas: (r.b.deltas - r.a.deltas) / r.s, painted: (r.b.painted - r.a.painted) / r.s, idle, closed: onPage.closed });
    } finally {
      await context.close();
    }
    await sleep(1500);
  }
}

const line = (what, r, base) => console.log(`${what.padEnd(40)} ${r.ms.toFixed(0).padStart(7)} ms ${mb(r.bytes).padStart(8)} MB` +
  `${base ? `   ×${(r.ms / base.ms).toFixed(1)} ${base.what}` : ''}${r.requests !== undefined ? `   (${r.requests} responses)` : ''}`);

async function bench(hosts, browser, firstSite) {
  const server = await startServer();
  try {
    const t0 = performance.now();
    await api(server.base, 'POST', '/api/v1/topology/generate', { hosts, npus_per_host: 8, hosts_per_su: 32, spines_per_plane: 8, name: `bench-${hosts}` });
    const generated = performance.now() - t0;
    const exportText = await api(server.base, 'GET', '/api/v1/topology/export?format=json');
    const largest = hosts === Math.max(...opt.hosts);
    if (opt.only === 'grades') {
      const summary = JSON.parse(await api(server.base, 'GET', '/api/v1/topology/layout'));
      console.log(`== ${hosts} hosts × 8 NPUs: ${summary.npus} NPUs, ${summary.switches} switches, ${summary.links} links`);
      if (largest) await gradeStream(browser, server, exportText);
      return { ms: NaN, hosts };
    }
    const layout = await rawFetch(server.base, '/api/v1/topology/layout', opt.runs);
    const expanded = await rawFetch(server.base, '/api/v1/topology/layout?expand=su:0', opt.runs);
    const groupSummary = await rawFetch(server.base, '/api/v1/overlays/summary', opt.runs);
    const exp = await rawFetch(server.base, '/api/v1/topology/export?format=json', opt.runs);
    const links = await rawFetch(server.base, '/api/v1/topology/links', opt.runs);
    const uplinks = await rawFetch(server.base, '/api/v1/topology/links?upper=spine', opt.runs);
    const summary = JSON.parse(await api(server.base, 'GET', '/api/v1/topology/layout'));
    console.log(`== ${hosts} hosts × 8 NPUs: ${summary.npus} NPUs, ${summary.switches} switches, ${summary.links} links, ` +
      `${summary.groups.length} groups (generated in ${generated.toFixed(0)} ms)`);
    const runs = async (fn) => {
      const rs = [];
      for (let i = 0; i < opt.runs; ++i) rs.push(await fn());
      return { ms: median(rs.map((r) => r.ms)), bytes: median(rs.map((r) => r.bytes)), requests: rs[0].requests, status: rs[0].status };
    };
    line('raw GET layout (Node)', layout);
    line('raw GET layout?expand=su:0 (Node)', expanded);
    line('raw GET overlays/summary (Node)', groupSummary, { ms: layout.ms, what: 'raw layout' });
    line('raw GET export?format=json (Node)', exp);
    line('raw GET links (Node)', links, { ms: exp.ms, what: 'raw export' });
    line('raw GET links?upper=spine (Node)', uplinks);
    const site = await runs(() => firstView(browser, server.base, '#/site', 'Site view'));
    line('first site view (browser, cold)', site, { ms: layout.ms, what: 'raw layout' });
    if (firstSite) line('  … against 1st size', site, { ms: firstSite.ms, what: `the ${firstSite.hosts}-host site view` });
    const drill = await runs(() => drillDown(browser, server.base, 1000));
    line('SU drill-down (su:0)', drill, { ms: expanded.ms, what: 'raw layout?expand=su:0' });
    const drillAtOnce = await runs(() => drillDown(browser, server.base, 0));
    line('SU drill-down clicked at once', drillAtOnce, { ms: drill.ms, what: 'clicked after 1 s' });
    const alarms = await runs(() => firstView(browser, server.base, '#/site?overlay=alarms', 'Site view'));
    line('site view, alarm overlay (cold)', alarms, { ms: links.ms, what: 'raw links' });
    const matrix = await runs(() => firstView(browser, server.base, '#/matrix', 'Matrix'));
    line('leaf × spine matrix (cold)', matrix, { ms: uplinks.ms, what: 'raw links?upper=spine' });
    const hostPort = await runs(() => firstView(browser, server.base, '#/matrix?view=host-port&overlay=alarms', 'Matrix'));
    line('host × NPU port matrix, alarms (cold)', hostPort, { ms: links.ms, what: 'raw links' });
    console.log(`   (${site.status}; ${drill.status}; ${matrix.status}; ${hostPort.status})`);
    if (largest) {
      const ports = portsOf(exportText);
      for (const [hash, prefix] of [['#/alarms', 'Alarms'], ['#/site?overlay=alarms', 'Site view']]) {
        const d = await deltaRate(browser, server.base, ports, hash, prefix);
        console.log(`alarm changes ${hash.padEnd(24)} brain ${d.changes.toFixed(0).padStart(6)}/s  page received ${d.received.toFixed(0).padStart(6)}/s ` +
          `(×${(d.received / d.changes).toFixed(2)})  applied ${Number.isNaN(d.deltas) ? '  n/a' : d.deltas.toFixed(0).padStart(5)}/s  ` +
          `painted ${d.painted.toFixed(0)} frames/s  backlog after ${d.tail.toFixed(1)} s: ${d.backlog}  stream closes: ${d.closed}  ` +
          `driver late by up to ${d.late.toFixed(0)} ms`);
      }
      await gradeStream(browser, server, exportText);
    }
    return { ms: site.ms, hosts };
  } finally {
    await stopServer(server);
  }
}

const browser = await chromium.launch({ executablePath: CHROMIUM, headless: true,
  args: ['--no-sandbox', '--use-angle=swiftshader', '--enable-unsafe-swiftshader'] });
try {
  console.log(`dashboard bench: ${os.cpus().length} CPUs, load average ${os.loadavg().map((l) => l.toFixed(1)).join(' ')}, ` +
    `chromium headless (SwiftShader), ${opt.runs} runs each (median), database under ${opt.dbDir}, ${opt.build}`);
  let first = null;
  for (const hosts of opt.hosts) {
    const r = await bench(hosts, browser, first);
    first ??= r;
  }
} finally {
  await browser.close();
}
