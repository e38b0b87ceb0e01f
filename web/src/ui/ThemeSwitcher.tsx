import { useId, useState } from 'react';
import { chooseTheme, storedTheme, THEME_CHOICES, type ThemeChoice } from './theme.js';

const LABELS: Record<ThemeChoice, string> = { system: 'System', light: 'Light', dark: 'Dark' };

/** System, Light or Dark, remembered in this browser (ui/theme.ts). */
export function ThemeSwitcher(): React.JSX.Element {
  const id = useId();
  const [choice, setChoice] = useState<ThemeChoice>(storedTheme);
  return (
    <div className="switcher theme-switcher">
      <label htmlFor={id}>Theme</label>
      <select
        id={id}
        value={choice}
        onChange={(event) => {
          const next = event.target.value as ThemeChoice;
          setChoice(next);
          chooseTheme(next);
        }}
      >
        {THEME_CHOICES.map((option) => (
          <option key={option} value={option}>
            {LABELS[option]}
          </option>
        ))}
      </select>
    </div>
  );
}
