/* ir.h: the model IR and the program IR that sema builds and the passes
 * transform. A model is a set of states and moves; a move either emits one
 * symbol (from an emission table) or is silent. Weights are natural logs. */

/* Every call in main gets its own copy of its model, so that each call's
 * passes (silent-state folding, planning) can differ; the copies share the
 * model's moves until a pass changes them (ir_model_own_moves): a dense
 * model of 6,000 states has 36 million moves, and forward, backward and
 * viterbi of it would otherwise hold three copies of them. */
#ifndef HMMC_IR_H
#define HMMC_IR_H

#include <stdio.h>
#include "support/arena.h"
#include "support/loc.h"
#include "syntax/length_expr.h"

typedef enum StateKind {
    STATE_START,    /* the start state: silent, nothing enters it */
    STATE_END,      /* the end state: silent, nothing leaves it */
    STATE_SILENT,   /* a silent state (it may still be entered by emitting transitions) */
    STATE_EMITTING  /* every move into it emits from its emission */
} StateKind;

typedef struct IrState {
    const char *name;
    Loc loc;
    StateKind kind;
    int emission; /* STATE_EMITTING: index into the model's emissions; else -1 */
    int folded;   /* 1 when a pass removed it: folded into its neighbours (pass_fold_silent)
                     or trimmed (pass_trim); backends skip such states */
    int trimmed;  /* 1 when pass_trim removed it: no complete path visits it */
    int aux_of;   /* -1 for a state of the source. Otherwise this state was made by
                     pass_close_cycles: it gathers what enters source state aux_of,
                     which sits on a silent cycle, before the cycle is closed; it is
                     never printed in a traceback or a table */
} IrState;

typedef enum EmissionKind {
    EMISSION_TABLE,    /* one value per symbol (logp) */
    EMISSION_GAUSSIAN, /* a density over real vectors (alphabet real[D]) */
    EMISSION_MIXTURE   /* a weighted sum of gaussians of the same model */
} EmissionKind;

/* Bytes [begin, end) of the source text; begin -1: not written. */
typedef struct IrSpan {
    long begin, end;
} IrSpan;

typedef struct IrEmission {
    const char *name;
    Loc loc;
    double *logp; /* EMISSION_TABLE: K natural logs, -inf for 0 */
    EmissionKind kind;
    /* EMISSION_GAUSSIAN: N(mean, C) with C = L L^T (Cholesky, computed by sema
     * in double). diagonal: factor holds the D standard deviations; else L,
     * D x D row-major, lower triangular. log_norm is -D/2 ln(2 pi) - sum ln L_ii,
     * so that ln density(x) = log_norm - |L^-1 (x - mean)|^2 / 2. */
    int diagonal;
    double *mean, *factor;
    double log_norm;
    /* EMISSION_MIXTURE: n_parts gaussians (indexes of this model's emissions)
     * with the natural logs of their weights (-inf for 0). */
    int n_parts;
    int *parts;
    double *log_weights;
    /* Training (--train) of a density: the bytes of each number's text, a
     * gaussian's D means then its D variances or D x D covariance entries
     * (row-major), a mixture's weights in order. */
    int n_spans;
    IrSpan *spans;
} IrEmission;

/* A move from one state to another. A source transition is one move; a move
 * made by folding silent states stands for every silent path it replaced. */
typedef struct IrMove {
    int from, to;
    int emission;  /* emission table of the symbol it emits, or -1 for silent */
    int n_via;     /* the length of its via path (0: none) */
    double lw_sum; /* ln of the sum of the weights of the paths it stands for (forward, backward) */
    double lw_max; /* ln of the weight of the best of those paths (viterbi) */
    int via;       /* the folded states that best path passes through, in order: a node of
                      the model's IrPaths (0, the empty path, when n_via is 0); ir_path_states
                      writes them out */
    int length_weight; /* 0, or k: the weight also depends on the sequence's length, times
                          the model's length_weights[k - 1] at that length (lw_sum and
                          lw_max then hold the constant factor, 0 as written) */
} IrMove;

/* A weight written as a function of the sequence length L (`(L / (L + 3))`):
 * computed once per sequence by the generated code. */
typedef struct IrLengthWeight {
    const LExpr *expr;
    const char *c_text; /* lexpr_c of it: C reading a double L */
    Loc loc;
} IrLengthWeight;

/* The via paths of a model's moves, shared: node k stands for the states
 * path(left) ++ [state] ++ path(right), each part possibly empty (node 0 is
 * the empty path, state -1 none). Nodes never change once made, so a fold
 * (p -> s -> r: the path of p -> s, then s, then that of s -> r) or a closed
 * cycle makes its path in O(1) time and memory, however long the path is: a
 * chain of 100,000 folded states costs 100,000 nodes, not 5 billion copied
 * states. The copies of a model share them (nodes are only added). */
