// Alarms and incidents: incidents (not raw alarms) with their alarm count, first/last seen and a flapping
// mark; the alarms under them; filters (severity, incident state, alarm state, entity glob, type, job,
// SU, pod, rail, suppressed) kept in the URL so a view is bookmarkable; acknowledgement of one alarm, a selection or a
// whole incident with a comment; silence rules (list, create, delete, "silence what matches this filter"),
// suppressed alarms shown as such; live updates from /api/v1/alarms/stream and /api/v1/incidents/stream.
import type { PageContext, Cleanup } from '../main';
import { navigate } from '../main';
import { del, get, post, query } from '../api';
import { clearError, el, field, setStatus, showError, table, type Cell } from '../dom';
import { openStream, type Stream } from '../live';
import { domainsOf, fetchGraph, type Domains } from '../topology';
import {
  SEVERITIES, entityDevices, globRegExp, severityBadge, severityLevel, shortTime,
  type Alarm, type AlarmChange, type Incident, type IncidentChange, type Silence,
} from '../brain';

export interface AlarmFilter {
  severity: string; // at least this severity ('' any)
  istate: string; // incident state: open | resolved | '' (all)
  astate: string; // alarm state: active | raised | acknowledged | cleared | '' (any)
  entity: string; // glob over the alarm's entity or root cause
  type: string; // pattern id or fault type
  job: string; // an affected job's name
  suppressed: string; // yes | no | '' (either)
  su: string; // the SU of a device of the alarm's entity or root cause
  pod: string; // the super-pod, likewise
  rail: string; // the rail of the alarm's port (a host NPU port or the leaf port cabled to one)
}
const FILTER_KEYS: (keyof AlarmFilter)[] = ['severity', 'istate', 'astate', 'entity', 'type', 'job', 'suppressed', 'su', 'pod', 'rail'];

export function alarmsHash(f: Partial<AlarmFilter>): string {
  const q = new URLSearchParams();
  for (const k of FILTER_KEYS) if (f[k]) q.set(k, f[k] ?? '');
  const s = q.toString();
  return `#/alarms${s ? `?${s}` : ''}`;
}

function filterOf(params: URLSearchParams): AlarmFilter {
  const f = {} as AlarmFilter;
  for (const k of FILTER_KEYS) f[k] = (params.get(k) ?? '').trim();
  return f;
}

// Rows drawn per table; the counts in the headings are of everything that matches.
const MAX_ROWS = 200;

const alarmFiltered = (f: AlarmFilter): boolean => !!(f.severity || f.astate || f.entity || f.type || f.suppressed || f.su || f.pod || f.rail);

// The alarm's place in the fabric: SUs, super-pods and rails of its entity and root cause.
function placeMatches(a: Alarm, f: AlarmFilter, d: Domains): boolean {
  const names = [a.entity, a.root_cause];
  const devices = names.flatMap(entityDevices);
  if (f.su && !devices.some((x) => d.su.get(x) === Number(f.su))) return false;
  if (f.pod && !devices.some((x) => d.pod.get(x) === Number(f.pod))) return false;
  if (f.rail) {
    const ports = names.flatMap((n) => n.replace(/^(link|device|module):/, '').split('|')).map((n) => n.split('/').slice(0, 2).join('/'));
    if (!ports.some((p) => d.rail.get(p) === Number(f.rail))) return false;
  }
  return true;
}
const active = (a: Alarm): boolean => a.state !== 'cleared';

function alarmMatches(a: Alarm, f: AlarmFilter, entity: RegExp | null, d: Domains | null): boolean {
  if (d && !placeMatches(a, f, d)) return false;
  if (f.severity && severityLevel(a.severity) < severityLevel(f.severity)) return false;
  if (f.astate === 'active' ? !active(a) : f.astate && a.state !== f.astate) return false;
  if (entity && !entity.test(a.entity) && !entity.test(a.root_cause)) return false;
  if (f.type && a.type !== f.type && a.fault !== f.type) return false;
  if (f.suppressed === 'yes' && !a.suppressed) return false;
  if (f.suppressed === 'no' && a.suppressed) return false;
  return true;
}

