// Browser tests of the dashboard (ctest `web_browser`): Debian's chromium driven by playwright-core,
// headless, against the real hsns-aggregator on loopback serving the built assets (HSNS_WEB_ROOT).
//
// The aggregator starts on a fresh database with an operator token; the test seeds a generated fabric
// (16 hosts x 4 NPUs, 4 SUs, spines), registers four hosts, pushes KPI samples of host000. Then, in one
// browser (WebGL through SwiftShader, software rendering):
//   - login through the form gives the session cookie (HttpOnly: the page cannot read it);
//   - every page loads without console errors or page errors, and has no WCAG 2 A/AA violations (axe);
//   - a subnet is created and deleted through the network page's forms (checked through the API);
//   - a topology search from the scheduling form, then "show answer 1": the site view marks exactly the
//     answer's hosts;
//   - the site view renders through sigma.js (WebGL) and drills down into an SU in place (the same graph
//     element; the URL records the expansion and the back button returns); logout returns to the login page;
//   - alarms and incidents made by the real brain from log lines POSTed to /api/v1/events (the shipped
//     nic-link-down pattern): the alarm view lists the incidents and alarms (a flapping one marked, a
//     silenced one shown as suppressed), a new alarm arrives live over the WebSocket streams, filters live
//     in the URL, one alarm, an incident's rest and a selection are acknowledged with comments through the page
//     (checked through the API, and after a reload), a silence is made from the filter and deleted;
//   - the root-cause page of the incident shows its ranked causes, the affected job and ranks, the
//     recommended action, and its blast-radius link marks the devices on the site view;
//   - the NPU port page shows the port's module diagnostics against the module's thresholds (a report batch
//     with optics), its link and alarms; the link page both ends and their alarms; the host page its NPU
//     ports (links to the port pages) and alarms; the switch page links its ports to their link pages;
//   - path diagnosis of a pair (through the form) and of the job shows every hop with its verdict, and the
//     job's rank × rank matrix one cell per communicating pair; a flow reported for one pair (a report batch
//     of its source host) shows as that pair's volume once the matrix is switched to traffic (keyboard),
//     the other pairs as "no flow data";
//   - every site view group and rail names its worst active alarm and p95 utilisation (the aggregator's
//     summary);
//   - overlays on the matrices (leaf × spine, rail × SU, host × NPU port) and the site view, from KPI
//     samples pushed for them (a busy port, a pausing port, a weak receiver) and the brain's alarms; FEC
//     graded by the thresholds of the test aggregator's configuration; the time slider replays an older reading; the incident page's sparklines; the job's schedule view;
//   - live deltas: an alarm raised while the site view and the host × NPU port matrix are open recolours
//     its SU and its cell in place (the same elements, no reload), and its clear restores them; a host set
//     isolated (PATCH) while the site view or the matrix shows link states recolours its SU and its cells
//     in place, and healthy again restores them; a KPI pushed for a port while a matrix or the site view
//     shows a metric overlay (graded by the aggregator, followed over its grade stream) recolours that
//     port's cell and its SU in place.
// And in a second chromium launched with --disable-webgl --disable-gpu: the site view falls back to the
// Canvas 2D renderer (ECharts), draws, and drills down in place. Screenshots of every page go to HSNS_ARTIFACTS.
//
// Run: HSNS_BUILD_DIR=<build> HSNS_WEB_ROOT=<build>/web/dist node --test tests/browser.test.mjs
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { chromium } from 'playwright-core';
import AxeBuilder from '@axe-core/playwright';

const BUILD_DIR = process.env.HSNS_BUILD_DIR;
if (!BUILD_DIR) throw new Error('set HSNS_BUILD_DIR to the CMake build directory');
const AGGREGATOR = path.join(BUILD_DIR, 'aggregator', 'hsns-aggregator');
const WEB_ROOT = process.env.HSNS_WEB_ROOT ?? path.join(BUILD_DIR, 'web', 'dist');
const ARTIFACTS = process.env.HSNS_ARTIFACTS ?? path.join(BUILD_DIR, 'web', 'artifacts');
const CHROMIUM = process.env.HSNS_CHROMIUM ?? '/usr/bin/chromium';
const OPERATOR = 'browser-test-operator-token-01';
const PATTERNS = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..', 'patterns');
const WCAG = ['wcag2a', 'wcag2aa', 'wcag21a', 'wcag21aa'];

const server = { proc: null, dir: null, base: '', output: '' };
let browser = null;
let page = null;
const problems = []; // console errors and page errors of the current page

async function startServer() {
  assert.ok(fs.existsSync(AGGREGATOR), `${AGGREGATOR} does not exist: build hsns-aggregator`);
  assert.ok(fs.existsSync(path.join(WEB_ROOT, 'app.js')), `${WEB_ROOT}/app.js does not exist: build hsns_web`);
  server.dir = fs.mkdtempSync(path.join(os.tmpdir(), 'hsns-browser-'));
  const file = (name) => path.join(server.dir, name);
  // FEC graded against thresholds of the configuration (the default: warning above 0, bad above 1/s).
  fs.writeFileSync(file('config.yaml'), `brain:\n  patterns_dir: "${PATTERNS}"\noverlays:\n  fec: {warn: 5, bad: 50}\n`);
  fs.writeFileSync(file('tokens.yaml'), `tokens:\n  - {name: ops, role: operator, token: "${OPERATOR}"}\n`, { mode: 0o600 });
  const proc = spawn(AGGREGATOR, ['run', '--config', file('config.yaml'), '--listen', '127.0.0.1:0', '--database', file('a.db'),
    '--tokens-file', file('tokens.yaml'), '--ready-file', file('ready'), '--web-root', WEB_ROOT, '--threads', '2'],
  { stdio: ['ignore', 'pipe', 'pipe'] });
  server.proc = proc;
  for (const s of [proc.stdout, proc.stderr]) {
    s.setEncoding('utf8');
    s.on('data', (c) => { server.output = (server.output + c).slice(-32 * 1024); });
  }
  const deadline = Date.now() + 30_000;
  for (;;) {
    assert.equal(proc.exitCode, null, `hsns-aggregator exited early:\n${server.output}`);
    const text = fs.existsSync(file('ready')) ? fs.readFileSync(file('ready'), 'utf8').trim() : '';
    const m = /^(\S+)\s+(\d+)$/.exec(text);
    if (m) { server.base = `http://${m[1]}:${m[2]}`; return; }
    assert.ok(Date.now() < deadline, `no ready file within 30 s:\n${server.output}`);
    await new Promise((r) => setTimeout(r, 25));
  }
}

async function api(method, target, body) {
  const res = await fetch(server.base + target, {
    method, headers: { Authorization: `Bearer ${OPERATOR}`, ...(body ? { 'Content-Type': 'application/json' } : {}) },
    body: body ? JSON.stringify(body) : undefined,
  });
  const text = await res.text();
  assert.ok(res.ok, `${method} ${target}: ${res.status} ${text}`);
  return text ? JSON.parse(text) : null;
}

async function seed() {
  await api('POST', '/api/v1/topology/generate', { hosts: 16, npus_per_host: 4, hosts_per_su: 4, spines_per_plane: 2, name: 'browser-fabric' });
  for (let h = 0; h < 4; ++h) {
    const name = `host${String(h).padStart(3, '0')}`;
    await api('PUT', `/api/v1/hosts/${name}`, { npus: [0, 1, 2, 3].map((i) => ({ index: i, netdev: `eth${i}`, mac: `02:00:00:00:0${h}:0${i}`, rdma_device: `mlx5_${i}`, link_speed_mbps: 200000 })) });
  }
  const now = Date.now();
  const samples = [];
  for (let i = 0; i < 20; ++i) {
    samples.push({ entity: 'host000/eth0', metric: 'rx_bytes_per_s', ts: now - (20 - i) * 60_000, value: 1e9 + i * 1e7 });
    samples.push({ entity: 'host000/eth0', metric: 'np_cnp_sent_per_s', ts: now - (20 - i) * 60_000, value: i % 5 });
  }
  await api('POST', '/api/v1/kpis', { samples });
  await seedOverlays(now);
  await seedBrain();
}

