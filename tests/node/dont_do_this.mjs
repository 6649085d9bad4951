// The contract's "Don't do this" client (contract-en.md, "Do not change the key and
// charge again on a guess"): after a timeout or a network error it charges again under
// a new idempotency key, then under a new order number. The sandbox's verdict names the
// double charge this causes. Built-in fetch only.
//
//   node tests/node/dont_do_this.mjs BASE ORDER_NO CARD IDEMPOTENCY_KEY
//
// Prints one JSON line: the status (or "network error") of each create.

const [API_BASE, orderNo, card, idempotencyKey] = process.argv.slice(2);
const apiKey = process.env.PAYHUB_API_KEY ?? 'ak_1';

async function createPayment(order, { idempotencyKey }) {
  const res = await fetch(`${API_BASE}/v1/payments`, {
    method: 'POST',
    headers: {
      Authorization: `Bearer ${apiKey}`,
      'Content-Type': 'application/json',
      'Idempotency-Key': idempotencyKey,
    },
    body: JSON.stringify({ merchant_order_no: order.orderNo, amount: 10000, currency: 'USD', card }),
    signal: AbortSignal.timeout(20_000),
  });
  return res.status;
}

async function main() {
  const order = { orderNo, paymentIdempotencyKey: idempotencyKey };
  const trail = [];
  try {
    trail.push(await createPayment(order, { idempotencyKey: order.paymentIdempotencyKey }));
  } catch (timeoutError) {
    trail.push('network error');
    trail.push(await createPayment(order, { idempotencyKey: crypto.randomUUID() })); // ✗ new key = new business
    trail.push(
      await createPayment({ ...order, orderNo: `${order.orderNo}-retry` }, { idempotencyKey: crypto.randomUUID() }),
    ); // ✗ new order number = new payment
  }
  return { trail };
}

main().then(
  (result) => console.log(JSON.stringify(result)),
  (err) => {
    console.log(JSON.stringify({ outcome: 'error', message: String(err?.message ?? err) }));
    process.exitCode = 1;
  },
);