function select(id: string, options: [string, string][], value: string): HTMLSelectElement {
  const s = el('select', { id }, ...options.map(([v, label]) => el('option', { value: v, selected: v === value }, label)));
  s.value = value;
  return s;
}

export async function renderAlarms(ctx: PageContext): Promise<Cleanup | void> {
  const { main, params } = ctx;
  const f = filterOf(params);
  const entityRe = f.entity ? globRegExp(f.entity) : null;
  const alarms = new Map<string, Alarm>();
  const incidents = new Map<string, Incident>();
  let silences: Silence[] = [];
  const selected = new Set<string>();

  const load = async (): Promise<void> => {
    const [inc, al, si] = await Promise.all([
      get<{ items: Incident[] }>(`/api/v1/incidents${query({ state: f.istate || undefined, limit: 1000 })}`),
      get<{ items: Alarm[] }>('/api/v1/alarms?limit=1000'),
      get<{ items: Silence[] }>('/api/v1/silences'),
    ]);
    incidents.clear();
    for (const i of inc.items) incidents.set(i.id, i);
    alarms.clear();
    for (const a of al.items) alarms.set(a.id, a);
    silences = si.items;
  };
  await load();
  // SU, pod and rail filters need the topology (read only when one is set).
  const domains = f.su || f.pod || f.rail ? domainsOf(await fetchGraph(['leaf'])) : null;

  main.append(el('h1', {}, 'Alarms and incidents'));

  // Filters (the URL holds them).
  const fSeverity = select('filter-severity', [['', 'any'], ...SEVERITIES.map((s): [string, string] => [s, `${s} or worse`])], f.severity);
  const fIstate = select('filter-istate', [['', 'all'], ['open', 'open'], ['resolved', 'resolved']], f.istate);
  const fAstate = select('filter-astate', [['', 'any'], ['active', 'active (raised or acknowledged)'], ['raised', 'raised'], ['acknowledged', 'acknowledged'], ['cleared', 'cleared']], f.astate);
  const fEntity = el('input', { id: 'filter-entity', value: f.entity, placeholder: 'leaf01/* or host003/eth2' });
  const fType = el('input', { id: 'filter-type', value: f.type, placeholder: 'link_down' });
  const fJob = el('input', { id: 'filter-job', value: f.job, placeholder: 'job name' });
  const fSu = el('input', { id: 'filter-su', type: 'number', min: '0', value: f.su, class: 'narrow' });
  const fPod = el('input', { id: 'filter-pod', type: 'number', min: '0', value: f.pod, class: 'narrow' });
  const fRail = el('input', { id: 'filter-rail', type: 'number', min: '0', value: f.rail, class: 'narrow' });
  const fSuppressed = select('filter-suppressed', [['', 'either'], ['yes', 'suppressed only'], ['no', 'not suppressed']], f.suppressed);
  const filterForm = el('form', { class: 'inline', 'aria-label': 'Filter alarms and incidents' },
    field('Severity', fSeverity), field('Incident state', fIstate), field('Alarm state', fAstate), field('Entity (glob)', fEntity),
    field('Type', fType), field('Job', fJob), field('SU', fSu), field('Pod', fPod), field('Rail', fRail), field('Suppressed', fSuppressed),
    el('button', { type: 'submit', class: 'secondary' }, 'Filter'), el('a', { href: '#/alarms' }, 'Clear filters'));
  filterForm.addEventListener('submit', (ev) => {
    ev.preventDefault();
    navigate(alarmsHash({ severity: fSeverity.value, istate: fIstate.value, astate: fAstate.value, entity: fEntity.value.trim(),
      type: fType.value.trim(), job: fJob.value.trim(), suppressed: fSuppressed.value, su: fSu.value, pod: fPod.value, rail: fRail.value }));
  });
  const live = el('p', { id: 'live', class: 'note', role: 'status', 'data-deltas': '0' }, 'Live updates: connecting…');
  main.append(filterForm, live);

  const commentInput = el('input', { id: 'ack-comment', placeholder: 'optional' });
  const ackSelected = el('button', { type: 'button', id: 'ack-selected' }, 'Acknowledge selected');
  const ackForm = el('form', { class: 'inline', 'aria-label': 'Acknowledgement' },
    field('Comment for acknowledgements', commentInput), ackSelected);
  ackForm.addEventListener('submit', (ev) => ev.preventDefault());
  main.append(ackForm);
  const incidentSection = el('section', { 'aria-labelledby': 'incidents-title' });
  const alarmSection = el('section', { 'aria-labelledby': 'alarms-title' });
  const silenceSection = el('section', { 'aria-labelledby': 'silences-title' });
  // The changes the streams brought while the page is open, newest first (`cleared` is the recovery notice).
  const feed = el('ol', { id: 'change-feed', class: 'feed', reversed: true });
  const feedSection = el('section', { 'aria-labelledby': 'feed-title' }, el('h2', { id: 'feed-title' }, 'Changes while this page is open'),
    el('p', { class: 'note' }, 'Alarm and incident changes as they arrive (“cleared” is the recovery notice).'), feed);
  main.append(incidentSection, alarmSection, feedSection, silenceSection);
  // Stream messages only update the page's model; the DOM follows once per animation frame (the feed and
  // the counter of applied changes) and the tables at the redraw's pace (below), so that a storm of a
  // thousand changes a second costs the page a map update per message, not a DOM mutation.
  const MAX_FEED = 20;
  let feedPending: string[] = [];  // newest last, at most MAX_FEED
  let applied = 0;                 // changes taken from the alarm stream (read by bench/dashboard)
  let frame: number | undefined;
  const paint = (): void => {
    frame = undefined;
    if (feedPending.length > 0) {
      feed.prepend(...feedPending.reverse().map((text) => el('li', {}, text)));
      feedPending = [];
      while (feed.children.length > MAX_FEED) feed.lastElementChild?.remove();
    }
    live.dataset['deltas'] = String(applied);
  };
  const note = (at: string, text: string): void => {
    feedPending.push(`${shortTime(at)} ${text}`);
    if (feedPending.length > MAX_FEED) feedPending.splice(0, feedPending.length - MAX_FEED);
    if (frame === undefined) frame = window.requestAnimationFrame(paint);
  };

  const acknowledge = (ids: string[], what: string): void => {
    clearError();
    if (ids.length === 0) {
      showError(new Error('Nothing to acknowledge: select active alarms first.'));
      return;
    }
    const comment = commentInput.value.trim();
    const body = comment ? { comment } : {};
    const done = ids.length === 1
      ? post<Alarm>(`/api/v1/alarms/${encodeURIComponent(ids[0] ?? '')}/ack`, body).then((a) => [a])
      : post<{ items: Alarm[] }>('/api/v1/alarms/ack', { ids, ...body }).then((r) => r.items);
    void done.then((items) => {
      for (const a of items) {
        alarms.set(a.id, a);
        selected.delete(a.id);
      }
      draw();
      setStatus(`Acknowledged ${what}`);
    }, (e: unknown) => showError(e));
  };
  ackSelected.addEventListener('click', () => {
    const ids = [...selected].filter((id) => { const a = alarms.get(id); return a && active(a); });
    acknowledge(ids, `${ids.length} selected alarms`);
  });

  const incidentOf = (): Map<string, Incident> => {
    const m = new Map<string, Incident>();
    for (const i of incidents.values()) for (const id of i.alarms) m.set(id, i);
    return m;
  };

  const draw = (): void => {
    const byAlarm = incidentOf();
    const jobOk = (i: Incident | undefined): boolean =>
      !f.job || !!i?.affected_jobs.some((j) => j.name === f.job || j.job_id === f.job);
    const shownAlarms = [...alarms.values()].filter((a) => alarmMatches(a, f, entityRe, domains) && jobOk(byAlarm.get(a.id))
      && (!f.istate || byAlarm.get(a.id)?.state === f.istate));
    const shownIncidents = [...incidents.values()].filter((i) => jobOk(i)
      && (!alarmFiltered(f) || i.alarms.some((id) => { const a = alarms.get(id); return a ? alarmMatches(a, f, entityRe, domains) : false; })))
      .sort((a, b) => b.last_seen_ms - a.last_seen_ms);

    // Incidents (the newest MAX_ROWS drawn: an alarm storm must not make each redraw build thousands of rows).
    const incidentRows: Cell[][] = shownIncidents.slice(0, MAX_ROWS).map((i) => {
      const its = i.alarms.map((id) => alarms.get(id)).filter((a): a is Alarm => !!a);
      const worst = its.reduce((w, a) => (severityLevel(a.severity) > severityLevel(w) ? a.severity : w), '');
      const flapping = its.some((a) => a.flapping);
      const suppressed = its.filter((a) => a.suppressed).length;
      const openIds = its.filter((a) => active(a) && a.state !== 'acknowledged').map((a) => a.id);
      const top = i.root_causes[0];
      const ack = el('button', { type: 'button', class: 'secondary', 'data-incident': i.id, disabled: openIds.length === 0,
        'aria-label': `Acknowledge all (${openIds.length}) alarms of ${i.id}` }, `Acknowledge all (${openIds.length})`);
      ack.addEventListener('click', () => acknowledge(openIds, `the ${openIds.length} alarms of ${i.id}`));
      return [
        el('a', { href: `#/incident/${encodeURIComponent(i.id)}` }, i.id),
        el('span', { class: `istate istate-${i.state}` }, i.state),
        worst ? severityBadge(worst) : '—',
        String(i.alarm_count),
        shortTime(i.first_seen), shortTime(i.last_seen),
        flapping ? el('span', { class: 'flapping' }, '⚑ flapping') : 'no',
        suppressed ? `${suppressed} suppressed` : '—',
        top ? `${top.entity} (${top.fault_type}, ${Math.round(top.score * 100)} %)` : '—',
        i.affected_jobs.length ? i.affected_jobs.map((j) => `${j.name} [${j.ranks.join(',')}]`).join(' ') : '—',
        ack,
      ];
    });
    const it = table(`Incidents: related alarms grouped, newest first${shownIncidents.length > MAX_ROWS ? ` (the newest ${MAX_ROWS} of ${shownIncidents.length})` : ''}`, ['incident', 'state', 'worst severity', 'alarms', 'first seen', 'last seen', 'flapping', 'suppressed', 'top root cause', 'affected jobs (ranks)', 'actions'],
      incidentRows, 'No incident matches.');
    it.id = 'incident-table';
    incidentSection.replaceChildren(el('h2', { id: 'incidents-title' }, `Incidents (${shownIncidents.length})`), it);

    // Alarms.
    const alarmRows: Cell[][] = shownAlarms.sort((a, b) => b.last_seen_ms - a.last_seen_ms).slice(0, MAX_ROWS).map((a) => {
      const inc = byAlarm.get(a.id);
      const box = el('input', { type: 'checkbox', 'aria-label': `Select alarm ${a.entity} ${a.type}`, 'data-alarm': a.id, disabled: !active(a), checked: selected.has(a.id) });
      box.addEventListener('change', () => { if (box.checked) selected.add(a.id); else selected.delete(a.id); });
      const ack = el('button', { type: 'button', class: 'secondary', 'data-alarm': a.id, disabled: !active(a), 'aria-label': `Acknowledge alarm ${a.entity} ${a.type}` }, 'Acknowledge');
      ack.addEventListener('click', () => acknowledge([a.id], `${a.entity} ${a.type}`));
      const state = el('span', { class: `astate astate-${a.state}` }, a.state,
        a.suppressed ? el('span', { class: 'suppressed' }, ` · suppressed${a.silence_id ? ` by ${a.silence_id}` : ''}`) : null);
      return [box, severityBadge(a.severity), state, a.entity, `${a.type} (${a.fault})`,
        inc ? el('a', { href: `#/incident/${encodeURIComponent(inc.id)}` }, inc.id) : '—',
        shortTime(a.first_seen), shortTime(a.last_seen), a.count, a.flapping ? el('span', { class: 'flapping' }, '⚑ flapping') : 'no',
        a.acknowledged_by ? `${a.acknowledged_by} at ${shortTime(a.acknowledged_at)}${a.comment ? `: “${a.comment}”` : ''}` : '—',
        a.detail, ack];
    });
    const at = table(`Alarms, newest first (suppressed ones are listed, marked “suppressed”)${shownAlarms.length > MAX_ROWS ? `: the newest ${MAX_ROWS} of ${shownAlarms.length}` : ''}`, ['select', 'severity', 'state', 'entity', 'type (fault)', 'incident', 'first seen', 'last seen', 'count', 'flapping', 'acknowledged', 'detail', 'actions'],
      alarmRows, 'No alarm matches.');
    at.id = 'alarm-table';
    alarmSection.replaceChildren(el('h2', { id: 'alarms-title' }, `Alarms (${shownAlarms.length})`), at);

    // Silences.
    const silenceRows: Cell[][] = silences.map((s) => {
      const remove = el('button', { type: 'button', class: 'danger', 'aria-label': `Delete silence ${s.id}` }, 'Delete');
      remove.addEventListener('click', () => {
        clearError();
        void del(`/api/v1/silences/${encodeURIComponent(s.id)}`).then(() => refresh(`Silence ${s.id} deleted`), (e: unknown) => showError(e));
      });
      return [s.id, s.entity, s.type, s.regex, s.reason, s.creator, shortTime(s.created), s.expires ? shortTime(s.expires) : 'never', remove];
    });
    const st = table('Silence rules in force', ['id', 'entity', 'type', 'regex', 'reason', 'creator', 'created', 'expires', 'actions'], silenceRows, 'No silence rule.');
    st.id = 'silence-table';
    silenceSection.replaceChildren(el('h2', { id: 'silences-title' }, `Silences (${silences.length})`), st, silenceForm);
    setStatus(`Alarms: ${shownIncidents.length} incidents, ${shownAlarms.length} alarms, ${silences.length} silences`);
  };

  // The silence form; "Silence what matches this filter" fills it from the filter's entity and type.
  const sEntity = el('input', { id: 'silence-entity', placeholder: 'glob, e.g. leaf01/*' });
  const sType = el('input', { id: 'silence-type', placeholder: 'pattern id or fault type' });
  const sRegex = el('input', { id: 'silence-regex', placeholder: 'RE2 over detail and message' });
  const sReason = el('input', { id: 'silence-reason', required: true });
  const sHours = el('input', { id: 'silence-hours', type: 'number', min: '0.1', step: 'any', placeholder: 'never' });
  const fromFilter = el('button', { type: 'button', class: 'secondary', id: 'silence-from-filter' }, 'Silence what matches this filter');
  fromFilter.addEventListener('click', () => {
    clearError();
    if (!f.entity && !f.type) {
      showError(new Error('A silence matches by entity, type or text: filter by entity or type first.'));
      return;
    }
    sEntity.value = f.entity;
    sType.value = f.type;
    sRegex.value = '';
    sReason.focus();
  });
  const silenceForm = el('div', {}, el('h3', { id: 'create-silence' }, 'Create a silence'),
    el('p', { class: 'note' }, 'Matching alarms (now and later) are kept and listed as suppressed, not notified. Severity, state and job filters are not part of a rule.'),
    fromFilter);
  const form = el('form', { class: 'inline', 'aria-labelledby': 'create-silence' },
    field('Entity (glob)', sEntity), field('Type', sType), field('Text (regex)', sRegex), field('Reason', sReason),
    field('Expires in hours', sHours), el('button', { type: 'submit' }, 'Create silence'));
  silenceForm.append(form);
  form.addEventListener('submit', (ev) => {
    ev.preventDefault();
    clearError();
    const body: Record<string, unknown> = { reason: sReason.value.trim() };
    if (sEntity.value.trim()) body['entity'] = sEntity.value.trim();
    if (sType.value.trim()) body['type'] = sType.value.trim();
    if (sRegex.value.trim()) body['regex'] = sRegex.value.trim();
    const hours = Number(sHours.value);
    if (sHours.value && hours > 0) body['expires'] = Date.now() + Math.round(hours * 3600_000);
    void post<Silence>('/api/v1/silences', body).then((s) => {
      sEntity.value = sType.value = sRegex.value = sReason.value = sHours.value = '';
      return refresh(`Silence ${s.id} created`);
    }, (e: unknown) => showError(e));
  });

  const refresh = async (what: string): Promise<void> => {
    try {
      await load();
      draw();
      setStatus(what);
    } catch (e) {
      showError(e);
    }
  };

  draw();

  // Live: changes redraw the tables at most every 250 ms, and never more than a third of the time (a redraw
  // that took 200 ms waits 600 ms for the next), so the stream's messages are always taken up between two
  // redraws; a reopened stream re-reads the lists.
  let pending: number | undefined;
  let lastDrawMs = 0;
  const later = (): void => {
    if (pending !== undefined) return;
    pending = window.setTimeout(() => {
      pending = undefined;
      const t0 = performance.now();
      draw();
      lastDrawMs = performance.now() - t0;
    }, Math.max(250, 3 * lastDrawMs));
  };
  const states = { alarms: false, incidents: false };
  const showLive = (): void => {
    live.textContent = states.alarms && states.incidents ? 'Live updates: connected.' : 'Live updates: reconnecting…';
  };
  const onState = (which: 'alarms' | 'incidents') => (open: boolean, reopened: boolean): void => {
    states[which] = open;
    showLive();
    if (reopened) void refresh('Alarms: re-read after a reconnect');
  };
  const streams: Stream[] = [
    openStream('/api/v1/alarms/stream', (m) => {
      const c = m as AlarmChange;
      if (c.kind !== 'alarm' || !c.item?.id) return;
      alarms.set(c.item.id, c.item);
      applied += 1;
      note(c.at, `alarm ${c.change === 'cleared' ? 'cleared (recovered)' : c.change}: ${c.item.entity} ${c.item.type} (${c.item.severity})${c.actor ? ` by ${c.actor}` : ''}`);
      later();
    }, onState('alarms')),
    openStream('/api/v1/incidents/stream', (m) => {
      const c = m as IncidentChange;
      if (c.kind !== 'incident') return;
      const i = c.item as Incident;
      note(c.change === 'merged' ? new Date().toISOString() : i.last_seen, c.change === 'merged'
        ? `incident ${c.item.id} merged into ${(c.item as { merged_into: string }).merged_into}`
        : `incident ${i.id} ${c.change}: ${i.alarm_count} alarms${i.root_causes[0] ? `, top cause ${i.root_causes[0].entity}` : ''}`);
      if (c.change === 'merged') incidents.delete(c.item.id);
      else if (!f.istate || (c.item as Incident).state === f.istate) incidents.set(c.item.id, c.item as Incident);
      else incidents.delete(c.item.id);
      later();
    }, onState('incidents')),
  ];
  return () => {
    for (const s of streams) s.close();
    if (pending !== undefined) window.clearTimeout(pending);
    if (frame !== undefined) window.cancelAnimationFrame(frame);
  };
}
