// kernel-restore.mjs: a restored kernel on the page's notebook, in
// Debian's chromium (playwright-core) against the server kernel-restore.sh
// started (kernel_idle = 3s): a cell defines names (one of them a socket,
// which cannot be saved), the kernel is saved and stopped for kernel_idle
// (/healthz counts no live kernel), and the next cell uses the names: its
// status says the kernel was restored, its Why says why the last one
// stopped and what was saved, and the kernel line lists the names back and
// the one not back with its type; at 1280 and 390 px (nothing overflows
// sideways), light and dark. Prints TAP. Every wait has a ceiling; no
// assertion is about how long anything took.
import { ok, check, shot, launch, done, nbCell as cell, nbRan } from './lib.mjs';

const { BASE, TOKEN } = process.env;

const browser = await launch();
async function runCell(p, i, text) {
  const area = cell(p, i).locator('textarea');
  await area.click();
  await area.fill(text);
  await cell(p, i).locator('.cell-run').click();
  await nbRan(p, i);
  return cell(p, i).evaluate((c) => ({
    prompt: c.querySelector('.prompt').textContent,
    status: c.querySelector('.cell-status').textContent,
    why: c.querySelector('.cell-why') ? c.querySelector('.cell-why').textContent : '',
    value: c.querySelector('.cell-value').hidden ? null : c.querySelector('.value').textContent,
  }));
}
// Until /healthz counts no live kernel (kernel_idle stopped and saved it).
async function noneLive() {
  for (let i = 0; i < 600; i++) {
    const h = await (await fetch(BASE + '/healthz')).json();
    if (h.kernels.live === 0) return true;
    await new Promise((r) => setTimeout(r, 100));
  }
  return false;
}

async function restore(p, label, name) {
  const a = await runCell(p, 0, `import socket\nbase = 40\ndef more(v):\n    return v + 2\nclass Box:\n    pass\nsock = socket.socket()`);
  ok(a.prompt === '[1]' && /Status: ok/.test(a.status) && /a new kernel/.test(a.status), `${label}: the first cell starts a kernel`,
    JSON.stringify(a));
  ok(await noneLive(), `${label}: kernel_idle stops the kernel (no live kernel)`);
  await p.click('#nb-add');
  const b = await runCell(p, 1, 'more(base)');
  ok(b.prompt === '[2]' && b.value === '42' && /Status: ok/.test(b.status), `${label}: the next cell uses the first's names (42, cell 2)`,
    JSON.stringify(b));
  ok(/the kernel restored/.test(b.status), `${label}: its status says the kernel was restored`, b.status);
  ok(/kernel_idle/.test(b.why) && /names were saved/.test(b.why), `${label}: its Why says why the last one stopped and what was saved`,
    b.why);
  const line = await p.textContent('#nb-kernel');
  ok(/^The kernel was restored from its saved state: [^;]*\bBox\b[^;]*\bbase\b[^;]*\bmore\b[^;]* back; not back: sock \(socket/.test(line)
    && line.includes('Cell 2 done: ok'),
    `${label}: the kernel line lists the names back and the socket not back, with its type`, line);
  await p.locator('#nb-kernel').scrollIntoViewIfNeeded();
  await shot(p, name);
  await p.emulateMedia({ colorScheme: 'dark' });
  await shot(p, name + '-dark');
  await p.emulateMedia({ colorScheme: 'light' });
}

try {
  await check('1280 px', async () => {
    const ctx = await browser.newContext({ viewport: { width: 1280, height: 900 } });
    await ctx.addInitScript((t) => localStorage.setItem('runmyscript-token', t), TOKEN);
    const page = await ctx.newPage();
    const errors = [];
    page.on('pageerror', (e) => errors.push(String(e)));
    await page.goto(BASE + '/#notebook');
    await restore(page, '1280 px', 'kr-01-restored-1280');
    ok(errors.length === 0, '1280 px: no script errors on the page', errors.join('\n'));
    await ctx.close();
  });
  await check('390 px', async () => {
    const phone = await browser.newContext({ viewport: { width: 390, height: 844 }, isMobile: true, hasTouch: true, deviceScaleFactor: 2 });
    await phone.addInitScript((t) => localStorage.setItem('runmyscript-token', t), TOKEN);
    const p = await phone.newPage();
    await p.goto(BASE + '/#notebook');
    await restore(p, '390 px', 'kr-02-restored-390');
    const wide = await p.evaluate(() => document.documentElement.scrollWidth);
    ok(wide <= 390, '390 px: nothing overflows sideways', wide);
    await phone.close();
  });
} finally {
  await browser.close();
}
done();
