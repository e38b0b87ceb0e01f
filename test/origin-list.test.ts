import { expect, it } from 'vitest';
import { browserOrigin, originListed } from '../src/origin-list.js';

/** The one rule behind PLAINBASE_CORS_ORIGINS and a collection's submission origins (src/origin-list.ts). */
it('takes an origin only as a browser sends it', () => {
  expect(browserOrigin('https://app.example.com')).toBe('https://app.example.com');
  expect(browserOrigin('HTTPS://App.Example.com')).toBe('https://app.example.com');
  expect(browserOrigin('http://localhost:5173')).toBe('http://localhost:5173');
  for (const text of ['https://app.example.com/', 'https://app.example.com/form', 'https://app.example.com:443', 'https://user@app.example.com', 'ftp://app.example.com', 'app.example.com', '*', '', 'https://app.example.com?x=1']) {
    expect(browserOrigin(text), text).toBeNull();
  }
});

it('admits a listed origin in any case, or any origin where the list holds *', () => {
  const list = ['https://app.example.com', 'http://localhost:5173'];
  expect(originListed(list, 'https://app.example.com')).toBe(true);
  expect(originListed(list, 'HTTPS://APP.EXAMPLE.COM')).toBe(true);
  expect(originListed(list, 'https://app.example.com.evil.test')).toBe(false);
  expect(originListed(list, 'http://app.example.com')).toBe(false);
  expect(originListed(list, 'null')).toBe(false);
  expect(originListed([], 'https://app.example.com')).toBe(false);
  expect(originListed(['*'], 'null')).toBe(true);
});
