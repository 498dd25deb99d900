/* SPDX-License-Identifier: GPL-2.0 */
/*
 * dtest - drmacct's small test harness.
 *
 * Output is TAP 13 in the form kselftest runners read; every test runs in a
 * forked child with a timeout; the program exits 0 when nothing failed, 1 when
 * a test failed, 4 when every test was skipped (kselftest's KSFT_SKIP).
 *
 * EXPECT_* checks record a failure and continue; ASSERT_* checks end the
 * test, also when called from a helper function (longjmp back to the runner,
 * which then still runs the fixture's teardown).
 */
#ifndef DTEST_H
#define DTEST_H

#include <errno.h>
#include <setjmp.h>
#include <stdbool.h>
#include <stdint.h>
#include <string.h>

struct dt_case {
	const char *name;
	const char *fixture;		/* NULL for plain tests */
	void (*run)(void *self);	/* self is the fixture struct or NULL */
	void (*setup)(void *self);
	void (*teardown)(void *self);
	size_t self_size;
	unsigned int timeout_s;
	struct dt_case *next;
};

void dt_register(struct dt_case *c);
int dt_main(int argc, char **argv);

/* Internal: state of the running test (child side). */
void dt__fail_here(const char *file, int line, bool fatal, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));
void dt__skip(const char *file, int line, const char *fmt, ...)
	__attribute__((format(printf, 3, 4))) __attribute__((noreturn));
