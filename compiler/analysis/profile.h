/* profile.h: recognising profile-shaped models (HMMER's Plan7 and models
 * like it) and their node view, which the CUDA profile shape reads instead of
 * the move list (how it lays the nodes over a warp's lanes:
 * codegen/cuda/profile_tuning.h). */

/* A profile is a chain of K nodes, each with up to three
 * states in fixed roles (match: emits, no loop; insert: emits, loops on
 * itself; delete: silent), joined by moves that go forward at most
 * PROFILE_MAX_REACH nodes, plus a few special states (start, end, and the
 * hubs such as B and E that reach every node, with what hangs off them: N,
 * J, C, T). The recogniser is structural: names play no part, and every
 * move of the model must find its place in the view or the model is not a
 * profile. */
#ifndef HMMC_PROFILE_H
#define HMMC_PROFILE_H

#include "ir/ir.h"

enum {
    PROFILE_MIN_NODES = 24,     /* fewer: the other shapes serve as well */
    PROFILE_MAX_SPECIALS = 16,  /* states outside the nodes */
    PROFILE_MAX_REACH = 2,      /* node(to) - node(from) of a move between nodes (folding a
                                   delete state joins nodes two apart) */
    PROFILE_HUB_DEGREE = 16     /* a state with this many neighbours or more is a hub */
};

typedef enum ProfileRole { ROLE_MATCH, ROLE_INSERT, ROLE_DELETE, PROFILE_ROLES } ProfileRole;

/* One kind of move into a node's state, the same at every node: from a
 * node's state `reach` nodes back (from_role >= 0) or from a special state
 * (from_role < 0). move[k]: the model's move into node k's state, -1 where
 * node k has none. Emitting entries read the previous column, silent ones
 * the current column. An entry from the delete role into the delete role
 * is the delete chain. */
typedef struct ProfileEntry {
    int from_role;    /* ProfileRole, or -1: from specials[from_special] */
    int from_special;
    int reach;        /* node moves: 0 .. PROFILE_MAX_REACH */
    int to_role;
    int emitting;
    int *move;        /* K move indexes or -1 */
} ProfileEntry;

/* Moves from a node's state into a special state (silent, same column):
 * the special sums (or maximises) over the nodes. */
typedef struct ProfileExit {
    int from_role;
    int to_special;
    int *move;        /* K move indexes or -1 */
} ProfileExit;

typedef struct ProfileView {
    int K;                      /* nodes */
    int *state;                 /* K * PROFILE_ROLES: the model's state of node k in role r
                                   at [k * PROFILE_ROLES + r], -1 where there is none */
    int has_role[PROFILE_ROLES];
    int n_entries;
    ProfileEntry *entries;      /* emitting entries first, then silent ones */
    int n_exits;
    ProfileExit *exits;
    int n_specials;
    int *specials;              /* state indexes, in evaluation order (after the delete
                                   chain; none enters a delete state silently) */
    int n_special_moves;
    int *special_moves;         /* moves between specials: emitting ones first, then the
                                   silent ones in evaluation order of their destinations */
} ProfileView;

/* The node view of a call's model, or NULL when it is not a profile (why,
 * when not NULL, receives the reason). */
ProfileView *profile_view(Arena *a, const IrModel *m, const char **why);

/* The special index of state s in v (-1 when s is in a node). */
int profile_special_index(const ProfileView *v, int s);

#endif
