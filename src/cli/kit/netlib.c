/*
 * The table of netlib.h: libcurl.so.4 and libmicrohttpd.so.12 dlopened on first use (once,
 * under pthread_once), each name looked up in them. A failed load is final and kept as
 * text for the caller's message; nothing is printed here.
 */
#define _GNU_SOURCE
#define HS_NETLIB_OWN
#include "kit/netlib.h"

#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>

#define HS_CURL_SONAME "libcurl.so.4"
#define HS_MHD_SONAME "libmicrohttpd.so.12"

hs_netlib_t hs_netlib;
static bool net_ok;
static char net_error[256];
static pthread_once_t net_once = PTHREAD_ONCE_INIT;

static bool net_sym(void *h, const char *lib, const char *name, void **out)
{
    *out = dlsym(h, name);
    if (*out == NULL)
        snprintf(net_error, sizeof(net_error), "%s has no %s", lib, name);
    return *out != NULL;
}

static void *net_open(const char *soname)
{
    void *h = dlopen(soname, RTLD_NOW | RTLD_LOCAL);
    if (h == NULL)
        snprintf(net_error, sizeof(net_error), "cannot load %s: %s", soname, dlerror());
    return h;
}

static void net_load_once(void)
{
    void *curl = net_open(HS_CURL_SONAME), *mhd = curl ? net_open(HS_MHD_SONAME) : NULL;
    bool ok = curl && mhd;
#define HS_NETLIB_LOOKUP_CURL(name)                                                                \
    ok = ok && net_sym(curl, HS_CURL_SONAME, #name, (void **)&hs_netlib.name);
#define HS_NETLIB_LOOKUP_MHD(name)                                                                 \
    ok = ok && net_sym(mhd, HS_MHD_SONAME, #name, (void **)&hs_netlib.name);
    HS_NETLIB_CURL(HS_NETLIB_LOOKUP_CURL)
    HS_NETLIB_MHD(HS_NETLIB_LOOKUP_MHD)
    net_ok = ok;
}

bool hs_netlib_load(char *err, size_t errlen)
{
    pthread_once(&net_once, net_load_once);
    if (!net_ok && err && errlen)
        snprintf(err, errlen, "%s", net_error);
    return net_ok;
}
