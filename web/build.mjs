// Bundles the dashboard: src/main.ts (TypeScript, with sigma.js, graphology and ECharts from
// node_modules) into <out>/app.js with esbuild, and copies index.html and app.css beside it.
// Usage: node build.mjs <output directory>  (CMake target hsns_web; output under the build tree).
import * as esbuild from 'esbuild';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const here = path.dirname(fileURLToPath(import.meta.url));
const out = process.argv[2];
if (!out) {
  console.error('usage: node build.mjs <output directory>');
  process.exit(64);
}
fs.mkdirSync(out, { recursive: true });
await esbuild.build({
  entryPoints: [path.join(here, 'src', 'main.ts')],
  outfile: path.join(out, 'app.js'),
  bundle: true,
  format: 'esm',
  target: ['es2022'],
  minify: true,
  sourcemap: false,
  legalComments: 'eof',
  logLevel: 'warning',
});
for (const file of ['index.html', 'app.css']) fs.copyFileSync(path.join(here, 'src', file), path.join(out, file));
