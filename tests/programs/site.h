/*
 * site.h: the SITE attribute the test programs put on their allocation sites, so each site
 * stays a function of its own in the binary (never inlined, cloned or merged away) and its
 * name shows in the profile's stacks. GCC's noipa also stops interprocedural changes that
 * noinline alone would allow; clang has no noipa.
 */
#ifndef HS_TEST_SITE_H
#define HS_TEST_SITE_H

#if defined(__GNUC__) && !defined(__clang__)
#define SITE __attribute__((noipa, used))
#else
#define SITE __attribute__((noinline, used))
#endif

#endif
