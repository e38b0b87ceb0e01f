import { describe, expect, it } from 'vitest';
import { checkWebhookUrl, type BlockReason, type GuardOptions } from '../src/delivery/url-guard.js';

/** A resolver with fixed answers, so names resolve without a network. */
const dns: Record<string, string[]> = {
  'hooks.example.com': ['93.184.216.34'],
  'v6.example.com': ['2606:2800:220:1:248:1893:25c8:1946'],
  'private.example.com': ['10.1.2.3'],
  'mixed.example.com': ['93.184.216.34', '192.168.1.10'],
  'loop.example.com': ['127.0.0.1'],
  'mapped.example.com': ['::ffff:10.0.0.1'],
};
const resolve = async (name: string) => {
  const answer = dns[name.replace(/\.$/, '')];
  if (!answer) throw Object.assign(new Error('not found'), { code: 'ENOTFOUND' });
  return answer;
};
const production: GuardOptions = { allowHttp: false, allowPrivate: false, resolve };

const cases: [string, BlockReason | 'allowed'][] = [
  ['https://hooks.example.com/plainbase', 'allowed'],
  ['https://v6.example.com/', 'allowed'],
  ['https://93.184.216.34/x', 'allowed'],
  ['http://hooks.example.com/', 'scheme'],
  ['ftp://hooks.example.com/', 'scheme'],
  ['https://user:pass@hooks.example.com/', 'credentials'],
  ['https://user@hooks.example.com/', 'credentials'],
  ['https://localhost/', 'internal-hostname'],
  ['https://LOCALHOST/', 'internal-hostname'],
  ['https://localhost./', 'internal-hostname'],
  ['https://api.localhost/', 'internal-hostname'],
  ['https://printer.local/', 'internal-hostname'],
  ['https://db.internal/', 'internal-hostname'],
  ['https://intranet/', 'internal-hostname'],
  ['https://127.0.0.1/', 'private-address'],
  ['https://127.1/', 'private-address'],
  ['https://2130706433/', 'private-address'],
  ['https://0x7f000001/', 'private-address'],
  ['https://0x7f.1/', 'private-address'],
  ['https://0177.0.0.1/', 'private-address'],
  ['https://10.0.0.1/', 'private-address'],
  ['https://172.16.5.4/', 'private-address'],
  ['https://192.168.0.1/', 'private-address'],
  ['https://169.254.169.254/latest/meta-data', 'private-address'],
  ['https://100.64.0.1/', 'private-address'],
  ['https://0.0.0.0/', 'private-address'],
  ['https://255.255.255.255/', 'private-address'],
  ['https://224.0.0.1/', 'private-address'],
  ['https://[::1]/', 'private-address'],
  ['https://[fc00::1]/', 'private-address'],
  ['https://[fd12:3456::1]/', 'private-address'],
  ['https://[fe80::1]/', 'private-address'],
  ['https://[::ffff:127.0.0.1]/', 'private-address'],
  ['https://[::ffff:7f00:1]/', 'private-address'],
  ['https://[64:ff9b::7f00:1]/', 'private-address'],
  ['https://[2002:7f00:1::]/', 'private-address'],
  ['https://[::]/', 'private-address'],
  // IPv6 forms that carry an IPv4 address are judged by the address they carry.
  ['https://[::127.0.0.1]/', 'private-address'],
  ['https://[::a9fe:a9fe]/', 'private-address'],
  ['https://[::10.0.0.1]/', 'private-address'],
  ['https://[::ffff:169.254.169.254]/', 'private-address'],
  ['https://[::ffff:0:10.0.0.1]/', 'private-address'],
  ['https://[64:ff9b::10.0.0.1]/', 'private-address'],
  ['https://[64:ff9b:1::a9fe:a9fe]/', 'private-address'],
  ['https://[2002:a9fe:a9fe::1]/', 'private-address'],
  ['https://[2002:c0a8:0101::]/', 'private-address'],
  ['https://[2001:0:5db8:d822:8000:63bf:f5ff:fffe]/', 'private-address'],
  ['https://[2001:0:a00:1:8000:63bf:a247:2bdd]/', 'private-address'],
  ['https://[::ffff:93.184.216.34]/', 'allowed'],
  ['https://[64:ff9b::93.184.216.34]/', 'allowed'],
  ['https://[2002:5db8:d822::1]/', 'allowed'],
  ['https://private.example.com/', 'private-address'],
  ['https://mixed.example.com/', 'private-address'],
  ['https://loop.example.com/', 'private-address'],
  ['https://mapped.example.com/', 'private-address'],
  ['https://nowhere.example.com/', 'unresolvable'],
  ['not a url', 'malformed'],
];

describe('webhook URL rules', () => {
  it.each(cases)('%s → %s', async (url, expected) => {
    const outcome = await checkWebhookUrl(url, production).then(
      () => 'allowed',
      (error: { reason: BlockReason }) => error.reason,
    );
    expect(outcome).toBe(expected);
  });

  it('allows http:// only in development, and private targets only when allowed for tests', async () => {
    await expect(checkWebhookUrl('http://hooks.example.com/', { ...production, allowHttp: true })).resolves.toBeTruthy();
    await expect(checkWebhookUrl('https://127.0.0.1:9/', { ...production, allowPrivate: true })).resolves.toBeTruthy();
  });

  it('a name that was public when saved and private at delivery is refused at delivery', async () => {
    const answers = ['93.184.216.34'];
    const changing: GuardOptions = { ...production, resolve: async () => answers };
    await expect(checkWebhookUrl('https://rebind.example.com/', changing)).resolves.toBeTruthy();
    answers[0] = '127.0.0.1';
    await expect(checkWebhookUrl('https://rebind.example.com/', changing)).rejects.toMatchObject({ reason: 'private-address' });
  });
});
