/* backend_c_profile.h: profiles as data (docs/hmmer.md, "Files of many
 * models"): which calls of a program run libhmmrt's generic profile scorer
 * (runtime/hmmrt_profile.h) on tables instead of code specialised to their
 * model, the data file of those tables, and the C that reads it. */
#ifndef HMMC_BACKEND_C_PROFILE_H
#define HMMC_BACKEND_C_PROFILE_H

#include <stdio.h>

#include "codegen/backend.h"
#include "codegen/c/c_plan.h"
#include "codegen/emit.h"
#include "ir/ir.h"

typedef enum ProfileDataMode {
    PROFILE_DATA_AUTO = 0, /* the generic scorer for the profiles of a program of two or more */
    PROFILE_DATA_ON,       /* for every profile a call's model is (tests, benchmarks) */
    PROFILE_DATA_OFF       /* never: every call specialised */
} ProfileDataMode;

/* Marks the calls that take the generic scorer (CPlan.profile_data): forward
 * and viterbi calls printing only their score, whose model as written has
 * the profile layout --import-hmmer writes (profile_data_recognise), as mode
 * says; with gpu (--target=cuda) the GPU runs them with libhmmrt_gpu's
 * generic profile kernel (backend_cuda_profile_data.h). With verbose, says
 * which path each model takes. */
void c_profile_plan(const Program *p, CPlan *plans, ProfileDataMode mode, int gpu,
                    FILE *verbose);

/* 1 when some call takes the generic scorer (the program needs PREFIX.profiles). */
int c_profile_needs_data(const Program *p, const Plans *plans);

/* Writes PREFIX.profiles: every such model's tables (hmmrt_profile.data),
 * doubles, each model's from a multiple of 64 bytes. Returns 0 or -1. */
int c_profile_write_data(const Program *p, const Plans *plans, const char *prefix);
void c_profile_remove_data(const Program *p, const char *prefix);

/* 1 when a call of the model takes the generic scorer: the model as written
 * (for --sample) is in the data file too, not in the C (a thousand models'
 * tables would be most of a 200 MB source). Its moves (hmmrt_model_move
 * records) begin at the byte returned, its emissions at *emissions_at, and
 * its states' names (each NUL-terminated, in order) at *names_at. */
int c_profile_model_in_data(const Program *p, const Plans *plans, int model_index);
size_t c_profile_sample_offset(const Program *p, const Plans *plans, int model_index,
                               size_t *emissions_at, size_t *names_at);

/* The C of a call that takes the generic scorer: its hmmrt_profile (the
 * first call of its model writes it) and its run function. */
void c_profile_write_call(Emitter *e, const Program *p, const Plans *plans, int index,
                          const char *prefix);

#endif
