// A load benchmark of the sandbox (a command to run, not a test): for each number of
// keep-alive connections, C connections send creates under fresh keys, then replays of
// one key, and the requests per second and p50/p99 latency of each are printed.
// Built-in fetch only (it keeps connections alive).
//
//   payhub-verify serve --addr 127.0.0.1:8080 &
//   node tests/node/load.mjs http://127.0.0.1:8080 [CONNECTIONS=1,10,100] [REQUESTS=2000] [HELD=0]
//
// The session is reset first, then HELD Payments are created through the model
// (`POST /__sandbox/fill`, no HTTP per Payment), so that the figures show how the sandbox
// behaves as it holds more of them (each phase's creates add REQUESTS more).
// `bash tests/node/load.sh` runs it for 1k and 10k Payments held (README, "Test your own
// integration").

const [base, connections = '1,10,100', requests = '2000', held = '0'] = process.argv.slice(2);
const Cs = connections.split(',').map(Number);
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

async function phase(name, C, make) {
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
    `${name.padEnd(8)} ${String(C).padStart(3)} connections, ${N} requests, ${H} Payments held: ` +
      `${(N / seconds).toFixed(0)} req/s, p50 ${at(0.5).toFixed(2)} ms, p99 ${at(0.99).toFixed(2)} ms`,
  );
}

await fetch(`${base}/__sandbox/reset`, { method: 'POST' });
const filling = performance.now();
// In calls of 2,000 (fetch gives up on an answer after 300 s, and a create costs more
// the more Payments are held).
for (let done = 0; done < H; done += 2000) {
  const res = await fetch(`${base}/__sandbox/fill`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ payments: Math.min(2000, H - done) }),
  });
  if (res.status !== 200) throw new Error(`fill: HTTP ${res.status} ${await res.text()}`);
  await res.arrayBuffer();
}
if (H > 0) console.log(`filled   ${H} Payments in ${((performance.now() - filling) / 1000).toFixed(1)} s`);
await create('replayed', 'REPLAYED');
for (const C of Cs) {
  await phase('creates', C, (i) => create(`load-${C}-${i}`, `LOAD-${C}-${i}`));
  await phase('replays', C, () => create('replayed', 'REPLAYED'));
}