// Overlay readings: host003's eth1 (SU 0, rail 1) idle two hours ago and at 95 % of its link now
// (utilisation: bad now, ok at the replayed time), host005's eth2 (SU 1, rail 2) pausing 5,000 frames/s on
// priority 3 (PFC: bad), host006's eth0 (SU 1, rail 0) receiving -13 dBm on lane 0 (optics: bad),
// host004's eth2 with 20 symbol errors/s (FEC: a warning under the configured thresholds).
const overlay = { gbps: 0, past: 0 };
async function seedOverlays(now) {
  const graph = await api('GET', '/api/v1/topology/export?format=json');
  const host003 = graph.nodes.find((n) => n.name === 'host003');
  const link = graph.links.find((l) => l.source === host003.id && l.source_port === 'eth1');
  overlay.gbps = link.bandwidth_gbps;
  overlay.past = now - 2 * 3_600_000;
  // Two batches: the old sample first (a sample an hour older than its series' newest is refused as late).
  await api('POST', '/api/v1/kpis', { samples: [{ entity: 'host003/eth1', metric: 'tx_bytes_per_s', ts: overlay.past, value: 1e6 }] });
  await api('POST', '/api/v1/kpis', { samples: [
    { entity: 'host003/eth1', metric: 'tx_bytes_per_s', ts: now - 30_000, value: 0.95 * link.bandwidth_gbps * 1e9 / 8 },
    { entity: 'host005/eth2', metric: 'pfc_prio3_rx_pause_per_s', ts: now - 30_000, value: 5000 },
    { entity: 'host006/eth0', metric: 'lane0_rx_power_watts', ts: now - 30_000, value: 0.00005 },
    { entity: 'host006/eth0', metric: 'lane1_rx_power_watts', ts: now - 30_000, value: 0.0008 },
    // host004's eth2 (SU 1, rail 2): 20 symbol errors/s, bad by the default FEC thresholds, a warning by
    // the configured ones.
    { entity: 'host004/eth2', metric: 'symbol_error_per_s', ts: now - 30_000, value: 20 },
    // host001's eth0 (the incident's alarm): drops rising over the last 15 minutes (its sparkline).
    ...[...Array(15).keys()].map((i) => ({ entity: 'host001/eth0', metric: 'rx_dropped_per_s', ts: now - (15 - i) * 60_000, value: i * i })),
  ] });
}

// A NIC line the shipped nic-link-down pattern matches (its clears_on: `up`), as a pushed event of `host`.
const nicLine = (host, port, up, ts) => ({ entity: host, type: 'kernel', severity: up ? 'notice' : 'error', ts,
  message: `mlx5_core 0000:3b:00.${port.slice(3)} ${port}: Link ${up ? 'up' : 'down'}` });

async function events(list) {
  await api('POST', '/api/v1/events', { events: list });
}

