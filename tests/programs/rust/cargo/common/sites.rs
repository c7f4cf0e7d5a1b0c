// sites.rs: allocation sites with known figures, and main, included at the crate root of
// every variant (rjemp, rjemp_lto, rjemu, rjemu_lto, rjemv0, rmimalloc after their
// #[global_allocator]; rsys, on Rust's default allocator, has none), so each site is
// named `<crate>::hold_site` as a user reads it.
// `<program> --expect` prints each site's figures at rate 1, computed from the constants
// below, one line each: "NAME KIND ALLOC_OBJECTS ALLOC_SPACE INUSE_OBJECTS INUSE_SPACE"
// (KIND flat: the site asks the allocator itself, through std::alloc; cum: through a
// container, whose frames sit between), as tests/lib/common.sh's compare reads them.
// `<program> DIR` also writes DIR/step.NNN.pb.gz with heapsift_dump (looked up with
// dlsym, so the program runs without heapsift too) after each of hold_site's steps.
// Everything run() allocates is in the figures: its total is checked too.
use std::alloc::{alloc, alloc_zeroed, handle_alloc_error, Layout};
use std::ffi::CString;
use std::mem::size_of;
use std::os::raw::{c_char, c_int, c_void};
use std::sync::atomic::{AtomicUsize, Ordering};

/// hold_site: 10 steps of 16 blocks of 64 KiB, kept: 10 MiB live.
const HOLD_BLOCK: usize = 64 << 10;
const HOLD_STEPS: usize = 10;
const HOLD_PER_STEP: usize = 16;
/// churn_site: 10,000 blocks of 128 KiB, each freed at once: 1.25 GiB freed.
const CHURN_N: usize = 10_000;
const CHURN_SIZE: usize = 128 << 10;
/// grow_site: a Vec<u64> of 4 elements, doubled with reserve_exact up to 2^20 (8 MiB).
const GROW_FIRST: usize = 4;
const GROW_LEN: usize = 1 << 20;
/// aligned_site: 1000 boxes of A64 (192 bytes, aligned to 64: mallocx with
/// MALLOCX_ALIGN), every other one freed (sdallocx with the same flag).
const ALIGNED_N: usize = 1000;
/// tiny_site: 1000 blocks of 8 bytes aligned to 32 (an alignment above the size).
const TINY_N: usize = 1000;
const TINY_SIZE: usize = 8;
const TINY_ALIGN: usize = 32;
/// page_site: 10 zeroed pages aligned to a page (MALLOCX_ZERO with MALLOCX_ALIGN).
const PAGE_N: usize = 10;
const PAGE: usize = 4096;
/// zeroed_site: 10 zeroed vectors of 100,000 bytes (calloc), kept.
const ZEROED_N: usize = 10;
const ZEROED_SIZE: usize = 100_000;

#[repr(C, align(64))]
pub struct A64(pub [u8; 192]);

/// What run() keeps until the process exits.
pub struct Held {
    hold: Vec<Box<[u8]>>,
    grown: Vec<u64>,
    aligned: Vec<Box<A64>>,
    raw: Vec<usize>,
    zeroed: Vec<Vec<u8>>,
    kept: Vec<Vec<u8>>,
}

static SINK: AtomicUsize = AtomicUsize::new(0);

/// The block's address escapes, so the compiler cannot leave out an allocation it sees
/// unused (Rust lets it drop an allocation and its free).
#[inline(always)]
fn escape(p: *const u8) {
    SINK.store(p as usize, Ordering::Relaxed);
}

#[inline(never)]
pub fn hold_site(held: &mut Vec<Box<[u8]>>, n: usize) {
    for _ in 0..n {
        let mut v: Vec<u8> = Vec::with_capacity(HOLD_BLOCK);
        v.resize(HOLD_BLOCK, (held.len() % 250) as u8 + 1);
        held.push(v.into_boxed_slice());
    }
}

