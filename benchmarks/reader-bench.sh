#!/bin/bash
# reader-bench.sh: builds benchmarks/reader-bench.c against build/libhmmrt.a
# and runs it on FILE with 1 and 2 threads, ROUNDS rounds each (default 3),
# each round the two-pass reader and, where the runtime has it, the one-pass
# reader (parse maps), in turn, so that both see the same load.
#   benchmarks/reader-bench.sh FILE [ROUNDS]   (e.g. build/tools/randprot 1000000 1 > /dev/shm/p.fa)
# Figures: benchmarks/history/2026-11-26-reader.md.
set -eu
cd "$(dirname "$0")/.."
file=$1
rounds=${2:-3}
out=build/tools/reader-bench
mkdir -p build/tools
cc -O2 -g -std=c11 -D_GNU_SOURCE -Wall -fopenmp -Iruntime benchmarks/reader-bench.c -o "$out" \
    build/libhmmrt.a -lz -lm -ldl -lpthread
for threads in 1 2; do
    "$out" "$file" "$threads" "$rounds"
done
