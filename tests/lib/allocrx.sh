# Shared by the Rust end-to-end tests (sourced): ALLOC_RX, an awk regular expression that
# matches a function name that is an allocator frame (an entry point of an allocator, a
# Rust allocator shim, alloc::alloc or alloc::raw_vec, a GlobalAlloc or Allocator impl,
# operator new or delete, libstdc++'s allocator templates) by its own path, not by its
# generic arguments: <hashbrown::raw::RawTableInner>::fallible_with_capacity::<alloc::alloc::Global>
# is a container that grew, as vector::reserve is, and stays.
ALLOC_RX='^(__rust_[a-z_]+|__r[dg]l_[a-z_]+|_?_?rjem_.*|je_.*|_?mi_[a-z_]+|tc_.*|(m|r|x|s|d|sd|n)allocx|malloc|calloc|realloc|reallocarray|free|posix_memalign|aligned_alloc|memalign|valloc|pvalloc|operator (new|delete).*|_Z(n[wa]|d[la]).*|std::__new_allocator.*|__gnu_cxx::new_allocator.*|std::allocator_traits.*)$'
ALLOC_RX="$ALLOC_RX"'|^<?alloc::(alloc|raw_vec)::|^<?std::sys::(pal::unix::)?alloc::|^_ZN5alloc(5alloc|7raw_vec)|^<[^<>]*( as |<impl )core::alloc::(global::)?(GlobalAlloc|Allocator)'