typedef struct IrPathNode {
    int left, state, right;
    int length;    /* states in the whole path */
} IrPathNode;

typedef struct IrPaths {
    IrPathNode *node;
    int n, cap;
} IrPaths;


enum { IR_TRAIN_MOVES_MAX = 65536 };

typedef struct IrModel {
    const char *name;
    Loc loc;
    const char *symbols; /* the alphabet, one character a symbol, in order */
    int K;               /* alphabet size (0 for a real alphabet) */
    int real_dim;        /* > 0: `alphabet real[D]`, each observation D reals, every
                            emission a density (EMISSION_GAUSSIAN, EMISSION_MIXTURE) */
    int n_states;
    IrState *states;     /* in declaration order; indexes are stable across passes */
    int start, end;
    int n_emissions;
    IrEmission *emissions;
    int n_moves;
    IrMove *moves;
    int moves_shared;    /* moves belong to another model too: copy before changing them */
    int n_length_weights;
    IrLengthWeight *length_weights; /* shared by the copies (IrMove.length_weight) */
    IrPaths *paths;      /* the moves' via paths (NULL until a pass makes one) */
    /* The live states that receive silent moves, ordered so that every silent
     * move goes from an earlier state (or one receiving no silent moves) to a
     * later one; computed by pass_order.c. Silent self-loops and cycles are
     * closed by then (pass_close_cycles.c). */
    int n_silent_order;
    int *silent_order;
    /* Training (--train): the program's models as written only (Program.models;
     * a call's copy has them NULL, since passes change its moves). Per move, 1
     * when its weight is marked `fixed`, and the bytes of the weight's text; per
     * emission, 1 when marked `fixed`, and per (emission, symbol) the bytes of
     * the value's text (begin -1 for a symbol `{a: p}` leaves out). */
    unsigned char *move_fixed; /* NULL (and the rest) for a model of more than */
    IrSpan *move_span;         /* IR_TRAIN_MOVES_MAX transitions: not trainable */
    unsigned char *emission_fixed;
    IrSpan *emission_span; /* n_emissions x K */
} IrModel;

typedef enum Algorithm {
    ALG_FORWARD,
    ALG_BACKWARD,
    ALG_VITERBI,
    ALG_POSTERIOR /* forward and backward over the model as written, in libhmmrt
                     (runtime/posterior.c): the passes leave its calls alone */
} Algorithm;

/* Attributes a call may be asked for (a bit set). */
enum {
    ATTR_SCORE = 1,           /* .score */
    ATTR_SCORE_TABLE = 2,     /* .score& : the whole table of values */
    ATTR_TRACEBACK = 4,       /* .traceback (viterbi) */
    ATTR_TRACEBACK_TABLE = 8, /* .traceback& : the whole table of back pointers */
    ATTR_SEGMENTS = 16,       /* .segments (viterbi, posterior): runs of one state */
    ATTR_DECODE = 32,         /* .decode (posterior): the state of highest posterior */
    ATTR_PROBABILITY_TABLE = 64 /* .probability& (posterior): every posterior */
};

/* What the used-attributes pass decides a call must keep. */
typedef enum Storage {
    STORE_UNDECIDED,   /* before pass_attributes */
    STORE_TWO_COLUMNS, /* score only: a sliding window of two columns */
    STORE_BACKPOINTERS,/* traceback: two columns of values plus a back-pointer table */
    STORE_WHOLE_TABLE, /* a whole table (&) */
    STORE_RUNTIME      /* posterior: libhmmrt's engine keeps what it needs */
} Storage;

/* The target-independent plan of one call (pass_plan.c): facts of the
 * call's model that both backends read. Each backend plans the rest for
 * itself, for the chosen target only: the C backend into CPlan
 * (codegen/c/c_plan.h), the CUDA backend into GpuPlan (codegen/cuda/cuda_plan.h). */
typedef struct IrPlan {
    int n_live;        /* states not folded */
    int max_in_degree; /* most moves into one live state */
    int bp_bytes;      /* bytes per back pointer: 1, 2 or 4 (0 when none are kept) */
    int dense;         /* the dense shape on both targets (dense.h): the model is a
                          matrix, evaluated by libhmmrt's matrix code on the CPU and
                          tiled matrix products on the GPU */
    double float_underflow; /* forward, backward: ir_float_underflow of the model (0 when
                               every value fits, and for viterbi, which adds logs) */
    double float_overflow;  /* forward, backward: ln of the largest weight or emission value
                               above float's range (2^128: a float literal is inf), 0 when none */
    int long_double_only;   /* forward, backward: a weight or emission value lies outside
                               double's normal range (ir_outside_double): the C code sums in long
                               double only, and the program scores on the CPU */
} IrPlan;

