#!/usr/bin/env bash
# mem in shell pipelines: git history in, JSON out through jq, many queries in one process.
#
#   examples/pipelines.sh [GIT_REPO]      (default: the current directory; needs git and jq)
#
# It works in a throwaway store, so your own memories are left alone.
set -euo pipefail
mem() { ${MEM:-command mem} "$@"; }   # MEM="python tests/support/fake_mem.py" runs it without the models
repo="$(cd "${1:-.}" && pwd)"
MEM_DIR="$(mktemp -d)/pipelines-store"
export MEM_DIR
trap 'rm -rf "$(dirname "$MEM_DIR")"' EXIT

step() { printf '\n$ %s\n' "$*"; }

step 'git log -1 --format=%B | mem add -t git'
git -C "$repo" log -1 --format=%B | mem add -t git

step "git log --format=... | jq ... | mem import    # every commit subject, dated when it was committed"
git -C "$repo" log -n 200 --format='%H%x09%aI%x09%s' \
  | jq -cR 'split("\t") | {raw: .[2], created_at: .[1], source: ("commit:" + .[0][:12]), tags: ["git"]}' \
  | mem import

step "mem ls --tag git --jsonl | jq -s length"
mem ls --tag git --jsonl | jq -s length

query="${QUERY:-$(git -C "$repo" log -1 --format=%s)}"
step "mem search \"$query\" -n 3 --jsonl | jq -r '[(.score*100|round), .source, .content] | @tsv'"
mem search "$query" -n 3 --jsonl | jq -r '[(.score * 100 | round), .source, .content] | @tsv'

step "git log -n 3 --format=%s | cut -d' ' -f1-3 | mem search - -n 1 | jq -r '\"\\(.query)...  ->  \\(.content)\"'"
# `mem search -` reads one query per line: a thousand queries cost one process and one model load.
git -C "$repo" log -n 3 --format=%s | cut -d' ' -f1-3 | mem search - -n 1 | jq -r '"\(.query)...  ->  \(.content)"'

step "mem context \"$query\" --budget 60    # a block to paste into a prompt"
mem context "$query" --budget 60
