import { useLayoutEffect, type RefObject } from 'react';

/**
 * Keeps a fixed element (the records' side panel) clear of the page's top bar: its top edge
 * follows the bar's bottom edge while the bar is on screen, and is the window's top once the page
 * has scrolled past the bar. The bar's controls (the workspace switcher, Sign out) are then never
 * under it, whatever the bar's height: it wraps to more lines on a phone.
 */
export function useClearOfTopbar(element: RefObject<HTMLElement | null>): void {
  useLayoutEffect(() => {
    const target = element.current;
    const topbar = document.querySelector('.topbar');
    if (!target || !topbar) return;
    const place = () => {
      target.style.top = `${Math.max(0, topbar.getBoundingClientRect().bottom)}px`;
    };
    place();
    const resized = new ResizeObserver(place);
    resized.observe(topbar);
    window.addEventListener('scroll', place, { passive: true });
    window.addEventListener('resize', place);
    return () => {
      resized.disconnect();
      window.removeEventListener('scroll', place);
      window.removeEventListener('resize', place);
    };
  }, [element]);
}
