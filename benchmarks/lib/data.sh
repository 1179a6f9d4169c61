# shellcheck shell=bash
# data.sh: sourced by benchmarks/gpu-suite: makes the sequence databases of
# the suite on the machine that runs it (they are too large to carry).

# make_proteins RANDPROT N SEED FILE: N random proteins (randprot: log-normal
# lengths, mean 300, HMMER2's null model residues) into FILE; prints the
# number of residues. The same seed gives the same first sequences at every N.
make_proteins() {
    local randprot=$1 n=$2 seed=$3 file=$4
    "$randprot" "$n" "$seed" > "$file" 2> "$file.log" || { cat "$file.log" >&2; return 1; }
    sed -n -E 's/.* ([0-9]+) residues.*/\1/p' "$file.log"
    rm -f "$file.log"
}

# sample_casino PROGRAM N L FILE: N sequences of exactly L symbols drawn from
# the casino (PROGRAM --sample), into FILE. The sampler is one thread, so the
# draw is split into K = min(16, ceil(N / 1000)) pieces run at once, piece i
# with seed i (so the file depends only on N and L; names repeat across pieces).
sample_casino() {
    local program=$1 n=$2 length=$3 file=$4
    local pieces=$(((n + 999) / 1000))
    [ "$pieces" -le 16 ] || pieces=16
    [ "$pieces" -ge 1 ] || pieces=1
    local i count pids=()
    for ((i = 1; i <= pieces; i++)); do
        count=$((n / pieces + (i <= n % pieces ? 1 : 0)))
        "$program" --sample "$count" --length "$length" --seed "$i" > "$file.$i" &
        pids+=($!)
    done
    local failed=0
    for i in "${pids[@]}"; do wait "$i" || failed=1; done
    if [ "$failed" = 0 ]; then
        for ((i = 1; i <= pieces; i++)); do cat "$file.$i"; done > "$file"
    fi
    for ((i = 1; i <= pieces; i++)); do rm -f "$file.$i"; done
    return "$failed"
}
