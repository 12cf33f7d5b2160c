// result.js: a finished run as a person reads it: its status line, the
// value of its last line, the environment it ran in (built now or cached,
// its packages), the files with links, the zip, and previews: images and
// SVG as images at a readable size, first (an <img> runs no script,
// whatever the file holds; the server sends artifacts with a sandboxing CSP
// too), which open full size in a viewer; CSV as a table that scrolls
// sideways; text and JSON, their first bytes.
'use strict';

import { humanSize, seconds } from './status.js';

const PREVIEW_BYTES = 4096; // text and JSON previews: the first KBs
const CSV_ROWS = 10;        // CSV previews: the first rows
const IMAGE = /^image\/(png|jpeg|gif|webp|bmp|svg\+xml)$/;

function rel(url) { return url && url.startsWith('/') ? url.slice(1) : url; }

// The status line: status, exit code or signal, how long (the script's
// time, or for a run whose script never started the whole wait), isolation.
export function statusLine(r, elapsedMs) {
  const parts = ['Status: ' + r.status];
  if (r.exit_code !== null && r.exit_code !== undefined && r.exit_code >= 0) parts.push('exit code ' + r.exit_code);
  if (r.signal) parts.push('signal ' + r.signal);
  if (r.isolation) {
    parts.push(r.duration_ms + ' ms');
    parts.push('isolation ' + r.isolation);
  } else {
    parts.push('after ' + seconds(elapsedMs));
    parts.push('the script did not run');
  }
  return parts.join(' · ');
}

// Which environment ran: the standard library alone, or the packages,
// built by this run or found cached.
export function envLine(r) {
  if (r.env_cache === 'none' || !r.requirements || !r.requirements.length)
    return r.isolation ? 'Environment: the standard library only.' : '';
  const how = r.env_cache === 'built' ? 'built for this run' : 'cached (built by an earlier run)';
  return 'Environment: ' + how + ': ' + r.requirements.join(', ') + '.';
}

// What the run did on the network, where it had one: the hosts it reached
// and those refused, with why. Empty for a run without a network.
export function netLine(r) {
  const n = r.network;
  if (!n) return '';
  if (n.mode !== 'on') return 'Network: the host\'s own, unfiltered (nothing recorded).';
  const dest = (d) => (d.name || d.address || '?') + (d.port ? ':' + d.port : '');
  const parts = [];
  parts.push((n.connections || 0) + ' connection' + (n.connections === 1 ? '' : 's') + ', ' +
             humanSize(n.bytes_in || 0) + ' in, ' + humanSize(n.bytes_out || 0) + ' out');
  if (n.reached && n.reached.length) parts.push('reached ' + n.reached.map(dest).join(', '));
  if (n.refused && n.refused.length)
    parts.push('refused ' + n.refused.map((d) => dest(d) + ' (' + d.reason + (d.detail ? ': ' + d.detail : '') + ')').join(', '));
  if (n.limit) parts.push('stopped at ' + n.limit);
  return 'Network: ' + parts.join('; ') + '.';
}

// The value of the script's last line, as a notebook shows it (its repr),
// into pre; box shown only when there is one.
export function valueView(r, box, pre) {
  const has = typeof r.value === 'string' && r.value !== '';
  box.hidden = !has;
  pre.textContent = has ? r.value + (r.value_truncated ? '\n… (cut: the server keeps the first value_bytes)' : '') : '';
}

// The file list and the zip into table (its tbody) and zip (a link).
export function fileList(r, table, none, zip) {
  const tbody = table.querySelector('tbody');
  tbody.textContent = '';
  const arts = r.artifacts || [];
  table.hidden = !arts.length;
  none.hidden = !!arts.length;
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
  zip.hidden = !r.zip_url;
  if (r.zip_url) zip.href = rel(r.zip_url);
}

// The full-size view of an image: a dialog with the picture at its own
// size (scrolling when it is larger than the window).
export class Viewer {
  constructor(dialog) {
    this.dialog = dialog;
    this.img = dialog.querySelector('#viewer-img');
    this.title = dialog.querySelector('#viewer-h');
    this.open = dialog.querySelector('#viewer-open');
    dialog.querySelector('#viewer-close').addEventListener('click', () => this.close());
    dialog.addEventListener('click', (e) => { if (e.target === dialog) this.close(); });
    dialog.addEventListener('close', () => { if (this.from) this.from.focus(); });
  }

  show(url, name, alt, from) {
    this.from = from;
    this.img.src = url;
    this.img.alt = alt;
    this.title.textContent = name;
    this.open.href = url;
    if (this.dialog.showModal) this.dialog.showModal();
    else this.dialog.setAttribute('open', '');
    this.dialog.querySelector('#viewer-close').focus();
  }

  close() {
    if (this.dialog.close) this.dialog.close();
    else this.dialog.removeAttribute('open');
  }
}

let shared = null;
// The page's one viewer (its dialog #viewer), for every mode of the page.
export function pageViewer() {
  if (!shared) shared = new Viewer(document.getElementById('viewer'));
  return shared;
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
  wrap.className = 'table-wrap csv-wrap';
  wrap.tabIndex = 0; // a keyboard scrolls it sideways too
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

function imagePreview(a, url, viewer) {
  const alt = 'Preview of ' + a.path + (a.summary ? ' (' + a.summary + ')' : '');
  const open = document.createElement('button');
  open.type = 'button';
  open.className = 'zoom';
  open.setAttribute('aria-label', 'Open ' + a.path + ' full size');
  open.title = 'Open full size';
  const img = document.createElement('img');
  img.src = url;
  img.alt = alt;
  img.loading = 'lazy';
  open.appendChild(img);
  open.addEventListener('click', () => viewer.show(url, a.path, alt, open));
  return open;
}

// A preview per artifact that has one, into box; images into images when
// given (where a person looks first), else into box before the rest.
export async function previews(arts, box, viewer, images) {
  box.textContent = '';
  if (images) images.textContent = '';
  const pics = arts.filter((a) => IMAGE.test(a.mime));
  const rest = arts.filter((a) => !IMAGE.test(a.mime));
  for (const a of pics.concat(rest)) {
    const fig = document.createElement('figure');
    const cap = document.createElement('figcaption');
    cap.textContent = a.path;
    const url = rel(a.url);
    try {
      if (IMAGE.test(a.mime)) {
        fig.classList.add('image');
        fig.appendChild(imagePreview(a, url, viewer));
      } else if (a.mime === 'text/csv' || /\.csv$/i.test(a.path)) {
        fig.classList.add('wide');
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
    (images && fig.classList.contains('image') ? images : box).appendChild(fig);
  }
}
