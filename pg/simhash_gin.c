/* simhash_gin.c - the GIN operator class simhash_ops: an exact index for
 * "fingerprint within k of a query" (fp <@ simhash_ball(q, k)), the planner
 * support that turns simhash_within(fp, q, k) into that index condition, and
 * the selectivity estimates.
 *
 * Keys. A layout splits the fingerprint's bits into B blocks of about
 * block_bits bits each; each of `layouts` layouts is a different bijection of
 * bit positions to blocks (layout 0 contiguous, the others spread by an odd
 * multiplier), so a row has layouts * B keys. A key (an int8) holds the width
 * (64/128), the layout, the block number and the block's value: keys of
 * different blocks never collide, even when block values are equal, and hot
 * block values (biased bits) stay one posting tree per (block, value).
 *
 * Why every row within k is found (pigeonhole): the query gives each block b
 * of a layout a radius r_b >= -1 with sum(r_b + 1) = k + 1, and asks for every
 * value within r_b of the query's block. A row that matched none of them is
 * at least r_b + 1 away in every block, so at least k + 1 away in all. So a row
 * within k matches a key of every layout the query uses, and consistent()
 * keeps it. (The radii are chosen by expected posting volume, choose_radii().)
 *
 * Filtering before the heap: a row has exactly one value per block, so a
 * matched key tells that block's exact distance and an unmatched block is at
 * least r_b + 1 away. consistent() sums these lower bounds per layout and drops
 * the row when one exceeds k; when every block of a layout matched, the sum is
 * the exact distance and no recheck is needed. Otherwise the heap recheck
 * computes the exact distance, so the answer always equals a sequential scan.
 *
 * Bounded query expansion: a query of more than MAX_QUERY_KEYS keys (large k)
 * becomes a full index scan with recheck, still exact.
 */
#include "postgres.h"

#include <math.h>

#include "access/gin.h"
#include "catalog/pg_am.h"
#include "commands/defrem.h"
#include "access/reloptions.h"
#include "access/stratnum.h"
#include "catalog/pg_type.h"
#include "nodes/makefuncs.h"
#include "nodes/nodeFuncs.h"
#include "nodes/supportnodes.h"
#include "optimizer/optimizer.h"
#include "parser/parse_func.h"
#include "utils/builtins.h"
#include "utils/lsyscache.h"
#include "utils/selfuncs.h"
#include "utils/syscache.h"

#include "index/kernels.h"
#include "simhash_pg.h"

#define MAX_LAYOUTS 4
#define MAX_BLOCKS 32
#define MAX_QUERY_KEYS 8192
/* Layouts beyond the first are probed too while the query stays this small. */
#define MULTI_LAYOUT_KEYS 256

typedef struct gin_opts {
	int32 vl_len_;
	int block_bits;
	int layouts;
} gin_opts;

static const unsigned layout_mult[MAX_LAYOUTS] = { 1, 17, 41, 25 };

/* The blocks of one width under the index's options. */
typedef struct layout {
	unsigned bits, n_blocks, n_layouts;
	uint8 size[MAX_BLOCKS];                 /* bits in each block */
	uint8 first[MAX_BLOCKS];                /* first position of each block */
	uint8 bit_at[MAX_LAYOUTS][128];         /* layout l: position -> bit index */
} layout;

static void layout_init(layout *lay, unsigned bits, FunctionCallInfo fcinfo)
{
	int block_bits = 16, n_layouts = 2;
	unsigned b, l, i, pos;

	if (PG_HAS_OPCLASS_OPTIONS()) {
		gin_opts *o = (gin_opts *)PG_GET_OPCLASS_OPTIONS();
		block_bits = o->block_bits;
		n_layouts = o->layouts;
	}
	lay->bits = bits;
	lay->n_blocks = (bits + (unsigned)block_bits - 1) / (unsigned)block_bits;
	if (lay->n_blocks > MAX_BLOCKS)
		lay->n_blocks = MAX_BLOCKS;
	lay->n_layouts = (unsigned)n_layouts;
	for (b = 0, pos = 0; b < lay->n_blocks; b++) {
		lay->size[b] = (uint8)(bits / lay->n_blocks + (b < bits % lay->n_blocks));
		lay->first[b] = (uint8)pos;
		pos += lay->size[b];
	}
	for (l = 0; l < lay->n_layouts; l++)
		for (i = 0; i < bits; i++)
			lay->bit_at[l][(i * layout_mult[l]) % bits] = (uint8)i;
}

