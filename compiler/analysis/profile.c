/* profile.c: the recogniser of profile-shaped models (profile.h). */

/* Steps:
 * the specials (start, end, hubs, and whatever the hubs cut off from the
 * largest group of states), the roles of the other states (from their kind
 * and self-loop), node numbers (longest paths through match and delete
 * states; an insert state sits in the node of the state that enters it),
 * then every move is filed as an entry, an exit or a move between specials,
 * and the specials are put in an order that evaluates each silent move's
 * source before its destination (all after the delete chain: a special that
 * enters a delete state silently makes the model no profile). */
#include "analysis/profile.h"

#include <string.h>

typedef struct Recogniser {
    Arena *a;
    const IrModel *m;
    ProfileView *v;
    int *special_of; /* state -> special index, -1 in a node */
    int *role, *node;
    int max_entries;
    const char *why;
} Recogniser;

static int is_live(const IrModel *m, int s) { return !m->states[s].folded; }

static int find_root(int *parent, int s)
{
    while (parent[s] != s)
        s = parent[s] = parent[parent[s]];
    return s;
}

/* Specials: start, end, hubs, and every live state outside the largest group
 * that the other states form. */
static int find_specials(Recogniser *r)
{
    const IrModel *m = r->m;
    int n = m->n_states;
    int *degree = ARENA_ARRAY(r->a, int, n), *parent = ARENA_ARRAY(r->a, int, n);
    int *size = ARENA_ARRAY(r->a, int, n), *special = ARENA_ARRAY(r->a, int, n);
    for (int i = 0; i < m->n_moves; i++)
        if (m->moves[i].from != m->moves[i].to) {
            degree[m->moves[i].from]++;
            degree[m->moves[i].to]++;
        }
    for (int s = 0; s < n; s++) {
        parent[s] = s;
        special[s] = is_live(m, s) && (s == m->start || s == m->end || degree[s] >= PROFILE_HUB_DEGREE);
    }
    for (int i = 0; i < m->n_moves; i++) {
        const IrMove *mv = &m->moves[i];
        if (is_live(m, mv->from) && is_live(m, mv->to) && !special[mv->from] && !special[mv->to])
            parent[find_root(parent, mv->from)] = find_root(parent, mv->to);
    }
    int largest = -1;
    for (int s = 0; s < n; s++)
        if (is_live(m, s) && !special[s] && ++size[find_root(parent, s)] > (largest < 0 ? 0 : size[largest]))
            largest = find_root(parent, s);
    r->v->specials = ARENA_ARRAY(r->a, int, PROFILE_MAX_SPECIALS);
    for (int s = 0; s < n; s++) {
        r->special_of[s] = -1;
        if (!is_live(m, s) || (!special[s] && find_root(parent, s) == largest))
            continue;
        if (r->v->n_specials == PROFILE_MAX_SPECIALS) {
            r->why = "more than 16 states outside the node chain";
            return 0;
        }
        r->special_of[s] = r->v->n_specials;
        r->v->specials[r->v->n_specials++] = s;
    }
    return largest >= 0;
}

static int has_self_loop(const IrModel *m, int s, const int *in_start, const int *in_order)
{
    for (int k = in_start[s]; k < in_start[s + 1]; k++)
        if (m->moves[in_order[k]].from == s)
            return 1;
    return 0;
}