typedef struct IrCall {
    Algorithm alg;
    int model_index;  /* which of Program.models it runs */
    IrModel *model;   /* the call's own copy, transformed by the passes */
    unsigned attrs;   /* ATTR_* printed somewhere */
    Storage storage;  /* set by pass_attributes */
    const char *label;/* e.g. "forward(casino)" */
    Loc loc;
    IrPlan plan;
} IrCall;

/* One print statement: one output column. */
typedef struct IrPrint {
    int call;
    unsigned attr; /* exactly one ATTR_* */
    const char *label; /* e.g. "forward(casino).score" */
    Loc loc;
} IrPrint;

typedef struct Program {
    Arena *arena;
    const char *path; /* the source file */
    int n_models;
    IrModel *models;  /* every model of the file, as written, in order */
    int n_calls;
    IrCall *calls;    /* distinct calls of main, in order of first use */
    int n_prints;
    IrPrint *prints;  /* in program order */
    const char *source_text; /* the .hmm file's text (--train rewrites it), or NULL */
    long source_length;
} Program;

const char *algorithm_name(Algorithm alg);
const char *attr_name(unsigned attr); /* "score", "score&", "traceback", "traceback&" */

/* A copy of a model into the arena (each call gets its own), sharing its
 * moves (and emissions) until ir_model_own_moves. */
IrModel *ir_model_copy(Arena *a, const IrModel *m);
/* Gives m moves of its own (a copy when they are shared): call before a
 * pass changes, reorders or removes moves in place. */
void ir_model_own_moves(Arena *a, IrModel *m);
/* The path left ++ [state] ++ right (nodes of m's paths, 0 for empty; state
 * -1 for none) as a node of m's paths. */
int ir_path_join(Arena *a, IrModel *m, int left, int state, int right);
int ir_path_length(const IrModel *m, int node);
/* Writes the states of path `node` into out (ir_path_length of them), in order. */
void ir_path_states(const IrModel *m, int node, int *out);
/* The via states of a move into out (mv->n_via of them). */
void ir_move_via(const IrModel *m, const IrMove *mv, int *out);

/* Incoming moves of every state as compressed rows: moves into state s are
 * order[start[s] .. start[s+1]-1] (indexes into m->moves), in move order. */
void ir_incoming(Arena *a, const IrModel *m, int **start, int **order);
/* The same for the moves out of each state. */
void ir_outgoing(Arena *a, const IrModel *m, int **start, int **order);

/* The least weight (a live move's sum weight) or emission value of a model,
 * as a natural log, that float cannot hold (below 2^-126: a float table
 * would read 0 and lose its paths), or 0 when every one fits. */
double ir_float_underflow(const IrModel *m);
/* The same, leaving out the weights of the moves i with held_apart[i] (a
 * backend holds those in a form of its own; their emission values count). */
double ir_float_underflow_except(const IrModel *m, const char *held_apart);
/* ln(e^x + e^y), for sums of weights kept as logs (-inf is 0). */
double ir_log_add(double x, double y);
/* 1 when e^lw is 0 or a normal double (2^-1022 to 2^1024): a double literal
 * holds it to every digit. */
int ir_log_in_double(double lw);
/* ln of the largest live weight or emission value above float's range
 * (2^128), or 0 when every one fits. */
double ir_float_overflow(const IrModel *m);
/* 1 when a live move's weight or an emission value it uses is not (a
 * subnormal, or a folded product below 2^-1022 or above 2^1024): a double
 * literal would lose digits or the whole path. */
int ir_outside_double(const IrModel *m);
#define IR_LN_FLOAT_MIN (-87.33654475055310898) /* ln 2^-126, float's least normal number */
#define IR_LN_FLOAT_MAX (88.72283905206835) /* ln 2^128: float's largest number is below */

/* A length from which the model surely gives every sequence a path (a
 * sufficient test: every_sequence.c), so that a forward or backward score of
 * -inf for such a sequence can only mean a probability below long double's
 * range; -1 when the test finds none. Scratch memory from the arena. */
int ir_every_sequence_from(Arena *a, const IrModel *m);

/* The stable text form of the program IR (--dump-after and golden tests). */
void ir_dump(const Program *p, FILE *out);
/* ir_dump, with the lines call_lines writes (the backends' plans of the
 * call: driver/pipeline.c) after each call's plan line. */
void ir_dump_with(const Program *p, FILE *out,
                  void (*call_lines)(const void *ctx, int call, FILE *out), const void *ctx);

#endif
