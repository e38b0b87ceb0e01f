import type { Page } from 'playwright-core';

/** Something wrong with how a page is laid out in its window, in words a failing test can print. */
export type LayoutProblem = string;

/**
 * Measures the page as shown: no sideways scrolling of the whole page; every visible control
 * (link, button, input, select, text area) within the window's width, unless it sits in a box that
 * scrolls sideways by design (a wide table), which must itself be within the width; and no two
 * controls covering each other. Answers what is wrong; a test expects nothing.
 */
export async function layoutProblems(page: Page): Promise<LayoutProblem[]> {
  return page.evaluate(() => {
    const problems: string[] = [];
    const width = window.innerWidth;
    const pageWidth = document.documentElement.scrollWidth;
    if (pageWidth > width) problems.push(`the page is ${pageWidth}px wide in a ${width}px window`);

    const describe = (element: Element) => {
      const name = (element.getAttribute('aria-label') ?? element.textContent ?? element.getAttribute('name') ?? '').replace(/\s+/g, ' ').trim().slice(0, 40);
      return `${element.tagName.toLowerCase()}${element.id ? `#${element.id}` : ''} "${name}"`;
    };
    const scrollsSideways = (element: Element): Element | null => {
      for (let parent = element.parentElement; parent; parent = parent.parentElement) {
        const overflow = getComputedStyle(parent).overflowX;
        if (overflow === 'auto' || overflow === 'scroll') return parent;
      }
      return null;
    };
    // Screen-reader-only words and the skip link (on screen only while focused) are off screen on purpose.
    const controls = [...document.querySelectorAll('a[href], button, input, select, textarea')].filter(
      (element) => element.checkVisibility() && !element.closest('.visually-hidden, .skip-link') && (element as HTMLInputElement).type !== 'hidden',
    );
    const boxes = controls.map((element) => ({ element, box: element.getBoundingClientRect() })).filter(({ box }) => box.width > 0 && box.height > 0);

    for (const { element, box } of boxes) {
      const scroller = scrollsSideways(element);
      const bounds = scroller ? scroller.getBoundingClientRect() : { left: 0, right: width };
      if (box.left < bounds.left - 1 || box.right > bounds.right + 1) {
        if (!scroller) problems.push(`${describe(element)} reaches ${Math.round(box.left)}..${Math.round(box.right)}px, outside the ${width}px window`);
      }
      if (scroller) {
        const outer = scroller.getBoundingClientRect();
        if (outer.left < -1 || outer.right > width + 1) problems.push(`a scrolling box holding ${describe(element)} is outside the window`);
      }
    }
    for (let i = 0; i < boxes.length; i++) {
      for (let j = i + 1; j < boxes.length; j++) {
        const a = boxes[i]!;
        const b = boxes[j]!;
        if (a.element.contains(b.element) || b.element.contains(a.element)) continue;
        // Borders that touch (2px or less) do not cover anything.
        const overlapX = Math.min(a.box.right, b.box.right) - Math.max(a.box.left, b.box.left);
        const overlapY = Math.min(a.box.bottom, b.box.bottom) - Math.max(a.box.top, b.box.top);
        if (overlapX > 2 && overlapY > 2) problems.push(`${describe(a.element)} and ${describe(b.element)} overlap`);
      }
    }
    return [...new Set(problems)];
  });
}
