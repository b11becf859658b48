// The NPU port page (#/port/<host>/<netdev>) and the link page (#/link/<device>/<port>: the link that port
// ends; either end names it). A port: its link in the topology, KPI charts, its optical module's
// diagnostics against the module's own thresholds (per measure and lane), its LLDP neighbour, the flows
// from or to its address (when the network API gave it one) and its alarms. A link: both ends (each a link
// to its port or switch page), capacity and state, both ends' KPI charts and the alarms of either end.
import type { PageContext, Cleanup } from '../main';
import { ApiError, get, query } from '../api';
import { el, setStatus, stateBadge, table } from '../dom';
import { resizeAll, type Chart } from '../charts';
import { fetchGraph, type TopoGraph, type TopoLink } from '../topology';
import { alarmEntities, alarmsSection, flagText, hoursOf, kpiCharts, linkHash, portHash, windowLinks, type Flow, type Lldp, type Optic } from './entity';

// A link's tier (its upper end's) in words.
const TIER_WORDS: Record<string, string> = { leaf: 'host-to-leaf', spine: 'leaf-to-spine', core: 'spine-to-core' };

interface Port { id: string; host: string; npu: number; ip_address: string }

// A module reading's measures against its thresholds: one row per measure (and lane), in display units.
const MEASURES: { key: string; label: string; unit: string; scale: number; values: (o: Optic) => [string, number | undefined][] }[] = [
  { key: 'temperature', label: 'temperature', unit: '°C', scale: 1, values: (o) => [['', o.temperature_celsius]] },
  { key: 'voltage', label: 'supply voltage', unit: 'V', scale: 1, values: (o) => [['', o.voltage_volts]] },
  { key: 'bias', label: 'laser bias', unit: 'mA', scale: 1000, values: (o) => (o.lanes ?? []).map((l) => [` lane ${l.lane}`, l.bias_amperes]) },
  { key: 'tx_power', label: 'transmit power', unit: 'mW', scale: 1000, values: (o) => (o.lanes ?? []).map((l) => [` lane ${l.lane}`, l.tx_power_watts]) },
  { key: 'rx_power', label: 'receive power', unit: 'mW', scale: 1000, values: (o) => (o.lanes ?? []).map((l) => [` lane ${l.lane}`, l.rx_power_watts]) },
];

function verdictOf(v: number, t: { high_alarm: number; low_alarm: number; high_warning: number; low_warning: number } | undefined): string {
  if (!t) return 'no thresholds';
  if (v > t.high_alarm || v < t.low_alarm) return '✘ alarm';
  if (v > t.high_warning || v < t.low_warning) return '▲ warning';
  return '✔ within';
}

function diagnostics(o: Optic): HTMLElement {
  const rows = MEASURES.flatMap((m) => m.values(o).filter((x): x is [string, number] => x[1] !== undefined).map(([lane, v]) => {
    const t = o.thresholds?.[m.key];
    const f = (x: number | undefined): string => (x === undefined ? '—' : (x * m.scale).toPrecision(3));
    return [`${m.label}${lane}`, `${f(v)} ${m.unit}`, f(t?.low_alarm), f(t?.low_warning), f(t?.high_warning), f(t?.high_alarm), verdictOf(v, t)];
  }));
  const t = table(`Module diagnostics of ${o.netdev} against its thresholds (${o.status}; ${flagText(o)}; ${o.time})`,
    ['measure', 'value', 'low alarm', 'low warning', 'high warning', 'high alarm', 'verdict'], rows, 'The module reported no measure.');
  t.id = 'port-module';
  return t;
}

// The topology link a device's port ends, with the graph; null when the topology has none.
function linkOf(graph: TopoGraph, device: string, port: string): TopoLink | null {
  const me = graph.nodes.find((n) => n.name === device);
  if (!me) return null;
  return graph.links.find((l) => (l.source === me.id && l.source_port === port) || (l.target === me.id && l.target_port === port)) ?? null;
}

async function readGraph(main: HTMLElement): Promise<TopoGraph | null> {
  try {
    return await fetchGraph();
  } catch (e) {
    if (!(e instanceof ApiError && e.status === 404)) throw e;
    main.append(el('p', {}, 'There is no topology yet.'));
    return null;
  }
}

// An end of a link as a link to its page: an NPU port's page for a host, the switch page otherwise.
function endLink(graph: TopoGraph, node: number, port: string): HTMLElement {
  const n = graph.nodes[node];
  const name = n?.name ?? '?';
  return n?.tier === 'host' ? el('a', { href: portHash(name, port) }, `${name}/${port}`)
    : el('a', { href: `#/switch/${encodeURIComponent(name)}` }, `${name}/${port}`);
}

const kpiWindow = (base: string, hours: number): HTMLElement => el('p', {}, 'KPI window: ', ...windowLinks(base, hours));

