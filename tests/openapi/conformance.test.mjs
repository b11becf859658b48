// Route conformance (ctest `openapi_conformance`): every operation of aggregator/openapi.json, sent to the
// real hsns-aggregator over loopback, answers as the document says.
//
// The test starts `${HSNS_BUILD_DIR}/aggregator/hsns-aggregator run` on a fresh database with an operator,
// a viewer, an agent and a scheduler token, seeds fixtures through the API with the document's own examples
// (host `host-a`, the example subnet, the example port, plus a second port, then the example status report
// of host-a's daemon), and maps the example ids of the document to the ids created at run time. Then, for
// every path and method of the document:
//   - the documented request (parameter and requestBody examples) answers the expected success code, which
//     is one of the documented codes, with the documented media type, the documented required headers
//     (Location on 201, ETag on the desired state) and a body valid against the documented schema (Ajv,
//     JSON Schema 2020-12, formats checked);
//   - 401 (when documented): no token, and a wrong token, answer a Problem with WWW-Authenticate;
//   - 403 (write operations documenting it): the viewer token is refused;
//   - 404 (when documented): an unknown path id (or referenced id) answers a Problem;
//   - 400 (when documented): an unknown body field, or an unknown query parameter, is named in a Problem;
//   - 415 / 413 (when documented): a text/plain body, and a body over the limit (1 MiB; 256 MiB for the
//     topology routes, 64 MiB for the report route), are refused;
//   - some documented conflict answers (409, 422) and the conditional GET (304) of the desired state;
//   - the agent status routes: 404 before the first report, the agent role may report and the scheduler
//     role may not, the stored report is answered back whole, and the list has one row per host.
//   - the telemetry report route: acknowledged by seq, a repeated seq answers the same acknowledgement,
//     a bad field inside a flow record is named; its own body limit (64 MiB) for the 413 check.
//   - the topology routes: 404 before the first topology; generate is deterministic and a rejected request
//     changes nothing; every export format answers its media type and the YAML export reads back to the
//     same topology; LLDP confirms and reports conflicts without applying them; device states; imports.
//   - roles: every operation lists in `x-hsns-roles` the roles it admits (`[]` exactly when it has
//     `security: []`); a token of each role not listed gets 403, a token of each listed role is admitted
//     (any answer but 401 and 403 to a request that changes nothing), and an operation listing none answers
//     without a token. These checks read the source document, not the one the binary serves.
// Every answer is checked against the responses the document lists for the operation; a failure names the
// operation (method and path) and what differed. The aggregator must stop with exit code 0 on SIGTERM.
//
// Run: HSNS_BUILD_DIR=<build dir> HSNS_SOURCE_DIR=<source dir> node --test conformance.test.mjs
// (after `npm ci` here; Node.js 20 or later).

import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import fs from 'node:fs';
import http from 'node:http';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import Ajv2020 from 'ajv/dist/2020.js';
import addFormats from 'ajv-formats';

const HERE = path.dirname(fileURLToPath(import.meta.url));
const SOURCE_DIR = process.env.HSNS_SOURCE_DIR || path.resolve(HERE, '../..');
const BUILD_DIR = process.env.HSNS_BUILD_DIR;
if (!BUILD_DIR) throw new Error('set HSNS_BUILD_DIR to the CMake build directory that holds aggregator/hsns-aggregator');
const AGGREGATOR = path.join(BUILD_DIR, 'aggregator', 'hsns-aggregator');
const DOC_FILE = path.join(SOURCE_DIR, 'aggregator', 'openapi.json');
const DOC = JSON.parse(fs.readFileSync(DOC_FILE, 'utf8'));

const TOKENS = {
  operator: 'conformance-operator-token-0001', viewer: 'conformance-viewer-token-00001',
  agent: 'conformance-agent-token-000001', scheduler: 'conformance-scheduler-token-01',
};
const BODY_LIMIT = 1024 * 1024; // documented default request body limit (1 MiB)
const TOPOLOGY_BODY_LIMIT = 256 * 1024 * 1024; // the topology routes' own default (http.topology_body_limit_bytes)
const REPORT_BODY_LIMIT = 64 * 1024 * 1024; // the report route's own default (http.report_body_limit_bytes)
const UNKNOWN_FIELD = 'conformance_unknown_field';
const UNKNOWN_QUERY = 'colour';
const UNKNOWN_HOST = 'no-such-host-conformance';

// ---- the document ---------------------------------------------------------------------------------------

const DOC_ID = 'urn:hsns:openapi';
const HTTP_METHODS = ['get', 'put', 'post', 'delete', 'options', 'head', 'patch', 'trace'];
const WRITE_METHODS = new Set(['put', 'post', 'patch', 'delete']);

const pointerEscape = (s) => String(s).replaceAll('~', '~0').replaceAll('/', '~1');

// Follows `$ref`s to components (a Reference Object's `description`/`summary` siblings win, as in OAS 3.1).
// Returns the object and its JSON pointer inside the document.
function deref(obj, pointer) {
  let seen = 0;
  while (obj && typeof obj === 'object' && typeof obj.$ref === 'string') {
    assert.ok(obj.$ref.startsWith('#/'), `only local references are supported, not ${obj.$ref}`);
    assert.ok(++seen < 20, `reference loop at ${pointer}`);
    const { $ref, ...siblings } = obj;
    pointer = $ref.slice(1);
    let target = DOC;
    for (const part of pointer.split('/').slice(1)) {
      target = target?.[part.replaceAll('~1', '/').replaceAll('~0', '~')];
    }
    assert.ok(target !== undefined, `unresolvable reference ${$ref}`);
    obj = { ...target, ...siblings };
  }
  return { obj, pointer };
}

// Every operation of the document, with its parameters (path-item level, overridden by operation level).
const OPERATIONS = [];
for (const [tmpl, item] of Object.entries(DOC.paths)) {
  for (const method of HTTP_METHODS) {
    const op = item[method];
    if (!op) continue;
    const base = `/paths/${pointerEscape(tmpl)}`;
    const params = new Map();
    (item.parameters || []).forEach((p, i) => {
      const { obj } = deref(p, `${base}/parameters/${i}`);
      params.set(`${obj.in}:${obj.name}`, obj);
    });
    (op.parameters || []).forEach((p, i) => {
      const { obj } = deref(p, `${base}/${method}/parameters/${i}`);
      params.set(`${obj.in}:${obj.name}`, obj);
    });
    const label = `${method.toUpperCase()} ${tmpl}`;
    const body = op.requestBody ? deref(op.requestBody, `${base}/${method}/requestBody`).obj : null;
    OPERATIONS.push({
      method, tmpl, op, label, pointer: `${base}/${method}`,
      params: [...params.values()],
      body,
      needsToken: !(Array.isArray(op.security) && op.security.length === 0),
      documents: (code) => Object.hasOwn(op.responses, String(code)),
      seen: new Set(), // status codes this run checked
    });
  }
}
const OP = new Map(OPERATIONS.map((o) => [o.label, o]));
function operation(label) {
  const o = OP.get(label);
  assert.ok(o, `the document has no operation ${label}; update conformance.test.mjs`);
  return o;
}

// Problem type slugs by status, as listed in the Problem schema's description ("`invalid-request` 400, ...").
const PROBLEM_TYPES = new Map();
for (const [, slug, status] of (DOC.components.schemas.Problem.description || '').matchAll(/`([a-z-]+)` (\d{3})/g)) {
  if (!PROBLEM_TYPES.has(Number(status))) PROBLEM_TYPES.set(Number(status), []);
  PROBLEM_TYPES.get(Number(status)).push(`urn:hsns:problem:${slug}`);
}

// ---- schema validation ------------------------------------------------------------------------------------

const ajv = new Ajv2020({ allErrors: true, strict: true });
addFormats(ajv);
// Annotations only: OpenAPI's `example` in schemas, and the fields of the OpenAPI document itself, which is
// added whole (Ajv compiles the root when resolving a fragment of it). Strict mode stays on for the rest.
ajv.addVocabulary(['example', ...Object.keys(DOC).filter((k) => !k.startsWith('$'))]);
ajv.addSchema(DOC, DOC_ID);
const validators = new Map();
function validatorAt(pointer) {
  if (!validators.has(pointer)) {
    const fragment = pointer.split('/').map(encodeURIComponent).join('/');
    validators.set(pointer, ajv.compile({ $ref: `${DOC_ID}#${fragment}` }));
  }
  return validators.get(pointer);
}
function schemaErrors(pointer, value) {
  const validate = validatorAt(pointer);
  if (validate(value)) return null;
  return validate.errors.slice(0, 5)
    .map((e) => `${e.instancePath || '(root)'} ${e.message}${e.params && Object.keys(e.params).length ? ` ${JSON.stringify(e.params)}` : ''}`)
    .join('; ');
}

// ---- the aggregator -------------------------------------------------------------------------------------

const server = { proc: null, address: null, port: null, output: '', exit: null, dir: null };

function serverOutput() {
  return server.output ? `\n--- aggregator output (last 4000 characters) ---\n${server.output.slice(-4000)}` : '';
}

