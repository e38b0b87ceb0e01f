import { dropsNotifications } from '../src/db/listen-probe.ts';
const url = 'postgres://postgres@127.0.0.1:5432/postgres';
const times: number[] = [];
for (let i = 0; i < 20; i++) { const t = performance.now(); await dropsNotifications(url); times.push(performance.now() - t); }
times.sort((a, b) => a - b);
console.log('probe ms: min', times[0].toFixed(1), 'median', times[10].toFixed(1), 'max', times[19].toFixed(1));
