// Login: a token (the same bearer tokens the API takes) exchanged for an HttpOnly session cookie.
import { post, type Session } from '../api';
import { el, showError, clearError } from '../dom';

export async function renderLogin(main: HTMLElement, done: (s: Session) => void): Promise<void> {
  const input = el('input', { id: 'token', name: 'token', type: 'password', autocomplete: 'current-password', required: true });
  const form = el(
    'form',
    { class: 'login', 'aria-labelledby': 'login-title' },
    el('h1', { id: 'login-title' }, 'Log in to hsns'),
    el('p', { class: 'note' }, 'Use an API token (tokens file of the aggregator). The browser keeps only a session cookie.'),
    el('label', { for: 'token' }, 'Token'),
    input,
    el('p', {}, el('button', { type: 'submit' }, 'Log in')),
  );
  form.addEventListener('submit', (ev) => {
    ev.preventDefault();
    clearError();
    void (async () => {
      try {
        const s = await post<Session>('/api/v1/session', { token: input.value });
        done({ ...s, authenticated: true });
      } catch (e) {
        showError(e);
        input.focus();
      }
    })();
  });
  main.append(form);
  input.focus();
}