void dt__end_now(void) __attribute__((noreturn));
void dt_info(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/*
 * dt_label() - a note for the test's TAP line, printed after its name in
 * brackets ("ok 3 name [6.17 set, tp_btf]"): what the test ran where that
 * depends on the machine, so the result line itself says it. Each distinct
 * note is kept once, in the order given, up to DT_LABEL_MAX bytes in all;
 * a note set before a failure or a skip stays. Callable from the test and
 * from processes it forks.
 */
#define DT_LABEL_MAX 200
void dt_label(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/*
 * dt_timeout_scale() - DT_TIMEOUT_SCALE (1 when unset or bad): how much
 * slower than usual this run's machine is. Every timeout is multiplied by
 * it; a test whose workload must outlast some sampling can scale it too.
 */
double dt_timeout_scale(void);

#define DT__CAT2(a, b) a##b
#define DT__CAT(a, b) DT__CAT2(a, b)

#define DT__REGISTER(id, fx, nm, runfn, setupfn, teardownfn, sz, tmo)	\
	static struct dt_case DT__CAT(dt_case_, id) = {			\
		.name = nm, .fixture = fx, .run = runfn,		\
		.setup = setupfn, .teardown = teardownfn,		\
		.self_size = sz, .timeout_s = tmo,			\
	};								\
	__attribute__((constructor)) static void DT__CAT(dt_reg_, id)(void) \
	{								\
		dt_register(&DT__CAT(dt_case_, id));			\
	}

#define DT_TEST_TIMEOUT(name, secs)					\
	static void dt_body_##name(void);				\
	static void dt_wrap_##name(void *self)				\
	{								\
		(void)self;						\
		dt_body_##name();					\
	}								\
	DT__REGISTER(name, NULL, #name, dt_wrap_##name, NULL, NULL, 0, secs) \
	static void dt_body_##name(void)

#define DT_TEST(name) DT_TEST_TIMEOUT(name, 30)

#define DT_FIXTURE(fx)							\
	struct dt_fx_##fx;						\
	static void dt_setup_##fx(struct dt_fx_##fx *self);		\
	static void dt_teardown_##fx(struct dt_fx_##fx *self);		\
	struct dt_fx_##fx

#define DT_SETUP(fx)							\
	static void dt_setup_##fx(struct dt_fx_##fx *self __attribute__((unused)))
#define DT_TEARDOWN(fx)							\
	static void dt_teardown_##fx(struct dt_fx_##fx *self __attribute__((unused)))

#define DT_TEST_F_TIMEOUT(fx, name, secs)				\
	static void dt_body_##fx##_##name(struct dt_fx_##fx *self);	\
	static void dt_run_##fx##_##name(void *self)			\
	{								\
		dt_body_##fx##_##name(self);				\
	}								\
	static void dt_su_##fx##_##name(void *self)			\
	{								\
		dt_setup_##fx(self);					\
	}								\
	static void dt_td_##fx##_##name(void *self)			\
	{								\
		dt_teardown_##fx(self);					\
	}								\
	DT__REGISTER(fx##_##name, #fx, #name, dt_run_##fx##_##name,	\
		     dt_su_##fx##_##name, dt_td_##fx##_##name,		\
		     sizeof(struct dt_fx_##fx), secs)			\
	static void dt_body_##fx##_##name(struct dt_fx_##fx *self __attribute__((unused)))

#define DT_TEST_F(fx, name) DT_TEST_F_TIMEOUT(fx, name, 30)

#define DT_MAIN								\
	int main(int argc, char **argv)					\
	{								\
		return dt_main(argc, argv);				\
	}

/* True when an expression of this type is a signed integer. */
#define DT__SIGNED(x)							\
	_Generic((x), signed char: 1, short: 1, int: 1, long: 1,	\
		 long long: 1, char: (char)-1 < 1, default: 0)

/*
 * Values are compared by value whatever their types: integers (and
 * pointers) become a sign and a magnitude, so DT_EXPECT_EQ(size, 12) needs
 * no cast and -1 never equals UINT64_MAX; when either side is floating
 * point both are compared as long double (a NaN satisfies only NE).
 */
struct dt_val {
	bool is_float;
	bool neg;
	unsigned long long mag;
	long double f;
};

static inline struct dt_val dt__val_s(long long v)
{
	return v < 0 ? (struct dt_val){ false, true, -(unsigned long long)v, 0 }
		     : (struct dt_val){ false, false, (unsigned long long)v, 0 };
}

static inline struct dt_val dt__val_u(unsigned long long v)
{
	return (struct dt_val){ false, false, v, 0 };
}

static inline struct dt_val dt__val_f(long double v)
{
	return (struct dt_val){ true, false, 0, v };
}

#define DT__IS_FLOAT(x)							\
	_Generic((x), float: 1, double: 1, long double: 1, default: 0)
#define DT__AS_FLOAT(x)							\
	((long double)_Generic((x), float: (x), double: (x),		\
			       long double: (x), default: 0))
#define DT__AS_INT(x)							\
	_Generic((x), float: 0, double: 0, long double: 0, default: (x))

#define DT__VAL(x)							\
	(DT__IS_FLOAT(x) ? dt__val_f(DT__AS_FLOAT(x))			\
	 : DT__SIGNED(x) ? dt__val_s((long long)DT__AS_INT(x))		\
			 : dt__val_u((unsigned long long)DT__AS_INT(x)))

enum dt_op { DT_OP_EQ, DT_OP_NE, DT_OP_LT, DT_OP_LE, DT_OP_GT, DT_OP_GE };

/* Does "a op b" hold? */
bool dt__holds(struct dt_val a, struct dt_val b, enum dt_op op);
void dt__cmp_fail(const char *file, int line, bool fatal, const char *expr,
		  struct dt_val a, struct dt_val b);

#define DT__CMP(a, b, op, opname, fatal)				\
	do {								\
		struct dt_val dt_a_ = DT__VAL(a), dt_b_ = DT__VAL(b);	\
		if (!dt__holds(dt_a_, dt_b_, op))			\
			dt__cmp_fail(__FILE__, __LINE__, fatal,		\
				     #a " " opname " " #b, dt_a_, dt_b_); \
	} while (0)

#define DT_EXPECT_EQ(a, b) DT__CMP(a, b, DT_OP_EQ, "==", false)
#define DT_EXPECT_NE(a, b) DT__CMP(a, b, DT_OP_NE, "!=", false)
#define DT_EXPECT_LT(a, b) DT__CMP(a, b, DT_OP_LT, "<", false)
#define DT_EXPECT_LE(a, b) DT__CMP(a, b, DT_OP_LE, "<=", false)
#define DT_EXPECT_GT(a, b) DT__CMP(a, b, DT_OP_GT, ">", false)
#define DT_EXPECT_GE(a, b) DT__CMP(a, b, DT_OP_GE, ">=", false)
#define DT_ASSERT_EQ(a, b) DT__CMP(a, b, DT_OP_EQ, "==", true)
#define DT_ASSERT_NE(a, b) DT__CMP(a, b, DT_OP_NE, "!=", true)
#define DT_ASSERT_LT(a, b) DT__CMP(a, b, DT_OP_LT, "<", true)
#define DT_ASSERT_LE(a, b) DT__CMP(a, b, DT_OP_LE, "<=", true)
#define DT_ASSERT_GT(a, b) DT__CMP(a, b, DT_OP_GT, ">", true)
#define DT_ASSERT_GE(a, b) DT__CMP(a, b, DT_OP_GE, ">=", true)

#define DT__BOOL(c, want, fatal)					\
	do {								\
		if ((bool)(c) != (want))				\
			dt__fail_here(__FILE__, __LINE__, fatal,	\
				      "expected %s to be %s", #c,	\
				      (want) ? "true" : "false");	\
	} while (0)

#define DT_EXPECT_TRUE(c) DT__BOOL(c, true, false)
#define DT_EXPECT_FALSE(c) DT__BOOL(c, false, false)
#define DT_ASSERT_TRUE(c) DT__BOOL(c, true, true)
#define DT_ASSERT_FALSE(c) DT__BOOL(c, false, true)

#define DT__STR(a, b, want_eq, fatal)					\
	do {								\
		const char *dt_sa_ = (a), *dt_sb_ = (b);		\
		bool dt_eq_ = dt_sa_ && dt_sb_ ? !strcmp(dt_sa_, dt_sb_) \
					       : dt_sa_ == dt_sb_;	\
		if (dt_eq_ != (want_eq))				\
			dt__fail_here(__FILE__, __LINE__, fatal,	\
				      "%s %s %s: \"%s\" vs \"%s\"", #a,	\
				      (want_eq) ? "==" : "!=", #b,	\
				      dt_sa_ ? dt_sa_ : "(null)",	\
				      dt_sb_ ? dt_sb_ : "(null)");	\
	} while (0)

#define DT_EXPECT_STREQ(a, b) DT__STR(a, b, true, false)
#define DT_EXPECT_STRNE(a, b) DT__STR(a, b, false, false)
#define DT_ASSERT_STREQ(a, b) DT__STR(a, b, true, true)
#define DT_ASSERT_STRNE(a, b) DT__STR(a, b, false, true)

#define DT__NEAR(v, r, t, fatal)					\
	do {								\
		double dt_v_ = (double)(v), dt_r_ = (double)(r);	\
		double dt_t_ = (double)(t);				\
		double dt_d_ = dt_v_ > dt_r_ ? dt_v_ - dt_r_ : dt_r_ - dt_v_; \
		if (!(dt_d_ <= dt_t_))					\
			dt__fail_here(__FILE__, __LINE__, fatal,	\
				      "|%s - %s| <= %s: |%.17g - %.17g| = %.6g > %.6g", \
				      #v, #r, #t, dt_v_, dt_r_, dt_d_, dt_t_); \
	} while (0)

#define DT_EXPECT_NEAR(v, r, t) DT__NEAR(v, r, t, false)
#define DT_ASSERT_NEAR(v, r, t) DT__NEAR(v, r, t, true)

#define DT__ERRNO(expr, err, fatal)					\
	do {								\
		errno = 0;						\
		long long dt_rv_ = (long long)(expr);			\
		int dt_en_ = errno;					\
		if (dt_rv_ != -1 || dt_en_ != (err))			\
			dt__fail_here(__FILE__, __LINE__, fatal,	\
				      "%s: expected -1/%s, got %lld/%s", \
				      #expr, strerrorname_dt(err),	\
				      dt_rv_, strerrorname_dt(dt_en_));	\
	} while (0)

const char *strerrorname_dt(int err);

#define DT_EXPECT_ERRNO(expr, err) DT__ERRNO(expr, err, false)
#define DT_ASSERT_ERRNO(expr, err) DT__ERRNO(expr, err, true)

#define DT_SKIP(...) dt__skip(__FILE__, __LINE__, __VA_ARGS__)
#define DT_FAIL(...)							\
	do {								\
		dt__fail_here(__FILE__, __LINE__, true, __VA_ARGS__);	\
		dt__end_now();						\
	} while (0)

#endif /* DTEST_H */
