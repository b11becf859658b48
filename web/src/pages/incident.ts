// The root-cause page of one incident (#/incident/<id>): its ranked root causes with their evidence and
// the symptoms (alarms) each explains, the affected jobs and ranks (each with its path diagnosis), the
// recommended action, the blast radius (the devices of its root causes, alarms and affected ranks) as a
// link that marks them on the site view, and a timeline of its alarms' state changes and user actions with
// sparklines of the metrics involved (the KPI series of its alarms' entities around the incident, 1-minute
// buckets, ECharts; each with its numbers in words).
// Live: a change of the incident on /api/v1/incidents/stream redraws the page.
import type { PageContext, Cleanup } from '../main';
import { navigate } from '../main';
import { ApiError, get, query } from '../api';
import { makeChart, type Chart } from '../charts';
import { el, setStatus, table, type Cell } from '../dom';
import { domainsOf, fetchGraph, type TopoGraph } from '../topology';
import { openStream } from '../live';
import { entityDevices, severityBadge, shortTime, type Alarm, type AlarmWithHistory, type Incident, type IncidentChange } from '../brain';

interface JobRanks { name: string; ranks: { rank: number; host: string; npu: number }[] }

const MAX_HISTORY_FETCH = 50;
const MAX_SPARK_ENTITIES = 6;
const MAX_SPARK_METRICS = 4; // per entity
const SPARK_BEFORE_MS = 30 * 60_000;
const SPARK_AFTER_MS = 10 * 60_000;

interface SeriesList { items: { entity: string; metric: string; last_ms: number }[] }
interface Points { points: { ts_ms: number; min: number; max: number; avg: number }[] }

// Sparklines of the metrics of the incident's alarm entities over [first seen - 30 min, last seen + 10 min]
// (now at the latest), the first and last seen marked. Appends into `into`; answers the charts made.
async function sparklines(incident: Incident, alarms: Iterable<Alarm>, into: HTMLElement): Promise<Chart[]> {
  const entities = [...new Set([...alarms].map((a) => a.entity))].sort().slice(0, MAX_SPARK_ENTITIES);
  const since = incident.first_seen_ms - SPARK_BEFORE_MS;
  const until = Math.min(Date.now(), incident.last_seen_ms + SPARK_AFTER_MS) + 1;
  const lists = await Promise.all(entities.map((entity) =>
    get<SeriesList>(`/api/v1/kpis/series${query({ entity, limit: 100 })}`).catch(() => ({ items: [] }) as SeriesList)));
  const series = lists.flatMap((l) => l.items.filter((s) => s.last_ms >= since).slice(0, MAX_SPARK_METRICS));
  const points = await Promise.all(series.map((s) =>
    get<Points>(`/api/v1/kpis${query({ entity: s.entity, metric: s.metric, since, until, resolution: '1m', limit: 1000 })}`)));
  const charts: Chart[] = [];
  // In the document before the charts are made (ECharts sizes itself from its container).
  const list = el('ul', { class: 'sparklines', id: 'sparklines' });
  into.append(list);
  series.forEach((s, i) => {
    const p = points[i]?.points ?? [];
    if (!p.length) return;
    const avgs = p.map((x) => x.avg);
    const min = Math.min(...p.map((x) => x.min));
    const max = Math.max(...p.map((x) => x.max));
    const words = `${s.entity} ${s.metric}: ${p.length} minutes, min ${min.toPrecision(3)}, max ${max.toPrecision(3)}, last ${avgs[avgs.length - 1]?.toPrecision(3)}`;
    const box = el('div', { class: 'sparkline' });
    list.append(el('li', {}, box, el('span', { class: 'note' }, ` ${words}`)));
    charts.push(makeChart(box, {
      grid: { left: 2, right: 2, top: 4, bottom: 4 },
      xAxis: { type: 'time', show: false, min: since, max: until },
      yAxis: { type: 'value', show: false, scale: true },
      tooltip: { trigger: 'axis' },
      series: [{ type: 'line', showSymbol: false, data: p.map((x) => [x.ts_ms, x.avg]), lineStyle: { width: 1.5, color: '#0b5cad' },
        markLine: { silent: true, symbol: 'none', label: { show: false }, lineStyle: { color: '#b42318', type: 'dashed' },
          data: [{ xAxis: incident.first_seen_ms }, { xAxis: incident.last_seen_ms }] } }],
    }, `Sparkline of ${words}; dashed lines: the incident's first and last seen`));
  });
  if (!list.childElementCount) into.append(el('p', { class: 'note' }, 'No KPI series of the alarms\' entities around the incident.'));
  list.dataset['count'] = String(list.childElementCount);
  return charts;
}

