// Path diagnosis (#/diagnose?src=<host>/<npu>&dst=<host>/<npu> or #/diagnose?job=<name>): every hop (NPU
// port, leaf, spine, leaf, NPU port) of the pair's paths, or of every communicating pair of a job, with
// its KPIs (newest sample of each series, its age), the alarms active on it and its verdict
// (GET /api/v1/diagnose/path, GET /api/v1/diagnose/job/{id}). The URL holds the question. A job's answer
// also draws its rank × rank matrix (ECharts heatmap): a cell per communicating pair of its collective
// pattern (route plan, or the ring), blank where ranks exchange nothing, coloured by a choice (select
// #matrix-measure, URL `matrix=traffic`): the pair's verdict, or the bytes the row's rank sent to the
// column's rank in the answer's traffic window (the aggregator sums the reported flows per pair; a pair
// without any is "no flow data", not zero). A text line under it says what the colour means.
import type { PageContext, Cleanup } from '../main';
import { makeChart, resizeAll, type Chart } from '../charts';
import { navigate } from '../main';
import { get, query } from '../api';
import { clearError, el, field, setStatus, showError, stateBadge, table, type Cell } from '../dom';
import { severityBadge, verdictBadge } from '../brain';

interface Npu { host: string; npu: number; port: string; entity: string }
interface Kpi { entity: string; metric: string; value: number; ts: string; ts_ms: number; age_ms: number; fresh: boolean }
interface HopAlarm { id: string; type: string; severity: string; entity: string; detail: string }
interface Hop {
  id: string; kind: 'link' | 'switch'; entities: string[]; state: string; verdict: string; reasons: string[];
  kpis: Kpi[]; alarms: HopAlarm[]; tier: string; bandwidth_gbps?: number; pairs?: number; src_ranks?: number[];
}
type Verdicts = Record<string, number>;
interface PathAnswer {
  src: Npu; dst: Npu; generated_at: string; topology_revision: number;
  route: { source: string; job: string; note: string }; verdict: string; worst_hops: string[];
  paths: { hops: string[]; verdict: string }[]; truncated: boolean; summary: { hops: number; hop_verdicts: Verdicts }; hops: Hop[];
}
interface PairTraffic { bytes: number; packets: number; flows: number }
interface JobAnswer {
  job: string; ranks: number; generated_at: string; route_plan: { used: boolean; note: string }; verdict: string;
  traffic: { window_s: number; since: string; since_ms: number; available: boolean; flows: number; note: string };
  summary: { pairs: number; pairs_truncated: boolean; pair_verdicts: Verdicts; hops: number; hop_verdicts: Verdicts;
    worst: { id: string; verdict: string; pairs: number; reasons: string[] }[] };
  pairs: { src_rank: number; dst_rank: number; src: Npu; dst: Npu; planned: boolean; paths: number; truncated: boolean; note: string; verdict: string; worst_hops: string[]; traffic: PairTraffic | null }[];
  hops: Hop[];
}

const ORDER = ['faulty', 'degraded', 'unknown', 'ok'];
const verdictCounts = (v: Verdicts): string => ORDER.map((k) => `${v[k] ?? 0} ${k}`).join(', ');
const fmt = (x: number): string => (Math.abs(x) >= 1e6 || (x !== 0 && Math.abs(x) < 1e-3) ? x.toExponential(3) : String(Math.round(x * 1000) / 1000));

const MAX_HOP_ROWS = 2000;

const VERDICT_PIECES = [
  { value: 0, label: 'ok', color: '#1a7f37' },
  { value: 1, label: 'unknown', color: '#6e7781' },
  { value: 2, label: 'degraded', color: '#9a6700' },
  { value: 3, label: 'faulty', color: '#b42318' },
];
const verdictValue = (v: string): number => VERDICT_PIECES.find((p) => p.label === v)?.value ?? 1;

// Bytes in decimal units, three significant digits ("1.05 MB").
const UNITS = ['B', 'kB', 'MB', 'GB', 'TB', 'PB'];
export function fmtBytes(n: number): string {
  let i = 0;
  let v = n;
  while (v >= 1000 && i < UNITS.length - 1) {
    v /= 1000;
    ++i;
  }
  return i === 0 ? `${n} B` : `${v.toPrecision(3)} ${UNITS[i]}`;
}
const trafficText = (t: PairTraffic | null): string => (t ? `${fmtBytes(t.bytes)} (${t.flows} flow${t.flows === 1 ? '' : 's'})` : 'no flow data');
const windowText = (s: number): string => (s % 3600 === 0 ? `${s / 3600} h` : s % 60 === 0 ? `${s / 60} min` : `${s} s`);

