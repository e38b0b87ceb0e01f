import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import type { Page } from 'playwright-core';

/** axe-core's browser script, evaluated in the page: a <script> tag would be refused by the page's CSP (script-src 'self'). */
const AXE_SOURCE = readFileSync(createRequire(import.meta.url).resolve('axe-core/axe.min.js'), 'utf8');

/** The rules whose outcome the theme changes: contrast. */
export const COLOR_RULES = ['color-contrast', 'link-in-text-block'] as const;

/** The rules whose outcome the window's size changes: what scrolls, how big a control is. */
export const LAYOUT_RULES = ['scrollable-region-focusable', 'target-size', 'meta-viewport'] as const;

/** One violation axe-core found, in words a failing test can print. */
export interface Violation {
  rule: string;
  impact: string;
  help: string;
  targets: string[];
}

/**
 * Runs axe-core (the WCAG 2 A and AA rules and its best practices) on what the page shows now and
 * answers the serious and critical violations: a test expects none. axe is injected into the page
 * for the check only; the dashboard itself never ships it. `only` runs only the rules named (a
 * page already checked in full, in another theme or size: COLOR_RULES, LAYOUT_RULES).
 */
export async function seriousViolations(page: Page, options: { only?: readonly string[] } = {}): Promise<Violation[]> {
  if (!(await page.evaluate(() => 'axe' in window))) await page.evaluate(AXE_SOURCE);
  const violations = await page.evaluate(async (only) => {
    const axe = (window as unknown as { axe: { run(context: Document, options: object): Promise<{ violations: { id: string; impact: string | null; help: string; nodes: { target: unknown[] }[] }[] }> } }).axe;
    const result = await axe.run(document, { resultTypes: ['violations'], ...(only ? { runOnly: only } : {}) });
    return result.violations.map((violation) => ({
      rule: violation.id,
      impact: violation.impact ?? 'unknown',
      help: violation.help,
      targets: violation.nodes.map((node) => node.target.map(String).join(' ')),
    }));
  }, options.only ? [...options.only] : null);
  return violations.filter((violation) => violation.impact === 'serious' || violation.impact === 'critical');
}
