#!/usr/bin/env bash
# `make demo`: a real session on the default models, in a throwaway store.
# Adds a few developer notes (the long ones are compressed on this machine), then lists, shows,
# searches, packs a prompt context under a token budget, and reports what compression saved.
set -euo pipefail
cd "$(dirname "$0")/.."
MEM="${MEM:-.venv/bin/mem}"
export MEM_DIR="$(mktemp -d)/demo-store"
trap 'rm -rf "$(dirname "$MEM_DIR")"' EXIT

step() { printf '\n\033[1m$ %s\033[0m\n' "$*"; }

step mem init
$MEM init >/dev/null

step 'mem add "…a long note about the scraper…" -t scraper'
SCRAPER=$($MEM add -t scraper "Rate limiting has been the hardest part of the scraper project so far. Amazon \
starts blocking an IP after about 30 requests per second, so we now rotate through a pool of 12 residential \
proxies and back off exponentially, starting at 250 ms and capping at 8 s. eBay is more lenient but answers \
with HTTP 429 and a Retry-After header, which the crawler honours since version 0.4.2. We never scrape pages \
behind a login. The crawler runs on a single Hetzner box (4 cores, 16 GB) and keeps its queue in Redis 7.")
echo "$SCRAPER"

step 'mem add "…a long note about billing…" -t infra'
$MEM add -t infra "We moved the billing service from Heroku to Fly.io in March 2026 because the dyno bill had \
reached \$1,200 a month. Postgres 16 stayed on Crunchy Bridge; we did not move the database. The cut-over took \
40 minutes on a Sunday night and nobody noticed. The runbook is in docs/billing.md, and the next step is to move \
the nightly cron jobs off the old box onto scheduled Fly machines, which should save another \$90 a month."

step 'echo "I prefer uv for dependency management and ruff for linting." | mem add -t python'
echo "I prefer uv for dependency management and ruff for linting." | $MEM add -t python

step mem ls
$MEM ls

step "mem show $SCRAPER        # the compressed form a reading model gets"
$MEM show "$SCRAPER"

step "mem show ${SCRAPER: -3} --raw    # the short id, the id's last characters; --raw gives the prose"
$MEM show "${SCRAPER: -3}" --raw | tail -n 1

step 'mem search "how do we avoid getting blocked" -n 2'
$MEM search "how do we avoid getting blocked" -n 2

step 'mem search "database hosting" --jsonl -n 1'
$MEM search "database hosting" --jsonl -n 1

step 'mem context "scraper proxies and billing" --budget 120'
$MEM context "scraper proxies and billing" --budget 120

step mem stats
$MEM stats
