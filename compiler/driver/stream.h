/* stream.h: the front end (parse and sema) of a file of many models, a
 * model at a time, each model's syntax tree freed once sema has lowered it
 * (stream.c); the whole-file front end (pipeline.c) otherwise. */
#ifndef HMMC_DRIVER_STREAM_H
#define HMMC_DRIVER_STREAM_H

#include <stddef.h>

#include "ir/ir.h"
#include "support/arena.h"
#include "support/diag.h"

/* Files of fewer `hmm` blocks are parsed whole. */
#define STREAM_MIN_MODELS 2

/* Parses and lowers src a model at a time into *program (in a): 1 when it
 * did, with no message; 0 when the file must go the whole-file way (fewer
 * models, a text it cannot cut with confidence, or any error or warning,
 * which that way then reports in its own order). */
int stream_front_end(Arena *a, Diag *d, const char *path, const char *src, size_t len,
                     Program **program);

#endif
