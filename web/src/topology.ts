// The topology's JSON export (GET /api/v1/topology/export?format=json): every node and link, for the
// matrix views and the switch pages.
import { get } from './api';

export interface TopoNode {
  id: number;
  name: string;
  tier: 'host' | 'leaf' | 'spine' | 'core';
  state: string;
  npus?: { index: number; port: string; state: string; link: number | null }[];
  scalable_unit?: number;
  superpod?: number;
}
export interface TopoLink {
  id: number;
  source: number;
  target: number;
  source_port: string;
  target_port: string;
  tier: string;
  bandwidth_gbps: number;
  state: string;
  npu?: number;
}
export interface TopoGraph {
  name: string;
  nodes: TopoNode[];
  links: TopoLink[];
}

export const fetchGraph = (): Promise<TopoGraph> => get<TopoGraph>('/api/v1/topology/export?format=json');

export const STATE_LEVEL: Record<string, number> = { healthy: 0, allocated: 1, 'sub-health': 2, isolated: 3 };
export const LEVEL_STATE = ['healthy', 'allocated', 'sub-health', 'isolated'];

// Each device's SU and super-pod, and each NPU-facing port's rail: hosts carry their SU and super-pod in
// the export; a leaf takes its hosts', a spine its leaves' super-pod; a rail is the NPU index of a host
// port and of the leaf port cabled to it ("<device>/<port>" keys).
export interface Domains {
  su: Map<string, number>;
  pod: Map<string, number>;
  rail: Map<string, number>;
}

export function domainsOf(graph: TopoGraph): Domains {
  const d: Domains = { su: new Map(), pod: new Map(), rail: new Map() };
  const byId = new Map(graph.nodes.map((n) => [n.id, n]));
  for (const n of graph.nodes) {
    if (n.tier !== 'host') continue;
    if (n.scalable_unit !== undefined) d.su.set(n.name, n.scalable_unit);
    if (n.superpod !== undefined) d.pod.set(n.name, n.superpod);
    for (const p of n.npus ?? []) d.rail.set(`${n.name}/${p.port}`, p.index);
  }
  for (const tier of ['leaf', 'spine', 'core'] as const) {
    for (const l of graph.links) {
      const lower = byId.get(l.source);
      const upper = byId.get(l.target);
      if (!lower || !upper || upper.tier !== tier) continue;
      const su = d.su.get(lower.name);
      const pod = d.pod.get(lower.name);
      if (tier === 'leaf' && su !== undefined && !d.su.has(upper.name)) d.su.set(upper.name, su);
      if (tier !== 'core' && pod !== undefined && !d.pod.has(upper.name)) d.pod.set(upper.name, pod);
      if (lower.tier === 'host') {
        const rail = l.npu ?? d.rail.get(`${lower.name}/${l.source_port}`);
        if (rail !== undefined) d.rail.set(`${upper.name}/${l.target_port}`, rail);
      }
    }
  }
  return d;
}
