# shellcheck shell=bash
# measure.sh: sourced by benchmarks/gpu-suite (and, for its readers of
# --timing, by benchmarks/ab-programs): runs one benchmark command
# under the suite's time budget and appends its row to a CSV file. A row's
# rates come from the wall time of the whole process (end to end: start,
# reading, transfers, kernels, output) and, for hmmc programs, from their
# --timing breakdown on standard error (kernel time: "kernels, all calls";
# the scoring phase; the program's own end to end), so both are kept.
#
# Needs, set by the caller: OUTDIR, WORK, GPU_NAME, CPU_NAME, RUN_TIMEOUT and
# the deadline of the current part, PART_DEADLINE (seconds since the epoch).

CSV_HEADER="date,gpu,cpu,table,model,cells_per_position,algorithm,program,sequences,residues,cells,status,wall_s,e2e_s,score_s,kernel_s,gpu_wall_s,scorer,rescored,cells_per_s_kernel,cells_per_s_wall,seqs_per_s_wall,symbols_per_s_kernel,symbols_per_s_wall,command"

# Runs that timed out, as "table model program algorithm" keys: later (larger)
# runs of the same key are skipped rather than started.
declare -A MEASURE_GAVE_UP=()

now_s() { date +%s.%N; }

# csv_field TEXT: TEXT with the characters that would break a CSV row replaced.
csv_field() { printf '%s' "$1" | tr ',\n"' ';  '; }

# timing_value LOG PHASE [N]: the Nth number (default 1: the seconds) on the
# line of PHASE in a --timing breakdown; the second is its symbols per second.
timing_value() {
    awk -v phase="$2" -v want="${3:-1}" 'substr($0, 1, length(phase) + 3) == "  " phase " " {
        for (i = 1; i <= NF; i++) if ($i ~ /^[0-9.]+(e[-+]?[0-9]+)?$/ && ++seen == want) { print $i; exit } }' "$1"
}

# timing_rescored LOG: how many sequences the float kernels sent to double
# (the --timing line "N sequences scored -inf or beyond float's range, ..."),
# or nothing; not the line of those the double kernels sent to the CPU.
timing_rescored() {
    sed -n -E "s/^ *([0-9]+) sequences? scored -inf or beyond float's range.*/\1/p" "$1" | head -n 1
}