async function startServer() {
  assert.ok(fs.existsSync(AGGREGATOR), `${AGGREGATOR} does not exist: build the hsns-aggregator target first`);
  server.dir = fs.mkdtempSync(path.join(os.tmpdir(), 'hsns-conformance-'));
  const file = (name) => path.join(server.dir, name);
  fs.writeFileSync(file('config.yaml'), '');
  fs.writeFileSync(file('tokens.yaml'),
    `tokens:\n  - {name: ops, role: operator, token: "${TOKENS.operator}"}\n` +
    `  - {name: v, role: viewer, token: "${TOKENS.viewer}"}\n` +
    `  - {name: daemon, role: agent, token: "${TOKENS.agent}"}\n` +
    `  - {name: sched, role: scheduler, token: "${TOKENS.scheduler}"}\n`, { mode: 0o600 });
  const proc = spawn(AGGREGATOR, ['run', '--config', file('config.yaml'), '--listen', '127.0.0.1:0',
    '--database', file('a.db'), '--tokens-file', file('tokens.yaml'), '--ready-file', file('ready'),
    '--threads', '2'], { stdio: ['ignore', 'pipe', 'pipe'] });
  server.proc = proc;
  server.exit = new Promise((resolve) => proc.on('exit', (code, signal) => resolve({ code, signal })));
  proc.on('error', (err) => { server.output += `\nspawn error: ${err.message}`; });
  for (const stream of [proc.stdout, proc.stderr]) {
    stream.setEncoding('utf8');
    stream.on('data', (chunk) => { server.output = (server.output + chunk).slice(-64 * 1024); });
  }
  let exited = null;
  server.exit.then((e) => { exited = e; });
  const deadline = Date.now() + 60_000;
  for (;;) {
    if (exited) assert.fail(`hsns-aggregator exited before it was ready (${JSON.stringify(exited)})${serverOutput()}`);
    const text = fs.existsSync(file('ready')) ? fs.readFileSync(file('ready'), 'utf8').trim() : '';
    const m = /^(\S+)\s+(\d+)$/.exec(text);
    if (m) { server.address = m[1]; server.port = Number(m[2]); return; }
    if (Date.now() > deadline) assert.fail(`no ready file within 60 s${serverOutput()}`);
    await new Promise((r) => setTimeout(r, 25));
  }
}

after(() => {
  if (server.proc && server.proc.exitCode === null && server.proc.signalCode === null) server.proc.kill('SIGKILL');
  if (server.dir) fs.rmSync(server.dir, { recursive: true, force: true });
});

// ---- HTTP -------------------------------------------------------------------------------------------------

let answersChecked = 0;

// One request on its own connection. `role` picks a token (undefined: none); `token` overrides it.
function send(method, target, { role, token, body, contentType = 'application/json', headers = {} } = {}) {
  assert.ok(server.port, 'the aggregator is not running (see the first test)');
  const h = { ...headers };
  const bearer = token ?? (role ? TOKENS[role] : undefined);
  if (bearer) h.authorization = `Bearer ${bearer}`;
  let data = null;
  if (body !== undefined) {
    data = Buffer.isBuffer(body) ? body : Buffer.from(typeof body === 'string' ? body : JSON.stringify(body));
    h['content-type'] = contentType;
    h['content-length'] = data.length;
  }
  return new Promise((resolve, reject) => {
    const req = http.request({ host: server.address, port: server.port, method, path: target, headers: h,
      agent: false, timeout: 15_000 }, (res) => {
      const chunks = [];
      res.on('data', (c) => chunks.push(c));
      res.on('end', () => resolve({ status: res.statusCode, headers: res.headers, body: Buffer.concat(chunks) }));
      res.on('error', reject);
    });
    req.on('timeout', () => req.destroy(new Error(`${method} ${target}: no answer within 15 s`)));
    req.on('error', (e) => reject(new Error(`${method} ${target}: ${e.message}${serverOutput()}`)));
    req.end(data);
  });
}

// The documented default body limit of a target: the topology routes have their own.
function bodyLimitOf(target) {
  if (/^\/api\/v1\/agents\/[^/]+\/reports(\?|$)/.test(target)) return REPORT_BODY_LIMIT;
  return target.startsWith('/api/v1/topology') ? TOPOLOGY_BODY_LIMIT : BODY_LIMIT;
}

// Sends only the head of a request whose Content-Length is over the body limit; returns the parsed answer.
function sendOversizedHead(method, target, token) {
  const head = `${method} ${target} HTTP/1.1\r\nHost: ${server.address}:${server.port}\r\n` +
    `Authorization: Bearer ${token}\r\nContent-Type: application/json\r\n` +
    `Content-Length: ${2 * bodyLimitOf(target)}\r\n\r\n`;
  return new Promise((resolve, reject) => {
    const sock = net.connect(server.port, server.address, () => sock.write(head));
    let raw = Buffer.alloc(0);
    let done = false;
    const finish = () => {
      if (done) return;
      const end = raw.indexOf('\r\n\r\n');
      if (end < 0) { done = true; sock.destroy(); reject(new Error(`${method} ${target}: no answer to an oversized body`)); return; }
      const lines = raw.subarray(0, end).toString('latin1').split('\r\n');
      const headers = {};
      for (const line of lines.slice(1)) {
        const i = line.indexOf(':');
        if (i > 0) headers[line.slice(0, i).trim().toLowerCase()] = line.slice(i + 1).trim();
      }
      let body = raw.subarray(end + 4);
      if (headers['content-length'] !== undefined) body = body.subarray(0, Number(headers['content-length']));
      done = true;
      sock.destroy();
      resolve({ status: Number(lines[0].split(' ')[1]), headers, body });
    };
    sock.on('data', (chunk) => {
      raw = Buffer.concat([raw, chunk]);
      const end = raw.indexOf('\r\n\r\n');
      const m = end >= 0 && /\r\ncontent-length:\s*(\d+)/i.exec(raw.subarray(0, end + 2).toString('latin1'));
      if (m && raw.length >= end + 4 + Number(m[1])) finish();
    });
    sock.on('end', finish);
    sock.on('close', finish);
    sock.on('error', (e) => { if (raw.length) finish(); else if (!done) { done = true; reject(e); } });
    sock.setTimeout(15_000, () => finish());
  });
}

// ---- building documented requests -------------------------------------------------------------------------

// Example values of the document (ids) -> values created at run time.
const runtimeIds = new Map();
const substitute = (v) => {
  if (typeof v === 'string') return runtimeIds.has(v) ? runtimeIds.get(v) : v;
  if (Array.isArray(v)) return v.map(substitute);
  if (v && typeof v === 'object') return Object.fromEntries(Object.entries(v).map(([k, x]) => [k, substitute(x)]));
  return v;
};

function requestBodyExample(o) {
  const media = o.body?.content?.['application/json'];
  assert.ok(media && media.example !== undefined, `${o.label}: the request body has no application/json example`);
  return substitute(structuredClone(media.example));
}

// The documented request of an operation: its parameter examples (ids substituted) and body example.
// `params` overrides parameter values by name (null leaves the parameter out); `extraQuery` adds some.
function documentedRequest(o, { params = {}, body, extraQuery = {} } = {}) {
  let target = o.tmpl;
  const query = new URLSearchParams();
  const headers = {};
  for (const p of o.params) {
    const value = Object.hasOwn(params, p.name) ? params[p.name] : substitute(p.example);
    if (value === null || value === undefined) continue;
    if (p.in === 'path') target = target.replaceAll(`{${p.name}}`, encodeURIComponent(value));
    else if (p.in === 'query') query.append(p.name, value);
    else if (p.in === 'header') headers[p.name] = value;
  }
  for (const [k, v] of Object.entries(extraQuery)) query.append(k, v);
  assert.ok(!/[{}]/.test(target), `${o.label}: a path parameter has no example`);
  const qs = query.toString();
  return {
    target: qs ? `${target}?${qs}` : target,
    path: target,
    headers,
    body: body !== undefined ? body : (o.body ? requestBodyExample(o) : undefined),
  };
}

// ---- checking answers ------------------------------------------------------------------------------------

const isJson = (mediaType) => mediaType === 'application/json' || /\+json$/.test(mediaType);
const excerpt = (buf) => { const s = buf.toString('utf8'); return s.length > 400 ? `${s.slice(0, 400)}...` : s; };

// Checks one answer against the responses documented for the operation, and (when given) the expected status.
// Returns the parsed body (JSON) or the text.
function checkAnswer(o, res, expected, what) {
  const where = `${o.label} (${what})`;
  const fail = (msg) => assert.fail(`${where}: ${msg}\n  answer: ${res.status} ${res.headers['content-type'] ?? ''} ${excerpt(res.body)}`);
  answersChecked++;
  const code = String(res.status);
  if (!o.documents(code)) fail(`status ${code} is not documented (documented: ${Object.keys(o.op.responses).join(', ')})`);
  if (expected !== undefined && res.status !== expected) fail(`expected status ${expected}, got ${code}`);
  o.seen.add(code);
  const { obj: response, pointer } = deref(o.op.responses[code], `${o.pointer}/responses/${code}`);

  for (const [name, ref] of Object.entries(response.headers || {})) {
    const { obj: header, pointer: hp } = deref(ref, `${pointer}/headers/${pointerEscape(name)}`);
    const value = res.headers[name.toLowerCase()];
    if (value === undefined) {
      if (header.required) fail(`required response header ${name} is missing`);
      continue;
    }
    if (header.schema) {
      // Node gives Set-Cookie as an array (one entry per header line): each line must match the schema.
      for (const one of Array.isArray(value) ? value : [value]) {
        const errs = schemaErrors(`${hp}/schema`, one);
        if (errs) fail(`response header ${name}: ${JSON.stringify(one)} does not match its schema: ${errs}`);
      }
    }
  }

  if (!response.content) {
    if (res.body.length) fail(`the answer has a body, but the document gives this answer none`);
    return undefined;
  }
  const contentType = res.headers['content-type'];
  if (!contentType) fail(`no Content-Type (documented: ${Object.keys(response.content).join(', ')})`);
  const mediaType = contentType.split(';')[0].trim().toLowerCase();
  const documented = Object.keys(response.content).find((k) => k.toLowerCase() === mediaType);
  if (!documented) fail(`Content-Type ${mediaType} is not documented (documented: ${Object.keys(response.content).join(', ')})`);
  const media = response.content[documented];
  let value = res.body.toString('utf8');
  if (isJson(mediaType)) {
    try { value = JSON.parse(value); } catch (e) { fail(`the body is not JSON: ${e.message}`); }
  }
  if (media.schema) {
    const errs = schemaErrors(`${pointer}/content/${pointerEscape(documented)}/schema`, value);
    if (errs) fail(`the body does not match the documented ${documented} schema: ${errs}`);
  }
  if (mediaType === 'application/problem+json' && value && typeof value === 'object') {
    if (value.status !== res.status) fail(`problem "status" ${value.status} differs from the HTTP status ${res.status}`);
    const types = PROBLEM_TYPES.get(res.status);
    if (types && !types.includes(value.type)) fail(`problem type ${value.type} is not one documented for ${res.status} (${types.join(', ')})`);
  }
  return value;
}

