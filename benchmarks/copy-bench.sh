#!/bin/bash
# copy-bench.sh: builds benchmarks/copy-bench.c against build/libhmmrt.a and
# runs it on FILE (FASTA, or a database of codes made by PROG --make-db) with
# 1 and 2 threads, ROUNDS rounds each (default 3): per batch, the copy of
# the reader's codes into the batch's array and the two ways of packing.
#   benchmarks/copy-bench.sh FILE [ROUNDS]
# Figures: benchmarks/history/2026-11-26-copies.md.
set -eu
cd "$(dirname "$0")/.."
file=$1
rounds=${2:-3}
out=build/tools/copy-bench
mkdir -p build/tools
cc -O2 -g -std=c11 -D_GNU_SOURCE -Wall -fopenmp -Iruntime benchmarks/copy-bench.c -o "$out" \
    build/libhmmrt.a -lz -lm -ldl -lpthread
for threads in 1 2; do
    "$out" "$file" "$threads" "$rounds"
done
