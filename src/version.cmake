# Run at every build (cmake -P): writes jb_version.h, the version recorded with every result, the
# release plus the commit when built from git, and touches it only when that changed. Taken at
# configure time instead, a rebuild after a pull would stamp results with the old commit.
# In: SOURCE (a folder of the checkout), RELEASE, GIT (git's path, or empty), OUT.
set(version "${RELEASE}")
if(GIT)
  execute_process(COMMAND "${GIT}" describe --always --dirty WORKING_DIRECTORY "${SOURCE}"
                  OUTPUT_VARIABLE commit OUTPUT_STRIP_TRAILING_WHITESPACE ERROR_QUIET)
  if(commit)
    set(version "${RELEASE}+${commit}")
  endif()
endif()
set(text "#define JB_VERSION \"${version}\"\n")
if(EXISTS "${OUT}")
  file(READ "${OUT}" old)
endif()
if(NOT "${old}" STREQUAL "${text}")
  file(WRITE "${OUT}" "${text}")
endif()
