// editor.js: a code box's keys, for every mode of the page (the form's
// script, a notebook's cells): Tab indents the selected lines (or at the
// caret), Shift+Tab outdents them, and Escape lets the next Tab move the
// focus on, as a text box should.
'use strict';

// onKey(e) sees every other key first (Ctrl+Enter runs, say) and returns
// true when it took it; changed() runs after an indent.
export function bindEditor(area, onKey, changed) {
  let tabLeaves = false;
  area.addEventListener('keydown', (e) => {
    if (e.key === 'Escape') { tabLeaves = true; return; }
    if (onKey(e)) { e.preventDefault(); return; }
    if (e.key !== 'Tab' || tabLeaves || e.altKey || e.ctrlKey || e.metaKey) { tabLeaves = false; return; }
    e.preventDefault();
    const v = area.value;
    const s = area.selectionStart, t = area.selectionEnd;
    const lineStart = v.lastIndexOf('\n', s - 1) + 1;
    if (!e.shiftKey && s === t) {
      area.setRangeText('    ', s, t, 'end');
    } else {
      const lines = v.slice(lineStart, t).split('\n');
      const out = lines.map((l) => (e.shiftKey ? l.replace(/^ {1,4}|^\t/, '') : '    ' + l));
      area.setRangeText(out.join('\n'), lineStart, t, 'select');
    }
    if (changed) changed();
  });
  area.addEventListener('blur', () => { tabLeaves = false; });
}