static inline unsigned get_bit(const shpg_fp *fp, unsigned i)
{
	return (unsigned)(fp->w[i / 64] >> (i % 64)) & 1;
}

static uint32 block_value(const layout *lay, const shpg_fp *fp, unsigned l, unsigned b)
{
	uint32 v = 0;
	unsigned j;

	if (l == 0 && lay->first[b] / 64 == (lay->first[b] + lay->size[b] - 1) / 64)
		return (uint32)(fp->w[lay->first[b] / 64] >> (lay->first[b] % 64)) &
		       (uint32)((1ull << lay->size[b]) - 1);
	for (j = 0; j < lay->size[b]; j++)
		v |= get_bit(fp, lay->bit_at[l][lay->first[b] + j]) << j;
	return v;
}

static inline Datum make_key(unsigned bits, unsigned l, unsigned b, uint32 value)
{
	return Int64GetDatum((int64)(((uint64)(bits == 128) << 62) | ((uint64)l << 56) |
				     ((uint64)b << 48) | value));
}

PG_FUNCTION_INFO_V1(simhash_gin_options);
Datum simhash_gin_options(PG_FUNCTION_ARGS)
{
	local_relopts *relopts = (local_relopts *)PG_GETARG_POINTER(0);

	init_local_reloptions(relopts, sizeof(gin_opts));
	add_local_int_reloption(relopts, "block_bits",
				"bits per block of the fingerprint (64 bits: 4 blocks of 16 by default)",
				16, 4, 32, offsetof(gin_opts, block_bits));
	add_local_int_reloption(relopts, "layouts",
				"number of different splittings of the bits into blocks",
				2, 1, MAX_LAYOUTS, offsetof(gin_opts, layouts));
	PG_RETURN_VOID();
}

PG_FUNCTION_INFO_V1(simhash_gin_extract_value);
Datum simhash_gin_extract_value(PG_FUNCTION_ARGS)
{
	int32 *nkeys = (int32 *)PG_GETARG_POINTER(1);
	layout lay;
	shpg_fp fp;
	Datum *keys;
	unsigned l, b, n = 0;

	PG_GETARG_SIMHASH(0, &fp);
	layout_init(&lay, fp.bits, fcinfo);
	keys = palloc(sizeof(Datum) * lay.n_layouts * lay.n_blocks);
	for (l = 0; l < lay.n_layouts; l++)
		for (b = 0; b < lay.n_blocks; b++)
			keys[n++] = make_key(fp.bits, l, b, block_value(&lay, &fp, l, b));
	*nkeys = (int32)n;
	PG_RETURN_POINTER(keys);
}

/* What consistent() needs to know of each query key. */
typedef struct query_info {
	int k;
	unsigned n_blocks, n_layouts;
	int8 radius[MAX_LAYOUTS][MAX_BLOCKS]; /* -1: block not probed */
} query_info;

typedef struct key_info {
	uint8 layout, block, dist;
	const query_info *q;
} key_info;

/* C(n, i) as a double. */
static double choose(unsigned n, unsigned i)
{
	double c = 1;
	unsigned j;

	for (j = 1; j <= i; j++)
		c = c * (n - i + j) / j;
	return c;
}

/* Expected share of rows whose block (s bits, `ones` of them set in the
 * query's block) is within r of the query's, if every bit is 1 with
 * probability p: the posting volume a probe of radius r reads. */
static double ball_mass(unsigned s, unsigned ones, int r, double p)
{
	unsigned zeros = s - ones, d, i;
	double total = 0;

	for (d = 0; (int)d <= r; d++)
		for (i = 0; i <= d; i++) {
			unsigned set;

			if (i > ones || d - i > zeros)
				continue;
			set = ones - i + (d - i);
			total += choose(ones, i) * choose(zeros, d - i) * pow(p, set) * pow(1 - p, s - set);
		}
	return total;
}

/* What choose_radii's cost needs of a layout and a query. */
typedef struct block_cost {
	const layout *lay;
	unsigned ones[MAX_BLOCKS]; /* bits set in the query's block */
	double p;
} block_cost;