// Traffic cells: -1 no flow data, else bytes, in decimal bins.
const TRAFFIC_PIECES = [
  { value: -1, label: 'no flow data', color: '#d0d7de' },
  { min: 0, max: 999_999, label: '< 1 MB', color: '#cfe2f3' },
  { min: 1e6, max: 1e9 - 1, label: '1 MB – 1 GB', color: '#6fa8dc' },
  { min: 1e9, max: 1e11 - 1, label: '1 GB – 100 GB', color: '#0b5cad' },
  { min: 1e11, label: '≥ 100 GB', color: '#073763' },
];

type Measure = 'verdict' | 'traffic';

// What the matrix's colour means, in words (under the chart).
function matrixLegend(r: JobAnswer, measure: Measure): string {
  if (measure === 'verdict') {
    return 'Colour: the verdict of the pair’s paths (ok, unknown, degraded, faulty); blank: the ranks exchange nothing in the job’s collective pattern.';
  }
  if (!r.traffic.available) return `Traffic volumes are not available: ${r.traffic.note}. Every pair shows “no flow data”.`;
  const withData = r.pairs.filter((p) => p.traffic);
  const total = withData.reduce((sum, p) => sum + (p.traffic?.bytes ?? 0), 0);
  return `Colour: the bytes the row’s rank (from) sent to the column’s rank (to) in the last ${windowText(r.traffic.window_s)} (since ${r.traffic.since}), one direction: the flows the hosts reported from the first rank’s NPU addresses to the second’s, each flow counted once; “no flow data”: no flow of the pair was reported (not zero); blank: not a communicating pair. ${withData.length} of ${r.pairs.length} pairs have flow data, ${fmtBytes(total)} in all.`;
}

function matrixOption(r: JobAnswer, measure: Measure): Record<string, unknown> {
  const ranks = [...Array(r.ranks).keys()].map(String);
  const traffic = measure === 'traffic';
  const data = r.pairs.map((p) => (traffic ? [p.dst_rank, p.src_rank, p.traffic?.bytes ?? -1, p.traffic?.flows ?? 0] : [p.dst_rank, p.src_rank, verdictValue(p.verdict), p.paths]));
  return {
    tooltip: {
      formatter: (p: { value: number[] }) => {
        const [d, s, v, n] = p.value;
        if (traffic) return `rank ${s} → rank ${d}: ${v !== undefined && v >= 0 ? `${fmtBytes(v)} in ${n} flow(s)` : 'no flow data'}`;
        return `rank ${s} → rank ${d}: ${VERDICT_PIECES[v ?? 1]?.label ?? ''}, ${n} path(s)`;
      },
    },
    grid: { left: 60, right: 20, top: 20, bottom: 90 },
    xAxis: { type: 'category', name: 'to rank', data: ranks },
    yAxis: { type: 'category', name: 'from rank', data: ranks },
    visualMap: { type: 'piecewise', dimension: 2, orient: 'horizontal', left: 'center', bottom: 0, pieces: traffic ? TRAFFIC_PIECES : VERDICT_PIECES },
    dataZoom: r.ranks > 64 ? [{ type: 'inside', xAxisIndex: 0, yAxisIndex: 0 }, { type: 'slider', yAxisIndex: 0 }] : [],
    series: [{ type: 'heatmap', data, progressive: 5000 }],
  };
}

const matrixLabel = (r: JobAnswer, measure: Measure): string => `Rank × rank matrix of job ${r.job}: ${r.pairs.length} communicating pairs of ${r.ranks} ranks, ${measure === 'traffic'
  ? `coloured by the bytes sent in the last ${windowText(r.traffic.window_s)}, ${r.pairs.filter((p) => p.traffic).length} with flow data`
  : `coloured by verdict, ${verdictCounts(r.summary.pair_verdicts)}`} (the pairs are listed in the table below)`;

// The rank × rank matrix of a job's communicating pairs, with its measure chooser and its legend line.
function rankMatrix(r: JobAnswer, container: HTMLElement, chooser: HTMLSelectElement, legend: HTMLElement, initial: Measure): Chart {
  container.dataset['cells'] = String(r.pairs.length);
  container.dataset['trafficCells'] = String(r.pairs.filter((p) => p.traffic).length);
  const show = (measure: Measure): void => {
    container.dataset['measure'] = measure;
    container.setAttribute('aria-label', matrixLabel(r, measure));
    legend.textContent = matrixLegend(r, measure);
  };
  chooser.value = initial;
  show(initial);
  const chart = makeChart(container, matrixOption(r, initial), matrixLabel(r, initial));
  chooser.addEventListener('change', () => {
    const measure: Measure = chooser.value === 'traffic' ? 'traffic' : 'verdict';
    chart.setOption({ aria: { enabled: true }, animation: false, ...matrixOption(r, measure) }, { notMerge: true });
    show(measure);
    // The choice goes into the URL (bookmarkable) without a new diagnosis: replaceState fires no hashchange.
    const [path, q] = location.hash.split('?', 2);
    const params = new URLSearchParams(q ?? '');
    if (measure === 'traffic') params.set('matrix', 'traffic');
    else params.delete('matrix');
    history.replaceState(null, '', `${path ?? ''}${params.toString() ? `?${params.toString()}` : ''}`);
  });
  return chart;
}

