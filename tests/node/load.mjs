// A load benchmark of the sandbox (a command to run, not a test): C keep-alive
// connections send creates under fresh keys, then replays of one key, and the requests
// per second and p50/p99 latency of each are printed. Built-in fetch only (it keeps
// connections alive).
//
//   payhub-verify serve --addr 127.0.0.1:8080 &
//   node tests/node/load.mjs http://127.0.0.1:8080 [CONNECTIONS=10] [REQUESTS=2000] [HELD=0]
//
// The session is reset first, then HELD Payments are created, so that the figures show
// how the sandbox behaves as it holds more of them.

const [base, connections = '10', requests = '2000', held = '0'] = process.argv.slice(2);
const C = Number(connections);
const N = Number(requests);
const H = Number(held);
const headers = (key) => ({
  Authorization: 'Bearer ak_1',
  'Content-Type': 'application/json',
  'Idempotency-Key': key,
});
const body = (order) =>
  JSON.stringify({ merchant_order_no: order, amount: 100, currency: 'USD', card: 'A' });

async function create(key, order) {
  const t = performance.now();
  const res = await fetch(`${base}/v1/payments`, { method: 'POST', headers: headers(key), body: body(order) });
  await res.arrayBuffer();
  if (res.status >= 500) throw new Error(`HTTP ${res.status}`);
  return performance.now() - t;
}

async function phase(name, make) {
  const latencies = [];
  let next = 0;
  const started = performance.now();
  await Promise.all(
    Array.from({ length: C }, async () => {
      while (next < N) {
        const i = next++;
        latencies.push(await make(i));
      }
    }),
  );
  const seconds = (performance.now() - started) / 1000;
  latencies.sort((a, b) => a - b);
  const at = (q) => latencies[Math.min(latencies.length - 1, Math.floor(q * latencies.length))];
  console.log(
    `${name.padEnd(8)} ${C} connections, ${N} requests, ${H} Payments held: ` +
      `${(N / seconds).toFixed(0)} req/s, p50 ${at(0.5).toFixed(2)} ms, p99 ${at(0.99).toFixed(2)} ms`,
  );
}

await fetch(`${base}/__sandbox/reset`, { method: 'POST' });
for (let i = 0; i < H; i += 1) await create(`held-${i}`, `HELD-${i}`);
await create('replayed', 'REPLAYED');
await phase('creates', (i) => create(`load-${i}`, `LOAD-${i}`));
await phase('replays', () => create('replayed', 'REPLAYED'));
