// notebook.mjs: the page's notebook mode in Debian's chromium
// (playwright-core) against the real server notebook.sh started (serve,
// with kernels): three cells where the second shows a value made of the
// first's names and the third makes a file, Shift+Enter moving on, the
// token prompt running the cell again, Reset, Stop, a reload that keeps the
// notebook, a workspace that is gone, Add a file (setInputFiles) read by a
// cell, a plot at the cell's width, the one-line package status with its
// Why, a long line's first character after it scrolled, at 1280 and 390
// px, light and dark. Prints TAP.
// Every wait has a ceiling (a guard against a hang); no assertion is about
// how long anything took. Screenshots go to OUT for a person to look at.
import { ok, check, shot, launch, done, LONG, nbCell as cell, nbRan } from './lib.mjs';

const { BASE, TOKEN } = process.env;

const browser = await launch();

async function typeCell(p, i, text) {
  const area = cell(p, i).locator('textarea');
  await area.click();
  await area.fill(text);
}
// Waits until cell i shows a prompt [N] (it has run), returns its texts.
async function ran(p, i) {
  await nbRan(p, i);
  return cell(p, i).evaluate((c) => ({
    prompt: c.querySelector('.prompt').textContent,
    status: c.querySelector('.cell-status').textContent,
    value: c.querySelector('.cell-value').hidden ? null : c.querySelector('.value').textContent,
    out: c.querySelector('.out-prompt').textContent,
    log: c.querySelector('.cell-log').textContent,
    problem: c.querySelector('.cell-problem').hidden ? '' : c.querySelector('.cell-problem').textContent,
    files: [...c.querySelectorAll('.cell-files tbody tr')].map((tr) => tr.cells[0].textContent),
  }));
}
// Waits until cell i has run once more than it had (its prompt changed from before).
async function runAgain(p, i, before) {
  await p.waitForFunction(([k, b]) => {
    const c = document.querySelectorAll('#cells .cell')[k];
    return c && c.querySelector('.cell-status').textContent !== b && c.querySelector('.cell-status').textContent.startsWith('Status');
  }, [i, before], { timeout: LONG });
  return ran(p, i);
}

// Three cells at a viewport: names of the first in the second's value, a
// file of the third; all by Shift+Enter.
async function threeCells(p, label) {
  await typeCell(p, 0, 'base = 40\ndef more(v):\n    return v + 2');
  await p.keyboard.press('Shift+Enter');
  const a = await ran(p, 0);
  ok(a.prompt === '[1]' && /Status: ok/.test(a.status) && a.value === null, `${label}: the first cell runs (its prompt [1], no value)`,
    JSON.stringify(a));
  ok(await cell(p, 1).count() === 1 && await p.evaluate(() => document.activeElement === document.querySelectorAll('#cells textarea')[1]),
    `${label}: Shift+Enter added the next cell and moved into it`);
  await p.keyboard.type('more(base)');
  await p.keyboard.press('Shift+Enter');
  const b = await ran(p, 1);
  ok(b.prompt === '[2]' && b.value === '42' && b.out === 'Out[2]', `${label}: the second cell shows 42 (Out[2]) from the first cell's names`,
    JSON.stringify(b));
  await p.keyboard.type('import os\nprint("third")\nopen(os.path.join(os.environ["SCRIPT_OUTPUT"], "t.csv"), "w").write("a,b\\n1,2\\n")');
  await p.keyboard.press('Control+Enter');
  const c = await ran(p, 2);
  ok(c.prompt === '[3]' && c.log.includes('third') && c.value === '8' && JSON.stringify(c.files) === '["t.csv"]',
    `${label}: the third cell's log, value and file (Ctrl+Enter ran it in place)`, JSON.stringify(c));
  ok(await cell(p, 2).locator('.cell-files a').getAttribute('href').then((h) => h.startsWith('artifacts/')),
    `${label}: its file links relative (artifacts/...)`);
  await p.waitForSelector('#cells .cell:nth-child(3) .cell-previews table.csv', { timeout: 30000 });
  ok(true, `${label}: and previews it (the form's CSV preview)`);
  ok(await cell(p, 3).count() === 0, `${label}: Ctrl+Enter added no cell`);
}