function hopTable(caption: string, all: Hop[], withPairs: boolean): HTMLElement {
  const hops = all.slice(0, MAX_HOP_ROWS);
  if (all.length > hops.length) caption += ` (the first ${MAX_HOP_ROWS} of ${all.length})`;
  const rows: Cell[][] = hops.map((h) => {
    const kpis = h.kpis.length
      ? el('ul', { class: 'compact' }, ...h.kpis.map((k) => el('li', {}, `${k.entity} ${k.metric} = ${fmt(k.value)} (${Math.round(k.age_ms / 1000)} s ago${k.fresh ? '' : ', stale'})`)))
      : 'no sample';
    const alarms = h.alarms.length
      ? el('ul', { class: 'compact' }, ...h.alarms.map((a) => el('li', {}, severityBadge(a.severity), ` ${a.type} on ${a.entity}`)))
      : 'none';
    const row: Cell[] = [h.id, h.kind === 'link' ? `link ${h.tier}${h.bandwidth_gbps ? `, ${h.bandwidth_gbps} Gb/s` : ''}` : `switch (${h.tier})`,
      stateBadge(h.state), verdictBadge(h.verdict), el('ul', { class: 'compact' }, ...h.reasons.map((r) => el('li', {}, r))), kpis, alarms];
    if (withPairs) row.push(`${h.pairs ?? 0}${h.src_ranks?.length ? ` (from ranks ${h.src_ranks.join(',')})` : ''}`);
    return row;
  });
  const t = table(caption, ['hop', 'kind', 'topology state', 'verdict', 'why', 'KPIs (newest sample)', 'active alarms', ...(withPairs ? ['pairs crossing'] : [])], rows, 'No hop.');
  t.id = 'hop-table';
  return t;
}

