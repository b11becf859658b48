// Fabric site view: the aggregator's layout, grouped (SUs, spine groups, core) and expandable to leaves and
// hosts, drawn with sigma.js or the Canvas 2D fallback; a table above TABLE_THRESHOLD items. URL state:
// expand (group ids), mark (hosts to highlight, e.g. a search answer), renderer (webgl|canvas), blast and
// incident (the devices of an incident's blast radius, any tier, marked where drawn: the root-cause page
// expands the groups that hold them), overlay and at (overlay_controls.ts: every drawn item coloured by
// the worst grade of its devices' links under the overlay, at the chosen time; the default overlay, link
// state, keeps the layout's device-state colours; a metric overlay's device and group grades are the
// aggregator's). Shown now, the alarm overlay follows the alarm stream, the link-state overlay the
// topology stream and a metric overlay its grade stream: changes repaint the items and group buttons in
// place.
import type { PageContext, Cleanup } from '../main';
import { navigate, recordHash } from '../main';
import { ApiError } from '../api';
import { el, setStatus, showError, stateBadge, table } from '../dom';
import { drawnItems, fetchLayout, fetchSummary, healthByGroup, healthWords, type Drawn, type GroupHealth, type Layout, type LayoutRail } from '../layout';
import { matrixHash } from './matrix';
import { severityBadge, severityLevel } from '../brain';
import { drawGraph, type Renderer } from '../graph';
import { domainsOf } from '../topology';
import { deviceLevels, fetchGraded, gradeLinks, levelWord, piecesOf, type GradedLink, type OverlayData } from '../overlay';
import { followGrades } from '../overlay_live';
import { followAlarmOverlay } from '../alarm_live';
import { followRevisions } from '../topology_live';
import { choiceParams, overlayChoice, overlayControls, wireNow, type OverlayChoice } from '../overlay_controls';

export const TABLE_THRESHOLD = 3000;
const SUMMARY_REFRESH_MS = 10_000;
const NEUTRAL_COLOUR = '#8c959f';

function listParam(params: URLSearchParams, name: string): string[] {
  return (params.get(name) ?? '').split(',').filter(Boolean);
}