export async function renderPort(ctx: PageContext): Promise<Cleanup | void> {
  const { main, path, params } = ctx;
  const host = path[1] ?? '';
  const netdev = path[2] ?? '';
  const entity = `${host}/${netdev}`;
  const hours = hoursOf(params);
  main.append(el('h1', {}, `NPU port ${entity}`),
    el('p', {}, el('a', { href: `#/host/${encodeURIComponent(host)}` }, `Host ${host}`), ' · ', el('a', { href: linkHash(host, netdev) }, 'its link')),
    kpiWindow(portHash(host, netdev), hours));
  const graph = await readGraph(main);
  const link = graph ? linkOf(graph, host, netdev) : null;
  const npu = graph?.nodes.find((n) => n.name === host)?.npus?.find((n) => n.port === netdev);
  if (graph && link) {
    main.append(el('p', { id: 'port-link' }, `NPU ${npu?.index ?? link.npu ?? '?'}, state `, stateBadge(npu?.state ?? 'healthy'), `; its link to `,
      endLink(graph, link.source_port === netdev && graph.nodes[link.source]?.name === host ? link.target : link.source,
        link.source_port === netdev && graph.nodes[link.source]?.name === host ? link.target_port : link.source_port),
      `, ${link.bandwidth_gbps} Gb/s, `, stateBadge(link.state), '. ',
      npu ? el('a', { href: `#/diagnose?src=${encodeURIComponent(`${host}/${npu.index}`)}` }, 'Diagnose a path from it') : ''));
  } else if (graph) {
    main.append(el('p', {}, `The topology has no link of ${entity}.`));
  }
  const kpis = el('section', { 'aria-labelledby': 'kpi-title' }, el('h2', { id: 'kpi-title' }, 'KPIs'));
  main.append(kpis);
  const charts: Chart[] = await kpiCharts(kpis, entity, hours);
  await alarmsSection(main, (a) => alarmEntities(a).includes(entity));

  const enc = encodeURIComponent(host);
  const [optics, lldp, ports] = await Promise.all([
    get<{ items: Optic[] }>(`/api/v1/hosts/${enc}/optics${query({ netdev, limit: 10 })}`),
    get<{ items: Lldp[] }>(`/api/v1/hosts/${enc}/lldp${query({ netdev, limit: 10 })}`),
    get<{ items: Port[] }>(`/api/v1/ports${query({ host })}`),
  ]);
  main.append(el('h2', {}, 'Optical module'));
  const module = optics.items[0];
  main.append(module ? diagnostics(module) : el('p', { class: 'note' }, `No optical module reading of ${netdev} yet.`));
  main.append(el('h2', {}, 'LLDP neighbour'), table('LLDP neighbour', ['neighbour', 'port', 'chassis', 'TTL s', 'time'],
    lldp.items.map((n) => [n.system_name ? el('a', { href: `#/switch/${encodeURIComponent(n.system_name)}` }, n.system_name) : null,
      n.port_id, n.chassis_id, n.ttl_s, n.time]), 'No LLDP neighbour reported yet.'));
  const address = npu ? ports.items.find((p) => p.npu === npu.index) : undefined;
  main.append(el('h2', {}, 'Flows'));
  if (!address) {
    main.append(el('p', { class: 'note' }, 'The port has no address from the network API: no flow can be attributed to it.'));
  } else {
    const flows = await get<{ items: Flow[] }>(`/api/v1/flows${query({ port: address.id, limit: 200 })}`);
    main.append(table(`RoCEv2 flows from or to ${address.ip_address}`, ['source', 'QP', 'destination', 'QP', 'packets', 'bytes', 'CE', 'CNP', 'NAKs'],
      flows.items.map((f) => [f.src, f.src_qp, f.dst, f.dst_qp, f.packets, f.bytes, f.forward?.ce, f.forward?.cnp, f.forward?.naks]), 'No flow reported yet.'));
  }
  setStatus(`port ${entity}`);
  return resizeAll(charts);
}

export async function renderLink(ctx: PageContext): Promise<Cleanup | void> {
  const { main, path, params } = ctx;
  const device = path[1] ?? '';
  const port = path[2] ?? '';
  const hours = hoursOf(params);
  main.append(el('h1', {}, `Link of ${device}/${port}`), kpiWindow(linkHash(device, port), hours));
  const graph = await readGraph(main);
  const link = graph ? linkOf(graph, device, port) : null;
  if (!graph || !link) {
    if (graph) main.append(el('p', {}, `The topology has no link of ${device}/${port}.`));
    setStatus(`link ${device}/${port}`);
    return;
  }
  const ends: [string, string][] = [[graph.nodes[link.source]?.name ?? '?', link.source_port], [graph.nodes[link.target]?.name ?? '?', link.target_port]];
  const entities = ends.map(([d, p]) => `${d}/${p}`);
  main.append(el('p', { id: 'link-ends' }, endLink(graph, link.source, link.source_port), ' — ', endLink(graph, link.target, link.target_port),
    `: ${TIER_WORDS[link.tier] ?? link.tier} link, ${link.bandwidth_gbps} Gb/s${link.npu !== undefined ? `, NPU ${link.npu}` : ''}, state `, stateBadge(link.state), '.'));
  const charts: Chart[] = [];
  for (const e of entities) {
    const section = el('section', { 'aria-label': `KPIs of ${e}` }, el('h2', {}, `KPIs of ${e}`));
    main.append(section);
    charts.push(...await kpiCharts(section, e, hours));
  }
  await alarmsSection(main, (a) => alarmEntities(a).some((x) => entities.includes(x)));
  setStatus(`link ${entities.join(' — ')}`);
  return resizeAll(charts);
}