// Polls the API until `pred(answer)` holds (10 s).
async function until(target, pred, what) {
  const deadline = Date.now() + 10_000;
  for (;;) {
    const answer = await api('GET', target);
    if (pred(answer)) return answer;
    assert.ok(Date.now() < deadline, `${what}: not within 10 s; last ${target}: ${JSON.stringify(answer).slice(0, 2000)}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

const brain = { incident: '', alarms: [] };

// A job on host001 and host002 (a subnet and a port per NPU first), then alarms made by the real brain:
// host001's eth0 and eth1 down (one incident, root cause host001's NIC, the job hit), host010's eth2
// flapping (down and up three times), host014's eth0 down under a silence made beforehand (suppressed).
async function seedBrain() {
  const subnet = await api('POST', '/api/v1/subnets', { name: 'rdma', cidr: '198.18.0.0/24', tenant: 'train' });
  for (const host of ['host001', 'host002']) {
    for (let npu = 0; npu < 4; ++npu) await api('POST', '/api/v1/ports', { subnet_id: subnet.id, host, npu });
  }
  await api('POST', '/api/v1/schedule', { job_name: 'train-ui', hosts: ['host001', 'host002'],
    model: { parameters: 1e9, layers: 8, hidden: 2048, heads: 16, seq_len: 2048, micro_batch: 1, global_batch: 64 },
    parallel: { tp: 4, dp: 2 }, algorithm: 'ring', ecmp_seeds: 2 });
  await api('POST', '/api/v1/silences', { entity: 'host014/*', reason: 'maintenance window' });
  const t = Date.now() - 20_000;
  await events([nicLine('host001', 'eth0', false, t), nicLine('host001', 'eth1', false, t + 100),
    ...[0, 1, 2].flatMap((i) => [nicLine('host010', 'eth2', false, t + 1000 + i * 400), nicLine('host010', 'eth2', true, t + 1200 + i * 400)]),
    nicLine('host014', 'eth0', false, t + 3000)]);
  const alarms = await until('/api/v1/alarms?limit=100', (a) => a.total >= 4
    && a.items.some((x) => x.entity === 'host010/eth2' && x.flapping)
    && a.items.some((x) => x.entity === 'host014/eth0' && x.suppressed), 'the seeded alarms');
  brain.alarms = alarms.items;
  const incidents = await until('/api/v1/incidents', (l) => l.items.some((i) => i.alarm_count === 2
    && i.affected_jobs.some((j) => j.name === 'train-ui')), 'the incident of host001');
  brain.incident = incidents.items.find((i) => i.alarm_count === 2).id;
}

function watch(p) {
  p.on('console', (m) => { if (m.type() === 'error') problems.push(`console: ${m.text()}`); });
  p.on('pageerror', (e) => problems.push(`page error: ${e.message}`));
}

async function newBrowser(args) {
  return chromium.launch({ executablePath: CHROMIUM, headless: true, args: ['--no-sandbox', ...args] });
}

// Opens a page of the dashboard and waits until it said it is done (its status line starts with `done`).
async function open(p, hash, done) {
  problems.length = 0;
  // A fresh document per page (a hash change would keep the previous page's status line).
  await p.goto('about:blank');
  await p.goto(`${server.base}/${hash}`);
  await p.waitForFunction((prefix) => (document.getElementById('status')?.textContent ?? '').startsWith(prefix), done, { timeout: 20_000 });
}

async function shot(p, name) {
  fs.mkdirSync(ARTIFACTS, { recursive: true });
  await p.screenshot({ path: path.join(ARTIFACTS, `${name}.png`), fullPage: true });
}

async function axe(p, what) {
  const result = await new AxeBuilder({ page: p }).withTags(WCAG).analyze();
  const found = result.violations.map((v) => `${v.id} (${v.impact}): ${v.help} at ${v.nodes.map((n) => n.target.join(' ')).slice(0, 3).join(', ')}`);
  assert.deepEqual(found, [], `${what}: WCAG 2 A/AA violations`);
}

async function login(p) {
  await p.goto(`${server.base}/`);
  await p.getByLabel('Token').fill(OPERATOR);
  await p.getByRole('button', { name: 'Log in' }).click();
  await p.waitForFunction(() => (document.getElementById('status')?.textContent ?? '').startsWith('Site view'), null, { timeout: 20_000 });
}

// Non-transparent pixels of a 2D canvas (sigma's label layer, ECharts' canvas).
function paintedPixels(p, selector) {
  return p.evaluate((sel) => {
    let painted = 0;
    for (const c of document.querySelectorAll(sel)) {
      const ctx = c.getContext('2d');
      if (!ctx || !c.width || !c.height) continue;
      const d = ctx.getImageData(0, 0, c.width, c.height).data;
      for (let i = 3; i < d.length; i += 4) if (d[i] > 0) ++painted;
    }
    return painted;
  }, selector);
}

before(async () => {
  await startServer();
  await seed();
  browser = await newBrowser(['--use-angle=swiftshader', '--enable-unsafe-swiftshader']);
  page = await (await browser.newContext({ viewport: { width: 1400, height: 900 } })).newPage();
  watch(page);
});

after(async () => {
  if (browser) await browser.close();
  if (server.proc && server.proc.exitCode === null) {
    server.proc.kill('SIGTERM');
    await new Promise((r) => { server.proc.on('exit', r); setTimeout(r, 10_000).unref(); });
  }
  if (server.dir) fs.rmSync(server.dir, { recursive: true, force: true });
});

test('login: the form gives an HttpOnly session cookie and opens the site view', async () => {
  problems.length = 0;
  await page.goto(`${server.base}/`);
  await page.getByLabel('Token').waitFor();
  await axe(page, 'login');
  await shot(page, 'login');
  await login(page);
  const cookies = await page.context().cookies();
  const session = cookies.find((c) => c.name === 'hsns_session');
  assert.ok(session, 'no session cookie after login');
  assert.equal(session.httpOnly, true);
  assert.equal(session.sameSite, 'Strict');
  assert.equal(await page.evaluate(() => document.cookie.includes('hsns_session')), false, 'the page can read the cookie');
  assert.deepEqual(problems, []);
});

const PAGES = [
  ['site', '#/site', 'Site view'],
  ['site-su0', '#/site?expand=su:0,spines:0', 'Site view'],
  ['site-all', '#/site?expand=all', 'Site view'],
  ['matrix', '#/matrix', 'Matrix'],
  ['matrix-rail-su', '#/matrix?view=rail-su', 'Matrix'],
  ['matrix-host-port', '#/matrix?view=host-port', 'Matrix'],
  ['network', '#/network', 'Network'],
  ['host', '#/host/host000', 'host host000'],
  ['switch', '#/switch/leaf000', 'switch leaf000'],
  ['port', '#/port/host001/eth0', 'port host001/eth0'],
  ['link', '#/link/host001/eth0', 'link host001/eth0'],
  ['scheduling', '#/scheduling', 'Scheduling'],
  ['job', '#/job/train-ui', 'Job train-ui'],
];

test('every page loads without console errors and without WCAG 2 A/AA violations', async () => {
  for (const [name, hash, done] of PAGES) {
    await open(page, hash, done);
    if (name === 'host') assert.ok(await page.locator('.kpi-chart canvas').count() >= 1, 'host page: no KPI chart drawn');
    if (name.startsWith('matrix')) assert.ok(await paintedPixels(page, '#matrix-chart canvas') > 0, `${name}: nothing drawn`);
    await axe(page, name);
    await shot(page, name);
    assert.deepEqual(problems, [], `${name}: console or page errors`);
  }
});

// The rows of the matrix page's table of cells not ok, as text.
const flaggedRows = async (p) => (await p.locator('#matrix-table tbody tr').allTextContents()).map((t) => t.replace(/\s+/g, ' '));

test('matrices show every link under each overlay, with the cells not ok named', async () => {
  // host × NPU port: one cell per NPU link (16 hosts × 4 NPUs); utilisation flags host003's eth1 only.
  await open(page, '#/matrix?view=host-port&overlay=util', 'Matrix');
  const chart = page.locator('#matrix-chart');
  assert.equal(await chart.getAttribute('data-cells'), '64', 'host × NPU port: not one cell per NPU link');
  let rows = await flaggedRows(page);
  assert.equal(rows.length, 1, `utilisation: ${rows.join(' | ')}`);
  assert.match(rows[0], /host003.*NPU 1.*bad.*host003\/eth1.*95\.0 %/);
  assert.ok(await paintedPixels(page, '#matrix-chart canvas') > 0, 'host × NPU port: nothing drawn');
  await axe(page, 'matrix host × port (utilisation)');
  await shot(page, 'matrix-host-port-util');
  // A cell's worst link is a link to its page (the heatmap cell's click goes there too).
  await page.locator('#matrix-table a', { hasText: 'host003/eth1' }).click();
  await page.waitForFunction(() => /^link host003\/eth1 — leaf/.test(document.getElementById('status')?.textContent ?? ''), null, { timeout: 20_000 });
  // rail × SU: PFC pauses of host005's eth2 flag rail 2 of SU 1.
  await open(page, '#/matrix?view=rail-su&overlay=pfc', 'Matrix');
  assert.equal(await chart.getAttribute('data-cells'), '16', 'rail × SU: not one cell per rail and SU');
  assert.equal(await chart.getAttribute('data-links'), '64');
  rows = await flaggedRows(page);
  assert.equal(rows.length, 1, `PFC: ${rows.join(' | ')}`);
  assert.match(rows[0], /rail 2.*SU 1.*bad.*host005\/eth2.*5000 pause frames/);
  await axe(page, 'matrix rail × SU (PFC)');
  await shot(page, 'matrix-rail-su-pfc');
  // Optics against thresholds: host006's weakest lane at -13 dBm.
  await open(page, '#/matrix?view=host-port&overlay=optics', 'Matrix');
  rows = await flaggedRows(page);
  assert.equal(rows.length, 1, `optics: ${rows.join(' | ')}`);
  assert.match(rows[0], /host006.*NPU 0.*bad.*-13\.0 dBm/);
  // Alarm colouring: host001's NIC ports (major, active) on the host × port matrix; the silenced host014 not.
  await open(page, '#/matrix?view=host-port&overlay=alarms', 'Matrix');
  rows = await flaggedRows(page);
  assert.ok(rows.some((r) => /host001.*NPU 0.*major/.test(r)) && rows.some((r) => /host001.*NPU 1.*major/.test(r)), `alarms: ${rows.join(' | ')}`);
  assert.ok(!rows.some((r) => r.includes('host014')), 'a suppressed alarm colours the matrix');
  await axe(page, 'matrix host × port (alarms)');
  await shot(page, 'matrix-host-port-alarms');
  // The overlay chooser puts its choice in the URL; the other metric overlays draw without errors.
  await page.locator('#overlay-select').selectOption('ecn');
  await page.waitForFunction(() => location.hash.includes('overlay=ecn') && (document.getElementById('status')?.textContent ?? '').includes('ecn'), null, { timeout: 20_000 });
  for (const o of ['drops', 'fec', 'flaps']) {
    await open(page, `#/matrix?overlay=${o}`, 'Matrix');
    assert.ok(await paintedPixels(page, '#matrix-chart canvas') > 0, `leaf × spine (${o}): nothing drawn`);
  }
  assert.deepEqual(problems, []);
});

test('overlays grade and describe with the thresholds of the aggregator\'s configuration', async () => {
  const fec = (await api('GET', '/api/v1/overlays')).items.find((o) => o.id === 'fec');
  assert.deepEqual(fec.thresholds, { warn: 5, bad: 50 });
  // 20 symbol errors/s: bad by the defaults (above 1/s), a warning by the configured 5 and 50.
  await open(page, '#/matrix?view=host-port&overlay=fec', 'Matrix');
  const rows = await flaggedRows(page);
  assert.equal(rows.length, 1, `FEC: ${rows.join(' | ')}`);
  assert.match(rows[0], /host004.*NPU 2.*warning.*host004\/eth2.*20\.0 symbol errors/);
  assert.doesNotMatch(rows[0], /bad/);
  // The note under the chooser states the configured numbers.
  assert.match(await page.locator('#overlay-controls .note').textContent(), /warning above 5\/s, bad above 50\/s/);
  await shot(page, 'matrix-host-port-fec');
  assert.deepEqual(problems, []);
});

