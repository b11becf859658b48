// Overlays: what colours the matrices and the site view. Each metric overlay reads the newest value per
// entity of its metrics from the KPI store (GET /api/v1/kpis/latest, optionally at a past time: the time
// slider), folds them per entity, and grades each link (its two port entities) and each device (its port
// entities) against the overlay's thresholds. The alarm overlay grades by the worst severity of the
// active alarms of the link's ports and devices; the state overlay by the topology's link state. Every
// grade has a word (tooltips, tables), so colour is never the only carrier. The overlays' labels,
// thresholds and notes are the aggregator's (GET /api/v1/overlays, its configuration's `overlays:`),
// read once by loadOverlays() before the first grade.
import { get, query } from './api';
import type { Alarm } from './brain';
import { severityLevel } from './brain';
import type { TopoGraph, TopoLink, TopoNode } from './topology';
import { STATE_LEVEL } from './topology';

export interface Piece {
  value: number;
  label: string;
  color: string;
}

// Metric overlays: -1 no data, 0 ok, 1 warning, 2 bad.
const METRIC_PIECES: Piece[] = [
  { value: -1, label: 'no data', color: '#d0d7de' },
  { value: 0, label: 'ok', color: '#1a7f37' },
  { value: 1, label: 'warning', color: '#9a6700' },
  { value: 2, label: 'bad', color: '#b42318' },
];
const STATE_PIECES: Piece[] = [
  { value: 0, label: 'healthy', color: '#1a7f37' },
  { value: 1, label: 'allocated', color: '#0b5cad' },
  { value: 2, label: 'sub-health', color: '#9a6700' },
  { value: 3, label: 'isolated', color: '#b42318' },
];
// Alarm overlay: 0 no active alarm, then 1 + the severity index (info .. critical).
const ALARM_PIECES: Piece[] = [
  { value: 0, label: 'no active alarm', color: '#1a7f37' },
  { value: 1, label: 'info', color: '#0b5cad' },
  { value: 2, label: 'warning', color: '#6639ba' },
  { value: 3, label: 'minor', color: '#9a6700' },
  { value: 4, label: 'major', color: '#bc4c00' },
  { value: 5, label: 'critical', color: '#b42318' },
];

// What GET /api/v1/overlays answers per overlay: the thresholds the aggregator's configuration set
// (docs/configuration.md, `overlays:`), in the overlay's unit, and the note that states them.
export interface OverlayThresholds {
  warn?: number;
  bad?: number;
  warn_low?: number;
  bad_low?: number;
  warn_high?: number;
  bad_high?: number;
}
export interface OverlayConfig {
  id: string;
  label: string;
  kind: 'state' | 'alarms' | 'metric';
  unit: string;
  grading: 'state' | 'severity' | 'at_least' | 'above' | 'outside';
  thresholds: OverlayThresholds | null;
  describe: string;
}

export interface OverlayDef {
  id: string;
  label: string;
  kind: 'state' | 'alarms' | 'metric';
  metrics: string[];
  // How an entity's metrics fold into one number, and how a link's two ends fold (worse end wins).
  fold: 'sum' | 'max' | 'min-dbm';
  unit: string;
  // The grade of a value (a link's capacity for utilisation), against the configured thresholds.
  grade: (value: number, gbps: number) => number;
  format: (value: number, gbps: number) => string;
  describe: string;
}

const rate = (v: number): string => (v >= 100 ? v.toFixed(0) : v >= 1 ? v.toFixed(1) : v.toPrecision(2));
const lanes = (name: string): string[] => [0, 1, 2, 3, 4, 5, 6, 7].map((n) => `lane${n}_${name}`);
const priorities = (dir: string): string[] => [0, 1, 2, 3, 4, 5, 6, 7].map((n) => `pfc_prio${n}_${dir}_pause_per_s`);
const utilisation = (v: number, gbps: number): number => (gbps > 0 ? (v * 8) / (gbps * 1e9) : 0);

