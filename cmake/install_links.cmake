# Install-time helper: make symbolic links in an installed directory.
# Included from install(SCRIPT ...) after install(CODE ...) has set
#   FMPL_LINK_DIR  the directory, absolute or relative to CMAKE_INSTALL_PREFIX
#   FMPL_LINKS     a list of NAME=TARGET pairs (TARGET relative to the directory)
# Links are made at install time, so `cmake --install --prefix` and DESTDIR
# are honoured, and are recorded in install_manifest.txt.
set(dir "${FMPL_LINK_DIR}")
if(NOT IS_ABSOLUTE "${dir}")
  set(dir "${CMAKE_INSTALL_PREFIX}/${dir}")
endif()
foreach(pair IN LISTS FMPL_LINKS)
  string(REPLACE "=" ";" pair "${pair}")
  list(GET pair 0 name)
  list(GET pair 1 target)
  set(link "$ENV{DESTDIR}${dir}/${name}")
  message(STATUS "Installing: ${link} -> ${target}")
  file(MAKE_DIRECTORY "$ENV{DESTDIR}${dir}")
  file(CREATE_LINK "${target}" "${link}" SYMBOLIC)
  list(APPEND CMAKE_INSTALL_MANIFEST_FILES "${dir}/${name}")
endforeach()
