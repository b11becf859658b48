// Matrices: every link of the fabric on one screen, as ECharts heatmaps, each cell coloured by the chosen
// overlay (overlay.ts: link state, active alarms, utilisation, PFC, ECN/CNP, drops and errors, FEC/BER,
// optics, flaps) at the chosen time (the time slider). Three views:
//   leaf-spine  one cell per leaf and spine: the uplinks between them;
//   rail-su     one cell per rail (NPU index) and SU: the NPU-to-leaf links of that rail in that SU;
//   host-port   one cell per host and NPU port: that port's link to its leaf.
// A cell's value is the worst grade of its links; the tooltip and the table below say the grade in words
// and the worst link's reading (colour is never the only carrier). URL state: view, overlay, at. The alarm
// overlay shown now follows the alarm stream (alarm_live.ts): a change recolours the cells of the links it
// touches in place, with the summary and the table, without re-reading the topology. The link-state overlay
// shown now follows the topology stream (topology_live.ts): a new revision re-reads the compact links and
// recolours the cells of the links whose state changed, the same way. A metric overlay shown now follows its
// grade stream (overlay_live.ts: the aggregator grades; a KPI that changes a link's grade or reading
// recolours that link's cell in place, the same way).
import type { PageContext, Cleanup } from '../main';
import { navigate } from '../main';
import { ApiError } from '../api';
import { el, setStatus, table } from '../dom';
import { domainsOf, type TopoGraph } from '../topology';
import { makeChart, resizeAll } from '../charts';
import { describeAt, emptyLevel, fetchGraded, gradeLinks, levelWord, piecesOf, type GradedLink, type OverlayData } from '../overlay';
import { followGrades } from '../overlay_live';
import { followAlarmOverlay } from '../alarm_live';
import { followTopologyStates } from '../topology_live';
import { linkHash } from './entity';
import { choiceParams, overlayChoice, overlayControls, wireNow, type OverlayChoice } from '../overlay_controls';

export const VIEWS = [
  { id: 'leaf-spine', label: 'Leaf × spine', x: 'spine', y: 'leaf' },
  { id: 'rail-su', label: 'Rail × SU', x: 'SU', y: 'rail' },
  { id: 'host-port', label: 'Host × NPU port', x: 'NPU port', y: 'host' },
] as const;
type ViewId = (typeof VIEWS)[number]['id'];

export function matrixHash(view: ViewId, c: OverlayChoice): string {
  const q = new URLSearchParams();
  if (view !== 'leaf-spine') q.set('view', view);
  choiceParams(q, c);
  const s = q.toString();
  return `#/matrix${s ? `?${s}` : ''}`;
}

interface Cell {
  links: number;
  level: number;
  worst: GradedLink;
  notOk: number;
  members: number[]; // indices of its graded links
}

interface Matrix {
  xs: string[];
  ys: string[];
  cells: Map<string, Cell>; // "x,y"
  cellOf: Map<number, string>; // graded link index -> its cell
  links: number;
  empty: string;
}

// Places each graded link in its cell (or none), keeping the worst.
function build(view: ViewId, graph: TopoGraph, graded: GradedLink[], bad: (level: number) => boolean): Matrix {
  const cells = new Map<string, Cell>();
  const cellOf = new Map<number, string>();
  let links = 0;
  const put = (x: number, y: number, i: number): void => {
    const g = graded[i];
    if (!g) return;
    const key = `${x},${y}`;
    const c = cells.get(key);
    links += 1;
    cellOf.set(i, key);
    if (!c) {
      cells.set(key, { links: 1, level: g.level, worst: g, notOk: bad(g.level) ? 1 : 0, members: [i] });
      return;
    }
    c.links += 1;
    c.members.push(i);
    if (bad(g.level)) c.notOk += 1;
    if (g.level > c.level) {
      c.level = g.level;
      c.worst = g;
    }
  };
  if (view === 'leaf-spine') {
    const leaves = graph.nodes.filter((n) => n.tier === 'leaf');
    const spines = graph.nodes.filter((n) => n.tier === 'spine');
    const li = new Map(leaves.map((n, i) => [n.id, i]));
    const si = new Map(spines.map((n, i) => [n.id, i]));
    graded.forEach((g, i) => {
      const y = li.get(g.lower.id);
      const x = si.get(g.upper.id);
      if (x !== undefined && y !== undefined) put(x, y, i);
    });
    return { xs: spines.map((n) => n.name), ys: leaves.map((n) => n.name), cells, cellOf, links,
      empty: 'This topology has no leaf-to-spine links (a single SU without spines).' };
  }
  const d = domainsOf(graph);
  const hostLinks = graded.flatMap((g, i) => (g.lower.tier === 'host' ? [{ g, i }] : []));
  const railOf = (g: GradedLink): number | undefined => g.link.npu ?? d.rail.get(`${g.lower.name}/${g.link.source_port}`);
  if (view === 'rail-su') {
    const sus = [...new Set(hostLinks.map(({ g }) => d.su.get(g.lower.name)).filter((s): s is number => s !== undefined))].sort((a, b) => a - b);
    const rails = [...new Set(hostLinks.map(({ g }) => railOf(g)).filter((r): r is number => r !== undefined))].sort((a, b) => a - b);
    const xi = new Map(sus.map((s, i) => [s, i]));
    const yi = new Map(rails.map((r, i) => [r, i]));
    for (const { g, i } of hostLinks) {
      const su = d.su.get(g.lower.name);
      const rail = railOf(g);
      const x = su === undefined ? undefined : xi.get(su);
      const y = rail === undefined ? undefined : yi.get(rail);
      if (x !== undefined && y !== undefined) put(x, y, i);
    }
    return { xs: sus.map((s) => `SU ${s}`), ys: rails.map((r) => `rail ${r}`), cells, cellOf, links, empty: 'This topology has no NPU links.' };
  }
  const hosts = graph.nodes.filter((n) => n.tier === 'host');
  const hi = new Map(hosts.map((n, i) => [n.id, i]));
  const ports = [...new Set(hostLinks.map(({ g }) => railOf(g)).filter((r): r is number => r !== undefined))].sort((a, b) => a - b);
  const pi = new Map(ports.map((p, i) => [p, i]));
  for (const { g, i } of hostLinks) {
    const rail = railOf(g);
    const x = rail === undefined ? undefined : pi.get(rail);
    const y = hi.get(g.lower.id);
    if (x !== undefined && y !== undefined) put(x, y, i);
  }
  return { xs: ports.map((p) => `NPU ${p}`), ys: hosts.map((n) => n.name), cells, cellOf, links, empty: 'This topology has no NPU links.' };
}

