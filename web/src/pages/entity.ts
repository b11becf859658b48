// Entity pages: #/host/<name> and #/switch/<name> (the NPU port and link pages are port.ts). KPI charts
// (ECharts over GET /api/v1/kpis/series and GET /api/v1/kpis, 1-minute resolution, the last `hours` hours:
// URL state), the alarms concerning the device (the newest 1,000 read), and for a host its NPU ports (each a
// link to its port and link pages), optical modules, LLDP neighbours and flows (the stored telemetry); for a
// switch its links in the topology.
import type { PageContext, Cleanup } from '../main';
import { ApiError, get, query } from '../api';
import { el, setStatus, stateBadge, table } from '../dom';
import { makeChart, resizeAll, type Chart } from '../charts';
import { fetchGraph } from '../topology';
import { entityDevices, entityParts, severityBadge, shortTime, type Alarm } from '../brain';

interface Series { entity: string; metric: string; last_ms: number; last_value: number }
interface Points { points: { ts_ms: number; min: number; max: number; avg: number; last: number }[] }
export interface Optic { netdev: string; status: string; vendor?: string; serial?: string; temperature_celsius?: number; voltage_volts?: number;
  thresholds?: Record<string, { high_alarm: number; low_alarm: number; high_warning: number; low_warning: number }>;
  flags?: Record<string, { high_alarm: boolean; low_alarm: boolean; high_warning: boolean; low_warning: boolean }>;
  lanes?: { lane: number; tx_power_watts?: number; rx_power_watts?: number; bias_amperes?: number }[]; time: string }
export interface Lldp { netdev: string; npu?: number; system_name?: string; port_id: string; chassis_id: string; ttl_s: number; time: string }
export interface Flow { src: string; dst: string; src_qp: number; dst_qp: number; packets: number; bytes: number;
  forward?: { ce: number; cnp: number; naks: number } }

const MAX_CHARTS = 8;

export function flagText(o: Optic): string {
  const raised: string[] = [];
  for (const [what, f] of Object.entries(o.flags ?? {})) {
    for (const [k, v] of Object.entries(f)) if (v) raised.push(`${what} ${k.replace('_', ' ')}`);
  }
  return raised.length ? `⚠ ${raised.join(', ')}` : 'within thresholds';
}

// The KPI series of `device` (a device name: its own and its ports'; or one port's entity).
export async function kpiCharts(section: HTMLElement, device: string, hours: number): Promise<Chart[]> {
  const all = await get<{ items: Series[] }>('/api/v1/kpis/series?limit=10000');
  const mine = all.items.filter((s) => s.entity === device || s.entity.startsWith(`${device}/`));
  if (mine.length === 0) {
    section.append(el('p', { class: 'note' }, `No KPI series of ${device} yet.`));
    return [];
  }
  section.append(el('p', { class: 'note' }, `${mine.length} series; the first ${Math.min(MAX_CHARTS, mine.length)} drawn (1-minute average, min and max).`));
  const grid = el('div', { class: 'charts' });
  section.append(grid);
  const since = new Date(Date.now() - hours * 3600_000).toISOString().replace(/\.\d+Z$/, 'Z');
  const charts: Chart[] = [];
  for (const s of mine.slice(0, MAX_CHARTS)) {
    const p = await get<Points>(`/api/v1/kpis${query({ entity: s.entity, metric: s.metric, since, resolution: '1m', limit: 1440 })}`);
    const box = el('div', { class: 'chart kpi-chart' });
    grid.append(el('figure', {}, el('figcaption', {}, `${s.entity} · ${s.metric} (last ${s.last_value})`), box));
    charts.push(makeChart(box, {
      tooltip: { trigger: 'axis' },
      legend: { data: ['avg', 'min', 'max'], bottom: 0 },
      grid: { left: 60, right: 16, top: 16, bottom: 50 },
      xAxis: { type: 'time' },
      yAxis: { type: 'value', scale: true },
      series: [
        { name: 'avg', type: 'line', showSymbol: p.points.length < 30, data: p.points.map((x) => [x.ts_ms, x.avg]) },
        { name: 'min', type: 'line', showSymbol: false, lineStyle: { type: 'dotted' }, data: p.points.map((x) => [x.ts_ms, x.min]) },
        { name: 'max', type: 'line', showSymbol: false, lineStyle: { type: 'dashed' }, data: p.points.map((x) => [x.ts_ms, x.max]) },
      ],
    }, `${s.metric} of ${s.entity}: ${p.points.length} one-minute points, last value ${s.last_value}`));
  }
  return charts;
}

