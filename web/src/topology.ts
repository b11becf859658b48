// The topology's devices and links for the matrix views, the overlays, the alarm filters and the switch
// pages, read from the compact route (GET /api/v1/topology/links: parallel arrays, port names and states
// as indices; a fraction of the JSON export's bytes) and turned into the export's node and link shape.
import { get, query } from './api';

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
  revision: number; // the topology revision read (what the topology stream names)
  nodes: TopoNode[];
  links: TopoLink[];
}

interface CompactTopology {
  revision: number;
  name: string;
  tiers: string[];
  states: string[];
  ports: string[];
  devices: { name: string[]; tier: number[]; state: number[]; su: number[]; pod: number[] };
  links: { lower: number[]; upper: number[]; lower_port: number[]; upper_port: number[]; gbps: number[]; state: number[]; npu: number[] };
  total_links: number;
}

// Every device, and the links whose upper device is of the `upper` tiers (all when empty). A host's NPUs
// are those of its links read (index and port; their state is the link's).
export async function fetchGraph(upper: ('leaf' | 'spine' | 'core')[] = []): Promise<TopoGraph> {
  const c = await get<CompactTopology>(`/api/v1/topology/links${query({ upper: upper.join(',') })}`);
  const d = c.devices;
  const nodes: TopoNode[] = d.name.map((name, id) => {
    const n: TopoNode = { id, name, tier: (c.tiers[d.tier[id] ?? 0] ?? 'host') as TopoNode['tier'], state: c.states[d.state[id] ?? 0] ?? 'healthy' };
    const su = d.su[id] ?? -1;
    const pod = d.pod[id] ?? -1;
    if (su >= 0) n.scalable_unit = su;
    if (pod >= 0) n.superpod = pod;
    if (n.tier === 'host') n.npus = [];
    return n;
  });
  const l = c.links;
  const links: TopoLink[] = l.lower.map((source, id) => {
    const target = l.upper[id] ?? 0;
    const link: TopoLink = { id, source, target, source_port: c.ports[l.lower_port[id] ?? 0] ?? '', target_port: c.ports[l.upper_port[id] ?? 0] ?? '',
      tier: nodes[target]?.tier ?? '', bandwidth_gbps: l.gbps[id] ?? 0, state: c.states[l.state[id] ?? 0] ?? 'healthy' };
    const npu = l.npu[id] ?? -1;
    if (npu >= 0) {
      link.npu = npu;
      nodes[source]?.npus?.push({ index: npu, port: link.source_port, state: link.state, link: id });
    }
    return link;
  });
  return { name: c.name, revision: c.revision, nodes, links };
}

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
  // The aggregator places every device (hosts, leaves, spines); the links place what it left out.
  for (const n of graph.nodes) {
    if (n.scalable_unit !== undefined && n.tier !== 'spine') d.su.set(n.name, n.scalable_unit);
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
