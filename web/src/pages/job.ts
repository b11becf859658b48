// Schedule view of a scheduled job (#/job/<name>): its rank placement (a table, and a host × NPU heatmap
// whose cells carry the rank numbers), the predicted step time (planned source ports, random ECMP mean,
// min and max, non-blocking), the widest tier each parallel dimension spans, the request, and its route
// plan as the diagnosis reproduces it (each communicating pair: planned or ECMP, its paths, verdict, worst
// hops). Data: GET /api/v1/jobs/{name}, GET /api/v1/diagnose/job/{id}. Links: the site view with the job's
// hosts marked, its path diagnosis.
import type { PageContext, Cleanup } from '../main';
import { ApiError, get, query } from '../api';
import { el, setStatus, table } from '../dom';
import { makeChart, resizeAll } from '../charts';
import { verdictBadge } from '../brain';
import { siteHash } from './site';

interface Job {
  name: string;
  created_at: string;
  topology_revision: number;
  hosts: string[];
  npus: number;
  framework: string;
  algorithm: string;
  ranks: { rank: number; host: string; npu: number; ip: string }[];
  request: { model: Record<string, number>; parallel: Record<string, number>; algorithm: string; ecmp_seeds?: number };
  schedule: {
    world_size: number;
    npus_per_host: number;
    widest_span: Record<string, string>;
    modelled: boolean;
    predicted_seconds: { planned: number; ecmp_mean: number; ecmp_min: number; ecmp_max: number; non_blocking: number };
  };
}
interface Npu { host: string; npu: number; entity: string }
interface JobDiagnosis {
  route_plan: { used: boolean; note: string };
  verdict: string;
  pairs: { src_rank: number; dst_rank: number; src: Npu; dst: Npu; planned: boolean; paths: number; verdict: string; worst_hops: string[] }[];
}

const MAX_PAIR_ROWS = 500;
const secs = (x: number): string => `${x.toFixed(4)} s`;

