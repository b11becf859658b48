// Fabric site view: the aggregator's layout, grouped (SUs, spine groups, core) and expandable to leaves and
// hosts, drawn with sigma.js or the Canvas 2D fallback; a table above TABLE_THRESHOLD items. URL state:
// expand (group ids), mark (hosts to highlight, e.g. a search answer), renderer (webgl|canvas), blast and
// incident (the devices of an incident's blast radius, any tier, marked where drawn: the root-cause page
// expands the groups that hold them).
import type { PageContext, Cleanup } from '../main';
import { navigate } from '../main';
import { ApiError } from '../api';
import { el, setStatus, stateBadge, table } from '../dom';
import { drawnItems, fetchLayout, type Drawn, type Layout } from '../layout';
import { drawGraph, type Renderer } from '../graph';

export const TABLE_THRESHOLD = 3000;

function listParam(params: URLSearchParams, name: string): string[] {
  return (params.get(name) ?? '').split(',').filter(Boolean);
}

export function siteHash(expand: string[], mark: string[], renderer: string | null, blast: string[] = [], incident: string | null = null): string {
  const q = new URLSearchParams();
  if (expand.length) q.set('expand', expand.join(','));
  if (mark.length) q.set('mark', mark.join(','));
  if (blast.length) q.set('blast', blast.join(','));
  if (incident) q.set('incident', incident);
  if (renderer) q.set('renderer', renderer);
  const s = q.toString();
  return `#/site${s ? `?${s}` : ''}`;
}

export async function renderSite(ctx: PageContext): Promise<Cleanup | void> {
  const { main, params } = ctx;
  const expand = listParam(params, 'expand');
  const mark = listParam(params, 'mark');
  const rendererParam = params.get('renderer');
  const blast = listParam(params, 'blast');
  const incident = params.get('incident');
  const hashOf = (e: string[]): string => siteHash(e, mark, rendererParam, blast, incident);
  const wanted: Renderer = rendererParam === 'canvas' ? 'canvas' : 'webgl';
  main.append(el('h1', {}, 'Fabric site view'));
  let layout: Layout;
  try {
    // Marked hosts' SUs are expanded, so the answer shows host by host.
    const first = mark.length ? await fetchLayout([], mark) : null;
    const withMarks = first ? [...new Set([...expand, ...Object.values(first.located)])] : expand;
    layout = await fetchLayout(withMarks, mark);
  } catch (e) {
    if (e instanceof ApiError && e.status === 404) {
      main.append(el('p', {}, 'There is no topology yet: import or generate one (hsnsctl topology, or PUT /api/v1/topology).'));
      return;
    }
    throw e;
  }
  const expanded = layout.groups.filter((g) => g.expanded).map((g) => g.id);
  const toggle = (id: string): void => {
    const next = expanded.includes(id) ? expanded.filter((x) => x !== id) : [...expanded, id];
    navigate(hashOf(next));
  };
  const marked = new Set([...mark, ...blast]);
  const items = drawnItems(layout, marked, blast.length ? 'blast radius' : 'answer');

  main.append(
    el('p', { class: 'note' },
      `${layout.name || 'topology'} (revision ${layout.revision}): ${layout.hosts} hosts, ${layout.npus} NPUs, ${layout.switches} switches, ${layout.links} links.`,
      mark.length ? ` Marked (★, purple): ${mark.join(', ')}.` : '',
      blast.length ? ` Blast radius${incident ? ` of incident ${incident}` : ''} (★, purple): ${blast.join(', ')}.` : ''),
    incident ? el('p', {}, el('a', { href: `#/incident/${encodeURIComponent(incident)}` }, `Back to incident ${incident}`)) : '',
  );

  // The group list: every group as a toggle button (keyboard access to every expansion), its state in words.
  const list = el('ul', {});
  for (const g of layout.groups) {
    const button = el('button', { type: 'button', 'aria-pressed': g.expanded ? 'true' : 'false', 'data-group': g.id },
      `${g.expanded ? '▾' : '▸'} ${g.label} · ${g.kind === 'su' ? `${g.hosts} hosts` : `${g.members} switches`} · `, stateBadge(g.worst_state));
    button.addEventListener('click', () => toggle(g.id));
    const li = el('li', { class: Object.values(layout.located).includes(g.id) ? 'marked' : '' }, button);
    list.append(li);
  }
  const legend = el('div', { class: 'legend' }, 'Legend: ',
    stateBadge('healthy'), stateBadge('allocated'), stateBadge('sub-health'), stateBadge('isolated'),
    el('span', { class: 'state' }, blast.length ? '★ blast radius (purple)' : '★ search answer (purple)'));
  const side = el('section', { class: 'groups', 'aria-labelledby': 'groups-title' },
    el('h2', { id: 'groups-title' }, 'Groups'),
    el('p', { class: 'note' }, 'Expand a group to draw its leaves and hosts.'),
    list,
    el('p', {}, el('a', { href: hashOf([]) }, 'Collapse all'), ' · ',
      el('a', { href: hashOf(['all']) }, 'Expand all')));

  const onPick = (item: Drawn): void => {
    if (item.kind === 'host') navigate(`#/host/${encodeURIComponent(item.name)}`);
    else if (item.kind === 'leaf' || item.kind === 'spine' || item.kind === 'core') navigate(`#/switch/${encodeURIComponent(item.name)}`);
    else toggle(item.id);
  };

  const view = el('section', { 'aria-labelledby': 'view-title' }, el('h2', { id: 'view-title' }, 'Fabric'), legend);
  main.append(el('div', { class: 'layout' }, side, view));
  const markedCount = items.filter((i) => i.marked).length;
  if (items.length > TABLE_THRESHOLD) {
    view.append(el('p', { class: 'note' }, `${items.length} items are more than a graph can show readably (${TABLE_THRESHOLD}): a table instead.`));
    const rows = items.map((i) => [
      i.kind === 'host' ? el('a', { href: `#/host/${encodeURIComponent(i.name)}` }, i.name) : i.kind === 'leaf' || i.kind === 'spine' ? el('a', { href: `#/switch/${encodeURIComponent(i.name)}` }, i.name) : i.label,
      i.kind, stateBadge(i.state), i.marked ? '★ answer' : '']);
    const t = table('Drawn items', ['name', 'kind', 'state', 'mark'], rows);
    t.id = 'site-table';
    t.dataset['marked'] = String(markedCount);
    view.append(t);
    setStatus(`Site view: ${items.length} items as a table`);
    return;
  }
  const container = el('div', { class: 'graph', id: 'site-graph', role: 'img',
    'aria-label': `Fabric graph of ${items.length} items; the group list beside it gives keyboard access to the same groups` });
  container.dataset['nodes'] = String(items.length);
  container.dataset['marked'] = String(markedCount);
  view.append(container);
  const graph = drawGraph(container, items, layout.edges, wanted, onPick);
  view.append(el('p', { class: 'note', id: 'renderer-note' },
    graph.renderer === 'webgl' ? 'Drawn with sigma.js (WebGL).' : 'Drawn with ECharts on a Canvas 2D (no WebGL context could be made, or renderer=canvas).'));
  setStatus(`Site view: ${items.length} items, ${graph.renderer}`);
  return () => graph.kill();
}
