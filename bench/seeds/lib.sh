# bench/seeds/lib.sh — shared by the seed report scripts (source it).

# put_block NAME FILE SECTION: replace the block of FILE between the lines
# starting "<!-- NAME:begin" and "<!-- NAME:end -->" by the file SECTION
# (which carries both marker lines), or append SECTION after a blank line
# when FILE has no such block. The rest of FILE is left alone.
put_block() {
  local name=$1 file=$2 sec=$3 tmp
  [ -f "$file" ] || return 0
  if grep -q "^<!-- $name:begin" "$file"; then
    tmp=$(mktemp)
    awk -v f="$sec" -v b="^<!-- $name:begin" -v e="^<!-- $name:end -->" \
      '$0 ~ b {while ((getline l < f) > 0) print l; skip=1; next} $0 ~ e {skip=0; next} !skip' "$file" >"$tmp"
    cat "$tmp" >"$file"
    rm -f "$tmp"
  else
    { if [ -n "$(tail -n1 "$file")" ]; then echo; fi; cat "$sec"; } >>"$file"
  fi
}

# simulate STUDY [PKG...]: build bench/seeds/simstudy (and the packages
# PKG, e.g. ./cmd/nuesm) into a fresh directory $work, removed on exit, run
# simstudy's STUDY with its plots and CSV into $here/sim and its markdown
# table into $work/body.md, and set secs to the seconds the study took.
# here is the caller's; work and secs are for the caller.
# shellcheck disable=SC2154,SC2034
simulate() {
  local study=$1 pkg t0
  shift
  work=$(mktemp -d)
  trap 'rm -rf "$work"' EXIT
  go build -o "$work/simstudy" ./bench/seeds/simstudy
  for pkg in "$@"; do go build -o "$work/$(basename "$pkg")" "$pkg"; done
  t0=$(date +%s)
  "$work/simstudy" "$study" -o "$here/sim" -md "$work/body.md"
  secs=$(($(date +%s) - t0))
}
