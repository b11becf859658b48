// The dashboard watching the emulated cluster while the demo injects its faults (issue 13: "a fault injected
// in the lab colours the right entities within one report interval and appears in the alarm view"). Run by
// tests/lab/demo_test.sh beside scripts/demo.sh; not a node:test file.
//
// Debian's chromium (playwright-core, headless) logs in through the demo's loopback forward and keeps the
// host × NPU port matrix open with the alarm overlay, live. Meanwhile the REST API is polled for the alarms.
// For every fault the demo announced (its --expect-file), the first moment the aggregator lists an active
// alarm on the fault's entity and the first moment the page flags the fault's cell(s) are recorded; the
// page's delay is the second minus the later of the first and the page being ready. Checks: every fault's
// cell is flagged, each delay is at most one report interval, and the alarm view names every fault's entity.
// Screenshots go to --artifacts. Prints one line per fault and exits 1 on the first failed check.
//
// Started with the demo: it waits for the dashboard to answer, logs in, then waits for the expect file.
// Usage: node lab_view.mjs --url http://127.0.0.1:PORT --token TOKEN --expect FILE --artifacts DIR
//                          [--interval-ms 3000] [--timeout-s 300] [--stop-file FILE]
// --stop-file: once that file exists, stop waiting for faults not seen yet (and report them).
import fs from 'node:fs';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { chromium } from 'playwright-core';

const { values: opt } = parseArgs({
  options: {
    url: { type: 'string' },
    token: { type: 'string' },
    expect: { type: 'string' },
    artifacts: { type: 'string' },
    'interval-ms': { type: 'string', default: '3000' },
    'timeout-s': { type: 'string', default: '300' },
    'stop-file': { type: 'string' },
  },
});
for (const k of ['url', 'token', 'expect', 'artifacts']) {
  if (!opt[k]) throw new Error(`lab_view: --${k} is required`);
}
const interval = Number(opt['interval-ms']);
const deadline = Date.now() + Number(opt['timeout-s']) * 1000;
fs.mkdirSync(opt.artifacts, { recursive: true });
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
async function until(what, ready) {
  for (;;) {
    if (await ready()) return;
    if (Date.now() > deadline) throw new Error(`lab_view: timed out waiting for ${what}`);
    await sleep(250);
  }
}

// Where a fault shows: the port entities or the switch its alarms are raised on, and its matrix cells
// (host, NPU). The demo's leaf N serves NPU N of every host; host port "<host>/npuN", leaf port "h<i>".
function placeOf(fault) {
  const e = fault.entity;
  const leaf = /^(.*)-leaf(\d+)$/.exec(e);
  if (leaf) return { ends: [], device: e, host: null, npu: Number(leaf[2]) };
  const ends = e.startsWith('link:') ? e.slice(5).split('|') : [e];
  let host = null;
  let npu = null;
  for (const end of ends) {
    const h = /^(.*)\/npu(\d+)$/.exec(end);
    const l = /^(.*)-leaf(\d+)\/h(\d+)$/.exec(end);
    if (h) [host, npu] = [h[1], Number(h[2])];
    if (l) [host, npu] = [`${l[1]}-h${l[3]}`, Number(l[2])];
  }
  if (host === null) throw new Error(`lab_view: cannot place fault entity ${e}`);
  return { ends, device: null, host, npu };
}

function alarmMatches(place, alarm) {
  const on = [alarm.entity, alarm.peer].filter(Boolean);
  if (place.device) return on.some((x) => x === place.device || x.startsWith(`${place.device}/`));
  return on.some((x) => place.ends.includes(x));
}
// A row of the matrix's table of flagged cells: [host, "NPU n", ...].
function rowMatches(place, cells) {
  return cells[1] === `NPU ${place.npu}` && (place.host === null || cells[0] === place.host);
}

async function api(p) {
  const r = await fetch(`${opt.url}${p}`, { headers: { Authorization: `Bearer ${opt.token}` } });
  if (!r.ok) throw new Error(`lab_view: GET ${p}: ${r.status}`);
  return r.json();
}

