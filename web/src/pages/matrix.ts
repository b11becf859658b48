// Leaf × spine matrix: every leaf-to-spine uplink of the fabric on one screen, as an ECharts heatmap. A
// cell is the links between one leaf and one spine: its value the worst link state (0 healthy .. 3
// isolated; blank = no link), with the link count and state in the tooltip and in the table below, so
// colour is never the only carrier. URL state: none (the whole fabric).
import type { PageContext, Cleanup } from '../main';
import { ApiError } from '../api';
import { el, setStatus, table, stateBadge } from '../dom';
import { fetchGraph, LEVEL_STATE, STATE_LEVEL } from '../topology';
import { makeChart, resizeAll } from '../charts';

export async function renderMatrix(ctx: PageContext): Promise<Cleanup | void> {
  const { main } = ctx;
  main.append(el('h1', {}, 'Leaf × spine uplinks'));
  let graph;
  try {
    graph = await fetchGraph();
  } catch (e) {
    if (e instanceof ApiError && e.status === 404) {
      main.append(el('p', {}, 'There is no topology yet.'));
      return;
    }
    throw e;
  }
  const leaves = graph.nodes.filter((n) => n.tier === 'leaf');
  const spines = graph.nodes.filter((n) => n.tier === 'spine');
  const leafIndex = new Map(leaves.map((n, i) => [n.id, i]));
  const spineIndex = new Map(spines.map((n, i) => [n.id, i]));
  const cells = new Map<string, { links: number; level: number }>();
  for (const l of graph.links) {
    const li = leafIndex.get(l.source);
    const si = spineIndex.get(l.target);
    if (li === undefined || si === undefined) continue;
    const key = `${li},${si}`;
    const c = cells.get(key) ?? { links: 0, level: 0 };
    c.links += 1;
    c.level = Math.max(c.level, STATE_LEVEL[l.state] ?? 0);
    cells.set(key, c);
  }
  if (cells.size === 0) {
    main.append(el('p', {}, 'This topology has no leaf-to-spine links (a single SU without spines).'));
    return;
  }
  const data = [...cells.entries()].map(([k, c]) => {
    const [x, y] = k.split(',').map(Number);
    return [y, x, c.level, c.links];
  });
  main.append(el('p', { class: 'note' }, `${leaves.length} leaves × ${spines.length} spines, ${cells.size} leaf–spine pairs with links. Cell colour: the worst link state of the pair; hover for the count.`));
  const container = el('div', { class: 'chart tall', id: 'matrix-chart' });
  main.append(container);
  const unhealthy = [...cells.entries()].filter(([, c]) => c.level > 0);
  main.append(
    table('Leaf–spine pairs with a link not healthy', ['leaf', 'spine', 'links', 'worst state'],
      unhealthy.map(([k, c]) => {
        const [li, si] = k.split(',').map(Number);
        return [leaves[li ?? 0]?.name, spines[si ?? 0]?.name, c.links, stateBadge(LEVEL_STATE[c.level] ?? 'healthy')];
      }), 'Every leaf–spine link is healthy.'),
  );
  const chart = makeChart(container, {
    tooltip: {
      formatter: (p: { value: number[] }) => {
        const [s, l, level, links] = p.value;
        return `${leaves[l ?? 0]?.name ?? ''} → ${spines[s ?? 0]?.name ?? ''}: ${links} link(s), worst ${LEVEL_STATE[level ?? 0]}`;
      },
    },
    grid: { left: 90, right: 20, top: 20, bottom: 110 },
    xAxis: { type: 'category', name: 'spine', data: spines.map((n) => n.name), axisLabel: { rotate: 60 } },
    yAxis: { type: 'category', name: 'leaf', data: leaves.map((n) => n.name) },
    visualMap: {
      type: 'piecewise', dimension: 2, orient: 'horizontal', left: 'center', bottom: 0,
      pieces: [
        { value: 0, label: 'healthy', color: '#1a7f37' },
        { value: 1, label: 'allocated', color: '#0b5cad' },
        { value: 2, label: 'sub-health', color: '#9a6700' },
        { value: 3, label: 'isolated', color: '#b42318' },
      ],
    },
    dataZoom: leaves.length > 64 ? [{ type: 'inside', yAxisIndex: 0 }, { type: 'slider', yAxisIndex: 0 }] : [],
    series: [{ type: 'heatmap', data, progressive: 5000 }],
  }, `Heatmap of ${cells.size} leaf–spine pairs: ${unhealthy.length} with a link not healthy (listed in the table below)`);
  setStatus(`Matrix: ${leaves.length} × ${spines.length}`);
  return resizeAll([chart]);
}