// Sends a request for an operation and checks the answer. `onAnswer(res, json)` sees a successful answer
// before the checks (so that fixtures are recorded even when their answer deviates from the document).
async function call(o, what, expected, { role, token, params, body, extraQuery, headers = {}, contentType, onAnswer } = {}) {
  const req = documentedRequest(o, { params, body, extraQuery });
  const res = await send(o.method.toUpperCase(), req.target, {
    role: o.needsToken ? role : undefined, token, body: req.body, contentType, headers: { ...req.headers, ...headers },
  });
  if (onAnswer && res.status >= 200 && res.status < 300) {
    let json;
    try { json = JSON.parse(res.body.toString('utf8')); } catch { json = undefined; }
    onAnswer(res, json);
  }
  const value = checkAnswer(o, res, expected, `${what}: ${o.method.toUpperCase()} ${req.target}`);
  return { res, value, req };
}

function assertNamesField(o, what, problem, field) {
  const names = (problem.invalid_params || []).map((p) => p.name);
  assert.ok(names.includes(field) || String(problem.detail || '').includes(field),
    `${o.label} (${what}): the problem does not name ${field} (invalid_params ${JSON.stringify(names)}, detail ${JSON.stringify(problem.detail)})`);
}

// The documented success code of an operation, when it documents exactly one 2xx code.
function successCode(o) {
  const codes = Object.keys(o.op.responses).filter((c) => /^2\d\d$/.test(c));
  assert.equal(codes.length, 1, `${o.label}: documents ${codes.length} success codes (${codes}); the test must say which it expects`);
  return Number(codes[0]);
}

// The documented request, with the role an operation needs, answering its documented success code.
async function happy(label, { expected, ...options } = {}) {
  const o = operation(label);
  const role = WRITE_METHODS.has(o.method) ? 'operator' : 'viewer';
  return call(o, 'documented request', expected ?? successCode(o), { role, ...options });
}

function checkLocation(o, res, value, req) {
  const expected = o.method === 'post' ? `${req.path}/${value.id}` : req.path;
  assert.equal(res.headers.location, expected, `${o.label}: Location ${res.headers.location} is not the created resource ${expected}`);
}

// ---- the scenario -----------------------------------------------------------------------------------------

const fixtures = {};
const FIXTURE_SOURCE = {
  subnet: 'POST /api/v1/subnets', port: 'POST /api/v1/ports', port2: 'POST /api/v1/ports',
  report: 'PUT /api/v1/agents/{host}/status', topology: 'POST /api/v1/topology/generate',
  silence: 'POST /api/v1/silences', session: 'POST /api/v1/session',
};
function needFixture(...names) {
  for (const name of names) {
    assert.ok(fixtures[name]?.id, `the fixture ${name} was not created (see ${FIXTURE_SOURCE[name]}); this check cannot run`);
  }
}
const P = DOC.components.parameters;

// Every operation but the deletes, in an order where each finds what it needs (creating the fixtures on
// the way); then the error checks while the fixtures exist; then the deletes.
const SCENARIO_MAIN = [
  'GET /healthz', 'GET /readyz', 'GET /metrics', 'GET /api/v1/openapi.json',
  'PUT /api/v1/hosts/{host}', 'GET /api/v1/hosts', 'GET /api/v1/hosts/{host}',
  'POST /api/v1/subnets', 'GET /api/v1/subnets', 'GET /api/v1/subnets/{subnet_id}', 'PATCH /api/v1/subnets/{subnet_id}',
  'POST /api/v1/ports', 'GET /api/v1/ports', 'GET /api/v1/ports/{port_id}',
  'GET /api/v1/reachability', 'GET /api/v1/agents/{host}/desired',
  'PUT /api/v1/agents/{host}/status', 'GET /api/v1/agents/{host}/status', 'GET /api/v1/agents',
  'POST /api/v1/agents/{host}/reports', 'POST /api/v1/topology/generate', 'GET /api/v1/topology', 'GET /api/v1/topology/export',
  'POST /api/v1/topology/lldp', 'GET /api/v1/topology/lldp', 'PATCH /api/v1/topology/devices/{name}',
  'PATCH /api/v1/topology/devices', 'PUT /api/v1/topology', 'GET /api/v1/events',
];
// Operations whose 404 means "no topology exists yet": checked before the first topology is generated
// (see POST /api/v1/topology/generate), not by the unknown-id check.
const NOT_FOUND_WITHOUT_TOPOLOGY = ['GET /api/v1/topology', 'GET /api/v1/topology/export', 'POST /api/v1/topology/lldp',
  'PATCH /api/v1/topology/devices/{name}', 'PATCH /api/v1/topology/devices'];
const SCENARIO_DELETES = ['DELETE /api/v1/ports/{port_id}', 'DELETE /api/v1/subnets/{subnet_id}'];
// Topology search and scheduling (aggregator/api/scheduling/routes.h): after the topology routes; the job delete
// first among the deletes. Search and schedule answer 404 while no topology exists.
SCENARIO_MAIN.push('GET /api/v1/logs');
// The KPI store and the push APIs (aggregator/api/kpis/routes.h): samples pushed, then read back.
SCENARIO_MAIN.push('POST /api/v1/kpis', 'GET /api/v1/kpis', 'GET /api/v1/kpis/series', 'GET /api/v1/kpis/latest', 'POST /api/v1/events');
SCENARIO_MAIN.push('POST /api/v1/topology/search', 'POST /api/v1/schedule', 'GET /api/v1/jobs', 'GET /api/v1/jobs/{name}');
NOT_FOUND_WITHOUT_TOPOLOGY.push('POST /api/v1/topology/search', 'POST /api/v1/schedule');
SCENARIO_DELETES.unshift('DELETE /api/v1/jobs/{name}');
// Telemetry queries (aggregator/api/telemetry/routes.h): after the report route and the job (the flows
// example filters by the schedule example's job).
SCENARIO_MAIN.push('GET /api/v1/flows', 'GET /api/v1/hosts/{host}/counters', 'GET /api/v1/hosts/{host}/optics',
  'GET /api/v1/hosts/{host}/lldp', 'GET /api/v1/hosts/{host}/qps');
// Alarms and silences (aggregator/api/alarms/routes.h). Alarms come only from faults (no injection route), so on
// this fresh aggregator the alarm routes answer their documented 404; silences are created, read and deleted.
SCENARIO_MAIN.push('GET /api/v1/alarms', 'GET /api/v1/alarms/stream', 'GET /api/v1/alarms/{id}',
  'POST /api/v1/alarms/{id}/ack', 'POST /api/v1/alarms/ack', 'POST /api/v1/silences', 'GET /api/v1/silences',
  'GET /api/v1/silences/{id}');
SCENARIO_DELETES.push('DELETE /api/v1/silences/{id}');
// Operations whose 404 is about ids in a list body: checked by their scenario, not by the unknown-id check.
// GET / answers 404 only when the dashboard's assets are missing: no id is involved.
const NOT_FOUND_IN_SCENARIO = ['POST /api/v1/alarms/ack', 'GET /'];
// Incidents (aggregator/api/incidents/routes.h): nothing feeds alarms here, so the list is empty and the
// documented id is unknown (404); the stream upgrades like the change feed.
SCENARIO_MAIN.push('GET /api/v1/incidents', 'GET /api/v1/incidents/{id}', 'GET /api/v1/incidents/stream');
// The network brain's live pipeline (aggregator/brain/pipeline_routes.h): after the KPI and event pushes and
// the log list, so the status has counted them; the reload of the shipped library.
SCENARIO_MAIN.push('GET /api/v1/brain/status', 'POST /api/v1/brain/reload');
// Full-path diagnosis (aggregator/api/diagnose/routes.h): after the job is registered (the path example's
// NPUs belong to it), before it is deleted; both answer 404 while no topology exists.
SCENARIO_MAIN.push('GET /api/v1/diagnose/path', 'GET /api/v1/diagnose/job/{id}');
NOT_FOUND_WITHOUT_TOPOLOGY.push('GET /api/v1/diagnose/path', 'GET /api/v1/diagnose/job/{id}');
// The dashboard (aggregator/http/static_files.h, http/service.h, api/topology/layout.h, links.h): its assets
// (from the build tree's web output, the default web_root of a binary run from its build tree), the browser
// session (created by the POST, ended by the DELETE after everything else), the site view's layout, the
// compact devices and links of the matrices and the overlays' thresholds.
// The session routes' 403 (an agent token at login; the CSRF token missing at logout) and 404 (no cookie)
// are checked by their own scenarios, not by the generic role and unknown-id checks.
const COOKIE_ONLY = new Set(['POST /api/v1/session', 'DELETE /api/v1/session']);
SCENARIO_MAIN.push('GET /', 'GET /ui/{file}', 'POST /api/v1/session', 'GET /api/v1/session', 'GET /api/v1/topology/layout',
  'GET /api/v1/topology/links', 'GET /api/v1/topology/stream');
NOT_FOUND_WITHOUT_TOPOLOGY.push('GET /api/v1/topology/layout', 'GET /api/v1/topology/links');
SCENARIO_DELETES.push('DELETE /api/v1/session');
// The overlays' definitions and thresholds (aggregator/api/overlays/routes.h): the configuration's defaults;
// a metric overlay's grades (404 while no topology exists) and their stream, which upgrades like the change feed;
// the groups' summary (404 while no topology exists).
SCENARIO_MAIN.push('GET /api/v1/overlays', 'GET /api/v1/overlays/{id}/grades', 'GET /api/v1/overlays/{id}/stream',
  'GET /api/v1/overlays/summary');
NOT_FOUND_WITHOUT_TOPOLOGY.push('GET /api/v1/overlays/{id}/grades', 'GET /api/v1/overlays/summary');

test('the aggregator starts and serves the document it was built from', async () => {
  await startServer();
  const res = await send('GET', '/api/v1/openapi.json');
  assert.equal(res.status, 200, `GET /api/v1/openapi.json answered ${res.status}`);
  assert.deepEqual(JSON.parse(res.body.toString('utf8')), DOC,
    'GET /api/v1/openapi.json differs from aggregator/openapi.json: rebuild hsns-aggregator');
});

