# -DNCAST_FUZZ=ON: the libFuzzer targets of tests/fuzz (tools/fuzz.sh builds and runs them). Everything
# is compiled with coverage feedback for libFuzzer, AddressSanitizer and UBSan; clang only.
if(NCAST_FUZZ)
  if(NOT CMAKE_CXX_COMPILER_ID STREQUAL "Clang")
    message(FATAL_ERROR "NCAST_FUZZ needs clang (CC=clang CXX=clang++); tools/fuzz.sh sets it up")
  endif()
  add_compile_options("$<$<COMPILE_LANGUAGE:C,CXX>:-fsanitize=fuzzer-no-link,address,undefined;-fno-omit-frame-pointer;-fno-sanitize-recover=all>")
  # coding/gf256.cpp builds its 64 KiB product table at compile time, past clang's default step limit.
  add_compile_options("$<$<COMPILE_LANGUAGE:CXX>:-fconstexpr-steps=100000000>")
  add_link_options(-fsanitize=address,undefined)
endif()
