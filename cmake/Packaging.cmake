# Debian packages through CPack (tools/package.sh builds them): libncast-rs0 (the shared library),
# libncast-rs-dev (headers, static archive, CMake package, pkg-config file) and ncast-tools (the
# programs, their man pages, the systemd unit and its example configuration). dpkg-shlibdeps finds
# what each needs from the machine the packages are built on. Each description's first line is the
# package's synopsis. The licence is Apache-2.0 (LICENSE), stated per package in Debian's
# machine-readable copyright file, /usr/share/doc/<package>/copyright.
include(GNUInstallDirs)

set(CPACK_GENERATOR DEB)
set(CPACK_PACKAGE_NAME ncast)
set(CPACK_PACKAGE_VENDOR "ncast")
set(CPACK_PACKAGE_CONTACT "ncast developers <ncast@localhost>")
set(CPACK_PACKAGE_VERSION ${PROJECT_VERSION})
set(CPACK_DEBIAN_PACKAGE_RELEASE 1)
set(CPACK_DEBIAN_FILE_NAME DEB-DEFAULT)
set(CPACK_DEBIAN_PACKAGE_SECTION net)
set(CPACK_DEBIAN_PACKAGE_SHLIBDEPS ON)
set(CPACK_DEB_COMPONENT_INSTALL ON)
set(CPACK_COMPONENTS_ALL rs_runtime rs_development tools)
set(ncast_deb_version "${PROJECT_VERSION}-${CPACK_DEBIAN_PACKAGE_RELEASE}")

set(CPACK_DEBIAN_RS_RUNTIME_PACKAGE_NAME libncast-rs${PROJECT_VERSION_MAJOR})
set(CPACK_DEBIAN_RS_RUNTIME_PACKAGE_SECTION libs)
set(CPACK_DEBIAN_RS_RUNTIME_DESCRIPTION
    "Reed-Solomon erasure coding over GF(2^8) (shared library)\nncast's RS codec behind a C API: k data + m parity shards, any k of which give the\nothers back; parity byte-identical to ISA-L and klauspost/reedsolomon (polynomial 0x11D).")
# The library's own shlibs file, and ldconfig run through dpkg's trigger when it comes or goes.
set(CPACK_DEBIAN_PACKAGE_GENERATE_SHLIBS ON)
set(CPACK_DEBIAN_PACKAGE_GENERATE_SHLIBS_POLICY "=")

set(CPACK_DEBIAN_RS_DEVELOPMENT_PACKAGE_NAME libncast-rs-dev)
set(CPACK_DEBIAN_RS_DEVELOPMENT_PACKAGE_SECTION libdevel)
set(CPACK_DEBIAN_RS_DEVELOPMENT_PACKAGE_DEPENDS
    "libncast-rs${PROJECT_VERSION_MAJOR} (= ${ncast_deb_version}), pkg-config | pkgconf")
set(CPACK_DEBIAN_RS_DEVELOPMENT_DESCRIPTION
    "Reed-Solomon erasure coding over GF(2^8) (development files)\nThe C header <ncast/ncast_rs.h>, the static library, the CMake package (find_package(ncast):\nncast::rs, ncast::rs_static) and the pkg-config file ncast-rs.")

set(CPACK_DEBIAN_TOOLS_PACKAGE_NAME ncast-tools)
set(CPACK_DEBIAN_TOOLS_DESCRIPTION
    "RLNC streaming server, peers and Reed-Solomon file tool\nncast-server streams media as RLNC-coded UDP symbols (systemd unit ncast-server@.service),\nncast-peer and ncast-swarm receive and verify them, ncast-rs splits files into Reed-Solomon\nshards, ncast-rlnc and ncast-bench exercise and measure the coding engines.")
# The example configuration is the administrator's once installed: dpkg keeps their edits.
file(WRITE ${PROJECT_BINARY_DIR}/packaging/tools/conffiles "${CMAKE_INSTALL_FULL_SYSCONFDIR}/ncast/demo.conf\n")
set(CPACK_DEBIAN_TOOLS_PACKAGE_CONTROL_EXTRA ${PROJECT_BINARY_DIR}/packaging/tools/conffiles)

foreach(component rs_runtime rs_development tools)
  string(TOUPPER ${component} upper)
  install(FILES ${CMAKE_CURRENT_LIST_DIR}/copyright
          DESTINATION ${CMAKE_INSTALL_DATADIR}/doc/${CPACK_DEBIAN_${upper}_PACKAGE_NAME} COMPONENT ${component})
endforeach()

# What the packages hold, built without the tests: tools/package.sh builds this, then runs cpack.
add_custom_target(ncast_packaged)
add_dependencies(ncast_packaged ncast_man_pages ncast_rs_shared ncast_rs_static)
if(NCAST_HAVE_CUDA)
  add_dependencies(ncast_packaged ncast_rs_cuda)
endif()

include(CPack)