/* The cost of probing block b with radius r: the rows it reads, plus a cost
 * per key. */
static double block_cost_of(void *arg, unsigned b, unsigned r)
{
	const block_cost *bc = (const block_cost *)arg;
	unsigned s = bc->lay->size[b];

	return ball_mass(s, bc->ones[b], (int)r, bc->p) + sh_ix_ball(s, r) / 65536.0;
}

/* Chooses layout l's radii, sum(radius + 1) = k + 1, one step at a time to the
 * block where a wider probe reads the fewest rows (plus a cost per key): the
 * library's greedy split (lib/index/kernels.h), layouts starting apart. The
 * bias p is guessed from the query's own bits: with biased data (p = 0.72) a
 * block with many ones in the query is hot, so it gets a small radius or none,
 * and the query stays bounded; with uniform data the radii come out even. */
static void choose_radii(const layout *lay, const shpg_fp *fp, unsigned l, int k, double p,
			 int8 *radius)
{
	block_cost bc;
	unsigned rmax[MAX_BLOCKS], b, placed;
	int r[MAX_BLOCKS];

	bc.lay = lay;
	bc.p = p;
	for (b = 0; b < lay->n_blocks; b++) {
		bc.ones[b] = (unsigned)__builtin_popcount(block_value(lay, fp, l, b));
		rmax[b] = lay->size[b];
	}
	placed = sh_ix_radii_greedy(lay->n_blocks, (unsigned)k, rmax, l % lay->n_blocks, block_cost_of,
				    &bc, r);
	Assert(placed == (unsigned)k + 1);
	(void)placed;
	for (b = 0; b < lay->n_blocks; b++)
		radius[b] = (int8)r[b];
}

struct emit {
	Datum *keys;
	key_info *info;
	int n;
	const query_info *q;
	unsigned bits, l, b;
};

/* Emits every value within `left` more flips of v, flipping positions >= from. */
static void emit_ball(struct emit *e, uint32 v, unsigned size, unsigned from, unsigned dist,
		      unsigned left)
{
	unsigned j;

	e->keys[e->n] = make_key(e->bits, e->l, e->b, v);
	e->info[e->n].layout = (uint8)e->l;
	e->info[e->n].block = (uint8)e->b;
	e->info[e->n].dist = (uint8)dist;
	e->info[e->n].q = e->q;
	e->n++;
	if (!left)
		return;
	for (j = from; j < size; j++)
		emit_ball(e, v ^ (1u << j), size, j + 1, dist + 1, left - 1);
}

PG_FUNCTION_INFO_V1(simhash_gin_extract_query);
Datum simhash_gin_extract_query(PG_FUNCTION_ARGS)
{
	shpg_ball *ball = (shpg_ball *)PG_DETOAST_DATUM(PG_GETARG_DATUM(0));
	int32 *nkeys = (int32 *)PG_GETARG_POINTER(1);
	Pointer **extra = (Pointer **)PG_GETARG_POINTER(4);
	int32 *search_mode = (int32 *)PG_GETARG_POINTER(6);
	query_info *q;
	struct emit e;
	layout lay;
	shpg_fp fp;
	double n_keys[MAX_LAYOUTS], total, p;
	unsigned b, l;
	int k, i;

	shpg_ball_unpack(ball, &fp, &k);
	shpg_check_k(k);
	if (k > (int)fp.bits)
		k = (int)fp.bits; /* every fingerprint of the width is within */
	layout_init(&lay, fp.bits, fcinfo);
	q = palloc0(sizeof *q);
	q->k = k;
	q->n_blocks = lay.n_blocks;
	/* Radii with sum(radius + 1) = k + 1: a row farther than radius[b] in
	 * every block b is at least k + 1 away, so it may be skipped. */
	p = (double)(__builtin_popcountll(fp.w[0]) + __builtin_popcountll(fp.w[1])) / fp.bits;
	p = p < 0.1 ? 0.1 : p > 0.9 ? 0.9 : p;
	for (l = 0; l < lay.n_layouts; l++) {
		choose_radii(&lay, &fp, l, k, p, q->radius[l]);
		n_keys[l] = 0;
		for (b = 0; b < lay.n_blocks; b++)
			if (q->radius[l][b] >= 0)
				n_keys[l] += sh_ix_ball(lay.size[b], (unsigned)q->radius[l][b]);
	}
	if (n_keys[0] > MAX_QUERY_KEYS) {
		/* Too many probes: read every row and recheck, still exact. */
		*nkeys = 0;
		*search_mode = GIN_SEARCH_MODE_ALL;
		PG_RETURN_POINTER(NULL);
	}
	/* More layouts (their AND removes false candidates) while it stays small. */
	total = n_keys[0];
	q->n_layouts = 1;
	while (q->n_layouts < lay.n_layouts && total + n_keys[q->n_layouts] <= MULTI_LAYOUT_KEYS)
		total += n_keys[q->n_layouts++];
	e.keys = palloc(sizeof(Datum) * (size_t)total);
	e.info = palloc(sizeof(key_info) * (size_t)total);
	e.n = 0;
	e.q = q;
	e.bits = fp.bits;
	for (l = 0; l < q->n_layouts; l++)
		for (b = 0; b < lay.n_blocks; b++) {
			if (q->radius[l][b] < 0)
				continue;
			e.l = l;
			e.b = b;
			emit_ball(&e, block_value(&lay, &fp, l, b), lay.size[b], 0, 0,
				  (unsigned)q->radius[l][b]);
		}
	*extra = palloc(sizeof(Pointer) * e.n);
	for (i = 0; i < e.n; i++)
		(*extra)[i] = (Pointer)&e.info[i];
	*nkeys = e.n;
	PG_RETURN_POINTER(e.keys);
}

