/* hmmer_meta.h: reading the header lines the import keeps (HmmerMeta, in
 * hmmer_header.h) as hmmer_read.c meets them (hmmer_meta.c). */
#ifndef HMMC_IMPORT_HMMER_META_H
#define HMMC_IMPORT_HMMER_META_H

#include "import/hmmer_lines.h"
#include "import/hmmer_profile.h"

/* Reads the current header line into h->meta when its key is one kept
 * (ACC DESC GA TC NC NSEQ CKSUM; STATS EFFN MAXL in HMMER3 files, EVD in
 * HMMER2's). version is '2' for HMMER2.0, 'a' to 'f' for HMMER3/a to /f.
 * Returns 1 (kept), 0 (another key) or -1 (reported). */
int hmmer_meta_line(Reader *r, H2 *h, char version);

/* At the end of the header: STATS lines come all three or not at all. */
int hmmer_meta_check(const Reader *r, const H2 *h);

#endif
