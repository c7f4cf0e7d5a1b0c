#!/bin/sh
# Mutation check (`make mutate`, not part of `make test`): does the suite catch the bugs it
# claims to? Each row below is a small realistic bug: a perl substitution on one source
# file, and the ctest regex of the tests that must fail with it. The script copies the
# tracked tree (uncommitted edits included) into a scratch directory, builds it once,
# runs every row's tests on the unmutated tree (a row whose tests already fail there is
# "broken", not "caught"), then for each row applies the mutation (failing loudly if it no
# longer applies: the code moved, update the row), rebuilds incrementally, runs the row's
# tests, prints "caught" or "survived", and restores the file. Last line: N caught, M
# survived. Exit status 0 only when every row is caught.
# usage: sh scripts/mutate.sh [SOURCE_DIR]   (HS_MUTATE_DIR: scratch directory to reuse,
#        HS_MUTATE_ONLY: a regex of row names to run, JOBS: build jobs, default 2)
set -eu
SRC=$(cd "${1:-$(dirname "$0")/..}" && pwd)
JOBS=${JOBS:-2}
ONLY=${HS_MUTATE_ONLY:-.}

# name | file | perl -0 substitution | tests that must fail (ctest -R)
ROWS='unwind-drops-outermost|src/preload/unwind/unwind.c|s/\n    n -= skip;\n/\n    n -= skip + (n > skip);\n/|unit/test_unwind_oracle|integration/stack_oracle
interval-x0.1|src/common/reports/noise.c|s/\n    l \*= var \/ e;\n/\n    l = n + (l - n) * 0.1;\n    h = n + (h - n) * 0.1;\n    l *= var \/ e;\n/|unit/test_report_stats|integration/ci_coverage|integration/ci_few_samples
diff-noise-alpha-0.005|src/common/reports/noise.h|s/#define HS_NOISE_ALPHA 0\.025/#define HS_NOISE_ALPHA 0.005/|unit/test_report_stats|integration/diff_power|integration/diff_noise
mapping-limit-offset-swapped|src/common/model/pprof.c|s/put_uint\(e, 3, m->memory_limit\);\n(\s*)hs_pb_put_uint\(e, 4, m->file_offset\);/put_uint(e, 3, m->file_offset);\n$1hs_pb_put_uint(e, 4, m->memory_limit);/; s/m->memory_limit = v\[2\];\n(\s*)m->file_offset = v\[3\];/m->memory_limit = v[3];\n$1m->file_offset = v[2];/|integration/mappings
weight-x1.1|src/preload/record/sampler.c|s/return 1\.0;\n(\s*)\/\* -expm1(.*?)\n(\s*)return 1\.0 \/ -expm1/return 1.1;\n$1\/* -expm1$2\n$3return 1.1 \/ -expm1/s|integration/sites_exact|integration/sites_sampled
weight-x1.05-rate-above-1|src/preload/record/sampler.c|s/return 1\.0 \/ -expm1/return 1.05 \/ -expm1/|integration/ci_coverage|integration/sites_sampled
objects-types-swapped|src/preload/output/dump.c|s/\{\{"alloc_objects", "count"\},(\s*)\{"alloc_space", "bytes"\},(\s*)\{"inuse_objects", "count"\}/{{"inuse_objects", "count"},$1\{"alloc_space", "bytes"},$2\{"alloc_objects", "count"}/|integration/sites_exact
diff-ignores-base|src/cli/verbs/diff.c|s/int signs\[2\] = \{1, -1\};/int signs[2] = {1, 0};/|integration/diff_noise|integration/diff_power
leak-report-skips-largest|src/common/reports/leakreport.c|s/for \(size_t i = 0; rc == 0 && i < n; i\+\+\)/for (size_t i = 1; rc == 0 && i < n; i++)/|integration/leaks
snap-child-sigchld|src/preload/leaks/snapshot.c|s/SYS_clone, 0ul, NULL/SYS_clone, (unsigned long)SIGCHLD, NULL/|integration/leak_snapshot
snap-dontfork-unchecked|src/preload/leaks/snapshot.c|s/snap_flag\(line \+ 8, "dc"\)/snap_flag(line + 8, "zz")/|integration/leak_snapshot
snap-wipe-unchecked|src/preload/leaks/snapshot.c|s/snap_flag\(line \+ 8, "wf"\)/snap_flag(line + 8, "zz")/|integration/leak_snapshot
snap-own-wipe-counted|src/preload/leaks/snapshot.c|s/return p && \(p == \(uintptr_t\)hs_sandbox_token/return !p && (p == (uintptr_t)hs_sandbox_token/|integration/leak_snapshot
file-read-opens-fifo|src/common/base/fileio.c|s/if \(!S_ISREG\(st\.st_mode\)\) \/\* a FIFO/if (0) \/* a FIFO/|unit/test_fileio
hugeheap-not-advised|src/common/base/hugeheap.c|s/MADV_HUGEPAGE\) == 0/MADV_NORMAL) == 0/|unit/test_hugeheap
hugeheap-trimmed|src/common/base/hugeheap.c|s/mallopt\(M_TRIM_THRESHOLD, INT_MAX\)/mallopt(M_TRIM_THRESHOLD, 128 * 1024)/|unit/test_hugeheap
hugeheap-no-pad|src/common/base/hugeheap.c|s/mallopt\(M_TOP_PAD, \(int\)pad\)/mallopt(M_TOP_PAD, HEAP_TOP_PAD_DEFAULT)/|unit/test_hugeheap
hugeheap-gap-used|src/common/base/hugeheap.c|s/    heap_skip_to\(from, after\);\n//|unit/test_hugeheap
zdebug-unnamed-announced|src/common/symbolize/symbolize_zdebug.c|s/if \(same\) \/\* only the addresses/if (0) \/* only the addresses/|unit/test_symbolize
zwant-function-reach-4k|src/common/symbolize/symbolize_zwant.c|s/want\[i\] - fn\[k\]\.lo < fn\[k\]\.size;/want[i] - fn[k].lo <= fn[k].size + 4096;/|unit/test_symbolize
attach-ended-thread-eperm|src/cli/inject/inject_thread.c|s/    if \(rc == -EPERM && thr_ended\(s->pid, tid\)\)\n        return 0;\n//|integration/attach_moved
iothread-start-batch-kept|src/preload/runtime/iothread.c|s/    io\.start_batch = io\.start_clear = false; \/\* the program.s code may run from here \*\/\n//|integration/sandbox_firefox
finish-fail-unsaid|src/cli/inject/attach_thread.c|s/return job->op == HS_BOX_FINISH \? "; the process/return job->op == -1 ? "; the process/|integration/attach_moved
attach-other-library-loaded|src/cli/inject/attach.c|s/rc = hs_attach_files_loaded\(pid, lib, shared\);/rc = 0;/|integration/attach_repeat
finish-skips-removed-library|src/cli/inject/ptrace_inject.c|s/return inject_map_scan\(pid, prefix, nth, true, m\);/return inject_map_scan(pid, prefix, nth, false, m);/|integration/attach_repeat
snap-child-reads-parent|src/preload/leaks/reachscan.c|s/c->pid = \(pid_t\)syscall\(SYS_getpid\);//|integration/leak_snapshot
snap-refused-no-scan|src/preload/leaks/reachscan.c|s/int rc = pid > 0 \? 0 : rs_scan\(c\);/int rc = pid > 0 ? 0 : s ? 0 : rs_scan(c);/|integration/leak_snapshot
snap-cgroup-leaf-only|src/preload/leaks/snapshot.c|s/\*slash = '\\0'; \/\* the parent/break; \/* the parent/|unit/test_snapcgroup
http-token-any|src/preload/serve/http_routes.c|s/    return diff == 0;\n/    return diff == 0 ? true : m > 0;\n/|integration/http_control
metrics-counter-no-total|src/preload/serve/http_metrics.c|s/"heapsift_frees_total", "counter"/"heapsift_frees", "counter"/|integration/http_metrics
metrics-sites-by-cum|src/preload/serve/http_metrics.c|s/hs_report_select\(&r, false,/hs_report_select(&r, true,/|integration/http_metrics
metrics-site-interval-none|src/preload/serve/http_metrics.c|s/hs_report_interval\(v, var,/hs_report_interval(v, 0,/|integration/http_metrics
metrics-alert-inverted|docs/prometheus/rules.yml|s/\n            > 1048576/\n            < 1048576/|integration/prometheus
flame-click-zooms-root|src/common/reports/report_flame.c|s/\{zoom\(g\);e\.stopPropagation/{zoom(frames[0]);e.stopPropagation/|integration/flamegraph_browser
fd-route-ignored|src/common/base/fdio.c|s/if \(route == NULL\)\n(\s*)return syscall/if (1)\n$1return syscall/|stress/descriptors
thread-stack-from-glibc-cache|src/preload/runtime/threads.c|s/\n    pthread_attr_setstack\(&attr, t->stack, t->size\);\n/\n/|stress/fork_stdio
term-signal-no-dump|src/preload/triggers/termsig.c|s/\n        hs_exit_dumps\(__atomic_load_n\(&term_requested, __ATOMIC_ACQUIRE\) > 0\);\n/\n        (void)0;\n/|integration/term_signals
hook-free-clobbers-rax|src/preload/reach/hooks_api.c|s/(API_FAST\(i, \d, free, )HS_KEEPALL_THUNK/$1HS_KEEPREGS_THUNK/g|integration/reach_hooks
hook-stack-unaligned|src/preload/reach/hooks.h|s/\\nand \$-16, %rsp//|integration/reach_hooks
near-free-clobbers-rcx|src/preload/reach/hooks_near.c|s/"\\x50\\x51\\x48\\xa1", 4\)/"\\x50\\x48\\xa1", 3)/; s/"\\x59\\x58", 2\)/"\\x58", 1)/|integration/reach_hooks
near-malloc-skips-countdown|src/preload/reach/hooks_near.c|s/\n    near_put\(&c, "\\x64\\x48\\x29\\x3c\\x25", 5\);[^\n]*\n    near_put32\(&c, countdown\);//|integration/reach_hooks
rust-default-allocator-hooked|src/preload/reach/reach.c|s/return c\[0\] == 0xe9 && /return 0 \&\& c[0] == 0xe9 \&\& /|integration/reach_hooks
reach-later-never-looks|src/preload/record/recorder.c|s/\n    recorder_recheck\(\);[^\n]*\n/\n/|integration/reach_hooks
new-judge-always-own|src/preload/reach/hooks.c|s/bool own = t->allocs == before;/bool own = (t->allocs == before) + 1;/|integration/reach_hooks
delete-judge-always-own|src/preload/reach/hooks.c|s/bool own = t->frees == before;/bool own = (t->frees == before) + 1;/|integration/reach_hooks
udw-no-fde-ends-walk|src/preload/unwind/unwind_dwarf.c|s/rule = \(hs_cfi_rule_t\)\{16, -16, -8, HS_CFI_CFA_RBP . HS_CFI_RBP_AT_CFA\};/return (uint64_t)HS_CFI_END << 56;/|integration/unwind_nofde
udw-thread-getattr|src/preload/unwind/unwind_dwarf.c|s/ \S\S udw_thread_bounds\(fp\)\)/)/|integration/unwind_getattr
sw-move-ignored|src/preload/runtime/stopworld.c|s/if \(to\)\n(\s*)\(\(ucontext_t \*\)ucv\)/if (0)\n$1((ucontext_t *)ucv)/|unit/test_patch_live
reach-plt-slot-is-definition|src/preload/reach/reach.c|s/return sym && sym->st_shndx == SHN_UNDEF \? NULL : p;/return p;/|integration/reach_detect
attach-sigsys-reaches-program|src/cli/inject/inject_thread.c|s/if \(\(\*st >> 16\) == 0 && sig == SIGSYS &&/if (0 \&\&/|integration/attach_seccomp
attach-died-status-not-awaited|src/cli/inject/attach_thread.c|s/ended >= 0 \? end_st : at_child_end\(s\), during/end_st, during/|integration/attach_dies
attach-entry-not-rewound|src/cli/inject/inject_thread.c|s/n\.rip -= 2; \/\* the syscall instruction \*\//\/* mutated *\//|integration/attach_busy/reader
detach-keeps-trigger-thread|src/preload/attached/attach.c|s/\n    hs_triggers_pause\(\);[^\n]*\n/\n/|integration/attach_threads
got-lazy-slot-skipped|src/preload/reach/gotslot.c|s/bool lazy =\n(\s*)type == R_X86_64_JUMP_SLOT/bool lazy = 0 \&\&\n$1type == R_X86_64_JUMP_SLOT/|unit/test_gotslot
got-detach-keeps-slots|src/preload/reach/gotslot.c|s/return got_put_all\(false\);/return 0;/|unit/test_gotslot
got-thread-first-sample-no-recheck|src/preload/record/recorder.c|s/if \(sampled\) \//if (0) \//|integration/attach_got
wrapper-frame-kept|src/preload/unwind/unwind.c|s/\n    while \(i < n && hs_unwind_in_wrapper\(pcs\[i\]\)\)\n        i\+\+;\n/\n/|integration/attach_cxx
got-lazy-slot-any-definition|src/preload/reach/gotslot.c|s/dlsym\(RTLD_DEFAULT, name\) == def\}/1}/|unit/test_gotslot
history-key-without-show|src/cli/web/web_history.c|s/o->show,\s+o->tagfocus/o->tagfocus/|integration/web_history
guarded-free-asks-table|src/preload/record/slowpath.c|s/return hs_tls\.guard != 0;/return 0;/|unit/test_slowpath
nodump-told-after-ptrace|src/cli/inject/attach_check.c|s/if \(!cap && at_not_dumpable\(pid\)\) \/\* else/if (0) \/* else/|integration/attach_nodump
attach-out-dir-unchecked|src/preload/attached/attach.c|s/\n        attach_check_out\(msg, msglen\);\n/\n/|integration/attach_nodump
attach-deps-not-copied|src/cli/inject/attach_files.c|s/if \(!loaded &&/if (0 \&\& !loaded \&\&/|integration/attach_namespace
stderr-pin-dropped|src/preload/runtime/log.c|s/if \(copy && hs_tls\.private_fds == HS_FDS_OWN\)/if (0)/|unit/test_stderr_pin
closed-upload-ids-restart|src/cli/web/web_upload.c|s/uint64_t next_id = closed < s->ntargets \? t->next_id : 1;/uint64_t next_id = 1;/|integration/web_tour
sw-release-skips-unmask|src/preload/runtime/stopworld.c|s/\n    sw_wait_unmasked\(w\);\n/\n/|unit/test_stopworld_again
drop-frames-not-written|src/preload/output/dump.c|s/p->drop_frames = hs_profile_str\(p, hs_dropframes_rule\)/p->drop_frames = hs_profile_str(p, "")/|integration/leaf_cxx|integration/leaf_rust
report-ignores-drop-frames|src/common/reports/report.c|s/if \(!o->no_drop_frames && /if (0 \&\& /|integration/leaf_cxx|integration/leaf_rust|integration/leaf_prune
prune-keeps-matching-frame|src/common/model/dropframes.c|s/return c >= p->locations\[li\]\.nlines \? i \+ 1 : i;/return i;/|unit/test_dropframes|integration/leaf_prune
prune-before-first-user-frame|src/common/model/dropframes.c|s/if \(user\) \/\*/if (1) \/*/|unit/test_dropframes|integration/leaf_prune
term-dump-reads-allocator-stats|src/preload/triggers/termsig.c|s/hs_exit_dumps\(__atomic_load_n\(&term_requested, __ATOMIC_ACQUIRE\) > 0\);/hs_exit_dumps(false);/|integration/term_locked
detach-keeps-term-handlers|src/preload/attached/attach.c|s/\n    hs_termsig_uninstall\(\);[^\n]*\n/\n/|integration/attach_term
jemalloc-truncated-per-stack|src/common/reports/report.c|s/r->fractional \&\& i < r->nnodes/0 \&\& i < r->nnodes/; s/if \(r->fractional\) \{/if (0) {/|unit/test_jeprof_sums|integration/jeprof_figures
jemalloc-not-apportioned|src/common/readers/read_legacy.c|s/rc = lg_apportion\(ps\.p\);/rc = 0;/|unit/test_jeprof_sums|integration/jeprof_figures
jemalloc-pprof-frames|src/common/readers/read_legacy.c|s/ps->jemalloc \? hs_legacy_jeprof_drop_rx : hs_legacy_alloc_drop_rx/hs_legacy_alloc_drop_rx/|integration/jeprof_figures
reach-line-always-on-stderr|src/preload/reach/reach.c|s/return hs_opt\.verbose && !run && /return 1 + 0 * run * /|integration/reach_true
reach-via-never-judged|src/preload/reach/reach_via.c|s/return via_visit\(&v, fn, size, 0\);/return 0;/|integration/reach_true
reach-uncalled-said-bypass|src/preload/reach/reach.c|s/if \(!reach_in_exe\(addr\) && !hs_reach_called\(name, reach_self\)\)/if (0)/|integration/reach_true
life-pair-single-read|src/preload/record/lifetimes.c|s/i < 8 && best > LIFE_PAIR_TIGHT/i < 1/|unit/test_lifetimes
spool-owner-by-pid-only|src/preload/record/spool.c|s/        if \(t != HS_SPOOL_TOKEN_MINE\)\n            return false;/        (void)t;/|integration/sandbox_spool
spare-never-taken|src/preload/record/spool.c|s/return spool_mine\(\) \S\S hs_spool_take_spare\(HS_SPOOL_FORKED_CLONE\);/return spool_mine();/|integration/sandbox_spool
spool-end-by-token-only|src/preload/record/spool.c|s/return spool_mine\(\) && hs_sp\.owner == getpid\(\);/return spool_mine();/|integration/sandbox_rescue
rescue-foreign-copy-unlinked|src/cli/run/run_rescue.c|s/ && !unknown &&\n/ &&\n/|integration/sandbox_rescue
later-look-asks-loader-stopped|src/preload/reach/reach.c|s/    r->planned = true;/    r->planned = false;/|integration/reach_hooks
safe-search-restops-unmoved|src/cli/inject/inject_thread.c|s/        if \(!hs_moved_since\(q->mv, tids\[i\]\)\) \{/        if (false \&\& !hs_moved_since(q->mv, tids[i])) {/|integration/attach_moved
safe-no-run-ahead|src/cli/inject/inject_thread.c|s/        safe = thr_safe_ahead\(s, tid, &r, &entry, &t0\);/        safe = 0;/|integration/attach_busy/spin
safe-search-cpu-time-only|src/cli/inject/inject_moved.c|s/return call != 0 && call != e->call;/return call == 0 \&\& call != 0;/|integration/attach_moved
later-api-via-never-judged|src/preload/reach/reach.c|s/\n            if \(reach_api_via\(r, i, name\)\)\n                continue;\n/\n/|integration/reach_hooks
live-seconds-one-profile|src/cli/live/live.c|s/size_t n = L->seconds > 0 \? steps \+ 1 : 1;/size_t n = 1;/|integration/diagnose_live
live-endpoint-env-only|src/cli/live/live_pid.c|s/return pid_probe\(pid, base, baselen\);/return -1;/|integration/diagnose_live
live-detach-wrote-on-stdout|src/cli/live/live_pid.c|s/dup2\(STDERR_FILENO, STDOUT_FILENO\);/(void)0;/|integration/diagnose_attach
http-port0-said-with-portfile|src/preload/serve/http.c|s/ && !http\.portfile\[0\]\)\)/))/|integration/diagnose_attach
untouched-pages-read|src/preload/leaks/reachscan.c|s/c->pm_fd = \(int\)syscall\(SYS_openat[^;]*;/c->pm_fd = -1;/|integration/leak_untouched
shared-root-pages-skipped|src/preload/leaks/reachscan.c|s/c->all_pages = x\.perms\[3\] == .s.;/c->all_pages = false;/|integration/leak_untouched
tcmalloc-not-detected|src/preload/output/accounting.c|s/kind = HS_ALLOC_TCMALLOC;/kind = HS_ALLOC_UNKNOWN;/|integration/diagnose
tcmalloc-frag-caches-only|src/common/reports/diagnose_acct.c|s/double kept = page \+ cache;/double kept = cache;/|integration/diagnose
exit-scan-on-snapshot|src/preload/leaks/leaks.c|s/hs_reachscan_run\(&leaks_rs, at_exit\)/hs_reachscan_run(\&leaks_rs, false)/|integration/leak_snapshot
diagnose-growth-ignores-noise|src/common/reports/diagnose_find.c|s/if \(!x->growing\)\n/if (x->growth <= 0)\n/|unit/test_diagnose
diagnose-findings-unsorted|src/common/reports/diagnose_find.c|s/\n    hs_diagnosis_sort\(d\);\n/\n/|unit/test_diagnose|integration/diagnose
diagnose-trusts-bad-accounting|src/common/reports/diagnose_acct.c|s/if \(!diag_acct_consistent\(a, rss, &sum\)\)/if (!diag_acct_consistent(a, rss, \&sum) \&\& 0)/|unit/test_diagnose
gzip-stored-nlen-wrong|src/common/base/gzip.c|s/p\[2\] = \(uint8_t\)~n;/p[2] = (uint8_t)n;/|integration/gzip_stored
libdw-linked-by-tracker|src/preload/record/tracker_resolve.c|s/#include "base\/dwload.h"\n//|integration/start_libdw
libdw-missing-not-checked|src/common/base/dwload.c|s/return hs_dw_load\(\) \? hs_dw_fn.dwfl_begin\(cb\) : NULL;/hs_dw_load();\n    return hs_dw_fn.dwfl_begin(cb);/|integration/start_libdw
diagnose-api-last-profile-only|src/cli/web/web_api.c|s/hs_diagnose_profiles\(&d, profs, q->t->n,/hs_diagnose_profiles(&d, profs + q->t->n - 1, 1,/|integration/web_diagnose
diagnose-tab-smallest-first|src/cli/web/diagnose.js|s/\(y\[0\]\.bytes - x\[0\]\.bytes\)/(x[0].bytes - y[0].bytes)/|integration/web_diagnose
dw-late-in-shared-table|src/preload/triggers/lifecycle.c|s/if \(hs_fd_refused\(\)\)\n            hs_dw_load\(\);/if (hs_fd_refused() \&\& 0)\n            hs_dw_load();/|stress/descriptors
zdebug-line-prefix-first-unit|src/common/symbolize/symbolize_zdebug.c|s/stmt = st > stmt \? st : stmt;/stmt = st > stmt \&\& stmt < 0 ? st : stmt;/|unit/test_symbolize
gnu-hash-finds-nothing|src/preload/reach/elfsyms.c|s/            return 1;\n        if \(c & 1\)\n            break;/            return 0;\n        if (c \& 1)\n            break;/|unit/test_elfsyms
unhashed-trusts-the-table|src/preload/reach/elfsyms.c|s/    for \(size_t i = o->hashed; i < o->nsyms; i\+\+\)\n        if \(o->sym\[i\]\.st_shndx == SHN_UNDEF\)\n            return o->nsyms;\n//|unit/test_elfsyms
elfaddr-exe-not-first|src/preload/reach/elfaddr.c|s/f->o->exe = idx == 0;/f->o->exe = idx <= 1;/|unit/test_elfaddr
elfaddr-name-any-address|src/preload/reach/elfaddr.c|s/s->st_value == v && elfaddr_usable\(s\) &&\n/elfaddr_usable(s) \&\&\n/|unit/test_elfaddr
elfaddr-exe-unnamed|src/preload/reach/elfaddr.c|s/\n    if \(idx == 0 && !f->o->name\[0\] && program_invocation_name\)\n        f->o->name = program_invocation_name;[^\n]*\n/\n/|unit/test_elfaddr
elfaddr-memo-any-address|src/preload/reach/elfaddr.c|s/elfaddr_memo\.e\[i\]\.addr == \(uintptr_t\)addr\)/1)/|unit/test_elfaddr
reach-exe-definitions-unread|src/preload/reach/reach.c|s/int nhit = idx == 0 \? reach_exe_hits\(&o, hit\) : -1, h = 0;/int nhit = idx == 0 ? 0 : -1, h = 0;/|integration/api_hooks
acct-skips-anonymous-names|src/preload/output/accounting.c|s/if \(s && \*s == .\/.\) \{/if (s) {/|integration/stats_reconcile
symtab-batch-own-stretch-only|src/common/symbolize/symbolize_batch.c|s/for \(size_t jj = j \+ 1; jj-- > 0;\)/for (size_t jj = j + 1; jj-- > j;)/|unit/test_symbolize
symtab-batch-never-runs|src/common/symbolize/symbolize_symtab.c|s/    if \(!t->batched\)\n        hs_sym_batch\(s, t\);\n//|unit/test_symbolize
read-head-leaks-fd|src/common/base/fdio.c|s/    sys\(SYS_close, fd, 0, 0, 0\);\n//|unit/test_maps
build-id-head-trusts-replaced|src/common/base/maps.c|s/return n > 0 && !maps_replaced\(x, &st\) && /return n > 0 \&\& /|unit/test_maps
read-file-one-read|src/common/base/fdio.c|s/    while \(got < args\[2\] && /    if (got < args[2] \&\& /|unit/test_maps'

W=${HS_MUTATE_DIR:-$(mktemp -d "${TMPDIR:-/tmp}/hs-mutate.XXXXXX")}
mkdir -p "$W/tree" "$W/pristine"
echo "mutate: scratch copy of $SRC in $W"
(cd "$SRC" && git ls-files --cached --others --exclude-standard -z | grep -zv '^build' |
    xargs -0 cp --parents -t "$W/tree")
(cd "$SRC" && git ls-files --cached --others --exclude-standard -z | grep -zv '^build' |
    xargs -0 cp --parents -t "$W/pristine")

build() {
    [ -f "$W/build/CMakeCache.txt" ] ||
        cmake -S "$W/tree" -B "$W/build" -DCMAKE_BUILD_TYPE=RelWithDebInfo >"$W/cmake.log" 2>&1
    cmake --build "$W/build" -j "$JOBS" >"$W/build.log" 2>&1
}

# runtests REGEX LOG: 0 if every matching test passes (and at least one matches)
runtests() {
    (cd "$W/build" && ctest -R "$1" --timeout 600 --no-tests=error --output-on-failure) >"$2" 2>&1
}

rows() { printf '%s\n' "$ROWS" | grep -E "^($ONLY)[^|]*\|" || true; }

# A "|" inside a substitution would shift the fields, and an empty alternative in a regex
# would run the whole suite: refuse both.
rows | while IFS='|' read -r name file subst tests; do
    case "$file|$tests" in
    *'||'* | *'|' | *' '*) echo "mutate: row $name is malformed" >&2; exit 3 ;;
    esac
    [ -f "$W/tree/$file" ] || { echo "mutate: row $name: no file $file" >&2; exit 3; }
done

echo "mutate: building the unmutated tree"
build || { tail -20 "$W/build.log"; echo "mutate: the unmutated tree does not build" >&2; exit 2; }

# Baseline: every row's tests must pass before a failure can mean "caught".
all=$(rows | while IFS='|' read -r name file subst tests; do printf '%s|' "$tests"; done)
all=${all%|}
echo "mutate: baseline run of $all"
runtests "$all" "$W/baseline.log" || true
failing=$(sed -n 's/^.* - \([^ ]*\) (.*)$/\1/p' "$W/baseline.log" | tr '\n' ' ')
[ -z "$failing" ] || echo "mutate: failing without any mutation: $failing"

caught=0 survived=0 broken=0
printf '%-30s %-28s %-9s %s\n' mutation file result tests
rows | {
    while IFS='|' read -r name file subst tests; do
        cp "$W/pristine/$file" "$W/tree/$file"
        perl -0pi -e "$subst" "$W/tree/$file"
        if cmp -s "$W/pristine/$file" "$W/tree/$file"; then
            echo "mutate: $name: the substitution no longer applies to $file" >&2
            exit 3
        fi
        res=survived
        for t in $failing; do
            printf '%s\n' "$t" | grep -Eq "$tests" && res=broken
        done
        if [ $res = broken ]; then
            :
        elif ! build; then
            res=caught # a mutation that does not compile is caught, but say so
            echo "mutate: $name does not compile (see $W/build.log)" >&2
        elif ! runtests "$tests" "$W/$name.log"; then
            grep -q 'No tests were found' "$W/$name.log" && res="survived(no-test)" || res=caught
        fi
        cp "$W/pristine/$file" "$W/tree/$file" # a new mtime: the next build recompiles it
        case $res in
        caught) caught=$((caught + 1)) ;;
        broken) broken=$((broken + 1)) ;;
        *) survived=$((survived + 1)) ;;
        esac
        printf '%-30s %-28s %-9s %s\n' "$name" "$file" "$res" "$tests"
    done
    build || true
    echo "$caught caught, $survived survived$([ $broken -eq 0 ] || echo ", $broken broken (tests fail unmutated)")"
    [ $survived -eq 0 ] && [ $broken -eq 0 ]
}
