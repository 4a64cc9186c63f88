# Locate libfabric for the network backend (src/fabric/net/).
#
# Sets FMPL_LIBFABRIC_FOUND.  When found: the imported target fmpl::libfabric
# and FMPL_LIBFABRIC_HOW (how it was found); otherwise FMPL_LIBFABRIC_WHY.
#
# pkg-config "libfabric" (Debian's libfabric-dev) gives the include directory
# and library; a small program using the calls the backend needs must then
# compile and link (libfabric 1.9 or newer: FI_MR_* modes, FI_ATOMIC_WRITE,
# fi_query_atomic), so an unusable installation is reported as not found.

set(FMPL_LIBFABRIC_FOUND FALSE)
find_package(PkgConfig QUIET)
if(NOT PKG_CONFIG_FOUND)
  set(FMPL_LIBFABRIC_WHY "pkg-config not found")
else()
  pkg_check_modules(FMPL_OFI_PC QUIET libfabric)
  if(NOT FMPL_OFI_PC_FOUND)
    set(FMPL_LIBFABRIC_WHY "pkg-config finds no libfabric")
  else()
    find_library(FMPL_LIBFABRIC_LIBRARY fabric HINTS ${FMPL_OFI_PC_LIBRARY_DIRS}
                 DOC "libfabric library")
    if(NOT FMPL_LIBFABRIC_LIBRARY)
      set(FMPL_LIBFABRIC_WHY "pkg-config names libfabric but its library is missing")
    else()
      include(CheckCSourceCompiles)
      include(CMakePushCheckState)
      cmake_push_check_state(RESET)
      set(CMAKE_REQUIRED_QUIET ON)
      set(CMAKE_REQUIRED_INCLUDES ${FMPL_OFI_PC_INCLUDE_DIRS})
      set(CMAKE_REQUIRED_LIBRARIES ${FMPL_LIBFABRIC_LIBRARY})
      unset(FMPL_LIBFABRIC_WORKS CACHE)
      check_c_source_compiles([=[
#include <rdma/fabric.h>
#include <rdma/fi_atomic.h>
#include <rdma/fi_domain.h>
#include <rdma/fi_rma.h>
#if FI_MAJOR_VERSION < 1 || (FI_MAJOR_VERSION == 1 && FI_MINOR_VERSION < 9)
#error libfabric 1.9 or newer is needed
#endif
int main(void)
{
    struct fi_info *h = fi_allocinfo(), *i = NULL;
    h->domain_attr->mr_mode = FI_MR_LOCAL | FI_MR_VIRT_ADDR | FI_MR_PROV_KEY | FI_MR_ENDPOINT;
    int rc = fi_getinfo(FI_VERSION(1, 9), NULL, NULL, 0, h, &i);
    struct fi_atomic_attr a;
    (void)a;
    (void)FI_ATOMIC_WRITE;
    (void)FI_DELIVERY_COMPLETE;
    fi_freeinfo(h);
    if (i)
        fi_freeinfo(i);
    return rc ? 0 : 1;
}
]=] FMPL_LIBFABRIC_WORKS)
      cmake_pop_check_state()
      if(FMPL_LIBFABRIC_WORKS)
        set(FMPL_LIBFABRIC_FOUND TRUE)
        set(FMPL_LIBFABRIC_HOW "pkg-config libfabric ${FMPL_OFI_PC_VERSION}, ${FMPL_LIBFABRIC_LIBRARY}")
        if(NOT TARGET fmpl::libfabric)
          # Headers only: the library is opened with dlopen when the network
          # backend is first needed (src/fabric/net/net_lib.c), so programs
          # on one host never load it.
          add_library(fmpl::libfabric INTERFACE IMPORTED)
          set_target_properties(fmpl::libfabric PROPERTIES
            INTERFACE_INCLUDE_DIRECTORIES "${FMPL_OFI_PC_INCLUDE_DIRS}"
            INTERFACE_LINK_LIBRARIES "${CMAKE_DL_LIBS}")
        endif()
      else()
        set(FMPL_LIBFABRIC_WHY "a test program with libfabric ${FMPL_OFI_PC_VERSION} does not "
                               "compile or link (1.9 or newer is needed)")
        string(CONCAT FMPL_LIBFABRIC_WHY ${FMPL_LIBFABRIC_WHY})
      endif()
    endif()
  endif()
endif()