/* The verdict on one row from which keys (may) match: GIN_FALSE if some layout
 * proves it farther than k, GIN_TRUE if a layout fully matched proves it within
 * k, else GIN_MAYBE. */
static GinTernaryValue judge(const GinTernaryValue *check, int32 nkeys, Pointer *extra)
{
	uint8 min_d[MAX_LAYOUTS][MAX_BLOCKS];
	uint8 sure[MAX_LAYOUTS][MAX_BLOCKS];
	const query_info *q;
	int exact = 0, i;
	unsigned l, b;

	if (nkeys == 0)
		return GIN_MAYBE;
	q = ((key_info *)extra[0])->q;
	for (l = 0; l < q->n_layouts; l++)
		for (b = 0; b < q->n_blocks; b++)
			min_d[l][b] = (uint8)(q->radius[l][b] + 1);
	memset(sure, 0, sizeof sure);
	for (i = 0; i < nkeys; i++) {
		const key_info *ki = (const key_info *)extra[i];

		if (check[i] == GIN_FALSE)
			continue;
		if (ki->dist < min_d[ki->layout][ki->block]) {
			min_d[ki->layout][ki->block] = ki->dist;
			sure[ki->layout][ki->block] = check[i] == GIN_TRUE;
		}
	}
	for (l = 0; l < q->n_layouts; l++) {
		int lower = 0, all_sure = 1;

		for (b = 0; b < q->n_blocks; b++) {
			lower += min_d[l][b];
			all_sure &= sure[l][b];
		}
		if (lower > q->k)
			return GIN_FALSE;
		exact |= all_sure;
	}
	return exact ? GIN_TRUE : GIN_MAYBE;
}

PG_FUNCTION_INFO_V1(simhash_gin_consistent);
Datum simhash_gin_consistent(PG_FUNCTION_ARGS)
{
	bool *check = (bool *)PG_GETARG_POINTER(0);
	int32 nkeys = PG_GETARG_INT32(3);
	Pointer *extra = (Pointer *)PG_GETARG_POINTER(4);
	bool *recheck = (bool *)PG_GETARG_POINTER(5);
	GinTernaryValue tv[MAX_QUERY_KEYS * 1];
	GinTernaryValue v;
	int i;

	for (i = 0; i < nkeys; i++)
		tv[i] = check[i] ? GIN_TRUE : GIN_FALSE;
	v = judge(tv, nkeys, extra);
	*recheck = v != GIN_TRUE;
	PG_RETURN_BOOL(v != GIN_FALSE);
}

