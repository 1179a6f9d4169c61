# randbg.awk: n random proteins of length len, each residue drawn from
# HMMER3's background frequencies (p7_AminoFrequencies), as hmmsim draws
# its random targets (tests/hmmer/hits, --hmmer-mode=uniglocal against
# hmmsim). awk -v n=2000 -v len=200 -v seed=1 -f randbg.awk
BEGIN {
    split("A C D E F G H I K L M N P Q R S T V W Y", aa, " ")
    split("0.0787945 0.0151600 0.0535222 0.0668298 0.0397062 0.0695071 0.0229198 0.0590092 0.0594422 0.0963728 0.0237718 0.0414386 0.0482904 0.0395639 0.0540978 0.0683364 0.0540687 0.0673417 0.0114135 0.0304133", f, " ")
    for (i = 1; i <= 20; i++) { total += f[i]; cum[i] = total }
    srand(seed)
    for (s = 1; s <= n; s++) {
        seq = ""
        for (j = 1; j <= len; j++) {
            r = rand() * total
            for (i = 1; i < 20 && cum[i] < r; i++) ;
            seq = seq aa[i]
        }
        print ">r" s; print seq
    }
}
