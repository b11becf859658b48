// Scheduling: the topology search form (POST /api/v1/topology/search); the ranked answers are listed and
// each opens the site view with its hosts marked. URL state: the form's values, so a search is bookmarkable.
import type { PageContext, Cleanup } from '../main';
import { navigate } from '../main';
import { get, post } from '../api';
import { clearError, el, field, setStatus, showError, table } from '../dom';
import { siteHash } from './site';

interface Candidate { rank: number; hosts: { name: string; npus: number[] }[]; total_seconds: number; job_span: string; explanation: string }
interface SearchAnswer { hosts_needed: number; usable_hosts: number; candidates_evaluated: number; candidates: Candidate[] }

const FIELDS: [string, string, string][] = [
  ['parameters', 'Model parameters', '1000000000'],
  ['layers', 'Layers', '8'],
  ['hidden', 'Hidden size', '2048'],
  ['heads', 'Attention heads', '16'],
  ['seq_len', 'Sequence length', '2048'],
  ['micro_batch', 'Micro-batch', '1'],
  ['global_batch', 'Global batch', '64'],
];
const PARALLEL: [string, string, string][] = [
  ['tp', 'Tensor parallel (tp)', '2'],
  ['pp', 'Pipeline parallel (pp)', '1'],
  ['dp', 'Data parallel (dp)', '2'],
];

export async function renderScheduling(ctx: PageContext): Promise<Cleanup | void> {
  const { main, params } = ctx;
  main.append(el('h1', {}, 'Scheduling: topology search'),
    el('p', { class: 'note' }, 'Where would a job of this shape run best? The answers are ranked by predicted step time; open one on the site view.'));
  const inputs = new Map<string, HTMLInputElement>();
  const mk = ([key, label, def]: [string, string, string]): HTMLElement => {
    const input = el('input', { id: `search-${key}`, name: key, type: 'number', min: '1', required: true, value: params.get(key) ?? def });
    inputs.set(key, input);
    return field(label, input);
  };
  const answersInput = el('input', { id: 'search-answers', type: 'number', min: '1', max: '20', value: params.get('answers') ?? '3' });
  const form = el('form', { class: 'inline', 'aria-label': 'Topology search' },
    ...FIELDS.map(mk), ...PARALLEL.map(mk), field('Answers', answersInput), el('button', { type: 'submit' }, 'Search'));
  const results = el('section', { 'aria-labelledby': 'answers-title', id: 'search-results' });
  main.append(form, results);

  const run = async (): Promise<void> => {
    const num = (k: string): number => Number(inputs.get(k)?.value ?? '0');
    const body = {
      model: Object.fromEntries(FIELDS.map(([k]) => [k, num(k)])),
      parallel: Object.fromEntries(PARALLEL.map(([k]) => [k, num(k)]).filter(([, v]) => Number(v) > 1)),
      answers: Number(answersInput.value),
    };
    const answer = await post<SearchAnswer>('/api/v1/topology/search', body);
    results.replaceChildren(el('h2', { id: 'answers-title' }, 'Answers'),
      el('p', {}, `${answer.hosts_needed} hosts needed, ${answer.usable_hosts} usable, ${answer.candidates_evaluated} candidates evaluated.`),
      table('Ranked answers', ['rank', 'hosts', 'job span', 'predicted step s', 'explanation', 'site view'], answer.candidates.map((c) => [
        c.rank, c.hosts.map((h) => `${h.name} [${h.npus.join(',')}]`).join(' '), c.job_span, c.total_seconds.toFixed(4), c.explanation,
        el('a', { href: siteHash([], c.hosts.map((h) => h.name), null), class: 'show-answer', 'data-rank': String(c.rank) }, `Show answer ${c.rank} on the site view`),
      ]), 'No placement fits: fewer free NPUs than the job needs.'));
    setStatus(`Search: ${answer.candidates.length} answers`);
  };
  form.addEventListener('submit', (ev) => {
    ev.preventDefault();
    clearError();
    const q = new URLSearchParams();
    for (const [k, input] of inputs) q.set(k, input.value);
    q.set('answers', answersInput.value);
    q.set('run', '1');
    navigate(`#/scheduling?${q.toString()}`);
  });
  // The scheduled jobs, each with its schedule view.
  const jobs = await get<{ items: { name: string; hosts: string[]; npus: number; created_at: string }[] }>('/api/v1/jobs').catch(() => ({ items: [] }));
  const jobTable = table('Scheduled jobs', ['job', 'ranks', 'hosts', 'scheduled', 'schedule view'], jobs.items.map((j) => [
    j.name, j.npus, j.hosts.join(' '), j.created_at, el('a', { href: `#/job/${encodeURIComponent(j.name)}` }, `Schedule of ${j.name}`)]), 'No job is scheduled.');
  main.append(el('section', { 'aria-labelledby': 'jobs-title' }, el('h2', { id: 'jobs-title' }, 'Scheduled jobs'), jobTable));
  setStatus('Scheduling: search form');
  if (params.get('run') === '1') {
    try {
      await run();
    } catch (e) {
      showError(e);
    }
  }
}
