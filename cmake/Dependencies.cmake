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