const linkName = (g: GradedLink): string => `${g.lower.name}/${g.link.source_port} – ${g.upper.name}/${g.link.target_port}`;
const linkPage = (g: GradedLink): string => linkHash(g.lower.name, g.link.source_port);
const TABLE_ROWS = 200;

export async function renderMatrix(ctx: PageContext): Promise<Cleanup | void> {
  const { main, params } = ctx;
  const viewParam = params.get('view');
  const view = VIEWS.find((v) => v.id === viewParam) ?? VIEWS[0];
  const choice = overlayChoice(params);
  const apply = (c: OverlayChoice): void => navigate(matrixHash(view.id, c));
  main.append(el('h1', {}, `Matrix: ${view.label}`));
  main.append(el('nav', { 'aria-label': 'Matrix views', class: 'tabs' },
    ...VIEWS.map((v) => el('a', { href: matrixHash(v.id, choice), 'aria-current': v.id === view.id ? 'page' : undefined }, v.label))));
  let graph: TopoGraph;
  let data: OverlayData;
  const upper: ('leaf' | 'spine')[] = view.id === 'leaf-spine' ? ['spine'] : ['leaf'];
  try {
    ({ graph, data } = await fetchGraded(choice.overlay, choice.at, upper));
  } catch (e) {
    if (e instanceof ApiError && e.status === 404) {
      main.append(el('p', {}, 'There is no topology yet.'));
      return;
    }
    throw e;
  }
  main.append(overlayControls(choice, apply));
  wireNow(choice, apply);
  const graded = gradeLinks(data, graph);
  const o = choice.overlay;
  const bad = (level: number): boolean => level > 0;
  const m = build(view.id, graph, graded, bad);
  if (m.cells.size === 0) {
    main.append(el('p', {}, m.empty));
    setStatus(`Matrix: ${view.label}, empty`);
    return;
  }
  const cells = [...m.cells.entries()].map(([k, c]) => {
    const [x, y] = k.split(',').map(Number);
    return { x: x ?? 0, y: y ?? 0, c };
  });
  const cellIndex = new Map([...m.cells.keys()].map((k, i) => [k, i]));
  // The summary line and the table of cells not ok, drawn again after a live delta.
  const summary = el('p', { class: 'note', id: 'matrix-summary' });
  const flaggedBox = el('div', {});
  const container = el('div', { class: 'chart tall', id: 'matrix-chart' });
  const describe = (): void => {
    const noData = o.kind === 'metric' ? cells.filter(({ c }) => c.level === emptyLevel(o)).length : 0;
    const flagged = cells.filter(({ c }) => bad(c.level)).sort((a, b) => b.c.level - a.c.level);
    summary.textContent = `${m.ys.length} ${view.y}s × ${m.xs.length} ${view.x}s: ${m.links} links in ${m.cells.size} cells, ${flagged.length} cells not ok` +
      `${o.kind === 'metric' ? `, ${noData} without data` : ''} (${o.label}, ${describeAt(choice.at)})${data.truncated ? '; the KPI answer was truncated' : ''}. Hover a cell for its worst link; a click opens that link's page.`;
    container.dataset['flagged'] = String(flagged.length);
    const t = table(`Cells not ok (${o.label}, ${describeAt(choice.at)})${flagged.length > TABLE_ROWS ? `: the worst ${TABLE_ROWS} of ${flagged.length}` : ''}`,
      [view.y, view.x, 'links', 'not ok', 'grade', 'worst link', 'reading'],
      flagged.slice(0, TABLE_ROWS).map(({ x, y, c }) => [m.ys[y], m.xs[x], c.links, c.notOk, levelWord(o, c.level),
        el('a', { href: linkPage(c.worst) }, linkName(c.worst)), c.worst.text]),
      o.kind === 'metric' ? `No cell is above its thresholds (${noData} cells have no data).` : 'Every cell is ok.');
    if (t.tagName === 'TABLE') t.id = 'matrix-table';
    flaggedBox.replaceChildren(t);
  };
  container.dataset['cells'] = String(m.cells.size);
  container.dataset['links'] = String(m.links);
  describe();
  main.append(summary, container, flaggedBox);
  const data2 = cells.map(({ x, y, c }) => [x, y, c.level, c.links]);
  const chart = makeChart(container, {
    tooltip: {
      formatter: (p: { value: number[] }) => {
        const [x, y, , links] = p.value;
        const c = m.cells.get(`${x},${y}`);
        if (!c) return '';
        return `${m.ys[y ?? 0] ?? ''} × ${m.xs[x ?? 0] ?? ''}: ${links} link(s), ${levelWord(o, c.level)}; worst ${linkName(c.worst)}: ${c.worst.text}`;
      },
    },
    grid: { left: 90, right: 20, top: 20, bottom: 110 },
    xAxis: { type: 'category', name: view.x, data: m.xs, axisLabel: { rotate: m.xs.length > 8 ? 60 : 0 } },
    yAxis: { type: 'category', name: view.y, data: m.ys },
    visualMap: { type: 'piecewise', dimension: 2, orient: 'horizontal', left: 'center', bottom: 0, pieces: piecesOf(o) },
    dataZoom: m.ys.length > 64 ? [{ type: 'inside', yAxisIndex: 0 }, { type: 'slider', yAxisIndex: 0 }] : [],
    series: [{ type: 'heatmap', data: data2, progressive: 5000 }],
  }, `Heatmap of ${view.label}: ${m.cells.size} cells, ${container.dataset['flagged']} not ok under ${o.label} at ${describeAt(choice.at)} (listed in the table below)`);
  chart.on('click', (p) => {
    const [x, y] = (p as { value?: number[] }).value ?? [];
    const c = m.cells.get(`${x},${y}`);
    if (c) navigate(linkPage(c.worst));
  });
  setStatus(`Matrix: ${view.label}, ${o.id}, ${m.cells.size} cells`);
  const release = resizeAll([chart]);
  if (choice.at !== null) return release;

  // Live: the alarm overlay follows the alarm stream, the link-state overlay the topology stream, a metric
  // overlay its grade stream. The cells of the links a delta regraded take their worst link again; the
  // heatmap's data, the summary and the table are replaced (positions never change).
  const what = o.kind === 'alarms' ? 'Live alarm updates' : o.kind === 'state' ? 'Live link-state updates' : 'Live grade updates';
  const note = el('p', { class: 'note', id: 'matrix-live', 'aria-live': 'polite' }, `${what}: connecting…`);
  summary.after(note);
  let applied = 0;
  container.dataset['deltas'] = '0';
  const onDelta = (d: { links: Set<number>; changes: number }): void => {
    applied += d.changes;
    container.dataset['deltas'] = String(applied);
    const keys = new Set([...d.links].map((i) => m.cellOf.get(i)).filter((k): k is string => k !== undefined));
    for (const key of keys) {
      const c = m.cells.get(key);
      const at = cellIndex.get(key);
      if (!c || at === undefined) continue;
      let worst: GradedLink | undefined;
      c.notOk = 0;
      for (const i of c.members) {
        const g = graded[i];
        if (!g) continue;
        if (bad(g.level)) c.notOk += 1;
        if (!worst || g.level > worst.level) worst = g;
      }
      if (worst) {
        c.worst = worst;
        c.level = worst.level;
      }
      const row = data2[at];
      if (row) row[2] = c.level;
    }
    if (!keys.size) return;
    chart.setOption({ series: [{ data: data2 }] });
    describe();
  };
  const onState = (open: boolean): void => { note.textContent = `${what}: ${open ? 'connected.' : 'reconnecting…'}`; };
  const rebuild = (): void => navigate(matrixHash(view.id, choice));
  const stop = o.kind === 'alarms'
    ? followAlarmOverlay(data, graded, onDelta, onState)
    : o.kind === 'metric'
    // A grade set of another topology revision: the view is built again.
    ? followGrades(data, graded, onDelta, rebuild, onState)
    // Another structure (devices or links added or removed): the view is built again.
    : followTopologyStates(graph, upper, data, graded, onDelta, rebuild, onState);
  return () => {
    stop();
    release();
  };
}
