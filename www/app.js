// app.js: the runmyscript page's form mode: the code box (line numbers,
// Tab, Ctrl+Enter, examples, a .py file), the script kept in the browser
// across reloads, and a run of the form through api/run whose phases, live
// log and result show in the output pane (beside the form on a wide
// screen, scrolled into view on a narrow one). The parts a second mode
// would share are modules of their own in js/: stream.js (the run and its
// events), log.js (the live log), status.js (phases, outcomes in plain
// words), result.js (files, previews, the image viewer), editor.js (the
// code box's keys), token.js (the token prompt); notebook.js, the notebook
// mode, shares them. No build step,
// no library; every URL is relative so the page works under a subdirectory.
'use strict';

import { startRun } from './js/stream.js';
import { bindEditor } from './js/editor.js';
import { askToken as tokenPrompt } from './js/token.js';
import { LiveLog } from './js/log.js';
import { AskBox } from './js/ask.js';
import { Steps, outcome } from './js/status.js';
import { statusLine, envLine, netLine, valueView, fileList, previews, pageViewer } from './js/result.js';

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
const outputEl = $('output');
const resultEl = $('result');
const log = new LiveLog($('log'));
const ask = new AskBox($('ask'), (m) => showError(m));
const steps = new Steps($('steps'));
const viewer = pageViewer();
const DRAFT_KEY = 'runmyscript-draft';
const DRAFT_FIELDS = ['code', 'input', 'input_url', 'requirements', 'timeout', 'ipynb'];
const EXAMPLES = {
  hello: { code: 'examples/hello.py', input: 'Some input text' },
  seed: { code: 'examples/run_my_script_test.py', inputUrl: 'examples/run_my_script_test_input.json' },
  table: { code: 'examples/table.py' },
  slow: { code: 'examples/slow.py' },
};

let run = null; // the run in flight (stream.js), or null

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

// Tab and Shift+Tab indent and outdent (editor.js); Ctrl+Enter runs.
bindEditor(code, (e) => {
  if (e.key !== 'Enter' || !(e.ctrlKey || e.metaKey)) return false;
  form.requestSubmit();
  return true;
}, () => { updateGutter(); saveDraft(); });

// ------------------------------------------------------------ the draft
// The script and its text fields stay in this browser (localStorage)
// across a reload, until they are changed.
function saveDraft() {
  const d = {};
  for (const f of DRAFT_FIELDS) d[f] = $(f).value;
  try { localStorage.setItem(DRAFT_KEY, JSON.stringify(d)); } catch (e) { /* private mode, or full */ }
}
function loadDraft() {
  let d = null;
  try { d = JSON.parse(localStorage.getItem(DRAFT_KEY) || 'null'); } catch (e) { d = null; }
  if (!d || typeof d.code !== 'string') return;
  for (const f of DRAFT_FIELDS) if (typeof d[f] === 'string') $(f).value = d[f];
  showNotebook();
}
// A Jupyter notebook opened (.ipynb): the code is its JSON, and the field
// "notebook" its file name, so that the server runs its cells in order and
// gives back the executed notebook. Choosing an example or a .py file ends it.
function showNotebook() {
  const name = $('ipynb').value;
  $('ipynb-name').hidden = !name;
  $('ipynb-name').textContent = name ? 'Notebook ' + name + ': its code cells run in order, and the executed ' +
    'notebook comes back with the files.' : '';
}
for (const f of DRAFT_FIELDS) $(f).addEventListener('input', saveDraft);

