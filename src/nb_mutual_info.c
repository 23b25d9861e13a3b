/*
 * nb_mutual_info.c — Murphy eq. 3.75–3.76 over the sparse counts (the
 * formulas: src/README.md, Formulas).  A class where the token never
 * occurs has t_jc = 0 and contributes pi_c log(1 / (1 - t_j)); those classes
 * are handled together so the cost is proportional to the token's entries.
 */
#include "nb_mutual_info.h"

#include <float.h>
#include <math.h>
#include <stdlib.h>

#include "nb_alloc.h"
#include "nb_interrupt.h"
#include "nb_options.h"
#include "nb_port.h"

/*
 * a log(a / b), with 0 log 0 = 0; b <= 0 only through rounding and then
 * a ~ 0.  As a difference of logarithms: a / b overflows when b is tiny.
 */
static double
xlogx_over(double a, double b)
{
	if (a <= 0 || b <= 0)
		return 0;
	return a * (log(a) - log(b));
}

/* Murphy 3.76 for the tokens of bag j, items [first, first + n), into rows. */
static uint64_t
bag_rows(const NbView *v, uint32_t j, uint32_t first, uint64_t *e0, NbMiRow *rows)
{
	double	   *docs = nb_alloc(sizeof(double) * v->n_classes);
	double		D = 0;
	uint32_t	n_items = nb_view_feature_items(v, j);
	uint64_t	work = 0;

	for (uint32_t c = 0; c < v->n_classes; c++)
	{
		docs[c] = nb_view_present(v, j, c);
		D += docs[c];
	}
	for (uint32_t k = first; k < first + n_items; k++)
	{
		uint32_t	n = nb_view_token_entries(v, k);
		double		dj = 0;
		double		covered = 0;	/* documents of the classes with an entry */
		double		tj;
		double		sum = 0;

		nb_interrupt_count(&work, 1 + (uint64_t) n);
		for (uint32_t i = 0; i < n; i++)
		{
			dj += nb_view_entry_docs(v, *e0 + i);
			covered += docs[nb_view_entry_class(v, *e0 + i)];
		}
		tj = fmin(dj / D, 1.0);
		for (uint32_t i = 0; i < n; i++)
		{
			double		Dc = docs[nb_view_entry_class(v, *e0 + i)];
			double		tjc = fmin(nb_view_entry_docs(v, *e0 + i) / Dc, 1.0);
			double		pic = Dc / D;

			sum += pic * (xlogx_over(tjc, tj) + xlogx_over(1 - tjc, 1 - tj));
		}
		if (D - covered > 0 && tj < 1)
			sum -= (D - covered) / D * log1p(-tj);
		rows[k - first].feature = j;
		rows[k - first].item = k;
		rows[k - first].whole_feature = false;
		/* exact value is >= 0; clamp rounding noise so ties order by name */
		rows[k - first].mi = sum > 0 ? sum : 0;
		*e0 += n;
	}
	nb_free(docs);
	return n_items;
}

/*
 * Plug-in mutual information of a table of weighted counts n[v][c] (values
 * by classes, row-major): sum n_vc/N log(n_vc N / (n_v n_c)).
 */
static double
table_mutual_info(const double *n, uint32_t values, uint32_t classes)
{
	double	   *col = nb_alloc_zero(sizeof(double) * classes);
	double		N = 0;
	double		sum = 0;
	uint64_t	work = 0;

	for (uint32_t x = 0; x < values; x++)
	{
		nb_interrupt_count(&work, classes);
		for (uint32_t c = 0; c < classes; c++)
			col[c] += n[(uint64_t) x * classes + c];
	}
	for (uint32_t c = 0; c < classes; c++)
		N += col[c];
	for (uint32_t x = 0; x < values && N > 0; x++)
	{
		double		row = 0;

		nb_interrupt_count(&work, classes);
		for (uint32_t c = 0; c < classes; c++)
			row += n[(uint64_t) x * classes + c];
		for (uint32_t c = 0; c < classes; c++)
		{
			double		nvc = n[(uint64_t) x * classes + c];

			if (nvc > 0)
				sum += nvc / N * ((log(nvc) - log(row)) + (log(N) - log(col[c])));
		}
	}
	nb_free(col);
	return sum > 0 ? sum : 0;
}