// The site view URL marking the blast radius: its devices, with the SU and spine groups that hold them
// expanded (their SU and super-pod from the topology export).
export function blastHash(devices: string[], graph: TopoGraph | null, incident: string): string {
  const expand = new Set<string>();
  const tiers = new Map((graph?.nodes ?? []).map((n) => [n.name, n.tier]));
  const domains = graph ? domainsOf(graph) : null;
  for (const d of devices) {
    const tier = tiers.get(d);
    const su = domains?.su.get(d);
    const pod = domains?.pod.get(d);
    if ((tier === 'host' || tier === 'leaf') && su !== undefined) expand.add(`su:${su}`);
    else if (tier === 'spine' && pod !== undefined) expand.add(`spines:${pod}`);
  }
  const q = new URLSearchParams();
  if (expand.size) q.set('expand', [...expand].join(','));
  q.set('blast', devices.join(','));
  q.set('incident', incident);
  return `#/site?${q.toString()}`;
}

export async function renderIncident(ctx: PageContext): Promise<Cleanup | void> {
  const { main, path } = ctx;
  const id = path[1] ?? '';
  let incident: Incident;
  try {
    incident = await get<Incident>(`/api/v1/incidents/${encodeURIComponent(id)}`);
  } catch (e) {
    if (e instanceof ApiError && e.status === 404) {
      main.append(el('h1', {}, `Incident ${id}`),
        el('p', {}, 'There is no such incident: it may have been merged into an older one (see the alarm view).'),
        el('a', { href: '#/alarms' }, 'Alarms and incidents'));
      setStatus(`Incident ${id}: not found`);
      return;
    }
    throw e;
  }

  // Its alarms: with their histories when few, else from the list.
  const alarms = new Map<string, Alarm | AlarmWithHistory>();
  if (incident.alarms.length <= MAX_HISTORY_FETCH) {
    const got = await Promise.all(incident.alarms.map((a) =>
      get<AlarmWithHistory>(`/api/v1/alarms/${encodeURIComponent(a)}`).catch(() => null)));
    for (const a of got) if (a) alarms.set(a.id, a);
  } else {
    const list = await get<{ items: Alarm[] }>('/api/v1/alarms?limit=1000');
    const wanted = new Set(incident.alarms);
    for (const a of list.items) if (wanted.has(a.id)) alarms.set(a.id, a);
  }
  const graph = await fetchGraph().catch((e: unknown) => {
    if (e instanceof ApiError && e.status === 404) return null;
    throw e;
  });
  const jobs = await Promise.all(incident.affected_jobs.slice(0, 20).map((j) =>
    get<JobRanks>(`/api/v1/jobs/${encodeURIComponent(j.name)}`).catch(() => null)));
  const jobByName = new Map(jobs.filter((j): j is JobRanks => !!j).map((j) => [j.name, j]));

  main.append(el('h1', {}, `Incident ${incident.id}: root cause`));
  const flapping = [...alarms.values()].some((a) => a.flapping);
  main.append(el('p', { id: 'incident-summary' },
    el('span', { class: `istate istate-${incident.state}` }, incident.state), ` · ${incident.alarm_count} alarms · first seen ${shortTime(incident.first_seen)} · last seen ${shortTime(incident.last_seen)}`,
    flapping ? el('span', { class: 'flapping' }, ' · ⚑ flapping') : ''));

  // Recommended action first: what the operator should do.
  main.append(el('section', { 'aria-labelledby': 'action-title', class: 'action' },
    el('h2', { id: 'action-title' }, 'Recommended action'),
    el('p', { id: 'recommended-action' }, incident.recommended_action || 'None given.')));

  // Ranked root causes.
  const causes = el('ol', { class: 'causes', id: 'root-causes' });
  for (const c of incident.root_causes) {
    const symptoms: Cell[][] = c.symptoms.map((s) => {
      const a = alarms.get(s);
      return a ? [a.entity, `${a.type} (${a.fault})`, severityBadge(a.severity), a.state + (a.suppressed ? ' · suppressed' : ''), shortTime(a.first_seen)] : [s, '—', '—', '—', '—'];
    });
    causes.append(el('li', { 'data-rank': String(c.rank) },
      el('h3', {}, `#${c.rank} ${c.entity} — ${c.kind}, ${c.fault_type}, score ${Math.round(c.score * 100)} %`),
      el('p', { class: 'note' }, 'Evidence:'),
      el('ul', {}, ...c.evidence.map((e) => el('li', {}, e))),
      table(`Symptoms explained by #${c.rank} (${c.symptoms.length} alarms)`, ['entity', 'type (fault)', 'severity', 'state', 'first seen'], symptoms)));
  }
  main.append(el('section', { 'aria-labelledby': 'causes-title' }, el('h2', { id: 'causes-title' }, 'Ranked root causes'),
    incident.root_causes.length ? causes : el('p', { class: 'note' }, 'No candidate yet.')));

  // Affected jobs and ranks.
  const jobRows: Cell[][] = incident.affected_jobs.map((j) => {
    const ranks = jobByName.get(j.name)?.ranks ?? [];
    const where = j.ranks.map((r) => { const x = ranks.find((y) => y.rank === r); return x ? `rank ${r}: ${x.host} NPU ${x.npu}` : `rank ${r}`; });
    return [j.name, j.ranks.join(', '), where.join('; '), el('a', { href: `#/diagnose?job=${encodeURIComponent(j.name)}` }, `Diagnose ${j.name}'s paths`)];
  });
  const jt = table('Registered jobs whose NPUs or paths cross the root cause', ['job', 'ranks', 'placement', 'paths'], jobRows, 'No registered job is affected.');
  jt.id = 'affected-jobs';
  main.append(el('section', { 'aria-labelledby': 'jobs-title' }, el('h2', { id: 'jobs-title' }, 'Affected jobs'), jt));

  // Blast radius.
  const devices = new Set<string>();
  for (const c of incident.root_causes) for (const d of entityDevices(c.entity)) devices.add(d);
  for (const a of alarms.values()) for (const d of [...entityDevices(a.entity), ...entityDevices(a.root_cause)]) devices.add(d);
  for (const j of incident.affected_jobs) {
    const ranks = jobByName.get(j.name)?.ranks ?? [];
    for (const r of j.ranks) { const x = ranks.find((y) => y.rank === r); if (x) devices.add(x.host); }
  }
  const known = new Set((graph?.nodes ?? []).map((n) => n.name));
  const blast = [...devices].filter((d) => known.has(d)).sort();
  main.append(el('section', { 'aria-labelledby': 'blast-title' }, el('h2', { id: 'blast-title' }, 'Blast radius'),
    el('p', {}, blast.length ? `${blast.length} devices: ${blast.join(', ')}. ` : 'No device of the topology is named. ',
      blast.length ? el('a', { href: blastHash(blast, graph, incident.id), id: 'blast-link' }, 'Highlight the blast radius on the site view') : '')));

  // Timeline: every state change and user action of its alarms.
  const events: { at_ms: number; row: Cell[] }[] = [];
  for (const a of alarms.values()) {
    const history = 'history' in a ? a.history : [];
    for (const h of history) events.push({ at_ms: h.at_ms, row: [shortTime(h.at), a.entity, h.change, h.state + (h.suppressed ? ' · suppressed' : ''), h.actor || 'system', h.comment || '—'] });
  }
  events.sort((x, y) => x.at_ms - y.at_ms);
  main.append(el('section', { 'aria-labelledby': 'timeline-title' }, el('h2', { id: 'timeline-title' }, 'Timeline'),
    table('State changes and user actions of the incident’s alarms, oldest first', ['time', 'alarm entity', 'change', 'state', 'by', 'comment'], events.map((e) => e.row),
      incident.alarms.length > MAX_HISTORY_FETCH ? 'Too many alarms to fetch each history: see each alarm in the alarm view.' : 'No history.')));
  const metrics = el('section', { 'aria-labelledby': 'metrics-title' }, el('h2', { id: 'metrics-title' }, 'Metrics involved'),
    el('p', { class: 'note' }, `The KPI series of the alarms' entities from 30 minutes before the first alarm to 10 minutes after the last (1-minute averages; at most ${MAX_SPARK_METRICS} series of ${MAX_SPARK_ENTITIES} entities).`));
  main.append(metrics);
  const charts = await sparklines(incident, alarms.values(), metrics);
  main.append(el('p', {}, el('a', { href: '#/alarms' }, 'Back to alarms and incidents')));
  setStatus(`Incident ${incident.id}: ${incident.root_causes.length} root causes, ${incident.alarm_count} alarms`);

  // Live: a change of this incident redraws the page.
  let pending: number | undefined;
  const stream = openStream('/api/v1/incidents/stream', (m) => {
    const c = m as IncidentChange;
    if (c.kind !== 'incident' || c.item.id !== incident.id || pending !== undefined) return;
    pending = window.setTimeout(() => {
      pending = undefined;
      if ('merged_into' in c.item) navigate(`#/incident/${encodeURIComponent(c.item.merged_into)}`);
      else navigate(location.hash);
    }, 500);
  }, () => undefined);
  return () => {
    for (const c of charts) c.dispose();
    stream.close();
    if (pending !== undefined) window.clearTimeout(pending);
  };
}
