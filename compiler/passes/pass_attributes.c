/* pass_attributes.c: the used-attributes pass. Only what is printed is
 * computed and stored: a call whose score alone is printed keeps a sliding
 * window of two columns; back pointers exist only when a traceback or
 * segments are printed; whole tables only for `&`. Posterior calls run in
 * libhmmrt (STORE_RUNTIME), and the later passes leave them alone. */
#include "passes/pass.h"

int pass_attributes(Program *p, const PassOptions *o, Diag *d)
{
    for (int c = 0; c < p->n_calls; c++) {
        IrCall *call = &p->calls[c];
        if (call->alg == ALG_POSTERIOR)
            call->storage = STORE_RUNTIME;
        else if (call->attrs & (ATTR_SCORE_TABLE | ATTR_TRACEBACK_TABLE))
            call->storage = STORE_WHOLE_TABLE;
        else if (call->attrs & (ATTR_TRACEBACK | ATTR_SEGMENTS))
            call->storage = STORE_BACKPOINTERS;
        else
            call->storage = STORE_TWO_COLUMNS;
        if (o->verbose)
            fprintf(o->verbose, "hmmc: %s keeps %s\n", call->label,
                    call->storage == STORE_RUNTIME        ? "what libhmmrt's posterior engine needs "
                                                            "(forward and backward over the model "
                                                            "as written; the passes leave it alone)"
                    : call->storage == STORE_WHOLE_TABLE  ? "the whole table (printed with &)"
                    : call->storage == STORE_BACKPOINTERS ? "two columns and back pointers "
                                                            "(traceback, segments)"
                                                          : "two columns (score only)");
    }
    return 1;
}
