# The rooms of src/ (cmake/rooms.txt, lowest first) as one CMake target each, with the layering enforced by the
# compiler: a room's sources are compiled with an include root, build/rooms/<room>/, that holds links to the
# rooms it may include (itself and those listed above it) and nothing else, so an upward include
# (`#include "runtime/session.h"` in a kernel) is "No such file" at compile time. scripts/check_layering.py checks
# the same order over the include graph (ctest `layering`), which also catches `../` paths.
#
#   ferry_room(ROOM [SOURCES extra...] [NO_TARGET])
#     makes target ferry_room_<room with / as _> (an OBJECT library of src/<ROOM>/**.cc, less the files of rooms inside
#     it), sets FERRY_ROOM_TARGET and FERRY_ROOM_INCLUDE_ROOT in the caller's scope.
file(STRINGS ${CMAKE_SOURCE_DIR}/cmake/rooms.txt FERRY_ROOMS REGEX "^[a-z]")
set_property(DIRECTORY APPEND PROPERTY CMAKE_CONFIGURE_DEPENDS ${CMAKE_SOURCE_DIR}/cmake/rooms.txt)

# True in `out` when another room lives in `room`'s folder (kernels: kernels/ref, kernels/cpu, ...).
function(_ferry_room_has_subrooms room out)
  set(result FALSE)
  foreach(other IN LISTS FERRY_ROOMS)
    string(FIND "${other}" "${room}/" at)
    if(at EQUAL 0)
      set(result TRUE)
    endif()
  endforeach()
  set(${out} ${result} PARENT_SCOPE)
endfunction()

# Makes build/rooms/<id>/ anew: a link per allowed room (for a room with rooms inside it, a folder of links to
# its own files and to the allowed inner rooms). `rm -rf` removes the links, never what they point to.
function(ferry_room_include_root room out)
  string(REPLACE "/" "_" id "${room}")
  set(root ${CMAKE_BINARY_DIR}/rooms/${id})
  execute_process(COMMAND rm -rf ${root} COMMAND_ERROR_IS_FATAL ANY)
  file(MAKE_DIRECTORY ${root})
  list(FIND FERRY_ROOMS ${room} last)
  if(last LESS 0)
    message(FATAL_ERROR "room '${room}' is not listed in cmake/rooms.txt")
  endif()
  foreach(i RANGE 0 ${last})
    list(GET FERRY_ROOMS ${i} allowed)
    set(dir ${CMAKE_SOURCE_DIR}/src/${allowed})
    if(NOT IS_DIRECTORY ${dir})
      continue()
    endif()
    get_filename_component(parent ${root}/${allowed} DIRECTORY)
    file(MAKE_DIRECTORY ${parent})
    _ferry_room_has_subrooms(${allowed} has_subrooms)
    if(has_subrooms)
      file(MAKE_DIRECTORY ${root}/${allowed})
      file(GLOB entries CONFIGURE_DEPENDS LIST_DIRECTORIES true ${dir}/*)
      foreach(entry IN LISTS entries)
        file(RELATIVE_PATH rel ${CMAKE_SOURCE_DIR}/src ${entry})
        if(NOT rel IN_LIST FERRY_ROOMS)  # inner rooms get their own link when allowed
          get_filename_component(name ${entry} NAME)
          file(CREATE_LINK ${entry} ${root}/${allowed}/${name} SYMBOLIC)
        endif()
      endforeach()
    else()
      file(CREATE_LINK ${dir} ${root}/${allowed} SYMBOLIC)
    endif()
  endforeach()
  set(${out} ${root} PARENT_SCOPE)
endfunction()

# The .cc (and, for kernels/cuda, .cu) files of `room`, without those of rooms inside its folder.
function(ferry_room_sources room out)
  file(GLOB_RECURSE sources CONFIGURE_DEPENDS ${CMAKE_SOURCE_DIR}/src/${room}/*.cc ${CMAKE_SOURCE_DIR}/src/${room}/*.cu)
  foreach(other IN LISTS FERRY_ROOMS)
    string(FIND "${other}" "${room}/" at)
    if(at EQUAL 0)
      list(FILTER sources EXCLUDE REGEX "^${CMAKE_SOURCE_DIR}/src/${other}/")
    endif()
  endforeach()
  set(${out} ${sources} PARENT_SCOPE)
endfunction()

function(ferry_room room)
  cmake_parse_arguments(ARG "" "" "SOURCES" ${ARGN})
  string(REPLACE "/" "_" id "${room}")
  ferry_room_include_root(${room} root)
  ferry_room_sources(${room} sources)
  list(APPEND sources ${ARG_SOURCES})
  set(target ferry_room_${id})
  add_library(${target} OBJECT ${sources})
  set_target_properties(${target} PROPERTIES POSITION_INDEPENDENT_CODE ON)
  target_include_directories(${target} PRIVATE ${CMAKE_SOURCE_DIR}/include ${root})
  set(FERRY_ROOM_TARGET ${target} PARENT_SCOPE)
  set(FERRY_ROOM_INCLUDE_ROOT ${root} PARENT_SCOPE)
endfunction()