test('the time slider replays an overlay from the KPI store', async () => {
  // Two hours ago host003's eth1 was idle: nothing flagged; now it is.
  await open(page, `#/matrix?view=host-port&overlay=util&at=${overlay.past + 60_000}`, 'Matrix');
  assert.equal((await flaggedRows(page)).length, 0, 'the replayed time shows the current reading');
  assert.match(await page.locator('#time-shown').textContent(), /UTC/);
  await shot(page, 'matrix-replay');
  await page.getByRole('button', { name: 'Back to now' }).click();
  await page.waitForFunction(() => !location.hash.includes('at=') && (document.getElementById('status')?.textContent ?? '').startsWith('Matrix'), null, { timeout: 20_000 });
  await page.locator('#matrix-table').waitFor({ timeout: 20_000 });
  assert.equal((await flaggedRows(page)).length, 1, 'back to now does not show the current reading');
  // The slider from the keyboard: one step back (10 minutes) goes into the URL.
  await page.locator('#time-slider').focus();
  await page.keyboard.press('ArrowLeft');
  await page.waitForFunction(() => /[?&]at=\d+/.test(location.hash), null, { timeout: 10_000 });
  assert.deepEqual(problems, []);
});

test('the site view is coloured by the chosen overlay and by alarms', async () => {
  // Whatever overlay colours it, every group names its worst active alarm and its p95 utilisation (the
  // aggregator's summary): SU 0 holds host001's link-down alarms and host003's port at 95 % of capacity.
  const summary = await api('GET', '/api/v1/overlays/summary');
  const su0 = summary.groups.id.indexOf('su:0');
  assert.equal(summary.groups.worst_alarm[su0], 'major');
  assert.equal(summary.groups.util_p95[su0], 95);
  await open(page, '#/site', 'Site view');
  const su0Text = await page.locator('button[data-group="su:0"]').textContent();
  assert.ok(su0Text.includes(`alarms: ! major (${summary.groups.active_alarms[su0]})`), su0Text);
  assert.ok(su0Text.includes('util p95: 95 % (bad)'), su0Text);
  assert.match(await page.locator('button[data-group="su:1"]').textContent(), /util p95: no data/);
  // The rail groups too: host003's eth1 is on rail 1, host001's eth0 and eth1 on rails 0 and 1.
  const rail1 = summary.groups.id.indexOf('rail:1');
  assert.ok(rail1 >= 0, 'no rail group in the summary');
  assert.equal(summary.groups.util_p95[rail1], 95);
  const rail1Text = await page.locator('a[data-rail="rail:1"]').textContent();
  assert.ok(rail1Text.includes('util p95: 95 % (bad)'), rail1Text);
  assert.ok(rail1Text.includes(`alarms: ! major (${summary.groups.active_alarms[rail1]})`), rail1Text);
  assert.equal(await page.locator('a[data-rail]').count(), 4, 'not one entry per rail');
  await axe(page, 'site (group summary)');
  await open(page, '#/site?overlay=util', 'Site view');
  assert.equal(await page.locator('#site-graph').getAttribute('data-overlay'), 'util');
  assert.match(await page.locator('button[data-group="su:0"]').textContent(), /Utilisation: bad/);
  assert.match(await page.locator('button[data-group="su:1"]').textContent(), /Utilisation: (ok|no data)/);
  assert.ok(Number(await page.locator('#site-graph').getAttribute('data-flagged')) >= 1, 'no drawn item is flagged');
  await axe(page, 'site (utilisation)');
  await shot(page, 'site-util');
  await open(page, '#/site?expand=su:0&overlay=alarms', 'Site view');
  assert.match(await page.locator('button[data-group="su:0"]').textContent(), /Active alarms \(worst severity\): major/);
  await axe(page, 'site (alarms)');
  await shot(page, 'site-alarms');
  assert.deepEqual(problems, []);
});

// The element stays the same node while a delta is applied (a reload or a re-render would replace it).
async function markElement(p, selector) {
  await p.locator(selector).evaluate((e) => { e.dataset['kept'] = 'yes'; });
  return async () => assert.equal(await p.locator(selector).getAttribute('data-kept'), 'yes', `${selector} was redrawn, not updated`);
}

test('the site view and the matrices apply alarm deltas from the stream without a reload', async () => {
  // Site view, SU 3 (host012..host015; host014's alarm is silenced): host013's eth2 goes down, then up.
  await open(page, '#/site?overlay=alarms', 'Site view');
  await waitText(page, '#site-live', 'connected');
  const su3 = page.locator('button[data-group="su:3"]');
  assert.match(await su3.textContent(), /Active alarms \(worst severity\): no active alarm/);
  const kept = await markElement(page, '#site-graph');
  const flagged = Number(await page.locator('#site-graph').getAttribute('data-flagged'));
  await events([nicLine('host013', 'eth2', false, Date.now())]);
  await page.waitForFunction(() => /worst severity\): major/.test(document.querySelector('button[data-group="su:3"]')?.textContent ?? ''), null, { timeout: 10_000 });
  await kept();
  assert.ok(Number(await page.locator('#site-graph').getAttribute('data-deltas')) >= 1, 'no delta counted');
  assert.equal(Number(await page.locator('#site-graph').getAttribute('data-flagged')), flagged + 1, 'not exactly SU 3 recoloured');
  await shot(page, 'site-live-raised');
  await events([nicLine('host013', 'eth2', true, Date.now())]);
  await page.waitForFunction(() => /worst severity\): no active alarm/.test(document.querySelector('button[data-group="su:3"]')?.textContent ?? ''), null, { timeout: 10_000 });
  await kept();
  assert.equal(Number(await page.locator('#site-graph').getAttribute('data-flagged')), flagged, 'the clear did not restore the colours');
  // Host × NPU port matrix: host012's eth3 (NPU 3) raised, then cleared, in place.
  await open(page, '#/matrix?view=host-port&overlay=alarms', 'Matrix');
  await waitText(page, '#matrix-live', 'connected');
  const keptChart = await markElement(page, '#matrix-chart');
  assert.ok(!(await flaggedRows(page)).some((r) => r.includes('host012')), 'host012 is flagged before its alarm');
  await events([nicLine('host012', 'eth3', false, Date.now())]);
  await page.locator('#matrix-table tr', { hasText: 'host012/eth3' }).waitFor({ timeout: 10_000 });
  const row = (await flaggedRows(page)).find((r) => r.includes('host012'));
  assert.match(row, /host012.*NPU 3.*major/);
  await keptChart();
  await shot(page, 'matrix-live-raised');
  await events([nicLine('host012', 'eth3', true, Date.now())]);
  await page.locator('#matrix-table tr', { hasText: 'host012/eth3' }).waitFor({ state: 'detached', timeout: 10_000 });
  await keptChart();
  assert.ok(Number(await page.locator('#matrix-chart').getAttribute('data-deltas')) >= 2, 'the matrix counted fewer than two deltas');
  await axe(page, 'matrix (live)');
  assert.deepEqual(problems, []);
});

