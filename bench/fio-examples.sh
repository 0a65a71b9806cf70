#!/usr/bin/env bash
# Runs each fio job file of a folder (fio's own examples/, say) with fio
# 3.33 and with `cephbench fio`, side by side, shortened: every job gets
# size=32m and runtime=2 in place of its own sizes and times, at most 4
# clones, and its files in a scratch folder instead of its filename= and
# directory=. Prints, per job file, whether each tool ran it or refused it
# (with the refusal's first line), then the counts.
#
#   bench/fio-examples.sh [DIR]   DIR holds the *.fio files (default:
#                                 $FIO_EXAMPLES); the script skips, exit 0,
#                                 when neither names a folder.
# fio's examples are GPL-2.0 and not in this repository: take them from a
# fio source tree (git clone https://github.com/axboe/fio; DIR=fio/examples).
# Environment: CEPHBENCH (the binary, default bin/cephbench built here),
# TIMEOUT (seconds a tool may take on one file, default 60).
dir=${1:-${FIO_EXAMPLES:-}}
if [ -z "$dir" ] || [ ! -d "$dir" ]; then
  echo "fio-examples: no folder of job files (give DIR or set FIO_EXAMPLES); skipped" >&2
  exit 0
fi
dir=$(realpath "$dir")
TIMEOUT=${TIMEOUT:-60}
NO_CLUSTER=1
# shellcheck source=bench/lib.sh
. "$(dirname "$0")/lib.sh"

# shorten JOBFILE SCRATCH: the job file with its sizes, times, clones and
# files replaced, on stdout. The replacements go last in each section, so
# that they win over the section's own lines and its [global]'s.
shorten() {
  awk -v scratch="$2" '
    function overrides() { print "size=32m"; print "runtime=2"; print "directory=" scratch }
    /^[ \t]*\[/ { if (section) overrides(); section = 1; print; next }
    /^[ \t]*(size|filesize|io_size|io_limit|runtime|timeout|filename|directory)[ \t]*=/ { next }
    /^[ \t]*numjobs[ \t]*=/ { split($0, kv, "="); n = kv[2] + 0; print "numjobs=" (n > 4 ? 4 : n); next }
    { print }
    END { if (section) overrides() }
  ' "$1"
}

# run TOOL JOBFILE: runs it, prints "ran" or "refused: WHY", WHY being the
# first line of its error (paths in the scratch folder cut), or its exit
# code.
run() {
  local tool=$1 job=$2 scratch="$out/scratch" cmd=(fio) rc=0 why
  rm -rf "$scratch" && mkdir -p "$scratch"
  [ "$tool" = cephbench ] && cmd=("$CEPHBENCH" fio --results "$out/results")
  (cd "$scratch" && timeout "$TIMEOUT" "${cmd[@]}" --output-format=json --output="$out/$tool.json" "$job") \
    >"$out/stdout" 2>"$out/stderr" || rc=$?
  if [ "$rc" -eq 0 ]; then
    echo ran
    return
  fi
  why=$(cat "$out/stderr" "$out/stdout" | grep -m1 -E '^(fio|cephbench):|[Ee]rror' | sed "s|$out/||g")
  [ "$rc" -eq 124 ] && why="timed out after ${TIMEOUT}s"
  echo "refused: ${why:-exit code $rc}"
}

declare -A ran refused
refusals=()
printf '%-32s %-8s %s\n' "job file" "fio" "cephbench"
for f in "$dir"/*.fio; do
  [ -e "$f" ] || continue
  name=$(basename "$f")
  shorten "$f" "$out/scratch" >"$out/$name"
  line=$(printf '%-32s' "$name")
  for tool in fio cephbench; do
    res=$(run "$tool" "$out/$name")
    case $res in
    ran) ran[$tool]=$((${ran[$tool]:-0} + 1)) ;;
    *) refused[$tool]=$((${refused[$tool]:-0} + 1)) ;;
    esac
    line+=$(printf ' %-8s' "${res%%:*}")
    [ "$res" = ran ] || refusals+=("$tool $name: ${res#refused: }")
  done
  echo "$line"
done
echo
for tool in fio cephbench; do
  echo "$tool: ran ${ran[$tool]:-0}, refused ${refused[$tool]:-0}"
done
echo
echo "refusals:"
printf '  %s\n' "${refusals[@]:-none}"
