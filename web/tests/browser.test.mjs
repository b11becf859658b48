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
//   - the site view renders through sigma.js (WebGL); logout returns to the login page.
// And in a second chromium launched with --disable-webgl --disable-gpu: the site view falls back to the
// Canvas 2D renderer (ECharts) and draws. Screenshots of every page go to HSNS_ARTIFACTS.
//
// Run: HSNS_BUILD_DIR=<build> HSNS_WEB_ROOT=<build>/web/dist node --test tests/browser.test.mjs
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { chromium } from 'playwright-core';
import AxeBuilder from '@axe-core/playwright';

const BUILD_DIR = process.env.HSNS_BUILD_DIR;
if (!BUILD_DIR) throw new Error('set HSNS_BUILD_DIR to the CMake build directory');
const AGGREGATOR = path.join(BUILD_DIR, 'aggregator', 'hsns-aggregator');
const WEB_ROOT = process.env.HSNS_WEB_ROOT ?? path.join(BUILD_DIR, 'web', 'dist');
const ARTIFACTS = process.env.HSNS_ARTIFACTS ?? path.join(BUILD_DIR, 'web', 'artifacts');
const CHROMIUM = process.env.HSNS_CHROMIUM ?? '/usr/bin/chromium';
const OPERATOR = 'browser-test-operator-token-01';
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
  fs.writeFileSync(file('config.yaml'), '');
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
  ['network', '#/network', 'Network'],
  ['host', '#/host/host000', 'host host000'],
  ['switch', '#/switch/leaf000', 'switch leaf000'],
  ['scheduling', '#/scheduling', 'Scheduling'],
];

test('every page loads without console errors and without WCAG 2 A/AA violations', async () => {
  for (const [name, hash, done] of PAGES) {
    await open(page, hash, done);
    if (name === 'host') assert.ok(await page.locator('.kpi-chart canvas').count() >= 1, 'host page: no KPI chart drawn');
    if (name === 'matrix') assert.ok(await paintedPixels(page, '#matrix-chart canvas') > 0, 'matrix: nothing drawn');
    await axe(page, name);
    await shot(page, name);
    assert.deepEqual(problems, [], `${name}: console or page errors`);
  }
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

test('the site view renders through sigma.js (WebGL)', async () => {
  await open(page, '#/site?expand=su:0', 'Site view');
  assert.equal(await page.locator('#site-graph').getAttribute('data-renderer'), 'webgl');
  await page.waitForTimeout(300); // sigma draws on the next animation frame
  assert.ok(await paintedPixels(page, '#site-graph canvas.sigma-labels') > 0, 'sigma drew no labels');
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
  } finally {
    await plain.close();
  }
});