export async function renderJob(ctx: PageContext): Promise<Cleanup | void> {
  const { main, path } = ctx;
  const name = path[1] ?? '';
  main.append(el('h1', {}, `Schedule of job ${name}`));
  let job: Job;
  try {
    job = await get<Job>(`/api/v1/jobs/${encodeURIComponent(name)}`);
  } catch (e) {
    if (e instanceof ApiError && e.status === 404) {
      main.append(el('p', {}, 'There is no such job.'), el('a', { href: '#/scheduling' }, 'Scheduling'));
      setStatus(`Job ${name}: not found`);
      return;
    }
    throw e;
  }
  const diag = await get<JobDiagnosis>(`/api/v1/diagnose/job/${encodeURIComponent(name)}`).catch(() => null);
  const p = job.schedule.predicted_seconds;
  main.append(
    el('p', { id: 'job-summary' }, `${job.npus} ranks on ${job.hosts.length} hosts (${job.schedule.npus_per_host} NPUs each), ${job.framework}, ${job.algorithm}; scheduled ${job.created_at} on topology revision ${job.topology_revision}. `,
      el('a', { href: siteHash([], job.hosts, null) }, 'Show its hosts on the site view'), ' · ',
      el('a', { href: `#/diagnose${query({ job: job.name })}` }, 'Diagnose its paths')),
    el('section', { 'aria-labelledby': 'predicted-title' }, el('h2', { id: 'predicted-title' }, 'Predicted step time'),
      job.schedule.modelled
        ? table('Predicted time of one training step', ['route', 'seconds'], [
          ['planned source ports (the route plan)', secs(p.planned)],
          ['random ECMP, mean of the draws', secs(p.ecmp_mean)],
          ['random ECMP, best draw', secs(p.ecmp_min)],
          ['random ECMP, worst draw', secs(p.ecmp_max)],
          ['a non-blocking fabric', secs(p.non_blocking)]])
        : el('p', { class: 'note' }, 'Not modelled: the topology has no spine layer.'),
      table('Widest tier each parallel dimension spans', Object.keys(job.schedule.widest_span), [Object.values(job.schedule.widest_span)]),
      el('p', { class: 'note' }, `Request: model ${Object.entries(job.request.model).map(([k, v]) => `${k} ${v}`).join(', ')}; parallel ${Object.entries(job.request.parallel).map(([k, v]) => `${k} ${v}`).join(', ') || 'none'}.`)));

  // Rank placement: a host × NPU heatmap labelled with the ranks, and the table.
  const npus = [...new Set(job.ranks.map((r) => r.npu))].sort((a, b) => a - b);
  const hostIndex = new Map(job.hosts.map((h, i) => [h, i]));
  const npuIndex = new Map(npus.map((n, i) => [n, i]));
  const data = job.ranks.map((r) => [npuIndex.get(r.npu) ?? 0, hostIndex.get(r.host) ?? 0, r.rank]);
  const box = el('div', { class: 'chart', id: 'placement-chart' });
  const placement = table('Ranks by host and NPU', ['rank', 'host', 'NPU', 'IP'], job.ranks.map((r) => [r.rank, r.host, r.npu, r.ip]));
  placement.id = 'placement-table';
  main.append(el('section', { 'aria-labelledby': 'placement-title' }, el('h2', { id: 'placement-title' }, 'Rank placement'), box, placement));
  const chart = makeChart(box, {
    tooltip: { formatter: (x: { value: number[] }) => `rank ${x.value[2]}: ${job.hosts[x.value[1] ?? 0]} NPU ${npus[x.value[0] ?? 0]}` },
    grid: { left: 90, right: 20, top: 20, bottom: 40 },
    xAxis: { type: 'category', name: 'NPU', data: npus.map((n) => `NPU ${n}`) },
    yAxis: { type: 'category', name: 'host', data: job.hosts },
    visualMap: { show: false, min: 0, max: Math.max(1, job.npus - 1), dimension: 2, inRange: { color: ['#cfe2f3', '#0b5cad'] } },
    series: [{ type: 'heatmap', data, label: { show: job.npus <= 256, color: '#000', backgroundColor: '#fff', padding: 2, formatter: (x: { value: number[] }) => String(x.value[2]) } }],
  }, `Rank placement of job ${job.name}: ${job.npus} ranks on ${job.hosts.length} hosts × ${npus.length} NPUs (listed in the table below)`);

  // Route plan.
  const plan = el('section', { 'aria-labelledby': 'plan-title' }, el('h2', { id: 'plan-title' }, 'Route plan'));
  if (!diag) {
    plan.append(el('p', { class: 'note' }, 'The route plan could not be reproduced (see the path diagnosis).'));
  } else {
    plan.append(el('p', {}, diag.route_plan.used ? 'Reproduced from the job’s stored request: each pair’s queue pairs on their planned paths. ' : `Not from a route plan (${diag.route_plan.note}): ECMP candidates. `,
      'Overall verdict: ', verdictBadge(diag.verdict)));
    const t = table(`Communicating rank pairs${diag.pairs.length > MAX_PAIR_ROWS ? ` (the first ${MAX_PAIR_ROWS} of ${diag.pairs.length})` : ''}`,
      ['ranks', 'from', 'to', 'route', 'paths', 'verdict', 'worst hops'],
      diag.pairs.slice(0, MAX_PAIR_ROWS).map((x) => [`${x.src_rank} → ${x.dst_rank}`, x.src.entity, x.dst.entity, x.planned ? 'planned' : 'ECMP', x.paths, verdictBadge(x.verdict), x.worst_hops.join(', ') || '—']));
    t.id = 'plan-table';
    plan.append(t);
  }
  main.append(plan);
  setStatus(`Job ${job.name}: ${job.npus} ranks, ${diag?.pairs.length ?? 0} pairs`);
  return resizeAll([chart]);
}
