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