PG_FUNCTION_INFO_V1(simhash_gin_tri_consistent);
Datum simhash_gin_tri_consistent(PG_FUNCTION_ARGS)
{
	GinTernaryValue *check = (GinTernaryValue *)PG_GETARG_POINTER(0);
	int32 nkeys = PG_GETARG_INT32(3);
	Pointer *extra = (Pointer *)PG_GETARG_POINTER(4);
	GinTernaryValue v = judge(check, nkeys, extra);

	/* GIN_TRUE would skip the recheck only if every key was known. */
	PG_RETURN_GIN_TERNARY_VALUE(v == GIN_TRUE ? GIN_MAYBE : v);
}

/* ---------------------------------------------------------------- planner support */

/* P(distance <= k) for two independent uniform fingerprints of `bits` bits. */
static double within_probability(unsigned bits, int k)
{
	double logc = 0, p = 0;
	int i;

	for (i = 0; i <= k && i <= (int)bits; i++) {
		if (i > 0)
			logc += log((double)(bits - i + 1) / i);
		p += exp(logc - bits * M_LN2);
	}
	return p;
}

/* The selectivity of "within k of q" when q and k are these expressions. */
static Selectivity within_selectivity(Node *q, Node *k)
{
	unsigned bits = 64;
	int kv = 3; /* a typical near-duplicate radius, when k is not known */
	double p;

	if (q && IsA(q, Const) && !((Const *)q)->constisnull) {
		struct varlena *v = (struct varlena *)PG_DETOAST_DATUM(((Const *)q)->constvalue);
		bits = VARSIZE_ANY_EXHDR(v) == 16 ? 128 : 64;
	}
	if (k && IsA(k, Const) && !((Const *)k)->constisnull)
		kv = DatumGetInt32(((Const *)k)->constvalue);
	if (kv < 0)
		return 0;
	p = within_probability(bits, kv);
	CLAMP_PROBABILITY(p);
	return p;
}

static Oid type_in_namespace(const char *name, Oid nsp)
{
	return GetSysCacheOid2(TYPENAMENSP, Anum_pg_type_oid, CStringGetDatum(name),
			       ObjectIdGetDatum(nsp));
}

/* Whether a GIN index should leave this condition to a simhash_scan index on
 * the same column: when the query or k is unknown at plan time (a parameter of
 * a generic plan), gincostestimate cannot call extractQuery and assumes one key,
 * the cost of the smallest k; for k = 10 the real query has thousands of keys
 * and takes 100 times as long. simhash_scan's cost does not depend on the query,
 * so with both indexes a generic plan takes simhash_scan, and plans made for
 * known values (custom plans) pick between the two by their real costs. */
static bool gin_defers_to_scan(SupportRequestIndexCondition *req, Node *other, Node *k)
{
	IndexOptInfo *gin = req->index;
	Oid scan_am;
	ListCell *lc;

	if (gin->relam != GIN_AM_OID || req->indexcol != 0)
		return false;
	if (IsA(estimate_expression_value(req->root, other), Const) &&
	    IsA(estimate_expression_value(req->root, k), Const))
		return false;
	scan_am = get_index_am_oid("simhash_scan", true);
	if (!OidIsValid(scan_am))
		return false;
	foreach (lc, gin->rel->indexlist) {
		IndexOptInfo *ix = (IndexOptInfo *)lfirst(lc);

		if (ix->relam != scan_am || ix->ncolumns < 1 || ix->indpred != NIL)
			continue;
		if (gin->indexkeys[0] != 0 ? ix->indexkeys[0] == gin->indexkeys[0]
					   : ix->indexkeys[0] == 0 && gin->indexprs != NIL &&
						     ix->indexprs != NIL &&
						     equal(linitial(gin->indexprs), linitial(ix->indexprs)))
			return true;
	}
	return false;
}