/* The value-by-class count table of categorical feature j (items [first, ...)). */
static double
categorical_mi(const NbView *v, uint32_t j, uint32_t first, uint64_t *e0)
{
	uint32_t	C = v->n_classes;
	uint32_t	K = nb_view_feature_items(v, j);
	double	   *n = nb_alloc_zero(sizeof(double) * ((uint64_t) K * C + 1));
	double		mi;
	uint64_t	work = 0;

	for (uint32_t k = 0; k < K; k++)
	{
		uint32_t	entries = nb_view_token_entries(v, first + k);

		nb_interrupt_count(&work, 1 + (uint64_t) entries);
		for (uint32_t i = 0; i < entries; i++, (*e0)++)
			n[(uint64_t) k * C + nb_view_entry_class(v, *e0)] =
				nb_view_entry_count(v, *e0);
	}
	mi = table_mutual_info(n, K, C);
	nb_free(n);
	return mi;
}

static double
boolean_mi(const NbView *v, uint32_t j)
{
	uint32_t	C = v->n_classes;
	double	   *n = nb_alloc(sizeof(double) * 2 * C);
	double		mi;

	for (uint32_t c = 0; c < C; c++)
	{
		n[c] = nb_view_a(v, j, c);
		n[C + c] = fmax(nb_view_present(v, j, c) - n[c], 0);
	}
	mi = table_mutual_info(n, 2, C);
	nb_free(n);
	return mi;
}

/*
 * Gaussian features (src/README.md, Formulas: the mixture p of the
 * model's class-conditional normals N_c, as scoring uses them):
 *
 *   I = sum_c pi_c KL(N_c || p)
 *     = sum_c pi_c E_{z ~ N(0,1)} [ g_c(z) ],  g_c(z) = log(r_c(x) / pi_c),
 *
 * x = mu_c + s_c z and r_c(x) the posterior of class c.  Each class is
 * integrated in its own standardized variable z: x itself is never formed,
 * so a class whose s_c is below the resolution of its mean still counts,
 * and each KL term is >= 0, so the sum has no cancellation between the
 * entropies.  With e_d = log(p_d(x) / p_c(x)),
 *
 *   g_c = -log(sum_d pi_d exp(e_d)) = -log1p(sum_d pi_d expm1(e_d)),
 *
 * the second form when the sum is small (nearly equal classes, where I is
 * tiny and the first form would lose it to rounding).  Adaptive Gauss-
 * Kronrod (7/15 points) over z in [-GAUSS_Z, GAUSS_Z] (beyond it the normal
 * density is below 1e-55), split where the class's own density and any much
 * narrower class change quickly.
 */
#define GAUSS_Z 16.0
#define GAUSS_REL_TOL 1e-10
#define GAUSS_MAX_SPLITS 400

/* Kronrod nodes (the odd ones are the Gauss nodes) and weights on [-1, 1]. */
static const double gk_node[8] = {
	0.991455371120812639206854697526329, 0.949107912342758524526189684047851,
	0.864864423359769072789712788640926, 0.741531185599394439863864773280788,
	0.586087235467691130294144845693013, 0.405845151377397166906606412076961,
	0.207784955007898467600689403773245, 0.0
};
static const double gk_weight[8] = {
	0.022935322010529224963732008058970, 0.063092092629978553290700663189204,
	0.104790010322250183839876322541518, 0.140653259715525918745189590510238,
	0.169004726639267902826583426598550, 0.190350578064785409913256402421014,
	0.204432940075298892414161999234649, 0.209482141084727828012999174891714
};
static const double gauss7_weight[4] = {
	0.129484966168869693270611432679082, 0.279705391489276667901467771423780,
	0.381830050505118944950369775488975, 0.417959183673469387755102040816327
};

