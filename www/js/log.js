// log.js: a run's live log: a span per stretch of one stream (stdout,
// stderr, runmyscript's own lines), and the installer's lines folded into
// one block whose summary counts them and shows the last, which opens on a
// click. It stays scrolled to its end unless the reader scrolled up.
'use strict';

export class LiveLog {
  constructor(el) {
    this.el = el;
    this.follow = true;  // scrolled to the end: stay there as text comes
    this.pending = false;
    el.addEventListener('scroll', () => { if (!this.pending) this.follow = this.atEnd(); });
  }

  clear() {
    this.el.textContent = '';
    this.follow = true;
  }

  atEnd() {
    return this.el.scrollTop + this.el.clientHeight >= this.el.scrollHeight - 4;
  }

  // text of stream ('stdout', 'stderr', 'system' or 'install'). Text is
  // appended to the last text node (a flood of output costs what it adds,
  // not the whole log again), and the scrolling waits for the next frame.
  append(stream, text) {
    if (stream === 'install') this.install(text);
    else this.plain(stream, text);
    if (this.follow && !this.pending) {
      this.pending = true;
      requestAnimationFrame(() => {
        this.el.scrollTop = this.el.scrollHeight;
        this.pending = false;
      });
    }
  }

  plain(stream, text) {
    const last = this.el.lastElementChild;
    if (last && last.tagName === 'SPAN' && last.className === stream && last.firstChild) {
      last.firstChild.appendData(text);
      return;
    }
    const span = document.createElement('span');
    span.className = stream;
    span.appendChild(document.createTextNode(text));
    this.el.appendChild(span);
  }

  // The installer's lines: one fold per stretch of them.
  install(text) {
    let fold = this.el.lastElementChild;
    if (!fold || !fold.classList.contains('install-fold')) {
      fold = document.createElement('details');
      fold.className = 'install-fold';
      const summary = document.createElement('summary');
      const what = document.createElement('span');
      what.className = 'what';
      const lastLine = document.createElement('span');
      lastLine.className = 'last';
      summary.append(what, lastLine);
      const body = document.createElement('div');
      body.className = 'install';
      fold.append(summary, body);
      fold.lines = 0;
      this.el.appendChild(fold);
    }
    fold.querySelector('.install').append(text);
    const lines = text.split('\n').filter((l) => l.trim());
    fold.lines += lines.length;
    fold.querySelector('.what').textContent = 'Installer output: ' + fold.lines + (fold.lines === 1 ? ' line' : ' lines');
    if (lines.length) fold.querySelector('.last').textContent = lines[lines.length - 1];
  }
}
