// ask.js: a script that asks its user. While a run waits on input() (the
// stream's question event), a box under the log shows its prompt; Enter
// sends the line (POST api/run/RUNID/input), "End input" closes the
// script's input (it reads end of file). The box goes once the answer is
// taken, or when the run ends.
'use strict';

import { headers, describe } from './stream.js';

// box: the form under the log (#ask), with its label, text field and
// buttons; say(message): a line for the user when an answer is refused.
export class AskBox {
  constructor(box, say) {
    this.box = box;
    this.say = say;
    this.prompt = box.querySelector('.ask-prompt');
    this.field = box.querySelector('input');
    this.end = box.querySelector('.ask-end');
    this.q = null;
    box.addEventListener('submit', (e) => {
      e.preventDefault();
      this.send({ text: this.field.value });
    });
    this.end.addEventListener('click', () => this.send({ eof: true }));
  }

  // A question event: {question, prompt, input_url}.
  show(q) {
    this.q = q;
    this.prompt.textContent = q.prompt || 'The script asks for a line of input';
    this.field.value = '';
    this.field.disabled = false;
    this.box.hidden = false;
    this.field.focus({ preventScroll: false });
  }

  hide() {
    this.q = null;
    this.box.hidden = true;
  }

  async send(what) {
    const q = this.q;
    if (!q) return;
    this.field.disabled = true;
    let resp;
    try {
      resp = await fetch(q.input_url, {
        method: 'POST',
        headers: headers({ 'Content-Type': 'application/json' }),
        body: JSON.stringify(Object.assign({ question: q.question }, what)),
      });
    } catch (e) {
      this.field.disabled = false;
      this.say('The answer could not be sent: ' + e.message);
      return;
    }
    if (resp.ok) {
      if (this.q === q) this.hide();
      return;
    }
    this.field.disabled = false;
    this.say(await describe(resp));
  }
}
