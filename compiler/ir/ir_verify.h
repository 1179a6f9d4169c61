/* ir_verify.h: the IR verifier: the invariants of states, moves, via paths,
 * shared moves and the silent order, checked after sema and after every pass
 * (driver/pipeline.c runs it when the environment sets HMMC_VERIFY_IR, as
 * make's test targets do). */
#ifndef HMMC_IR_VERIFY_H
#define HMMC_IR_VERIFY_H

#include <stddef.h>
#include <stdint.h>

#include "ir/ir.h"

/* A checksum of a model's moves: the models as written must never change
 * (passes work on each call's copy). */
uint64_t ir_model_checksum(const IrModel *m);

/* 1 when p keeps every invariant after stage `after` ("sema" or a pass's
 * name; "order" and "plan" also check the silent order), else 0 with the
 * first broken one in why. source_sums: ir_model_checksum of each model as
 * written, taken after sema (NULL: not checked). Scratch from the arena. */
int ir_verify(Arena *a, const Program *p, const char *after, const uint64_t *source_sums,
              char *why, size_t len);

#endif