/* Roles and node numbers of the states in nodes. */
static int number_nodes(Recogniser *r)
{
    const IrModel *m = r->m;
    int n = m->n_states;
    int *in_start, *in_order;
    ir_incoming(r->a, m, &in_start, &in_order);
    int *pending = ARENA_ARRAY(r->a, int, n), *queue = ARENA_ARRAY(r->a, int, n);
    int n_core = 0, head = 0, tail = 0;
    for (int s = 0; s < n; s++) {
        r->role[s] = -1;
        r->node[s] = 0;
        if (!is_live(m, s) || r->special_of[s] >= 0)
            continue;
        n_core++;
        r->role[s] = m->states[s].kind != STATE_EMITTING ? ROLE_DELETE
                   : has_self_loop(m, s, in_start, in_order) ? ROLE_INSERT : ROLE_MATCH;
    }
    /* longest paths over moves between match and delete states */
    for (int i = 0; i < m->n_moves; i++) {
        const IrMove *mv = &m->moves[i];
        if (r->role[mv->from] >= 0 && r->role[mv->from] != ROLE_INSERT &&
            r->role[mv->to] >= 0 && r->role[mv->to] != ROLE_INSERT)
            pending[mv->to]++;
    }
    for (int s = 0; s < n; s++)
        if (r->role[s] >= 0 && r->role[s] != ROLE_INSERT && !pending[s])
            queue[tail++] = s;
    int *out_start, *out_order;
    ir_outgoing(r->a, m, &out_start, &out_order);
    while (head < tail) {
        int s = queue[head++];
        for (int k = out_start[s]; k < out_start[s + 1]; k++) {
            int t = m->moves[out_order[k]].to;
            if (r->role[t] < 0 || r->role[t] == ROLE_INSERT)
                continue;
            if (r->node[s] + 1 > r->node[t])
                r->node[t] = r->node[s] + 1;
            if (--pending[t] == 0)
                queue[tail++] = t;
        }
    }
    int n_chain = 0;
    for (int s = 0; s < n; s++)
        n_chain += r->role[s] >= 0 && r->role[s] != ROLE_INSERT;
    if (tail != n_chain) {
        r->why = "the match and delete states form a cycle";
        return 0;
    }
    /* an insert state sits in the node of the match or delete state entering it */
    for (int s = 0; s < n; s++) {
        if (r->role[s] != ROLE_INSERT)
            continue;
        int found = -1;
        for (int k = in_start[s]; k < in_start[s + 1]; k++) {
            int f = m->moves[in_order[k]].from;
            if (r->role[f] >= 0 && r->role[f] != ROLE_INSERT && r->node[f] > found)
                found = r->node[f];
        }
        if (found < 0) {
            r->why = "an insert state is entered by no match or delete state";
            return 0;
        }
        r->node[s] = found;
    }
    ProfileView *v = r->v;
    for (int s = 0; s < n; s++)
        if (r->role[s] >= 0 && r->node[s] + 1 > v->K)
            v->K = r->node[s] + 1;
    if (v->K < PROFILE_MIN_NODES || n_core < v->K) {
        r->why = "fewer than 24 nodes";
        return 0;
    }
    v->state = ARENA_ARRAY(r->a, int, (size_t)v->K * PROFILE_ROLES);
    for (int i = 0; i < v->K * PROFILE_ROLES; i++)
        v->state[i] = -1;
    for (int s = 0; s < n; s++) {
        if (r->role[s] < 0)
            continue;
        int *slot = &v->state[r->node[s] * PROFILE_ROLES + r->role[s]];
        if (*slot >= 0) {
            r->why = "two states take the same role in one node";
            return 0;
        }
        *slot = s;
        v->has_role[r->role[s]] = 1;
    }
    return 1;
}

/* The entry of a kind, made on first use. */
static ProfileEntry *entry_for(Recogniser *r, int from_role, int from_special, int reach, int to_role)
{
    ProfileView *v = r->v;
    for (int e = 0; e < v->n_entries; e++) {
        ProfileEntry *x = &v->entries[e];
        if (x->from_role == from_role && x->from_special == from_special && x->reach == reach &&
            x->to_role == to_role)
            return x;
    }
    if (v->n_entries == r->max_entries)
        return NULL;
    ProfileEntry *x = &v->entries[v->n_entries++];
    *x = (ProfileEntry){from_role, from_special, reach, to_role, to_role != ROLE_DELETE,
                        ARENA_ARRAY(r->a, int, v->K)};
    for (int k = 0; k < v->K; k++)
        x->move[k] = -1;
    return x;
}

