// stream.js: a run through api/run (or a notebook's cell through api/cell,
// which answers the same events) as server-sent events, for any mode of
// the page (the form, or another that sits beside it): the token, the
// request, the events read as they come, Stop, and an error answer as a
// sentence. Every URL is relative, so the page works under a subdirectory.
'use strict';

const TOKEN_KEY = 'runmyscript-token';

export function token() {
  try { return localStorage.getItem(TOKEN_KEY) || ''; } catch (e) { return ''; }
}

export function saveToken(t) {
  try { localStorage.setItem(TOKEN_KEY, t); } catch (e) { /* private mode */ }
}

export function headers(extra) {
  const h = Object.assign({}, extra);
  const t = token();
  if (t) h.Authorization = 'Bearer ' + t;
  return h;
}

// An error answer as a sentence: the status and the server's reason.
export async function describe(resp) {
  let reason = '';
  try {
    const text = await resp.text();
    try { reason = JSON.parse(text).error || text; } catch (e) { reason = text; }
  } catch (e) { /* no body */ }
  const what = {
    400: 'The request was refused',
    401: 'A valid token is needed',
    403: 'Forbidden',
    413: 'Too large',
    415: 'Unsupported request',
    429: 'Too many runs at once',
    500: 'The server failed',
    501: 'Not available on this server',
    502: 'The input URL could not be fetched',
    503: 'The server is busy',
  }[resp.status] || 'Error';
  return what + ' (HTTP ' + resp.status + ')' + (reason ? ': ' + reason.trim().slice(0, 500) : '');
}

// Reads a text/event-stream body and calls fn(event, data) per event.
async function readEvents(stream, fn) {
  const reader = stream.getReader();
  const dec = new TextDecoder();
  let buf = '';
  for (;;) {
    const { value, done } = await reader.read();
    if (done) break;
    buf += dec.decode(value, { stream: true });
    let cut;
    while ((cut = buf.search(/\r?\n\r?\n/)) >= 0) {
      const block = buf.slice(0, cut);
      buf = buf.slice(cut).replace(/^\r?\n\r?\n/, '');
      let event = 'message';
      const data = [];
      for (const line of block.split(/\r?\n/)) {
        if (line.startsWith(':')) continue;
        const colon = line.indexOf(':');
        const field = colon < 0 ? line : line.slice(0, colon);
        const val = colon < 0 ? '' : line.slice(colon + 1).replace(/^ /, '');
        if (field === 'event') event = val;
        else if (field === 'data') data.push(val);
      }
      if (data.length) fn(event, JSON.parse(data.join('\n')));
    }
  }
}

// One run of body (a FormData) with its events to on: {event(name, data),
// refused(kind, message, status)}, kind being 'token' (401), 'http' (the
// server said no, with the HTTP status) or 'network' (it could not be
// reached, or the stream broke). url: where it goes (api/run; a notebook's
// api/cell/WORKSPACE). Resolves once the stream has ended. Returns the run:
// run.stop() stops it.
export function startRun(body, on, url = 'api/run') {
  const controller = new AbortController();
  const run = { runId: null, cancelUrl: null, stopping: false, gotResult: false, limits: {}, controller };
  run.stop = () => stop(run, on);
  run.done = (async () => {
    let resp;
    try {
      resp = await fetch(url, {
        method: 'POST', body, signal: controller.signal, headers: headers({ Accept: 'text/event-stream' }),
      });
    } catch (err) {
      if (err.name === 'AbortError') on.refused('stopped', 'Stopped before the run began.');
      else on.refused('network', 'Cannot reach the server: ' + err.message + '. Is it running?');
      return;
    }
    if (resp.status === 401) {
      on.refused('token', await describe(resp));
      return;
    }
    if (!resp.ok || !(resp.headers.get('Content-Type') || '').startsWith('text/event-stream')) {
      on.refused('http', resp.ok ? 'Unexpected answer from the server (' + resp.headers.get('Content-Type') + ')'
        : await describe(resp), resp.status);
      return;
    }
    try {
      await readEvents(resp.body, (event, d) => {
        if (event === 'run') {
          run.runId = d.run_id;
          run.cancelUrl = d.cancel_url;
          run.limits = d.limits || {};
          if (run.stopping) run.stop();
        } else if (event === 'result' || event === 'error') {
          run.gotResult = true;
        }
        on.event(event, d);
      });
    } catch (err) {
      if (!run.gotResult && !run.stopping && err.name !== 'AbortError')
        on.refused('network', 'The connection to the server broke: ' + err.message);
    }
    if (!run.gotResult && !run.stopping) on.refused('network', 'The server closed the stream before the result arrived.');
  })();
  return run;
}

// Stop: the run's cancel URL (any worker takes it); before the run has an
// id, dropping the connection cancels it too.
async function stop(run, on) {
  run.stopping = true;
  if (!run.cancelUrl) {
    run.controller.abort();
    return;
  }
  try {
    const r = await fetch(run.cancelUrl, { method: 'POST', headers: headers({}) });
    if (!r.ok && r.status !== 409) on.refused('stop', 'Stop failed: ' + (await describe(r)));
  } catch (err) {
    run.controller.abort();
  }
}