test('the scenario covers every operation of the document', () => {
  const covered = new Set([...SCENARIO_MAIN, ...SCENARIO_DELETES]);
  const missing = OPERATIONS.map((o) => o.label).filter((l) => !covered.has(l));
  const stale = [...covered].filter((l) => !OP.has(l));
  assert.deepEqual(missing, [], `operations the test does not exercise: ${missing.join(', ')}`);
  assert.deepEqual(stale, [], `operations the test expects but the document lacks: ${stale.join(', ')}`);
});

const CUSTOM = {
  // The change feed is a WebSocket endpoint: a plain GET answers 426; the upgrade answers 101.
  // `path`: the operation's template with its path parameters' examples (a stream of one overlay).
  'GET /api/v1/events': async (o, path = o.tmpl) => {
    await call(o, 'a plain GET', 426, { role: 'viewer' });
    const status = await new Promise((resolve, reject) => {
      const req = http.request({ host: server.address, port: server.port, path, agent: false, timeout: 15_000,
        headers: { Authorization: `Bearer ${TOKENS.viewer}`, Connection: 'Upgrade', Upgrade: 'websocket',
          'Sec-WebSocket-Version': '13', 'Sec-WebSocket-Key': Buffer.from(randomUUID().replaceAll('-', ''), 'hex').toString('base64') } });
      req.on('upgrade', (res, socket) => { socket.destroy(); resolve(res.statusCode); });
      req.on('response', (res) => { res.resume(); resolve(res.statusCode); });
      req.on('timeout', () => req.destroy(new Error(`${o.label}: no answer to the upgrade within 15 s`)));
      req.on('error', reject);
      req.end();
    });
    assert.ok(o.documents(status), `${o.label}: the upgrade answered ${status}, which is not documented`);
    assert.equal(status, 101, `${o.label}: the upgrade answered ${status}`);
    o.seen.add('101');
  },
  // The fixture host: the document's host example, registered new (201), then replaced (200).
  'PUT /api/v1/hosts/{host}': async (o) => {
    assert.equal(P.HostPath.example, 'host-a');
    const created = await happy(o.label, { expected: 201 });
    checkLocation(o, created.res, created.value, created.req);
    assert.equal(created.value.name, P.HostPath.example, `${o.label}: the host answered is ${created.value.name}`);
    const replaced = await call(o, 'registered again', 200, { role: 'operator' });
    assert.ok(replaced.value.generation >= created.value.generation, `${o.label}: generation went down`);
  },
  // The fixture subnet: the document's example; its example id now means the created subnet.
  'POST /api/v1/subnets': async (o) => {
    const portExample = requestBodyExample(operation('POST /api/v1/ports'));
    const { res, value, req } = await happy(o.label, { onAnswer: (_, subnet) => {
      if (!subnet?.id) return;
      fixtures.subnet = subnet;
      for (const example of [P.SubnetIdPath.example, P.SubnetIdQuery.example, portExample.subnet_id]) runtimeIds.set(example, subnet.id);
    } });
    checkLocation(o, res, value, req);
  },
  // The fixture port: the document's example in the fixture subnet; then a second port (host-a NPU 1,
  // address from the pools) standing for the document's destination port example.
  'POST /api/v1/ports': async (o) => {
    needFixture('subnet');
    let failure = null;
    try {
      const { res, value, req } = await happy(o.label, { onAnswer: (_, port) => {
        if (!port?.id) return;
        fixtures.port = port;
        runtimeIds.set(P.PortIdPath.example, port.id);
        runtimeIds.set(P.SrcPortQuery.example, port.id);
      } });
      checkLocation(o, res, value, req);
      assert.equal(value.subnet_id, fixtures.subnet.id, `${o.label}: the port is not in the requested subnet`);
    } catch (e) {
      failure = e; // still create the second port, so that later checks have both
    }
    const second = await call(o, 'second port, address from the pools', 201, {
      role: 'operator', body: { subnet_id: fixtures.subnet.id, host: P.HostPath.example, npu: 1 },
      onAnswer: (_, port) => { if (port?.id) { fixtures.port2 = port; runtimeIds.set(P.DstPortQuery.example, port.id); } } });
    checkLocation(o, second.res, second.value, second.req);
    if (failure) throw failure;
  },
  'GET /api/v1/subnets': async (o) => {
    needFixture('subnet');
    const { value } = await happy(o.label);
    assert.ok(value.items.some((s) => s.id === fixtures.subnet.id), `${o.label}: the filtered list lacks the fixture subnet`);
    const all = await call(o, 'no filters', 200, { role: 'viewer', params: { tenant: null, name: null } });
    assert.ok(all.value.items.length >= 1, `${o.label}: the unfiltered list is empty`);
  },
  'GET /api/v1/ports': async (o) => {
    needFixture('port');
    const { value } = await happy(o.label);
    assert.ok(value.items.some((p) => p.id === fixtures.port.id), `${o.label}: the filtered list lacks the fixture port`);
    await call(o, 'no filters', 200, { role: 'viewer', params: { host: null, subnet_id: null, tenant: null } });
  },
  'GET /api/v1/reachability': async (o) => {
    needFixture('port', 'port2');
    const { value } = await happy(o.label);
    assert.equal(value.reachable, true, `${o.label}: two ports of one subnet are documented as reachable`);
  },
  // The documented request carries the example If-None-Match, which matches nothing: 200 with the ETag.
  // Sending that ETag back answers 304 with the ETag and no body.
  'GET /api/v1/agents/{host}/desired': async (o) => {
    needFixture('port');
    const { res, value } = await happy(o.label);
    assert.ok(value.ports.some((p) => p.port_id === fixtures.port.id), `${o.label}: the desired state lacks the fixture port`);
    await call(o, 'If-None-Match with the current ETag', 304, { role: 'viewer', params: { 'If-None-Match': res.headers.etag } });
  },
  // The fixture report: before it, host-a has no status (404) and is listed unreported. The documented
  // request (operator), then the example report at host-a's current generation sent by the agent role,
  // which puts the host in sync; the scheduler role may not report; a bad port state is named.
  'PUT /api/v1/agents/{host}/status': async (o) => {
    needFixture('port');
    const host = P.HostPath.example;
    await call(operation('GET /api/v1/agents/{host}/status'), 'before the first report', 404, { role: 'viewer' });
    const before = await call(operation('GET /api/v1/agents'), 'before the first report', 200, { role: 'viewer' });
    const row = before.value.items.find((i) => i.host === host);
    assert.ok(row, `GET /api/v1/agents: ${host} is not listed before its first report`);
    assert.equal(row.applied_generation, null, `GET /api/v1/agents: ${host} has an applied generation before its first report`);
    assert.equal(row.in_sync, false, `GET /api/v1/agents: ${host} is in sync before its first report`);

    await happy(o.label);
    const desired = await call(operation('GET /api/v1/agents/{host}/desired'), 'the generation to report', 200,
      { role: 'viewer', params: { 'If-None-Match': null } });
    const example = requestBodyExample(o);
    const report = { ...example, applied_generation: desired.value.generation };
    assert.ok(report.ports.some((p) => p.port_id === fixtures.port.id), `${o.label}: the example report does not name the example port`);
    const { value } = await call(o, 'agent role, current generation', 200, {
      role: 'agent', body: report, onAnswer: () => { fixtures.report = { id: host, body: report }; } });
    assert.equal(value.host, host, `${o.label}: the summary is for ${value.host}`);
    assert.equal(value.applied_generation, report.applied_generation, `${o.label}: applied_generation is not the reported one`);
    assert.equal(value.desired_generation, desired.value.generation, `${o.label}: desired_generation is not the host's generation`);
    assert.equal(value.ports_converged, report.ports.filter((p) => p.state === 'converged').length, `${o.label}: ports_converged`);
    assert.equal(value.in_sync, report.ports.every((p) => p.state === 'converged'), `${o.label}: in_sync`);

    await call(o, 'scheduler token', 403, { role: 'scheduler' });
    const bad = await call(o, 'unknown port state', 400, {
      role: 'agent', body: { ...report, ports: [{ ...report.ports[0], state: 'done' }] } });
    assertNamesField(o, 'unknown port state', bad.value, 'ports[0].state');
  },
  'GET /api/v1/agents/{host}/status': async (o) => {
    needFixture('report');
    const { value } = await happy(o.label);
    assert.deepEqual(value.report, fixtures.report.body, `${o.label}: the report answered differs from the report sent`);
    assert.equal(value.applied_generation, fixtures.report.body.applied_generation, `${o.label}: applied_generation`);
  },
  'GET /api/v1/agents': async (o) => {
    needFixture('report');
    const { value } = await happy(o.label);
    const hosts = await call(operation('GET /api/v1/hosts'), 'the hosts to compare with', 200, { role: 'viewer' });
    assert.deepEqual(value.items.map((i) => i.host).sort(), hosts.value.items.map((h) => h.name).sort(),
      `${o.label}: the summaries are not one per registered host`);
    const row = value.items.find((i) => i.host === fixtures.report.id);
    assert.equal(row.applied_generation, fixtures.report.body.applied_generation, `${o.label}: applied_generation of ${row.host}`);
    assert.notEqual(row.received_at, null, `${o.label}: ${row.host} reported but has no received_at`);
  },
  // A telemetry report batch of host-a: the documented request is acknowledged by its seq; the same seq
  // again answers the same acknowledgement (stored once); the agent role may report and the scheduler
  // role may not; a bad field inside a flow record is named under its batch.
  'POST /api/v1/agents/{host}/reports': async (o) => {
    const example = requestBodyExample(o);
    const { value } = await happy(o.label);
    assert.deepEqual(value, { acked_seq: example.seq }, `${o.label}: the acknowledgement`);
    const again = await call(o, 'the same seq again', 200, { role: 'agent' });
    assert.deepEqual(again.value, { acked_seq: example.seq }, `${o.label}: the repeated acknowledgement`);
    const next = await call(o, 'the next seq', 200, { role: 'agent', body: { ...example, seq: example.seq + 1 } });
    assert.deepEqual(next.value, { acked_seq: example.seq + 1 }, `${o.label}: the next acknowledgement`);
    await call(o, 'the scheduler role', 403, { role: 'scheduler' });
    const record = { ...example.flows[0].records[0], sport: 'x' };
    const bad = await call(o, 'a bad flow record', 400, {
      role: 'agent', body: { ...example, seq: example.seq + 2, flows: [{ ...example.flows[0], records: [record] }] } });
    assertNamesField(o, 'a bad flow record', bad.value, 'flows[0].records[0].sport');
    // The rows form of the same batch (what hsnsd sends, here in JSON with the addresses as text): the
    // documented field names once, a row of values per record; accepted, and a bad value named by field.
    const fields = DOC.components.schemas.TelemetryFlowBatchReport.properties.fields.example;
    const source = example.flows[0].records[0];
    const value_of = (name) => {
      if (name === 'direction') return ['ingress', 'egress', 'xdp'].indexOf(source.direction);
      if (name.startsWith('op_')) return source.op[name.slice(3)];
      if (name.startsWith('nak_')) return source.nak[name.slice(4)];
      return source[name] ?? null;
    };
    const row = fields.map(value_of);
    const rows = await call(o, 'a batch in the rows form', 200, {
      role: 'agent', body: { ...example, seq: example.seq + 3, flows: [{ epoch: example.flows[0].epoch, fields, rows: [row] }] } });
    assert.deepEqual(rows.value, { acked_seq: example.seq + 3 }, `${o.label}: the rows form's acknowledgement`);
    const badRow = fields.map((name) => (name === 'sport' ? 70000 : value_of(name)));
    const badRows = await call(o, 'a bad row', 400, {
      role: 'agent', body: { ...example, seq: example.seq + 4, flows: [{ epoch: example.flows[0].epoch, fields, rows: [badRow] }] } });
    assertNamesField(o, 'a bad row', badRows.value, 'flows[0].rows[0].sport');
  },
  // Before the first topology every topology read and merge answers 404; then the documented cluster is
  // generated (the same parameters give the same cluster) and its summary matches the parameters.
  'POST /api/v1/topology/generate': async (o) => {
    for (const label of NOT_FOUND_WITHOUT_TOPOLOGY) {
      const other = operation(label);
      await call(other, 'no topology yet', 404, { role: WRITE_METHODS.has(other.method) ? 'operator' : 'viewer' });
    }
    const params = requestBodyExample(o);
    const { value } = await happy(o.label);
    assert.equal(value.hosts, params.hosts, `${o.label}: hosts`);
    assert.equal(value.npus, params.hosts * params.npus_per_host, `${o.label}: npus`);
    assert.equal(value.source, 'generate', `${o.label}: source`);
    fixtures.topology = { id: value.revision, summary: value };
    const again = await call(o, 'the same parameters again', 200, { role: 'operator' });
    assert.equal(again.value.revision, value.revision + 1, `${o.label}: the revision did not grow by one`);
    const { revision, updated_at: _u, ...rest } = again.value;
    const { revision: _r, updated_at: _v, ...first } = value;
    assert.deepEqual(rest, first, `${o.label}: the same parameters gave a different cluster`);
    fixtures.topology = { id: revision, summary: again.value };
    const bad = await call(o, 'too many hosts', 400, { role: 'operator', body: { hosts: 100000 } });
    assertNamesField(o, 'too many hosts', bad.value, 'hosts');
    await call(operation('GET /api/v1/topology'), 'a rejected generate changes nothing', 200, { role: 'viewer' })
      .then(({ value: now }) => assert.equal(now.revision, revision, `${o.label}: a rejected request changed the revision`));
  },
  'GET /api/v1/topology': async (o) => {
    needFixture('topology');
    const { value } = await happy(o.label);
    assert.deepEqual(value, fixtures.topology.summary, `${o.label}: the summary differs from the one generate answered`);
  },
  // Every format answers with its documented media type; the JSON graph has every host; the YAML export
  // reads back with PUT to the same summary; an unknown format is named.
  'GET /api/v1/topology/export': async (o) => {
    needFixture('topology');
    const formats = deref(o.params.find((p) => p.name === 'format').schema, '').obj.enum;
    const expected = { json: 'application/json', 'slurm-tree': 'text/plain', 'slurm-block': 'text/plain' };
    await happy(o.label);
    let yaml = null;
    for (const format of formats) {
      const { res, value } = await call(o, `format ${format}`, 200, { role: 'viewer', params: { format } });
      assert.equal(res.headers['content-type'].split(';')[0], expected[format] ?? 'application/yaml', `${o.label}: media type of ${format}`);
      if (format === 'json') {
        assert.equal(value.nodes.filter((n) => n.tier === 'host').length, fixtures.topology.summary.hosts, `${o.label}: hosts in the graph`);
      }
      if (format === 'slurm-tree') assert.match(value, /^SwitchName=su0 Nodes=/m, `${o.label}: slurm-tree has no SU line`);
      if (format === 'yaml') yaml = value;
    }
    const bad = await call(o, 'unknown format', 400, { role: 'viewer', params: { format: 'dot' } });
    assertNamesField(o, 'unknown format', bad.value, 'format');
    const put = operation('PUT /api/v1/topology');
    const back = await call(put, 'the YAML export read back', 200, { role: 'operator', body: yaml, contentType: 'application/yaml' });
    const { revision, updated_at: _u, source, ...rest } = back.value;
    const { revision: _r, updated_at: _v, source: _s, ...before } = fixtures.topology.summary;
    assert.equal(source, 'import', `${put.label}: source after an import`);
    assert.deepEqual(rest, before, `${put.label}: the YAML export does not read back to the same topology`);
    fixtures.topology = { id: revision, summary: back.value };
  },
  'POST /api/v1/topology/lldp': async (o) => {
    needFixture('topology');
    const { value } = await happy(o.label);
    assert.equal(value.confirmed, 1, `${o.label}: the documented observation does not confirm the generated link`);
    const { value: conflict } = await call(o, 'a neighbour the topology disagrees with', 200, { role: 'agent', body: {
      observations: [{ host: 'host001', npu: 0, neighbor_system: 'leaf001', neighbor_port: 'Eth1/9' }] } });
    assert.equal(conflict.conflicts.length, 1, `${o.label}: a different leaf is not reported as a conflict`);
    assert.equal(conflict.conflicts[0].field, 'observations[0].neighbor_system', `${o.label}: the conflict's field`);
    const { value: graph } = await call(operation('GET /api/v1/topology/export'), 'the link after a conflict', 200,
      { role: 'viewer', params: { format: 'json' } });
    const host = graph.nodes.find((n) => n.name === 'host001');
    const link = graph.links[host.npus.find((n) => n.index === 0).link];
    assert.equal(graph.nodes[link.target].name, 'leaf000', `${o.label}: a conflicting observation changed the link`);
    await call(o, 'scheduler token', 403, { role: 'scheduler' });
    const bad = await call(o, 'neither port nor npu', 400, { role: 'operator', body: {
      observations: [{ host: 'host001', neighbor_system: 'leaf000', neighbor_port: 'Eth1/1' }] } });
    assertNamesField(o, 'neither port nor npu', bad.value, 'observations[0]');
  },
  'GET /api/v1/topology/lldp': async (o) => {
    const { value } = await happy(o.label);
    const row = value.items.find((i) => i.host === 'host001' && i.npu === 0);
    assert.ok(row, `${o.label}: the observation of host001 NPU 0 is not stored`);
    assert.equal(row.neighbor_system, 'leaf001', `${o.label}: the newer observation did not replace the older`);
  },
  'PATCH /api/v1/topology/devices/{name}': async (o) => {
    needFixture('topology');
    const { value } = await happy(o.label);
    assert.equal(value.revision, fixtures.topology.id + 1, `${o.label}: the revision did not grow by one`);
    const { value: summary } = await call(operation('GET /api/v1/topology'), 'after the state change', 200, { role: 'viewer' });
    assert.equal(summary.states.npus['sub-health'], 1, `${o.label}: the NPU is not counted as sub-health`);
    const npu = await call(o, 'an NPU the host lacks', 422, { role: 'operator', body: { state: 'isolated', npu: 99 } });
    assertNamesField(o, 'an NPU the host lacks', npu.value, 'npu');
    const sw = await call(o, 'an NPU of a switch', 400, { role: 'operator', params: { name: 'leaf000' }, body: { state: 'isolated', npu: 0 } });
    assertNamesField(o, 'an NPU of a switch', sw.value, 'npu');
    const { value: leaf } = await call(o, 'a switch', 200, { role: 'operator', params: { name: 'spine00' }, body: { state: 'isolated' } });
    assert.equal(leaf.tier, 'spine', `${o.label}: the tier of spine00`);
  },
  'PATCH /api/v1/topology/devices': async (o) => {
    needFixture('topology');
    const topology = operation('GET /api/v1/topology');
    const { value: before } = await call(topology, 'before the bulk change', 200, { role: 'viewer' });
    const { value } = await happy(o.label);
    assert.equal(value.revision, before.revision + 1, `${o.label}: one bulk change is one revision`);
    assert.equal(value.devices.length, requestBodyExample(o).devices.length, `${o.label}: every change answered`);
    const bad = await call(o, 'a bad state in the second entry', 400, { role: 'operator',
      body: { devices: [{ name: 'host001', state: 'healthy' }, { name: 'host002', state: 'broken' }] } });
    assertNamesField(o, 'a bad state in the second entry', bad.value, 'devices[1].state');
    const { value: after } = await call(topology, 'after a refused bulk change', 200, { role: 'viewer' });
    assert.equal(after.revision, value.revision, `${o.label}: a refused bulk change changed the topology`);
  },
  'PUT /api/v1/topology': async (o) => {
    const example = requestBodyExample(o);
    const { value } = await happy(o.label);
    assert.equal(value.hosts, example.hosts.length, `${o.label}: hosts`);
    assert.equal(value.source, 'import', `${o.label}: source`);
    const bad = await call(o, 'a link to an undeclared switch', 400, { role: 'operator',
      body: { ...example, links: [{ lower: 'leaf000', upper: 'spine99' }] } });
    assertNamesField(o, 'a link to an undeclared switch', bad.value, 'links[0].upper');
    const { value: now } = await call(operation('GET /api/v1/topology'), 'after a rejected import', 200, { role: 'viewer' });
    assert.equal(now.revision, value.revision, `${o.label}: a rejected import changed the topology`);
  },
  'DELETE /api/v1/ports/{port_id}': async (o) => {
    needFixture('port', 'port2');
    await happy(o.label);
    await call(o, 'the second port', 204, { role: 'operator', params: { port_id: fixtures.port2.id } });
    await call(o, 'deleted already', 404, { role: 'operator' });
  },
  'DELETE /api/v1/subnets/{subnet_id}': async (o) => {
    needFixture('subnet');
    await happy(o.label);
    await call(operation('GET /api/v1/subnets/{subnet_id}'), 'after the delete', 404, { role: 'viewer' });
  },
};

