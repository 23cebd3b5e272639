# The Python package `ferry` (python/): the pybind11 extension ferry._ferry (python/src/*.cc, linking the static
# runtime and the tools), built into build/python/ferry/ beside copies of python/ferry/*.py, so that
# PYTHONPATH=build/python (or the .pth file scripts/install_python.sh writes) makes `import ferry` work.
# FERRY_PYTHON: AUTO (default) builds it when Debian's python3-dev and pybind11-dev are installed; ON requires
# them; OFF skips it. The interpreter is /usr/bin/python3 (Debian's, with NumPy) unless Python_EXECUTABLE is set.
set(FERRY_PYTHON AUTO CACHE STRING "Build the Python package: AUTO, ON or OFF")
set(FERRY_WITH_PYTHON OFF)
if(NOT FERRY_PYTHON STREQUAL "OFF")
  if(NOT Python_EXECUTABLE AND EXISTS /usr/bin/python3)
    set(Python_EXECUTABLE /usr/bin/python3)
  endif()
  set(PYBIND11_FINDPYTHON ON)
  if(FERRY_PYTHON STREQUAL "ON")
    find_package(Python 3.9 REQUIRED COMPONENTS Interpreter Development.Module)
    find_package(pybind11 CONFIG REQUIRED)
  else()
    find_package(Python 3.9 QUIET COMPONENTS Interpreter Development.Module)
    if(Python_FOUND)
      find_package(pybind11 CONFIG QUIET)
    endif()
  endif()
  if(Python_FOUND AND pybind11_FOUND)
    set(FERRY_WITH_PYTHON ON)
  else()
    message(STATUS "Ferry: the Python package is not built (needs python3-dev and pybind11-dev; FERRY_PYTHON=ON "
                   "to require them)")
  endif()
endif()

if(FERRY_WITH_PYTHON)
  set(FERRY_PYTHON_DIR ${CMAKE_BINARY_DIR}/python/ferry)
  file(GLOB FERRY_PYTHON_MODULE_SOURCES CONFIGURE_DEPENDS ${CMAKE_SOURCE_DIR}/python/src/*.cc)
  pybind11_add_module(ferry-python MODULE ${FERRY_PYTHON_MODULE_SOURCES})
  set_target_properties(ferry-python PROPERTIES OUTPUT_NAME _ferry LIBRARY_OUTPUT_DIRECTORY ${FERRY_PYTHON_DIR})
  target_include_directories(ferry-python PRIVATE ${CMAKE_SOURCE_DIR}/python/src)
  target_link_libraries(ferry-python PRIVATE ferry)
  target_compile_definitions(ferry-python PRIVATE FERRY_VERSION="${PROJECT_VERSION}")
  # The package's Python files, copied whenever they change.
  file(GLOB FERRY_PYTHON_FILES CONFIGURE_DEPENDS ${CMAKE_SOURCE_DIR}/python/ferry/*.py)
  set(copied "")
  foreach(f IN LISTS FERRY_PYTHON_FILES)
    get_filename_component(name ${f} NAME)
    add_custom_command(OUTPUT ${FERRY_PYTHON_DIR}/${name}
                       COMMAND ${CMAKE_COMMAND} -E copy ${f} ${FERRY_PYTHON_DIR}/${name}
                       DEPENDS ${f} COMMENT "Copying python/ferry/${name}")
    list(APPEND copied ${FERRY_PYTHON_DIR}/${name})
  endforeach()
  add_custom_target(ferry-python-files ALL DEPENDS ${copied})
  add_dependencies(ferry-python ferry-python-files)
endif()
