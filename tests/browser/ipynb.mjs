// ipynb.mjs: Jupyter notebooks on the page, in Debian's chromium
// (playwright-core) against the server notebook.sh started (serve, with
// kernels). The form: a notebook whose third cell fails, opened with the
// file picker (setInputFiles), says it is a notebook, runs, says the run
// failed at cell 3 and lists the executed notebook among the files. The
// notebook view: Download notebook before any cell says there is nothing
// yet; after two cells it saves notebook.ipynb (nbformat 4, the two cells
// with their outputs) into OUT, where notebook.sh validates it. Prints TAP.
// Every wait has a ceiling; screenshots go to OUT for a person to look at.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { ok, check, shot, launch, done } from './lib.mjs';

const { BASE, TOKEN, OUT, NB } = process.env;
const LONG = 180000;  // ceiling of a run's or a cell's wait (a loaded machine)

const browser = await launch();
const ctx = await browser.newContext({ viewport: { width: 1280, height: 900 }, acceptDownloads: true });
await ctx.addInitScript((t) => localStorage.setItem('runmyscript-token', t), TOKEN);
const page = await ctx.newPage();
const pageErrors = [];
page.on('pageerror', (e) => pageErrors.push(String(e)));

await check('an .ipynb through the form', async () => {
  await page.goto(BASE + '/');
  ok((await page.getAttribute('#open-file', 'accept')).includes('.ipynb'), 'the file picker takes .ipynb');
  await page.setInputFiles('#open-file', NB);
  await page.waitForSelector('#ipynb-name:not([hidden])', { timeout: 10000 });
  ok(/Notebook third-fails\.ipynb/.test(await page.textContent('#ipynb-name')), 'the page says a notebook is open',
    await page.textContent('#ipynb-name'));
  ok((await page.inputValue('#code')).includes('"nbformat": 4'), 'its JSON is in the editor');
  await page.click('#run');
  await page.waitForSelector('#result:not([hidden])', { timeout: LONG });
  const summary = await page.textContent('#summary');
  ok(/Status: error/.test(summary), 'the run ends with status error', summary);
  const err = await page.textContent('#error');
  ok(/failed at cell 3: ZeroDivisionError: division by zero/i.test(err), 'and says it failed at cell 3', err);
  ok((await page.textContent('#files')).includes('third-fails.ipynb'), 'the executed notebook is among the files');
  const log = await page.textContent('#log');
  ok(log.includes('mean 2') && !log.includes('never printed'), 'the log holds the cells before the failing one, none after', log);
  await shot(page, 'nb-08-form-ipynb');
  // An example ends the notebook: the next run is a script again.
  await page.selectOption('#examples', 'hello');
  await page.waitForFunction(() => !document.getElementById('code').value.includes('nbformat'), null, { timeout: 10000 });
  ok(await page.isHidden('#ipynb-name') && (await page.inputValue('#ipynb')) === '',
    'choosing an example leaves the notebook');
});

await check('Download notebook', async () => {
  await page.click('#mode-notebook');
  await page.click('#nb-download');
  await page.waitForSelector('#nb-error:not([hidden])', { timeout: 10000 });
  ok(/Nothing to download yet/.test(await page.textContent('#nb-error')), 'before any cell: nothing to download yet');
  const area = (i) => page.locator('#cells .cell textarea').nth(i);
  await area(0).fill('print("from the page")\nx = 6');
  await page.keyboard.press('Shift+Enter');
  await area(1).fill('x * 7');
  await page.keyboard.press('Control+Enter');
  await page.waitForFunction(() => {
    const c = document.querySelectorAll('#cells .cell')[1];
    return c && c.querySelector('.prompt').textContent === '[2]' && c.querySelector('.cell-status').textContent.startsWith('Status');
  }, null, { timeout: LONG });
  const [download] = await Promise.all([page.waitForEvent('download', { timeout: 30000 }), page.click('#nb-download')]);
  ok(download.suggestedFilename() === 'notebook.ipynb', 'Download notebook saves notebook.ipynb', download.suggestedFilename());
  const path = join(OUT, 'notebook.ipynb');
  await download.saveAs(path);
  const nb = JSON.parse(readFileSync(path, 'utf-8'));
  ok(nb.nbformat === 4 && nb.cells.length === 2, 'a notebook of nbformat 4 with the two cells', JSON.stringify(nb).slice(0, 300));
  const text = (v) => (Array.isArray(v) ? v.join('') : v);
  ok(text(nb.cells[0].outputs[0].text) === 'from the page\n' && text(nb.cells[1].outputs[0].data['text/plain']) === '42',
    'with what the first printed and the second\'s value', JSON.stringify(nb.cells.map((c) => c.outputs)));
  ok(await page.isHidden('#nb-error'), 'and no error shown');
  await shot(page, 'nb-09-download');
});

ok(pageErrors.length === 0, 'no script errors on the page', pageErrors.join('\n'));
await browser.close();
done();
