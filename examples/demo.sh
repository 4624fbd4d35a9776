#!/usr/bin/env bash
# A real session with mem in a throwaway store: add, list, show, export.
set -euo pipefail
cd "$(dirname "$0")/.."
MEM="${MEM:-.venv/bin/mem}"
export MEM_DIR="$(mktemp -d)/demo-store"
trap 'rm -rf "$(dirname "$MEM_DIR")"' EXIT

step() { printf '\n\033[1m$ %s\033[0m\n' "$*"; }

step mem init
$MEM init

step 'mem add "We moved the billing service from Heroku to Fly.io in March." -t infra'
$MEM add "We moved the billing service from Heroku to Fly.io in March." -t infra

step 'echo "I prefer uv for dependency management and ruff for linting." | mem add -t python'
echo "I prefer uv for dependency management and ruff for linting." | $MEM add -t python

step mem ls
$MEM ls

step 'mem ls --tag python --jsonl'
$MEM ls --tag python --jsonl

step 'mem export | wc -l'
$MEM export | wc -l
