// The overlay chooser and the time slider the site view and the matrices share. URL state: `overlay` (an
// overlay id, default state) and `at` (Unix ms of the replayed time; absent: now). The slider steps back
// SLIDER_STEP_MIN minutes at a time over the last SLIDER_HOURS hours; the state overlay (the topology has
// no history) ignores it.
import { el } from './dom';
import { OVERLAYS, SLIDER_HOURS, SLIDER_STEP_MIN, describeAt, overlayOf, piecesOf, type OverlayDef } from './overlay';

export interface OverlayChoice {
  overlay: OverlayDef;
  at: number | null;
}

export function overlayChoice(params: URLSearchParams): OverlayChoice {
  const overlay = overlayOf(params.get('overlay'));
  const atText = params.get('at');
  const at = atText && /^\d+$/.test(atText) ? Number(atText) : null;
  return { overlay, at: overlay.kind === 'state' ? null : at };
}

// The controls; `apply` gets the new choice (the page navigates to its hash).
export function overlayControls(choice: OverlayChoice, apply: (c: OverlayChoice) => void): HTMLElement {
  const select = el('select', { id: 'overlay-select' });
  for (const o of OVERLAYS) {
    const option = el('option', { value: o.id }, o.label);
    if (o.id === choice.overlay.id) option.selected = true;
    select.append(option);
  }
  const steps = (SLIDER_HOURS * 60) / SLIDER_STEP_MIN;
  const now = Date.now();
  const step = choice.at === null ? 0 : Math.min(steps, Math.max(0, Math.round((now - choice.at) / (SLIDER_STEP_MIN * 60_000))));
  // The slider runs left (oldest) to right (now): its value is steps - steps back.
  const slider = el('input', { id: 'time-slider', type: 'range', min: '0', max: String(steps), step: '1',
    value: String(steps - step), disabled: choice.overlay.kind === 'state' });
  const shown = el('output', { id: 'time-shown', for: 'time-slider' }, describeAt(choice.at));
  const back = (): number => steps - Number(slider.value);
  slider.setAttribute('aria-valuetext', describeAt(choice.at));
  slider.addEventListener('input', () => {
    const b = back();
    const text = b === 0 ? 'now' : describeAt(now - b * SLIDER_STEP_MIN * 60_000);
    shown.textContent = text;
    slider.setAttribute('aria-valuetext', text);
  });
  slider.addEventListener('change', () => {
    const b = back();
    apply({ overlay: choice.overlay, at: b === 0 ? null : now - b * SLIDER_STEP_MIN * 60_000 });
  });
  select.addEventListener('change', () => apply({ overlay: overlayOf(select.value), at: choice.at }));
  const legend = el('ul', { class: 'overlay-legend', 'aria-label': `Legend of ${choice.overlay.label}` },
    ...piecesOf(choice.overlay).map((p) => el('li', {}, el('span', { class: 'swatch', style: `background:${p.color}` }), ` ${p.label}`)));
  return el('form', { class: 'overlay-controls', id: 'overlay-controls' },
    el('label', { for: 'overlay-select' }, 'Overlay '), select, ' ',
    el('label', { for: 'time-slider' }, `Time (last ${SLIDER_HOURS} h) `), slider, ' ', shown,
    choice.at !== null ? el('button', { type: 'button', id: 'time-now' }, 'Back to now') : '',
    el('p', { class: 'note' }, `Colour: ${choice.overlay.describe}${choice.overlay.kind === 'state' ? ' (now: the topology keeps no history)' : `, at ${describeAt(choice.at)}`}.`),
    legend);
}

// Wires the "Back to now" button (after the controls are in the document).
export function wireNow(choice: OverlayChoice, apply: (c: OverlayChoice) => void): void {
  document.getElementById('time-now')?.addEventListener('click', () => apply({ overlay: choice.overlay, at: null }));
}

export function choiceParams(q: URLSearchParams, c: OverlayChoice): void {
  if (c.overlay.id !== 'state') q.set('overlay', c.overlay.id);
  if (c.at !== null && c.overlay.kind !== 'state') q.set('at', String(c.at));
}