$('open-file').addEventListener('change', async (e) => {
  const f = e.target.files[0];
  if (!f) return;
  code.value = await f.text();
  $('ipynb').value = /\.ipynb$/i.test(f.name) ? f.name : '';
  showNotebook();
  updateGutter();
  saveDraft();
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
    $('ipynb').value = '';
    showNotebook();
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
    saveDraft();
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

function busy(on) {
  runBtn.disabled = on;
  stopBtn.disabled = !on;
  // Out of sight, not out of the layout: what follows the form (the output,
  // on a narrow screen) stays where Run scrolled it.
  bar.classList.toggle('idle', !on);
  form.setAttribute('aria-busy', on ? 'true' : 'false');
}

// The output pane in view as a run starts: beside the form it is already
// (it stays in place as the form scrolls); below it, scrolled to.
function showOutput() {
  outputEl.classList.add('active');
  const box = outputEl.getBoundingClientRect();
  if (box.top >= 0 && box.top < window.innerHeight * 0.5) return;
  const smooth = !window.matchMedia('(prefers-reduced-motion: reduce)').matches;
  outputEl.scrollIntoView({ behavior: smooth ? 'smooth' : 'auto', block: 'start' });
}

// ------------------------------------------------------------ a run
form.addEventListener('submit', (e) => {
  e.preventDefault();
  if (!run) start();
});

function start() {
  showError('');
  log.clear();
  resultEl.hidden = true;
  $('previews').textContent = '';
  $('images').textContent = '';
  steps.reset();
  busy(true);
  say('Sending…');
  showOutput();
  const t0 = performance.now();
  const body = new FormData(form);
  // An empty file input is still a part: leave it out when none is chosen.
  if (!$('input_file').files.length) body.delete('input_file');
  const me = startRun(body, {
    event: (event, d) => onEvent(me, event, d, t0),
    refused: (kind, message) => {
      if (kind === 'stop') { showError(message); return; }
      steps.reset();
      if (kind === 'stopped' || me.stopping) { say('Stopped.'); return; }
      say('Not run.');
      if (kind === 'token') askToken(message);
      else showError(message);
    },
  });
  run = me;
  me.done.then(() => {
    ask.hide();
    if (!me.gotResult) steps.finish(false);
    if (me.stopping && !me.gotResult) say('Stopped.');
    busy(false);
    run = null;
  });
}

function onEvent(me, event, d, t0) {
  if (event === 'phase') {
    if (d.phase !== 'done') say(steps.enter(d.phase, d.detail));
  } else if (event === 'log') {
    log.append(d.stream, d.text);
  } else if (event === 'question') {
    ask.show(d);
  } else if (event === 'result') {
    ask.hide();
    showResult(me, d, performance.now() - t0);
  } else if (event === 'error') {
    // Not run: the server is busy (503), with when to try again.
    steps.reset();
    say('Not run.');
    showError(d.error + (d.retry_after ? ' Try again in ' + d.retry_after + ' s.' : ''));
  }
}

function showResult(me, r, elapsed) {
  const summary = $('summary');
  summary.textContent = statusLine(r, elapsed);
  summary.className = 'status st-' + r.status;
  $('env').textContent = envLine(r);
  $('env').hidden = !$('env').textContent;
  $('net').textContent = netLine(r);
  $('net').hidden = !$('net').textContent;
  steps.finish(true);
  showError(outcome(r, me.limits));
  say('Done: ' + r.status + '.');
  valueView(r, $('value-box'), $('value'));
  fileList(r, $('files'), $('no-files'), $('zip'));
  resultEl.hidden = false;
  previews(r.artifacts || [], $('previews'), viewer, $('images'));
}

stopBtn.addEventListener('click', () => {
  if (!run) return;
  stopBtn.disabled = true;
  say('Stopping…');
  run.stop();
});

// ------------------------------------------------------------ token
// The prompt (token.js); Save runs the form again.
function askToken(why) {
  showError(why);
  tokenPrompt(start, () => runBtn.focus());
}

// The Timeout field's maximum: the server's timeout (healthz says it), so
// that a value above it is refused before Run, in the field.
async function timeoutMax() {
  try {
    const r = await fetch('healthz', { cache: 'no-store' });
    const h = await r.json();
    const ms = h.limits && h.limits.timeout;
    if (!ms) return;
    const max = Math.floor(ms / 1000);
    $('timeout').max = String(max);
    $('timeout-max').textContent = 'At most ' + max + ' s on this server.';
  } catch (e) { /* the server says it after Run instead */ }
}

loadDraft();
updateGutter();
timeoutMax();