test('the site view under the link-state overlay follows the topology stream without a reload', async () => {
  await open(page, '#/site', 'Site view');
  await waitText(page, '#site-live', 'Live state updates: connected');
  const su3 = page.locator('button[data-group="su:3"]');
  assert.doesNotMatch(await su3.textContent(), /isolated/);
  const kept = await markElement(page, '#site-graph');
  await api('PATCH', '/api/v1/topology/devices/host013', { state: 'isolated' });
  await page.waitForFunction(() => /isolated/.test(document.querySelector('button[data-group="su:3"]')?.textContent ?? ''), null, { timeout: 10_000 });
  await kept();
  assert.ok(Number(await page.locator('#site-graph').getAttribute('data-deltas')) >= 1, 'no state change counted');
  assert.doesNotMatch(await page.locator('button[data-group="su:2"]').textContent(), /isolated/, 'another SU changed');
  await shot(page, 'site-live-state');
  await api('PATCH', '/api/v1/topology/devices/host013', { state: 'healthy' });
  await page.waitForFunction(() => !/isolated/.test(document.querySelector('button[data-group="su:3"]')?.textContent ?? ''), null, { timeout: 10_000 });
  await kept();
  assert.deepEqual(problems, []);
});

test('the matrix under the link-state overlay follows the topology stream without a reload', async () => {
  await open(page, '#/matrix?view=host-port&overlay=state', 'Matrix');
  await waitText(page, '#matrix-live', 'Live link-state updates: connected');
  const kept = await markElement(page, '#matrix-chart');
  const before = await flaggedRows(page);
  assert.ok(!before.some((r) => r.includes('host012')), 'host012 is flagged before it is isolated');
  await api('PATCH', '/api/v1/topology/devices/host012', { state: 'isolated' });
  await page.locator('#matrix-table tr', { hasText: 'host012' }).first().waitFor({ timeout: 10_000 });
  const rows = (await flaggedRows(page)).filter((r) => r.includes('host012'));
  assert.ok(rows.length >= 1 && rows.every((r) => /isolated \(host host012\)/.test(r)), rows.join('\n'));
  assert.equal((await flaggedRows(page)).length, before.length + rows.length, 'other cells changed');
  await kept();
  assert.ok(Number(await page.locator('#matrix-chart').getAttribute('data-deltas')) >= 1, 'no state change counted');
  await shot(page, 'matrix-live-state');
  await api('PATCH', '/api/v1/topology/devices/host012', { state: 'healthy' });
  await page.locator('#matrix-table tr', { hasText: 'host012' }).first().waitFor({ state: 'detached', timeout: 10_000 });
  await kept();
  await axe(page, 'matrix (live link states)');
  assert.deepEqual(problems, []);
});

test('the matrix and the site view under a metric overlay follow the grade stream without a reload', async () => {
  // Host × NPU port under drops and errors: host013's eth1 (NPU 1) has no reading, then 50 drops/s (bad).
  await open(page, '#/matrix?view=host-port&overlay=drops', 'Matrix');
  await waitText(page, '#matrix-live', 'Live grade updates: connected');
  const kept = await markElement(page, '#matrix-chart');
  const before = await flaggedRows(page);
  assert.ok(!before.some((r) => r.includes('host013')), 'host013 is flagged before its drops');
  await api('POST', '/api/v1/kpis', { samples: [{ entity: 'host013/eth1', metric: 'rx_dropped_per_s', ts: Date.now(), value: 50 }] });
  await page.locator('#matrix-table tr', { hasText: 'host013/eth1' }).waitFor({ timeout: 10_000 });
  const rows = await flaggedRows(page);
  assert.match(rows.find((r) => r.includes('host013')) ?? '', /host013.*NPU 1.*bad.*host013\/eth1.*50\.0 drops \+ errors\/s/);
  assert.equal(rows.length, before.length + 1, 'other cells changed');
  await kept();
  assert.ok(Number(await page.locator('#matrix-chart').getAttribute('data-deltas')) >= 1, 'no grade change counted');
  await shot(page, 'matrix-live-drops');
  // The site view under FEC: SU 3 (host012..host015) turns bad in place when host015's eth0 reports 100
  // symbol errors/s (bad above the configured 50).
  await open(page, '#/site?overlay=fec', 'Site view');
  await waitText(page, '#site-live', 'Live grade updates: connected');
  const su3 = page.locator('button[data-group="su:3"]');
  assert.doesNotMatch(await su3.textContent(), /FEC \/ BER: bad/);
  const keptGraph = await markElement(page, '#site-graph');
  await api('POST', '/api/v1/kpis', { samples: [{ entity: 'host015/eth0', metric: 'symbol_error_per_s', ts: Date.now(), value: 100 }] });
  await page.waitForFunction(() => /FEC \/ BER: bad/.test(document.querySelector('button[data-group="su:3"]')?.textContent ?? ''), null, { timeout: 10_000 });
  await keptGraph();
  assert.doesNotMatch(await page.locator('button[data-group="su:2"]').textContent(), /FEC \/ BER: bad/, 'another SU changed');
  assert.ok(Number(await page.locator('#site-graph').getAttribute('data-deltas')) >= 1, 'no grade change counted');
  await shot(page, 'site-live-fec');
  assert.deepEqual(problems, []);
});

test('a subnet is created and deleted through the network page', async () => {
  await open(page, '#/network', 'Network');
  await page.locator('#subnet-name').fill('ui-subnet');
  await page.locator('#subnet-cidr').fill('198.51.100.0/24');
  await page.locator('#subnet-tenant').fill('ui-tenant');
  await page.getByRole('button', { name: 'Create subnet' }).click();
  await page.getByRole('cell', { name: 'ui-subnet', exact: true }).waitFor({ timeout: 10_000 });
  const made = await api('GET', '/api/v1/subnets?name=ui-subnet');
  assert.equal(made.items.length, 1, 'the subnet is not stored');
  assert.equal(made.items[0].cidr, '198.51.100.0/24');
  await shot(page, 'network-created');
  await page.getByRole('button', { name: 'Delete subnet ui-subnet' }).click();
  await page.getByRole('cell', { name: 'ui-subnet', exact: true }).waitFor({ state: 'detached', timeout: 10_000 });
  const gone = await api('GET', '/api/v1/subnets?name=ui-subnet');
  assert.equal(gone.items.length, 0, 'the subnet is still stored');
  assert.deepEqual(problems, []);
});

test('a topology search from the form marks its answer on the site view', async () => {
  await open(page, '#/scheduling', 'Scheduling');
  await page.locator('#search-answers').fill('2');
  await page.getByRole('button', { name: 'Search' }).click();
  await page.locator('a.show-answer').first().waitFor({ timeout: 20_000 });
  await shot(page, 'scheduling-answers');
  const hosts = (await page.locator('#search-results tbody tr').first().locator('td').nth(1).textContent())
    .trim().split(' ').filter((w) => w.startsWith('host'));
  assert.ok(hosts.length >= 1, 'the answer names no host');
  await page.locator('a.show-answer[data-rank="1"]').click();
  await page.waitForFunction(() => (document.getElementById('status')?.textContent ?? '').startsWith('Site view'), null, { timeout: 20_000 });
  const graph = page.locator('#site-graph');
  assert.equal(await graph.getAttribute('data-marked'), String(hosts.length), 'the site view does not mark exactly the answer hosts');
  assert.ok(decodeURIComponent(page.url()).includes(`mark=${hosts.join(',')}`), `the URL does not hold the answer: ${page.url()}`);
  assert.ok(await page.locator('.groups li.marked').count() >= 1, 'no group of the answer is marked in the list');
  await shot(page, 'site-answer');
  assert.deepEqual(problems, []);
});

