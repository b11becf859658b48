// The layout the aggregator computes (GET /api/v1/topology/layout), and what the site view draws of it.
import { get, query } from './api';

export interface LayoutGroup {
  id: string;
  kind: 'su' | 'spine-group' | 'core';
  label: string;
  members: number;
  hosts: number;
  npus: number;
  states: Record<string, number>;
  worst_state: string;
  x: number;
  y: number;
  expanded: boolean;
  pod: number | null;
}
export interface LayoutNode {
  id: string;
  name: string;
  tier: 'host' | 'leaf' | 'spine' | 'core';
  group: string;
  state: string;
  x: number;
  y: number;
  npus?: number;
  rail: number | null;
}
export interface LayoutEdge {
  source: string;
  target: string;
  links: number;
  gbps: number;
  unhealthy: number;
}
export interface LayoutRail {
  id: string;
  rail: number;
  leaves: number;
  npu_links: Record<string, number>;
  worst_state: string;
}
export interface Layout {
  revision: number;
  name: string;
  hosts: number;
  npus: number;
  switches: number;
  links: number;
  groups: LayoutGroup[];
  nodes: LayoutNode[];
  edges: LayoutEdge[];
  rails: LayoutRail[];
  located: Record<string, string>;
}

export function fetchLayout(expand: string[], locate: string[]): Promise<Layout> {
  return get<Layout>(`/api/v1/topology/layout${query({ expand: expand.join(','), locate: locate.join(',') })}`);
}

// GET /api/v1/overlays/summary: each layout group's worst active alarm and the 95th percentile of its
// links' utilisation (aggregator/api/overlays/summary.h), what the grouped view names beside every group.
export interface GroupSummary {
  revision: number;
  at_ms: number;
  util_thresholds: { warn: number; bad: number; unit: string };
  groups: {
    id: string[];
    worst_alarm: (string | null)[];
    active_alarms: number[];
    util_p95: (number | null)[];
    util_grade: number[];
    util_links: number[];
  };
  truncated: boolean;
}
export interface GroupHealth {
  worst: string | null; // worst active alarm severity
  alarms: number;
  p95: number | null; // % of capacity
  grade: number; // -1 no data, 0 ok, 1 warning, 2 bad
}

export function fetchSummary(): Promise<GroupSummary> {
  return get<GroupSummary>('/api/v1/overlays/summary');
}

export function healthByGroup(s: GroupSummary | null): Map<string, GroupHealth> {
  const out = new Map<string, GroupHealth>();
  s?.groups.id.forEach((id, i) => out.set(id, {
    worst: s.groups.worst_alarm[i] ?? null,
    alarms: s.groups.active_alarms[i] ?? 0,
    p95: s.groups.util_p95[i] ?? null,
    grade: s.groups.util_grade[i] ?? -1,
  }));
  return out;
}

const UTIL_WORDS = ['ok', 'warning', 'bad'];
// A group's health in words: "alarms: major (2) · util p95 95 % (bad)".
export function healthWords(h: GroupHealth): { alarms: string; util: string } {
  return {
    alarms: h.worst ? `${h.worst} (${h.alarms})` : 'none',
    util: h.p95 === null ? 'no data' : `${h.p95} % (${UTIL_WORDS[h.grade] ?? 'no data'})`,
  };
}

export const STATE_COLOURS: Record<string, string> = {
  healthy: '#1a7f37',
  allocated: '#0b5cad',
  'sub-health': '#9a6700',
  isolated: '#b42318',
};
export const MARK_COLOUR = '#7a2bd1';

// One thing the site view draws: a collapsed group, a member of an expanded one, or a rail group (the
// leaves of one rail across the SUs: a row of its own below the hosts, always drawn).
export interface Drawn {
  id: string;
  label: string;
  x: number;
  y: number;
  size: number;
  colour: string;
  marked: boolean;
  kind: string; // group kind, node tier or 'rail'
  state: string;
  name: string; // group id or device name
}

export function drawnItems(layout: Layout, marked: Set<string>, markLabel = 'answer'): Drawn[] {
  const markedGroups = new Set(Object.values(layout.located));
  const out: Drawn[] = [];
  for (const g of layout.groups) {
    if (g.expanded) continue;
    const isMarked = markedGroups.has(g.id);
    const suffix = g.worst_state === 'healthy' ? '' : ` [${g.worst_state}]`;
    out.push({
      id: g.id,
      label: `${g.label} (${g.kind === 'su' ? `${g.hosts} hosts` : `${g.members} switches`})${suffix}${isMarked ? ` ★ ${markLabel}` : ''}`,
      x: g.x,
      y: g.y,
      size: g.kind === 'su' ? 14 : 11,
      colour: isMarked ? MARK_COLOUR : (STATE_COLOURS[g.worst_state] ?? '#4a5360'),
      marked: isMarked,
      kind: g.kind,
      state: g.worst_state,
      name: g.id,
    });
  }
  // The rails spread over the fabric's width (the layout places groups and nodes, not rails).
  const xs = [...layout.groups.map((g) => g.x), ...layout.nodes.map((n) => n.x)];
  const left = xs.length ? Math.min(...xs) : 0;
  const step = xs.length && layout.rails.length ? (Math.max(...xs) - left) / layout.rails.length : 1;
  layout.rails.forEach((r, i) => {
    const suffix = r.worst_state === 'healthy' ? '' : ` [${r.worst_state}]`;
    out.push({
      id: r.id,
      label: `rail ${r.rail} (${r.leaves} leaves)${suffix}`,
      x: left + (i + 0.5) * (step || 1),
      y: 4,
      size: 9,
      colour: STATE_COLOURS[r.worst_state] ?? '#4a5360',
      marked: false,
      kind: 'rail',
      state: r.worst_state,
      name: r.id,
    });
  });
  for (const n of layout.nodes) {
    const isMarked = marked.has(n.name);
    const suffix = n.state === 'healthy' ? '' : ` [${n.state}]`;
    out.push({
      id: n.id,
      label: `${n.name}${n.rail !== null && n.tier === 'leaf' ? ` rail ${n.rail}` : ''}${suffix}${isMarked ? ` ★ ${markLabel}` : ''}`,
      x: n.x,
      y: n.y,
      size: n.tier === 'host' ? 4 : 6,
      colour: isMarked ? MARK_COLOUR : (STATE_COLOURS[n.state] ?? '#4a5360'),
      marked: isMarked,
      kind: n.tier,
      state: n.state,
      name: n.name,
    });
  }
  return out;
}
