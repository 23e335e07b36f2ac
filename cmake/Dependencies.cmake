# Every dependency is a Debian package installed by tools/install-deps.sh.
find_package(Threads REQUIRED)
find_package(GTest REQUIRED)
find_package(PkgConfig REQUIRED)
find_package(OpenSSL REQUIRED)
find_package(nlohmann_json 3.10 REQUIRED)

# Program_options is linked statically: the GPU test host has Boost headers but no Boost libraries.
set(Boost_USE_STATIC_LIBS ON)
find_package(Boost 1.74 REQUIRED COMPONENTS program_options)

# ISA-L is the test oracle and the CPU anchor of the benchmarks, never the engine.
pkg_check_modules(ISAL REQUIRED IMPORTED_TARGET libisal)

# The benchmarks' anchor: Debian's libisal, or with NCAST_ISAL_ROOT an ISA-L build tree (lib/libisal.a,
# include/isa-l/, as tools' build-isal.sh lays it out) linked statically, so that ncast-bench meets a
# newer ISA-L than the distribution's and runs on hosts that have no libisal. Tests keep the Debian oracle.
set(NCAST_ISAL_ROOT "" CACHE PATH "ISA-L build tree that ncast-bench links as its anchor (empty: Debian's libisal)")
if(NCAST_ISAL_ROOT)
  find_library(NCAST_ISAL_ANCHOR_LIB libisal.a PATHS "${NCAST_ISAL_ROOT}/lib" NO_DEFAULT_PATH REQUIRED)
  file(STRINGS "${NCAST_ISAL_ROOT}/include/isa-l/isal_api.h" _isal_version_lines
       REGEX "^#define ISAL_(MAJOR|MINOR|PATCH)_VERSION [0-9]+")
  string(REGEX REPLACE "[^;]*VERSION ([0-9]+);[^;]*VERSION ([0-9]+);[^;]*VERSION ([0-9]+)" "\\1.\\2.\\3"
                       NCAST_ISAL_ANCHOR_VERSION "${_isal_version_lines}")
  add_library(ncast_isal_anchor STATIC IMPORTED)
  set_target_properties(ncast_isal_anchor PROPERTIES IMPORTED_LOCATION "${NCAST_ISAL_ANCHOR_LIB}"
                                                     INTERFACE_INCLUDE_DIRECTORIES "${NCAST_ISAL_ROOT}/include")
  message(STATUS "ncast-bench anchor: ISA-L ${NCAST_ISAL_ANCHOR_VERSION} from ${NCAST_ISAL_ROOT}")
else()
  add_library(ncast_isal_anchor INTERFACE IMPORTED)
  target_link_libraries(ncast_isal_anchor INTERFACE PkgConfig::ISAL)
  set(NCAST_ISAL_ANCHOR_VERSION "${ISAL_VERSION}")
endif()
