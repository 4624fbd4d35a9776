#!/usr/bin/env bash
# A team's memories inside a project repository, shared through git. A bare repository on disk stands
# in for the server; alice and bob each have a clone. Everything happens in a temp folder.
#
#   examples/team-store.sh          (needs git)
#
# Each memory is its own file under .mem/memories/, so two people adding memories never conflict,
# and the index (.mem/.index/, git-ignored) rebuilds itself after a clone or a pull.
set -euo pipefail
mem() { ${MEM:-command mem} "$@"; }   # MEM="python tests/support/fake_mem.py" runs it without the models
unset MEM_DIR                         # inside a clone, mem finds the store .mem/ by itself
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
cd "$work"

step() { printf '\n== %s\n' "$*"; }
as() { local who=$1; shift; (cd "$work/$who" && "$@"); }
person() {
  git clone -q "$work/team.git" "$work/$1" 2>/dev/null
  git -C "$work/$1" config user.name "$1"
  git -C "$work/$1" config user.email "$1@example.com"
}
share() { local who=$1; shift; as "$who" git add -A; as "$who" git commit -qm "$*"; as "$who" git push -q; }

step "a bare repository, alice's clone, and a store in it: mem init --git (writes .mem/.gitignore and .gitattributes)"
git init -q --bare -b main team.git
person alice
as alice mem init --git
as alice git add -A
as alice git commit -qm "Start the team's mem store"
as alice git push -q origin main
as alice git ls-files

step "bob clones it"
person bob

step "both remember something at the same time"
limit=$(as alice mem add "Amazon blocks IPs after about 30 requests per second" -t scraper)
share alice "Remember the Amazon rate limit"
as bob mem add "Billing moved from Heroku to Fly.io in March" -t infra
as bob git add -A
as bob git commit -qm "Remember where billing runs"

step "bob pulls (a plain merge: no conflict) and pushes"
as bob git pull -q --no-rebase --no-edit
as bob git push -q

step "bob finds alice's memory (his index took in the pulled file by itself)"
as bob mem search "amazon blocks requests" -n 1

step "alice pulls and finds bob's"
as alice git pull -q --no-rebase
as alice mem search "where did billing move" -n 1

step "alice deletes hers and pushes; after a pull, bob no longer finds it"
as alice mem rm -y "$limit"
share alice "Drop the rate limit note"
as bob git pull -q --no-rebase
if as bob mem search "amazon blocks requests" --mode text; then exit 1; else echo "(nothing found)"; fi

step "bob checks his store"
as bob mem doctor