/* simhash_within(a, b, k) as the index condition `col <@ simhash_ball(other, k)`. */
static Node *index_condition(SupportRequestIndexCondition *req)
{
	FuncExpr *call = (FuncExpr *)req->node;
	Node *col, *other, *k;
	Oid nsp, fp_type, ball_type, opno, ball_fn;
	Oid argtypes[2];
	char *nspname;
	FuncExpr *ball;

	if (!IsA(call, FuncExpr) || list_length(call->args) != 3 || req->indexarg > 1)
		return NULL;
	col = (Node *)list_nth(call->args, req->indexarg);
	other = (Node *)list_nth(call->args, 1 - req->indexarg);
	k = (Node *)list_nth(call->args, 2);
	if (!is_pseudo_constant_for_index(req->root, other, req->index) ||
	    !is_pseudo_constant_for_index(req->root, k, req->index))
		return NULL;
	if (gin_defers_to_scan(req, other, k))
		return NULL;
	nsp = get_func_namespace(req->funcid);
	fp_type = exprType(col);
	ball_type = type_in_namespace("simhash_ball", nsp);
	if (!OidIsValid(ball_type))
		return NULL;
	opno = get_opfamily_member(req->opfamily, fp_type, ball_type, 1);
	if (!OidIsValid(opno))
		return NULL;
	nspname = get_namespace_name(nsp);
	argtypes[0] = fp_type;
	argtypes[1] = INT4OID;
	ball_fn = LookupFuncName(list_make2(makeString(nspname), makeString("simhash_ball")), 2,
				 argtypes, true);
	if (!OidIsValid(ball_fn))
		return NULL;
	ball = makeFuncExpr(ball_fn, ball_type, list_make2(other, k), InvalidOid, InvalidOid,
			    COERCE_EXPLICIT_CALL);
	req->lossy = false; /* `<@` is exactly simhash_within */
	return (Node *)make_opclause(opno, BOOLOID, false, (Expr *)col, (Expr *)ball, InvalidOid,
				     InvalidOid);
}

PG_FUNCTION_INFO_V1(simhash_within_support);
Datum simhash_within_support(PG_FUNCTION_ARGS)
{
	Node *raw = (Node *)PG_GETARG_POINTER(0);

	if (IsA(raw, SupportRequestIndexCondition)) {
		SupportRequestIndexCondition *req = (SupportRequestIndexCondition *)raw;
		Node *cond = index_condition(req);

		if (cond)
			PG_RETURN_POINTER(list_make1(cond));
	} else if (IsA(raw, SupportRequestSelectivity)) {
		SupportRequestSelectivity *req = (SupportRequestSelectivity *)raw;

		if (list_length(req->args) == 3) {
			Node *q = estimate_expression_value(req->root, (Node *)lsecond(req->args));
			Node *k = estimate_expression_value(req->root, (Node *)lthird(req->args));

			if (req->is_join || !IsA(q, Const))
				q = (Node *)linitial(req->args);
			if (!IsA(q, Const))
				q = estimate_expression_value(req->root, q);
			req->selectivity = within_selectivity(q, k);
			PG_RETURN_POINTER(req);
		}
	}
	PG_RETURN_POINTER(NULL);
}

/* Restriction estimate of fp <@ ball: ball is a constant or simhash_ball(q, k). */
PG_FUNCTION_INFO_V1(simhash_ball_restrict);
Datum simhash_ball_restrict(PG_FUNCTION_ARGS)
{
	PlannerInfo *root = (PlannerInfo *)PG_GETARG_POINTER(0);
	List *args = (List *)PG_GETARG_POINTER(2);
	Node *right;

	if (list_length(args) != 2)
		PG_RETURN_FLOAT8(0.0001);
	right = estimate_expression_value(root, (Node *)lsecond(args));
	if (IsA(right, Const) && !((Const *)right)->constisnull) {
		shpg_ball *b = (shpg_ball *)PG_DETOAST_DATUM(((Const *)right)->constvalue);
		shpg_fp fp;
		int k;
		double p;

		shpg_ball_unpack(b, &fp, &k);
		p = within_probability(fp.bits, k);
		CLAMP_PROBABILITY(p);
		PG_RETURN_FLOAT8(p);
	}
	if (IsA(right, FuncExpr) && list_length(((FuncExpr *)right)->args) == 2) {
		FuncExpr *f = (FuncExpr *)right;
		PG_RETURN_FLOAT8(within_selectivity(estimate_expression_value(root, linitial(f->args)),
						    estimate_expression_value(root, lsecond(f->args))));
	}
	PG_RETURN_FLOAT8(within_selectivity(NULL, NULL));
}

PG_FUNCTION_INFO_V1(simhash_ball_joinsel);
Datum simhash_ball_joinsel(PG_FUNCTION_ARGS)
{
	PG_RETURN_FLOAT8(within_selectivity(NULL, NULL));
}
