// Draws the site view's items: sigma.js (WebGL) when a WebGL context can be made, else ECharts' graph
// series on a Canvas 2D (the fallback; sigma has no canvas-only mode). Neither path draws by hand.
import Graph from 'graphology';
import Sigma from 'sigma';
import type { Drawn } from './layout';
import type { LayoutEdge } from './layout';
import { makeChart } from './charts';

export type Renderer = 'webgl' | 'canvas';

export function webglAvailable(): boolean {
  try {
    const c = document.createElement('canvas');
    return !!(c.getContext('webgl2') ?? c.getContext('webgl'));
  } catch {
    return false;
  }
}

export interface GraphView {
  renderer: Renderer;
  // Redraws the given items (their colour and label changed in place; positions never change).
  update(changed: Drawn[]): void;
  // Draws another set of items and edges in the same renderer (a group expanded or collapsed in place):
  // items kept by id are moved and repainted, the others added or dropped, the edges drawn again.
  replace(items: Drawn[], edges: LayoutEdge[]): void;
  kill(): void;
}

const EDGE_COLOUR = '#8c959f';
const EDGE_UNHEALTHY = '#b42318';

export function drawGraph(
  container: HTMLElement,
  first: Drawn[],
  firstEdges: LayoutEdge[],
  wanted: Renderer,
  onPick: (item: Drawn) => void,
): GraphView {
  // What is drawn now; replace() swaps it (the pick handlers and label formatters read these).
  let items = first;
  let byId = new Map<string, Drawn>();
  let drawnEdges: LayoutEdge[] = [];
  let maxLinks = 1;
  const show = (next: Drawn[], edges: LayoutEdge[]): void => {
    items = next;
    byId = new Map(next.map((i) => [i.id, i]));
    drawnEdges = edges.filter((e) => byId.has(e.source) && byId.has(e.target));
    maxLinks = Math.max(1, ...drawnEdges.map((e) => e.links));
  };
  show(first, firstEdges);
  const width = (e: LayoutEdge): number => 0.5 + (3 * e.links) / maxLinks;
  const edgeColour = (e: LayoutEdge): string => (e.unhealthy > 0 ? EDGE_UNHEALTHY : EDGE_COLOUR);
  if (wanted === 'webgl' && webglAvailable()) {
    const graph = new Graph({ multi: true, type: 'undirected' });
    // sigma's y grows upwards; the layout's tier y grows downwards (core at the top).
    const attributes = (i: Drawn): Record<string, unknown> => ({
      x: i.x, y: -i.y * 3, size: i.size, color: i.colour, label: i.label, forceLabel: !i.kind.match(/^(host|leaf|spine|core)$/) || i.marked });
    const addEdges = (): void => {
      for (const e of drawnEdges) graph.addEdge(e.source, e.target, { size: width(e), color: edgeColour(e) });
    };
    for (const i of items) graph.addNode(i.id, attributes(i));
    addEdges();
    const sigma = new Sigma(graph, container, { labelRenderedSizeThreshold: 6, renderEdgeLabels: false, zIndex: true });
    sigma.on('clickNode', ({ node }) => {
      const item = byId.get(node);
      if (item) onPick(item);
    });
    container.dataset['renderer'] = 'webgl';
    return {
      renderer: 'webgl',
      // graphology emits the attribute changes; sigma redraws on its next frame.
      update: (changed) => { for (const i of changed) graph.mergeNodeAttributes(i.id, { color: i.colour, label: i.label }); },
      replace: (next, edges) => {
        show(next, edges);
        graph.clearEdges();
        for (const node of graph.nodes()) if (!byId.has(node)) graph.dropNode(node);
        for (const i of items) {
          if (graph.hasNode(i.id)) graph.replaceNodeAttributes(i.id, attributes(i));
          else graph.addNode(i.id, attributes(i));
        }
        addEdges();
      },
      kill: () => sigma.kill(),
    };
  }
  const nodeData = (): object[] => items.map((i) => ({ name: i.id, x: i.x * 40, y: i.y * 120, symbolSize: i.size * 1.6, itemStyle: { color: i.colour } }));
  const linkData = (): object[] => drawnEdges.map((e) => ({ source: e.source, target: e.target, lineStyle: { width: width(e), color: edgeColour(e) } }));
  const describe = (): string => `Fabric graph: ${items.length} items, ${drawnEdges.length} link groups (Canvas 2D)`;
  const chart = makeChart(
    container,
    {
      tooltip: { formatter: (p: { dataType?: string; name?: string }) => (p.dataType === 'node' ? (byId.get(p.name ?? '')?.label ?? '') : '') },
      series: [
        {
          type: 'graph',
          layout: 'none',
          roam: true,
          label: { show: true, position: 'right', fontSize: 11, formatter: (p: { name: string }) => {
            const i = byId.get(p.name);
            return i && (i.marked || !/^(host)$/.test(i.kind)) ? i.label : '';
          } },
          data: nodeData(),
          links: linkData(),
        },
      ],
    },
    describe(),
  );
  chart.on('click', (p) => {
    const params = p as { dataType?: string; name?: string };
    if (params.dataType !== 'node') return;
    const item = byId.get(params.name ?? '');
    if (item) onPick(item);
  });
  container.dataset['renderer'] = 'canvas';
  return {
    renderer: 'canvas',
    // The series' data again (ECharts diffs it by name); labels and tooltips read the items themselves.
    update: () => chart.setOption({ series: [{ data: nodeData() }] }),
    replace: (next, edges) => {
      show(next, edges);
      chart.setOption({ series: [{ data: nodeData(), links: linkData() }] });
      container.setAttribute('aria-label', describe());
    },
    kill: () => chart.dispose(),
  };
}
