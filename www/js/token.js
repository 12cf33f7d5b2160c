// token.js: the token prompt (the page's one dialog for it), for every mode
// of the page: the server answered 401, so the page asks for the token,
// keeps it in this browser (stream.js) and does again what was refused:
// the form's run, or a notebook's cell.
'use strict';

import { token, saveToken } from './stream.js';

const dialog = document.getElementById('token-dialog');
const field = document.getElementById('token');
let pending = null; // {retry, cancelled} of the prompt that is open

// Opens the prompt; Save stores the token and calls retry(), Cancel calls
// cancelled() (where the focus goes back to).
// A token kept already was refused: the prompt says it was wrong.
export function askToken(retry, cancelled) {
  pending = { retry, cancelled };
  document.getElementById('token-wrong').hidden = !token();
  field.value = token();
  if (dialog.showModal) dialog.showModal();
  else dialog.setAttribute('open', '');
  field.focus();
}

document.getElementById('token-form').addEventListener('submit', () => {
  saveToken(field.value.trim());
  const p = pending;
  pending = null;
  if (p) setTimeout(p.retry, 0);
});
document.getElementById('token-cancel').addEventListener('click', () => {
  dialog.close();
  const p = pending;
  pending = null;
  if (p && p.cancelled) p.cancelled();
});