const SALES = 'city,sales\nLyon,3\nOslo,4\n';
// Add a file: sales.csv through the page's file input (setInputFiles), then
// a new cell that reads it; returns that cell's texts.
async function addFile(p, label) {
  const before = await p.locator('#nb-files li').count();
  await p.setInputFiles('#nb-file', { name: 'sales.csv', mimeType: 'text/csv', buffer: Buffer.from(SALES) });
  await p.waitForFunction((n) => document.querySelectorAll('#nb-files li').length > n, before, { timeout: 30000 });
  const li = await p.locator('#nb-files li').last().textContent();
  ok(/^mounts\/sales\.csv \(25 bytes\)/.test(li) && li.includes('pd.read_csv("mounts/sales.csv")'),
    `${label}: Add a file: the list names it and how to read it`, li);
  await p.click('#nb-add');
  const i = (await p.locator('#cells .cell').count()) - 1;
  await typeCell(p, i, 'import csv\nsum(int(r["sales"]) for r in csv.DictReader(open("mounts/sales.csv")))');
  await cell(p, i).locator('.cell-run').click();
  const r = await ran(p, i);
  ok(r.value === '7' && /Status: ok/.test(r.status), `${label}: a cell reads the file added`, JSON.stringify(r));
  return i;
}

// A plot: a figure left open comes back as an image at the cell's width.
async function plot(p, label) {
  await p.click('#nb-add');
  const i = (await p.locator('#cells .cell').count()) - 1;
  await typeCell(p, i, 'import matplotlib\nmatplotlib.use("Agg")\nimport matplotlib.pyplot as plt\nplt.plot([1, 3, 2])');
  await cell(p, i).locator('.cell-run').click();
  const r = await ran(p, i);
  const img = cell(p, i).locator('.cell-previews img');
  await img.first().waitFor({ timeout: 30000 });
  await img.first().evaluate((e) => e.complete || new Promise((res) => { e.onload = res; }));
  const w = await cell(p, i).evaluate((c) => ({
    img: c.querySelector('.cell-previews img').getBoundingClientRect().width,
    natural: c.querySelector('.cell-previews img').naturalWidth,
    // the content width of the plot's frame (a figure as wide as the cell,
    // with its padding and border): what an image at the cell's width fills
    out: (() => {
      const o = c.querySelector('.cell-previews img').closest('figure') || c.querySelector('.cell-previews');
      const cs = getComputedStyle(o);
      return o.clientWidth - parseFloat(cs.paddingLeft) - parseFloat(cs.paddingRight);
    })(),
    cell: c.querySelector('.cell-previews').getBoundingClientRect().width,
  }));
  // The cell's width, or the image's own when that is less (never blown up,
  // never a thumbnail).
  const want = Math.min(w.out, w.natural);
  ok(/Status: ok/.test(r.status) && w.img >= 0.95 * want && w.img <= w.out + 1 && w.out >= 0.9 * w.cell,
    `${label}: a plot is shown at the cell's width (or its own, when less)`, JSON.stringify({ status: r.status, w }));
  await img.first().scrollIntoViewIfNeeded();
  return i;
}

// The short package line: a cell whose import adds a package to the
// running kernel says "packages added" on one line, with a closed Why.
async function packages(p, label) {
  await p.click('#nb-add');
  const i = (await p.locator('#cells .cell').count()) - 1;
  await typeCell(p, i, 'import rms_alpha\n1');
  await cell(p, i).locator('.cell-run').click();
  const r = await ran(p, i);
  const st = cell(p, i).locator('.cell-status');
  const m = await st.evaluate((e) => ({ h: e.getBoundingClientRect().height, lh: parseFloat(getComputedStyle(e).lineHeight) || 20,
    open: e.querySelector('details.cell-why')?.open, why: e.querySelector('details.cell-why') !== null }));
  ok(/packages added/.test(r.status) && m.why && !m.open && m.h <= 2 * m.lh,
    `${label}: packages added to the kernel: one short status line, its Why closed`, JSON.stringify({ r, m }));
  await st.locator('summary').click();
  const why = await st.locator('details.cell-why').textContent();
  ok(why.includes('rms-alpha'), `${label}: Why opens the whole reason (which package)`, why);
  return i;
}