#[inline(never)]
pub fn churn_site(n: usize) {
    for i in 0..n {
        let mut v: Vec<u8> = Vec::with_capacity(CHURN_SIZE);
        unsafe { std::ptr::write_volatile(v.as_mut_ptr(), i as u8) };
        escape(v.as_ptr());
    }
}

#[inline(never)]
pub fn grow_site(len: usize) -> Vec<u64> {
    let mut v: Vec<u64> = Vec::new();
    let mut cap = GROW_FIRST;
    while cap <= len {
        v.reserve_exact(cap - v.len());
        while v.len() < cap {
            v.push(v.len() as u64);
        }
        cap *= 2;
    }
    v
}

#[inline(never)]
pub fn aligned_site(out: &mut Vec<Box<A64>>, n: usize) {
    for i in 0..n {
        let b = Box::new(A64([i as u8; 192]));
        escape(&b.0[0]);
        if i % 2 == 0 {
            out.push(b);
        }
    }
}

#[inline(never)]
pub fn tiny_site(out: &mut Vec<usize>, n: usize) {
    let l = Layout::from_size_align(TINY_SIZE, TINY_ALIGN).unwrap();
    for _ in 0..n {
        let p = unsafe { alloc(l) };
        if p.is_null() {
            handle_alloc_error(l);
        }
        out.push(p as usize);
    }
}

#[inline(never)]
pub fn page_site(out: &mut Vec<usize>, n: usize) {
    let l = Layout::from_size_align(PAGE, PAGE).unwrap();
    for _ in 0..n {
        let p = unsafe { alloc_zeroed(l) };
        if p.is_null() {
            handle_alloc_error(l);
        }
        out.push(p as usize);
    }
}

#[inline(never)]
pub fn zeroed_site(out: &mut Vec<Vec<u8>>, n: usize) {
    for _ in 0..n {
        out.push(vec![0u8; ZEROED_SIZE]);
    }
}

type DumpFn = unsafe extern "C" fn(*const c_char) -> c_int;

extern "C" {
    fn dlsym(handle: *mut c_void, symbol: *const c_char) -> *mut c_void;
}

/// heapsift_dump when libheapsift.so is in the process (RTLD_DEFAULT is a null handle).
fn heapsift_dump() -> Option<DumpFn> {
    let p = unsafe { dlsym(std::ptr::null_mut(), b"heapsift_dump\0".as_ptr() as *const c_char) };
    if p.is_null() {
        None
    } else {
        Some(unsafe { std::mem::transmute::<*mut c_void, DumpFn>(p) })
    }
}

/// Every site once; the containers it keeps are made here with their final capacity.
#[inline(never)]
pub fn run(dumps: &[CString], dump: Option<DumpFn>) -> Held {
    let mut h = Held {
        hold: Vec::with_capacity(HOLD_STEPS * HOLD_PER_STEP),
        grown: Vec::new(),
        aligned: Vec::with_capacity(ALIGNED_N / 2),
        raw: Vec::with_capacity(TINY_N + PAGE_N),
        zeroed: Vec::with_capacity(ZEROED_N),
        kept: Vec::with_capacity(rsites::KEEP_N),
    };
    for step in 0..HOLD_STEPS {
        hold_site(&mut h.hold, HOLD_PER_STEP);
        if let (Some(d), Some(path)) = (dump, dumps.get(step)) {
            if unsafe { d(path.as_ptr()) } != 0 {
                eprintln!("heapsift_dump {:?} failed", path);
                std::process::exit(3);
            }
        }
    }
    churn_site(CHURN_N);
    h.grown = grow_site(GROW_LEN);
    aligned_site(&mut h.aligned, ALIGNED_N);
    tiny_site(&mut h.raw, TINY_N);
    page_site(&mut h.raw, PAGE_N);
    zeroed_site(&mut h.zeroed, ZEROED_N);
    rsites::keep_site(&mut h.kept, rsites::KEEP_N);
    h
}