// Topology search and scheduling: the generate example as the cluster (4 hosts x 2 NPUs, 2 hosts per SU),
// addresses for the NPUs of the schedule example's hosts in a subnet of their own (the network fixtures
// delete as before), then search, schedule (the job's NPUs are allocated for later searches; overlap and a
// taken name are 409, NPUs without an address and pairs in different subnets 422), the job reads and the
// delete that frees the NPUs.
FIXTURE_SOURCE.search = 'POST /api/v1/topology/search';
FIXTURE_SOURCE.job = 'POST /api/v1/schedule';
const jobHostsOf = (result) => result.candidates.flatMap((c) => c.hosts.map((h) => h.name));
// The brain pipeline's scenarios (pushed to SCENARIO_MAIN above).
Object.assign(CUSTOM, {
  'GET /api/v1/brain/status': async (o) => {
    const { value } = await happy(o.label);
    assert.equal(value.enabled, true, `${o.label}: the brain is on by default`);
    assert.ok(value.library.patterns >= 20, `${o.label}: the shipped library is loaded (${value.library.patterns} patterns)`);
    assert.ok(value.counters.samples >= 1, `${o.label}: the pushed KPI samples reached the pipeline`);
  },
  'POST /api/v1/brain/reload': async (o) => {
    const before = await call(operation('GET /api/v1/brain/status'), 'before the reload', 200, { role: 'viewer' });
    const { value } = await happy(o.label);
    assert.equal(value.patterns, before.value.library.patterns, `${o.label}: the same directory, the same library`);
    await call(o, 'a body', 400, { role: 'operator', body: { directory: '/tmp' } });
  },
});
Object.assign(CUSTOM, {
  'POST /api/v1/topology/search': async (o) => {
    await happy('POST /api/v1/topology/generate');
    const example = requestBodyExample(o);
    const { value } = await happy(o.label);
    assert.equal(value.candidates.length, example.answers, `${o.label}: candidates`);
    assert.equal(value.hosts_needed, 2, `${o.label}: hosts_needed`);
    assert.deepEqual(value.candidates[0].hosts.map((h) => h.name), ['host001', 'host002'], `${o.label}: the best candidate`);
    fixtures.search = { id: 'search', result: value };
    const bad = await call(o, 'npus differs from tp x pp x dp x cp', 422, { role: 'scheduler', body: { ...example, npus: 6 } });
    assertNamesField(o, 'npus differs from tp x pp x dp x cp', bad.value, 'npus');
    const tier = await call(o, 'an unknown tier', 400, { role: 'scheduler', body: { ...example, constraints: { max_tier: 'rack' } } });
    assertNamesField(o, 'an unknown tier', tier.value, 'constraints.max_tier');
    await call(o, 'agent token', 403, { role: 'agent' });
  },
  'POST /api/v1/schedule': async (o) => {
    needFixture('search');
    const example = requestBodyExample(o);
    const subnet = await call(operation('POST /api/v1/subnets'), 'a subnet for the job NPUs', 201,
      { role: 'operator', body: { name: 'conformance-jobs', cidr: '198.51.100.0/24' } });
    for (const [h, host] of example.hosts.entries()) {
      const npus = [0, 1].map((i) => ({ index: i, netdev: `eth${i}`, mac: `02:00:00:00:0${h + 1}:0${i}` }));
      await call(operation('PUT /api/v1/hosts/{host}'), `register ${host}`, 201, { role: 'operator', params: { host }, body: { npus } });
      for (const npu of [0, 1]) {
        await call(operation('POST /api/v1/ports'), `an address for ${host} NPU ${npu}`, 201,
          { role: 'operator', body: { subnet_id: subnet.value.id, host, npu } });
      }
    }
    const noIp = await call(o, 'NPUs without an address', 422, { role: 'scheduler', body: { ...example, job_name: 'no-ip', hosts: ['host003', 'host004'] } });
    assertNamesField(o, 'NPUs without an address', noIp.value, 'npu_ips[host003:0]');
    // host003 and host004 with addresses in two subnets of their own: the job's DP pairs could not reach
    // each other, so the schedule is refused on hosts and registers nothing.
    for (const [h, host] of ['host003', 'host004'].entries()) {
      const own = await call(operation('POST /api/v1/subnets'), `a subnet of ${host} alone`, 201,
        { role: 'operator', body: { name: `conformance-${host}`, cidr: `203.0.113.${h * 128}/25` } });
      const npus = [0, 1].map((i) => ({ index: i, netdev: `eth${i}`, mac: `02:00:00:00:0${h + 3}:0${i}` }));
      await call(operation('PUT /api/v1/hosts/{host}'), `register ${host}`, 201, { role: 'operator', params: { host }, body: { npus } });
      for (const npu of [0, 1]) {
        await call(operation('POST /api/v1/ports'), `an address for ${host} NPU ${npu}`, 201,
          { role: 'operator', body: { subnet_id: own.value.id, host, npu } });
      }
    }
    const split = await call(o, 'pairs in different subnets', 422, { role: 'scheduler', body: { ...example, job_name: 'split', hosts: ['host003', 'host004'] } });
    assertNamesField(o, 'pairs in different subnets', split.value, 'hosts');
    assert.ok(split.value.invalid_params.some((p) => /^ranks\[\d+,\d+\]$/.test(p.name)), `${o.label}: the refused pairs are listed`);
    const { res, value } = await happy(o.label);
    assert.equal(res.headers.location, `/api/v1/jobs/${example.job_name}`, `${o.label}: Location`);
    assert.equal(value.world_size, 4, `${o.label}: world_size`);
    assert.equal(value.hccl_json.server_list.length, 2, `${o.label}: hccl_json servers`);
    assert.ok(value.placement.ranks.every((r) => r.ip.startsWith('198.51.100.')), `${o.label}: rank addresses come from the ports`);
    assert.equal(value.route_plan.unreachable_pairs, 0, `${o.label}: unreachable_pairs`);
    fixtures.job = { id: value.job_name, schedule: value };
    const after = await call(operation('POST /api/v1/topology/search'), 'after the schedule', 200, { role: 'scheduler' });
    const offered = jobHostsOf(after.value);
    assert.ok(example.hosts.every((h) => !offered.includes(h)), `${o.label}: search still offers the job's hosts (${offered})`);
    const taken = await call(o, 'the same job name again', 409, { role: 'scheduler' });
    assertNamesField(o, 'the same job name again', taken.value, 'job_name');
    const overlap = await call(o, 'NPUs another job holds', 409, { role: 'scheduler', body: { ...example, job_name: 'train-b' } });
    assertNamesField(o, 'NPUs another job holds', overlap.value, 'hosts[0]');
    const dup = await call(o, 'a host listed twice', 400, { role: 'scheduler', body: { ...example, job_name: 'train-c', hosts: ['host003', 'host003'] } });
    assertNamesField(o, 'a host listed twice', dup.value, 'hosts[1]');
  },
  'GET /api/v1/jobs': async (o) => {
    needFixture('job');
    const { value } = await happy(o.label);
    assert.deepEqual(value.items.map((j) => j.name), [fixtures.job.id], `${o.label}: the registered jobs`);
    assert.equal(value.items[0].npus, 4, `${o.label}: npus`);
  },
  'GET /api/v1/jobs/{name}': async (o) => {
    needFixture('job');
    const { value } = await happy(o.label);
    assert.equal(value.ranks.length, 4, `${o.label}: ranks`);
    assert.deepEqual(value.ranks.map((r) => r.ip), fixtures.job.schedule.placement.ranks.map((r) => r.ip), `${o.label}: rank addresses`);
    assert.deepEqual(value.request, requestBodyExample(operation('POST /api/v1/schedule')), `${o.label}: the request as accepted`);
  },
  // The dashboard's page and an asset: security headers, ETag and 304; no path out of the web root.
  'GET /': async (o) => {
    const { res, value } = await happy(o.label);
    assert.match(String(value), /src="\/ui\/app\.js"/, `${o.label}: the page does not load the bundle`);
    assert.match(res.headers['content-security-policy'] ?? '', /script-src 'self'(;|$)/, `${o.label}: CSP ${res.headers['content-security-policy']}`);
    assert.equal(res.headers['x-content-type-options'], 'nosniff', `${o.label}: X-Content-Type-Options`);
    await call(o, 'If-None-Match with the current ETag', 304, { headers: { 'If-None-Match': res.headers.etag } });
  },
  'GET /ui/{file}': async (o) => {
    const { res } = await happy(o.label);
    assert.equal(res.headers['content-type'].split(';')[0], 'text/css', `${o.label}: media type of app.css`);
    for (const file of ['../openapi.json', '..\\openapi.json', '.hidden', 'app.exe']) {
      await call(o, `no way out of the web root: ${file}`, 404, { params: { file } });
    }
  },
  // Login with the operator's token: an HttpOnly, SameSite=Strict cookie and a CSRF token; a wrong token is 401.
  'POST /api/v1/session': async (o) => {
    const { res, value } = await happy(o.label, { body: { token: TOKENS.operator } });
    const cookie = String(res.headers['set-cookie'] ?? '');
    assert.match(cookie, /^hsns_session=[^;]+; Path=\/; HttpOnly; SameSite=Strict; Max-Age=\d+$/, `${o.label}: Set-Cookie ${cookie}`);
    assert.equal(value.name, 'ops', `${o.label}: name`);
    assert.equal(value.role, 'operator', `${o.label}: role`);
    fixtures.session = { id: cookie.split(';')[0], csrf: value.csrf_token };
    await call(o, 'the documented (unknown) token', 401, {});
    await call(o, 'an agent token', 403, { body: { token: TOKENS.agent } });
  },
  'GET /api/v1/session': async (o) => {
    needFixture('session');
    const { value } = await happy(o.label);
    assert.equal(value.authenticated, false, `${o.label}: authenticated without a cookie`);
    const mine = await call(o, 'with the session cookie', 200, { headers: { Cookie: fixtures.session.id } });
    assert.equal(mine.value.authenticated, true, `${o.label}: the cookie's session is not found`);
    assert.equal(mine.value.csrf_token, fixtures.session.csrf, `${o.label}: the CSRF token differs from the login's`);
  },
  // Logout: the cookie alone is refused (CSRF), a bearer token has no session to end, the CSRF token ends it.
  'DELETE /api/v1/session': async (o) => {
    needFixture('session');
    const cookie = { Cookie: fixtures.session.id };
    await call(o, 'the cookie without its CSRF token', 403, { headers: cookie });
    await call(o, 'a bearer token', 404, { role: 'viewer', params: { 'X-CSRF-Token': fixtures.session.csrf } });
    await call(o, 'the cookie with its CSRF token', 204, { headers: cookie, params: { 'X-CSRF-Token': fixtures.session.csrf } });
    await call(o, 'the session has ended', 401, { headers: cookie, params: { 'X-CSRF-Token': fixtures.session.csrf } });
  },
  'DELETE /api/v1/jobs/{name}': async (o) => {
    needFixture('job');
    await happy(o.label);
    await call(o, 'deleted already', 404, { role: 'scheduler' });
    const { value } = await call(operation('POST /api/v1/topology/search'), 'after the delete', 200, { role: 'scheduler' });
    assert.deepEqual(value.candidates[0].hosts.map((h) => h.name), ['host001', 'host002'], 'the deleted job\'s hosts are offered again');
  },
});
Object.assign(CUSTOM, {
  'GET /api/v1/incidents': async (o) => {
    const { value } = await happy(o.label);
    assert.deepEqual(value, { items: [], total: 0 }, `${o.label}: no alarms were fed, so no incidents`);
    await call(o, 'a bad state', 400, { role: 'viewer', params: { state: 'pending' } });
  },
  'GET /api/v1/incidents/{id}': async (o) => {
    await call(o, 'no incident yet', 404, { role: 'viewer' });
  },
  'GET /api/v1/incidents/stream': async (o) => CUSTOM['GET /api/v1/events'](o),
  // The topology's revisions (aggregator/api/topology/stream.h): upgrades like the change feed.
  'GET /api/v1/topology/stream': async (o) => CUSTOM['GET /api/v1/events'](o),
  'GET /api/v1/overlays/{id}/stream': async (o) => CUSTOM['GET /api/v1/events'](o, '/api/v1/overlays/pfc/stream'),
});

