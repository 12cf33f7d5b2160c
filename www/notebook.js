// notebook.js: the page's notebook mode. Cells one under another, each run
// in the notebook's kernel (one Python that stays alive, in the workspace
// the page keeps for this tab) over api/cell, which answers with the event
// stream of api/run (api/cell makes the workspace, api/cell/WORKSPACE runs
// in it); the names a cell defines are there for the next cells until
// Reset (api/cell/WORKSPACE/reset); Add a file puts one of the person's
// into the workspace's mounts/ (api/cell/WORKSPACE/file). How a run is shown (the run and its
// events, the live log, the files, the previews, the sentences for errors,
// the code box's keys, the token prompt) is the form's, from js/. No build
// step, no library.
'use strict';

import { startRun, headers, describe } from './js/stream.js';
import { bindEditor } from './js/editor.js';
import { askToken } from './js/token.js';
import { LiveLog } from './js/log.js';
import { outcome } from './js/status.js';
import { fileList, netLine, previews, pageViewer } from './js/result.js';

{
  const $ = (id) => document.getElementById(id);
  const KEY = 'runmyscript-notebook';  // sessionStorage: {workspace, cells: [code, ...]}
  const root = $('notebook');
  const cellsEl = $('cells');
  const kernelEl = $('nb-kernel');
  const errorEl = $('nb-error');
  const PHASE_WORDS = {
    queued: 'Queued…',
    resolving: 'Preparing the environment…',
    running: 'Running…',
    collecting: 'Collecting the files…',
    done: 'Done.',
  };

  let workspace = null;  // the notebook's workspace id: its capability, kept for this tab
  const cells = [];      // {el, area, prompt, out, status, problem, log, valueBox, value, files, previews, runBtn, stopBtn}
  const queue = [];      // cells waiting for their turn (one runs at a time, in order)
  let current = null;    // the cell running: {cell, run} (run: startRun's)
  let seq = 0;           // ids of the cells' elements
  let notice = '';       // what the kernel line says before the next result (a workspace that was gone)

  // ------------------------------------------------------------ the mode
  function setMode(notebook) {
    $('mode-script').setAttribute('aria-pressed', String(!notebook));
    $('mode-notebook').setAttribute('aria-pressed', String(notebook));
    document.body.classList.toggle('notebook-mode', notebook);
    root.hidden = !notebook;
    if (notebook && !cells.length) addCell('', null);
    const hash = notebook ? '#notebook' : '';
    if (location.hash !== hash && history.replaceState) {
      history.replaceState(null, '', location.pathname + location.search + hash);
    }
  }
  $('mode-script').addEventListener('click', () => setMode(false));
  $('mode-notebook').addEventListener('click', () => {
    setMode(true);
    cells[0] && cells[0].area.focus();
  });

  function showError(text) {
    errorEl.textContent = text;
    errorEl.hidden = !text;
  }

  function save() {
    try {
      sessionStorage.setItem(KEY, JSON.stringify({ workspace, cells: cells.map((c) => c.area.value) }));
    } catch (e) { /* private mode: the notebook lasts as long as the page */ }
  }

  // ------------------------------------------------------------ cells
  function grow(area) {
    area.rows = Math.min(30, Math.max(2, area.value.split('\n').length));
  }

  function addCell(text, after) {
    const id = ++seq;
    const el = document.createElement('section');
    el.className = 'cell';
    el.setAttribute('aria-labelledby', 'nb-l-' + id);
    el.innerHTML = `
      <div class="cell-in">
        <span class="prompt" aria-hidden="true">[ ]</span>
        <div class="cell-edit">
          <label class="visually-hidden" id="nb-l-${id}" for="nb-c-${id}">Cell</label>
          <textarea id="nb-c-${id}" class="cell-code" rows="2" spellcheck="false" autocapitalize="off"
            autocomplete="off" autocorrect="off" wrap="off"></textarea>
          <div class="cell-actions">
            <button type="button" class="cell-run">Run</button>
            <button type="button" class="cell-stop" hidden>Stop</button>
            <button type="button" class="cell-del">Delete</button>
          </div>
        </div>
      </div>
      <div class="cell-out" hidden>
        <p class="cell-status status"></p>
        <p class="cell-problem error" hidden></p>
        <pre class="log cell-log" tabindex="0" hidden></pre>
        <div class="cell-value" hidden><span class="out-prompt" aria-hidden="true">Out</span><pre class="value"
          tabindex="0"></pre></div>
        <div class="table-wrap"><table class="cell-files" hidden>
          <caption class="visually-hidden">Files this cell made or changed</caption>
          <thead><tr><th scope="col">Name</th><th scope="col">Size</th><th scope="col">Summary</th></tr></thead>
          <tbody></tbody></table></div>
        <div class="previews cell-previews"></div>
      </div>`;
    const q = (sel) => el.querySelector(sel);
    const cell = {
      el, area: q('textarea'), prompt: q('.prompt'), label: q('label'), out: q('.cell-out'), status: q('.cell-status'),
      problem: q('.cell-problem'), log: q('.cell-log'), valueBox: q('.cell-value'), outPrompt: q('.out-prompt'),
      value: q('.value'), files: q('.cell-files'), previews: q('.cell-previews'), runBtn: q('.cell-run'),
      stopBtn: q('.cell-stop'), delBtn: q('.cell-del'),
    };
    cell.liveLog = new LiveLog(cell.log);
    cell.area.value = text;
    grow(cell.area);
    const at = after ? cells.indexOf(after) + 1 : cells.length;
    cells.splice(at, 0, cell);
    cellsEl.insertBefore(el, at < cells.length - 1 ? cells[at + 1].el : null);
    bindEditor(cell.area, (e) => cellKey(cell, e), () => grow(cell.area));
    cell.area.addEventListener('input', () => { grow(cell.area); save(); });
    // A long line scrolls the cell sideways while it is typed; once the
    // cell is left, its lines show from their start again.
    cell.area.addEventListener('blur', () => { cell.area.scrollLeft = 0; });
    cell.runBtn.addEventListener('click', () => runCell(cell));
    cell.stopBtn.addEventListener('click', () => stop(cell));
    cell.delBtn.addEventListener('click', () => deleteCell(cell));
    renumber();
    save();
    return cell;
  }

  // The cells' labels follow their places ("Cell 2 of 3").
  function renumber() {
    cells.forEach((c, i) => {
      c.label.textContent = 'Cell ' + (i + 1) + ' of ' + cells.length + ', code';
      c.runBtn.setAttribute('aria-label', 'Run cell ' + (i + 1));
      c.stopBtn.setAttribute('aria-label', 'Stop cell ' + (i + 1));
      c.delBtn.setAttribute('aria-label', 'Delete cell ' + (i + 1));
      c.delBtn.disabled = cells.length === 1 || busyCell(c);
    });
  }

  function busyCell(c) { return (current && current.cell === c) || queue.includes(c); }

  function deleteCell(cell) {
    if (cells.length === 1 || busyCell(cell)) return;
    const i = cells.indexOf(cell);
    cells.splice(i, 1);
    cell.el.remove();
    renumber();
    save();
    cells[Math.min(i, cells.length - 1)].area.focus();
  }

  // Shift+Enter runs the cell and moves to the next one (a new one after
  // the last); Ctrl+Enter runs it and stays.
  function cellKey(cell, e) {
    if (e.key !== 'Enter' || e.altKey) return false;
    if (e.shiftKey && !e.ctrlKey && !e.metaKey) {
      runCell(cell);
      const i = cells.indexOf(cell);
      const next = i === cells.length - 1 ? addCell('', cell) : cells[i + 1];
      next.area.focus();
      return true;
    }
    if (e.ctrlKey || e.metaKey) {
      runCell(cell);
      return true;
    }
    return false;
  }

  // ------------------------------------------------------------ running
  function runCell(cell) {
    if (busyCell(cell) || !cell.area.value.trim()) return;
    queue.push(cell);
    cell.prompt.textContent = '[*]';
    cell.runBtn.disabled = true;
    if (current) say(cell, 'Waiting for the cell before it…');
    renumber();
    pump();
  }

  function pump() {
    if (current || !queue.length) return;
    const cell = queue.shift();
    execute(cell, false).finally(() => {
      cell.runBtn.disabled = false;
      cell.stopBtn.hidden = true;
      current = null;
      renumber();
      pump();
    });
  }

  function say(cell, text) {
    cell.out.hidden = false;
    cell.status.textContent = text;
    cell.status.className = 'cell-status status';
  }

  function problem(cell, text) {
    cell.problem.textContent = text;
    cell.problem.hidden = !text;
  }

  function clearOutput(cell) {
    cell.el.classList.remove('stale');
    cell.liveLog.clear();
    cell.log.hidden = true;
    cell.valueBox.hidden = true;
    cell.files.hidden = true;
    cell.previews.textContent = '';
    problem(cell, '');
  }

  // Nothing more runs: the cells waiting go back to idle.
  function dropQueue() {
    for (const c of queue.splice(0)) {
      c.prompt.textContent = '[ ]';
      c.runBtn.disabled = false;
      if (c.status.textContent.startsWith('Waiting')) c.out.hidden = true;
    }
  }

  // One cell through api/cell (startRun: the request, its events, Stop);
  // resolves once it has ended. A workspace that is gone (404) is said so
  // and the cell runs again in a new one.
  function execute(cell, retried) {
    clearOutput(cell);
    showError('');
    say(cell, 'Sending…');
    cell.stopBtn.hidden = false;
    cell.stopBtn.disabled = false;
    // The workspace's id is in the path (its capability, and what a
    // cluster routes by); the first cell makes it.
    const url = workspace ? 'api/cell/' + encodeURIComponent(workspace) : 'api/cell';
    const body = new FormData();
    body.append('code', cell.area.value);
    let again = false;
    const run = startRun(body, {
      event: (event, d) => onEvent(cell, event, d),
      refused: (kind, message, status) => {
        if (kind === 'stop') { problem(cell, message); return; }
        cell.prompt.textContent = '[ ]';
        if (kind === 'stopped' || run.stopping) { say(cell, 'Stopped.'); return; }
        dropQueue();
        if (kind === 'token') {
          say(cell, 'A token is needed.');
          showError(message);
          askToken(() => runCell(cell), () => cell.area.focus());
        } else if (kind === 'http' && status === 404 && workspace && !retried) {
          // Deleted, or idle past the server's session_ttl.
          forget('The notebook\'s workspace was gone (idle for too long, or deleted): the cell runs in a new one, ' +
            'without the names and files of before.');
          again = true;
        } else {
          cell.prompt.textContent = '[!]';
          say(cell, 'Not run.');
          problem(cell, message);
        }
      },
    }, url);
    current = { cell, run };
    return run.done.then(() => {
      if (again) return execute(cell, true);
      if (run.stopping && !run.gotResult) say(cell, 'Stopped.');
      return undefined;
    });
  }

  function onEvent(cell, event, d) {
    if (event === 'workspace') {
      workspace = d.workspace;
      save();
    } else if (event === 'phase') {
      const words = d.phase === 'installing' ? (d.detail ? 'Installing ' + d.detail + '…' : 'Installing…')
        : PHASE_WORDS[d.phase] || d.phase;
      say(cell, words);
    } else if (event === 'log') {
      cell.log.hidden = false;
      cell.liveLog.append(d.stream, d.text);
    } else if (event === 'result') {
      showResult(cell, d);
    } else if (event === 'error') {
      cell.prompt.textContent = '[ ]';
      say(cell, 'Not run.');
      problem(cell, d.error + (d.retry_after ? ' Try again in ' + d.retry_after + ' s.' : ''));
      dropQueue();
    }
  }

  const STATE_WORDS = { new: 'a new kernel', restarted: 'the kernel restarted', restored: 'the kernel restored' };

  // What a restored kernel got back, for the kernel line: the names back,
  // and those that are not (with their types).
  function restoredWords(k) {
    const rep = k.restored || {};
    const names = (l) => (l || []).map((e) => e[0] + ' (' + e[1] + ')').join(', ');
    const back = (rep.names || []).map((e) => e[0]).join(', ');
    const lost = names((rep.failed || []).concat(rep.skipped || []));
    return 'The kernel was restored from its saved state: ' + (back || 'no names') + ' back' +
      (lost ? '; not back: ' + lost : '') + '. ';
  }

  function showResult(cell, r) {
    const k = r.kernel || {};
    const n = k.cell != null ? k.cell : '?';
    cell.prompt.textContent = '[' + n + ']';
    // (a cell that never ran, refused or its packages not installed, has no time)
    const parts = ['Status: ' + r.status, r.duration_ms == null ? 'the cell did not run' : r.duration_ms + ' ms'];
    if (STATE_WORDS[k.state]) parts.push(STATE_WORDS[k.state]);
    else if (k.reason) parts.push('packages added'); // kept, with the packages added to it
    cell.status.textContent = parts.join(' · ');
    // Why the kernel changed (which packages, from where) is long: one
    // short line, the whole sentence on a click.
    if (k.reason) cell.status.append(' ', folded('Why', k.reason));
    // What the cell reached and what was refused, where it had a network.
    const net = netLine(r);
    if (net) cell.status.append(' ', folded('Network', net));
    cell.status.className = 'cell-status status st-' + r.status;
    problem(cell, outcome(r, current ? current.run.limits : {}) || (r.status !== 'ok' && r.error) || '');
    if (r.value) {
      cell.outPrompt.textContent = 'Out[' + n + ']';
      cell.value.textContent = r.value;
      cell.valueBox.hidden = false;
    }
    const arts = r.artifacts || [];
    // (a cell shows no zip, nor a line for no files: detached elements)
    fileList({ artifacts: arts }, cell.files, document.createElement('p'), document.createElement('a'));
    previews(arts, cell.previews, pageViewer());
    kernelEl.textContent = notice + (k.state === 'restored' ? restoredWords(k) : '') +
      'Cell ' + n + ' done: ' + r.status + '. ' +
      (r.status === 'memory' ? 'The kernel was stopped: the next cell starts a new one (the files stay).'
        : 'The names it defined stay for the next cells until Reset.');
    notice = '';
    if (r.status !== 'ok') dropQueue();
  }

  // A long sentence as one short word that opens it on a click.
  function folded(label, text) {
    const d = document.createElement('details');
    d.className = 'cell-why';
    const sum = document.createElement('summary');
    sum.textContent = label;
    d.append(sum, document.createTextNode(text));
    return d;
  }

  // Stop: the cell's cancel URL (any worker takes it); before the cell has
  // an id, dropping the connection stops it (stream.js).
  function stop(cell) {
    if (!current || current.cell !== cell) return undefined;
    cell.stopBtn.disabled = true;
    say(cell, 'Stopping…');
    dropQueue();
    return current.run.stop();
  }

  // ------------------------------------------------------------ the kernel
  function forget(why) {
    workspace = null;
    save();
    for (const c of cells) c.el.classList.add('stale');
    filesEl.textContent = '';  // they were the old workspace's
    filesEl.hidden = true;
    kernelEl.textContent = why;
    notice = why + ' ';
  }

  // Reset: the kernel's names go (the files stay); the cells' outputs stay
  // on the page, marked as from before.
  async function reset() {
    dropQueue();
    if (current) await stop(current.cell);
    if (!workspace) {
      kernelEl.textContent = 'No kernel yet: the first cell starts one.';
      return;
    }
    let r;
    try {
      r = await fetch('api/cell/' + encodeURIComponent(workspace) + '/reset', { method: 'POST', headers: headers({}) });
    } catch (err) {
      showError('Cannot reach the server: ' + err.message + '.');
      return;
    }
    if (r.status === 401) {
      showError(await describe(r));
      askToken(reset, () => $('nb-reset').focus());
      return;
    }
    if (r.status === 404) {
      forget('The notebook\'s workspace was gone already: the next cell starts a new one.');
      return;
    }
    if (!r.ok) {
      showError('Reset failed: ' + (await describe(r)));
      return;
    }
    for (const c of cells) {
      c.el.classList.add('stale');
      if (c.prompt.textContent !== '[*]') c.prompt.textContent = '[ ]';
    }
    showError('');
    kernelEl.textContent = 'Reset: the names are gone, the files stay. The next cell starts a new kernel.';
  }
  $('nb-reset').addEventListener('click', reset);

  // Download notebook: the workspace's output/notebook.ipynb, which the
  // server writes after each cell (nbformat 4: code, output, values,
  // images, errors), through the artifacts route with the workspace's id.
  async function download() {
    if (!workspace) {
      showError('Nothing to download yet: run a cell first.');
      return;
    }
    let r;
    try {
      r = await fetch('artifacts/notebook.ipynb', { headers: { 'Mcp-Param-Workspace': workspace } });
    } catch (err) {
      showError('Cannot reach the server: ' + err.message + '.');
      return;
    }
    if (r.status === 404) {
      showError('The notebook has no cells yet, or its workspace is gone.');
      return;
    }
    if (!r.ok) {
      showError('Download failed: ' + (await describe(r)));
      return;
    }
    const url = URL.createObjectURL(new Blob([await r.blob()], { type: 'application/x-ipynb+json' }));
    const a = document.createElement('a');
    a.href = url;
    a.download = 'notebook.ipynb';
    document.body.append(a);
    a.click();
    a.remove();
    setTimeout(() => URL.revokeObjectURL(url), 10000);
    showError('');
  }
  $('nb-download').addEventListener('click', download);
  $('nb-add').addEventListener('click', () => {
    const last = cells[cells.length - 1];
    addCell('', last).area.focus();
  });
  $('nb-run-all').addEventListener('click', () => cells.forEach(runCell));

  // ------------------------------------------------------------ files
  // A file of the person's into the workspace's mounts/ (api/cell/WORKSPACE/file,
  // or api/cell/file, which makes the workspace when there is none yet):
  // a cell reads it at mounts/NAME.
  const filesEl = $('nb-files');
  async function addFile(file) {
    const body = new FormData();
    body.append('file', file, file.name);
    const url = workspace ? 'api/cell/' + encodeURIComponent(workspace) + '/file' : 'api/cell/file';
    let r;
    try {
      r = await fetch(url, { method: 'POST', body, headers: headers({}) });
    } catch (err) {
      showError('Cannot reach the server: ' + err.message + '.');
      return false;
    }
    if (r.status === 401) {
      showError(await describe(r));
      askToken(() => addFile(file), () => $('nb-file').focus());
      return false;
    }
    if (r.status === 404 && workspace) {
      forget('The notebook\'s workspace was gone (idle for too long, or deleted): the file went into a new one.');
      return addFile(file);
    }
    if (!r.ok) {
      showError('"' + file.name + '" was not added: ' + (await describe(r)));
      return false;
    }
    const m = await r.json();
    if (m.workspace && m.workspace !== workspace) {
      workspace = m.workspace;
      save();
    }
    const li = document.createElement('li');
    const code = document.createElement('code');
    code.textContent = m.mounted_as;
    li.append(code, ' (' + m.bytes + ' bytes): read it in a cell, e.g. ');
    const eg = document.createElement('code');
    eg.textContent = /\.csv$/i.test(m.mounted_as) ? 'pd.read_csv("' + m.mounted_as + '")' : 'open("' + m.mounted_as + '").read()';
    li.append(eg);
    filesEl.append(li);
    filesEl.hidden = false;
    showError('');
    kernelEl.textContent = 'Added ' + m.mounted_as + '.';
    return true;
  }
  $('nb-file').addEventListener('change', async (e) => {
    const input = e.target;
    for (const f of [...input.files]) {
      if (!(await addFile(f))) break;
    }
    input.value = '';
  });

  // ------------------------------------------------------------ start
  try {
    const kept = JSON.parse(sessionStorage.getItem(KEY) || 'null');
    if (kept && typeof kept === 'object') {
      workspace = typeof kept.workspace === 'string' ? kept.workspace : null;
      for (const text of Array.isArray(kept.cells) ? kept.cells : []) {
        if (typeof text === 'string') addCell(text, null);
      }
      if (workspace) kernelEl.textContent = 'This tab\'s notebook: its kernel keeps the names of the cells run before.';
    }
  } catch (e) { /* nothing kept */ }
  setMode(location.hash === '#notebook');
}