# measure TABLE MODEL CELLS_PER_POSITION ALGORITHM PROGRAM SEQUENCES RESIDUES -- COMMAND...
# Runs COMMAND (its standard output to $WORK/out; standard error kept in the
# log) unless the part's deadline is near, and appends one row to
# OUTDIR/TABLE.csv with status ok, failed (exit N), timeout (past its limit,
# stopped with SIGTERM), wrong-rows (an hmmc program printed the wrong number
# of rows) or skipped (no time left, or a smaller run of the same kind timed out).
measure() {
    local table=$1 model=$2 per_position=$3 algorithm=$4 program=$5 sequences=$6 residues=$7
    shift 8
    local csv=$OUTDIR/$table.csv log=$OUTDIR/logs/$table.log key="$table $model $program $algorithm"
    [ -f "$csv" ] || echo "$CSV_HEADER" > "$csv"
    local cells status="" wall="" e2e="" score="" kernel="" gpu_wall="" scorer="" rescored=""
    cells=$(awk -v a="$per_position" -v b="$residues" 'BEGIN { printf "%.0f", a * b }')
    local left limit
    left=$(awk -v d="$PART_DEADLINE" -v n="$(now_s)" 'BEGIN { printf "%d", d - n }')
    limit=$((left < RUN_TIMEOUT ? left : RUN_TIMEOUT))
    if [ -n "${MEASURE_GAVE_UP[$key]:-}" ]; then
        status="skipped (a smaller run timed out)"
    elif [ "$left" -lt "${MIN_RUN:-3}" ]; then
        status="skipped (time budget spent)"
    fi
    if [ -z "$status" ]; then
        # hmmc's GPU runs are run REPEATS times (default 3) and the run of the
        # median wall time is kept (its --timing too): one run varies by up to
        # 10% on the GPU machine, mostly in the host's part.
        local runs=1 walls="" r
        [ "${program#hmmc-gpu}" != "$program" ] && runs=${REPEATS:-3}
        for ((r = 1; r <= runs; r++)); do
            local start rc=0 one
            start=$(now_s)
            timeout -k 5 "$limit" "$@" > "$WORK/out" 2> "$WORK/err.$r" || rc=$?
            one=$(awk -v a="$start" -v b="$(now_s)" 'BEGIN { printf "%.3f", b - a }')
            case $rc in
            0) status=ok ;;
            124 | 137) status="timeout (limit ${limit} s)"; MEASURE_GAVE_UP[$key]=1 ;;
            *) status="failed (exit $rc)" ;;
            esac
            if [ "$status" = ok ] && [ "${program#hmmc}" != "$program" ]; then
                local rows
                rows=$(grep -c -v '^#' "$WORK/out")
                [ "$rows" = "$sequences" ] || status="wrong-rows ($rows of $sequences)"
            fi
            walls="$walls$one $r"$'\n'
            [ "$status" = ok ] || break
        done
        if [ "$status" = ok ]; then # the median run (the lower middle of an even count)
            read -r wall r < <(printf '%s' "$walls" | sort -n | sed -n "$(((runs + 1) / 2))p")
        else
            read -r wall r < <(printf '%s' "$walls" | tail -n 1)
        fi
        mv "$WORK/err.$r" "$WORK/err"
        rm -f "$WORK"/err.*
        # Seconds are printed to the millisecond, rates to 3 digits: the kernel
        # time comes from the rate, so that a run of a millisecond keeps its digits.
        # A float run's rescoring in double prints a second GPU report: its
        # kernel seconds are added.
        kernel=$(awk -v r="$residues" -v rate="$(timing_value "$WORK/err" "kernels, all calls" 2)" \
            -v more="$(awk '/^  kernels, all calls/ && ++n > 1 { s += $4 } END { print s + 0 }' "$WORK/err")" \
            'BEGIN { if (rate > 0) printf "%.4g", r / rate + more }')
        gpu_wall=$(timing_value "$WORK/err" "GPU scoring, wall")
        e2e=$(timing_value "$WORK/err" "total, end to end")
        score=$(sed -n -E 's/^  (scoring|map\+score\+format) \([^)]*\) +([0-9.]+).*/\2/p' "$WORK/err" | head -n 1)
        scorer=$(sed -n -E 's/^  (scoring|map\+score\+format) \(([^)]*)\).*/\2/p' "$WORK/err" | head -n 1)
        rescored=$(timing_rescored "$WORK/err")
        {
            echo "== $table $model $algorithm $program, $sequences sequences: $status, wall $wall s$([ "$runs" -gt 1 ] && [ "$status" = ok ] && echo " (the median of $runs runs: $(printf '%s' "$walls" | cut -d' ' -f1 | tr '\n' ' ' | sed 's/ $//') s)")"
            echo "\$ $*"
            cat "$WORK/err"
        } >> "$log"
    fi
    local rates
    rates=$(awk -v c="$cells" -v n="$sequences" -v r="$residues" -v k="$kernel" -v w="$wall" -v ok="${status%% *}" 'BEGIN {
        if (ok != "ok") { print ",,,,"; exit }
        printf "%s,%s,%s,%s,%s", (k > 0 ? sprintf("%.4g", c / k) : ""), (w > 0 ? sprintf("%.4g", c / w) : ""),
            (w > 0 ? sprintf("%.4g", n / w) : ""), (k > 0 ? sprintf("%.4g", r / k) : ""), (w > 0 ? sprintf("%.4g", r / w) : "") }')
    echo "$(date -u +%Y-%m-%dT%H:%M:%SZ),$(csv_field "$GPU_NAME"),$(csv_field "$CPU_NAME"),$table,$model,$per_position,$algorithm,$program,$sequences,$residues,$cells,$(csv_field "$status"),$wall,$e2e,$score,$kernel,$gpu_wall,$(csv_field "$scorer"),$rescored,$rates,$(csv_field "$*")" >> "$csv"
    printf '  %-7s %-7s %-8s %-14s %8s seqs: %s%s\n' "$table" "$model" "$algorithm" "$program" "$sequences" "$status" "${wall:+, $wall s}${kernel:+, kernels $kernel s}"
    rm -f "$WORK/out" "$WORK/err"
}
