// web.mjs: the Run My Script page in Debian's chromium (playwright-core),
// against the server web.sh started. Prints TAP. Every wait has a ceiling
// (a guard against a hang); no assertion is about how long anything took.
import { execFileSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { ok, skip, check, shot, launch, done } from './lib.mjs';

const { BASE, TOKEN, OUT, HAVE_PILLOW } = process.env;
const LONG = 180000;  // ceiling of a run's wait (an install may be slow on a loaded machine)

const browser = await launch();
const ctx = await browser.newContext({ viewport: { width: 1200, height: 900 }, acceptDownloads: true });
const page = await ctx.newPage();
const consoleErrors = [];
page.on('pageerror', (e) => consoleErrors.push(String(e)));

async function setCode(p, text) {
  await p.fill('#code', text);
}
async function runAndWait(p) {
  await p.click('#run');
  await p.waitForSelector('#result:not([hidden])', { timeout: LONG });
  return p.textContent('#summary');
}

try {
  await check('the page loads', async () => {
    const resp = await page.goto(BASE + '/');
    ok(resp.status() === 200 && (await page.title()).includes('Run My Script'), 'the page loads from nginx (www/)');
    ok(await page.isVisible('label[for=code]') && await page.isVisible('label[for=input_file]'),
      'the code box and the input-file upload have labels');
    await shot(page, '01-start');
  });

  await check('401 and the token prompt', async () => {
    await setCode(page, 'print("hello from the browser")\n');
    await page.click('#run');
    await page.waitForSelector('#token-dialog[open]', { timeout: 30000 });
    ok(true, 'the server answers 401: the page asks for the token');
    ok((await page.textContent('#error')).includes('401'), 'and says why (HTTP 401)', await page.textContent('#error'));
    await shot(page, '02-token-prompt');
    await page.fill('#token', TOKEN);
    await page.click('#token-save');
    await page.waitForSelector('#result:not([hidden])', { timeout: LONG });
    const s = await page.textContent('#summary');
    ok(/Status: ok/.test(s) && /exit code 0/.test(s) && /isolation/.test(s), 'with the token the run succeeds: status, exit code, duration, isolation', s);
    ok((await page.textContent('#log')).includes('hello from the browser'), 'the log shows the output');
    ok(await page.evaluate(() => localStorage.getItem('runmyscript-token')) === TOKEN, 'the token is kept in localStorage');
  });

  await check('live log', async () => {
    await setCode(page, 'import sys, time\nprint("first line", flush=True)\nprint("to stderr", file=sys.stderr, flush=True)\ntime.sleep(2)\nprint("second line")\n');
    await page.click('#run');
    await page.waitForFunction(() => document.getElementById('log').textContent.includes('first line'), null, { timeout: LONG });
    const early = await page.evaluate(() => ({
      hidden: document.getElementById('result').hidden,
      log: document.getElementById('log').textContent,
      phase: document.getElementById('phase').textContent,
    }));
    ok(early.hidden && !early.log.includes('second line'), 'the first line is visible while the script still runs (no result yet)', JSON.stringify(early));
    ok(/Running/.test(early.phase), 'the phase says running', early.phase);
    await shot(page, '03-live-log');
    await page.waitForSelector('#result:not([hidden])', { timeout: LONG });
    ok((await page.textContent('#log')).includes('second line'), 'then the rest and the result');
    const colors = await page.evaluate(() => {
      const out = document.querySelector('#log .stdout'), err = document.querySelector('#log .stderr');
      return [out && getComputedStyle(out).color, err && getComputedStyle(err).color];
    });
    ok(colors[0] && colors[1] && colors[0] !== colors[1], 'stderr is set apart visually', colors.join(' vs '));
  });

  await check('files, previews, zip', async () => {
    await page.selectOption('#examples', 'table');
    await page.waitForFunction(() => document.getElementById('code').value.includes('wave.png'));
    const s = await runAndWait(page);
    ok(/Status: ok/.test(s), 'the table example runs', s);
    const rows = await page.$$eval('#files tbody tr', (trs) => trs.map((tr) => [...tr.cells].map((c) => c.textContent)));
    const names = rows.map((r) => r[0]).sort();
    ok(JSON.stringify(names) === '["summary.json","wave.png","waves.csv"]', 'the file list: name for each file', JSON.stringify(rows));
    ok(rows.every((r) => r[1] && r[2]), 'with size and summary', JSON.stringify(rows));
    const href = await page.getAttribute('#files a >> nth=0', 'href');
    ok(href && href.startsWith('artifacts/'), 'download links are relative (artifacts/...)', href);
    await page.waitForFunction(() => [...document.querySelectorAll('#previews img')].some((i) => i.complete && i.naturalWidth > 0), null, { timeout: 30000 });
    const w = await page.$eval('#previews img', (i) => i.naturalWidth);
    ok(w === 200, 'the image preview shows the PNG (200 px wide)', w);
    await page.waitForSelector('#previews table.csv', { timeout: 30000 });
    const head = await page.$$eval('#previews table.csv th', (th) => th.map((t) => t.textContent));
    const body = await page.$$eval('#previews table.csv tr', (tr) => tr.length);
    ok(JSON.stringify(head) === '["x","sin","cos"]' && body === 11, 'the CSV preview: a table of the first rows', JSON.stringify(head) + ' rows ' + body);
    ok((await page.textContent('#previews')).includes('"rows": 50'), 'the JSON preview: its first bytes');
    await shot(page, '04-files-previews');
    const [dl] = await Promise.all([page.waitForEvent('download'), page.click('#zip')]);
    const zipPath = join(OUT, 'artifacts.zip');
    await dl.saveAs(zipPath);
    const list = execFileSync('unzip', ['-Z1', zipPath]).toString().trim().split('\n').sort();
    ok(JSON.stringify(list) === '["summary.json","wave.png","waves.csv"]', 'the zip downloads and holds the files', list.join(' '));
  });

  await check('Stop', async () => {
    await page.selectOption('#examples', 'slow');
    await page.waitForFunction(() => document.getElementById('code').value.includes('tick'));
    await page.click('#run');
    await page.waitForFunction(() => document.getElementById('log').textContent.includes('tick 2'), null, { timeout: LONG });
    ok(await page.isEnabled('#stop'), 'Stop is enabled while the script runs');
    await page.click('#stop');
    await page.waitForSelector('#result:not([hidden])', { timeout: 60000 });
    const s = await page.textContent('#summary');
    ok(/Status: cancelled/.test(s), 'Stop ends the long run: status cancelled', s);
    ok(!(await page.textContent('#log')).includes('tick 30'), 'before it finished on its own');
    // The result shows before the stream has closed (a CGI program ends a
    // moment later): wait for Run, with a ceiling.
    const again = await page.waitForFunction(() => !document.getElementById('run').disabled, null, { timeout: 60000 })
      .then(() => true, () => false);
    ok(again, 'Run is enabled again');
    await shot(page, '05-stopped');
  });

  await check('the seed example', async () => {
    if (HAVE_PILLOW !== '1') { skip('the seed example', 'no pillow wheel in the test wheelhouse (python3-pil missing)'); return; }
    await page.selectOption('#examples', 'seed');
    await page.waitForFunction(() => document.getElementById('input').value.includes('"img"'));
    const phases = [];
    await page.exposeFunction('notePhase', (p) => phases.push(p));
    await page.evaluate(() => new MutationObserver(() => window.notePhase(document.getElementById('phase').textContent))
      .observe(document.getElementById('phase'), { childList: true, characterData: true, subtree: true }));
    const s = await runAndWait(page);
    ok(/Status: ok/.test(s), 'the seed example (image flip, Pillow installed on the fly) runs end to end', s + '\n' + (await page.textContent('#log')));
    ok(phases.some((p) => /Installing .*pillow/i.test(p) || /Preparing/.test(p)) || (await page.textContent('#log')).includes('flipped'),
      'the phase named the install (or the environment was cached)', phases.join(' | '));
    await page.waitForFunction(() => [...document.querySelectorAll('#previews img')].some((i) => i.complete && i.naturalWidth > 0), null, { timeout: 30000 });
    ok((await page.textContent('#files')).includes('flipped.png'), 'flipped.png is listed and previewed');
    await shot(page, '06-seed');
  });

  await check('a readable error', async () => {
    await setCode(page, '#'.repeat(70000));
    await page.click('#run');
    await page.waitForSelector('#error:not([hidden])', { timeout: 30000 });
    const e = await page.textContent('#error');
    ok(/413/.test(e) && /code_bytes/.test(e), 'a script past code_bytes: a readable 413 naming the limit', e);
    await shot(page, '07-error-413');
  });

  await check('keyboard', async () => {
    await setCode(page, '');
    await page.focus('#code');
    await page.keyboard.type('if True:');
    await page.keyboard.press('Enter');
    await page.keyboard.press('Tab');
    await page.keyboard.type('pass');
    ok((await page.inputValue('#code')) === 'if True:\n    pass', 'Tab indents in the code box', JSON.stringify(await page.inputValue('#code')));
    await page.keyboard.press('Escape');
    await page.keyboard.press('Tab');
    const id = await page.evaluate(() => document.activeElement.id);
    ok(id && id !== 'code', 'Escape then Tab leaves the code box', id);
    ok(await page.getAttribute('#phase', 'aria-live') === 'polite', 'the status is a live region');
  });
  ok(consoleErrors.length === 0, 'no script errors on the page', consoleErrors.join('\n'));

  await check('no JavaScript', async () => {
    // The token goes as a header: a form post cannot add one (doc/web.md: with
    // auth_token set, the no-JavaScript page needs a proxy that adds it).
    const nojs = await browser.newContext({ javaScriptEnabled: false, extraHTTPHeaders: { Authorization: 'Bearer ' + TOKEN } });
    const p = await nojs.newPage();
    await p.goto(BASE + '/');
    ok(!(await p.isVisible('#stop')) && await p.isVisible('#run'), 'without JavaScript: the plain form (no Stop, no examples)');
    await p.fill('#code', 'import os\nprint("no js here")\nopen(os.path.join(os.environ["SCRIPT_OUTPUT"], "n.txt"), "w").write("x")\n');
    await p.fill('#input', 'some input');
    await Promise.all([p.waitForNavigation({ timeout: LONG }), p.click('#run')]);
    ok(p.url().endsWith('/api/run'), 'the form posts to api/run', p.url());
    const st = await p.textContent('#status');
    ok(/Status: ok/.test(st), 'and gets a result page with the status line', st);
    ok((await p.textContent('#log')).includes('no js here'), 'the log');
    const href = await p.getAttribute('table.files a', 'href');
    ok(href && href.startsWith('../artifacts/'), 'the file list with relative links', href);
    const r = await p.request.get(new URL(href, p.url()).href);
    ok(r.status() === 200 && (await r.text()) === 'x', 'the link downloads the file');
    ok(await p.isVisible('a.zip'), 'and the zip link');
    await shot(p, '08-nojs-result');
    await nojs.close();
  });

  await check('phone viewport', async () => {
    const phone = await browser.newContext({ viewport: { width: 375, height: 740 }, isMobile: true, hasTouch: true, deviceScaleFactor: 2 });
    await phone.addInitScript((t) => localStorage.setItem('runmyscript-token', t), TOKEN);
    const p = await phone.newPage();
    await p.goto(BASE + '/');
    const wide = await p.evaluate(() => document.documentElement.scrollWidth);
    ok(wide <= 375, 'on a 375 px wide screen nothing overflows sideways', wide);
    const box = await p.locator('#run').boundingBox();
    ok(box && box.width >= 44 && box.height >= 32, 'Run is a finger-sized button', JSON.stringify(box));
    await p.selectOption('#examples', 'hello');
    await p.waitForFunction(() => document.getElementById('code').value.includes('Hello'));
    await p.click('#run');
    await p.waitForSelector('#result:not([hidden])', { timeout: LONG });
    ok(/Status: ok/.test(await p.textContent('#summary')), 'a run works on the phone');
    ok((await p.evaluate(() => document.documentElement.scrollWidth)) <= 375, 'the result fits the width too');
    await shot(p, '09-phone');
    await phone.close();
  });
} finally {
  await browser.close();
}
done();