// What the dashboard itself knows of each overlay: the metrics it reads, how it folds them, how it words a
// value, and the value in the unit of the overlay's thresholds (utilisation: % of the link capacity,
// flaps: per hour). Label, thresholds and note come from the aggregator (loadOverlays).
interface Local {
  id: string;
  metrics: string[];
  fold: OverlayDef['fold'];
  graded: (value: number, gbps: number) => number;
  format: OverlayDef['format'];
}
const same = (v: number): number => v;
const LOCAL: Local[] = [
  { id: 'state', metrics: [], fold: 'max', graded: same, format: (v) => STATE_PIECES[v]?.label ?? '' },
  { id: 'alarms', metrics: [], fold: 'max', graded: same, format: (v) => ALARM_PIECES[v]?.label ?? '' },
  { id: 'util', metrics: ['rx_bytes_per_s', 'tx_bytes_per_s', 'if_in_octets_per_s', 'if_out_octets_per_s'], fold: 'max',
    graded: (v, gbps) => utilisation(v, gbps) * 100, format: (v, gbps) => `${(utilisation(v, gbps) * 100).toFixed(1)} % of ${gbps} Gb/s` },
  { id: 'pfc', metrics: [...priorities('rx'), ...priorities('tx')], fold: 'sum', graded: same, format: (v) => `${rate(v)} pause frames/s` },
  { id: 'ecn', metrics: ['np_ecn_marked_roce_packets_per_s', 'np_cnp_sent_per_s', 'rp_cnp_handled_per_s'], fold: 'sum', graded: same,
    format: (v) => `${rate(v)} ECN-marked packets + CNPs/s` },
  { id: 'drops', metrics: ['rx_errors_per_s', 'tx_errors_per_s', 'rx_dropped_per_s', 'tx_dropped_per_s', 'port_rcv_errors_per_s',
    'port_xmit_discards_per_s', 'if_in_errors_per_s', 'if_out_errors_per_s', 'if_in_discards_per_s', 'if_out_discards_per_s'],
  fold: 'sum', graded: same, format: (v) => `${rate(v)} drops + errors/s` },
  { id: 'fec', metrics: ['symbol_error_per_s', 'fec_uncorrectable_per_s'], fold: 'sum', graded: same,
    format: (v) => `${rate(v)} symbol errors + uncorrectable FEC blocks/s` },
  { id: 'optics', metrics: [...lanes('rx_power_watts'), 'rx_power_dbm'], fold: 'min-dbm', graded: same, format: (v) => `${v.toFixed(1)} dBm (weakest lane)` },
  { id: 'flaps', metrics: ['link_downed_per_s', 'link_error_recovery_per_s'], fold: 'sum', graded: (v) => v * 3600,
    format: (v) => `${(v * 3600).toFixed(1)} link downs + recoveries/h` },
];

// A metric overlay's grade (0 ok, 1 warning, 2 bad) of a value in its thresholds' unit.
export function gradeBy(c: OverlayConfig, v: number): number {
  const t = c.thresholds ?? {};
  const num = (x: number | undefined): number => x ?? NaN; // a missing threshold never matches
  switch (c.grading) {
    case 'at_least':
      return v >= num(t.bad) ? 2 : v >= num(t.warn) ? 1 : 0;
    case 'above':
      return v > num(t.bad) ? 2 : v > num(t.warn) ? 1 : 0;
    case 'outside':
      return v < num(t.bad_low) || v > num(t.bad_high) ? 2 : v < num(t.warn_low) || v > num(t.warn_high) ? 1 : 0;
    default:
      return v;
  }
}

// The overlays the dashboard offers, in the aggregator's order, once loadOverlays() has run.
export const OVERLAYS: OverlayDef[] = [];
let loading: Promise<void> | null = null;

// Reads GET /api/v1/overlays once (the page router awaits it before a page grades anything); an overlay
// the aggregator lists but this dashboard does not know is left out, and so is one it does not list.
export function loadOverlays(): Promise<void> {
  loading ??= get<{ items: OverlayConfig[] }>('/api/v1/overlays').then((answer) => {
    OVERLAYS.length = 0;
    for (const c of answer.items) {
      const l = LOCAL.find((x) => x.id === c.id);
      if (!l) continue;
      OVERLAYS.push({ id: c.id, label: c.label, kind: c.kind, metrics: l.metrics, fold: l.fold, unit: c.unit, describe: c.describe,
        format: l.format, grade: c.kind === 'metric' ? (v, gbps) => gradeBy(c, l.graded(v, gbps)) : (v) => v });
    }
  }).catch((e: unknown) => {
    loading = null; // a later page load tries again
    throw e;
  });
  return loading;
}

export const overlayOf = (id: string | null): OverlayDef => {
  const found = OVERLAYS.find((o) => o.id === id) ?? OVERLAYS[0];
  if (!found) throw new Error('the overlays are not loaded (GET /api/v1/overlays)');
  return found;
};
export const piecesOf = (o: OverlayDef): Piece[] => (o.kind === 'state' ? STATE_PIECES : o.kind === 'alarms' ? ALARM_PIECES : METRIC_PIECES);
export const levelWord = (o: OverlayDef, level: number): string => piecesOf(o).find((p) => p.value === level)?.label ?? String(level);
export const worstLevel = (o: OverlayDef): number => Math.max(...piecesOf(o).map((p) => p.value));
// The level a cell/item without anything to show has.
export const emptyLevel = (o: OverlayDef): number => (o.kind === 'metric' ? -1 : 0);

interface Latest {
  metric: string;
  at_ms: number | null;
  entities: string[];
  ts_ms: number[];
  values: number[];
  truncated: boolean;
}

export interface OverlayData {
  overlay: OverlayDef;
  at: number | null;
  values: Map<string, number>; // entity -> folded value (metric overlays)
  alarms: Map<string, number>; // entity or device -> worst alarm level (alarm overlay)
  alarmList: Alarm[]; // the alarms read (alarm overlay): what alarm_live.ts follows from
  truncated: boolean;
}

const dbm = (metric: string, v: number): number => (metric.endsWith('_watts') ? (v > 0 ? 10 * Math.log10(v * 1000) : -40) : v);