// The KPI window of the entity pages (URL `hours`, 1 h .. 7 days, default 6) and the links choosing it.
export const hoursOf = (params: URLSearchParams): number => Math.min(24 * 7, Math.max(1, Number(params.get('hours') ?? '6') || 6));
export function windowLinks(base: string, hours: number): HTMLElement[] {
  return [1, 6, 24].map((h) => el('a', { href: `${base}?hours=${h}`, 'aria-current': h === hours ? 'true' : undefined }, ` ${h} h `));
}

// The device names and entities an alarm concerns: its entity, peer and root cause (a link id names both
// ends).
export function alarmEntities(a: Alarm): string[] {
  return [a.entity, a.peer, a.root_cause].filter(Boolean).flatMap(entityParts);
}

// The alarms (the newest 1,000) that `concerns` picks, newest first, each with a link to the alarm view.
export async function alarmsSection(main: HTMLElement, concerns: (a: Alarm) => boolean): Promise<void> {
  const list = await get<{ items: Alarm[] }>(`/api/v1/alarms${query({ limit: 1000 })}`);
  const mine = list.items.filter(concerns);
  const section = el('section', { 'aria-labelledby': 'alarms-title', id: 'entity-alarms' }, el('h2', { id: 'alarms-title' }, 'Alarms'));
  section.dataset['count'] = String(mine.length);
  section.append(table('Alarms (newest first)', ['severity', 'entity', 'fault', 'state', 'first seen', 'last seen', 'count', ''],
    mine.map((a) => [severityBadge(a.severity), a.entity, a.fault || a.type,
      `${a.state}${a.suppressed ? ' (suppressed)' : ''}${a.flapping ? ' ⚑ flapping' : ''}`, shortTime(a.first_seen), shortTime(a.last_seen), a.count,
      el('a', { href: `#/alarms?entity=${encodeURIComponent(a.entity)}` }, 'in the alarm view')]), 'No alarm concerns it.'));
  main.append(section);
}

