// The link-state overlay kept current from the topology stream (GET /api/v1/topology/stream), for the
// matrices: a message naming a revision newer than the one drawn makes the page read the compact links
// again (the same `upper` filter; one read at a time, the newest revision wins), and only the links whose
// state changed are graded again and handed to `onDelta`, as alarm_live.ts hands its deltas: nothing else is
// redrawn. When the topology's structure changed (other devices or links: an import, a generate, an LLDP
// merge that added a link), `onStructure` is called instead and the page builds its view again.
// followRevisions is the stream part alone: the site view re-reads its layout with it.
import { openStream } from './live';
import { gradeLink, type GradedLink, type OverlayData } from './overlay';
import { fetchGraph, type TopoGraph, type TopoNode } from './topology';

export interface StateChanges {
  links: number[]; // indices into graph.links whose state differs
  devices: number[]; // indices into graph.nodes whose state differs
}

// The states that differ between two readings of the same links, or null when the readings do not have the
// same devices and links (names, tiers, ends and ports): then there is nothing to patch, only to rebuild.
export function stateChanges(graph: TopoGraph, next: TopoGraph): StateChanges | null {
  if (graph.nodes.length !== next.nodes.length || graph.links.length !== next.links.length) return null;
  const out: StateChanges = { links: [], devices: [] };
  for (let i = 0; i < graph.nodes.length; ++i) {
    const a = graph.nodes[i]!;
    const b = next.nodes[i]!;
    if (a.name !== b.name || a.tier !== b.tier) return null;
    if (a.state !== b.state) out.devices.push(i);
  }
  for (let i = 0; i < graph.links.length; ++i) {
    const a = graph.links[i]!;
    const b = next.links[i]!;
    if (a.source !== b.source || a.target !== b.target || a.source_port !== b.source_port || a.target_port !== b.target_port) return null;
    if (a.state !== b.state) out.links.push(i);
  }
  return out;
}

export interface StateDelta {
  links: Set<number>; // indices into the graded links whose grade changed
  changes: number; // device and link states changed by this reading
}

// Follows the topology stream for a view drawn at revision `drawn`: calls `reread` whenever a message names a
// newer revision (one call at a time; a revision named meanwhile is read after it, and a failed read is
// tried again at the next message). `reread` answers the revision it drew, or null when the page builds
// its view again (the stream is then closed). Answers the close function.
export function followRevisions(drawn: number, reread: () => Promise<number | null>,
  onState: (open: boolean) => void = () => undefined): () => void {
  let wanted = drawn;
  let reading = false;
  let closed = false;
  const read = async (): Promise<void> => {
    if (reading || closed || wanted <= drawn) return;
    reading = true;
    try {
      const now = await reread();
      if (now === null) {
        closed = true;
        stream.close();
        return;
      }
      drawn = Math.max(drawn, now);
    } finally {
      reading = false;
    }
    await read();
  };
  const stream = openStream('/api/v1/topology/stream', (m) => {
    const c = m as { kind?: string; revision?: number };
    if (c.kind !== 'topology' || typeof c.revision !== 'number') return;
    wanted = Math.max(wanted, c.revision);
    void read().catch(() => undefined);
  }, (open) => onState(open));
  return () => {
    closed = true;
    stream.close();
  };
}

// Follows the stream for a view drawn from `graph` (read with `upper`): keeps the graph's states and the
// graded links current. Answers the close function.
export function followTopologyStates(graph: TopoGraph, upper: ('leaf' | 'spine' | 'core')[], data: OverlayData,
  graded: GradedLink[], onDelta: (d: StateDelta) => void, onStructure: () => void,
  onState: (open: boolean) => void = () => undefined): () => void {
  const gradedOf = new Map(graded.map((g, i) => [g.link, i]));
  // The graded links at each device (a device's state counts in its links' grade).
  const atDevice = new Map<TopoNode, number[]>();
  graded.forEach((g, i) => {
    for (const n of [g.lower, g.upper]) {
      const list = atDevice.get(n);
      if (list) list.push(i);
      else atDevice.set(n, [i]);
    }
  });
  return followRevisions(graph.revision, async () => {
    const next = await fetchGraph(upper);
    if (next.revision <= graph.revision) return graph.revision;
    const changed = stateChanges(graph, next);
    if (!changed) {
      onStructure();
      return null;
    }
    const touched = new Set<number>();
    for (const i of changed.devices) {
      const node = graph.nodes[i]!;
      node.state = next.nodes[i]!.state;
      for (const at of atDevice.get(node) ?? []) touched.add(at);
    }
    for (const i of changed.links) {
      const link = graph.links[i]!;
      link.state = next.links[i]!.state;
      const at = gradedOf.get(link);
      if (at !== undefined) touched.add(at);
    }
    const links = new Set<number>();
    for (const at of touched) {
      const g = graded[at]!;
      const regraded = gradeLink(data, g.link, g.lower, g.upper);
      if (regraded.level !== g.level || regraded.text !== g.text) {
        g.level = regraded.level;
        g.text = regraded.text;
        links.add(at);
      }
    }
    graph.revision = next.revision;
    onDelta({ links, changes: changed.links.length + changed.devices.length });
    return next.revision;
  }, onState);
}
