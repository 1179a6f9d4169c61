# strands-compare.awk: nhmmer's --tblout (first file) against hmmc's (second),
# the hits of E-value < max (default 0.01) of each: a hit of one is found in
# the other when the same target and strand hold one whose envelope overlaps
# it. Prints one line per hit found by one only ("only nhmmer: ..."), then
# "matched N nhmmer N hmmc N env D ali D score D hmm D": the largest
# difference of envelope ends, alignment ends (bases), score (bits) and
# model ends of the hits matched (its E-value < max in both), and the same
# with the E-value cut at max * slack in the other (a hit near the
# threshold on the other side is counted in "near"). awk -v max=0.01 -v
# slack=3 -f strands-compare.awk nhmmer.tbl hmmc.tbl (tests/hmmer/strands).
function lo(a, b) { return a < b ? a : b }
function hi(a, b) { return a > b ? a : b }
function abs(x) { return x < 0 ? -x : x }
BEGIN { if (max == "") max = 0.01; if (slack == "") slack = 3 }
/^#/ { next }
{
    f = FILENAME == ARGV[1] ? 0 : 1
    i = ++n[f]
    t[f, i] = $1; s[f, i] = $12; e[f, i] = $13; sc[f, i] = $14
    hf[f, i] = $5; ht[f, i] = $6
    af[f, i] = lo($7, $8); at[f, i] = hi($7, $8); ef[f, i] = lo($9, $10); et[f, i] = hi($9, $10)
}
function find(f, i, g,   j, best) {
    best = 0
    for (j = 1; j <= n[g]; j++)
        if (t[g, j] == t[f, i] && s[g, j] == s[f, i] && ef[g, j] <= et[f, i] && et[g, j] >= ef[f, i])
            if (!best || e[g, j] < e[g, best]) best = j
    return best
}
END {
    who[0] = "nhmmer"; who[1] = "hmmc"
    for (f = 0; f <= 1; f++)
        for (i = 1; i <= n[f]; i++) {
            if (e[f, i] >= max) continue
            count[f]++
            j = find(f, i, 1 - f)
            if (j && e[1 - f, j] < max) {
                if (f == 1) continue
                matched++
                d = hi(abs(ef[0, i] - ef[1, j]), abs(et[0, i] - et[1, j])); if (d > denv) denv = d
                d = hi(abs(af[0, i] - af[1, j]), abs(at[0, i] - at[1, j])); if (d > dali) dali = d
                d = abs(sc[0, i] - sc[1, j]); if (d > dsc) dsc = d
                d = hi(abs(hf[0, i] - hf[1, j]), abs(ht[0, i] - ht[1, j])); if (d > dhmm) dhmm = d
                continue
            }
            if (j && e[1 - f, j] < max * slack) { near++; how = "near " }
            else { missed++; how = "only " }
            printf "%s%s: %s %s %s-%s E %s (other: %s)\n", how, who[f], t[f, i], s[f, i], ef[f, i], et[f, i], e[f, i], j ? e[1 - f, j] : "none"
        }
    printf "matched %d nhmmer %d hmmc %d near %d missed %d env %d ali %d score %.1f hmm %d\n",
        matched, count[0], count[1], near, missed, denv, dali, dsc, dhmm
}