export async function renderDiagnose(ctx: PageContext): Promise<Cleanup | void> {
  const { main, params } = ctx;
  const src = params.get('src') ?? '';
  const dst = params.get('dst') ?? '';
  const job = params.get('job') ?? '';
  main.append(el('h1', {}, 'Path diagnosis'),
    el('p', { class: 'note' }, 'Every hop between two NPU ports (host/NPU index or host/port, e.g. host001/0 or host001/eth0), or of every communicating pair of a registered job, with its evidence and verdict.'));

  const jobs = await get<{ items: { name: string; hosts: string[]; npus: number }[] }>('/api/v1/jobs').catch(() => ({ items: [] }));
  const srcInput = el('input', { id: 'diag-src', value: src, required: true, placeholder: 'host001/0' });
  const dstInput = el('input', { id: 'diag-dst', value: dst, required: true, placeholder: 'host005/0' });
  const pairForm = el('form', { class: 'inline', 'aria-label': 'Diagnose a pair of NPUs' },
    field('Source NPU', srcInput), field('Destination NPU', dstInput), el('button', { type: 'submit' }, 'Diagnose the path'));
  pairForm.addEventListener('submit', (ev) => {
    ev.preventDefault();
    navigate(`#/diagnose${query({ src: srcInput.value.trim(), dst: dstInput.value.trim() })}`);
  });
  const jobInput = jobs.items.length
    ? el('select', { id: 'diag-job' }, ...jobs.items.map((j) => el('option', { value: j.name, selected: j.name === job }, `${j.name} (${j.npus} NPUs on ${j.hosts.length} hosts)`)))
    : el('input', { id: 'diag-job', value: job, required: true, placeholder: 'job name' });
  const jobForm = el('form', { class: 'inline', 'aria-label': 'Diagnose a job' }, field('Job', jobInput), el('button', { type: 'submit' }, 'Diagnose the job'));
  jobForm.addEventListener('submit', (ev) => {
    ev.preventDefault();
    navigate(`#/diagnose${query({ job: jobInput.value.trim() })}`);
  });
  const result = el('section', { id: 'diag-result', 'aria-labelledby': 'diag-title' });
  main.append(pairForm, jobForm, result);

  try {
    clearError();
    if (src && dst) {
      const r = await get<PathAnswer>(`/api/v1/diagnose/path${query({ src, dst })}`);
      const hopsById = new Map(r.hops.map((h) => [h.id, h]));
      result.append(el('h2', { id: 'diag-title' }, `${r.src.entity} → ${r.dst.entity}: `, verdictBadge(r.verdict)),
        el('p', {}, `Route: ${r.route.source === 'plan' ? `the route plan of job ${r.route.job}` : 'every ECMP candidate'}${r.route.note ? ` (${r.route.note})` : ''}; ${r.paths.length} paths${r.truncated ? ' (truncated)' : ''}, ${r.summary.hops} hops: ${verdictCounts(r.summary.hop_verdicts)}. Generated ${r.generated_at}.`),
        r.worst_hops.length ? el('p', {}, `Worst hops: ${r.worst_hops.join(', ')}`) : '',
        table(`Paths, hop by hop${r.paths.length > 64 ? ` (the first 64 of ${r.paths.length})` : ''}`, ['path', 'verdict', 'hops'], r.paths.slice(0, 64).map((p, i) => [String(i + 1), verdictBadge(p.verdict),
          p.hops.map((id) => `${id} [${hopsById.get(id)?.verdict ?? '?'}]`).join(' → ')])),
        hopTable('Every hop with its evidence', r.hops, false));
      setStatus(`Diagnosis: path ${r.verdict}, ${r.summary.hops} hops`);
    } else if (job) {
      const r = await get<JobAnswer>(`/api/v1/diagnose/job/${encodeURIComponent(job)}`);
      const matrixBox = el('div', { class: 'chart', id: 'rank-matrix' });
      const chooser = el('select', { id: 'matrix-measure' },
        el('option', { value: 'verdict' }, 'verdict of the paths'),
        el('option', { value: 'traffic' }, `traffic (bytes in the last ${windowText(r.traffic.window_s)})`));
      const legend = el('p', { class: 'note', id: 'rank-matrix-legend' });
      result.append(el('h2', { id: 'diag-title' }, `Job ${r.job} (${r.ranks} ranks): `, verdictBadge(r.verdict)),
        el('p', {}, `${r.summary.pairs} communicating pairs${r.summary.pairs_truncated ? ' (truncated)' : ''}: ${verdictCounts(r.summary.pair_verdicts)}; ${r.summary.hops} hops: ${verdictCounts(r.summary.hop_verdicts)}. ${r.route_plan.used ? 'From the job’s route plan.' : `Not from a route plan: ${r.route_plan.note}`} `,
          el('a', { href: `#/job/${encodeURIComponent(r.job)}` }, `Schedule view of ${r.job}`)),
        el('h3', {}, 'Rank × rank traffic'),
        el('p', { class: 'note' }, 'A cell per pair of ranks that exchange traffic in the job’s collective pattern; blank: no traffic between them.'),
        el('form', { class: 'inline', 'aria-label': 'Colour of the rank matrix' }, field('Colour the matrix by ', chooser)),
        matrixBox, legend,
        table(`Rank pairs, worst first${r.pairs.length > 500 ? ` (the first 500 of ${r.pairs.length})` : ''}`, ['ranks', 'from', 'to', 'verdict', 'paths', `traffic (last ${windowText(r.traffic.window_s)})`, 'worst hops', 'path diagnosis'], [...r.pairs].sort((a, b) => ORDER.indexOf(a.verdict) - ORDER.indexOf(b.verdict)).slice(0, 500).map((p) => [
          `${p.src_rank} → ${p.dst_rank}`, p.src.entity, p.dst.entity, verdictBadge(p.verdict), `${p.paths}${p.planned ? ' planned' : ' ECMP'}`, trafficText(p.traffic),
          p.worst_hops.join(', ') || '—',
          el('a', { href: `#/diagnose${query({ src: `${p.src.host}/${p.src.npu}`, dst: `${p.dst.host}/${p.dst.npu}` })}` }, `Diagnose ${p.src_rank} → ${p.dst_rank}`)])),
        hopTable('Unique hops of the job’s paths, worst first', r.hops, true));
      const chart = rankMatrix(r, matrixBox, chooser, legend, params.get('matrix') === 'traffic' ? 'traffic' : 'verdict');
      setStatus(`Diagnosis: job ${r.verdict}, ${r.summary.pairs} pairs, ${r.summary.hops} hops`);
      return resizeAll([chart]);
    } else {
      setStatus('Diagnosis: form');
    }
  } catch (e) {
    showError(e);
    setStatus('Diagnosis: failed');
  }
}
