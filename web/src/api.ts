// The REST API as the dashboard calls it: same-origin fetch with the session cookie, the session's CSRF
// token on every write, problem documents (RFC 9457) turned into ApiError with their detail.

export interface Session {
  authentication: boolean;
  authenticated: boolean;
  name: string | null;
  role: string | null;
  csrf_token: string | null;
  expires_at: string | null;
}

export class ApiError extends Error {
  constructor(
    readonly status: number,
    readonly title: string,
    readonly detail: string,
    readonly fields: string[],
  ) {
    super(detail ? `${title}: ${detail}` : title);
  }
}

let csrf = '';

export function setCsrf(token: string | null): void {
  csrf = token ?? '';
}

async function problemOf(res: Response): Promise<ApiError> {
  let title = res.statusText || `HTTP ${res.status}`;
  let detail = '';
  let fields: string[] = [];
  try {
    const body = (await res.json()) as { title?: string; detail?: string; invalid_params?: { name: string; reason: string }[] };
    title = body.title ?? title;
    detail = body.detail ?? '';
    if (body.invalid_params?.length) {
      fields = body.invalid_params.map((p) => p.name);
      detail = body.invalid_params.map((p) => `${p.name}: ${p.reason}`).join('; ');
    }
  } catch {
    // not a problem document: keep the status text
  }
  return new ApiError(res.status, title, detail, fields);
}

export async function request<T>(method: string, path: string, body?: unknown): Promise<T> {
  const headers: Record<string, string> = { Accept: 'application/json' };
  if (body !== undefined) headers['Content-Type'] = 'application/json';
  if (method !== 'GET' && csrf) headers['X-CSRF-Token'] = csrf;
  const init: RequestInit = { method, headers, credentials: 'same-origin', cache: 'no-cache' };
  if (body !== undefined) init.body = JSON.stringify(body);
  const res = await fetch(path, init);
  if (!res.ok) throw await problemOf(res);
  if (res.status === 204) return undefined as T;
  return (await res.json()) as T;
}

export const get = <T>(path: string): Promise<T> => request<T>('GET', path);
export const post = <T>(path: string, body: unknown): Promise<T> => request<T>('POST', path, body);
export const del = (path: string): Promise<void> => request<void>('DELETE', path);

export function query(params: Record<string, string | number | undefined | null>): string {
  const q = new URLSearchParams();
  for (const [k, v] of Object.entries(params)) if (v !== undefined && v !== null && v !== '') q.set(k, String(v));
  const s = q.toString();
  return s ? `?${s}` : '';
}
