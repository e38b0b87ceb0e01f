/**
 * Light or dark: "system" follows the browser's prefers-color-scheme (styles.css does that by
 * itself, with no script: each colour is a light-dark() pair and <html> has color-scheme "light
 * dark"); "light" and "dark" are set on <html> as data-theme, which pins color-scheme to one.
 * The choice is kept in this browser. main.tsx applies it before anything renders: the page's CSP
 * (script-src 'self') forbids an inline script in index.html, and the page is empty until then.
 */
export type ThemeChoice = 'system' | 'light' | 'dark';

export const THEME_CHOICES: readonly ThemeChoice[] = ['system', 'light', 'dark'];

const THEME_KEY = 'plainbase.theme';

export function storedTheme(): ThemeChoice {
  try {
    const stored = window.localStorage.getItem(THEME_KEY);
    return stored === 'light' || stored === 'dark' ? stored : 'system';
  } catch {
    return 'system';
  }
}

export function applyTheme(choice: ThemeChoice): void {
  if (choice === 'system') delete document.documentElement.dataset.theme;
  else document.documentElement.dataset.theme = choice;
}

export function chooseTheme(choice: ThemeChoice): void {
  applyTheme(choice);
  try {
    if (choice === 'system') window.localStorage.removeItem(THEME_KEY);
    else window.localStorage.setItem(THEME_KEY, choice);
  } catch {
    // Private browsing may refuse storage; the choice then lasts until reload.
  }
}