Object.assign(CUSTOM, {
  'GET /api/v1/alarms': async (o) => {
    const { value } = await happy(o.label);
    assert.equal(value.total, 0, `${o.label}: a fresh aggregator has no alarms`);
    await call(o, 'no filters', 200, { role: 'viewer', params: Object.fromEntries(o.params.filter((p) => p.in === 'query').map((p) => [p.name, null])) });
    const { value: bad } = await call(o, 'an unknown state', 400, { role: 'viewer', params: { state: 'bogus' } });
    assertNamesField(o, 'an unknown state', bad, 'state');
  },
  'GET /api/v1/alarms/stream': async (o) => CUSTOM['GET /api/v1/events'](o),
  'GET /api/v1/alarms/{id}': async (o) => { await call(o, 'no alarm exists yet', 404, { role: 'viewer' }); },
  'POST /api/v1/alarms/{id}/ack': async (o) => { await call(o, 'no alarm exists yet', 404, { role: 'operator' }); },
  'POST /api/v1/alarms/ack': async (o) => {
    const { value } = await call(o, 'no alarm exists yet', 404, { role: 'operator' });
    assertNamesField(o, 'no alarm exists yet', value, 'ids[0]');
    const { value: empty } = await call(o, 'no ids', 400, { role: 'operator', body: { ids: [] } });
    assertNamesField(o, 'no ids', empty, 'ids');
  },
  // The fixture silence: the document's example; its example id now means the created rule.
  'POST /api/v1/silences': async (o) => {
    const { res, value, req } = await happy(o.label, { onAnswer: (_, silence) => {
      if (!silence?.id) return;
      fixtures.silence = silence;
      runtimeIds.set(P.SilenceIdPath.example, silence.id);
    } });
    checkLocation(o, res, value, req);
    assert.equal(value.creator, 'ops', `${o.label}: the creator is the token's name`);
    const { value: bad } = await call(o, 'no matcher', 400, { role: 'operator', body: { reason: 'x' } });
    assertNamesField(o, 'no matcher', bad, 'entity');
  },
  'GET /api/v1/silences': async (o) => {
    needFixture('silence');
    const { value } = await happy(o.label);
    assert.deepEqual(value.items.map((s) => s.id), [fixtures.silence.id], `${o.label}: the rules`);
  },
  'DELETE /api/v1/silences/{id}': async (o) => {
    needFixture('silence');
    await happy(o.label);
    await call(o, 'deleted already', 404, { role: 'operator' });
  },
});

