import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { originProblem, originsOfText, originsProblems } from '../web/src/pages/data/submission-origins.js';
import { escapeHtml, exampleRedirect, fetchSnippet, htmlFormSnippet, submissionsAction, type SnippetSettings } from '../web/src/pages/data/submission-snippets.js';

/** The dashboard's helpers for public submissions: the allowed origins as typed, and the snippets to paste into a page. */
describe('allowed origins as the settings form reads them', () => {
  it('takes one origin a line, leaving out blank lines and spaces', () => {
    expect(originsOfText(' https://example.com \n\n*\r\nhttp://localhost:3000\n')).toEqual(['https://example.com', '*', 'http://localhost:3000']);
  });

  it('accepts an origin exactly as a browser sends it, and *', () => {
    for (const origin of ['https://example.com', 'https://Example.COM', 'http://localhost:3000', 'https://sub.example.co.uk:8443', 'http://127.0.0.1:8080', '*']) {
      expect(originProblem(origin), origin).toBeNull();
    }
  });

  it('refuses what a browser never sends as an origin, saying what to write instead', () => {
    expect(originProblem('example.com')).toMatch(/write it as scheme:\/\/host/);
    expect(originProblem('https://example.com/')).toMatch(/use https:\/\/example\.com\.$/);
    expect(originProblem('https://example.com/form')).toMatch(/leave out the path/);
    expect(originProblem('https://example.com?x=1')).toMatch(/leave out the path/);
    expect(originProblem('https://ada@example.com')).toMatch(/leave out the path/);
    expect(originProblem('https://example.com:443')).toMatch(/use https:\/\/example\.com\b/);
    expect(originProblem('ftp://example.com')).toMatch(/must start with https:\/\//);
    expect(originProblem('javascript:alert(1)')).toMatch(/must start with https:\/\//);
    expect(originProblem('**')).not.toBeNull();
  });

  it('lists each bad origin, and each origin written twice once', () => {
    expect(originsProblems(['https://a.example', 'nope', 'https://a.example', 'https://a.example'])).toEqual([
      expect.stringContaining('nope is not an origin'),
      'https://a.example is listed more than once.',
    ]);
    expect(originsProblems([])).toEqual([]);
  });

  it('never calls a string an origin unless it is one browsers send (in any case) or *', () => {
    fc.assert(
      fc.property(fc.oneof(fc.string(), fc.webUrl()), (text) => {
        const problem = originProblem(text);
        if (problem === null) expect(text === '*' || new URL(text).origin === text.toLowerCase()).toBe(true);
      }),
    );
  });
});

describe('the snippets to paste into a web page', () => {
  const settings = (changes: Partial<SnippetSettings> = {}): SnippetSettings => ({
    action: submissionsAction('http://localhost:8080/', 'col_0123456789abcdefghijklmnop'),
    schema: null,
    honeypot: null,
    redirect: exampleRedirect(['*', 'https://example.com']),
    captcha: null,
    ...changes,
  });

  it('posts to the collection by id, and comes back to a page of the first named origin', () => {
    expect(settings().action).toBe('http://localhost:8080/v1/collections/col_0123456789abcdefghijklmnop/records');
    expect(settings().redirect).toBe('https://example.com/thanks');
    expect(exampleRedirect(['*'])).toBe('https://your-site.example/thanks');
  });

  it('without a schema, is a complete form with one example field, the redirect and a button', () => {
    expect(htmlFormSnippet(settings())).toBe(
      [
        '<form method="post" action="http://localhost:8080/v1/collections/col_0123456789abcdefghijklmnop/records">',
        '  <label>Name <input type="text" name="name" required></label>',
        '  <!-- Where the browser goes afterwards, a page on an allowed origin; a refusal adds ?error=CODE to it. -->',
        '  <input type="hidden" name="redirect" value="https://example.com/thanks">',
        '  <button type="submit">Send</button>',
        '</form>',
      ].join('\n'),
    );
  });

  it('has an input of the right kind for each property of the schema, the honeypot hidden, and the CAPTCHA widget', () => {
    const schema = {
      type: 'object',
      properties: {
        email: { type: 'string', format: 'email', title: 'Your email' },
        age: { type: 'integer', minimum: 0, maximum: 150 },
        plan: { enum: ['free', 'pro'] },
        newsletter: { type: 'boolean' },
        address: { type: ['object', 'null'] },
        tags: { type: 'array', items: { type: 'string' } },
      },
      required: ['email'],
    };
    const html = htmlFormSnippet(settings({ schema, honeypot: 'website', captcha: 'turnstile' }));
    expect(html).toContain('<label>Your email <input type="email" name="email" required></label>');
    expect(html).toContain('<label>age <input type="number" name="age" min="0" max="150"></label>');
    expect(html).toContain('<select name="plan">\n      <option>free</option>\n      <option>pro</option>\n    </select>');
    expect(html).toContain('<label><input type="checkbox" name="newsletter" value="true"> newsletter</label>');
    expect(html).toContain('<!-- address holds an object, which a plain form cannot send: use the fetch snippet for it. -->');
    expect(html).toContain('<label>tags <textarea name="tags"></textarea></label>');
    expect(html).toMatch(/<div style="position: absolute; left: -10000px" aria-hidden="true">\n {4}<input type="text" name="website" tabindex="-1" autocomplete="off">/);
    expect(html).toContain('<div class="cf-turnstile" data-sitekey="YOUR_SITE_KEY"></div>');
    expect(html).toContain('<script src="https://challenges.cloudflare.com/turnstile/v0/api.js" async defer></script>');
    const script = fetchSnippet(settings({ schema, captcha: 'hcaptcha' }));
    expect(script).toContain('fetch("http://localhost:8080/v1/collections/col_0123456789abcdefghijklmnop/records"');
    expect(script).toContain('"email": "ada@example.com"');
    expect(script).toContain('captchaToken: hcaptcha.getResponse(),');
    expect(fetchSnippet(settings())).not.toContain('captchaToken');
  });

  it('escapes every name, title and setting: nothing typed into a schema can add a tag or end an attribute', () => {
    const tagsIn = (html: string) => html.match(/</g)?.length ?? 0;
    const text = fc.string({ unit: fc.constantFrom('<', '>', '"', "'", '&', 'a', ' ', '/', '=', '-', '!') });
    fc.assert(
      fc.property(fc.uniqueArray(text, { minLength: 1, maxLength: 4 }), text, text, (names, title, honeypot) => {
        const hostile = { properties: Object.fromEntries(names.map((name) => [name, { type: 'string', title }])) };
        const plain = { properties: Object.fromEntries(names.map((_, index) => [`f${index}`, { type: 'string', title: 't' }])) };
        const withHostile = htmlFormSnippet(settings({ schema: hostile, honeypot: honeypot || null, redirect: `https://example.com/${title}` }));
        const withPlain = htmlFormSnippet(settings({ schema: plain, honeypot: honeypot ? 'h' : null }));
        expect(tagsIn(withHostile)).toBe(tagsIn(withPlain));
        for (const name of names) expect(withHostile).toContain(`name="${escapeHtml(name)}"`);
      }),
    );
  });
});
