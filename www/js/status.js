// status.js: where a run is (its phases as steps: only those it went
// through are marked done; Installing shows only when something is
// installed), and what came of it in plain words, a crossed limit named
// with its value.
'use strict';

const ORDER = ['queued', 'resolving', 'installing', 'running', 'collecting', 'done'];
const WORDS = {
  queued: 'Queued…',
  resolving: 'Preparing the environment…',
  running: 'Running…',
  collecting: 'Collecting the files…',
  done: 'Done.',
};

export function seconds(ms) {
  if (ms === undefined || ms === null) return '';
  return ms < 10000 ? (ms / 1000).toFixed(1).replace(/\.0$/, '') + ' s' : Math.round(ms / 1000) + ' s';
}

export function humanSize(n) {
  const units = ['bytes', 'KiB', 'MiB', 'GiB', 'TiB'];
  let i = 0;
  while (n >= 1024 && i < units.length - 1) { n /= 1024; i++; }
  return (i ? n.toFixed(1).replace(/\.0$/, '') : n) + ' ' + units[i];
}

export class Steps {
  constructor(list) {
    this.list = list;
    this.reset();
  }

  reset() {
    this.seen = new Set();
    this.current = null;
    for (const li of this.list.querySelectorAll('li')) {
      li.className = '';
      if (li.dataset.phase === 'installing') li.hidden = true;
    }
  }

  // The phase the run is in now; returns the sentence that says so.
  enter(phase, detail) {
    if (this.current) this.seen.add(this.current);
    this.current = phase;
    for (const li of this.list.querySelectorAll('li')) {
      const p = li.dataset.phase;
      if (p === 'installing' && phase === 'installing') li.hidden = false;
      li.className = p === phase ? 'current' : this.seen.has(p) ? 'past' : '';
    }
    if (phase === 'installing') return detail ? 'Installing ' + detail + '…' : 'Installing the requirements…';
    return WORDS[phase] || phase;
  }

  // The run is over: what it went through is done, what it never reached
  // is marked so (an install that failed never ran the script).
  finish(reached) {
    if (!this.current && !this.seen.size) return; /* nothing began */
    if (this.current) this.seen.add(this.current);
    this.current = null;
    const last = Math.max(...[...this.seen].map((p) => ORDER.indexOf(p)));
    for (const li of this.list.querySelectorAll('li')) {
      const p = li.dataset.phase;
      if (p === 'done' && reached) li.className = 'past';
      else if (this.seen.has(p)) li.className = 'past';
      else li.className = ORDER.indexOf(p) > last && p !== 'installing' ? 'skipped' : '';
    }
  }
}

// A limit in its unit: ms as seconds, bytes as KiB/MiB, counts as they are.
// A line of the server's as a sentence: a capital first, a full stop
// last unless it ends in one ("NameError: name 'x' is not defined.").
function sentence(s) {
  const t = s.charAt(0).toUpperCase() + s.slice(1);
  return /[.!?]$/.test(t) ? t : t + '.';
}

function limitValue(key, limits) {
  const v = limits && limits[key];
  if (v === undefined) return '';
  if (['timeout', 'cpu_time', 'install_time'].includes(key)) return seconds(v);
  if (/_bytes$|^memory$|^file_size$/.test(key)) return humanSize(v);
  return String(v);
}

// What came of the run, in plain words (the limit it crossed with its
// value and key), or '' for a run that went well.
export function outcome(r, limits) {
  const key = r.limit === 'wall_time' ? 'timeout' : r.limit;
  const value = key ? limitValue(key, limits) : '';
  const named = key ? ' (' + key + (value ? ' = ' + value : '') + ')' : '';
  const plain = {
    timeout: r.limit === 'cpu_time'
      ? 'The script used more CPU time than it may' + (value ? ', ' + value : '') + ', and was stopped' + named + '.'
      : 'The script ran longer than it may' + (value ? ', ' + value : '') + ', and was stopped' + named + '.',
    memory: 'The script used more memory than it may' + (value ? ', ' + value : '') + ', and was stopped' + named + '.',
    output_limit: {
      log_bytes: 'The script printed more than a run may' + (value ? ', ' + value : '') +
        ': the log was cut there and the run stopped' + named + '.',
      file_size: 'The script wrote a file larger than a run may' + (value ? ', ' + value : '') + named + '.',
    }[r.limit] || 'The script wrote more files into SCRIPT_OUTPUT than a run may' + (value ? ', ' + value : '') +
      ', and was stopped' + named + '.',
    workspace_limit: 'The script filled more of its workspace than a run may' + (value ? ', ' + value : '') +
      ', and was stopped' + named + '.',
    install_failed: r.limit === 'install_time'
      ? 'Installing the requirements took longer than it may' + (value ? ', ' + value : '') + named +
        '; the script did not run.'
      : 'The requirements could not be installed, so the script did not run' + (r.error ? ': ' + r.error : '.'),
    error: 'The script failed' + (r.exit_code > 0 ? ' (exit code ' + r.exit_code + ')' : r.signal ? ' (' + r.signal + ')' : '') +
      ': see the log.' + (r.error ? ' ' + sentence(r.error) : ''),
    cancelled: r.error ? 'The run was stopped: ' + r.error + '.' : 'The run was stopped.',
    sandbox_error: 'The service failed, not the script' + (r.error ? ': ' + r.error : '.'),
  }[r.status];
  return plain || '';
}
