# The Fortran binding: libmpifort (src/api/fortran), mpif.h and the modules
# mpi and mpi_f08.  Optional: without a Fortran compiler (or with
# FMPL_FORTRAN=OFF) the C libraries build alone.
#
# The library's C entry points follow gfortran's calling convention and the
# modules use its NO_ARG_CHECK directive (choice buffers), so the compiler
# must be GNU Fortran.  Like libmpi.so.12 (libmpich.so.12), it also goes by
# MPICH's names, libmpifort.so.12 and libmpichfort.so.12 (Debian's), so that
# programs built with mpif90.mpich load it.
option(FMPL_FORTRAN "Build the Fortran binding (libmpifort, mpif.h, use mpi, use mpi_f08)" ON)
set(FMPL_HAVE_FORTRAN OFF)
if(FMPL_FORTRAN)
  include(CheckLanguage)
  check_language(Fortran)
  if(CMAKE_Fortran_COMPILER)
    enable_language(Fortran)
    if(CMAKE_Fortran_COMPILER_ID STREQUAL "GNU")
      set(FMPL_HAVE_FORTRAN ON)
    else()
      set(why "${CMAKE_Fortran_COMPILER_ID} Fortran; the binding needs GNU Fortran (gfortran)")
    endif()
  else()
    set(why "no Fortran compiler found; install gfortran and reconfigure to enable it")
  endif()
else()
  set(why "FMPL_FORTRAN=OFF")
endif()
if(NOT FMPL_HAVE_FORTRAN)
  message(STATUS "FMPL: Fortran binding OFF (${why})")
  return()
endif()
message(STATUS "FMPL: Fortran binding ON (${CMAKE_Fortran_COMPILER})")
# What mpifort adds to every compilation (gfortran 10 and later; MPICH's
# wrappers do the same): see tools/wrappers.
set(FMPL_FORTRAN_MISMATCH_FLAGS "")
set(FMPL_FORTRAN_WRAPPER_FLAGS "")
if(CMAKE_Fortran_COMPILER_VERSION VERSION_GREATER_EQUAL 10)
  set(FMPL_FORTRAN_MISMATCH_FLAGS -fallow-argument-mismatch)
  set(FMPL_FORTRAN_WRAPPER_FLAGS " -fallow-argument-mismatch")
endif()

# -Wextra's Fortran warnings that only fit other code: the tests compare
# reals exactly on purpose, and mpif.h declares hundreds of PARAMETERs that a
# program does not use.
# And -Wmaybe-uninitialized, which gfortran at -O3 raises on its own array
# temporaries (tests/fortran/coll.F90 in the Release builds).
add_compile_options($<$<COMPILE_LANGUAGE:Fortran>:-Wno-compare-reals>
                    $<$<COMPILE_LANGUAGE:Fortran>:-Wno-unused-parameter>
                    $<$<COMPILE_LANGUAGE:Fortran>:-Wno-unused-dummy-argument>
                    $<$<COMPILE_LANGUAGE:Fortran>:-Wno-maybe-uninitialized>)

# Modules go to one directory, in the build tree and installed: the
# compiler-specific .mod files beside mpif.h.
set(FMPL_FORTRAN_MODULE_DIR ${CMAKE_BINARY_DIR}/fortran-modules)
file(GLOB FMPL_FORTRAN_SOURCES CONFIGURE_DEPENDS
     ${CMAKE_SOURCE_DIR}/src/api/fortran/*.c ${CMAKE_SOURCE_DIR}/src/api/fortran/*.f90)
add_library(fmpl_mpifort ${FMPL_FORTRAN_SOURCES})
# Modules named as MPICH's (src/api/fortran/mpich_modules): compiled into the
# library for what gfortran names after them, their .mod files kept apart
# from FMPL's own modules (nothing compiles against them).
add_library(fmpl_mpich_module_data OBJECT
  ${CMAKE_SOURCE_DIR}/src/api/fortran/mpich_modules/mpich_module_data.f90)
set_target_properties(fmpl_mpich_module_data PROPERTIES POSITION_INDEPENDENT_CODE ON
  Fortran_MODULE_DIRECTORY ${CMAKE_BINARY_DIR}/mpich-module-data)
target_sources(fmpl_mpifort PRIVATE $<TARGET_OBJECTS:fmpl_mpich_module_data>)
# With clang for C and gfortran for Fortran, gfortran links the library and
# cannot read clang's LTO objects: no interprocedural optimisation for it
# then (the C libraries keep theirs).
if(NOT CMAKE_C_COMPILER_ID STREQUAL CMAKE_Fortran_COMPILER_ID)
  set_property(TARGET fmpl_mpifort PROPERTY INTERPROCEDURAL_OPTIMIZATION OFF)
endif()
target_include_directories(fmpl_mpifort PRIVATE ${CMAKE_SOURCE_DIR}/src)
target_include_directories(fmpl_mpifort PUBLIC
  $<BUILD_INTERFACE:${CMAKE_SOURCE_DIR}/include> $<BUILD_INTERFACE:${FMPL_FORTRAN_MODULE_DIR}>
  $<INSTALL_INTERFACE:${CMAKE_INSTALL_INCLUDEDIR}>)
target_link_libraries(fmpl_mpifort PUBLIC fmpl_mpi)
set_target_properties(fmpl_mpifort PROPERTIES
  OUTPUT_NAME mpifort EXPORT_NAME mpifort
  Fortran_MODULE_DIRECTORY ${FMPL_FORTRAN_MODULE_DIR})
# The modules are long lists of interfaces: no need to optimise them.
set_source_files_properties(${CMAKE_SOURCE_DIR}/src/api/fortran/mpi_module.f90
  ${CMAKE_SOURCE_DIR}/src/api/fortran/mpi_f08_module.f90 PROPERTIES COMPILE_OPTIONS -O0)
if(BUILD_SHARED_LIBS)
  set_target_properties(fmpl_mpifort PROPERTIES
                        VERSION ${FMPL_MPI_SOVERSION}.0.0 SOVERSION ${FMPL_MPI_SOVERSION})
  add_custom_command(TARGET fmpl_mpifort POST_BUILD
    COMMAND ${CMAKE_COMMAND} -E create_symlink libmpifort.so.${FMPL_MPI_SOVERSION}
            $<TARGET_FILE_DIR:fmpl_mpifort>/libmpichfort.so.${FMPL_MPI_SOVERSION}
    COMMAND ${CMAKE_COMMAND} -E create_symlink libmpichfort.so.${FMPL_MPI_SOVERSION}
            $<TARGET_FILE_DIR:fmpl_mpifort>/libmpichfort.so
    VERBATIM)
  install(CODE "set(FMPL_LINK_DIR \"${CMAKE_INSTALL_LIBDIR}\")
    set(FMPL_LINKS libmpichfort.so.${FMPL_MPI_SOVERSION}=libmpifort.so.${FMPL_MPI_SOVERSION}
                   libmpichfort.so=libmpifort.so.${FMPL_MPI_SOVERSION})")
  install(SCRIPT ${CMAKE_SOURCE_DIR}/cmake/install_links.cmake)
endif()
install(TARGETS fmpl_mpifort EXPORT FMPLTargets
        LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR}
        ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR})
install(FILES ${CMAKE_SOURCE_DIR}/include/mpif.h DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})
install(DIRECTORY ${FMPL_FORTRAN_MODULE_DIR}/ DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}
        FILES_MATCHING PATTERN "*.mod")
