/* backend_c_hits.h: what the C backend writes for the hits mode of a program
 * imported from a HMMER3 file (hmmsearch's -E, --tblout ...): its source's
 * `// hmmer:` header as an hmmrt_hits_info, and which columns hold the
 * search score and the domains (docs/hmmer.md, "Hits"). */
#ifndef HMMC_BACKEND_C_HITS_H
#define HMMC_BACKEND_C_HITS_H

#include "codegen/emit.h"
#include "codegen/layout.h"
#include "ir/ir.h"

/* Writes `static const hmmrt_hits_info hits` when the source has the header
 * (layout names the search score's call function); returns the program's
 * field (".hits = &hits, ") or "" when it has none. */
const char *c_write_hits(Emitter *e, const Program *p, const Layout *layout);

#endif