/// One line of --expect; returns (alloc_objects, alloc_space) for run's total.
fn expect_line(name: &str, kind: &str, ao: usize, asp: usize, io: usize, isp: usize) -> (usize, usize) {
    println!("{} {} {} {} {} {}", name, kind, ao, asp, io, isp);
    (ao, asp)
}

fn expect(krate: &str) {
    let mut objs = 0;
    let mut space = 0;
    let mut add = |f: (usize, usize)| {
        objs += f.0;
        space += f.1;
    };
    let held = HOLD_STEPS * HOLD_PER_STEP;
    add(expect_line(&format!("{}::hold_site", krate), "cum", held, held * HOLD_BLOCK, held, held * HOLD_BLOCK));
    add(expect_line(&format!("{}::churn_site", krate), "cum", CHURN_N, CHURN_N * CHURN_SIZE, 0, 0));
    let (mut n, mut bytes, mut cap) = (0, 0, GROW_FIRST);
    while cap <= GROW_LEN {
        n += 1;
        bytes += cap * size_of::<u64>();
        cap *= 2;
    }
    let last = GROW_LEN * size_of::<u64>();
    add(expect_line(&format!("{}::grow_site", krate), "cum", n, bytes, 1, last));
    let a = size_of::<A64>();
    add(expect_line(&format!("{}::aligned_site", krate), "cum", ALIGNED_N, ALIGNED_N * a, ALIGNED_N / 2, ALIGNED_N / 2 * a));
    add(expect_line(&format!("{}::tiny_site", krate), "flat", TINY_N, TINY_N * TINY_SIZE, TINY_N, TINY_N * TINY_SIZE));
    add(expect_line(&format!("{}::page_site", krate), "flat", PAGE_N, PAGE_N * PAGE, PAGE_N, PAGE_N * PAGE));
    add(expect_line(&format!("{}::zeroed_site", krate), "cum", ZEROED_N, ZEROED_N * ZEROED_SIZE, ZEROED_N, ZEROED_N * ZEROED_SIZE));
    let k = rsites::KEEP_N;
    add(expect_line("rsites::keep_site", "cum", k, k * rsites::KEEP_SIZE, k, k * rsites::KEEP_SIZE));
    // run's own: the five containers it makes with their final capacity
    let containers = HOLD_STEPS * HOLD_PER_STEP * size_of::<Box<[u8]>>()
        + ALIGNED_N / 2 * size_of::<Box<A64>>()
        + (TINY_N + PAGE_N) * size_of::<usize>()
        + ZEROED_N * size_of::<Vec<u8>>()
        + k * size_of::<Vec<u8>>();
    add((5, containers));
    // live in the end: all but churn_site's blocks, grow_site's earlier buffers and half
    // of aligned_site's boxes
    let live_objs = objs - CHURN_N - (n - 1) - ALIGNED_N / 2;
    let live = space - CHURN_N * CHURN_SIZE - (bytes - last) - ALIGNED_N / 2 * a;
    println!("{}::run cum {} {} {} {}", krate, objs, space, live_objs, live);
}

fn main() {
    let krate = module_path!();
    let arg = std::env::args().nth(1);
    if arg.as_deref() == Some("--expect") {
        expect(krate);
        return;
    }
    let dumps: Vec<CString> = match &arg {
        Some(dir) => (0..HOLD_STEPS)
            .map(|k| CString::new(format!("{}/step.{:03}.pb.gz", dir, k)).unwrap())
            .collect(),
        None => Vec::new(),
    };
    let dump = if dumps.is_empty() { None } else { heapsift_dump() };
    if !dumps.is_empty() && dump.is_none() {
        eprintln!("{}: heapsift_dump not found: run it under heapsift", krate);
        std::process::exit(2);
    }
    let held = run(&dumps, dump);
    println!(
        "{} done: {} blocks held, {} grown, {} aligned, {} raw, {} zeroed, {} kept",
        krate,
        held.hold.len(),
        held.grown.len(),
        held.aligned.len(),
        held.raw.len(),
        held.zeroed.len(),
        held.kept.len()
    );
    // kept to the exit profile
    std::mem::forget(held);
}
