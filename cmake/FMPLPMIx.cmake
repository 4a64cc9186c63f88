# Locate PMIx for the PMIx bootstrap (src/bootstrap/pmix.c).
#
# Sets FMPL_PMIX_FOUND.  When found: the imported target fmpl::pmix (include
# directory and library), FMPL_PMIX_INCLUDE_DIR, FMPL_PMIX_LIBRARY and
# FMPL_PMIX_HOW (how it was found); otherwise FMPL_PMIX_WHY.
#
# Search order:
#  1. pkg-config "pmix".  Debian's libpmix-dev puts pmix.pc in the ordinary
#     pkgconfig directory, but the header and library under
#     /usr/lib/<multiarch>/pmix2/{include,lib} (plus a libpmix.so symlink in
#     /usr/lib/<multiarch>); the .pc file points there.
#  2. find_path(pmix.h) and find_library(pmix) in PMIX_ROOT (cache variable
#     FMPL_PMIX_ROOT or environment), Debian's and other distributions'
#     pmix2/pmix directories, then the system defaults.
# In both cases a small program using the calls FMPL needs must compile and
# link, so a PMIx too old (or broken) to serve is reported as not found.

set(FMPL_PMIX_FOUND FALSE)
set(FMPL_PMIX_ROOT "$ENV{PMIX_ROOT}" CACHE PATH "PMIx installation prefix (optional)")

set(_fmpl_pmix_inc_hints "")
set(_fmpl_pmix_lib_hints "")
set(FMPL_PMIX_HOW "find_path/find_library")
find_package(PkgConfig QUIET)
if(PKG_CONFIG_FOUND)
  pkg_check_modules(FMPL_PMIX_PC QUIET pmix)
  if(FMPL_PMIX_PC_FOUND)
    list(APPEND _fmpl_pmix_inc_hints ${FMPL_PMIX_PC_INCLUDE_DIRS})
    list(APPEND _fmpl_pmix_lib_hints ${FMPL_PMIX_PC_LIBRARY_DIRS})
    set(FMPL_PMIX_HOW "pkg-config pmix ${FMPL_PMIX_PC_VERSION}")
  endif()
endif()
if(FMPL_PMIX_ROOT)
  list(APPEND _fmpl_pmix_inc_hints ${FMPL_PMIX_ROOT}/include)
  list(APPEND _fmpl_pmix_lib_hints ${FMPL_PMIX_ROOT}/lib ${FMPL_PMIX_ROOT}/lib64)
endif()
foreach(_d /usr/lib/${CMAKE_LIBRARY_ARCHITECTURE}/pmix2 /usr/lib64/pmix2 /usr/lib/pmix2
           /usr/lib/${CMAKE_LIBRARY_ARCHITECTURE}/pmix /usr/lib64/pmix /usr/lib/pmix /opt/pmix)
  list(APPEND _fmpl_pmix_inc_hints ${_d}/include)
  list(APPEND _fmpl_pmix_lib_hints ${_d}/lib)
endforeach()

find_path(FMPL_PMIX_INCLUDE_DIR pmix.h HINTS ${_fmpl_pmix_inc_hints}
          DOC "directory holding PMIx's pmix.h")
find_library(FMPL_PMIX_LIBRARY pmix HINTS ${_fmpl_pmix_lib_hints} DOC "PMIx client library")

if(NOT FMPL_PMIX_INCLUDE_DIR AND NOT FMPL_PMIX_LIBRARY)
  set(FMPL_PMIX_WHY "neither pmix.h nor libpmix found")
elseif(NOT FMPL_PMIX_INCLUDE_DIR)
  set(FMPL_PMIX_WHY "libpmix found (${FMPL_PMIX_LIBRARY}) but not pmix.h")
elseif(NOT FMPL_PMIX_LIBRARY)
  set(FMPL_PMIX_WHY "pmix.h found (${FMPL_PMIX_INCLUDE_DIR}) but not libpmix")
else()
  include(CheckCSourceCompiles)
  include(CMakePushCheckState)
  cmake_push_check_state(RESET)
  set(CMAKE_REQUIRED_QUIET ON)
  set(CMAKE_REQUIRED_INCLUDES ${FMPL_PMIX_INCLUDE_DIR})
  set(CMAKE_REQUIRED_LIBRARIES ${FMPL_PMIX_LIBRARY})
  # Checked on every configure: the paths above may have changed.
  unset(FMPL_PMIX_WORKS CACHE)
  check_c_source_compiles([=[
#include <pmix.h>
int main(void)
{
    pmix_proc_t me;
    pmix_info_t info;
    bool yes = true;
    pmix_value_t *v = NULL;
    PMIX_INFO_CONSTRUCT(&info);
    PMIX_INFO_LOAD(&info, PMIX_COLLECT_DATA, &yes, PMIX_BOOL);
    if (PMIx_Init(&me, NULL, 0) != PMIX_SUCCESS)
        return 1;
    PMIx_Put(PMIX_GLOBAL, "k", v);
    PMIx_Commit();
    PMIx_Fence(NULL, 0, &info, 1);
    PMIx_Get(&me, PMIX_JOB_SIZE, NULL, 0, &v);
    if (v)
        PMIX_VALUE_RELEASE(v);
    (void)PMIx_Error_string(PMIX_SUCCESS);
    PMIx_Abort(1, "m", NULL, 0);
    return PMIx_Finalize(NULL, 0) == PMIX_SUCCESS ? 0 : 1;
}
]=] FMPL_PMIX_WORKS)
  cmake_pop_check_state()
  if(FMPL_PMIX_WORKS)
    set(FMPL_PMIX_FOUND TRUE)
    if(NOT TARGET fmpl::pmix)
      add_library(fmpl::pmix INTERFACE IMPORTED)
      set_target_properties(fmpl::pmix PROPERTIES
        INTERFACE_INCLUDE_DIRECTORIES "${FMPL_PMIX_INCLUDE_DIR}"
        INTERFACE_LINK_LIBRARIES "${FMPL_PMIX_LIBRARY}")
    endif()
  else()
    set(FMPL_PMIX_WHY "a test program with pmix.h from ${FMPL_PMIX_INCLUDE_DIR} and "
                      "${FMPL_PMIX_LIBRARY} does not compile or link (PMIx 3 or newer is needed)")
    string(CONCAT FMPL_PMIX_WHY ${FMPL_PMIX_WHY})
  endif()
endif()
unset(_fmpl_pmix_inc_hints)
unset(_fmpl_pmix_lib_hints)
unset(_d)