export function siteHash(expand: string[], mark: string[], renderer: string | null, blast: string[] = [], incident: string | null = null,
  choice: OverlayChoice | null = null): string {
  const q = new URLSearchParams();
  if (choice) choiceParams(q, choice);
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
  const choice = overlayChoice(params);
  const hashOf = (e: string[], c: OverlayChoice = choice): string => siteHash(e, mark, rendererParam, blast, incident, c);
  const wanted: Renderer = rendererParam === 'canvas' ? 'canvas' : 'webgl';
  main.append(el('h1', {}, 'Fabric site view'));
  // Each group's worst alarm and p95 utilisation, read beside the layout; the view works without it.
  const summary = fetchSummary().catch(() => null);
  let layout: Layout;
  let withMarks = expand; // the groups asked for (the URL's and the marked hosts'), as the layout is fetched
  try {
    // Marked hosts' SUs are expanded, so the answer shows host by host.
    const first = mark.length ? await fetchLayout([], mark) : null;
    if (first) withMarks = [...new Set([...expand, ...Object.values(first.located)])];
    layout = await fetchLayout(withMarks, mark);
  } catch (e) {
    if (e instanceof ApiError && e.status === 404) {
      main.append(el('p', {}, 'There is no topology yet: import or generate one (hsnsctl topology, or PUT /api/v1/topology).'));
      return;
    }
    throw e;
  }
  let expanded = layout.groups.filter((g) => g.expanded).map((g) => g.id);
  // A group's toggle: drawn into the living graph (expandInPlace, below) when the view is a graph, else the
  // page is built again for the new expansion.
  let toggle = (id: string): void => navigate(hashOf(toggled(expanded, id)));
  const marked = new Set([...mark, ...blast]);
  const markLabel = blast.length ? 'blast radius' : 'answer';
  let items = drawnItems(layout, marked, markLabel);
  const site = choice.overlay.kind === 'state' ? null : await overlayGrades(choice);
  const grades = site?.levels ?? null;
  let health = healthByGroup(await summary);
  // In the graph's labels only what is there (the group list says "none" and "no data" too).
  const healthLabel = (name: string): string => {
    const h = health.get(name);
    if (!h) return '';
    return `${h.worst ? ` · ${h.worst} ×${h.alarms}` : ''}${h.p95 !== null ? ` · p95 ${h.p95} %` : ''}`;
  };
  // Each item's colour and label from the layout (device state, marks), before an overlay's grade.
  const baseLabel = new Map<string, string>();
  const baseColour = new Map<string, string>();
  const remember = (drawn: Drawn[]): void => {
    for (const i of drawn) {
      baseLabel.set(i.id, i.label);
      baseColour.set(i.id, i.colour);
    }
  };
  remember(items);
  // A rail cuts across the SUs, so the overlay's device and group grades say nothing of it: under the
  // alarm overlay it takes its worst active alarm, under utilisation its p95 grade (both the summary's);
  // other overlays grade rails in the rail × SU matrix, and the rail is drawn neutral.
  const railLevel = (name: string): number | null => {
    const h = health.get(name);
    if (!h) return null;
    if (choice.overlay.kind === 'alarms') return h.worst ? 1 + severityLevel(h.worst) : 0;
    if (choice.overlay.id === 'util') return h.grade;
    return null;
  };
  // An item's colour and label: the layout's, its group summary, and under an overlay its grade in words.
  const paint = (i: Drawn): void => {
    i.label = (baseLabel.get(i.id) ?? i.label) + healthLabel(i.name);
    i.colour = baseColour.get(i.id) ?? i.colour;
    if (!grades) return;
    const level = i.kind === 'rail' ? railLevel(i.name) : grades.get(i.name);
    if (level === undefined) return;
    if (level === null) {
      i.label += ` [${choice.overlay.id}: see the rail × SU matrix]`;
      i.colour = NEUTRAL_COLOUR;
      return;
    }
    const piece = piecesOf(choice.overlay).find((p) => p.value === level);
    i.label += ` [${choice.overlay.id}${i.kind === 'rail' && choice.overlay.id === 'util' ? ' p95' : ''}: ${levelWord(choice.overlay, level)}]`;
    if (!i.marked && piece) i.colour = piece.color;
  };
  for (const i of items) paint(i);

  main.append(
    el('p', { class: 'note' },
      `${layout.name || 'topology'} (revision ${layout.revision}): ${layout.hosts} hosts, ${layout.npus} NPUs, ${layout.switches} switches, ${layout.links} links.`,
      mark.length ? ` Marked (★, purple): ${mark.join(', ')}.` : '',
      blast.length ? ` Blast radius${incident ? ` of incident ${incident}` : ''} (★, purple): ${blast.join(', ')}.` : ''),
    incident ? el('p', {}, el('a', { href: `#/incident/${encodeURIComponent(incident)}` }, `Back to incident ${incident}`)) : '',
  );

  // The group list: every group as a toggle button (keyboard access to every expansion), its state in words.
  const list = el('ul', {});
  const buttons = new Map<string, HTMLButtonElement>();
  const healthParts = (h: GroupHealth | undefined): (string | Node)[] => {
    if (!h) return [];
    const w = healthWords(h);
    return [' · alarms: ', h.worst ? severityBadge(h.worst) : 'none', h.worst ? ` (${h.alarms})` : '', ` · util p95: ${w.util}`];
  };
  const buttonText = (g: Layout['groups'][number]): (string | Node)[] => [
    `${g.expanded ? '▾' : '▸'} ${g.label} · ${g.kind === 'su' ? `${g.hosts} hosts` : `${g.members} switches`} · `, stateBadge(g.worst_state),
    ...healthParts(health.get(g.id)),
    grades?.has(g.id) ? ` · ${choice.overlay.label}: ${levelWord(choice.overlay, grades.get(g.id) ?? 0)}` : ''];
  for (const g of layout.groups) {
    const button = el('button', { type: 'button', 'aria-pressed': g.expanded ? 'true' : 'false', 'data-group': g.id }, ...buttonText(g));
    buttons.set(g.id, button);
    button.addEventListener('click', () => toggle(g.id));
    const li = el('li', { class: Object.values(layout.located).includes(g.id) ? 'marked' : '' }, button);
    list.append(li);
  }
  // The rail groups (the leaves of one rail across the SUs): each a link to the rail × SU matrix.
  const railHash = matrixHash('rail-su', choice);
  const railList = el('ul', {});
  const railLinks = new Map<string, HTMLElement>();
  const railText = (r: LayoutRail): (string | Node)[] => [`rail ${r.rail} · ${r.leaves} leaves · `, stateBadge(r.worst_state),
    ...healthParts(health.get(r.id))];
  for (const r of layout.rails) {
    const a = el('a', { href: railHash, 'data-rail': r.id }, ...railText(r));
    railLinks.set(r.id, a);
    railList.append(el('li', {}, a));
  }
  // A group's or rail's entry in the list written again (its state, summary or grade changed).
  const relist = (id: string): void => {
    const g = layout.groups.find((x) => x.id === id);
    if (g) {
      buttons.get(id)?.setAttribute('aria-pressed', g.expanded ? 'true' : 'false');
      buttons.get(id)?.replaceChildren(...buttonText(g));
    }
    const r = layout.rails.find((x) => x.id === id);
    if (r) railLinks.get(id)?.replaceChildren(...railText(r));
  };
  const controls = overlayControls(choice, (c) => navigate(hashOf(expanded, c)));
  const legend = grades ? el('div', { class: 'legend' }, `Items coloured by ${choice.overlay.label} (legend above); purple ★: `,
    blast.length ? 'blast radius' : 'search answer') : el('div', { class: 'legend' }, 'Legend: ',
    stateBadge('healthy'), stateBadge('allocated'), stateBadge('sub-health'), stateBadge('isolated'),
    el('span', { class: 'state' }, blast.length ? '★ blast radius (purple)' : '★ search answer (purple)'));
  const side = el('section', { class: 'groups', 'aria-labelledby': 'groups-title' },
    el('h2', { id: 'groups-title' }, 'Groups'),
    el('p', { class: 'note' }, 'Expand a group to draw its leaves and hosts. Each group names its worst active alarm '
      + '(how many) and the 95th percentile of its links\' utilisation, now (re-read every 10 s).'),
    list,
    el('p', {}, el('a', { href: hashOf([]) }, 'Collapse all'), ' · ',
      el('a', { href: hashOf(['all']) }, 'Expand all')),
    layout.rails.length ? el('h3', { id: 'rails-title' }, 'Rails') : '',
    layout.rails.length ? el('p', { class: 'note' }, 'The leaves of each rail across the SUs, drawn in a row below the hosts; '
      + 'a rail opens the rail × SU matrix.') : '',
    layout.rails.length ? railList : '');

  // The drawn items by device, group or rail name.
  const byName = new Map<string, Drawn[]>();
  const indexItems = (): void => {
    byName.clear();
    for (const i of items) {
      const same = byName.get(i.name);
      if (same) same.push(i);
      else byName.set(i.name, [i]);
    }
  };
  indexItems();

  const onPick = (item: Drawn): void => {
    if (item.kind === 'rail') navigate(railHash);
    else if (item.kind === 'host') navigate(`#/host/${encodeURIComponent(item.name)}`);
    else if (item.kind === 'leaf' || item.kind === 'spine' || item.kind === 'core') navigate(`#/switch/${encodeURIComponent(item.name)}`);
    else toggle(item.id);
  };

  const view = el('section', { 'aria-labelledby': 'view-title' }, el('h2', { id: 'view-title' }, 'Fabric'), legend);
  main.append(controls, el('div', { class: 'layout' }, side, view));
  wireNow(choice, (c) => navigate(hashOf(expanded, c)));

  // The alarm overlay shown now follows the alarm stream: each delta regrades the links it touches, then
  // their devices and groups; a metric overlay follows its grade stream, whose deltas name the devices and
  // groups whose grade changed. The items and group buttons whose grade changed are repainted in place.
  // `target` carries the count of changes applied (data-deltas).
  function live(target: HTMLElement, redraw: (changed: Drawn[]) => void): () => void {
    if (!site || (choice.overlay.kind !== 'alarms' && choice.overlay.kind !== 'metric') || choice.at !== null) return () => undefined;
    const s = site;
    let applied = 0;
    target.dataset['deltas'] = '0';
    const what = choice.overlay.kind === 'alarms' ? 'Live alarm updates' : 'Live grade updates';
    const note = el('p', { class: 'note', id: 'site-live', 'aria-live': 'polite' }, `${what}: connecting…`);
    view.append(note);
    const onState = (open: boolean): void => { note.textContent = `${what}: ${open ? 'connected.' : 'reconnecting…'}`; };
    const repaint = (names: Set<string>): void => {
      const changed: Drawn[] = [];
      for (const name of names) {
        for (const i of byName.get(name) ?? []) {
          paint(i);
          changed.push(i);
        }
        relist(name);
      }
      if (changed.length) redraw(changed);
    };
    if (choice.overlay.kind === 'metric') {
      return followGrades(s.data, s.graded, (d) => {
        applied += d.changes;
        target.dataset['deltas'] = String(applied);
        const names = new Set<string>();
        for (const [id, grade] of d.devices) {
          const name = s.names[id];
          if (name === undefined) continue;
          s.levels.set(name, grade);
          names.add(name);
        }
        for (const [id, grade] of d.groups) {
          s.levels.set(id, grade);
          names.add(id);
        }
        repaint(names);
      }, () => navigate(hashOf(expanded)), onState);
    }
    return followAlarmOverlay(s.data, s.graded, (d) => {
      applied += d.changes;
      target.dataset['deltas'] = String(applied);
      repaint(regrade(s, d.links));
    }, onState);
  }

  // The link-state overlay (device states) shown now follows the topology stream: a new revision re-reads
  // the layout with the same expansion; when it draws the same items, those whose state changed are
  // repainted in place with their group buttons, else the view is built again.
  // The groups' alarms and utilisation are re-read every SUMMARY_REFRESH_MS: the groups whose summary changed
  // get their button text and drawn item again.
  function followSummary(redraw: (changed: Drawn[]) => void): () => void {
    let done = false;
    const timer = window.setInterval(() => {
      fetchSummary().then((s) => {
        if (done) return;
        const next = healthByGroup(s);
        const old = health;
        health = next;
        const changed: Drawn[] = [];
        for (const id of [...layout.groups.map((g) => g.id), ...layout.rails.map((r) => r.id)]) {
          if (JSON.stringify(old.get(id)) === JSON.stringify(next.get(id))) continue;
          relist(id);
          for (const i of byName.get(id) ?? []) {
            paint(i);
            changed.push(i);
          }
        }
        if (changed.length) redraw(changed);
      }).catch(() => undefined); // kept as it was; the next read may succeed
    }, SUMMARY_REFRESH_MS);
    return () => {
      done = true;
      window.clearInterval(timer);
    };
  }

  function liveStates(target: HTMLElement, redraw: (changed: Drawn[]) => void): () => void {
    if (choice.overlay.kind !== 'state' || choice.at !== null) return () => undefined;
    let applied = 0;
    target.dataset['deltas'] = '0';
    const note = el('p', { class: 'note', id: 'site-live', 'aria-live': 'polite' }, 'Live state updates: connecting…');
    view.append(note);
    return followRevisions(layout.revision, async () => {
      const next = await fetchLayout(withMarks, mark);
      if (next.revision <= layout.revision) return layout.revision;
      const fresh = drawnItems(next, marked, markLabel);
      if (fresh.length !== items.length || fresh.some((f, k) => f.id !== items[k]?.id)) {
        navigate(hashOf(expanded));
        return null;
      }
      const changed: Drawn[] = [];
      fresh.forEach((f, k) => {
        const i = items[k];
        if (!i || (f.state === i.state && f.label === baseLabel.get(i.id) && f.colour === baseColour.get(i.id))) return;
        i.state = f.state;
        baseLabel.set(i.id, f.label);
        baseColour.set(i.id, f.colour);
        paint(i);
        changed.push(i);
      });
      for (const g of next.groups) {
        const old = layout.groups.find((x) => x.id === g.id);
        if (!old || old.worst_state === g.worst_state) continue;
        old.worst_state = g.worst_state;
        old.states = g.states;
        relist(g.id);
      }
      for (const r of next.rails) {
        const old = layout.rails.find((x) => x.id === r.id);
        if (!old || old.worst_state === r.worst_state) continue;
        old.worst_state = r.worst_state;
        relist(r.id);
      }
      layout.revision = next.revision;
      applied += changed.length;
      target.dataset['deltas'] = String(applied);
      if (changed.length) redraw(changed);
      return next.revision;
    }, (open) => { note.textContent = open ? 'Live state updates: connected.' : 'Live state updates: reconnecting…'; });
  }

  if (items.length > TABLE_THRESHOLD) {
    view.append(el('p', { class: 'note' }, `${items.length} items are more than a graph can show readably (${TABLE_THRESHOLD}): a table instead.`));
    const rows = items.map((i) => [
      i.kind === 'host' ? el('a', { href: `#/host/${encodeURIComponent(i.name)}` }, i.name) : i.kind === 'leaf' || i.kind === 'spine' ? el('a', { href: `#/switch/${encodeURIComponent(i.name)}` }, i.name) : i.label,
      i.kind, stateBadge(i.state), grades?.has(i.name) ? levelWord(choice.overlay, grades.get(i.name) ?? 0) : '—', i.marked ? '★ answer' : '']);
    const t = table('Drawn items', ['name', 'kind', 'state', grades ? choice.overlay.label : 'overlay', 'mark'], rows);
    t.id = 'site-table';
    t.dataset['marked'] = String(items.filter((i) => i.marked).length);
    view.append(t);
    const rowsOf = [...t.querySelectorAll('tbody tr')];
    const redrawRows = (changed: Drawn[]): void => {
      for (const i of changed) {
        const row = rowsOf[items.indexOf(i)];
        row?.children[2]?.replaceChildren(stateBadge(i.state));
        const cell = row?.children[3];
        if (cell) cell.textContent = grades?.has(i.name) ? levelWord(choice.overlay, grades.get(i.name) ?? 0) : '—';
      }
    };
    const stop = choice.overlay.kind === 'state' ? liveStates(t, redrawRows) : live(t, redrawRows);
    const stopSummary = followSummary(redrawRows);
    setStatus(`Site view: ${items.length} items as a table`);
    return () => {
      stop();
      stopSummary();
    };
  }
  const graphLabel = (): string => `Fabric graph of ${items.length} items; the group list beside it gives keyboard access to the same groups`;
  const container = el('div', { class: 'graph', id: 'site-graph', role: 'img', 'aria-label': graphLabel() });
  container.dataset['overlay'] = choice.overlay.id;
  const countFlagged = (): void => {
    container.dataset['flagged'] = String(grades ? items.filter((i) => (grades.get(i.name) ?? 0) > 0).length : 0);
  };
  // What the tests and the bench read of the drawing: its items, marks, flagged items and expansion.
  const describe = (): void => {
    container.dataset['nodes'] = String(items.length);
    container.dataset['marked'] = String(items.filter((i) => i.marked).length);
    container.dataset['expanded'] = expanded.join(',');
    countFlagged();
  };
  describe();
  view.append(container);
  const graph = drawGraph(container, items, layout.edges, wanted, onPick);
  view.append(el('p', { class: 'note', id: 'renderer-note' },
    graph.renderer === 'webgl' ? 'Drawn with sigma.js (WebGL).' : 'Drawn with ECharts on a Canvas 2D (no WebGL context could be made, or renderer=canvas).'));
  const redrawGraph = (changed: Drawn[]): void => {
    graph.update(changed);
    countFlagged();
  };

  // A group expanded or collapsed in the living graph: the layout of the new expansion is fetched, its items
  // are painted under the overlay (whose grades cover every device and group) and handed to the renderer,
  // which keeps the items both drawings share; the group buttons follow and the URL records the expansion.
  // The last click wins; a drawing that would pass the table threshold builds the page again as a table.
  let asked = 0;
  let stopped = false;
  const expandInPlace = async (next: string[]): Promise<void> => {
    const mine = ++asked;
    container.setAttribute('aria-busy', 'true');
    try {
      const fresh = await fetchLayout(next, mark);
      if (stopped || mine !== asked) return;
      const freshItems = drawnItems(fresh, marked, markLabel);
      if (freshItems.length > TABLE_THRESHOLD) {
        navigate(hashOf(next));
        return;
      }
      layout = fresh;
      withMarks = next;
      expanded = fresh.groups.filter((g) => g.expanded).map((g) => g.id);
      items = freshItems;
      remember(items);
      for (const i of items) paint(i);
      indexItems();
      graph.replace(items, fresh.edges);
      for (const id of [...fresh.groups.map((g) => g.id), ...fresh.rails.map((r) => r.id)]) relist(id);
      describe();
      if (graph.renderer === 'webgl') container.setAttribute('aria-label', graphLabel());
      recordHash(hashOf(expanded));
      setStatus(`Site view: ${items.length} items, ${graph.renderer}`);
    } catch (e) {
      if (!stopped && mine === asked) showError(e);
    } finally {
      if (mine === asked) container.removeAttribute('aria-busy');
    }
  };
  toggle = (id: string): void => void expandInPlace(toggled(expanded, id));

  const stop = choice.overlay.kind === 'state' ? liveStates(container, redrawGraph) : live(container, redrawGraph);
  const stopSummary = followSummary(redrawGraph);
  setStatus(`Site view: ${items.length} items, ${graph.renderer}`);
  return () => {
    stopped = true;
    stop();
    stopSummary();
    graph.kill();
  };
}

