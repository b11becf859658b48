// The network brain's documents as the API answers them (aggregator/openapi.json): alarms, silences,
// incidents and path diagnoses, with the helpers the alarm, incident and diagnosis pages share.
import { el } from './dom';

export interface Alarm {
  id: string;
  fingerprint: string;
  type: string;
  fault: string;
  severity: string;
  entity: string;
  peer: string;
  root_cause: string;
  role: string;
  state: 'raised' | 'acknowledged' | 'cleared';
  suppressed: boolean;
  silence_id: string | null;
  flapping: boolean;
  first_seen: string;
  first_seen_ms: number;
  last_seen: string;
  last_seen_ms: number;
  cleared_at: string | null;
  count: number;
  detail: string;
  message: string;
  acknowledged_by: string | null;
  acknowledged_at: string | null;
  comment: string | null;
}
export interface AlarmHistoryEntry { change: string; at: string; at_ms: number; actor: string; state: string; suppressed: boolean; detail: string; comment: string }
export interface AlarmWithHistory extends Alarm { history: AlarmHistoryEntry[] }
export interface Silence { id: string; entity: string | null; type: string | null; regex: string | null; expires: string | null; creator: string; reason: string; created: string }
export interface RootCause { rank: number; entity: string; kind: string; fault_type: string; score: number; evidence: string[]; symptoms: string[] }
export interface AffectedJob { job_id: string; name: string; ranks: number[] }
export interface Incident {
  id: string;
  state: 'open' | 'resolved';
  first_seen: string;
  first_seen_ms: number;
  last_seen: string;
  last_seen_ms: number;
  alarm_count: number;
  root_causes: RootCause[];
  affected_jobs: AffectedJob[];
  alarms: string[];
  recommended_action: string;
}
export interface AlarmChange { kind: 'alarm'; change: string; at: string; actor: string; item: Alarm }
export interface IncidentChange { kind: 'incident'; change: 'opened' | 'updated' | 'resolved' | 'merged'; item: Incident | { id: string; merged_into: string } }

export const SEVERITIES = ['info', 'warning', 'minor', 'major', 'critical'];
export const severityLevel = (s: string): number => SEVERITIES.indexOf(s);

// A severity as text with a marker (colour is never the only carrier).
export function severityBadge(severity: string): HTMLElement {
  const marks: Record<string, string> = { critical: '‼', major: '!', minor: '▲', warning: '△', info: 'ℹ' };
  return el('span', { class: `sev sev-${severity}` }, `${marks[severity] ?? ''} ${severity}`);
}

export function verdictBadge(verdict: string): HTMLElement {
  const marks: Record<string, string> = { ok: '✔', unknown: '?', degraded: '▲', faulty: '✘' };
  return el('span', { class: `verdict verdict-${verdict}` }, `${marks[verdict] ?? ''} ${verdict}`);
}

// A time as the API writes it, shortened for tables ("2026-12-02 05:07:56Z").
export function shortTime(iso: string | null | undefined): string {
  if (!iso) return '—';
  return iso.replace('T', ' ').replace(/\.\d+Z$/, 'Z');
}

// The silence rules' glob (`*`, `?`, `[a-z]`) as a RegExp over the whole name.
export function globRegExp(glob: string): RegExp {
  let re = '';
  for (let i = 0; i < glob.length; ++i) {
    const c = glob.charAt(i);
    if (c === '*') re += '.*';
    else if (c === '?') re += '.';
    else if (c === '[') {
      const end = glob.indexOf(']', i + 1);
      if (end < 0) re += '\\[';
      else {
        re += `[${glob.slice(i + 1, end).replace(/\\/g, '\\\\')}]`;
        i = end;
      }
    } else re += c.replace(/[.+^${}()|\\/]/g, '\\$&');
  }
  return new RegExp(`^${re}$`);
}

// The plain entities an entity id names: itself without a kind prefix, or a link id's two ends
// ("link:host001/eth0|leaf000/Eth1/1" -> both ports).
export function entityParts(entity: string): string[] {
  return entity.replace(/^(link|device|module):/, '').split('|');
}

// The device an entity names ("leaf000/Eth1/1" -> "leaf000"); a link id names both ends' devices.
export function entityDevices(entity: string): string[] {
  return entityParts(entity).map((e) => e.split('/')[0] ?? '').filter(Boolean);
}