// Reads what an overlay needs: the newest values (at `at`, Unix ms, when given), or the active alarms.
export async function fetchOverlay(overlay: OverlayDef, at: number | null, maxAgeS = 900): Promise<OverlayData> {
  const data: OverlayData = { overlay, at, values: new Map(), alarms: new Map(), alarmList: [], truncated: false };
  if (overlay.kind === 'alarms') {
    // Active now: raised or acknowledged; at a past time: first seen by then and not cleared by then. Never
    // the silenced ones (suppressed alarms are the alarm view's business). The newest 1,000 alarms.
    const list = await get<{ items: Alarm[] }>(`/api/v1/alarms${query({ limit: 1000 })}`);
    data.alarmList = list.items;
    for (const a of list.items) {
      if (a.suppressed) continue;
      if (at === null ? a.state === 'cleared' : a.first_seen_ms > at || (a.cleared_at !== null && Date.parse(a.cleared_at) <= at)) continue;
      const level = 1 + severityLevel(a.severity);
      for (const key of [a.entity, a.peer].filter(Boolean)) data.alarms.set(key, Math.max(data.alarms.get(key) ?? 0, level));
    }
    return data;
  }
  if (overlay.kind !== 'metric') return data;
  const answers = await Promise.all(overlay.metrics.map((metric) =>
    get<Latest>(`/api/v1/kpis/latest${query({ metric, at: at ?? undefined, max_age_s: maxAgeS })}`)));
  for (const a of answers) {
    data.truncated ||= a.truncated;
    a.entities.forEach((entity, i) => {
      const raw = a.values[i] ?? 0;
      const prev = data.values.get(entity);
      if (overlay.fold === 'min-dbm') {
        const v = dbm(a.metric, raw);
        data.values.set(entity, prev === undefined ? v : Math.min(prev, v));
      } else if (overlay.fold === 'sum') {
        data.values.set(entity, (prev ?? 0) + raw);
      } else {
        data.values.set(entity, prev === undefined ? raw : Math.max(prev, raw));
      }
    });
  }
  return data;
}

export interface Graded {
  level: number;
  text: string;
}

// A link's grade: the worse of its two ends (for optics the weaker receive power).
export function gradeLink(data: OverlayData, link: TopoLink, lower: TopoNode, upper: TopoNode): Graded {
  const o = data.overlay;
  if (o.kind === 'state') {
    // The link's own state, or a worse state of a device at either end (a link to an isolated host or
    // switch carries nothing either), said with the device that has it.
    let level = STATE_LEVEL[link.state] ?? 0;
    let text = link.state;
    for (const n of [lower, upper]) {
      const l = STATE_LEVEL[n.state] ?? 0;
      if (l > level) {
        level = l;
        text = `${n.state} (${n.tier} ${n.name})`;
      }
    }
    return { level, text };
  }
  const ends = [`${lower.name}/${link.source_port}`, `${upper.name}/${link.target_port}`];
  if (o.kind === 'alarms') {
    const level = Math.max(0, ...[...ends, lower.name, upper.name].map((k) => data.alarms.get(k) ?? 0));
    return { level, text: levelWord(o, level) };
  }
  const values = ends.map((e) => data.values.get(e)).filter((v): v is number => v !== undefined);
  if (!values.length) return { level: -1, text: 'no data' };
  const v = o.fold === 'min-dbm' ? Math.min(...values) : Math.max(...values);
  const level = o.grade(v, link.bandwidth_gbps);
  return { level, text: `${levelWord(o, level)}: ${o.format(v, link.bandwidth_gbps)}` };
}

// Each link graded, in the export's order, with its ends.
export interface GradedLink extends Graded {
  link: TopoLink;
  lower: TopoNode;
  upper: TopoNode;
}

export function gradeLinks(data: OverlayData, graph: TopoGraph): GradedLink[] {
  const byId = new Map(graph.nodes.map((n) => [n.id, n]));
  const out: GradedLink[] = [];
  for (const link of graph.links) {
    const lower = byId.get(link.source);
    const upper = byId.get(link.target);
    if (!lower || !upper) continue;
    out.push({ ...gradeLink(data, link, lower, upper), link, lower, upper });
  }
  return out;
}

// Each device's worst link grade (a device without graded links is left out).
export function deviceLevels(graded: GradedLink[]): Map<string, number> {
  const out = new Map<string, number>();
  for (const g of graded) {
    for (const n of [g.lower.name, g.upper.name]) out.set(n, Math.max(out.get(n) ?? -1, g.level));
  }
  return out;
}

// The time slider's choices: now, then back in steps over the last hours.
export const SLIDER_STEP_MIN = 10;
export const SLIDER_HOURS = 6;
export function atOfStep(step: number, now = Date.now()): number | null {
  return step <= 0 ? null : now - step * SLIDER_STEP_MIN * 60_000;
}
export function describeAt(at: number | null): string {
  return at === null ? 'now' : `${new Date(at).toISOString().replace('T', ' ').slice(0, 16)} UTC`;
}
