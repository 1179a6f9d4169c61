/* c_plan.h: the C backend's plan of each call (CPlan): the shape of its code
 * (straight-line statements or move tables) and where its columns live. It
 * runs for every target (a CUDA program carries a C path too), after the
 * shared pipeline. */
#ifndef HMMC_C_PLAN_H
#define HMMC_C_PLAN_H

#include <stdio.h>

#include "ir/ir.h"

/* Code shapes of the C backend (c_plan chooses; --c-shape forces one). */
typedef enum CShape {
    C_SHAPE_AUTO = 0,  /* the option only: let the plan choose */
    C_SHAPE_STRAIGHT,  /* every move a statement (emit_dp.c): fast to run, slow to compile */
    C_SHAPE_TABLE      /* the moves in static tables, one loop per phase (backend_c_table.c) */
} CShape;

/* The C plan of one call. */
typedef struct CPlan {
    CShape shape;     /* straight-line or table (a dense call's code is libhmmrt's) */
    int local_arrays; /* the two columns as local arrays (small models), else scratch memory */
    int engine;       /* a posterior call: libhmmrt's engine runs it, no code is planned */
    int profile_data; /* libhmmrt's generic profile scorer runs it on its model's tables
                         (backend_c_profile.h): no code specialised to the model */
    long profile_offset; /* then: where its model's tables begin in the data file (doubles) */
    long profile_size;   /* and how many doubles they take */
    long profile_sample_at; /* where its model as written (for --sample) begins (bytes) */
} CPlan;

/* The plans of p's calls (p->n_calls of them, in p's arena); forced is
 * --c-shape's shape or C_SHAPE_AUTO. With verbose, says what it chose and why. */
CPlan *c_plan(const Program *p, CShape forced, FILE *verbose);

/* The plan's line of --dump-after=plan. */
void c_plan_dump(const CPlan *plan, FILE *out);

#endif