typedef struct GaussClass
{
	double		pi;
	double		mean;
	double		var;
	double		sd;
	double		log_var;
} GaussClass;

/*
 * Class c's view of the classes that matter to it: what e_d needs but z.
 * Class d is left out when its mean is more than 9 of its deviations away
 * from class c's window: it has less than 1e-19 of its mass there, which
 * bounds what it adds to KL(N_c || p) by pi_d / pi_c * 1e-19 (its share of
 * p can only lower g_c by that much), so I by 1e-19.  With many classes
 * spread out, that keeps the cost near linear in the classes.
 */
typedef struct GaussActive
{
	uint32_t	cls;			/* the class d */
	double		pi;
	double		dmean;			/* (mu_c - mu_d) / s_d */
	double		dsd;			/* (s_c - s_d) / s_d */
	double		half_log_ratio; /* log(s_d / s_c) */
	double		e;				/* scratch */
} GaussActive;

typedef struct GaussIntegrand
{
	const GaussClass *cls;
	uint32_t	n;
	uint32_t	c;
	uint32_t	n_active;		/* the classes that matter, c among them */
	uint32_t	self;			/* c's position among them */
	double		rest;			/* the prior of the others */
	GaussActive *active;
	uint64_t	work;
} GaussIntegrand;

static void
gauss_set_class(GaussIntegrand *g, uint32_t c)
{
	const GaussClass *k = &g->cls[c];
	uint32_t	a = 0;

	g->c = c;
	g->rest = 0;
	for (uint32_t d = 0; d < g->n; d++)
	{
		const GaussClass *o = &g->cls[d];

		nb_interrupt_count(&g->work, 1);
		if (d != c && !(fabs(k->mean - o->mean) - GAUSS_Z * k->sd <= 9 * o->sd))
		{
			g->rest += o->pi;
			continue;
		}
		if (d == c)
			g->self = a;
		g->active[a].cls = d;
		g->active[a].pi = o->pi;
		g->active[a].dmean = (k->mean - o->mean) / o->sd;
		/* s_c - s_d without cancelling the square roots */
		g->active[a].dsd = (k->var - o->var) / (k->sd + o->sd) / o->sd;
		g->active[a].half_log_ratio = 0.5 * (o->log_var - k->log_var);
		a++;
	}
	g->n_active = a;
}

/*
 * phi(z) g_c(z).  Over the classes that matter, sum_d pi_d exp(e_d) is
 * 1 - rest + sum_d pi_d expm1(e_d).
 */
static double
gauss_integrand(GaussIntegrand *g, double z)
{
	double		emax = 0;
	double		small = -g->rest;
	double		sum = 0;
	double		gc;

	nb_interrupt_count(&g->work, g->n_active);
	for (uint32_t a = 0; a < g->n_active; a++)
	{
		GaussActive *d = &g->active[a];
		/* t_d - z and t_d + z, t_d = (x - mu_d) / s_d */
		double		diff = d->dmean + d->dsd * z;

		d->e = a == g->self ? 0 : -d->half_log_ratio - 0.5 * diff * (diff + 2 * z);
		if (d->e > emax)
			emax = d->e;
	}
	if (emax <= 30)
		for (uint32_t a = 0; a < g->n_active; a++)
			small += g->active[a].pi * expm1(g->active[a].e);
	if (emax <= 30 && fabs(small) <= 0.5)
		gc = -log1p(small);
	else
	{
		for (uint32_t a = 0; a < g->n_active; a++)
			sum += g->active[a].pi * exp(g->active[a].e - emax);
		gc = -(emax + log(sum));
	}
	return exp(-0.5 * z * z) / sqrt(2 * NB_PI) * gc;
}

typedef struct GaussPiece
{
	double		a;
	double		b;
	double		value;
	double		error;
	double		abs;
} GaussPiece;

