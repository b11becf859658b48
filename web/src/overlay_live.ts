// A metric overlay kept current from its grade stream (GET /api/v1/overlays/{id}/stream, the aggregator
// grades), for the matrices and the site view: the stream opens with the layout groups' grades and the
// full grade set, then sends only what changed (link index -> grade and value, device index -> grade,
// group id -> grade) whenever new KPI data landed. Each change is written into the page's grade set, the
// links it names are worded again (gradeLink) and handed to `onDelta` with the devices and groups whose
// grade changed: the page recolours those cells and items in place. A grade set of another topology
// revision than the one drawn makes the page build its view again (`onRebuild`; the stream is closed); a
// full set of the same revision (a reopened stream) is applied as the differences to what is drawn.
import { openStream } from './live';
import { gradeLink, type GradeSet, type GradedLink, type OverlayData } from './overlay';
import { query } from './api';

export interface GradeDelta {
  links: Set<number>; // indices into the graded links whose grade or reading changed
  devices: Map<number, number>; // device id -> new grade
  groups: Map<string, number>; // layout group -> new grade
  changes: number; // link, device and group grades changed by this message
}

interface Changes {
  kind: 'changes';
  revision: number;
  links: { index: number[]; grade: number[]; value: (number | null)[] };
  devices: { index: number[]; grade: number[] };
  groups: { id: string[]; grade: number[] };
}
type Message = ({ kind: 'grades' } & GradeSet) | Changes | { kind: 'groups'; revision: number };

// The differences from `have` to a full set `next` of the same links, as a change message.
function difference(have: GradeSet, next: GradeSet): Changes {
  const out: Changes = { kind: 'changes', revision: next.revision, links: { index: [], grade: [], value: [] },
    devices: { index: [], grade: [] }, groups: { id: [], grade: [] } };
  next.links.grade.forEach((g, i) => {
    const v = next.links.value[i] ?? null;
    if (have.links.grade[i] === g && (have.links.value[i] ?? null) === v) return;
    out.links.index.push(i);
    out.links.grade.push(g);
    out.links.value.push(v);
  });
  next.devices.grade.forEach((g, i) => {
    if (have.devices.grade[i] === g) return;
    out.devices.index.push(i);
    out.devices.grade.push(g);
  });
  next.groups.id.forEach((id, i) => {
    const g = next.groups.grade[i] ?? -1;
    const at = have.groups.id.indexOf(id);
    if (at >= 0 && have.groups.grade[at] === g) return;
    out.groups.id.push(id);
    out.groups.grade.push(g);
  });
  return out;
}

// Follows the overlay's stream for a view drawn from `data` (its grades read with data.upper) and `graded`
// (its links, graded from data). Answers the close function.
export function followGrades(data: OverlayData, graded: GradedLink[], onDelta: (d: GradeDelta) => void,
  onRebuild: () => void, onState: (open: boolean) => void = () => undefined): () => void {
  const have = data.grades;
  if (!have) return () => undefined;
  const gradedOf = new Map(graded.map((g, i) => [g.link.id, i]));
  const apply = (c: Changes): void => {
    const d: GradeDelta = { links: new Set(), devices: new Map(), groups: new Map(), changes: 0 };
    c.links.index.forEach((index, k) => {
      have.links.grade[index] = c.links.grade[k] ?? -1;
      have.links.value[index] = c.links.value[k] ?? null;
      d.changes += 1;
      const at = gradedOf.get(index);
      const g = at === undefined ? undefined : graded[at];
      if (at === undefined || !g) return;
      const regraded = gradeLink(data, g.link, g.lower, g.upper);
      g.level = regraded.level;
      g.text = regraded.text;
      d.links.add(at);
    });
    c.devices.index.forEach((index, k) => {
      const grade = c.devices.grade[k] ?? -1;
      have.devices.grade[index] = grade;
      d.devices.set(index, grade);
      d.changes += 1;
    });
    c.groups.id.forEach((id, k) => {
      const grade = c.groups.grade[k] ?? -1;
      const at = have.groups.id.indexOf(id);
      if (at >= 0) have.groups.grade[at] = grade;
      d.groups.set(id, grade);
      d.changes += 1;
    });
    if (d.changes) onDelta(d);
  };
  let closed = false;
  const upper = data.upper.length ? data.upper.join(',') : undefined;
  const stream = openStream(`/api/v1/overlays/${encodeURIComponent(data.overlay.id)}/stream${query({ upper })}`, (m) => {
    const msg = m as Message;
    if (closed) return;
    if (msg.revision !== have.revision) {
      closed = true;
      stream.close();
      onRebuild();
      return;
    }
    if (msg.kind === 'grades') apply(difference(have, msg));
    else if (msg.kind === 'changes') apply(msg);
  }, (open) => onState(open));
  return () => {
    closed = true;
    stream.close();
  };
}