// The site view's SU drill-down in the living graph: a click on SU 0's toggle draws its leaves and hosts into
// the same graph element (no page rebuild), as many items as the aggregator's layout of that expansion,
// the URL records it, the back button returns to the grouped view, and Enter on the toggle collapses it
// again in place.
async function drillDownInPlace(p, shotName) {
  await open(p, '#/site', 'Site view');
  const graph = p.locator('#site-graph');
  const grouped = Number(await graph.getAttribute('data-nodes'));
  const layout = await api('GET', '/api/v1/topology/layout?expand=su:0');
  const wanted = layout.nodes.length + layout.groups.filter((g) => !g.expanded).length + layout.rails.length;
  assert.ok(wanted > grouped, 'expanding SU 0 draws no more items');
  const kept = await markElement(p, '#site-graph');
  const expandedTo = (ids) => p.waitForFunction((want) => document.getElementById('site-graph')?.dataset['expanded'] === want, ids, { timeout: 10_000 });
  await p.locator('button[data-group="su:0"]').click();
  await expandedTo('su:0');
  await kept();
  assert.equal(Number(await graph.getAttribute('data-nodes')), wanted, 'not the items of the expanded layout');
  assert.equal(await p.locator('button[data-group="su:0"]').getAttribute('aria-pressed'), 'true');
  assert.match(await p.locator('#status').textContent(), new RegExp(`^Site view: ${wanted} items`));
  assert.ok(decodeURIComponent(p.url()).includes('expand=su:0'), `the URL does not record the expansion: ${p.url()}`);
  await p.waitForTimeout(300); // the renderer draws on its next animation frame
  assert.ok(await paintedPixels(p, '#site-graph canvas') > 0, 'the expanded graph is not drawn');
  await shot(p, shotName);
  await p.goBack();
  await expandedTo('');
  assert.equal(Number(await graph.getAttribute('data-nodes')), grouped, 'back did not return to the grouped view');
  await p.locator('button[data-group="su:1"]').click();
  await expandedTo('su:1');
  const keptAgain = await markElement(p, '#site-graph');
  await p.locator('button[data-group="su:1"]').press('Enter');
  await expandedTo('');
  await keptAgain();
  assert.equal(Number(await graph.getAttribute('data-nodes')), grouped, 'collapsing did not return to the grouped items');
  assert.equal(await p.locator('button[data-group="su:1"]').getAttribute('aria-pressed'), 'false');
}

test('the site view renders through sigma.js (WebGL) and drills down into an SU in place', async () => {
  await open(page, '#/site?expand=su:0', 'Site view');
  assert.equal(await page.locator('#site-graph').getAttribute('data-renderer'), 'webgl');
  await page.waitForTimeout(300); // sigma draws on the next animation frame
  assert.ok(await paintedPixels(page, '#site-graph canvas.sigma-labels') > 0, 'sigma drew no labels');
  await drillDownInPlace(page, 'site-drilled-down');
  assert.deepEqual(problems, []);
});

const alarmOf = (entity) => brain.alarms.find((a) => a.entity === entity);
const waitText = (p, selector, text) => p.locator(selector, { hasText: text }).first().waitFor({ timeout: 10_000 });

test('the alarm view lists incidents and alarms (flapping, suppressed) and updates live', async () => {
  await open(page, '#/alarms', 'Alarms');
  await waitText(page, '#live', 'connected');
  const incidents = page.locator('#incident-table');
  await incidents.getByRole('link', { name: brain.incident, exact: true }).waitFor();
  const row = incidents.locator('tr', { has: page.getByRole('link', { name: brain.incident, exact: true }) });
  assert.match(await row.textContent(), /open.*major.*2/, 'the incident row lacks its state, severity or alarm count');
  assert.match(await row.textContent(), /train-ui/, 'the incident row does not name the affected job');
  const alarmsTable = page.locator('#alarm-table');
  assert.match(await alarmsTable.locator('tr', { hasText: 'host010/eth2' }).textContent(), /⚑ flapping/, 'the flapping alarm is not marked');
  assert.match(await alarmsTable.locator('tr', { hasText: 'host014/eth0' }).textContent(), /suppressed by s-/, 'the silenced alarm is not shown as suppressed');
  // A new alarm arrives over the stream, without a reload, and is noted in the change feed.
  await events([nicLine('host007', 'eth3', false, Date.now())]);
  await waitText(page, '#alarm-table tr', 'host007/eth3');
  await waitText(page, '#change-feed li', 'alarm raised: host007/eth3');
  await axe(page, 'alarms');
  await shot(page, 'alarms');
  assert.deepEqual(problems, []);
});

test('filters live in the URL; acknowledging one alarm, an incident and a selection works and survives a reload', async () => {
  // SU and rail (from the topology export): host010 is in SU 2, its eth2 on rail 2.
  await open(page, '#/alarms?su=2&rail=2', 'Alarms');
  assert.equal(await page.locator('#filter-rail').inputValue(), '2');
  const placed = await page.locator('#alarm-table tbody tr').allTextContents();
  assert.equal(placed.length, 1, `SU 2, rail 2: ${placed.join(' | ')}`);
  assert.match(placed[0], /host010\/eth2/);
  await open(page, '#/alarms?entity=host001%2F*&severity=major', 'Alarms');
  assert.equal(await page.locator('#filter-entity').inputValue(), 'host001/*');
  assert.equal(await page.locator('#alarm-table tbody tr').count(), 2, 'the filter does not keep exactly host001\'s two alarms');
  const eth0 = alarmOf('host001/eth0');
  await page.locator('#ack-comment').fill('reseating the cable');
  await page.getByRole('button', { name: 'Acknowledge alarm host001/eth0 nic-link-down' }).click();
  await waitText(page, '#alarm-table tr', 'ops at');
  const one = await api('GET', `/api/v1/alarms/${eth0.id}`);
  assert.equal(one.state, 'acknowledged');
  assert.equal(one.acknowledged_by, 'ops');
  assert.equal(one.comment, 'reseating the cable');
  // The incident's group: the alarm not yet acknowledged.
  await page.locator('#ack-comment').fill('whole NIC');
  await page.locator(`button[data-incident="${brain.incident}"]`).click();
  await page.locator(`button[data-incident="${brain.incident}"]:disabled`).waitFor({ timeout: 10_000 });
  const eth1 = await api('GET', `/api/v1/alarms/${alarmOf('host001/eth1').id}`);
  assert.equal(eth1.state, 'acknowledged');
  assert.equal(eth1.comment, 'whole NIC');
  // A selection (POST /api/v1/alarms/ack): acknowledging again replaces the comments.
  for (const port of ['eth0', 'eth1']) await page.getByRole('checkbox', { name: `Select alarm host001/${port} nic-link-down` }).check();
  await page.locator('#ack-comment').fill('both ports');
  await page.getByRole('button', { name: 'Acknowledge selected' }).click();
  await page.waitForFunction(() => (document.getElementById('status')?.textContent ?? '').startsWith('Acknowledged 2 selected'), null, { timeout: 10_000 });
  for (const port of ['eth0', 'eth1']) assert.equal((await api('GET', `/api/v1/alarms/${alarmOf(`host001/${port}`).id}`)).comment, 'both ports');
  await page.reload();
  await page.waitForFunction(() => (document.getElementById('status')?.textContent ?? '').startsWith('Alarms'), null, { timeout: 20_000 });
  assert.equal(await page.locator('#alarm-table tbody tr', { hasText: 'acknowledged' }).count(), 2, 'the acknowledgements are not shown after a reload');
  await shot(page, 'alarms-acknowledged');
  assert.deepEqual(problems, []);
});

