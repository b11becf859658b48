// Small DOM helpers: elements built with textContent only (no HTML strings, so nothing from the API is
// ever parsed as markup), tables with captions and header cells, state badges that say their state.

type Child = Node | string | null | undefined | false;

export function el<K extends keyof HTMLElementTagNameMap>(
  tag: K,
  attrs: Record<string, string | boolean | undefined> = {},
  ...children: Child[]
): HTMLElementTagNameMap[K] {
  const e = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs)) {
    if (v === undefined || v === false) continue;
    e.setAttribute(k, v === true ? '' : v);
  }
  for (const c of children) {
    if (c === null || c === undefined || c === false) continue;
    e.append(typeof c === 'string' ? document.createTextNode(c) : c);
  }
  return e;
}

export function stateBadge(state: string): HTMLElement {
  return el('span', { class: `state state-${state}` }, state);
}

export type Cell = string | number | boolean | null | undefined | Node;

export function table(caption: string, headers: string[], rows: Cell[][], empty = 'Nothing to show.'): HTMLElement {
  if (rows.length === 0) return el('div', {}, el('h3', { class: 'note' }, caption), el('p', { class: 'note' }, empty));
  const thead = el('thead', {}, el('tr', {}, ...headers.map((h) => el('th', { scope: 'col' }, h))));
  const tbody = el('tbody', {});
  for (const r of rows) {
    tbody.append(
      el('tr', {}, ...r.map((c) => el('td', {}, c instanceof Node ? c : c === null || c === undefined ? '—' : String(c)))),
    );
  }
  return el('table', {}, el('caption', {}, caption), thead, tbody);
}

export function setStatus(text: string): void {
  const s = document.getElementById('status');
  if (s) s.textContent = text;
}

export function showError(e: unknown): void {
  const box = document.getElementById('error');
  if (!box) return;
  box.textContent = e instanceof Error ? e.message : String(e);
  box.hidden = false;
}

export function clearError(): void {
  const box = document.getElementById('error');
  if (box) {
    box.hidden = true;
    box.textContent = '';
  }
}

export function field(label: string, input: HTMLElement): HTMLElement {
  return el('label', {}, label, input);
}
