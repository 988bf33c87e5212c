#!/usr/bin/env bash
# The e2e tier three times in a row beside a CPU hog (one busy process per core): what shows
# that end-to-end tests wait for the conditions they assert rather than for time to pass.
# Prints each run's pytest summary, its duration and the hogs' share of the CPU.
set -u
cd "$(dirname "$0")/.."
hogs=()
for _ in $(seq "$(nproc)"); do
  python3 -c "while True: pass" &
  hogs+=($!)
done
trap 'kill "${hogs[@]}" 2>/dev/null' EXIT
status=0
for run in 1 2 3; do
  start=$(date +%s)
  .venv/bin/pytest tests/e2e -o addopts="-p no:cacheprovider --strict-markers" 2>&1 | tail -1 \
    | sed "s/^/run $run: /"
  [ "${PIPESTATUS[0]}" -eq 0 ] || status=1
  echo "run $run took $(( $(date +%s) - start )) s; hogs at $(ps -o pcpu= -p "$(IFS=,; echo "${hogs[*]}")" | tr '\n' ' ')% CPU"
done
exit $status
