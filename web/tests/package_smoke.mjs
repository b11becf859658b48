// The packaged dashboard in a fresh Debian 12 root (tests/packaging/install_test.sh runs it there): the
// Node.js that scripts/install-node.sh left in the root runs playwright-core as web/package-lock.json pins
// it, which drives Debian's own chromium against the packages' aggregator (its dashboard from
// /usr/share/hsns/web). Logs in with the operator token and waits for the site view. Proves on a machine
// with nothing but Debian 12 what the browser tests rely on: a Node.js the tools support, the pinned
// driver, Debian's browser. Prints the versions it ran with; exits 1 on a failure or an error on the page.
// Usage: node package_smoke.mjs --url http://127.0.0.1:PORT --token TOKEN
import { parseArgs } from 'node:util';
import { chromium } from 'playwright-core';

const { values: opt } = parseArgs({ options: { url: { type: 'string' }, token: { type: 'string' } } });
if (!opt.url || !opt.token) throw new Error('package_smoke: --url and --token are required');

const problems = [];
const browser = await chromium.launch({ executablePath: '/usr/bin/chromium', headless: true, args: ['--no-sandbox'] });
try {
  const page = await browser.newPage({ viewport: { width: 1280, height: 800 } });
  page.on('pageerror', (e) => problems.push(`page error: ${e.message}`));
  page.on('console', (m) => { if (m.type() === 'error') problems.push(`console: ${m.text()}`); });
  await page.goto(`${opt.url}/`);
  await page.getByLabel('Token').fill(opt.token);
  await page.getByRole('button', { name: 'Log in' }).click();
  const status = () => page.evaluate(() => document.getElementById('status')?.textContent ?? '');
  try {
    await page.waitForFunction(() => (document.getElementById('status')?.textContent ?? '').startsWith('Site view'),
      null, { timeout: 60_000 });
  } catch (e) {
    throw new Error(`no site view within 60 s (page status "${await status()}", at ${page.url()}): ${e.message}`);
  }
  console.log(`package_smoke: "${await status()}" (Node.js ${process.version}, Chromium ${browser.version()})`);
} finally {
  await browser.close();
}
if (problems.length > 0) {
  console.error(`package_smoke: ${problems.join('\n')}`);
  process.exit(1);
}
