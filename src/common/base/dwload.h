/*
 * libdw and libelf through dlopen (dwload.c). A file that calls them includes this after
 * the elfutils headers: each name below then means a pointer of one table, filled from
 * libdw.so.1 (and libelf.so.1, its dependency) on the first dwfl_begin, so that a
 * process that never symbolizes neither loads nor relocates them, and libheapsift.so,
 * linked --as-needed, has no DT_NEEDED on them. dwfl_begin returns NULL when the library
 * cannot be loaded (hs_dw_error says why): every other name is reached only through a
 * Dwfl, so callers degrade as they do when dwfl_begin fails. The four callbacks that
 * static Dwfl_Callbacks name are functions of dwload.c.
 */
#ifndef HS_DWLOAD_H
#define HS_DWLOAD_H

#include <elfutils/libdwfl.h>
#include <gelf.h>
#include <libelf.h>
#include <stdbool.h>

/* clang-format off */
#define HS_DW_FUNCS(X) \
    X(dwarf_attr) \
    X(dwarf_attr_integrate) \
    X(dwarf_child) \
    X(dwarf_decl_line) \
    X(dwarf_diecu) \
    X(dwarf_diename) \
    X(dwarf_dieoffset) \
    X(dwarf_filesrc) \
    X(dwarf_formstring) \
    X(dwarf_formudata) \
    X(dwarf_func_inline) \
    X(dwarf_func_inline_instances) \
    X(dwarf_get_units) \
    X(dwarf_getaranges) \
    X(dwarf_getfuncs) \
    X(dwarf_getscopes) \
    X(dwarf_getscopes_die) \
    X(dwarf_getsrc_die) \
    X(dwarf_getsrcfiles) \
    X(dwarf_hasattr) \
    X(dwarf_lineno) \
    X(dwarf_linesrc) \
    X(dwarf_nextcu) \
    X(dwarf_offdie) \
    X(dwarf_ranges) \
    X(dwarf_siblingof) \
    X(dwarf_tag) \
    X(dwfl_addrmodule) \
    X(dwfl_begin) \
    X(dwfl_build_id_find_debuginfo) \
    X(dwfl_build_id_find_elf) \
    X(dwfl_end) \
    X(dwfl_getmodules) \
    X(dwfl_line_comp_dir) \
    X(dwfl_lineinfo) \
    X(dwfl_linux_proc_find_elf) \
    X(dwfl_linux_proc_maps_report) \
    X(dwfl_linux_proc_report) \
    X(dwfl_module_addrdie) \
    X(dwfl_module_build_id) \
    X(dwfl_module_getdwarf) \
    X(dwfl_module_getelf) \
    X(dwfl_module_info) \
    X(dwfl_module_getsrc) \
    X(dwfl_module_getsym_info) \
    X(dwfl_module_getsymtab) \
    X(dwfl_offline_section_address) \
    X(dwfl_report_begin) \
    X(dwfl_report_begin_add) \
    X(dwfl_report_elf) \
    X(dwfl_report_end) \
    X(dwfl_report_module) \
    X(dwfl_standard_find_debuginfo) \
    X(elf_begin) \
    X(elf_end) \
    X(elf_getdata) \
    X(elf_getphdrnum) \
    X(elf_getscn) \
    X(elf_getshdrstrndx) \
    X(elf_kind) \
    X(elf_memory) \
    X(elf_nextscn) \
    X(elf_strptr) \
    X(elf_version) \
    X(gelf_getclass) \
    X(gelf_getehdr) \
    X(gelf_getphdr) \
    X(gelf_getshdr) \
    X(gelf_getsym)
/* clang-format on */

#define HS_DW_MEMBER(f) __typeof__(f) *f;
typedef struct {
    HS_DW_FUNCS(HS_DW_MEMBER)
} hs_dw_table_t;
#undef HS_DW_MEMBER

extern hs_dw_table_t hs_dw_fn __attribute__((visibility("hidden")));

/* Loads libdw once (thread-safe); false, for good, when it or one name is missing. */
bool hs_dw_load(void);
/* Why hs_dw_load failed ("" before a failure). */
const char *hs_dw_error(void);

Dwfl *hs_dw_begin(const Dwfl_Callbacks *cb);
int hs_dw_linux_proc_find_elf(Dwfl_Module *mod, void **userdata, const char *name, Dwarf_Addr base,
                              char **file_name, Elf **elfp);
int hs_dw_build_id_find_elf(Dwfl_Module *mod, void **userdata, const char *name, Dwarf_Addr base,
                            char **file_name, Elf **elfp);
int hs_dw_standard_find_debuginfo(Dwfl_Module *mod, void **userdata, const char *name,
                                  Dwarf_Addr base, const char *file, const char *debuglink,
                                  GElf_Word crc, char **debuginfo_file_name);
int hs_dw_offline_section_address(Dwfl_Module *mod, void **userdata, const char *name,
                                  Dwarf_Addr base, const char *secname, GElf_Word shndx,
                                  const GElf_Shdr *shdr, Dwarf_Addr *addr);

