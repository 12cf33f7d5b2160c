// web.mjs: the runmyscript page in Debian's chromium (playwright-core),
// against the server web.sh started. Prints TAP. Every wait has a ceiling
// (a guard against a hang); no assertion is about how long anything took.
// Screenshots at 1280 x 900 and 390 px wide, light and dark, go to OUT.
import { execFileSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { ok, skip, check, shot, launch, done } from './lib.mjs';

const { BASE, TOKEN, OUT, HAVE_PILLOW } = process.env;
const LONG = 180000;  // ceiling of a run's wait (an install may be slow on a loaded machine)

// A script that writes an 800 x 400 PNG with the standard library (zlib)
// and ends in an expression.
const PLOT = [
  'import os, struct, zlib',
  'w, h = 800, 400',
  'rows = b"".join(b"\\x00" + b"".join(bytes((x * 255 // w, y * 255 // h, 160)) for x in range(w)) for y in range(h))',
  'def chunk(t, d):',
  '    return struct.pack(">I", len(d)) + t + d + struct.pack(">I", zlib.crc32(t + d) & 0xffffffff)',
  'png = b"\\x89PNG\\r\\n\\x1a\\n" + chunk(b"IHDR", struct.pack(">IIBBBBB", w, h, 8, 2, 0, 0, 0)) + chunk(b"IDAT", zlib.compress(rows)) + chunk(b"IEND", b"")',
  'open(os.path.join(os.environ["SCRIPT_OUTPUT"], "plot.png"), "wb").write(png)',
  'print("drew plot.png")',
  '{"rows": 3, "mean": 2.5}',
].join('\n') + '\n';

const browser = await launch();
const ctx = await browser.newContext({ viewport: { width: 1280, height: 900 }, acceptDownloads: true });
const page = await ctx.newPage();
const consoleErrors = [];
page.on('pageerror', (e) => consoleErrors.push(String(e)));
const failedLoads = [];
page.on('response', (r) => { if (r.status() >= 400 && !r.url().includes('/api/')) failedLoads.push(r.status() + ' ' + r.url()); });

// Whether the element's box is (at least partly) inside the viewport.
const inView = (p, sel) => p.$eval(sel, (el) => {
  const b = el.getBoundingClientRect();
  return b.height > 0 && b.top < window.innerHeight && b.bottom > 0 && b.left < window.innerWidth && b.right > 0;
});
// The relative luminance of a CSS colour (rgb(...)), 0 black to 1 white.
const luminance = (c) => {
  const [r, g, b] = (c.match(/[\d.]+/g) || [0, 0, 0]).slice(0, 3).map(Number).map((v) => {
    v /= 255;
    return v <= 0.03928 ? v / 12.92 : ((v + 0.055) / 1.055) ** 2.4;
  });
  return 0.2126 * r + 0.7152 * g + 0.0722 * b;
};
const colours = (p) => p.evaluate(() => ({
  bg: getComputedStyle(document.body).backgroundColor, fg: getComputedStyle(document.body).color,
  panel: getComputedStyle(document.getElementById('code')).backgroundColor,
  code: getComputedStyle(document.getElementById('code')).color,
}));

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
    ok(resp.status() === 200 && (await page.title()) === 'runmyscript', 'the page loads from nginx (www/), titled with the program\'s name', await page.title());
    ok(await page.isVisible('label[for=code]') && await page.isVisible('label[for=input_file]'),
      'the code box and the input-file upload have labels');
    ok(await inView(page, '#run'), 'at 1280 x 900, Run is in view without scrolling');
    const side = await page.evaluate(() => {
      const f = document.getElementById('run-form').getBoundingClientRect(), o = document.getElementById('output').getBoundingClientRect();
      return { formRight: f.right, outLeft: o.left, outTop: o.top };
    });
    ok(side.outLeft >= side.formRight && side.outTop < 900, 'on a wide screen the output is beside the code (two columns)', JSON.stringify(side));
    ok(failedLoads.length === 0, 'the page loads with no request failing (a favicon, no 404)', failedLoads.join(' '));
    const icon = await page.request.get(BASE + '/favicon.svg');
    ok(icon.status() === 200 && (icon.headers()['content-type'] || '').includes('svg'), 'the favicon is served', icon.status());
    await shot(page, '01-start');
  });

  await check('401 and the token prompt', async () => {
    await setCode(page, 'print("hello from the browser")\n');
    await page.click('#run');
    await page.waitForSelector('#token-dialog[open]', { timeout: 30000 });
    ok(true, 'the server answers 401: the page asks for the token');
    ok((await page.textContent('#error')).includes('401'), 'and says why (HTTP 401)', await page.textContent('#error'));
    await shot(page, '02-token-prompt');
    ok(!(await page.isVisible('#token-wrong')), 'the first prompt does not say a token was wrong');
    await page.fill('#token', 'not-the-token');
    await page.click('#token-save');
    await page.waitForFunction(() => document.getElementById('token-dialog').open
      && !document.getElementById('token-wrong').hidden, null, { timeout: 30000 });
    ok(true, 'a wrong token: the prompt opens again and says the token was not accepted');
    await shot(page, '02b-token-wrong');
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

  await check('the output in view at 1280 x 900', async () => {
    await setCode(page, 'import time\nfor i in range(3):\n    print("line", i, flush=True)\n    time.sleep(0.3)\n');
    await page.evaluate(() => window.scrollTo(0, 0));
    await page.focus('#code');
    await page.keyboard.press('Control+Enter');
    await page.waitForFunction(() => document.getElementById('log').textContent.includes('line 0'), null, { timeout: LONG });
    ok(await inView(page, '#log') && await inView(page, '#phase'),
      'after Ctrl+Enter at 1280 x 900 the status and the live log are in view, beside the code');
    await page.waitForSelector('#result:not([hidden])', { timeout: LONG });
    ok(await inView(page, '#summary'), 'and so is the result');
    const st = await page.$$eval('#steps li', (lis) => lis.map((l) => [l.dataset.phase, l.className, l.hidden]));
    ok(JSON.stringify(st.find((x) => x[0] === 'installing')) === '["installing","",true]',
      'a standard-library script shows no Installing step', JSON.stringify(st));
    ok(st.filter((x) => x[0] !== 'installing').every((x) => x[1] === 'past'), 'and every step it went through done', JSON.stringify(st));
    ok((await page.textContent('#env')).includes('standard library only'), 'the environment: the standard library only',
      await page.textContent('#env'));
    await shot(page, '03b-wide-output');
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
    await page.waitForFunction(() => [...document.querySelectorAll('#images img')].some((i) => i.complete && i.naturalWidth > 0), null, { timeout: 30000 });
    const w = await page.$eval('#images img', (i) => i.naturalWidth);
    ok(w === 200, 'the image preview shows the PNG (200 px wide)', w);
    await page.waitForSelector('#previews table.csv', { timeout: 30000 });
    const head = await page.$$eval('#previews table.csv th', (th) => th.map((t) => t.textContent));
    const body = await page.$$eval('#previews table.csv tr', (tr) => tr.length);
    ok(JSON.stringify(head) === '["x","sin","cos"]' && body === 11, 'the CSV preview: a table of the first rows', JSON.stringify(head) + ' rows ' + body);
    ok((await page.textContent('#previews')).includes('"rows": 50'), 'the JSON preview: its first bytes');
    await shot(page, '04-files-previews');
    // The image opens full size: a dialog with it at its own size.
    await page.click('#images .zoom');
    await page.waitForSelector('#viewer[open]', { timeout: 10000 });
    await page.waitForFunction(() => { const i = document.getElementById('viewer-img'); return i.complete && i.naturalWidth > 0; });
    const full = await page.$eval('#viewer-img', (i) => [i.naturalWidth, Math.round(i.getBoundingClientRect().width)]);
    ok(full[0] === 200 && full[1] === 200, 'a preview opens the image full size (200 px shown 200 px wide)', JSON.stringify(full));
    await shot(page, '04b-image-full-size');
    await page.keyboard.press('Escape');
    ok(!(await page.isVisible('#viewer')), 'Escape closes it');
    const [dl] = await Promise.all([page.waitForEvent('download'), page.click('#zip')]);
    const zipPath = join(OUT, 'artifacts.zip');
    await dl.saveAs(zipPath);
    const list = execFileSync('unzip', ['-Z1', zipPath]).toString().trim().split('\n').sort();
    ok(JSON.stringify(list) === '["summary.json","wave.png","waves.csv"]', 'the zip downloads and holds the files', list.join(' '));
  });

  await check('SVG and a wide CSV', async () => {
    await setCode(page, [
      'import os',
      'out = os.environ["SCRIPT_OUTPUT"]',
      'open(os.path.join(out, "shape.svg"), "w").write(\'<svg xmlns="http://www.w3.org/2000/svg" width="120" height="60"><rect width="120" height="60" fill="teal"/></svg>\')',
      'cols = ["column_%02d" % i for i in range(24)]',
      'with open(os.path.join(out, "wide.csv"), "w") as f:',
      '    f.write(",".join(cols) + "\\n")',
      '    for r in range(5):',
      '        f.write(",".join(str(r * 100 + i) for i in range(24)) + "\\n")',
    ].join('\n'));
    const s = await runAndWait(page);
    ok(/Status: ok/.test(s), 'a script writing an SVG and a 24-column CSV runs', s);
    await page.waitForFunction(() => [...document.querySelectorAll('#images img')].some((i) => /shape\.svg/.test(i.src) && i.complete && i.naturalWidth > 0), null, { timeout: 30000 });
    ok(true, 'the SVG is previewed (as an image)');
    await page.waitForSelector('#previews .csv-wrap th', { timeout: 30000 });
    const wrap = await page.$eval('#previews .csv-wrap', (w) => {
      w.scrollLeft = w.scrollWidth;
      const last = [...w.querySelectorAll('th')].pop().getBoundingClientRect(), box = w.getBoundingClientRect();
      return { scrollable: w.scrollWidth > w.clientWidth, overflow: getComputedStyle(w).overflowX, lastIn: last.right <= box.right + 1 && last.left >= box.left - 1,
        figureWidth: Math.round(w.closest('figure').getBoundingClientRect().width), boxWidth: Math.round(document.getElementById('previews').getBoundingClientRect().width) };
    });
    ok(wrap.overflow === 'auto' && wrap.scrollable && wrap.lastIn, 'the CSV preview scrolls sideways to its last column, not clipped', JSON.stringify(wrap));
    ok(wrap.figureWidth === wrap.boxWidth, 'and takes the previews\' whole width', JSON.stringify(wrap));
    await shot(page, '04c-svg-csv');
  });

  await check('the value and a plot, where a person looks', async () => {
    await page.evaluate(() => window.scrollTo(0, 0));
    await setCode(page, PLOT);
    const s = await runAndWait(page);
    ok(/Status: ok/.test(s), 'a script that draws an 800 x 400 PNG and ends in an expression runs', s);
    ok(await page.isVisible('#value') && (await page.textContent('#value')) === "{'rows': 3, 'mean': 2.5}",
      'the value of its last line is shown', await page.textContent('#value-box'));
    await page.waitForFunction(() => [...document.querySelectorAll('#images img')].some((i) => i.complete && i.naturalWidth > 0), null, { timeout: 30000 });
    const img = await page.$eval('#images img', (i) => { const b = i.getBoundingClientRect(); return { w: Math.round(b.width), top: Math.round(b.top), bottom: Math.round(b.bottom), vh: window.innerHeight }; });
    ok(img.w >= 500, 'the plot is shown at a readable size (500 px wide or more, not a thumbnail)', JSON.stringify(img));
    ok(await inView(page, '#images img') && img.top < img.vh * 0.75, 'and in view after the run, without scrolling', JSON.stringify(img));
    await shot(page, '03c-value-plot');
  });

  await check('the Timeout field\'s maximum', async () => {
    const max = await page.getAttribute('#timeout', 'max');
    ok(max === '60', 'the Timeout field\'s maximum is the server\'s timeout (60 s)', max);
    ok(/At most 60 s/.test(await page.textContent('#timeout-max')), 'and the page says it', await page.textContent('#timeout-max'));
    await setCode(page, 'print("never sent")\n');
    let posted = 0;
    const count = () => { posted++; };
    page.on('request', (r) => { if (r.url().includes('/api/run')) count(); });
    await page.fill('#timeout', '600');
    await page.click('#run');
    await page.waitForTimeout(500);
    const over = await page.$eval('#timeout', (i) => i.validity.rangeOverflow);
    ok(over && posted === 0, '600 is refused in the field, before Run sends anything', JSON.stringify({ over, posted }));
    page.off('request', count);
    await page.fill('#timeout', '');
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
    await page.waitForFunction(() => [...document.querySelectorAll('#images img')].some((i) => i.complete && i.naturalWidth > 0), null, { timeout: 30000 });
    ok((await page.textContent('#files')).includes('flipped.png'), 'flipped.png is listed and previewed');
    // The installer's lines are one fold, closed, the script's output after
    // it (where an earlier run, a test's before the page's, built it:
    // nothing is installed, and there is no fold).
    const built = /built for this run/.test(await page.textContent('#env'));
    if (!built) {
      ok(!(await page.$('#log details.install-fold')), 'a cached environment: no installer lines, no fold');
      skip('the installer\'s fold', 'the environment was built before (cached): nothing was installed');
    }
    const fold = !built ? null : await page.$eval('#log', (l) => {
      const f = l.querySelector('details.install-fold');
      return f && { open: f.open, summary: f.querySelector('summary').textContent, n: l.querySelectorAll('details.install-fold').length };
    });
    if (built) {
      ok(fold && !fold.open && /^Installer output: \d+ lines/.test(fold.summary) && fold.n === 1,
        'the installer\'s lines are folded into one closed block that counts them', JSON.stringify(fold));
      ok(!(await page.isVisible('#log .install-fold .install')) && await page.isVisible('#log span.stdout'),
        'folded, they are out of sight and the script\'s own output is in view');
      await page.click('#log .install-fold summary');
      ok(await page.isVisible('#log .install-fold .install'), 'a click opens the fold');
    }
    const env = await page.textContent('#env');
    ok(/(built for this run|cached \(built by an earlier run\)): .*pillow==/.test(env), 'the environment: built or cached, its packages', env);
    await shot(page, '06-seed');
    await runAndWait(page);
    ok(/cached .*pillow==/.test(await page.textContent('#env')), 'run again: the environment is cached', await page.textContent('#env'));
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
  await check('an install that fails', async () => {
    await setCode(page, 'import nonexistent_module_xyz\nprint("never")\n');
    const s = await runAndWait(page);
    ok(/Status: install_failed · after \d+(\.\d)? s · the script did not run/.test(s),
      'install_failed says how long it took, and that the script did not run (not "0 ms")', s);
    const st = Object.fromEntries(await page.$$eval('#steps li', (lis) => lis.map((l) => [l.dataset.phase, l.className])));
    ok(st.installing === 'past' && st.running === 'skipped' && st.collecting === 'skipped',
      'Installing is done; Running and Collecting, which never ran, are marked so, not done', JSON.stringify(st));
    const log = await page.textContent('#log');
    const lines = log.split('\n').filter((l) => l.startsWith('ERROR: No matching distribution found for nonexistent-module-xyz'));
    ok(lines.length === 1, 'the installer\'s log is shown once', log);
    const err = await page.textContent('#error');
    // Where the installer looked and the keys are the operator's (the
    // server's log): a client is told that the server's sources lack it.
    ok(/could not be installed, so the script did not run/.test(err) && /package sources do not have it/.test(err) &&
      !/find_links/.test(err),
      'the reason: the server\'s package sources do not have it (no server path or key)', err);
    await shot(page, '07b-install-failed');
  });

  await check('limits in plain words', async () => {
    await setCode(page, 'import time\nprint("sleeping", flush=True)\ntime.sleep(30)\n');
    await page.fill('#timeout', '1');
    let s = await runAndWait(page);
    ok(/Status: timeout/.test(s), 'a run past its timeout: status timeout', s);
    let err = await page.textContent('#error');
    ok(err === 'The script ran longer than it may, 1 s, and was stopped (timeout = 1 s).', 'said in plain words, with the limit and its value', err);
    await page.fill('#timeout', '');
    await setCode(page, 'while True:\n    print("runaway " * 10)\n');
    s = await runAndWait(page);
    ok(/Status: output_limit/.test(s), 'a runaway print loop: stopped at the output limit, not the timeout', s);
    err = await page.textContent('#error');
    ok(/printed more than a run may, 1 MiB: the log was cut there and the run stopped \(log_bytes = 1 MiB\)/.test(err), 'said so in plain words', err);
  });

  await check('a traceback', async () => {
    await setCode(page, 'def f():\n    raise ValueError("from the page")\nf()\n');
    const s = await runAndWait(page);
    ok(/Status: error/.test(s) && /exit code 1/.test(s), 'a failing script: status error, exit code 1', s);
    const log = await page.textContent('#log');
    if (/namespaces/.test(s))
      ok(log.includes('File "/job/script.py", line 3') && log.includes('ValueError: from the page'),
        'its traceback names /job/script.py, as over MCP and on the command line', log);
    else
      skip('the script\'s path in a traceback', 'runs are not in the namespaces here');
    ok(/The script failed \(exit code 1\): see the log\./.test(await page.textContent('#error')), 'and says so in words');
  });

  await check('the server cannot be reached', async () => {
    await page.route('**/api/run', (r) => r.abort('connectionrefused'));
    await setCode(page, 'print(1)\n');
    await page.click('#run');
    await page.waitForSelector('#error:not([hidden])', { timeout: 30000 });
    const phase = await page.textContent('#phase');
    ok(phase === 'Not run.', 'the status says Not run, not "Sending…"', phase);
    ok(/Cannot reach the server/.test(await page.textContent('#error')), 'and the error says why');
    ok(await page.isEnabled('#run'), 'Run can be pressed again');
    await page.unroute('**/api/run');
  });

  await check('the script is kept across a reload', async () => {
    await setCode(page, 'print("kept across a reload")\n');
    await page.fill('#input', 'my input');
    await page.reload();
    ok(await page.inputValue('#code') === 'print("kept across a reload")\n' && await page.inputValue('#input') === 'my input',
      'after a reload the code box and the input hold what was typed', await page.inputValue('#code'));
  });

  await check('dark mode', async () => {
    const light = await colours(page);
    await page.emulateMedia({ colorScheme: 'dark' });
    const dark = await colours(page);
    ok(luminance(light.bg) > 0.8 && luminance(light.fg) < 0.1, 'light: a light page, dark text', JSON.stringify(light));
    ok(luminance(dark.bg) < 0.05 && luminance(dark.fg) > 0.6, 'dark (prefers-color-scheme: dark): a dark page, light text', JSON.stringify(dark));
    ok(luminance(dark.panel) < 0.1 && luminance(dark.code) > 0.6, 'the code box too', JSON.stringify(dark));
    const ratio = (a, b) => (Math.max(a, b) + 0.05) / (Math.min(a, b) + 0.05);
    ok(ratio(luminance(dark.bg), luminance(dark.fg)) >= 7, 'with a contrast of 7:1 or more', ratio(luminance(dark.bg), luminance(dark.fg)));
    await setCode(page, 'import sys\nprint("dark mode")\nprint("an error line", file=sys.stderr)\n');
    await runAndWait(page);
    await shot(page, '10-dark-1280');
    await page.emulateMedia({ colorScheme: 'light' });
    await shot(page, '10-light-1280');
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

  for (const scheme of ['light', 'dark']) {
    await check(`390 px, ${scheme}`, async () => {
      const c = await browser.newContext({ viewport: { width: 390, height: 844 }, isMobile: true, hasTouch: true, deviceScaleFactor: 2, colorScheme: scheme });
      await c.addInitScript((t) => localStorage.setItem('runmyscript-token', t), TOKEN);
      const p = await c.newPage();
      await p.goto(BASE + '/');
      // A table as wide as df.describe() prints one, then ticks.
      await p.fill('#code', 'import time\nprint("       " + "".join("%14s" % ("column_%d" % i) for i in range(8)))\n'
        + 'for r in ("count", "mean", "std"):\n    print("%-7s" % r + "".join("%14.6f" % (i * 1.5) for i in range(8)))\n'
        + 'for i in range(6):\n    print("tick", i, flush=True)\n    time.sleep(0.3)\n');
      await p.evaluate(() => window.scrollTo(0, 0));
      await p.click('#run');
      const seen = await p.waitForFunction(() => {
        const b = document.getElementById('output').getBoundingClientRect();
        return b.top >= -1 && b.top < window.innerHeight / 2 && document.getElementById('log').textContent.includes('tick');
      }, null, { timeout: LONG }).then(() => true, () => false);
      ok(seen, `at 390 px (${scheme}) Run scrolls the output into view, with the live log`);
      const running = await p.$eval('#result', (r) => r.hidden);
      ok(running && await inView(p, '#stop') && await p.isEnabled('#stop'), 'Stop is in view and enabled while the script runs', running);
      await shot(p, `11-${scheme}-390-running`);
      await p.waitForSelector('#result:not([hidden])', { timeout: LONG });
      ok((await p.evaluate(() => document.documentElement.scrollWidth)) <= 390, 'nothing overflows sideways');
      const log = await p.$eval('#log', (l) => {
        const line = parseFloat(getComputedStyle(l).lineHeight);
        const span = l.querySelector('.stdout').getBoundingClientRect();
        return { ws: getComputedStyle(l).whiteSpace, scrolls: l.scrollWidth > l.clientWidth, lines: Math.round(span.height / line) };
      });
      ok(log.ws === 'pre' && log.scrolls && log.lines === 10,
        'a table wider than the log scrolls sideways, each of its lines one line (10 lines printed, 10 shown)', JSON.stringify(log));
      await shot(p, `11-${scheme}-390`);
      // A plot, and its full-size view on the phone.
      await p.fill('#code', PLOT);
      await p.click('#run');
      await p.waitForSelector('#result:not([hidden])', { timeout: LONG });
      await p.waitForFunction(() => [...document.querySelectorAll('#images img')].some((i) => i.complete && i.naturalWidth > 0), null, { timeout: 30000 });
      ok((await p.textContent('#value')).includes("'mean'"), 'the value shows on the phone too');
      await p.$eval('#images .zoom', (b) => b.scrollIntoView());
      await shot(p, `12-${scheme}-390-plot`);
      await p.click('#images .zoom');
      await p.waitForSelector('#viewer[open]', { timeout: 10000 });
      await p.waitForFunction(() => { const i = document.getElementById('viewer-img'); return i.complete && i.naturalWidth > 0; });
      const v = await p.evaluate(() => {
        const i = document.getElementById('viewer-img').getBoundingClientRect(), h = document.getElementById('viewer-h');
        const line = parseFloat(getComputedStyle(h).lineHeight) || 20;
        return { left: i.left, right: i.right, vw: window.innerWidth, titleLines: Math.round(h.getBoundingClientRect().height / line) };
      });
      ok(v.left >= 0 && v.right <= v.vw, 'the full-size view shows the whole image on the phone, not cropped', JSON.stringify(v));
      ok(v.titleLines === 1, 'and its title on one line, not broken mid-word', JSON.stringify(v));
      await shot(p, `12-${scheme}-390-viewer`);
      await p.keyboard.press('Escape');
      await c.close();
    });
  }
} finally {
  await browser.close();
}
done();
