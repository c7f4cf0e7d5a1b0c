/*
 * libcurl and libmicrohttpd through dlopen: only `heapsift web` and diagnose's fetch of a
 * URL use them, and linked they brought 30 libraries (GnuTLS, OpenSSL, Kerberos, LDAP...)
 * into every start of the CLI, 14M of the loader's instructions (a `heapsift top` on a
 * small profile was a third loading them). Include this instead of <curl/curl.h> and
 * <microhttpd.h>: each function named here is then a pointer of the table, valid once
 * hs_netlib_load has returned true.
 */
#ifndef HS_KIT_NETLIB_H
#define HS_KIT_NETLIB_H

#include <stdbool.h>
#include <stddef.h>

#define CURL_DISABLE_TYPECHECK /* the option-type macros would call the names below */
#include <curl/curl.h>
#include <microhttpd.h>

#define HS_NETLIB_CURL(X)                                                                          \
    X(curl_global_init)                                                                            \
    X(curl_easy_init)                                                                              \
    X(curl_easy_setopt)                                                                            \
    X(curl_easy_perform)                                                                           \
    X(curl_easy_getinfo)                                                                           \
    X(curl_easy_cleanup)                                                                           \
    X(curl_easy_strerror)                                                                          \
    X(curl_slist_append)                                                                           \
    X(curl_slist_free_all)
#define HS_NETLIB_MHD(X)                                                                           \
    X(MHD_start_daemon)                                                                            \
    X(MHD_stop_daemon)                                                                             \
    X(MHD_lookup_connection_value)                                                                 \
    X(MHD_create_response_from_buffer)                                                             \
    X(MHD_add_response_header)                                                                     \
    X(MHD_queue_response)                                                                          \
    X(MHD_destroy_response)

#define HS_NETLIB_FIELD(name) __typeof__(name) *name;
typedef struct {
    HS_NETLIB_CURL(HS_NETLIB_FIELD)
    HS_NETLIB_MHD(HS_NETLIB_FIELD)
} hs_netlib_t;
#undef HS_NETLIB_FIELD

extern hs_netlib_t hs_netlib;

/* Loads both libraries once (thread-safe); false, for good, when one of them or one name
 * is missing, with the loader's message in err. */
bool hs_netlib_load(char *err, size_t errlen);

#ifndef HS_NETLIB_OWN
#undef curl_easy_setopt /* curl.h's pass-through macros */
#undef curl_easy_getinfo
#define curl_global_init (hs_netlib.curl_global_init)
#define curl_easy_init (hs_netlib.curl_easy_init)
#define curl_easy_setopt (hs_netlib.curl_easy_setopt)
#define curl_easy_perform (hs_netlib.curl_easy_perform)
#define curl_easy_getinfo (hs_netlib.curl_easy_getinfo)
#define curl_easy_cleanup (hs_netlib.curl_easy_cleanup)
#define curl_easy_strerror (hs_netlib.curl_easy_strerror)
#define curl_slist_append (hs_netlib.curl_slist_append)
#define curl_slist_free_all (hs_netlib.curl_slist_free_all)
#define MHD_start_daemon (hs_netlib.MHD_start_daemon)
#define MHD_stop_daemon (hs_netlib.MHD_stop_daemon)
#define MHD_lookup_connection_value (hs_netlib.MHD_lookup_connection_value)
#define MHD_create_response_from_buffer (hs_netlib.MHD_create_response_from_buffer)
#define MHD_add_response_header (hs_netlib.MHD_add_response_header)
#define MHD_queue_response (hs_netlib.MHD_queue_response)
#define MHD_destroy_response (hs_netlib.MHD_destroy_response)
#endif

#endif
