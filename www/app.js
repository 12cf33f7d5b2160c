// app.js: the Run My Script page. Sends the form to api/run asking for
// server-sent events, shows the phase and the log as they arrive, then the
// result: status, files with links and previews, the zip. No build step, no
// library; every URL is relative so the page works under a subdirectory.
'use strict';

(function () {
  document.documentElement.classList.add('js');

  const $ = (id) => document.getElementById(id);
  const form = $('run-form');
  const code = $('code');
  const gutter = $('gutter');
  const runBtn = $('run');
  const stopBtn = $('stop');
  const bar = $('bar');
  const phaseEl = $('phase');
  const errorEl = $('error');
  const logEl = $('log');
  const resultEl = $('result');
  const TOKEN_KEY = 'runmyscript-token';
  const PREVIEW_BYTES = 4096;   // text and JSON previews: the first KBs
  const CSV_ROWS = 10;          // CSV previews: the first rows
  const PHASES = ['queued', 'installing', 'running', 'collecting', 'done'];
  const EXAMPLES = {
    hello: { code: 'examples/hello.py', input: 'Some input text' },
    seed: { code: 'examples/run_my_script_test.py', inputUrl: 'examples/run_my_script_test_input.json' },
    table: { code: 'examples/table.py' },
    slow: { code: 'examples/slow.py' },
  };

  let run = null;  // {controller, runId, cancelUrl, stopping, gotResult}

  // ------------------------------------------------------------ code box
  let gutterLines = 0;
  function updateGutter() {
    const n = code.value.split('\n').length;
    if (gutterLines !== n) {
      let s = '';
      for (let i = 1; i <= n; i++) s += i + '\n';
      gutter.textContent = s;
      gutterLines = n;
    }
    gutter.scrollTop = code.scrollTop;
  }
  code.addEventListener('input', updateGutter);
  code.addEventListener('scroll', () => { gutter.scrollTop = code.scrollTop; });

  // A code box's keys (the form's and each notebook cell's): Tab indents
  // (the selected lines, or at the caret); Shift+Tab outdents. Escape lets
  // the next Tab move the focus on, as a text box should. onKey(e) gets the
  // other keys first (Ctrl+Enter runs) and returns true when it took one.
  function bindEditor(area, onKey, changed) {
    let tabLeaves = false;
    area.addEventListener('keydown', (e) => {
      if (e.key === 'Escape') { tabLeaves = true; return; }
      if (onKey(e)) { e.preventDefault(); return; }
      if (e.key !== 'Tab' || tabLeaves || e.altKey || e.ctrlKey || e.metaKey) { tabLeaves = false; return; }
      e.preventDefault();
      const v = area.value;
      let s = area.selectionStart, t = area.selectionEnd;
      const lineStart = v.lastIndexOf('\n', s - 1) + 1;
      if (!e.shiftKey && s === t) {
        area.setRangeText('    ', s, t, 'end');
      } else {
        const block = v.slice(lineStart, t);
        const lines = block.split('\n');
        const out = lines.map((l) => (e.shiftKey ? l.replace(/^ {1,4}|^\t/, '') : '    ' + l));
        const joined = out.join('\n');
        area.setRangeText(joined, lineStart, t, 'select');
      }
      if (changed) changed();
    });
    area.addEventListener('blur', () => { tabLeaves = false; });
  }
  bindEditor(code, (e) => {
    if (e.key !== 'Enter' || !(e.ctrlKey || e.metaKey)) return false;
    form.requestSubmit();
    return true;
  }, updateGutter);

  $('open-file').addEventListener('change', async (e) => {
    const f = e.target.files[0];
    if (!f) return;
    code.value = await f.text();
    updateGutter();
    say('Opened ' + f.name + '.');
    e.target.value = '';
    code.focus();
  });

  $('examples').addEventListener('change', async (e) => {
    const ex = EXAMPLES[e.target.value];
    if (!ex) return;
    try {
      const r = await fetch(ex.code);
      if (!r.ok) throw new Error(r.status + ' ' + r.statusText);
      code.value = await r.text();
      $('input').value = '';
      $('input_url').value = '';
      $('input_file').value = '';
      if (ex.input) $('input').value = ex.input;
      if (ex.inputUrl) {
        const i = await fetch(ex.inputUrl);
        if (!i.ok) throw new Error(i.status + ' ' + i.statusText);
        $('input').value = await i.text();
      }
      updateGutter();
      say('Loaded the example "' + e.target.selectedOptions[0].textContent + '".');
    } catch (err) {
      showError('Cannot load the example: ' + err.message);
    }
  });

  // ------------------------------------------------------------ status
  function say(text) { phaseEl.textContent = text; }

  function showError(text) {
    errorEl.textContent = text;
    errorEl.hidden = !text;
  }

  function setPhase(phase, detail) {
    if (phase === 'resolving') phase = 'installing';
    const idx = PHASES.indexOf(phase);
    for (const li of document.querySelectorAll('#steps li')) {
      const i = PHASES.indexOf(li.dataset.phase);
      li.className = i < idx ? 'past' : i === idx ? 'current' : '';
    }
    const words = {
      queued: 'Queued…',
      installing: detail ? 'Installing ' + detail + '…' : 'Preparing the environment…',
      running: 'Running…',
      collecting: 'Collecting the files…',
      done: 'Done.',
    };
    say(words[phase] || phase);
    if (phase === 'running' || phase === 'installing') bar.removeAttribute('value');
    else if (idx >= 0) bar.value = (idx + 1) / PHASES.length;
  }

  // The log: a span per chunk, classed by stream; stays scrolled to the
  // end unless the reader scrolled up.
  function appendLog(stream, text, el = logEl) {
    const atEnd = el.scrollTop + el.clientHeight >= el.scrollHeight - 4;
    const last = el.lastElementChild;
    if (last && last.className === stream) last.textContent += text;
    else {
      const span = document.createElement('span');
      span.className = stream;
      span.textContent = text;
      el.appendChild(span);
    }
    if (atEnd) el.scrollTop = el.scrollHeight;
  }

  // ------------------------------------------------------------ running
  function token() { try { return localStorage.getItem(TOKEN_KEY) || ''; } catch (e) { return ''; } }

  function headers(extra) {
    const h = Object.assign({}, extra);
    const t = token();
    if (t) h.Authorization = 'Bearer ' + t;
    return h;
  }

  function busy(on) {
    runBtn.disabled = on;
    stopBtn.disabled = !on;
    bar.hidden = !on;
    form.setAttribute('aria-busy', on ? 'true' : 'false');
  }

  // An error answer as a sentence: the status and the server's reason.
  async function describe(resp) {
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

  form.addEventListener('submit', (e) => {
    e.preventDefault();
    if (run) return;
    start();
  });

  async function start() {
    showError('');
    logEl.textContent = '';
    resultEl.hidden = true;
    $('previews').textContent = '';
    busy(true);
    setPhase('queued');
    say('Sending…');
    const controller = new AbortController();
    run = { controller, runId: null, cancelUrl: null, stopping: false, gotResult: false };
    const body = new FormData(form);
    // An empty file input is still a part: leave it out when none is chosen.
    if (!$('input_file').files.length) body.delete('input_file');
    let resp;
    try {
      resp = await fetch('api/run', {
        method: 'POST', body, signal: controller.signal,
        headers: headers({ Accept: 'text/event-stream' }),
      });
    } catch (err) {
      finish();
      if (err.name === 'AbortError') say('Stopped.');
      else showError('Cannot reach the server: ' + err.message + '. Is it running?');
      return;
    }
    if (resp.status === 401) {
      finish();
      say('A token is needed.');
      askToken(await describe(resp));
      return;
    }
    if (!resp.ok || !(resp.headers.get('Content-Type') || '').startsWith('text/event-stream')) {
      const msg = resp.ok ? 'Unexpected answer from the server (' + resp.headers.get('Content-Type') + ')' : await describe(resp);
      finish();
      say('Not run.');
      showError(msg);
      return;
    }
    try {
      await readEvents(resp.body, onEvent);
    } catch (err) {
      if (!run.gotResult) {
        if (err.name === 'AbortError' || run.stopping) say('Stopped.');
        else showError('The connection to the server broke: ' + err.message);
      }
    }
    if (run && !run.gotResult && !errorEl.textContent && !run.stopping) showError('The server closed the stream before the result arrived.');
    finish();
  }

  function finish() {
    if (run && !run.gotResult) {
      for (const li of document.querySelectorAll('#steps li')) li.className = '';
    }
    busy(false);
    bar.hidden = true;
    run = null;
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

  function onEvent(event, d) {
    if (event === 'run') {
      run.runId = d.run_id;
      run.cancelUrl = d.cancel_url;
      if (run.stopping) stop();
    } else if (event === 'phase') {
      setPhase(d.phase, d.detail);
    } else if (event === 'log') {
      appendLog(d.stream, d.text);
    } else if (event === 'result') {
      run.gotResult = true;
      showResult(d);
    } else if (event === 'error') {
      // Not run: the server is busy (503), with when to try again.
      run.gotResult = true;
      say('Not run.');
      showError(d.error + (d.retry_after ? ' Try again in ' + d.retry_after + ' s.' : ''));
    }
  }

  // Stop: the run's cancel URL (any worker takes it); before the run has an
  // id, dropping the connection cancels it too.
  async function stop() {
    if (!run) return;
    run.stopping = true;
    stopBtn.disabled = true;
    say('Stopping…');
    if (!run.cancelUrl) {
      run.controller.abort();
      return;
    }
    try {
      const r = await fetch(run.cancelUrl, { method: 'POST', headers: headers({}) });
      if (!r.ok && r.status !== 409) showError('Stop failed: ' + (await describe(r)));
    } catch (err) {
      run && run.controller.abort();
    }
  }
  stopBtn.addEventListener('click', stop);

  // ------------------------------------------------------------ the result
  function rel(url) { return url && url.startsWith('/') ? url.slice(1) : url; }

  function humanSize(n) {
    const units = ['bytes', 'KiB', 'MiB', 'GiB'];
    let i = 0;
    while (n >= 1024 && i < units.length - 1) { n /= 1024; i++; }
    return (i ? n.toFixed(1) : n) + ' ' + units[i];
  }

  // What went wrong with a run, as a sentence ('' for ok).
  function problemText(r) {
    return {
      error: 'The script failed (see the log).',
      timeout: 'The script ran out of time' + (r.limit ? ' (' + r.limit + ').' : '.'),
      memory: 'The script ran out of memory.',
      output_limit: 'The script wrote too much' + (r.limit ? ' (' + r.limit + ').' : '.'),
      workspace_limit: 'The script wrote too much to its workspace' + (r.limit ? ' (' + r.limit + ').' : '.'),
      install_failed: 'The requirements could not be installed' + (r.error ? ': ' + r.error : '.'),
      cancelled: 'The run was stopped.',
      sandbox_error: 'The service failed' + (r.error ? ': ' + r.error : '.'),
    }[r.status] || '';
  }

  function showResult(r) {
    const parts = ['Status: ' + r.status];
    if (r.exit_code !== null && r.exit_code !== undefined && r.exit_code >= 0) parts.push('exit code ' + r.exit_code);
    if (r.signal) parts.push('signal ' + r.signal);
    parts.push(r.duration_ms + ' ms');
    if (r.isolation) parts.push('isolation ' + r.isolation);
    const summary = $('summary');
    summary.textContent = parts.join(' · ');
    summary.className = 'status st-' + r.status;
    showError(problemText(r) || '');
    setPhase('done');
    say('Done: ' + r.status + '.');
    const arts = r.artifacts || [];
    $('files').hidden = !arts.length;
    $('no-files').hidden = !!arts.length;
    fillFiles(document.querySelector('#files tbody'), arts);
    const zip = $('zip');
    zip.hidden = !r.zip_url;
    if (r.zip_url) zip.href = rel(r.zip_url);
    resultEl.hidden = false;
    previews(arts);
  }

  // The rows of a file table: a link, the size, the summary.
  function fillFiles(tbody, arts) {
    tbody.textContent = '';
    for (const a of arts) {
      const tr = document.createElement('tr');
      const name = document.createElement('td');
      const link = document.createElement('a');
      link.href = rel(a.url);
      link.textContent = a.path;
      link.target = '_blank';
      link.rel = 'noopener';
      name.appendChild(link);
      const size = document.createElement('td');
      size.textContent = humanSize(a.size);
      const sum = document.createElement('td');
      sum.textContent = a.summary || a.mime || '';
      tr.append(name, size, sum);
      tbody.appendChild(tr);
    }
  }

  async function previews(arts, box = $('previews')) {
    for (const a of arts) {
      const fig = document.createElement('figure');
      const cap = document.createElement('figcaption');
      cap.textContent = a.path;
      const url = rel(a.url);
      try {
        if (/^image\/(png|jpeg|gif|webp|bmp)$/.test(a.mime)) {
          const img = document.createElement('img');
          img.src = url;
          img.alt = 'Preview of ' + a.path + (a.summary ? ' (' + a.summary + ')' : '');
          img.loading = 'lazy';
          fig.appendChild(img);
        } else if (a.mime === 'text/csv' || /\.csv$/i.test(a.path)) {
          fig.appendChild(csvTable(await head(url), a.path));
        } else if (/^text\/|^application\/json/.test(a.mime)) {
          const pre = document.createElement('pre');
          pre.className = 'preview';
          let text = await head(url);
          if (a.size > PREVIEW_BYTES) text += '\n…';
          pre.textContent = text;
          fig.appendChild(pre);
        } else {
          continue;
        }
      } catch (err) {
        continue;
      }
      fig.prepend(cap);
      box.appendChild(fig);
    }
  }

  // The first PREVIEW_BYTES of a file (a Range request; a server that
  // ignores it still gets cut here).
  async function head(url) {
    const r = await fetch(url, { headers: { Range: 'bytes=0-' + (PREVIEW_BYTES * 4 - 1) } });
    if (!r.ok) throw new Error(r.status);
    const text = await r.text();
    return text.slice(0, PREVIEW_BYTES);
  }

  function csvRows(text) {
    const rows = [];
    let row = [], cell = '', q = false;
    for (let i = 0; i < text.length && rows.length <= CSV_ROWS; i++) {
      const c = text[i];
      if (q) {
        if (c === '"' && text[i + 1] === '"') { cell += '"'; i++; } else if (c === '"') q = false; else cell += c;
      } else if (c === '"') q = true;
      else if (c === ',') { row.push(cell); cell = ''; }
      else if (c === '\n') { row.push(cell.replace(/\r$/, '')); rows.push(row); row = []; cell = ''; }
      else cell += c;
    }
    if (cell || row.length) { row.push(cell); rows.push(row); }
    return rows.slice(0, CSV_ROWS + 1);
  }

  function csvTable(text, name) {
    const rows = csvRows(text);
    const wrap = document.createElement('div');
    wrap.className = 'table-wrap';
    const t = document.createElement('table');
    t.className = 'csv';
    const cap = document.createElement('caption');
    cap.textContent = 'First rows of ' + name;
    t.appendChild(cap);
    rows.forEach((r, i) => {
      const tr = document.createElement('tr');
      for (const v of r) {
        const cell = document.createElement(i === 0 ? 'th' : 'td');
        if (i === 0) cell.scope = 'col';
        cell.textContent = v;
        tr.appendChild(cell);
      }
      t.appendChild(tr);
    });
    wrap.appendChild(t);
    return wrap;
  }

  // ------------------------------------------------------------ token
  const dialog = $('token-dialog');
  let retry = start;  // what Save runs again: the form's run, or a notebook cell
  function askToken(why, again = start, show = showError) {
    retry = again;
    show(why);
    $('token').value = token();
    if (dialog.showModal) dialog.showModal();
    else dialog.setAttribute('open', '');
    $('token').focus();
  }
  $('token-form').addEventListener('submit', () => {
    try { localStorage.setItem(TOKEN_KEY, $('token').value.trim()); } catch (e) { /* private mode */ }
    showError('');
    setTimeout(retry, 0);
  });
  $('token-cancel').addEventListener('click', () => { dialog.close(); runBtn.focus(); });

  updateGutter();

  // What the notebook mode (notebook.js) shares with the form.
  window.rmsPage = {
    readEvents, headers, describe, appendLog, fillFiles, previews, askToken, bindEditor, problemText, humanSize, rel,
  };
})();