test('a silence made from the filter suppresses the matching alarm, survives a reload and is deleted', async () => {
  await open(page, '#/alarms?entity=host010%2F*', 'Alarms');
  await page.getByRole('button', { name: 'Silence what matches this filter' }).click();
  assert.equal(await page.locator('#silence-entity').inputValue(), 'host010/*');
  await page.locator('#silence-reason').fill('optics swap');
  await page.locator('#silence-hours').fill('2');
  await page.getByRole('button', { name: 'Create silence' }).click();
  await waitText(page, '#silence-table tr', 'optics swap');
  const rule = (await api('GET', '/api/v1/silences')).items.find((r) => r.reason === 'optics swap');
  assert.ok(rule, 'the silence is not stored');
  assert.equal(rule.entity, 'host010/*');
  assert.equal(rule.creator, 'ops');
  const flapping = await api('GET', `/api/v1/alarms/${alarmOf('host010/eth2').id}`);
  assert.equal(flapping.suppressed, true, 'the matching alarm is not suppressed');
  await waitText(page, '#alarm-table tr', 'suppressed by');
  await page.reload();
  await waitText(page, '#silence-table tr', 'optics swap');
  await page.getByRole('button', { name: `Delete silence ${rule.id}` }).click();
  await page.locator('#silence-table tr', { hasText: 'optics swap' }).waitFor({ state: 'detached', timeout: 10_000 });
  assert.ok(!(await api('GET', '/api/v1/silences')).items.some((r) => r.id === rule.id), 'the silence is still stored');
  assert.deepEqual(problems, []);
});

test('the root-cause page ranks causes, names the job and ranks, and marks the blast radius on the site view', async () => {
  await open(page, `#/incident/${brain.incident}`, `Incident ${brain.incident}`);
  const stored = await api('GET', `/api/v1/incidents/${brain.incident}`);
  const top = page.locator('#root-causes > li').first();
  assert.match(await top.locator('h3').textContent(), new RegExp(`#1 ${stored.root_causes[0].entity.replace(/[|/]/g, '.')}`));
  assert.ok(await top.locator('ul li').count() >= 1, 'the top cause shows no evidence');
  assert.match(await top.locator('table').textContent(), /host001\/eth0/, 'the symptoms do not name the alarm');
  assert.equal((await page.locator('#recommended-action').textContent()).trim(), stored.recommended_action);
  const job = page.locator('#affected-jobs tr', { hasText: 'train-ui' });
  assert.match(await job.textContent(), /rank \d+: host001 NPU \d/, 'the affected ranks are not placed');
  assert.ok(await page.locator('table', { hasText: 'acknowledged' }).count() >= 1, 'the timeline does not show the acknowledgement');
  // Sparklines of the metrics involved: host001/eth0's drops, drawn, with their numbers in words.
  assert.match(await page.locator('#sparklines').textContent(), /host001\/eth0 rx_dropped_per_s: \d+ minutes, min 0\.00, max 196/);
  await page.waitForTimeout(200);
  assert.ok(await paintedPixels(page, '#sparklines canvas') > 0, 'the sparklines drew nothing');
  await axe(page, 'incident');
  await shot(page, 'incident');
  await page.locator('#blast-link').click();
  await page.waitForFunction(() => (document.getElementById('status')?.textContent ?? '').startsWith('Site view'), null, { timeout: 20_000 });
  assert.ok(Number(await page.locator('#site-graph').getAttribute('data-marked')) >= 1, 'the site view marks no device of the blast radius');
  assert.ok(decodeURIComponent(page.url()).includes('host001'), `the URL does not hold the blast radius: ${page.url()}`);
  await shot(page, 'site-blast');
  assert.deepEqual(problems, []);
});

test('path diagnosis shows every hop of a pair (form) and of a job with verdicts', async () => {
  await open(page, '#/diagnose', 'Diagnosis');
  await page.locator('#diag-src').fill('host001/0');
  await page.locator('#diag-dst').fill('host002/0');
  await page.getByRole('button', { name: 'Diagnose the path' }).click();
  await page.waitForFunction(() => (document.getElementById('status')?.textContent ?? '').startsWith('Diagnosis: path'), null, { timeout: 20_000 });
  const path = await api('GET', '/api/v1/diagnose/path?src=host001/0&dst=host002/0');
  assert.equal(await page.locator('#hop-table tbody tr').count(), path.hops.length);
  assert.match(await page.locator('#hop-table').textContent(), /nic-link-down|link_down/, 'the hop of host001/eth0 does not show its alarm');
  await axe(page, 'diagnose (path)');
  await shot(page, 'diagnose-path');
  await open(page, '#/diagnose?job=train-ui', 'Diagnosis: job');
  const job = await api('GET', '/api/v1/diagnose/job/train-ui');
  assert.equal(await page.locator('#hop-table tbody tr').count(), job.hops.length);
  // The rank × rank matrix: one cell per communicating pair, drawn.
  assert.equal(await page.locator('#rank-matrix').getAttribute('data-cells'), String(job.pairs.length));
  assert.ok(job.pairs.length >= 1);
  assert.ok(await paintedPixels(page, '#rank-matrix canvas') > 0, 'the rank matrix drew nothing');
  assert.match(await page.locator('#diag-title').textContent(), new RegExp(job.verdict));
  await axe(page, 'diagnose (job)');
  await shot(page, 'diagnose-job');
  assert.deepEqual(problems, []);
});

// One flow record of `host`'s probe (the report kind's JSON form, hsns/proto/flows.h).
const flowRecord = (host, src, dst, bytes) => ({ type: 'flow', host, ifindex: 2, ifname: 'eth0', direction: 'egress', family: 4,
  src, dst, sport: 49152, dest_qp: 257, packets: Math.ceil(bytes / 4096), bytes, first_ns: Date.now() * 1e6, last_ns: Date.now() * 1e6,
  op: { send: 0, write: Math.ceil(bytes / 4096), read_req: 0, read_resp: 0, ack: 0, atomic: 0, cnp: 0, other: 0 },
  ect: 0, ce: 0, cnp: 0, nak: { psn_seq: 0, inv_req: 0, rem_access: 0, rem_op: 0, rnr: 0, other: 0 }, psn_regressions: 0 });

test('the job\'s rank matrix shows the traffic volume of a pair whose flows were reported', async () => {
  // A flow of the first pair's ranks (one direction, as its source host's probe reports it).
  const diag = await api('GET', '/api/v1/diagnose/job/train-ui');
  const pair = diag.pairs[0];
  const ranks = new Map((await api('GET', '/api/v1/jobs/train-ui')).ranks.map((r) => [r.rank, r]));
  const src = ranks.get(pair.src_rank);
  const dst = ranks.get(pair.dst_rank);
  await api('POST', `/api/v1/agents/${src.host}/reports`, { seq: 1, ts_ms: Date.now() - 30_000,
    flows: [{ epoch: 1, records: [flowRecord(src.host, src.ip, dst.ip, 123_456_789)] }] });

  await open(page, '#/diagnose?job=train-ui', 'Diagnosis: job');
  const matrix = page.locator('#rank-matrix');
  assert.equal(await matrix.getAttribute('data-measure'), 'verdict');
  assert.equal(await matrix.getAttribute('data-traffic-cells'), '1', 'not exactly one pair with flow data');
  // The choice from the keyboard: the select's next option is the traffic.
  await page.locator('#matrix-measure').focus();
  await page.keyboard.press('ArrowDown');
  await page.waitForFunction(() => document.getElementById('rank-matrix')?.dataset['measure'] === 'traffic', null, { timeout: 10_000 });
  assert.ok(page.url().includes('matrix=traffic'), `the URL does not hold the choice: ${page.url()}`);
  const legend = await page.locator('#rank-matrix-legend').textContent();
  assert.match(legend, new RegExp(`1 of ${diag.pairs.length} pairs have flow data, 123 MB in all`));
  assert.match(legend, /“no flow data”/);
  assert.match(await matrix.getAttribute('aria-label'), /coloured by the bytes sent in the last 15 min, 1 with flow data/);
  assert.ok(await paintedPixels(page, '#rank-matrix canvas') > 0, 'the traffic matrix drew nothing');
  // The pairs' table says each pair's volume in words: this pair's bytes, the others no flow data.
  const rows = (await page.locator('table', { hasText: 'Rank pairs' }).locator('tbody tr').allTextContents()).map((t) => t.replace(/\s+/g, ' '));
  const row = rows.find((r) => r.startsWith(`${pair.src_rank} → ${pair.dst_rank}`));
  assert.match(row, /123 MB \(1 flow\)/);
  assert.equal(rows.filter((r) => r.includes('no flow data')).length, rows.length - 1);
  await axe(page, 'diagnose (job, traffic)');
  await shot(page, 'diagnose-job-traffic');
  // A bookmark of the choice opens with it.
  await open(page, '#/diagnose?job=train-ui&matrix=traffic', 'Diagnosis: job');
  assert.equal(await page.locator('#rank-matrix').getAttribute('data-measure'), 'traffic');
  assert.equal(await page.locator('#matrix-measure').inputValue(), 'traffic');
  assert.deepEqual(problems, []);
});