// The path example's NPUs are the job's ranks 0 and 2 (host001 and host002, one leaf per rail): the job's
// plan decides; a pair outside any job gets its ECMP candidates; problems name the parameter.
Object.assign(CUSTOM, {
  'GET /api/v1/diagnose/path': async (o) => {
    needFixture('job');
    const { value } = await happy(o.label);
    assert.equal(value.route.source, 'plan', `${o.label}: route ${JSON.stringify(value.route)}`);
    assert.equal(value.route.job, fixtures.job.id, `${o.label}: the job holding both NPUs`);
    assert.deepEqual(value.paths.map((p) => p.hops.length), [3], `${o.label}: NPU link, leaf, NPU link`);
    assert.equal(value.summary.hops, value.hops.length, `${o.label}: summary.hops`);
    const other = await call(o, 'NPUs of no job', 200, { role: 'viewer', params: { src: 'host003/eth0', dst: 'host001/eth1' } });
    assert.equal(other.value.route.source, 'ecmp', `${o.label}: NPUs of no job`);
    const missing = await call(o, 'dst missing', 400, { role: 'viewer', params: { dst: undefined } });
    assertNamesField(o, 'dst missing', missing.value, 'dst');
    const bad = await call(o, 'max_paths 0', 400, { role: 'viewer', params: { max_paths: '0' } });
    assertNamesField(o, 'max_paths 0', bad.value, 'max_paths');
    await call(o, 'an unknown host', 404, { role: 'viewer', params: { src: `${UNKNOWN_HOST}/eth0` } });
  },
  'GET /api/v1/diagnose/job/{id}': async (o) => {
    needFixture('job');
    const { value } = await happy(o.label);
    assert.equal(value.job, fixtures.job.id, `${o.label}: job`);
    assert.equal(value.ranks, 4, `${o.label}: ranks`);
    assert.equal(value.route_plan.used, true, `${o.label}: the route plan is reproduced (${value.route_plan.note})`);
    assert.ok(value.summary.pairs > 0, `${o.label}: the job's pairs`);
    const bad = await call(o, 'an id that is no job name', 400, { role: 'viewer', params: { id: '-x' } });
    assertNamesField(o, 'an id that is no job name', bad.value, 'id');
  },
});

for (const label of SCENARIO_MAIN) {
  test(`${label}: the documented request answers as documented`, async () => {
    const o = operation(label);
    await (CUSTOM[label] ? CUSTOM[label](o) : happy(label));
  });
}

test('GET routes answer HEAD like GET, without a body', async () => {
  for (const o of OPERATIONS.filter((x) => x.method === 'get')) {
    const req = documentedRequest(o);
    const h = { ...req.headers, ...(o.needsToken ? { authorization: `Bearer ${TOKENS.viewer}` } : {}) };
    const get = await send('GET', req.target, { headers: h });
    const head = await send('HEAD', req.target, { headers: h });
    assert.equal(head.status, get.status, `HEAD ${req.target} (for ${o.label}) answered ${head.status}, GET ${get.status}`);
    assert.equal(head.body.length, 0, `HEAD ${req.target} (for ${o.label}) has a body`);
    assert.equal(head.headers['content-type'], get.headers['content-type'], `HEAD ${req.target} (for ${o.label}): Content-Type differs from GET`);
  }
});

test('401: operations that need a token refuse none and a wrong one', async () => {
  for (const o of OPERATIONS.filter((x) => x.documents(401))) {
    for (const [what, token] of [['no token', undefined], ['wrong token', 'not-a-valid-token-0123456789']]) {
      const { res } = await call(o, what, 401, { token });
      assert.match(res.headers['www-authenticate'] ?? '', /^Bearer\b/i,
        `${o.label} (${what}): WWW-Authenticate is ${JSON.stringify(res.headers['www-authenticate'])}, not a Bearer challenge`);
    }
  }
});

test('403: write operations refuse the viewer role', async () => {
  for (const o of OPERATIONS.filter((x) => WRITE_METHODS.has(x.method) && x.documents(403) && !COOKIE_ONLY.has(x.label))) {
    await call(o, 'viewer token', 403, { role: 'viewer' });
  }
});