// The expansion with a group toggled: added when it was not expanded, else removed.
function toggled(expanded: string[], id: string): string[] {
  return expanded.includes(id) ? expanded.filter((x) => x !== id) : [...expanded, id];
}

// What the site view's overlay grades are computed from, kept for live deltas.
interface SiteGrades {
  levels: Map<string, number>; // device or group -> worst grade
  names: string[]; // device id -> name
  data: OverlayData;
  graded: GradedLink[];
  deviceLinks: Map<string, number[]>; // device -> its graded links
  groupOf: Map<string, string>; // device -> its group
  groupDevices: Map<string, string[]>;
}

// Each device's and each group's worst link grade under a (non-state) overlay: a group ("su:<n>",
// "spines:<pod>", "core") takes the worst of its devices (an SU: its hosts and leaves; a spine group: the
// spines of its super-pod). A metric overlay's are the aggregator's; the alarm overlay's are worked out here.
async function overlayGrades(choice: OverlayChoice): Promise<SiteGrades> {
  const { graph, data } = await fetchGraded(choice.overlay, choice.at);
  const graded = gradeLinks(data, graph);
  const names = graph.nodes.map((n) => n.name);
  if (data.grades) {
    const g = data.grades;
    const levels = new Map<string, number>();
    graph.nodes.forEach((n, i) => levels.set(n.name, g.devices.grade[i] ?? -1));
    g.groups.id.forEach((id, i) => levels.set(id, g.groups.grade[i] ?? -1));
    return { levels, names, data, graded, deviceLinks: new Map(), groupOf: new Map(), groupDevices: new Map() };
  }
  const devices = deviceLevels(graded);
  const d = domainsOf(graph);
  const levels = new Map(devices);
  const deviceLinks = new Map<string, number[]>();
  graded.forEach((g, i) => {
    for (const n of [g.lower.name, g.upper.name]) {
      const list = deviceLinks.get(n);
      if (list) list.push(i);
      else deviceLinks.set(n, [i]);
    }
  });
  const groupOf = new Map<string, string>();
  const groupDevices = new Map<string, string[]>();
  for (const n of graph.nodes) {
    let group: string | undefined;
    if (n.tier === 'host' || n.tier === 'leaf') {
      const su = d.su.get(n.name);
      if (su !== undefined) group = `su:${su}`;
    } else if (n.tier === 'spine') {
      const pod = d.pod.get(n.name);
      if (pod !== undefined) group = `spines:${pod}`;
    } else {
      group = 'core';
    }
    if (group === undefined) continue;
    groupOf.set(n.name, group);
    const members = groupDevices.get(group);
    if (members) members.push(n.name);
    else groupDevices.set(group, [n.name]);
    const level = devices.get(n.name);
    if (level !== undefined) levels.set(group, Math.max(levels.get(group) ?? -1, level));
  }
  return { levels, names, data, graded, deviceLinks, groupOf, groupDevices };
}

// After the given links were regraded: their devices' and groups' grades again; answers the names (devices
// and groups) whose grade changed.
function regrade(s: SiteGrades, links: Set<number>): Set<string> {
  const devices = new Set<string>();
  for (const i of links) {
    const g = s.graded[i];
    if (g) devices.add(g.lower.name).add(g.upper.name);
  }
  const changed = new Set<string>();
  const groups = new Set<string>();
  for (const name of devices) {
    let level = -1;
    for (const i of s.deviceLinks.get(name) ?? []) level = Math.max(level, s.graded[i]?.level ?? -1);
    if (s.levels.get(name) !== level) {
      s.levels.set(name, level);
      changed.add(name);
      const group = s.groupOf.get(name);
      if (group) groups.add(group);
    }
  }
  for (const group of groups) {
    let level = -1;
    for (const name of s.groupDevices.get(group) ?? []) level = Math.max(level, s.levels.get(name) ?? -1);
    if (s.levels.get(group) !== level) {
      s.levels.set(group, level);
      changed.add(group);
    }
  }
  return changed;
}
