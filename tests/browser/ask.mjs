// ask.mjs: a script that asks its user, in the page (www/js/ask.js), in
// Debian's chromium (playwright-core) against the server ask.sh started:
// the prompt in a box under the log, Enter sends the line, the script goes
// on with it; "End input" gives the script EOF; at 1280 x 900 and 390 px
// wide (screenshots into OUT). Prints TAP.
import { ok, check, shot, launch, done } from './lib.mjs';

const { BASE, TOKEN } = process.env;
const LONG = 120000;
const SCRIPT = 'name = input("What is your name? ")\nprint("Hello,", name)\n' +
  'try:\n    input("More? ")\nexcept EOFError:\n    print("no more input")\n';

const browser = await launch();
// The box within the viewport's width, its field and buttons usable.
const fits = (p) => p.evaluate(() => {
  const b = document.getElementById('ask').getBoundingClientRect();
  const f = document.getElementById('ask-text').getBoundingClientRect();
  return { right: b.right, vw: document.documentElement.clientWidth, field: f.width };
});

async function session(width, name) {
  const ctx = await browser.newContext({ viewport: { width, height: 900 } });
  await ctx.addInitScript((t) => localStorage.setItem('runmyscript-token', t), TOKEN);
  const p = await ctx.newPage();
  const errors = [];
  p.on('pageerror', (e) => errors.push(String(e)));
  await p.goto(BASE + '/');
  await p.fill('#code', SCRIPT);
  await p.click('#run');
  await p.waitForSelector('#ask:not([hidden])', { timeout: LONG });
  ok((await p.textContent('#ask .ask-prompt')) === 'What is your name? ', `${name}: the input box shows input()'s prompt`,
    await p.textContent('#ask .ask-prompt'));
  ok(await p.evaluate(() => document.activeElement && document.activeElement.id === 'ask-text'),
    `${name}: the field has the focus`);
  const f = await fits(p);
  ok(f.right <= f.vw + 1 && f.field >= 120, `${name}: the box fits the width, its field usable`, JSON.stringify(f));
  await p.type('#ask-text', 'Ada');
  await shot(p, `${name}-asked`);
  await p.press('#ask-text', 'Enter');
  await p.waitForFunction(() => document.getElementById('log').textContent.includes('Hello, Ada'), null, { timeout: LONG });
  ok(true, `${name}: Enter sends the line; the script goes on with it`);
  await p.waitForFunction(() => document.querySelector('#ask .ask-prompt').textContent === 'More? '
    && !document.getElementById('ask').hidden, null, { timeout: LONG });
  await p.click('#ask .ask-end');
  await p.waitForSelector('#result:not([hidden])', { timeout: LONG });
  const log = await p.textContent('#log');
  ok(log.includes('no more input') && /Status: ok/.test(await p.textContent('#summary')),
    `${name}: End input gives the script EOF; the run ends ok`, log);
  ok(await p.isHidden('#ask'), `${name}: the box goes when the run ends`);
  await shot(p, `${name}-done`);
  ok(errors.length === 0, `${name}: no script error on the page`, errors.join('\n'));
  await ctx.close();
}

try {
  await check('1280 px', () => session(1280, 'wide'));
  await check('390 px', () => session(390, 'phone'));
} finally {
  await browser.close();
}
done();