// A long line: while typed it scrolls sideways; once the cell is left,
// its first character shows again.
async function firstChar(p, label) {
  await p.click('#nb-add');
  const i = (await p.locator('#cells .cell').count()) - 1;
  await typeCell(p, i, 'long = "' + 'x'.repeat(160) + '"');
  const area = cell(p, i).locator('textarea');
  await area.press('End');
  const typing = await area.evaluate((e) => e.scrollLeft);
  await p.click('#nb-h');
  const left = await area.evaluate((e) => ({ scroll: e.scrollLeft, x: e.getBoundingClientRect().left }));
  ok(typing > 0 && left.scroll === 0 && left.x >= 0, `${label}: a long line scrolls while typed, and shows its first character after`,
    JSON.stringify({ typing, left }));
}

try {
  const ctx = await browser.newContext({ viewport: { width: 1280, height: 900 } });
  const page = await ctx.newPage();
  const consoleErrors = [];
  page.on('pageerror', (e) => consoleErrors.push(String(e)));

  await check('the mode', async () => {
    await page.goto(BASE + '/');
    await page.click('#mode-notebook');
    ok(await page.isVisible('#notebook') && !(await page.isVisible('#run-form')), 'Notebook shows the notebook and hides the form');
    ok((await page.getAttribute('#mode-notebook', 'aria-pressed')) === 'true' && page.url().endsWith('#notebook'),
      'the mode is pressed and in the address (#notebook)', page.url());
    ok(await cell(page, 0).count() === 1, 'with one empty cell');
  });

  await check('the token prompt', async () => {
    await typeCell(page, 0, 'x = 1');
    await page.keyboard.press('Control+Enter');
    await page.waitForSelector('#token-dialog[open]', { timeout: 30000 });
    ok(true, 'a cell without the token: the page asks for it (the form\'s dialog)');
    await page.fill('#token', TOKEN);
    await page.click('#token-save');
    const a = await ran(page, 0);
    ok(a.prompt === '[1]' && /Status: ok/.test(a.status), 'Save runs the cell again, with the token', JSON.stringify(a));
  });

  await check('three cells at 1280 px', async () => {
    await page.click('#nb-reset');
    await page.waitForFunction(() => document.getElementById('nb-kernel').textContent.startsWith('Reset'), null, { timeout: 30000 });
    await threeCells(page, '1280 px');
    ok((await page.textContent('#nb-kernel')).includes('Cell 3 done: ok'), 'the kernel line says what ran');
    await shot(page, 'nb-01-three-cells-1280');
  });

  await check('files, plots and packages at 1280 px', async () => {
    await addFile(page, '1280 px');
    await plot(page, '1280 px');
    await packages(page, '1280 px');
    await shot(page, 'nb-04-file-plot-packages-1280');
    await page.emulateMedia({ colorScheme: 'dark' });
    await shot(page, 'nb-05-file-plot-packages-1280-dark');
    await page.emulateMedia({ colorScheme: 'light' });
  });

  await check('Reset', async () => {
    await page.click('#nb-reset');
    await page.waitForFunction(() => document.getElementById('nb-kernel').textContent.startsWith('Reset'), null, { timeout: 30000 });
    ok(await cell(page, 0).evaluate((c) => c.classList.contains('stale')), 'Reset marks the outputs as from before');
    const before = await cell(page, 1).locator('.cell-status').textContent();
    await cell(page, 1).locator('.cell-run').click();
    const b = await runAgain(page, 1, before);
    ok(b.prompt === '[1]' && /Status: error/.test(b.status) && b.log.includes('NameError') && /failed/.test(b.problem),
      'after Reset the second cell runs first in a new kernel: the names are gone (NameError)', JSON.stringify(b));
    ok(/a new kernel/.test(b.status) && /reset/.test(b.status), 'its status says a new kernel, and why', b.status);
    await shot(page, 'nb-02-after-reset');
  });

  await check('Stop', async () => {
    await page.click('#nb-add');
    const i = (await page.locator('#cells .cell').count()) - 1;
    await typeCell(page, i, 'import time\nfor k in range(60):\n    print("tick", k, flush=True)\n    time.sleep(0.5)');
    await cell(page, i).locator('.cell-run').click();
    await page.waitForFunction((k) => document.querySelectorAll('#cells .cell-log')[k].textContent.includes('tick 2'), i, { timeout: LONG });
    ok(await cell(page, i).locator('.cell-stop').isEnabled(), 'Stop is enabled while the cell runs');
    await cell(page, i).locator('.cell-stop').click();
    const s = await ran(page, i);
    ok(/Status: cancelled/.test(s.status) && !s.log.includes('tick 59'), 'Stop interrupts the cell (status cancelled)', JSON.stringify(s));
    await typeCell(page, i, 'k');
    await cell(page, i).locator('.cell-run').click();
    const k = await runAgain(page, i, s.status);
    ok(/Status: ok/.test(k.status) && Number(k.value) >= 2, 'and the kernel keeps what the cell had done (k)', JSON.stringify(k));
  });

  await check('a reload keeps the notebook', async () => {
    const count = await page.locator('#cells .cell').count();
    await page.reload();
    ok(await page.isVisible('#notebook') && (await page.locator('#cells .cell').count()) === count,
      'after a reload: the notebook mode and its cells', count);
    const i = count - 1;
    await typeCell(page, i, 'k * 0 + 7');
    await cell(page, i).locator('.cell-run').click();
    const r = await ran(page, i);
    ok(r.value === '7' && /Status: ok/.test(r.status), 'its kernel is the same one (k is still there)', JSON.stringify(r));
  });

  await check('a workspace that is gone', async () => {
    await page.evaluate(() => sessionStorage.setItem('runmyscript-notebook',
      JSON.stringify({ workspace: '0123456789abcdef0123456789abcdef', cells: ['y = 3\ny'] })));
    await page.reload();
    await cell(page, 0).locator('.cell-run').click();
    const r = await ran(page, 0);
    ok(r.value === '3' && /was gone/.test(await page.textContent('#nb-kernel')),
      'a cell of a notebook whose workspace is gone runs in a new one, and the page says so', JSON.stringify(r));
  });
  ok(consoleErrors.length === 0, 'no script errors on the page', consoleErrors.join('\n'));
  await ctx.close();

  await check('390 px', async () => {
    const phone = await browser.newContext({ viewport: { width: 390, height: 844 }, isMobile: true, hasTouch: true, deviceScaleFactor: 2 });
    await phone.addInitScript((t) => localStorage.setItem('runmyscript-token', t), TOKEN);
    const p = await phone.newPage();
    await p.goto(BASE + '/#notebook');
    ok(await p.isVisible('#notebook'), 'the address #notebook opens the notebook');
    // A file before any cell: it makes the notebook's workspace.
    await p.setInputFiles('#nb-file', { name: 'sales.csv', mimeType: 'text/csv', buffer: Buffer.from(SALES) });
    await p.waitForFunction(() => document.querySelectorAll('#nb-files li').length === 1, null, { timeout: 30000 });
    ok(/^[0-9a-f]{32}$/.test(await p.evaluate(() => JSON.parse(sessionStorage.getItem('runmyscript-notebook')).workspace)),
      '390 px: a file added before any cell makes the notebook\'s workspace');
    await threeCells(p, '390 px');
    await addFile(p, '390 px');
    await firstChar(p, '390 px');
    await plot(p, '390 px');
    await packages(p, '390 px');
    await shot(p, 'nb-06-file-plot-packages-390');
    await p.emulateMedia({ colorScheme: 'dark' });
    await shot(p, 'nb-07-file-plot-packages-390-dark');
    await p.emulateMedia({ colorScheme: 'light' });
    const wide = await p.evaluate(() => document.documentElement.scrollWidth);
    ok(wide <= 390, 'on a 390 px wide screen nothing overflows sideways', wide);
    const box = await cell(p, 0).locator('.cell-run').boundingBox();
    ok(box && box.height >= 30, 'a cell\'s Run is finger-sized', JSON.stringify(box));
    await p.click('#nb-reset');
    await p.waitForFunction(() => document.getElementById('nb-kernel').textContent.startsWith('Reset'), null, { timeout: 30000 });
    ok(true, 'Reset on the phone');
    await shot(p, 'nb-03-three-cells-390');
    await phone.close();
  });
} finally {
  await browser.close();
}
done();