static ProfileExit *exit_for(Recogniser *r, int from_role, int to_special)
{
    ProfileView *v = r->v;
    for (int e = 0; e < v->n_exits; e++)
        if (v->exits[e].from_role == from_role && v->exits[e].to_special == to_special)
            return &v->exits[e];
    ProfileExit *x = &v->exits[v->n_exits++];
    *x = (ProfileExit){from_role, to_special, ARENA_ARRAY(r->a, int, v->K)};
    for (int k = 0; k < v->K; k++)
        x->move[k] = -1;
    return x;
}

/* Files move i; 0 (with r->why) when it fits nowhere. */
static int file_move(Recogniser *r, int i, int *special_moves, int *n_special_moves)
{
    const IrModel *m = r->m;
    const IrMove *mv = &m->moves[i];
    if (!is_live(m, mv->from) || !is_live(m, mv->to))
        return 1; /* removed by a pass: no backend reads it */
    int fs = r->special_of[mv->from], ts = r->special_of[mv->to];
    int emits = mv->emission >= 0;
    if (fs >= 0 && ts >= 0) {
        special_moves[(*n_special_moves)++] = i;
        return 1;
    }
    if (ts >= 0) {
        if (emits) {
            r->why = "a node's state moves into a special state while emitting";
            return 0;
        }
        ProfileExit *x = exit_for(r, r->role[mv->from], ts);
        if (!x || x->move[r->node[mv->from]] >= 0) {
            r->why = "two moves from one node's state into one special state";
            return 0;
        }
        x->move[r->node[mv->from]] = i;
        return 1;
    }
    int to_role = r->role[mv->to];
    if (to_role == ROLE_DELETE ? emits : !emits || mv->emission != m->states[mv->to].emission) {
        r->why = "a move into a node's state emits from another table than the state's";
        return 0;
    }
    if (fs >= 0 && !emits) {
        r->why = "a special state enters a delete state without emitting";
        return 0;
    }
    int reach = fs >= 0 ? 0 : r->node[mv->to] - r->node[mv->from];
    if (fs < 0 && (reach < 0 || reach > PROFILE_MAX_REACH)) {
        r->why = "a move joins nodes more than two apart";
        return 0;
    }
    if (fs < 0 && !emits && r->role[mv->from] == ROLE_DELETE && reach != 1) {
        r->why = "the delete chain skips a node";
        return 0;
    }
    ProfileEntry *x = entry_for(r, fs >= 0 ? -1 : r->role[mv->from], fs >= 0 ? fs : -1, reach, to_role);
    if (!x) {
        r->why = "too many kinds of moves";
        return 0;
    }
    if (x->move[r->node[mv->to]] >= 0) {
        r->why = "two moves of one kind into one node's state";
        return 0;
    }
    x->move[r->node[mv->to]] = i;
    return 1;
}

/* Orders the specials so that every silent move between them goes forward
 * (Kahn's order); they are evaluated after the delete chain. */
static int order_specials(Recogniser *r, const int *moves, int n_moves)
{
    ProfileView *v = r->v;
    const IrModel *m = r->m;
    int ns = v->n_specials;
    int pending[PROFILE_MAX_SPECIALS] = {0}, done[PROFILE_MAX_SPECIALS] = {0};
    int order[PROFILE_MAX_SPECIALS], n_order = 0;
    for (int i = 0; i < n_moves; i++) {
        const IrMove *mv = &m->moves[moves[i]];
        if (mv->emission < 0)
            pending[r->special_of[mv->to]]++;
    }
    for (int progress = 1; progress;) {
        progress = 0;
        for (int s = 0; s < ns; s++) {
            if (done[s] || pending[s])
                continue;
            done[s] = progress = 1;
            order[n_order++] = s;
            for (int i = 0; i < n_moves; i++) {
                const IrMove *mv = &m->moves[moves[i]];
                if (mv->emission < 0 && r->special_of[mv->from] == s)
                    pending[r->special_of[mv->to]]--;
            }
        }
    }
    if (n_order != ns) {
        r->why = "the special states' silent moves form a cycle";
        return 0;
    }
    int *specials = ARENA_ARRAY(r->a, int, ns);
    for (int i = 0; i < ns; i++)
        specials[i] = v->specials[order[i]];
    v->specials = specials;
    for (int i = 0; i < ns; i++)
        r->special_of[specials[i]] = i;
    return 1;
}