#ifndef HS_DWLOAD_OWN
#define dwarf_attr (hs_dw_fn.dwarf_attr)
#define dwarf_attr_integrate (hs_dw_fn.dwarf_attr_integrate)
#define dwarf_child (hs_dw_fn.dwarf_child)
#define dwarf_decl_line (hs_dw_fn.dwarf_decl_line)
#define dwarf_diecu (hs_dw_fn.dwarf_diecu)
#define dwarf_diename (hs_dw_fn.dwarf_diename)
#define dwarf_dieoffset (hs_dw_fn.dwarf_dieoffset)
#define dwarf_filesrc (hs_dw_fn.dwarf_filesrc)
#define dwarf_formstring (hs_dw_fn.dwarf_formstring)
#define dwarf_formudata (hs_dw_fn.dwarf_formudata)
#define dwarf_func_inline (hs_dw_fn.dwarf_func_inline)
#define dwarf_func_inline_instances (hs_dw_fn.dwarf_func_inline_instances)
#define dwarf_get_units (hs_dw_fn.dwarf_get_units)
#define dwarf_getaranges (hs_dw_fn.dwarf_getaranges)
#define dwarf_getfuncs (hs_dw_fn.dwarf_getfuncs)
#define dwarf_getscopes (hs_dw_fn.dwarf_getscopes)
#define dwarf_getscopes_die (hs_dw_fn.dwarf_getscopes_die)
#define dwarf_getsrc_die (hs_dw_fn.dwarf_getsrc_die)
#define dwarf_getsrcfiles (hs_dw_fn.dwarf_getsrcfiles)
#define dwarf_hasattr (hs_dw_fn.dwarf_hasattr)
#define dwarf_lineno (hs_dw_fn.dwarf_lineno)
#define dwarf_linesrc (hs_dw_fn.dwarf_linesrc)
#define dwarf_nextcu (hs_dw_fn.dwarf_nextcu)
#define dwarf_offdie (hs_dw_fn.dwarf_offdie)
#define dwarf_ranges (hs_dw_fn.dwarf_ranges)
#define dwarf_siblingof (hs_dw_fn.dwarf_siblingof)
#define dwarf_tag (hs_dw_fn.dwarf_tag)
#define dwfl_addrmodule (hs_dw_fn.dwfl_addrmodule)
#define dwfl_begin hs_dw_begin
#define dwfl_build_id_find_debuginfo (hs_dw_fn.dwfl_build_id_find_debuginfo)
#define dwfl_build_id_find_elf hs_dw_build_id_find_elf
#define dwfl_end (hs_dw_fn.dwfl_end)
#define dwfl_getmodules (hs_dw_fn.dwfl_getmodules)
#define dwfl_line_comp_dir (hs_dw_fn.dwfl_line_comp_dir)
#define dwfl_lineinfo (hs_dw_fn.dwfl_lineinfo)
#define dwfl_linux_proc_find_elf hs_dw_linux_proc_find_elf
#define dwfl_linux_proc_maps_report (hs_dw_fn.dwfl_linux_proc_maps_report)
#define dwfl_linux_proc_report (hs_dw_fn.dwfl_linux_proc_report)
#define dwfl_module_addrdie (hs_dw_fn.dwfl_module_addrdie)
#define dwfl_module_build_id (hs_dw_fn.dwfl_module_build_id)
#define dwfl_module_getdwarf (hs_dw_fn.dwfl_module_getdwarf)
#define dwfl_module_getelf (hs_dw_fn.dwfl_module_getelf)
#define dwfl_module_info (hs_dw_fn.dwfl_module_info)
#define dwfl_module_getsrc (hs_dw_fn.dwfl_module_getsrc)
#define dwfl_module_getsym_info (hs_dw_fn.dwfl_module_getsym_info)
#define dwfl_module_getsymtab (hs_dw_fn.dwfl_module_getsymtab)
#define dwfl_offline_section_address hs_dw_offline_section_address
#define dwfl_report_begin (hs_dw_fn.dwfl_report_begin)
#define dwfl_report_begin_add (hs_dw_fn.dwfl_report_begin_add)
#define dwfl_report_elf (hs_dw_fn.dwfl_report_elf)
#define dwfl_report_end (hs_dw_fn.dwfl_report_end)
#define dwfl_report_module (hs_dw_fn.dwfl_report_module)
#define dwfl_standard_find_debuginfo hs_dw_standard_find_debuginfo
#define elf_begin (hs_dw_fn.elf_begin)
#define elf_end (hs_dw_fn.elf_end)
#define elf_getdata (hs_dw_fn.elf_getdata)
#define elf_getphdrnum (hs_dw_fn.elf_getphdrnum)
#define elf_getscn (hs_dw_fn.elf_getscn)
#define elf_getshdrstrndx (hs_dw_fn.elf_getshdrstrndx)
#define elf_kind (hs_dw_fn.elf_kind)
#define elf_memory (hs_dw_fn.elf_memory)
#define elf_nextscn (hs_dw_fn.elf_nextscn)
#define elf_strptr (hs_dw_fn.elf_strptr)
#define elf_version (hs_dw_fn.elf_version)
#define gelf_getclass (hs_dw_fn.gelf_getclass)
#define gelf_getehdr (hs_dw_fn.gelf_getehdr)
#define gelf_getphdr (hs_dw_fn.gelf_getphdr)
#define gelf_getshdr (hs_dw_fn.gelf_getshdr)
#define gelf_getsym (hs_dw_fn.gelf_getsym)
#endif

#endif