/* Gauss-Kronrod 7/15 over [p->a, p->b]. */
static void
gauss_kronrod(GaussIntegrand *g, GaussPiece *p)
{
	double		center = 0.5 * (p->a + p->b);
	double		half = 0.5 * (p->b - p->a);
	double		fc = gauss_integrand(g, center);
	double		kronrod = gk_weight[7] * fc;
	double		gauss = gauss7_weight[3] * fc;
	double		abs = gk_weight[7] * fabs(fc);

	for (int i = 0; i < 7; i++)
	{
		double		f1 = gauss_integrand(g, center - half * gk_node[i]);
		double		f2 = gauss_integrand(g, center + half * gk_node[i]);

		kronrod += gk_weight[i] * (f1 + f2);
		abs += gk_weight[i] * (fabs(f1) + fabs(f2));
		if (i % 2 == 1)
			gauss += gauss7_weight[i / 2] * (f1 + f2);
	}
	p->value = kronrod * half;
	p->error = fabs(kronrod - gauss) * half;
	p->abs = abs * half;
}

static int
cmp_double(const void *a, const void *b)
{
	double		x = *(const double *) a;
	double		y = *(const double *) b;

	return (x > y) - (x < y);
}

/*
 * KL(N_c || p) for class c: the breakpoints are the class's own z = 0,
 * +-1, +-2, +-4, +-8 and, for each class at least 4 times narrower whose
 * window overlaps, its mean and mean +-2 and +-8 of its deviations.
 */
static double
gauss_class_kl(GaussIntegrand *g, uint32_t c)
{
	static const double own[] = {-8, -4, -2, -1, 0, 1, 2, 4, 8};
	static const double other[] = {-8, -2, 0, 2, 8};
	const GaussClass *k = &g->cls[c];
	uint32_t	nb = 0;
	double	   *bp;
	uint32_t	npieces = 0;
	GaussPiece *pieces;
	double		value = 0;
	double		error = 0;
	double		abs = 0;

	gauss_set_class(g, c);
	bp = nb_alloc(sizeof(double) * (2 + 9 + 5 * (uint64_t) g->n_active));
	bp[nb++] = -GAUSS_Z;
	bp[nb++] = GAUSS_Z;
	for (int i = 0; i < 9; i++)
		bp[nb++] = own[i];
	for (uint32_t a = 0; a < g->n_active; a++)
	{
		const GaussClass *o = &g->cls[g->active[a].cls];
		double		center = -(k->mean - o->mean) / k->sd;	/* mu_d in class c's z */
		double		scale = o->sd / k->sd;

		if (a == g->self || !(scale < 0.25) || !(fabs(center) < GAUSS_Z * (1 + scale)))
			continue;
		for (int i = 0; i < 5; i++)
		{
			double		z = center + other[i] * scale;

			if (z > -GAUSS_Z && z < GAUSS_Z)
				bp[nb++] = z;
		}
	}
	nb_sort(bp, nb, sizeof(double), cmp_double);
	pieces = nb_alloc(sizeof(GaussPiece) * (nb + GAUSS_MAX_SPLITS));
	for (uint32_t i = 0; i + 1 < nb; i++)
	{
		GaussPiece *p = &pieces[npieces];

		if (!(bp[i + 1] > bp[i]))
			continue;
		p->a = bp[i];
		p->b = bp[i + 1];
		gauss_kronrod(g, p);
		value += p->value;
		error += p->error;
		abs += p->abs;
		npieces++;
	}
	/* split the piece with the largest error until the sum is small enough */
	for (int split = 0; split < GAUSS_MAX_SPLITS; split++)
	{
		uint32_t	worst = 0;
		GaussPiece *w;
		GaussPiece *n;
		double		mid;

		if (error <= fmax(GAUSS_REL_TOL * fabs(value), 1e-15 * abs))
			break;
		for (uint32_t i = 1; i < npieces; i++)
			if (pieces[i].error > pieces[worst].error)
				worst = i;
		w = &pieces[worst];
		mid = 0.5 * (w->a + w->b);
		if (!(mid > w->a && mid < w->b))
			break;
		value -= w->value;
		error -= w->error;
		abs -= w->abs;
		n = &pieces[npieces++];
		n->a = mid;
		n->b = w->b;
		w->b = mid;
		gauss_kronrod(g, w);
		gauss_kronrod(g, n);
		value += w->value + n->value;
		error += w->error + n->error;
		abs += w->abs + n->abs;
	}
	nb_free(bp);
	nb_free(pieces);
	return value > 0 ? value : 0;
}

