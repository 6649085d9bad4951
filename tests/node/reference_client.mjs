// The contract's reference client (contract-en.md, "Reference retry implementation"),
// written from its description with built-in fetch only: the same idempotency key
// through network errors, 429 (honouring Retry-After) and 5xx; AbortSignal.timeout on
// every call; when there is still no result, or the order number is already taken,
// query by merchant order number; after a 202, query the Payment until it is final,
// at least 10 seconds apart in the session's time.
//
//   node tests/node/reference_client.mjs BASE ORDER_NO CARD IDEMPOTENCY_KEY
//
// Environment: PAYHUB_API_KEY (default ak_1); BACKOFF_BASE_MS, the first backoff (the
// contract's 1000; a test shortens it); QUERY_DELAY_MS, the wait before each query
// (10000, the contract's minimum spacing). Prints one JSON line: the outcome.

const [API_BASE, orderNo, card, idempotencyKey] = process.argv.slice(2);
const apiKey = process.env.PAYHUB_API_KEY ?? 'ak_1';
const backoffBaseMs = Number(process.env.BACKOFF_BASE_MS ?? 1000);
const queryDelayMs = Number(process.env.QUERY_DELAY_MS ?? 10_000);
const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

export async function postWithRetry(path, body, { idempotencyKey, maxAttempts = 5 } = {}) {
  let lastError;
  for (let attempt = 1; attempt <= maxAttempts; attempt++) {
    let res = null;
    try {
      res = await fetch(`${API_BASE}${path}`, {
        method: 'POST',
        headers: {
          Authorization: `Bearer ${apiKey}`,
          'Content-Type': 'application/json',
          'Idempotency-Key': idempotencyKey,
        },
        body: JSON.stringify(body),
        signal: AbortSignal.timeout(20_000),
      });
    } catch (err) {
      lastError = err;
    }
    if (res && res.status !== 429 && res.status < 500) return res;
    if (attempt === maxAttempts) break;
    let waitMs = Math.min(30_000, backoffBaseMs * 2 ** (attempt - 1)) + Math.floor(Math.random() * 25);
    if (res?.status === 429) {
      const raw = res.headers.get('Retry-After');
      const seconds = raw === null ? NaN : Number(raw);
      if (Number.isFinite(seconds) && seconds >= 0) waitMs = seconds * 1000;
    }
    await sleep(waitMs);
  }
  throw Object.assign(new Error('Result unknown'), { code: 'RESULT_UNKNOWN', cause: lastError });
}

export async function findPaymentByOrderNo(orderNo) {
  const qs = new URLSearchParams({ merchant_order_no: orderNo });
  const res = await fetch(`${API_BASE}/v1/payments?${qs}`, {
    headers: { Authorization: `Bearer ${apiKey}` },
    signal: AbortSignal.timeout(10_000),
  });
  if (!res.ok) throw new Error(`Query failed: HTTP ${res.status}`);
  const page = await res.json();
  return page.data[0] ?? null;
}

async function getPayment(id) {
  const res = await fetch(`${API_BASE}/v1/payments/${id}`, {
    headers: { Authorization: `Bearer ${apiKey}` },
    signal: AbortSignal.timeout(10_000),
  });
  if (!res.ok) throw new Error(`Query failed: HTTP ${res.status}`);
  return res.json();
}

const FINAL = new Set(['succeeded', 'failed', 'canceled', 'expired']);

async function pay() {
  const body = { merchant_order_no: orderNo, amount: 10000, currency: 'USD', card };
  const trail = [];
  let payment = null;
  try {
    const res = await postWithRetry('/v1/payments', body, { idempotencyKey });
    trail.push(res.status);
    const json = await res.json();
    if (res.ok) {
      payment = json;
    } else if (json.error?.code === 'order_no_conflict') {
      // The order already has a Payment (a create whose answer was lost): find it.
      await sleep(queryDelayMs);
      payment = await findPaymentByOrderNo(orderNo);
    } else {
      return { outcome: 'rejected', trail, error: json.error };
    }
  } catch (err) {
    if (err.code !== 'RESULT_UNKNOWN') throw err;
    trail.push('unknown');
    await sleep(queryDelayMs);
    payment = await findPaymentByOrderNo(orderNo);
    if (payment === null) {
      // Never created: retry the creation with the original key.
      const res = await postWithRetry('/v1/payments', body, { idempotencyKey });
      trail.push(res.status);
      payment = await res.json();
    }
  }
  for (let i = 0; payment && !FINAL.has(payment.status) && i < 6; i++) {
    await sleep(queryDelayMs);
    payment = await getPayment(payment.id);
  }
  return { outcome: 'done', trail, payment_id: payment?.id ?? null, status: payment?.status ?? null };
}

pay().then(
  (result) => console.log(JSON.stringify(result)),
  (err) => {
    console.log(JSON.stringify({ outcome: 'error', message: String(err?.message ?? err) }));
    process.exitCode = 1;
  },
);
