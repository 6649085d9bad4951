#!/usr/bin/env bash
# The sandbox's load benchmark (README, "Test your own integration"): a release build of
# `payhub-verify serve` on a free loopback port, then tests/node/load.mjs with 1, 10 and
# 100 keep-alive connections for each number of Payments held.
#
#   bash tests/node/load.sh                 # 1k and 10k Payments held
#   bash tests/node/load.sh 1000 100000 1000000   # any list (1M: minutes to fill, ~5 GiB; README)
#   REQUESTS=500 bash tests/node/load.sh    # requests per phase (default 2000)
set -euo pipefail
cd "$(dirname "$0")/../.."
cargo build --release --quiet
held=("$@")
[ ${#held[@]} -gt 0 ] || held=(1000 10000)
banner=$(mktemp)
./target/release/payhub-verify serve --addr 127.0.0.1:0 --fill-max 2000000 > "$banner" &
serve=$!
trap 'kill $serve; rm -f "$banner"' EXIT
base=
for _ in $(seq 100); do
  base=$(sed -n '1s/.*listening on //p' "$banner")
  [ -n "$base" ] && break
  sleep 0.1
done
[ -n "$base" ] || { echo "load.sh: serve did not start" >&2; exit 2; }
for h in "${held[@]}"; do
  node tests/node/load.mjs "$base" "${CONNECTIONS:-1,10,100}" "${REQUESTS:-2000}" "$h"
  echo "resident memory: $(awk '/VmRSS/ {print $2, $3}' /proc/$serve/status)"
done