/* var_smoothing (the scorer's default) times the largest Gaussian variance. */
static double
gaussian_floor(const NbView *v)
{
	NbOptions	o;
	double		largest = 0;

	nb_options_init(&o);
	for (uint32_t j = 0; j < v->n_features; j++)
	{
		double		rows = nb_view_feature_rows(v, j);

		nb_interrupt_at(j);
		if (nb_view_feature_type(v, j) == NB_FEATURE_GAUSSIAN && rows > 0)
		{
			double		var = nb_view_feature_m2(v, j) / rows;

			if (var > largest)
				largest = var;
		}
	}
	return o.var_smoothing * largest;
}

static double
gaussian_mi(const NbView *v, uint32_t j, double floor)
{
	GaussClass *cls = nb_alloc(sizeof(GaussClass) * v->n_classes);
	GaussIntegrand g;
	uint32_t	n = 0;
	double		W = 0;
	double		mi = 0;

	for (uint32_t c = 0; c < v->n_classes; c++)
		W += nb_view_present(v, j, c);
	for (uint32_t c = 0; c < v->n_classes; c++)
	{
		double		w = nb_view_present(v, j, c);
		double		var;

		if (!(w > 0))
			continue;
		/* the scorer's variance (nb_scorer_build.c, build_gaussian) */
		var = nb_view_b(v, j, c) / w + floor;
		if (!(var > 0))
			var = 1;
		else if (!isfinite(var))
			var = DBL_MAX;
		cls[n].pi = w / W;
		cls[n].mean = nb_view_a(v, j, c);
		cls[n].var = var;
		cls[n].sd = sqrt(var);
		cls[n].log_var = log(var);
		n++;
	}
	if (n > 1)
	{
		g.cls = cls;
		g.n = n;
		g.active = nb_alloc(sizeof(GaussActive) * n);
		g.work = 0;
		for (uint32_t c = 0; c < n; c++)
			mi += cls[c].pi * gauss_class_kl(&g, c);
		nb_free(g.active);
	}
	nb_free(cls);
	return mi;
}

static int
cmp_rows(const void *a, const void *b)
{
	const NbMiRow *x = a;
	const NbMiRow *y = b;

	if (x->mi != y->mi)
		return x->mi > y->mi ? -1 : 1;
	if (x->feature != y->feature)
		return x->feature < y->feature ? -1 : 1;
	return (x->item > y->item) - (x->item < y->item);
}

uint64_t
nb_mutual_info(const NbView *v, NbMiRow *rows)
{
	uint64_t	n = 0;
	uint64_t	e0 = 0;
	NbFeatureIter it = nb_view_features(v);
	NbFeature	f;
	double		floor = gaussian_floor(v);

	while (nb_feature_next(&it, &f))
	{
		NbFeatureType type = f.type;
		uint32_t	j = f.index;
		uint32_t	first = f.first_item;
		NbMiRow    *r = &rows[n];

		if (type == NB_FEATURE_BAG)
			n += bag_rows(v, j, first, &e0, r);
		else
		{
			r->feature = j;
			r->item = first;
			r->whole_feature = true;
			if (type == NB_FEATURE_CATEGORICAL)
				r->mi = categorical_mi(v, j, first, &e0);
			else if (type == NB_FEATURE_BOOLEAN)
				r->mi = boolean_mi(v, j);
			else
				r->mi = gaussian_mi(v, j, floor);
			n++;
		}
	}
	nb_sort(rows, n, sizeof(NbMiRow), cmp_rows);
	return n;
}
