// The alarm overlay kept current from the alarm stream (GET /api/v1/alarms/stream), for the site view and
// the matrices: each change moves one alarm in or out of the active set, and only the links whose port
// entities or devices that alarm names are graded again, so a page recolours the cells and items that
// changed instead of re-reading the topology and redrawing. On every (re)open of the stream the newest
// 1,000 alarms are read again (what changed while it was closed, or before it opened), and the difference
// is applied the same way. Changes are applied at most every 250 ms (the alarm view's pace).
import { get, query } from './api';
import { severityLevel, type Alarm, type AlarmChange } from './brain';
import { openStream } from './live';
import { gradeLink, type GradedLink, type OverlayData } from './overlay';

// An alarm counts in the overlay while raised or acknowledged and not suppressed; its level is 1 + the
// severity index (the alarm overlay's pieces).
export const alarmLevel = (a: Alarm): number => 1 + severityLevel(a.severity);
const activeNow = (a: Alarm): boolean => !a.suppressed && a.state !== 'cleared';

// The active alarms by id and, per key (a port entity or a device name), the levels of the alarms naming it.
export class AlarmLevels {
  private readonly alarms = new Map<string, { keys: string[]; level: number }>();
  private readonly perKey = new Map<string, Map<string, number>>();

  constructor(list: Alarm[] = []) {
    for (const a of list) this.apply(a);
  }

  // Takes an alarm's new state; answers the keys whose level may have changed.
  apply(a: Alarm): string[] {
    const touched = new Set<string>();
    const old = this.alarms.get(a.id);
    if (old) {
      for (const k of old.keys) {
        touched.add(k);
        const m = this.perKey.get(k);
        m?.delete(a.id);
        if (m && m.size === 0) this.perKey.delete(k);
      }
      this.alarms.delete(a.id);
    }
    if (activeNow(a)) {
      const keys = [...new Set([a.entity, a.peer].filter(Boolean))];
      const level = alarmLevel(a);
      this.alarms.set(a.id, { keys, level });
      for (const k of keys) {
        touched.add(k);
        let m = this.perKey.get(k);
        if (!m) this.perKey.set(k, (m = new Map()));
        m.set(a.id, level);
      }
    }
    return [...touched];
  }

  level(key: string): number {
    let level = 0;
    for (const v of this.perKey.get(key)?.values() ?? []) level = Math.max(level, v);
    return level;
  }

  keys(): string[] {
    return [...this.perKey.keys()];
  }
}

// The keys a link's alarm grade reads (overlay.ts gradeLink): its two port entities and its two devices.
export const linkAlarmKeys = (g: GradedLink): string[] =>
  [`${g.lower.name}/${g.link.source_port}`, `${g.upper.name}/${g.link.target_port}`, g.lower.name, g.upper.name];

export interface AlarmDelta {
  links: Set<number>; // indices into the graded links whose level changed
  changes: number; // alarm changes applied since the last delta
}

// Follows the stream for an alarm overlay shown now (not a replayed time): keeps `data.alarms` and the
// graded links current and hands each batch of changed links to `onDelta`. Answers the close function.
export function followAlarmOverlay(data: OverlayData, graded: GradedLink[], onDelta: (d: AlarmDelta) => void,
  onState: (open: boolean) => void = () => undefined): () => void {
  const byKey = new Map<string, number[]>();
  graded.forEach((g, i) => {
    for (const k of linkAlarmKeys(g)) {
      const list = byKey.get(k);
      if (list) list.push(i);
      else byKey.set(k, [i]);
    }
  });
  let levels = new AlarmLevels(data.alarmList);
  let touched = new Set<string>();
  let changes = 0;
  let timer: number | undefined;
  let closed = false;
  const flush = (): void => {
    timer = undefined;
    if (closed) return;
    const links = new Set<number>();
    for (const k of touched) {
      const level = levels.level(k);
      if (level > 0) data.alarms.set(k, level);
      else data.alarms.delete(k);
      for (const i of byKey.get(k) ?? []) {
        const g = graded[i];
        if (!g) continue;
        const next = gradeLink(data, g.link, g.lower, g.upper);
        if (next.level !== g.level || next.text !== g.text) {
          g.level = next.level;
          g.text = next.text;
          links.add(i);
        }
      }
    }
    touched = new Set();
    const applied = changes;
    changes = 0;
    onDelta({ links, changes: applied });
  };
  const later = (): void => {
    if (timer === undefined) timer = window.setTimeout(flush, 250);
  };
  const resync = async (): Promise<void> => {
    const list = await get<{ items: Alarm[] }>(`/api/v1/alarms${query({ limit: 1000 })}`);
    if (closed) return;
    for (const k of levels.keys()) touched.add(k);
    levels = new AlarmLevels(list.items);
    for (const k of levels.keys()) touched.add(k);
    later();
  };
  const stream = openStream('/api/v1/alarms/stream', (m) => {
    const c = m as AlarmChange;
    if (c.kind !== 'alarm' || !c.item?.id) return;
    for (const k of levels.apply(c.item)) touched.add(k);
    changes += 1;
    later();
  }, (open) => {
    onState(open);
    // Every open re-reads: changes made before the stream opened (or while it was closed) are not sent.
    if (open) void resync().catch(() => undefined);
  });
  return () => {
    closed = true;
    stream.close();
    if (timer !== undefined) window.clearTimeout(timer);
  };
}
