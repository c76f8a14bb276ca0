/**
 * A real headless Chromium for the report pages, from the @sparticuz/chromium package
 * that `npm ci` installs: nothing is installed by hand. One browser per test file keeps it quick.
 *
 * Every page is opened with request interception on: only file:// URLs go through (the page and
 * the links it is clicked through to); anything else is recorded and aborted, so a test can assert
 * that a page fetched nothing. Console errors, page errors (uncaught exceptions) and CSP
 * violations, which Chromium reports on the console, are recorded too.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import chromium from '@sparticuz/chromium';
import puppeteer, { type Browser, type Page } from 'puppeteer-core';

export interface BrowserHandle {
  browser: Browser;
  close(): Promise<void>;
}

export async function launchBrowser(): Promise<BrowserHandle> {
  const profile = await mkdtemp(join(tmpdir(), 'rostersync-chromium-'));
  const browser = await puppeteer.launch({
    executablePath: await chromium.executablePath(),
    headless: true,
    // The machine's network is closed: background services would only produce refused connections.
    args: [
      '--no-sandbox',
      '--disable-gpu',
      '--disable-quic',
      '--no-first-run',
      '--no-default-browser-check',
      '--disable-background-networking',
      '--disable-component-update',
      '--disable-sync',
      '--disable-domain-reliability',
      '--no-pings',
      '--font-render-hinting=none',
      `--user-data-dir=${profile}`,
    ],
    defaultViewport: { width: 1280, height: 900 },
  });
  return {
    browser,
    async close() {
      await browser.close();
      await rm(profile, { recursive: true, force: true });
    },
  };
}

export interface OpenedPage {
  page: Page;
  /** Console errors, uncaught page errors and CSP violations. */
  errors: string[];
  /** Every URL requested that is not a file:// URL (each was aborted). */
  blocked: string[];
  /** Every URL requested, allowed or not. */
  requested: string[];
}

export async function openPage(
  handle: BrowserHandle,
  file: string,
  options: { javaScript?: boolean; timezone?: string } = {},
): Promise<OpenedPage> {
  const page = await handle.browser.newPage();
  const opened: OpenedPage = { page, errors: [], blocked: [], requested: [] };
  page.on('console', (message) => {
    if (message.type() === 'error' || message.type() === 'warn') opened.errors.push(`${message.type()}: ${message.text()}`);
  });
  page.on('pageerror', (error) => opened.errors.push(`pageerror: ${String(error)}`));
  await page.setRequestInterception(true);
  page.on('request', (request) => {
    const url = request.url();
    opened.requested.push(url);
    if (url.startsWith('file://')) void request.continue();
    else {
      opened.blocked.push(url);
      void request.abort();
    }
  });
  if (options.javaScript === false) await page.setJavaScriptEnabled(false);
  if (options.timezone) await page.emulateTimezone(options.timezone);
  await page.goto(pathToFileURL(file).href, { waitUntil: 'load' });
  return opened;
}

/** Runs an expression in the page (a string, so the test code needs no DOM typings). */
export async function inPage<T>(page: Page, expression: string): Promise<T> {
  return (await page.evaluate(expression)) as T;
}

/** The cell texts of the rows shown in a section's table body. */
export async function shownRows(page: Page, sectionId: string): Promise<string[][]> {
  return inPage<string[][]>(
    page,
    `Array.from(document.querySelectorAll('#${sectionId} tbody tr')).map((tr) => Array.from(tr.cells).map((td) => td.textContent))`,
  );
}

/** Sets a filter control's value and fires the event the page listens to; waits out the search debounce. */
export async function setFilter(page: Page, key: string, value: string): Promise<void> {
  const selector = `[data-filter="${key}"]`;
  if (key === 'text') {
    await inPage(
      page,
      `(() => { const input = document.querySelector('${selector}'); input.value = ${JSON.stringify(value)}; input.dispatchEvent(new Event('input')); })()`,
    );
    // The page waits 150 ms after the last keystroke before it searches.
    await new Promise((resolve) => setTimeout(resolve, 250));
  } else {
    await page.select(selector, value);
  }
}
