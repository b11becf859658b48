// Overlays: what colours the matrices and the site view. The metric overlays are graded by the aggregator
// (GET /api/v1/overlays/{id}/grades, optionally at a past time: the time slider; live: its stream,
// overlay_live.ts): per link, in the order of the compact topology read with the same `upper`, a grade and
// a value in the overlay's unit, per device and layout group the worst grade; the dashboard only paints
// and words them. The alarm overlay grades by the worst severity of the active alarms of the link's ports
// and devices; the state overlay by the topology's link state. Every grade has a word (tooltips, tables),
// so colour is never the only carrier. The overlays' labels, thresholds, notes and readings are the
// aggregator's (GET /api/v1/overlays, its configuration's `overlays:`), read once by loadOverlays() before
// the first grade.
import { get, query } from './api';
import type { Alarm } from './brain';
import { severityLevel } from './brain';
import type { TopoGraph, TopoLink, TopoNode } from './topology';
import { STATE_LEVEL, fetchGraph } from './topology';

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
  reading?: string; // metric overlays: the words after a value ("pause frames/s")
}

export interface OverlayDef {
  id: string;
  label: string;
  kind: 'state' | 'alarms' | 'metric';
  unit: string;
  // A value in words (a metric overlay's value is in its unit; a link's capacity for utilisation).
  format: (value: number, gbps: number) => string;
  describe: string;
}

const rate = (v: number): string => (v >= 100 ? v.toFixed(0) : v >= 1 ? v.toFixed(1) : v.toPrecision(2));

// A metric overlay's value in words: rates as rates, the rest with one decimal, then the reading.
function metricFormat(c: OverlayConfig): OverlayDef['format'] {
  if (c.unit === '%') return (v, gbps) => `${v.toFixed(1)} % of ${gbps} Gb/s`;
  return (v) => `${c.unit === '/s' ? rate(v) : v.toFixed(1)} ${c.reading ?? c.unit}`;
}

// The overlays the dashboard offers, in the aggregator's order, once loadOverlays() has run.
export const OVERLAYS: OverlayDef[] = [];
let loading: Promise<void> | null = null;

// Reads GET /api/v1/overlays once (the page router awaits it before a page grades anything); an overlay
// of a kind this dashboard does not know is left out.
export function loadOverlays(): Promise<void> {
  loading ??= get<{ items: OverlayConfig[] }>('/api/v1/overlays').then((answer) => {
    OVERLAYS.length = 0;
    for (const c of answer.items) {
      const format: OverlayDef['format'] | null = c.kind === 'metric' ? metricFormat(c)
        : c.kind === 'state' ? (v) => STATE_PIECES[v]?.label ?? '' : c.kind === 'alarms' ? (v) => ALARM_PIECES[v]?.label ?? '' : null;
      if (!format) continue;
      OVERLAYS.push({ id: c.id, label: c.label, kind: c.kind, unit: c.unit, describe: c.describe, format });
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

// What GET /api/v1/overlays/{id}/grades answers (and the stream's "grades" message): index-aligned with
// the compact topology read with the same `upper` at `revision`.
export interface GradeSet {
  revision: number;
  links: { grade: number[]; value: (number | null)[] };
  devices: { grade: number[] };
  groups: { id: string[]; grade: number[] };
  truncated: boolean;
}

export interface OverlayData {
  overlay: OverlayDef;
  at: number | null;
  upper: ('leaf' | 'spine' | 'core')[]; // the links graded (as fetchGraph's)
  grades: GradeSet | null; // metric overlays
  alarms: Map<string, number>; // entity or device -> worst alarm level (alarm overlay)
  alarmList: Alarm[]; // the alarms read (alarm overlay): what alarm_live.ts follows from
  truncated: boolean;
}

// Reads what an overlay needs: a metric overlay's grades (at `at`, Unix ms, when given) of the links read
// with `upper`, or the active alarms.
export async function fetchOverlay(overlay: OverlayDef, at: number | null, upper: ('leaf' | 'spine' | 'core')[] = [],
  maxAgeS = 900): Promise<OverlayData> {
  const data: OverlayData = { overlay, at, upper, grades: null, alarms: new Map(), alarmList: [], truncated: false };
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
  data.grades = await get<GradeSet>(`/api/v1/overlays/${encodeURIComponent(overlay.id)}/grades${query({
    upper: upper.length ? upper.join(',') : undefined, at: at ?? undefined, max_age_s: maxAgeS })}`);
  data.truncated = data.grades.truncated;
  return data;
}

// The topology and an overlay's grades of the same revision (a write between the two reads is read again).
export async function fetchGraded(overlay: OverlayDef, at: number | null, upper: ('leaf' | 'spine' | 'core')[] = []):
  Promise<{ graph: TopoGraph; data: OverlayData }> {
  for (let attempt = 0; ; ++attempt) {
    const [graph, data] = await Promise.all([fetchGraph(upper), fetchOverlay(overlay, at, upper)]);
    if (!data.grades || data.grades.revision === graph.revision || attempt >= 2) return { graph, data };
  }
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
  const level = data.grades?.links.grade[link.id] ?? -1;
  const v = data.grades?.links.value[link.id];
  if (level < 0 || v === null || v === undefined) return { level: -1, text: 'no data' };
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
