// Live updates over the aggregator's WebSocket streams (GET /api/v1/alarms/stream, /api/v1/incidents/stream):
// same origin, the session cookie authenticates the upgrade and the server checks Origin. Each text message
// is one JSON change. In a storm the server replaces the changes a page could not take in time with one
// {"type":"overflow","missed":N} frame: the page is told to re-read its lists, as after a reconnect. A
// closed stream (the server closes a consumer that stopped reading with 1013) is reopened after a pause
// and the page told to re-read its lists, so nothing is missed.

export interface Stream {
  close(): void;
}

// The server's summary of the changes a reader missed in a storm (docs/rest-api.md, "Event stream").
function isOverflow(msg: unknown): boolean {
  return typeof msg === 'object' && msg !== null && (msg as { type?: unknown }).type === 'overflow';
}

export function openStream(
  path: string,
  onMessage: (msg: unknown) => void,
  onState: (open: boolean, reopened: boolean) => void,
): Stream {
  let socket: WebSocket | null = null;
  let closed = false;
  let timer: number | undefined;
  let opens = 0;
  const url = `${location.protocol === 'https:' ? 'wss' : 'ws'}://${location.host}${path}`;
  const connect = (): void => {
    if (closed) return;
    const s = new WebSocket(url);
    socket = s;
    s.addEventListener('open', () => {
      if (socket !== s) return;
      onState(true, opens > 0);
      ++opens;
    });
    s.addEventListener('message', (ev: MessageEvent) => {
      if (socket !== s || typeof ev.data !== 'string') return;
      let msg: unknown;
      try {
        msg = JSON.parse(ev.data);
      } catch {
        return; // not JSON: ignored (the streams send JSON only)
      }
      if (isOverflow(msg)) onState(true, true);
      else onMessage(msg);
    });
    s.addEventListener('close', () => {
      if (socket !== s) return;
      socket = null;
      onState(false, false);
      if (!closed) timer = window.setTimeout(connect, 3000);
    });
  };
  connect();
  return {
    close(): void {
      closed = true;
      if (timer !== undefined) window.clearTimeout(timer);
      if (socket) {
        const s = socket;
        socket = null;
        // Closing a socket still connecting makes the browser log an error: close it once open instead.
        if (s.readyState === WebSocket.CONNECTING) s.addEventListener('open', () => s.close(1000));
        else s.close(1000);
      }
    },
  };
}
