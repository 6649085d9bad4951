#!/usr/bin/env bash
# Creates answered while the sandbox's verdict is read: a release build of `payhub-verify
# serve --clock manual` on a free loopback port, N Payments made by `POST
# /__sandbox/fill`, the verdict read once, then read again while creates are sent one
# after another (20 ms apart) until it is back: the reading's time and the creates'.
#
#   bash tests/node/verdict_busy.sh 200000                 # the JSON verdict
#   READ='/__sandbox/verdict?format=markdown' bash tests/node/verdict_busy.sh 200000
#   READ=/__sandbox/page.json bash tests/node/verdict_busy.sh 200000   # what an open page polls
set -euo pipefail
cd "$(dirname "$0")/../.."
cargo build --release --quiet
n=${1:-200000}
read=${READ:-/__sandbox/verdict}
banner=$(mktemp)
./target/release/payhub-verify serve --addr 127.0.0.1:0 --clock manual --fill-max "$n" > "$banner" &
serve=$!
trap 'kill $serve; rm -f "$banner"' EXIT
base=
for _ in $(seq 100); do
  base=$(sed -n '1s/.*listening on //p' "$banner")
  [ -n "$base" ] && break
  sleep 0.1
done
[ -n "$base" ] || { echo "verdict_busy.sh: serve did not start" >&2; exit 2; }
left=$n
while [ "$left" -gt 0 ]; do
  c=$((left < 100000 ? left : 100000))
  curl -sf -X POST -H 'Content-Type: application/json' -d "{\"payments\":$c}" "$base/__sandbox/fill" > /dev/null
  left=$((left - c))
done
curl -s -o /dev/null -w "$read, first reading: %{time_total} s\n" "$base$read"
curl -s -o /dev/null -w "$read, read while creating: %{time_total} s\n" "$base$read" &
reading=$!
i=0
while kill -0 $reading 2> /dev/null; do
  i=$((i + 1))
  sleep 0.02
  curl -s -o /dev/null -w '%{time_total}\n' "$base/v1/payments" -H 'Authorization: Bearer ak_1' \
    -H "Idempotency-Key: busy-$i" -H 'Content-Type: application/json' \
    -d "{\"merchant_order_no\":\"BUSY-$i\",\"amount\":100,\"currency\":\"USD\",\"card\":\"A\"}"
done | sort -n | awk '{t[NR] = $1} END {printf "creates meanwhile: %d, fastest %.3f s, median %.3f s, slowest %.3f s\n", NR, t[1], t[int((NR + 1) / 2)], t[NR]}'
wait $reading