export async function renderEntity(ctx: PageContext): Promise<Cleanup | void> {
  const { main, path, params } = ctx;
  const kind = path[0] === 'switch' ? 'switch' : 'host';
  const name = path[1] ?? '';
  const hours = hoursOf(params);
  main.append(el('h1', {}, `${kind === 'host' ? 'Host' : 'Switch'} ${name}`),
    el('p', {}, el('a', { href: `#/site?mark=${encodeURIComponent(kind === 'host' ? name : '')}` }, 'Back to the site view'),
      ' · KPI window: ', ...windowLinks(`#/${kind}/${encodeURIComponent(name)}`, hours)));
  const kpis = el('section', { 'aria-labelledby': 'kpi-title' }, el('h2', { id: 'kpi-title' }, 'KPIs'));
  main.append(kpis);
  const charts = await kpiCharts(kpis, name, hours);
  await alarmsSection(main, (a) => alarmEntities(a).some((e) => entityDevices(e).includes(name)));

  if (kind === 'host') {
    await npuPorts(main, name);
    const enc = encodeURIComponent(name);
    const [optics, lldp, flows] = await Promise.all([
      get<{ items: Optic[] }>(`/api/v1/hosts/${enc}/optics?limit=1000`),
      get<{ items: Lldp[] }>(`/api/v1/hosts/${enc}/lldp?limit=1000`),
      get<{ items: Flow[] }>(`/api/v1/flows${query({ host: name, limit: 200 })}`),
    ]);
    main.append(el('h2', {}, 'Optical modules'), table('Optical modules (module diagnostics against their thresholds)',
      ['netdev', 'status', 'vendor', 'serial', 'temperature °C', 'voltage V', 'lanes rx/tx mW', 'alarms', 'time'],
      optics.items.map((o) => [o.netdev, o.status, o.vendor, o.serial, o.temperature_celsius, o.voltage_volts,
        (o.lanes ?? []).map((l) => `${l.lane}: ${((l.rx_power_watts ?? 0) * 1000).toFixed(2)}/${((l.tx_power_watts ?? 0) * 1000).toFixed(2)}`).join('; '),
        flagText(o), o.time]), 'No optical module reported yet.'));
    main.append(el('h2', {}, 'LLDP neighbours'), table('LLDP neighbours', ['netdev', 'NPU', 'neighbour', 'port', 'chassis', 'TTL s', 'time'],
      lldp.items.map((n) => [n.netdev, n.npu, n.system_name ? el('a', { href: `#/switch/${encodeURIComponent(n.system_name)}` }, n.system_name) : null,
        n.port_id, n.chassis_id, n.ttl_s, n.time]), 'No LLDP neighbour reported yet.'));
    main.append(el('h2', {}, 'Flows'), table('RoCEv2 flows (QP pairs)', ['source', 'QP', 'destination', 'QP', 'packets', 'bytes', 'CE', 'CNP', 'NAKs'],
      flows.items.map((f) => [f.src, f.src_qp, f.dst, f.dst_qp, f.packets, f.bytes, f.forward?.ce, f.forward?.cnp, f.forward?.naks]), 'No flow reported yet.'));
  } else {
    try {
      const graph = await fetchGraph();
      const me = graph.nodes.find((n) => n.name === name);
      if (!me) {
        main.append(el('p', {}, `The topology has no switch ${name}.`));
      } else {
        const links = graph.links.filter((l) => l.source === me.id || l.target === me.id);
        main.append(el('p', {}, `Tier ${me.tier}, state `, stateBadge(me.state), `, ${links.length} links.`),
          el('h2', {}, 'Links'), table('Links in the topology', ['port', 'neighbour', 'neighbour port', 'Gb/s', 'state'], links.map((l) => {
            const up = l.source === me.id;
            const other = graph.nodes[up ? l.target : l.source];
            const otherName = other?.name ?? '?';
            const href = other?.tier === 'host' ? `#/host/${encodeURIComponent(otherName)}` : `#/switch/${encodeURIComponent(otherName)}`;
            const port = up ? l.source_port : l.target_port;
            return [el('a', { href: linkHash(name, port) }, port), el('a', { href }, otherName), up ? l.target_port : l.source_port, l.bandwidth_gbps, stateBadge(l.state)];
          })));
      }
    } catch (e) {
      if (!(e instanceof ApiError && e.status === 404)) throw e;
      main.append(el('p', {}, 'There is no topology yet.'));
    }
  }
  setStatus(`${kind} ${name}`);
  return resizeAll(charts);
}

export const portHash = (host: string, port: string): string => `#/port/${encodeURIComponent(host)}/${encodeURIComponent(port)}`;
export const linkHash = (device: string, port: string): string => `#/link/${encodeURIComponent(device)}/${encodeURIComponent(port)}`;

// A host's NPU ports in the topology, each a link to its port page and its link page.
async function npuPorts(main: HTMLElement, host: string): Promise<void> {
  try {
    const graph = await fetchGraph();
    const me = graph.nodes.find((n) => n.name === host);
    main.append(el('h2', {}, 'NPU ports'), table('NPU ports in the topology', ['NPU', 'port', 'state', 'link'],
      (me?.npus ?? []).map((n) => [n.index, el('a', { href: portHash(host, n.port) }, n.port), stateBadge(n.state),
        n.link === null ? 'no link' : el('a', { href: linkHash(host, n.port) }, `link of ${n.port}`)]), 'The topology has no NPU of this host.'));
  } catch (e) {
    if (!(e instanceof ApiError && e.status === 404)) throw e;
  }
}