test('the schedule view shows the rank placement, the predicted time and the route plan of a job', async () => {
  const job = await api('GET', '/api/v1/jobs/train-ui');
  const diag = await api('GET', '/api/v1/diagnose/job/train-ui');
  // Reached from the scheduling page's list of jobs.
  await open(page, '#/scheduling', 'Scheduling');
  await page.getByRole('link', { name: 'Schedule of train-ui' }).click();
  await page.waitForFunction(() => (document.getElementById('status')?.textContent ?? '').startsWith('Job train-ui'), null, { timeout: 20_000 });
  const placed = await page.locator('#placement-table tbody tr').allTextContents();
  assert.equal(placed.length, job.ranks.length);
  assert.match(placed[0], new RegExp(`^0${job.ranks[0].host}${job.ranks[0].npu}`));
  assert.ok(await paintedPixels(page, '#placement-chart canvas') > 0, 'the placement drew nothing');
  assert.match(await page.locator('section', { hasText: 'Predicted step time' }).textContent(),
    new RegExp(`planned source ports \\(the route plan\\)${job.schedule.predicted_seconds.planned.toFixed(4)} s`));
  assert.equal(await page.locator('#plan-table tbody tr').count(), Math.min(500, diag.pairs.length));
  await axe(page, 'job');
  await shot(page, 'job');
  assert.deepEqual(problems, []);
});

test('the NPU port, link, host and switch pages show the port\'s module against its thresholds, both ends and the alarms', async () => {
  // host001's eth0: its module reported by a report batch (temperature above its high warning, lane 1
  // receiving below its low warning); its link-down alarm is the seeded one.
  const t = Date.now() - 20_000;
  await api('POST', '/api/v1/agents/host001/reports', { seq: 100, ts_ms: t, optics: { host: 'host001', ts_ms: t, modules: [{
    netdev: 'eth0', status: 'ok', vendor: 'ACME', serial: 'SN-UI-1', temperature_celsius: 71, voltage_volts: 3.3,
    thresholds: {
      temperature: { high_alarm: 75, low_alarm: -5, high_warning: 70, low_warning: 0 },
      rx_power: { high_alarm: 0.002, low_alarm: 0.00005, high_warning: 0.0015, low_warning: 0.0001 },
    },
    flags: { temperature: { high_alarm: false, low_alarm: false, high_warning: true, low_warning: false } },
    lanes: [{ lane: 1, tx_power_watts: 0.0012, rx_power_watts: 0.00008, bias_amperes: 0.007 }] }] } });
  await open(page, '#/port/host001/eth0', 'port host001/eth0');
  const module = await page.locator('#port-module tbody tr').evaluateAll((rows) => rows.map((r) => [...r.children].map((c) => c.textContent).join(' ')));
  assert.ok(module.some((r) => /temperature 71\.0 °C .*▲ warning/.test(r)), module.join(' | '));
  assert.ok(module.some((r) => /receive power lane 1 0\.0800 mW .*▲ warning/.test(r)), module.join(' | '));
  assert.ok(module.some((r) => /transmit power lane 1 1\.20 mW .*no thresholds/.test(r)), module.join(' | '));
  assert.match(await page.locator('#port-module caption').textContent(), /temperature high warning/);
  assert.match(await page.locator('#port-link').textContent(), /NPU 0, state .*its link to leaf\d+\/\S+, \d+ Gb\/s/);
  assert.ok(Number(await page.locator('#entity-alarms').getAttribute('data-count')) >= 1, 'the port page lists no alarm');
  assert.match(await page.locator('#entity-alarms tbody').textContent(), /host001\/eth0/);
  await axe(page, 'port');
  await shot(page, 'port-module');
  // Its link: both ends, each a link to its page; the alarms of either end.
  await page.getByRole('link', { name: 'its link' }).click();
  await page.waitForFunction(() => (document.getElementById('status')?.textContent ?? '').startsWith('link host001/eth0 — leaf'), null, { timeout: 20_000 });
  assert.equal(await page.locator('#link-ends a').count(), 2);
  assert.match(await page.locator('#link-ends').textContent(), /host001\/eth0 — leaf\d+\/\S+: host-to-leaf link, \d+ Gb\/s, NPU 0/);
  assert.ok(Number(await page.locator('#entity-alarms').getAttribute('data-count')) >= 1, 'the link page lists no alarm');
  await shot(page, 'link');
  // The host page: its NPU ports lead to the port pages; its alarms include both of host001's link-downs.
  await open(page, '#/host/host001', 'host host001');
  assert.equal(await page.locator('table', { hasText: 'NPU ports in the topology' }).locator('tbody tr').count(), 4);
  assert.ok(Number(await page.locator('#entity-alarms').getAttribute('data-count')) >= 2, 'the host page lists fewer than its two alarms');
  await page.locator('a[href="#/port/host001/eth1"]').click();
  await page.waitForFunction(() => (document.getElementById('status')?.textContent ?? '') === 'port host001/eth1', null, { timeout: 20_000 });
  // The switch page's ports lead to their link pages.
  await open(page, '#/switch/leaf000', 'switch leaf000');
  assert.ok(await page.locator('#entity-alarms').count() === 1, 'the switch page has no alarm section');
  assert.ok(await page.locator('a[href^="#/link/leaf000/"]').count() >= 1, 'the switch page links no link page');
  assert.deepEqual(problems, []);
});

test('logout ends the session and shows the login form', async () => {
  await open(page, '#/site', 'Site view');
  await page.getByRole('button', { name: 'Log out' }).click();
  await page.getByLabel('Token').waitFor({ timeout: 10_000 });
  const res = await page.evaluate(async () => (await fetch('/api/v1/subnets')).status);
  assert.equal(res, 401, 'the session still works after logout');
});

test('without WebGL the site view falls back to the Canvas 2D renderer and draws', async () => {
  const plain = await newBrowser(['--disable-webgl', '--disable-gpu']);
  try {
    const p = await (await plain.newContext({ viewport: { width: 1400, height: 900 } })).newPage();
    watch(p);
    problems.length = 0;
    await login(p);
    assert.equal(await p.evaluate(() => !!document.createElement('canvas').getContext('webgl')), false, 'WebGL is still available');
    assert.equal(await p.locator('#site-graph').getAttribute('data-renderer'), 'canvas');
    assert.ok(await paintedPixels(p, '#site-graph canvas') > 0, 'the fallback drew nothing');
    await axe(p, 'site (canvas)');
    await shot(p, 'site-canvas');
    assert.deepEqual(problems, []);
    await drillDownInPlace(p, 'site-canvas-drilled-down');
    assert.equal(await p.locator('#site-graph').getAttribute('data-renderer'), 'canvas');
    assert.deepEqual(problems, []);
  } finally {
    await plain.close();
  }
});
