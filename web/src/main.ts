// The dashboard's entry point: the session check, the hash router (the URL holds each page's state, so a
// view is bookmarkable) and the page lifecycle (each page may return a cleanup that frees its renderers).
// Once signed in, the overlays' definitions (GET /api/v1/overlays) are read before the first page.
import { ApiError, get, del, setCsrf, type Session } from './api';
import { clearError, el, setStatus, showError } from './dom';
import { loadOverlays } from './overlay';
import { renderLogin } from './pages/login';
import { renderSite } from './pages/site';
import { renderMatrix } from './pages/matrix';
import { renderNetwork } from './pages/network';
import { renderEntity } from './pages/entity';
import { renderLink, renderPort } from './pages/port';
import { renderScheduling } from './pages/scheduling';
import { renderAlarms } from './pages/alarms';
import { renderIncident } from './pages/incident';
import { renderDiagnose } from './pages/diagnose';
import { renderJob } from './pages/job';

export type Cleanup = () => void;
export interface PageContext {
  main: HTMLElement;
  params: URLSearchParams;
  path: string[];
  session: Session;
}
type Page = (ctx: PageContext) => Promise<Cleanup | void>;

const pages: Record<string, Page> = {
  site: renderSite,
  matrix: renderMatrix,
  network: renderNetwork,
  host: renderEntity,
  switch: renderEntity,
  port: renderPort,
  link: renderLink,
  scheduling: renderScheduling,
  alarms: renderAlarms,
  incident: renderIncident,
  diagnose: renderDiagnose,
  job: renderJob,
};
const titles: Record<string, string> = {
  site: 'Site view',
  matrix: 'Matrices',
  network: 'Network',
  host: 'Host',
  switch: 'Switch',
  port: 'NPU port',
  link: 'Link',
  scheduling: 'Scheduling',
  alarms: 'Alarms',
  incident: 'Incident',
  diagnose: 'Path diagnosis',
  job: 'Job schedule',
  login: 'Log in',
};

let session: Session | null = null;
let cleanup: Cleanup | void = undefined;
let generation = 0;

export function navigate(hash: string): void {
  if (location.hash === hash) void route();
  else location.hash = hash;
}

// Records a page's new state in the URL without rendering the page again (the page changed itself in
// place, e.g. the site view expanding a group): a bookmark or a reload shows the same, and the back button
// returns to the state before (hashchange fires on that traversal and renders it).
export function recordHash(hash: string): void {
  if (location.hash !== hash) history.pushState(null, '', hash);
}

async function loadSession(): Promise<Session> {
  const s = await get<Session>('/api/v1/session');
  setCsrf(s.csrf_token);
  return s;
}

function showChrome(s: Session | null): void {
  const nav = document.getElementById('nav');
  const who = document.getElementById('who');
  const logout = document.getElementById('logout') as HTMLButtonElement | null;
  const signedIn = !!s?.authenticated;
  if (nav) nav.hidden = !signedIn;
  if (who) who.textContent = signedIn && s ? `${s.name ?? ''} (${s.role ?? ''})` : '';
  if (logout) logout.hidden = !(signedIn && s?.authentication);
}

async function route(): Promise<void> {
  const mine = ++generation;
  const raw = location.hash.replace(/^#\/?/, '');
  const [pathPart, queryPart] = raw.split('?', 2);
  const path = (pathPart ?? '').split('/').filter(Boolean).map(decodeURIComponent);
  const params = new URLSearchParams(queryPart ?? '');
  let name = path[0] ?? 'site';
  if (cleanup) {
    cleanup();
    cleanup = undefined;
  }
  clearError();
  setStatus('');
  const main = document.getElementById('main') as HTMLElement;
  main.replaceChildren();
  try {
    if (!session || !session.authenticated) session = await loadSession();
  } catch (e) {
    showError(e);
    return;
  }
  showChrome(session);
  if (!session.authenticated) name = 'login';
  else if (name === 'login') name = 'site';
  const navName = name === 'incident' ? 'alarms' : name;
  for (const a of document.querySelectorAll<HTMLAnchorElement>('#nav a')) {
    if (a.getAttribute('href') === `#/${navName}`) a.setAttribute('aria-current', 'page');
    else a.removeAttribute('aria-current');
  }
  document.title = `${titles[name] ?? 'Not found'} · hsns`;
  if (name === 'login') {
    await renderLogin(main, async (s) => {
      session = s;
      setCsrf(s.csrf_token);
      const back = path[0] && path[0] !== 'login' ? location.hash : '#/site';
      navigate(back);
    });
    return;
  }
  const page = pages[name];
  if (!page) {
    main.append(el('h1', {}, 'Not found'), el('p', {}, `There is no page “${name}”.`), el('a', { href: '#/site' }, 'Site view'));
    return;
  }
  try {
    await loadOverlays(); // once: the overlays' thresholds before any page grades
    const c = await page({ main, params, path, session });
    if (mine !== generation) {
      if (c) c();
    } else {
      cleanup = c;
    }
  } catch (e) {
    if (e instanceof ApiError && e.status === 401) {
      session = null;
      navigate('#/login');
      return;
    }
    showError(e);
  }
}

document.getElementById('logout')?.addEventListener('click', () => {
  void (async () => {
    try {
      await del('/api/v1/session');
    } catch (e) {
      showError(e);
    }
    session = null;
    setCsrf(null);
    navigate('#/login');
  })();
});
window.addEventListener('hashchange', () => void route());
void route();