int profile_special_index(const ProfileView *v, int s)
{
    for (int i = 0; i < v->n_specials; i++)
        if (v->specials[i] == s)
            return i;
    return -1;
}

/* Puts the moves between specials in evaluation order: emitting moves, then
 * silent moves by their destination's place. */
static void order_special_moves(Recogniser *r, const int *moves, int n_moves)
{
    ProfileView *v = r->v;
    const IrModel *m = r->m;
    v->special_moves = ARENA_ARRAY(r->a, int, n_moves ? n_moves : 1);
    for (int i = 0; i < n_moves; i++)
        if (m->moves[moves[i]].emission >= 0)
            v->special_moves[v->n_special_moves++] = moves[i];
    for (int t = 0; t < v->n_specials; t++)
        for (int i = 0; i < n_moves; i++)
            if (m->moves[moves[i]].emission < 0 && m->moves[moves[i]].to == v->specials[t])
                v->special_moves[v->n_special_moves++] = moves[i];
}

ProfileView *profile_view(Arena *a, const IrModel *m, const char **why)
{
    Recogniser r = {.a = a, .m = m, .v = ARENA_NEW(a, ProfileView)};
    r.special_of = ARENA_ARRAY(a, int, m->n_states);
    r.role = ARENA_ARRAY(a, int, m->n_states);
    r.node = ARENA_ARRAY(a, int, m->n_states);
    int ok = find_specials(&r) && number_nodes(&r);
    int *special_moves = NULL, n_special_moves = 0;
    if (ok) {
        /* at most: every (role, reach, role) triple and a kind from each special into each role */
        r.max_entries = PROFILE_ROLES * (PROFILE_MAX_REACH + 1) * PROFILE_ROLES +
                        PROFILE_MAX_SPECIALS * PROFILE_ROLES;
        r.v->entries = ARENA_ARRAY(a, ProfileEntry, r.max_entries);
        r.v->exits = ARENA_ARRAY(a, ProfileExit, PROFILE_ROLES * PROFILE_MAX_SPECIALS);
        special_moves = ARENA_ARRAY(a, int, m->n_moves ? m->n_moves : 1);
        for (int i = 0; ok && i < m->n_moves; i++)
            ok = file_move(&r, i, special_moves, &n_special_moves);
    }
    if (ok) {
        /* emitting entries first (they read the previous column) */
        ProfileEntry *sorted = ARENA_ARRAY(a, ProfileEntry, r.v->n_entries ? r.v->n_entries : 1);
        int n = 0;
        for (int pass = 1; pass >= 0; pass--)
            for (int e = 0; e < r.v->n_entries; e++)
                if (r.v->entries[e].emitting == pass)
                    sorted[n++] = r.v->entries[e];
        r.v->entries = sorted;
        int *old_special = ARENA_ARRAY(a, int, PROFILE_MAX_SPECIALS);
        memcpy(old_special, r.v->specials, sizeof(int) * (size_t)r.v->n_specials);
        ok = order_specials(&r, special_moves, n_special_moves);
        if (ok) {
            /* entries and exits named specials by their old place */
            for (int e = 0; e < r.v->n_entries; e++)
                if (r.v->entries[e].from_role < 0)
                    r.v->entries[e].from_special = r.special_of[old_special[r.v->entries[e].from_special]];
            for (int x = 0; x < r.v->n_exits; x++)
                r.v->exits[x].to_special = r.special_of[old_special[r.v->exits[x].to_special]];
            order_special_moves(&r, special_moves, n_special_moves);
        }
    }
    if (why)
        *why = ok ? NULL : r.why ? r.why : "no group of node states";
    return ok ? r.v : NULL;
}