test('404: unknown ids answer a not-found problem', async () => {
  const unknown = (p) => (p.schema?.format === 'uuid' ? randomUUID() : UNKNOWN_HOST);
  for (const o of OPERATIONS.filter((x) => x.documents(404))) {
    if (NOT_FOUND_WITHOUT_TOPOLOGY.includes(o.label) && !o.params.some((p) => p.in === 'path')) continue;
    if (NOT_FOUND_IN_SCENARIO.includes(o.label)) continue;
    if (COOKIE_ONLY.has(o.label)) continue;
    const role = WRITE_METHODS.has(o.method) ? 'operator' : 'viewer';
    const pathParams = o.params.filter((p) => p.in === 'path');
    if (pathParams.length) {
      for (const p of pathParams) await call(o, `unknown ${p.name}`, 404, { role, params: { [p.name]: unknown(p) } });
      continue;
    }
    // No path parameter: the 404 is about an id the request references (query parameter or body field).
    let checked = 0;
    for (const p of o.params.filter((x) => x.in === 'query' && x.schema?.format === 'uuid')) {
      await call(o, `unknown ${p.name}`, 404, { role, params: { [p.name]: randomUUID() } }); checked++;
    }
    if (o.body) {
      const media = o.body.content['application/json'];
      const schema = deref(media.schema, '').obj;
      for (const [field, s] of Object.entries(schema.properties || {})) {
        if (deref(s, '').obj.format !== 'uuid') continue;
        await call(o, `unknown ${field}`, 404, { role, body: { ...requestBodyExample(o), [field]: randomUUID() } }); checked++;
      }
    }
    assert.ok(checked > 0, `${o.label}: documents 404 but the test found no id to make unknown`);
  }
});

test('400: unknown body fields and unknown query parameters are named in an invalid-request problem', async () => {
  for (const o of OPERATIONS.filter((x) => x.documents(400))) {
    const role = WRITE_METHODS.has(o.method) ? 'operator' : 'viewer';
    if (o.body) {
      const { value } = await call(o, 'unknown body field', 400, { role, body: { ...requestBodyExample(o), [UNKNOWN_FIELD]: 1 } });
      assertNamesField(o, 'unknown body field', value, UNKNOWN_FIELD);
    } else {
      const { value } = await call(o, 'unknown query parameter', 400, { role, extraQuery: { [UNKNOWN_QUERY]: 'red' } });
      assertNamesField(o, 'unknown query parameter', value, UNKNOWN_QUERY);
    }
  }
});

test('415: bodies that are not application/json are refused', async () => {
  for (const o of OPERATIONS.filter((x) => x.body && x.documents(415))) {
    await call(o, 'text/plain body', 415, { role: 'operator', body: JSON.stringify(requestBodyExample(o)), contentType: 'text/plain' });
  }
});

test('413: bodies over the limit are refused', async () => {
  for (const o of OPERATIONS.filter((x) => x.body && x.documents(413))) {
    const req = documentedRequest(o);
    const res = await sendOversizedHead(o.method.toUpperCase(), req.target, TOKENS.operator);
    checkAnswer(o, res, 413, `Content-Length ${2 * bodyLimitOf(req.target)}: ${o.method.toUpperCase()} ${req.target}`);
  }
});

test('409 and 422: documented conflicts answer a problem naming the field', async () => {
  needFixture('subnet', 'port');
  const subnets = operation('POST /api/v1/subnets');
  if (subnets.documents(409)) {
    const { value } = await call(subnets, 'the example subnet again', 409, { role: 'operator' });
    assertNamesField(subnets, 'the example subnet again', value, 'name');
  }
  const ports = operation('POST /api/v1/ports');
  if (ports.documents(409)) await call(ports, 'the example port again', 409, { role: 'operator' });
  if (ports.documents(422)) {
    const { value } = await call(ports, 'an NPU the host lacks', 422, { role: 'operator', body: { ...requestBodyExample(ports), npu: 7, ip_address: undefined } });
    assertNamesField(ports, 'an NPU the host lacks', value, 'npu');
    const r2 = await call(ports, 'an unregistered host', 422, { role: 'operator', body: { ...requestBodyExample(ports), host: UNKNOWN_HOST, ip_address: undefined } });
    assertNamesField(ports, 'an unregistered host', r2.value, 'host');
  }
  const del = operation('DELETE /api/v1/subnets/{subnet_id}');
  if (del.documents(409)) await call(del, 'the subnet still has ports', 409, { role: 'operator' });
  const patch = operation('PATCH /api/v1/subnets/{subnet_id}');
  if (patch.documents(409)) {
    // A second subnet in the fixture's tenant; renaming the fixture subnet to its name conflicts.
    const other = await call(subnets, 'a second subnet for the rename conflict', 201, {
      role: 'operator', body: { name: 'conformance-other', cidr: '198.19.0.0/24', tenant: fixtures.subnet.tenant } });
    const { value } = await call(patch, 'rename to a taken name', 409, { role: 'operator', body: { name: other.value.name } });
    assertNamesField(patch, 'rename to a taken name', value, 'name');
    await call(del, 'the second subnet', 204, { role: 'operator', params: { subnet_id: other.value.id } });
  }
});

for (const label of SCENARIO_DELETES) {
  test(`${label}: the documented request answers as documented`, async () => {
    const o = operation(label);
    await (CUSTOM[label] ? CUSTOM[label](o) : happy(label));
  });
}

// ---- roles (x-hsns-roles) ----------------------------------------------------------------------------------
// Each operation lists the roles whose token it admits in `x-hsns-roles`; `[]` means it needs no token
// (docs/security.md's role table is generated from these lists by scripts/security-roles.py). Checked
// against the source document: a binary built before a change to the document serves the older one.

const ROLES = ['viewer', 'operator', 'scheduler', 'agent'];
const rolesOf = (o) => o.op['x-hsns-roles'];

test('x-hsns-roles: every operation lists the roles it admits', () => {
  const wrong = [];
  for (const o of OPERATIONS) {
    const roles = rolesOf(o);
    if (!Array.isArray(roles)) { wrong.push(`${o.label}: no x-hsns-roles list`); continue; }
    if (roles.some((r) => !ROLES.includes(r)) || new Set(roles).size !== roles.length) {
      wrong.push(`${o.label}: x-hsns-roles ${JSON.stringify(roles)} names an unknown role or one twice`);
    }
    if ((roles.length > 0) !== o.needsToken) {
      wrong.push(`${o.label}: x-hsns-roles ${JSON.stringify(roles)}, but the operation ${o.needsToken ? 'needs a token' : 'has security: [] (no token)'}`);
    }
  }
  if (wrong.length) assert.fail(`${wrong.length} mismatches:\n${wrong.join('\n')}`);
});

// A request that cannot change anything once admitted: every path parameter names nothing that exists, a
// body (when the operation takes one) has an unknown field, and a write carries an unknown query parameter.
// Its answer (400, 404, 422; 426 for a plain GET to a WebSocket route) proves only that the role got past
// the role check.
function minimalRequest(o) {
  let target = o.tmpl;
  for (const p of o.params.filter((x) => x.in === 'path')) {
    const value = deref(p.schema ?? {}, '').obj.format === 'uuid' ? randomUUID() : UNKNOWN_HOST;
    target = target.replaceAll(`{${p.name}}`, encodeURIComponent(value));
  }
  if (WRITE_METHODS.has(o.method)) target += `?${UNKNOWN_QUERY}=red`;
  return { target, body: o.body ? { [UNKNOWN_FIELD]: 1 } : undefined };
}

test('x-hsns-roles: a role not listed gets 403, a listed role is admitted', async (t) => {
  const wrong = [];
  let requests = 0;
  for (const o of OPERATIONS) {
    const listed = rolesOf(o);
    if (!Array.isArray(listed)) continue; // named by the test above
    const req = minimalRequest(o);
    const ws = o.documents(101);
    // An operation that needs no token ignores one: it is called without, and with each role's token.
    for (const role of listed.length ? ROLES : [undefined, ...ROLES]) {
      const who = role ? `the ${role} token` : 'no token';
      const what = `${who}: ${o.method.toUpperCase()} ${req.target}`;
      const res = await send(o.method.toUpperCase(), req.target, { role, body: req.body });
      requests++;
      if (listed.length && !listed.includes(role)) {
        if (res.status !== 403) {
          wrong.push(`${o.label} (${what}): ${res.status}, but ${role} is not in x-hsns-roles ${JSON.stringify(listed)}: expected 403`);
          continue;
        }
        try { checkAnswer(o, res, 403, what); } catch (e) { wrong.push(e.message); }
      } else if (res.status === 401 || res.status === 403) {
        wrong.push(`${o.label} (${what}): ${res.status} ${excerpt(res.body)}, but x-hsns-roles ${JSON.stringify(listed)} admits it`);
      } else if (ws && res.status !== 426) {
        wrong.push(`${o.label} (${what}): a plain GET to a WebSocket route answered ${res.status}, not 426`);
      }
    }
  }
  if (wrong.length) assert.fail(`${wrong.length} mismatches:\n${wrong.join('\n')}`);
  t.diagnostic(`${requests} requests: each role against every operation's x-hsns-roles`);
});

test('SIGTERM stops the aggregator with exit code 0', async (t) => {
  assert.ok(server.proc, 'the aggregator was not started');
  server.proc.kill('SIGTERM');
  const timer = new Promise((r) => { const id = setTimeout(() => r('timeout'), 20_000); id.unref(); });
  const result = await Promise.race([server.exit, timer]);
  assert.notEqual(result, 'timeout', `the aggregator did not stop within 20 s of SIGTERM${serverOutput()}`);
  assert.deepEqual(result, { code: 0, signal: null }, `the aggregator stopped with ${JSON.stringify(result)}${serverOutput()}`);
  const unexercised = OPERATIONS.map((o) => {
    const rest = Object.keys(o.op.responses).filter((c) => !o.seen.has(c));
    return rest.length ? `${o.label}: ${rest.join(', ')}` : null;
  }).filter(Boolean);
  t.diagnostic(`${OPERATIONS.length} operations, ${answersChecked} answers checked against the document`);
  t.diagnostic(`documented answers not exercised: ${unexercised.join('; ') || 'none'}`);
});