const errors = [];
const browser = await chromium.launch({
  executablePath: process.env.HSNS_CHROMIUM ?? '/usr/bin/chromium',
  headless: true,
  args: ['--no-sandbox', '--use-angle=swiftshader', '--enable-unsafe-swiftshader'],
});
let status = 0;
try {
  const page = await (await browser.newContext({ viewport: { width: 1400, height: 900 } })).newPage();
  page.on('pageerror', (e) => errors.push(`page error: ${e.message}`));
  page.on('console', (m) => { if (m.type() === 'error') errors.push(`console: ${m.text()}`); });
  // Logged in while the demo brings the cluster up; the matrix opens once the demo chose its faults (its
  // topology is complete then), a few seconds before the first one.
  await until('the dashboard', () => fetch(`${opt.url}/`).then((r) => r.ok, () => false));
  await page.goto(`${opt.url}/`);
  await page.getByLabel('Token').fill(opt.token);
  await page.getByRole('button', { name: 'Log in' }).click();
  await page.waitForFunction(() => (document.getElementById('status')?.textContent ?? '').startsWith('Site view'), null, { timeout: 60_000 });
  await until(`the demo's ${opt.expect}`, () => fs.existsSync(opt.expect) && fs.statSync(opt.expect).size > 0);
  const faults = JSON.parse(fs.readFileSync(opt.expect, 'utf8'));
  const places = faults.map(placeOf);
  await page.goto(`${opt.url}/#/matrix?view=host-port&overlay=alarms`);
  await page.waitForFunction(() => (document.getElementById('status')?.textContent ?? '').startsWith('Matrix'), null, { timeout: 60_000 });
  await page.locator('#matrix-live', { hasText: 'connected' }).waitFor({ timeout: 60_000 });
  const ready = Date.now();

  const inApi = places.map(() => null);
  const onPage = places.map(() => null);
  while (onPage.some((t) => t === null) && Date.now() < deadline) {
    const { items } = await api('/api/v1/alarms?limit=1000');
    const now = Date.now();
    places.forEach((pl, i) => {
      if (inApi[i] === null && items.some((a) => a.state !== 'cleared' && alarmMatches(pl, a))) inApi[i] = now;
    });
    const rows = await page.locator('#matrix-table tbody tr').evaluateAll((trs) =>
      trs.map((tr) => [...tr.cells].map((td) => (td.textContent ?? '').replace(/\s+/g, ' ').trim())));
    const seen = Date.now();
    places.forEach((pl, i) => {
      if (onPage[i] === null && rows.some((r) => rowMatches(pl, r))) {
        onPage[i] = seen;
        console.log(`seen ${faults[i].fault} (${pl.host ?? pl.device} NPU ${pl.npu}) on the page`);
      }
    });
    if (opt['stop-file'] && fs.existsSync(opt['stop-file'])) break;  // the test's run is over
    await sleep(200);
  }
  await page.screenshot({ path: path.join(opt.artifacts, 'lab-matrix-alarms.png') });

  faults.forEach((f, i) => {
    if (onPage[i] === null) {
      console.log(`FAIL ${f.fault}: the matrix never flagged ${places[i].host ?? 'a host'} NPU ${places[i].npu}`);
      status = 1;
      return;
    }
    // The page may have shown it before the poll saw it in the API (both within one poll): no delay then.
    const delay = Math.max(0, onPage[i] - Math.max(inApi[i] ?? onPage[i], ready));
    const ok = delay <= interval;
    if (!ok) status = 1;
    console.log(`${ok ? 'ok  ' : 'FAIL'} ${f.fault}: ${f.entity} flagged ${delay} ms after the aggregator listed its alarm (limit ${interval} ms)`);
  });

  await page.goto(`${opt.url}/#/alarms`);
  await page.waitForFunction(() => (document.getElementById('status')?.textContent ?? '').startsWith('Alarms'), null, { timeout: 60_000 });
  await page.locator('#live', { hasText: 'connected' }).waitFor({ timeout: 60_000 });
  const text = await page.locator('main').innerText();
  for (const [i, f] of faults.entries()) {
    const names = places[i].device ? [places[i].device] : places[i].ends;
    if (!names.some((n) => text.includes(n))) {
      console.log(`FAIL ${f.fault}: the alarm view does not name ${names.join(' or ')}`);
      status = 1;
    }
  }
  await page.screenshot({ path: path.join(opt.artifacts, 'lab-alarms.png'), fullPage: true });
  if (errors.length) {
    console.log(`FAIL console or page errors:\n${errors.join('\n')}`);
    status = 1;
  }
} finally {
  await browser.close();
}
console.log(status === 0 ? 'lab_view: every fault coloured its cells in time and is in the alarm view' : 'lab_view: FAILED');
process.exit(status);
