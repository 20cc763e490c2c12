#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# Coverage-guided fuzzing of the wire codecs (wire/fuzz, cargo-fuzz and
# libFuzzer), on the rustup stable toolchain: RUSTC_BOOTSTRAP=1 lets it take
# the nightly flags cargo-fuzz passes.
#
#   scripts/fuzz.sh short         every target for a bounded number of runs
#                                 (FUZZ_SHORT_RUNS, default 1000000, at most
#                                 FUZZ_SHORT_SECS seconds each, default 20);
#                                 the committed corpus is only read
#   scripts/fuzz.sh long [EXECS]  every target for EXECS runs (default
#                                 10000000) growing wire/fuzz/corpus, then
#                                 minimises it (cargo fuzz cmin) and appends
#                                 a line per target to wire/fuzz/RESULTS.md
#
# One line per target; exit status non-zero when any target crashed (the
# input is then in wire/fuzz/artifacts/TARGET/). FUZZ_SANITIZER picks the
# sanitizer (address, the default, or none: the code under test is safe
# Rust, so none runs faster and finds the same panics).
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
top=$(dirname "$here")
. "$here/lib.sh"

sanitizer=${FUZZ_SANITIZER:-address}
# Inputs longer than the longest CLC message (1024) and a little slack are
# no use to any target.
max_len=1100

mode=${1:-}
case "$mode" in
short) ;;
long) execs=${2:-10000000} ;;
*) die "usage: $0 short | long [EXECS]" ;;
esac

if ! cargo fuzz --version 2>/dev/null | grep -q "cargo-fuzz $CARGO_FUZZ_VERSION"; then
	log "installing cargo-fuzz $CARGO_FUZZ_VERSION"
	cargo install --quiet --locked cargo-fuzz --version "$CARGO_FUZZ_VERSION"
fi

export RUSTC_BOOTSTRAP=1
cd "$top/wire"
# Debug assertions and overflow checks on, as in the kernel.
fuzz_opts=(-a -s "$sanitizer")
mapfile -t targets < <(cargo fuzz list)
[ ${#targets[@]} -gt 0 ] || die "no fuzz targets"

# The seed corpora are committed; write them again where one is missing.
for t in "${targets[@]}"; do
	if [ -z "$(ls -A "fuzz/corpus/$t" 2>/dev/null)" ]; then
		log "writing seed corpora"
		cargo run --quiet --manifest-path fuzz/Cargo.toml --example seeds >/dev/null
		break
	fi
done

work=$(mktemp -d /tmp/smc_rs-fuzz.XXXXXX)
trap 'rm -rf "$work"' EXIT

log "building ${#targets[@]} fuzz targets (sanitizer $sanitizer)"
cargo fuzz build "${fuzz_opts[@]}" >"$work/build.log" 2>&1 ||
	{ tail -n 30 "$work/build.log"; die "fuzz build failed"; }

# final_stat LOG NAME: a value libFuzzer printed for -print_final_stats.
final_stat() { sed -n "s/^stat::$2: *//p" "$1" | tail -n 1; }

failed=0
for t in "${targets[@]}"; do
	logf=$work/$t.log
	start=$(date +%s%N)
	if [ "$mode" = short ]; then
		mkdir -p "$work/$t"
		# New inputs go to the scratch directory; the committed corpus is read only.
		cargo fuzz run "${fuzz_opts[@]}" "$t" "$work/$t" "fuzz/corpus/$t" -- \
			-runs="${FUZZ_SHORT_RUNS:-1000000}" -max_total_time="${FUZZ_SHORT_SECS:-20}" \
			-max_len=$max_len -print_final_stats=1 >"$logf" 2>&1 && rc=0 || rc=$?
	else
		cargo fuzz run "${fuzz_opts[@]}" "$t" -- -runs="$execs" -max_len=$max_len \
			-print_final_stats=1 >"$logf" 2>&1 && rc=0 || rc=$?
	fi
	ms=$((($(date +%s%N) - start) / 1000000))
	secs=$(((ms + 500) / 1000))
	runs=$(final_stat "$logf" number_of_executed_units)
	rate=$(final_stat "$logf" average_exec_per_sec)
	# libFuzzer says 0 exec/s for a run shorter than a second.
	if [ "${rate:-0}" -eq 0 ] && [ -n "$runs" ]; then
		rate=$((runs * 1000 / (ms > 0 ? ms : 1)))
	fi
	if [ "$rc" -ne 0 ]; then
		failed=$((failed + 1))
		artifact=$(sed -n 's/.*Test unit written to \(.*\)/\1/p' "$logf" | tail -n 1)
		echo "$t: CRASH after ${runs:-?} runs (exit $rc)${artifact:+, input in $artifact}"
		{ grep -A 3 -e 'panicked at' -e '^ERROR: ' "$logf" || true; } | head -n 20 | sed 's/^/    /'
		repro=$({ grep -A 2 'Reproduce with' "$logf" || true; } | sed -n '3s/^[[:space:]]*//p')
		[ -z "$repro" ] || echo "    reproduce in wire/ with RUSTC_BOOTSTRAP=1: $repro"
		if [ "$mode" = long ]; then
			echo "- $(date +%F) $t: ${runs:-?} executions, ${secs} s, crashes=1, sanitizer $sanitizer" \
				>>fuzz/RESULTS.md
		fi
		continue
	fi
	if [ "$mode" = short ]; then
		echo "$t: ok, ${runs:-?} runs in ${secs} s (${rate:-?} exec/s), $(ls "$work/$t" | wc -l) new inputs"
	else
		cargo fuzz cmin "${fuzz_opts[@]}" "$t" >"$work/$t.cmin.log" 2>&1 ||
			{ sed 's/^/    /' "$work/$t.cmin.log" | tail -n 20; die "cmin of $t failed"; }
		size=$(ls "fuzz/corpus/$t" | wc -l)
		echo "$t: ok, ${runs:-?} runs in ${secs} s (${rate:-?} exec/s), corpus $size after cmin"
		echo "- $(date +%F) $t: ${runs:-?} executions, ${secs} s, corpus $size, crashes=0, sanitizer $sanitizer" \
			>>fuzz/RESULTS.md
	fi
done
[ "$failed" -eq 0 ] || die "$failed fuzz target(s) crashed"
